"""Shared pieces of the fuzzing tests: row counts of every model, JSON strategies, mutators, small valid seeds."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

APPS = ("benchmarks", "grading", "reviewapp", "providers")

# Modest example counts keep the whole suite fast; deadline off: the database is in the loop.
FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                       HealthCheck.too_slow])


def row_counts() -> dict[str, int]:
    """Rows of every model of the project's apps (a failed import must leave each one unchanged)."""
    from django.apps import apps

    return {
        model._meta.label: model._base_manager.count()
        for label in APPS
        for model in apps.get_app_config(label).get_models()
        if model._meta.managed and not model._meta.proxy
    }


scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30)
    | st.text(min_size=130, max_size=400)  # longer than every CharField the importers fill
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)


@st.composite
def mutated(draw, doc: Any, *, rounds: int = 3) -> Any:
    """A valid document with up to ``rounds`` random edits: a value replaced, a key dropped or added, an item
    removed or duplicated. Most of the result stays valid, so the checks deep inside are reached."""
    doc = json.loads(json.dumps(doc))
    for _ in range(draw(st.integers(1, rounds))):
        path: list = []
        node = doc
        while isinstance(node, (dict, list)) and node and draw(st.booleans()):
            key = draw(st.sampled_from(sorted(node) if isinstance(node, dict) else list(range(len(node)))))
            path.append(key)
            node = node[key]
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        action = draw(st.sampled_from(["replace", "drop", "add", "duplicate"]))
        if not path:
            if action == "replace":
                doc = draw(json_values)
            continue
        key = path[-1]
        if action == "replace":
            parent[key] = draw(json_values)
        elif action == "drop":
            del parent[key]
        elif action == "add" and isinstance(parent, dict):
            parent[draw(st.text(max_size=10))] = draw(json_values)
        elif action == "duplicate" and isinstance(parent, list):
            parent.append(json.loads(json.dumps(parent[key])))
        else:
            parent[key] = draw(json_values)
    return doc


@st.composite
def mutated_text(draw, text: str) -> str:
    """Text with a few random insertions, deletions and replacements (markup breaks in interesting places)."""
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["insert", "delete", "replace"]))
        chunk = draw(st.sampled_from(["<", ">", "</p>", "<p class=\"SectBody\">", "<span class=Section>",
                                      "</span>", "&#0;", "&bogus;", "\x00", "\ufffd", "\"", "§", "[", "]",
                                      "x" * 200, "9" * 120, "<section identifier=\"/us/usc/t9/s\">"])
                      | st.text(max_size=20))
        if action == "insert":
            text = text[:at] + chunk + text[at:]
        elif action == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 40)):]
        else:
            text = text[:at] + chunk + text[at + len(chunk):]
    return text


NRS_PAGE = """<html><head><title>NRS: CHAPTER 999 - TEST</title></head><body>
<p class="Chapter">CHAPTER 999 - TEST CHAPTER</p>
<p class="COLeadline">999.010 Definitions.</p>
<p class="SectBody"><span class="Empty">&#160;</span><a name="NRS999Sec010"></a><span class="Section">999.010</span>
<span class="Leadline">Definitions.</span> As used in this chapter, words have their meanings.</p>
<p class="SectBody">1. The landlord shall return the deposit.</p>
<p class="SourceNote">(Added to NRS by 2001, 123)</p>
<p class="SectBody"><a name="NRS999Sec020"></a><span class="Section">999.020</span>
<span class="Leadline">Notice.</span> A tenant must be given notice.</p>
<p class="SourceNote">(Added to NRS by 2003, 45)</p>
</body></html>"""

HRS_META = {"chapters": [{"num": "521", "title": "Residential Landlord-Tenant Code", "vol": "Vol12_Ch0501-0588",
                          "secs": [["521-1", "521-1", "Short title."], ["521-2", "521-2", "Purposes."]]}]}
HRS_VOLUME = {
    "521-1": {"t": "\u00a7521-1  Short title.  This chapter may be cited as the Code.  [L 1972, c 132, pt of \u00a71]",
              "u": "https://www.capitol.hawaii.gov/hrscurrent/Vol12_Ch0501-0588/HRS0521/HRS_0521-0001.htm"},
    "521-2": {"t": "\u00a7521-2  Purposes.  The purposes are these.  [L 1972, c 132, pt of \u00a71]\n\n"
                   "Case Notes\n\nA note.", "u": ""},
}

USLM = """<?xml version="1.0" encoding="UTF-8"?>
<uscDoc xmlns="http://xml.house.gov/schemas/uslm/1.0" identifier="/us/usc/t9"><main><title><num value="9">Title 9</num>
<heading>ARBITRATION</heading><chapter><num value="1">CHAPTER 1</num><heading>GENERAL PROVISIONS</heading>
<section identifier="/us/usc/t9/s1"><num value="1">\u00a7 1.</num><heading>Definitions</heading>
<content><p>Maritime transactions means charter parties.</p></content>
<sourceCredit>(July 30, 1947, ch. 392, 61 Stat. 670.)</sourceCredit></section>
<section identifier="/us/usc/t9/s2"><num value="2">\u00a7 2.</num><heading>Validity</heading>
<content>A written provision shall be valid.</content><notes><note><p>Editorial note.</p></note></notes></section>
</chapter></title></main></uscDoc>"""
