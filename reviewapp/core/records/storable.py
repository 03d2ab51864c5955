"""Checks that text can be stored on every supported database.

PostgreSQL text columns cannot hold a NUL character (SQLite silently can), so
importers refuse such input up front with a message instead of failing at the
INSERT on one backend only. Shared by both jobs' importers.
"""

from __future__ import annotations


def contains_nul(value: object) -> bool:
    """True if any string, dict key or nested value in ``value`` holds a NUL character."""
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(contains_nul(k) or contains_nul(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(contains_nul(v) for v in value)
    return False
