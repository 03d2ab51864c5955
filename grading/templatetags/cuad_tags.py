"""Formatting for the CUAD console: figures that may be undefined (NaN) print as a dash, never as 'nan'."""

from __future__ import annotations

import math

from django import template

from grading.export_urls import export_url as url_of
from scoring.stats.units import p_value_text

register = template.Library()


def _undefined(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


@register.filter
def pct(value, digits: int = 1) -> str:
    """0.4123 -> '41.2%'; undefined -> '–'."""
    if _undefined(value):
        return "–"
    return f"{value * 100:.{int(digits)}f}%"


@register.filter
def num(value, digits: int = 3) -> str:
    if _undefined(value):
        return "–"
    return f"{value:.{int(digits)}f}"


@register.filter
def interval(i) -> str:
    """A bootstrap Interval as '[38.0, 44.9]' (percent points); without bounds, why not in words."""
    if i is None:
        return ""
    note = getattr(i, "note", "")
    if _undefined(i.low) or _undefined(i.high):
        return f"({note})" if note and not _undefined(i.estimate) else ""
    text = f"[{i.low * 100:.1f}, {i.high * 100:.1f}]"
    return f"{text} ({note})" if note else text


@register.filter
def p(value, replicates) -> str:
    """A bootstrap p-value: never below 1/(B+1) nor "0.000"; "none" when the units cannot support one."""
    return p_value_text(value, replicates=int(replicates))


@register.filter
def signed_pp(value) -> str:
    """A difference of proportions in percentage points with its sign."""
    if _undefined(value):
        return "–"
    if abs(value) < 0.0005:  # "-0.0 pp" would suggest a difference that rounding made up
        return "±0.0 pp"
    return f"{value * 100:+.1f} pp"


@register.filter
def get(mapping, key):
    return mapping.get(key, 0) if mapping else 0


@register.filter
def offline_system(model: str):
    """The offline system a run's model label names (grading.baselines.systems), or None."""
    from grading.baselines.systems import offline_system as lookup

    return lookup(model)


@register.simple_tag(takes_context=True)
def export_url(context, fmt: str) -> str:
    """This page's export in ``fmt`` (``scorecard/scorecard.csv?<the page's query>``), or "" if it has none."""
    request = context.get("request")
    return url_of(request, fmt) if request is not None else ""
