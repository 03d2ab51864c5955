"""The CUAD console's own tags: which offline system a run is, and a page's export link. Figures are printed by
the shared ``figures`` library."""

from __future__ import annotations

from django import template

from grading.export_urls import export_url as url_of

register = template.Library()


@register.filter
def offline_system(model: str):
    """The offline system a run's model label names (grading.baselines.systems), or None."""
    # local import: the baselines load numpy, and `manage.py check` loads every template library
    from grading.baselines.systems import offline_system as lookup

    return lookup(model)


@register.simple_tag(takes_context=True)
def export_url(context, fmt: str) -> str:
    """This page's export in ``fmt`` (``scorecard/scorecard.csv?<the page's query>``), or "" if it has none."""
    request = context.get("request")
    return url_of(request, fmt) if request is not None else ""
