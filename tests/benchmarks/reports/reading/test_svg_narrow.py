"""The SVG plots: no text under 11 px at their own size, and a narrow redraw with fewer ticks and wrapped labels."""

from __future__ import annotations

import re

from benchmarks.labels.svg import reliability_svg
from benchmarks.reports.reading.svg import _wrap, leaderboard_forest_compact_svg, leaderboard_forest_svg
from scoring.stats.bootstrap import Interval
from scoring.stats.calibration import ReliabilityBin

FONT = re.compile(r'font-size="([\d.]+)"')
LONG_LABEL = "rerank-123 openai_compatible:some-provider/a-very-long-model-name-that-goes-on-and-on-2025-10-01"


def _rows():
    return [(LONG_LABEL, Interval(0.12, -0.05, 0.31), "Holm p = 0.042"),
            ("rerank-7 local", None, "no figures: the provider refused every request")]


def _font_sizes(svg: str) -> list[float]:
    return [float(x) for x in FONT.findall(svg)]


def test_no_plot_draws_text_under_11_px_at_its_own_size():
    bins = [ReliabilityBin(i / 5, (i + 1) / 5, 3 * i, (i + 0.5) / 5 if i else None, 0.5 if i else None)
            for i in range(5)]
    for svg in (leaderboard_forest_svg(_rows(), endpoint="heldout Hit@5", replicates=1000, seed=7),
                leaderboard_forest_compact_svg(_rows(), endpoint="heldout Hit@5", replicates=1000, seed=7),
                reliability_svg(bins, title="Reliability, dev split", ident="dev")):
        sizes = _font_sizes(svg)
        assert sizes and min(sizes) >= 11, sizes


def test_the_narrow_redraw_fits_a_phone_has_three_ticks_and_wraps_long_labels():
    wide = leaderboard_forest_svg(_rows(), endpoint="heldout Hit@5", replicates=1000, seed=7)
    compact = leaderboard_forest_compact_svg(_rows(), endpoint="heldout Hit@5", replicates=1000, seed=7)
    width = float(re.search(r'viewBox="0 0 ([\d.]+) ', compact).group(1))
    assert width <= 360 < float(re.search(r'viewBox="0 0 ([\d.]+) ', wide).group(1))
    tick_labels = lambda svg: re.findall(r'font-size="11">(-?[\d.]+)</text>', svg)  # noqa: E731
    assert tick_labels(compact) == ["-1", "0", "1"]
    assert len(tick_labels(wide)) > len(tick_labels(compact))
    # every word of the long label is drawn, over several lines, none longer than the wrap width
    lines = re.findall(r'<text x="4" y="[\d.]+">([^<]+)</text>', compact)
    assert "".join(lines).replace(" ", "").startswith(LONG_LABEL.replace(" ", ""))
    assert all(len(line) <= 50 for line in lines) and len(lines) >= 3
    assert "no figures" in compact
    assert compact.count("- keyword:") == 1  # one whisker: the run without figures keeps its row, no whisker


def test_wrap_keeps_every_word_and_the_width():
    text = "Held-out (4 queries, 3 families) with a rather long header that must wrap"
    lines = _wrap(text, 20)
    assert " ".join(lines) == text and all(len(line) <= 20 for line in lines) and len(lines) > 1
    assert _wrap("", 10) == [""]
    assert _wrap("abcdefghijkl xy", 5) == ["abcde", "fghij", "kl xy"]  # a long word is cut, nothing is lost
