"""A pool's judgments read together: agreement figures."""
