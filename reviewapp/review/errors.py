"""The error every review service raises on bad input (below the services and assignment, which both raise it)."""


class ReviewError(ValueError):
    """Bad input to a review service; the message names the problem and where."""
