"""Logging filters: an expected refusal is one log line, not a traceback."""

from __future__ import annotations

import logging

# Answers a user's request legitimately gets (not signed in as someone allowed, no such object): Django logs
# them with the Http404/PermissionDenied traceback attached, which buries real errors in the dev server's output.
EXPECTED_REFUSALS = frozenset({403, 404})


class ExpectedRefusalOneLine(logging.Filter):
    """Strip the traceback from django.request's 403/404 records; every other record passes untouched."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "status_code", None) in EXPECTED_REFUSALS:
            record.exc_info = None
            record.exc_text = None
        return True
