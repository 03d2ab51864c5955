"""Formatting of report figures: an interval as "0.944 [0.833, 1.000]", undefined as "n/a"."""

from __future__ import annotations

import math

from django import template

register = template.Library()


def _num(value: float | None, places: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.{places}f}"


@register.filter
def ci(interval) -> str:
    """Estimate and percentile interval, three decimals."""
    if interval is None:
        return "—"
    if math.isnan(interval.estimate):
        return "n/a"
    return f"{_num(interval.estimate)} [{_num(interval.low)}, {_num(interval.high)}]"


@register.filter
def num(value, places: int = 3) -> str:
    return _num(value, int(places))


@register.filter
def signed_ci(interval) -> str:
    """Like ``ci`` with an explicit sign, for differences."""
    if interval is None:
        return "—"
    if math.isnan(interval.estimate):
        return "n/a"
    return f"{interval.estimate:+.3f} [{interval.low:+.3f}, {interval.high:+.3f}]"


@register.filter
def get(mapping, key):
    return mapping.get(key) if mapping else None


@register.filter
def bounds(interval, signed: str = "") -> str:
    """Only the interval's bounds, "[0.833, 1.000]" (signed when the argument is "signed")."""
    if interval is None or math.isnan(interval.low):
        return "n/a"
    spec = "+.3f" if signed else ".3f"
    return f"[{format(interval.low, spec)}, {format(interval.high, spec)}]"
