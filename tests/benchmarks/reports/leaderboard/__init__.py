"""The leaderboard of stored runs: its figures, labels, systems."""
