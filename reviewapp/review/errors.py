"""The errors every part of the review engine raises (below the services of every noun, which all raise them)."""


class ReviewError(ValueError):
    """Bad input to a review service; the message names the problem and where."""


class NotAssigned(LookupError):
    """The reviewer has no assignment for this item (callers answer 404, never reveal the item)."""
