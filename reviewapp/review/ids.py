"""The opaque public ids of the review engine's rows (pools, items): what a URL, an export or a reviewer sees."""

from __future__ import annotations

import secrets


def new_public_id() -> str:
    """An opaque random id (no order, no meaning): 22 URL-safe characters, never a leading "-".

    One id in 64 began with "-": a CSV export then neutralises the cell as a possible formula ("'-i6k..."), so
    the exported id no longer matched the page's, and on a command line it reads as an option.
    """
    while True:
        value = secrets.token_urlsafe(16)
        if not value.startswith("-"):
            return value
