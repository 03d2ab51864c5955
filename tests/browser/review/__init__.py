"""Blind review in chromium: the workspace, keyboard only, judge once, the admin's side, the day."""
