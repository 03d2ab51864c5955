"""A reviewer's day: time spent, time left, the queue per pool."""
