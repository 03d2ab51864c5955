"""Promises under concurrency and slow clients, against a real gunicorn (and nginx)."""
