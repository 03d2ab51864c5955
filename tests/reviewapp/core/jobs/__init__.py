"""Tracked jobs: lifecycle, takeover, the sweeper, the worker."""
