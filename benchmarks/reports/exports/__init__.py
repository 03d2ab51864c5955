"""The files of a report and of a leaderboard (JSON, CSV, TREC), the very figures their pages show."""
