"""A reviewer's day: time spent per pool from their own saves, and the time left at their own pace."""
