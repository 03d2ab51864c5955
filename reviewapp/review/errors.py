"""The errors every part of the review engine raises (below the services of every noun, which all raise them)."""

from __future__ import annotations

from django.core.exceptions import ValidationError


class ReviewError(ValueError):
    """Bad input to a review service; the message names the problem and where."""


class NotAssigned(LookupError):
    """The reviewer has no assignment for this item (callers answer 404, never reveal the item)."""


class PoolFrozen(ValidationError):
    """A judged pool's label-deciding settings or its set of items would change (make a new version instead)."""
