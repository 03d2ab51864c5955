"""Process and deployment benches: start-up, Celery worker memory and scale-out, the provider layer, and
everything at once under load."""
