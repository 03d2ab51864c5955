"""Formatting of report figures: an interval as "0.944 [0.833, 1.000]", undefined as "n/a"."""

from __future__ import annotations

import math

from django import template

from scoring.stats.units import UnitSupport, p_value_text, unit_support

register = template.Library()


def _num(value: float | None, places: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.{places}f}"


def _noted(text: str, interval) -> str:
    """The interval's note in words (too few units: why there is no interval; few units: marked)."""
    note = getattr(interval, "note", "")
    return f"{text} ({note})" if note else text


@register.filter
def ci(interval) -> str:
    """Estimate and percentile interval, three decimals; without bounds, the estimate and why."""
    if interval is None:
        return "—"
    if math.isnan(interval.estimate):
        return "n/a"
    if math.isnan(interval.low):
        return _noted(_num(interval.estimate), interval)
    return _noted(f"{_num(interval.estimate)} [{_num(interval.low)}, {_num(interval.high)}]", interval)


@register.filter
def p(value, replicates) -> str:
    """A bootstrap p-value: never below 1/(B+1) nor "0.000"; "none" when the units cannot support one."""
    return p_value_text(value, replicates=int(replicates))


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
    if math.isnan(interval.low):
        return _noted(f"{interval.estimate:+.3f}", interval)
    return _noted(f"{interval.estimate:+.3f} [{interval.low:+.3f}, {interval.high:+.3f}]", interval)


@register.filter
def get(mapping, key):
    return mapping.get(key) if mapping else None


@register.filter
def bounds(interval, signed: str = "") -> str:
    """Only the interval's bounds, "[0.833, 1.000]" (signed when the argument is "signed")."""
    if interval is None:
        return "n/a"
    if math.isnan(interval.low):
        return getattr(interval, "note", "") or "n/a"
    spec = "+.3f" if signed else ".3f"
    return _noted(f"[{format(interval.low, spec)}, {format(interval.high, spec)}]", interval)


@register.filter
def units(split) -> UnitSupport:
    """What a split's query families can support (its ``families`` count): no interval, few units, or plain."""
    return unit_support(split.families, unit="query family")


@register.filter
def ci_brief(interval, signed: str = "") -> str:
    """Like ``ci`` (``signed_ci`` with "signed"), without a few-units mark beside bounds: for a table whose split
    states the units rule once above it. Without bounds, the estimate still says why."""
    if interval is not None and not math.isnan(interval.estimate) and not math.isnan(interval.low):
        spec = "+.3f" if signed else ".3f"
        return f"{format(interval.estimate, spec)} [{format(interval.low, spec)}, {format(interval.high, spec)}]"
    return signed_ci(interval) if signed else ci(interval)
