"""Real processes killed, paused and cut off: the database, the workers, every job kind."""
