"""One way to print a figure on every page: the same filter names mean the same thing for both jobs."""

import math

import pytest
from django.template import Context, Template

from scoring.stats.bootstrap import Interval


def _render(text: str, **context) -> str:
    return Template("{% load figures %}" + text).render(Context(context))


@pytest.mark.parametrize("value", [None, math.nan])
def test_undefined_is_the_same_word_for_a_number_a_share_and_a_difference(value):
    assert _render("{{ v|num }} {{ v|pct }} {{ v|signed_pp }}", v=value) == "n/a n/a n/a"


def test_numbers_shares_and_differences():
    assert _render("{{ v|num:2 }} {{ v|pct }} {{ v|signed_pp }} {{ z|signed_pp }}", v=0.4123, z=-0.0001) == (
        "0.41 41.2% +41.2 pp ±0.0 pp")


def test_get_gives_none_for_a_missing_key_and_default_gives_a_count():
    assert _render("{{ m|get:'a' }} {{ m|get:'b'|default:0 }} {{ n|get:'a'|default:0 }}", m={"a": 3}, n=None) == (
        "3 0 0")


def test_intervals_in_decimals_and_in_percentage_points():
    i = Interval(estimate=0.5, low=0.25, high=0.75)
    assert _render("{{ i|ci }} | {{ i|interval }} | {{ i|bounds }}", i=i) == (
        "0.500 [0.250, 0.750] | [25.0, 75.0] | [0.250, 0.750]")
