"""How every page prints a figure: one number format, one interval format, one p-value rule, one word for
"undefined" ("n/a", never "nan" or a bare dash), whichever job the figure comes from.

    {{ value|num:3 }}  {{ interval|ci }}  {{ diff|signed_ci }}  {{ share|pct }}  {{ p|p:replicates }}
"""

from __future__ import annotations

import math
from typing import Any

from django import template

from scoring.stats.units import UnitSupport, p_value_text, unit_support

register = template.Library()

UNDEFINED = "n/a"


def _undefined(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _noted(text: str, interval: Any) -> str:
    """The interval's note in words (too few units: why there is no interval; few units: marked)."""
    note = getattr(interval, "note", "")
    return f"{text} ({note})" if note else text


@register.filter
def num(value: float | None, places: int = 3) -> str:
    return UNDEFINED if _undefined(value) else f"{value:.{int(places)}f}"


@register.filter
def pct(value: float | None, digits: int = 1) -> str:
    """0.4123 -> '41.2%'."""
    if value is None or _undefined(value):
        return UNDEFINED
    return f"{value * 100:.{int(digits)}f}%"


@register.filter
def signed_pp(value: float | None) -> str:
    """A difference of proportions in percentage points with its sign."""
    if value is None or _undefined(value):
        return UNDEFINED
    if abs(value) < 0.0005:  # "-0.0 pp" would suggest a difference that rounding made up
        return "±0.0 pp"
    return f"{value * 100:+.1f} pp"


@register.filter
def p(value: float | None, replicates: int) -> str:
    """A bootstrap p-value: never below 1/(B+1) nor "0.000"; "none" when the units cannot support one."""
    return p_value_text(value, replicates=int(replicates))


@register.filter
def ci(interval: Any) -> str:
    """Estimate and percentile interval, three decimals; without bounds, the estimate and why."""
    if interval is None:
        return "—"
    if _undefined(interval.estimate):
        return UNDEFINED
    if _undefined(interval.low):
        return _noted(num(interval.estimate), interval)
    return _noted(f"{num(interval.estimate)} [{num(interval.low)}, {num(interval.high)}]", interval)


@register.filter
def signed_ci(interval: Any) -> str:
    """Like ``ci`` with an explicit sign, for differences."""
    if interval is None:
        return "—"
    if _undefined(interval.estimate):
        return UNDEFINED
    if _undefined(interval.low):
        return _noted(f"{interval.estimate:+.3f}", interval)
    return _noted(f"{interval.estimate:+.3f} [{interval.low:+.3f}, {interval.high:+.3f}]", interval)


@register.filter
def ci_brief(interval: Any, signed: str = "") -> str:
    """Like ``ci`` (``signed_ci`` with "signed"), without a few-units mark beside bounds: for a table whose split
    states the units rule once above it. Without bounds, the estimate still says why."""
    if interval is not None and not _undefined(interval.estimate) and not _undefined(interval.low):
        spec = "+.3f" if signed else ".3f"
        return f"{format(interval.estimate, spec)} [{format(interval.low, spec)}, {format(interval.high, spec)}]"
    return signed_ci(interval) if signed else ci(interval)


@register.filter
def bounds(interval: Any, signed: str = "") -> str:
    """Only the interval's bounds, "[0.833, 1.000]" (signed when the argument is "signed")."""
    if interval is None:
        return UNDEFINED
    if _undefined(interval.low):
        return getattr(interval, "note", "") or UNDEFINED
    spec = "+.3f" if signed else ".3f"
    return _noted(f"[{format(interval.low, spec)}, {format(interval.high, spec)}]", interval)


@register.filter
def interval(i: Any) -> str:
    """A proportion's interval in percentage points, '[38.0, 44.9]'; without bounds, why not in words."""
    if i is None:
        return ""
    note = getattr(i, "note", "")
    if _undefined(i.low) or _undefined(i.high):
        return f"({note})" if note and not _undefined(i.estimate) else ""
    return _noted(f"[{i.low * 100:.1f}, {i.high * 100:.1f}]", i)


@register.filter
def units(split: Any) -> UnitSupport:
    """What a split's query families can support (its ``families`` count): no interval, few units, or plain."""
    return unit_support(split.families, unit="query family")


@register.filter
def get(mapping: Any, key: object) -> Any:
    """``mapping[key]``, or None when the mapping or the key is missing (``|default:0`` where a count is meant)."""
    return mapping.get(key) if mapping else None
