"""The bootstrap settings of a report (replicates, seed): their sane ranges and their validation."""

from __future__ import annotations

from typing import Any

from scoring.ir.family_bootstrap import DEFAULT_REPLICATES, DEFAULT_SEED

MIN_REPLICATES = 1_000
MAX_REPLICATES = 100_000
MAX_SEED = 2**32 - 1


class ReportParameterError(ValueError):
    """A report parameter outside its sane range; the message names the parameter and the range."""


def report_parameters(*, replicates: Any = DEFAULT_REPLICATES, seed: Any = DEFAULT_SEED) -> tuple[int, int]:
    """Validate the bootstrap settings of a report (replicates, seed), refusing absurd values with a message."""
    try:
        replicates = int(replicates)
    except (TypeError, ValueError):
        raise ReportParameterError(f"replicates must be a whole number, got {replicates!r}") from None
    try:
        seed = int(seed)
    except (TypeError, ValueError):
        raise ReportParameterError(f"seed must be a whole number, got {seed!r}") from None
    if not MIN_REPLICATES <= replicates <= MAX_REPLICATES:
        raise ReportParameterError(
            f"replicates must be between {MIN_REPLICATES:,} and {MAX_REPLICATES:,} "
            f"(fewer makes 2.5th/97.5th percentiles noise, more only costs time), got {replicates:,}"
        )
    if not 0 <= seed <= MAX_SEED:
        raise ReportParameterError(f"seed must be between 0 and {MAX_SEED}, got {seed}")
    return replicates, seed
