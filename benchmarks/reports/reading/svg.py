"""Server-rendered SVG forest plot of a benchmark report: means with intervals, and the paired difference.

Black on white, markers told apart by shape (open circle keyword, filled square
reranked, diamond difference) so it reads in print and without colour.
"""

from __future__ import annotations

import math
from html import escape
from typing import TypeGuard

from benchmarks.reports.figures import PRIMARY_METRIC, PRIMARY_SPLIT, MetricRow, Report, SplitSummary
from scoring.stats.bootstrap import Interval

WIDTH = 760
LABEL_W = 190
MEAN_X0, MEAN_X1 = 200, 460  # mean panel, scale 0..1
DIFF_X0, DIFF_X1 = 510, 740  # difference panel, scale -1..1
ROW_H = 34
HEADER_H = 64


def _x_mean(v: float) -> float:
    return MEAN_X0 + (MEAN_X1 - MEAN_X0) * min(max(v, 0.0), 1.0)


def _x_diff(v: float) -> float:
    return DIFF_X0 + (DIFF_X1 - DIFF_X0) * (min(max(v, -1.0), 1.0) + 1.0) / 2.0


def _defined(interval: Interval | None) -> TypeGuard[Interval]:
    return interval is not None and not any(math.isnan(x) for x in (interval.estimate, interval.low, interval.high))


def _marker(shape: str, x: float, y: float) -> str:
    if shape == "circle":
        return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" fill="#fff" stroke="#000" stroke-width="1.5"/>'
    if shape == "square":
        return f'<rect x="{x - 4:.1f}" y="{y - 4:.1f}" width="8" height="8" fill="#000"/>'
    return (f'<path d="M{x:.1f} {y - 5:.1f} L{x + 5:.1f} {y:.1f} L{x:.1f} {y + 5:.1f} L{x - 5:.1f} {y:.1f} Z" '
            'fill="#000"/>')


def _whisker(interval: Interval, y: float, scale, shape: str, label: str) -> str:
    x_low, x_high, x_est = scale(interval.low), scale(interval.high), scale(interval.estimate)
    title = f"{label}: {interval.estimate:.3f} [{interval.low:.3f}, {interval.high:.3f}]"
    return (
        f'<g><title>{escape(title)}</title>'
        f'<line x1="{x_low:.1f}" y1="{y:.1f}" x2="{x_high:.1f}" y2="{y:.1f}" stroke="#000" stroke-width="1.5"/>'
        f'<line x1="{x_low:.1f}" y1="{y - 4:.1f}" x2="{x_low:.1f}" y2="{y + 4:.1f}" stroke="#000"/>'
        f'<line x1="{x_high:.1f}" y1="{y - 4:.1f}" x2="{x_high:.1f}" y2="{y + 4:.1f}" stroke="#000"/>'
        f'{_marker(shape, x_est, y)}</g>'
    )


def _axis(x0: float, x1: float, y_top: float, y_bottom: float, ticks: list[float], scale, title: str) -> list[str]:
    out = [f'<text x="{(x0 + x1) / 2:.1f}" y="{y_top - 22:.1f}" text-anchor="middle" font-weight="bold">'
           f'{escape(title)}</text>']
    for t in ticks:
        x = scale(t)
        dash = "" if t == 0 and x0 == DIFF_X0 else ' stroke-dasharray="2 3"'
        out.append(f'<line x1="{x:.1f}" y1="{y_top - 8:.1f}" x2="{x:.1f}" y2="{y_bottom:.1f}" stroke="#777"{dash}/>')
        out.append(f'<text x="{x:.1f}" y="{y_top - 10:.1f}" text-anchor="middle" font-size="11">{t:g}</text>')
        out.append(f'<text x="{x:.1f}" y="{y_bottom + 12:.1f}" text-anchor="middle" font-size="11">{t:g}</text>')
    return out


def forest_plot_svg(report: Report) -> str:
    """The forest plot of a report as an inline SVG string (means per split and metric, and differences)."""
    rows: list[tuple[str, str | tuple[SplitSummary, MetricRow]]] = []  # (kind, header text or metric row)
    for split in report.splits:
        if not split.queries:
            continue
        rows.append(("header", f"{split.label.capitalize()} ({split.queries} queries, {split.families} families)"))
        for row in split.rows:
            rows.append(("metric", (split, row)))
    height = HEADER_H + ROW_H * len(rows) + 54
    y_top, y_bottom = HEADER_H, HEADER_H + ROW_H * len(rows)
    title = "Forest plot: means with 95% paired family-bootstrap intervals, and reranked - keyword"
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" '
        f'role="img" aria-labelledby="forest-title" font-family="sans-serif" font-size="12" class="forest-plot">',
        f'<title id="forest-title">{escape(title)}</title>',
        f'<rect x="0" y="0" width="{WIDTH}" height="{height}" fill="#fff"/>',
    ]
    parts += _axis(MEAN_X0, MEAN_X1, y_top, y_bottom, [0, 0.25, 0.5, 0.75, 1], _x_mean, "Mean (0 to 1)")
    if report.has_rerank:
        parts += _axis(DIFF_X0, DIFF_X1, y_top, y_bottom, [-1, -0.5, 0, 0.5, 1], _x_diff,
                       "Difference, reranked - keyword")
    y = y_top
    for _, payload in rows:
        if isinstance(payload, str):  # a header
            parts.append(f'<text x="6" y="{y + 22:.1f}" font-weight="bold">{escape(str(payload))}</text>')
            y += ROW_H
            continue
        split, row = payload
        primary = split.split == PRIMARY_SPLIT and row.metric == PRIMARY_METRIC
        label = f"{row.metric}{' (primary endpoint)' if primary else ''}"
        weight = ' font-weight="bold"' if primary else ""
        if primary:
            parts.append(f'<rect x="2" y="{y + 2:.1f}" width="{WIDTH - 4}" height="{ROW_H - 4}" fill="none" '
                         'stroke="#000" stroke-dasharray="4 2"/>')
        parts.append(f'<text x="16" y="{y + ROW_H / 2 + 4:.1f}"{weight}>{escape(label)}</text>')
        mid = y + ROW_H / 2
        if _defined(row.keyword):
            offset = -6 if row.reranked is not None else 0
            parts.append(_whisker(row.keyword, mid + offset, _x_mean, "circle", f"{split.label} {row.metric} keyword"))
        if _defined(row.reranked):
            parts.append(_whisker(row.reranked, mid + 6, _x_mean, "square", f"{split.label} {row.metric} reranked"))
        if _defined(row.difference):
            parts.append(_whisker(row.difference, mid, _x_diff, "diamond",
                                  f"{split.label} {row.metric} reranked - keyword"))
        y += ROW_H
    legend_y = y_bottom + 34
    parts.append(_marker("circle", 20, legend_y - 4) + f'<text x="30" y="{legend_y:.1f}">keyword order</text>')
    if report.has_rerank:
        parts.append(_marker("square", 150, legend_y - 4) + f'<text x="160" y="{legend_y:.1f}">reranked order</text>')
        parts.append(_marker("diamond", 290, legend_y - 4)
                     + f'<text x="300" y="{legend_y:.1f}">paired difference (reranked - keyword)</text>')
    parts.append(f'<text x="{WIDTH - 6}" y="{legend_y:.1f}" text-anchor="end" font-size="11">'
                 f'{report.replicates:,} replicates, seed {report.seed}</text>')
    parts.append("</svg>")
    return "".join(parts)


LB_X0, LB_X1 = 340, 620  # difference scale -1..1
LB_NOTE_X = 630
LB_WIDTH = 900


def _x_lb(v: float) -> float:
    return LB_X0 + (LB_X1 - LB_X0) * (min(max(v, -1.0), 1.0) + 1.0) / 2.0


def leaderboard_forest_svg(rows: list[tuple[str, Interval | None, str]], *, endpoint: str, replicates: int,
                           seed: int) -> str:
    """Forest plot of a leaderboard: each system's paired difference against keyword order on ``endpoint``.

    ``rows``: (system label, difference interval or None, note such as the Holm-adjusted p-value). A system
    without figures keeps its row with its note and no whisker, so no run silently drops out.
    """
    height = HEADER_H + ROW_H * max(len(rows), 1) + 40
    y_top, y_bottom = HEADER_H, HEADER_H + ROW_H * max(len(rows), 1)
    title = f"Forest plot: {endpoint}, each system minus keyword order, 95% paired family-bootstrap intervals"
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {LB_WIDTH} {height}" width="{LB_WIDTH}" '
        f'height="{height}" role="img" aria-labelledby="leaderboard-forest-title" font-family="sans-serif" '
        'font-size="12" class="forest-plot">',
        f'<title id="leaderboard-forest-title">{escape(title)}</title>',
        f'<rect x="0" y="0" width="{LB_WIDTH}" height="{height}" fill="#fff"/>',
    ]
    parts += _axis(LB_X0, LB_X1, y_top, y_bottom, [-1, -0.5, 0, 0.5, 1], _x_lb,
                   f"Difference against keyword order ({endpoint})")
    # _axis dashes every tick but the zero of the report's own difference panel; the zero line here is solid.
    parts.append(f'<line x1="{_x_lb(0):.1f}" y1="{y_top - 8:.1f}" x2="{_x_lb(0):.1f}" y2="{y_bottom:.1f}" '
                 'stroke="#000"/>')
    if not rows:
        parts.append(f'<text x="6" y="{y_top + 22:.1f}">No rerank run on this leaderboard.</text>')
    for n, (label, interval, note) in enumerate(rows):
        y = y_top + n * ROW_H
        mid = y + ROW_H / 2
        short = label if len(label) <= 52 else label[:51] + "…"
        parts.append(f'<text x="6" y="{mid + 4:.1f}"><title>{escape(label)}</title>{escape(short)}</text>')
        if _defined(interval):
            parts.append(_whisker(interval, mid, _x_lb, "diamond", f"{label} - keyword"))
        parts.append(f'<text x="{LB_NOTE_X}" y="{mid + 4:.1f}" font-size="11">{escape(note)}</text>')
    parts.append(f'<text x="{LB_WIDTH - 6}" y="{y_bottom + 30:.1f}" text-anchor="end" font-size="11">'
                 f'{replicates:,} replicates, seed {seed}</text>')
    parts.append("</svg>")
    return "".join(parts)


# Narrow screens (480 to 800 px): the same figures redrawn in a 360-unit-wide frame, shown at their own size so
# text stays at 11 px or more. Each row's label is wrapped onto its own line above the whiskers, the panels sit
# side by side under it with three ticks each, and the legend is stacked. Under 480 px the tables stand in.
C_WIDTH = 360
C_MEAN_X0, C_MEAN_X1 = 14, 166
C_DIFF_X0, C_DIFF_X1 = 196, 346
C_LABEL_H, C_WHISKER_H = 16, 26
C_HEADER_H = 56


def _wrap(text: str, width: int) -> list[str]:
    """Greedy word wrap to at most ``width`` characters a line; a longer word (a model id) is cut into pieces."""
    lines: list[str] = []
    words = [w[i:i + width] for w in text.split() for i in range(0, len(w), width)]
    for word in words:
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines or [""]


def _scale(x0: float, x1: float, low: float, high: float):
    def scale(v: float) -> float:
        return x0 + (x1 - x0) * (min(max(v, low), high) - low) / (high - low)
    return scale


def _compact_axis(x0: float, x1: float, y_top: float, y_bottom: float, ticks: list[float], scale,
                  title: str, *, solid_zero: bool) -> list[str]:
    out = [f'<text x="{(x0 + x1) / 2:.1f}" y="{y_top - 24:.1f}" text-anchor="middle" font-weight="bold">'
           f'{escape(title)}</text>']
    for t in ticks:
        x = scale(t)
        dash = "" if t == 0 and solid_zero else ' stroke-dasharray="2 3"'
        out.append(f'<line x1="{x:.1f}" y1="{y_top - 8:.1f}" x2="{x:.1f}" y2="{y_bottom:.1f}" stroke="#777"{dash}/>')
        out.append(f'<text x="{x:.1f}" y="{y_top - 10:.1f}" text-anchor="middle" font-size="11">{t:g}</text>')
    return out


def forest_plot_compact_svg(report: Report) -> str:
    """The report's forest plot for narrow screens: same whiskers, wrapped labels, three ticks per panel."""
    mean_scale = _scale(C_MEAN_X0, C_MEAN_X1, 0.0, 1.0)
    diff_scale = _scale(C_DIFF_X0, C_DIFF_X1, -1.0, 1.0)
    body: list[str] = []
    y = C_HEADER_H
    for split in report.splits:
        if not split.queries:
            continue
        header = f"{split.label.capitalize()} ({split.queries} queries, {split.families} families)"
        for line in _wrap(header, 48):
            body.append(f'<text x="4" y="{y + 13:.1f}" font-weight="bold">{escape(line)}</text>')
            y += C_LABEL_H
        for row in split.rows:
            primary = split.split == PRIMARY_SPLIT and row.metric == PRIMARY_METRIC
            weight = ' font-weight="bold"' if primary else ""
            label = f"{row.metric}{' (primary endpoint)' if primary else ''}"
            if primary:
                body.append(f'<rect x="1" y="{y + 1:.1f}" width="{C_WIDTH - 2}" height="{C_LABEL_H + C_WHISKER_H - 2}" '
                            'fill="none" stroke="#000" stroke-dasharray="4 2"/>')
            body.append(f'<text x="8" y="{y + 13:.1f}"{weight}>{escape(label)}</text>')
            mid = y + C_LABEL_H + C_WHISKER_H / 2
            if _defined(row.keyword):
                offset = -5 if row.reranked is not None else 0
                body.append(_whisker(row.keyword, mid + offset, mean_scale, "circle",
                                     f"{split.label} {row.metric} keyword"))
            if _defined(row.reranked):
                body.append(_whisker(row.reranked, mid + 5, mean_scale, "square",
                                     f"{split.label} {row.metric} reranked"))
            if report.has_rerank and _defined(row.difference):
                body.append(_whisker(row.difference, mid, diff_scale, "diamond",
                                     f"{split.label} {row.metric} reranked - keyword"))
            y += C_LABEL_H + C_WHISKER_H
    y_bottom = y
    legend = [("circle", "keyword order")]
    if report.has_rerank:
        legend += [("square", "reranked order"), ("diamond", "paired difference (reranked - keyword)")]
    height = y_bottom + 18 * (len(legend) + 1) + 14
    title = "Forest plot: means with 95% paired family-bootstrap intervals, and reranked - keyword"
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {C_WIDTH} {height}" width="{C_WIDTH}" '
        f'height="{height}" role="img" aria-labelledby="forest-compact-title" font-family="sans-serif" '
        'font-size="12" class="forest-plot compact">',
        f'<title id="forest-compact-title">{escape(title)}</title>',
        f'<rect x="0" y="0" width="{C_WIDTH}" height="{height}" fill="#fff"/>',
    ]
    parts += _compact_axis(C_MEAN_X0, C_MEAN_X1, C_HEADER_H, y_bottom, [0, 0.5, 1], mean_scale, "Mean",
                           solid_zero=False)
    if report.has_rerank:
        parts += _compact_axis(C_DIFF_X0, C_DIFF_X1, C_HEADER_H, y_bottom, [-1, 0, 1], diff_scale,
                               "Reranked - keyword", solid_zero=True)
    parts += body
    legend_y = y_bottom + 22
    for shape, text in legend:
        parts.append(_marker(shape, 12, legend_y - 4) + f'<text x="24" y="{legend_y:.1f}">{escape(text)}</text>')
        legend_y += 18
    parts.append(f'<text x="4" y="{legend_y:.1f}" font-size="11">{report.replicates:,} replicates, '
                 f'seed {report.seed}</text>')
    parts.append("</svg>")
    return "".join(parts)


def leaderboard_forest_compact_svg(rows: list[tuple[str, Interval | None, str]], *, endpoint: str, replicates: int,
                                   seed: int) -> str:
    """The leaderboard's forest plot for narrow screens: each system's label and note wrapped above its whisker."""
    scale = _scale(C_MEAN_X0 + 10, C_WIDTH - 14, -1.0, 1.0)
    body: list[str] = []
    y = C_HEADER_H
    if not rows:
        body.append(f'<text x="4" y="{y + 14:.1f}">No rerank run on this leaderboard.</text>')
        y += C_LABEL_H + C_WHISKER_H
    for label, interval, note in rows:
        for line in _wrap(label, 50):
            body.append(f'<text x="4" y="{y + 13:.1f}">{escape(line)}</text>')
            y += C_LABEL_H
        if note:
            body.append(f'<text x="4" y="{y + 13:.1f}" font-size="11">{escape(note)}</text>')
            y += C_LABEL_H
        if _defined(interval):
            body.append(_whisker(interval, y + C_WHISKER_H / 2, scale, "diamond", f"{label} - keyword"))
        y += C_WHISKER_H
    y_bottom = y
    height = y_bottom + 30
    title = f"Forest plot: {endpoint}, each system minus keyword order, 95% paired family-bootstrap intervals"
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {C_WIDTH} {height}" width="{C_WIDTH}" '
        f'height="{height}" role="img" aria-labelledby="leaderboard-forest-compact-title" font-family="sans-serif" '
        'font-size="12" class="forest-plot compact">',
        f'<title id="leaderboard-forest-compact-title">{escape(title)}</title>',
        f'<rect x="0" y="0" width="{C_WIDTH}" height="{height}" fill="#fff"/>',
    ]
    parts += _compact_axis(C_MEAN_X0 + 10, C_WIDTH - 14, C_HEADER_H, y_bottom, [-1, 0, 1], scale,
                           f"Minus keyword order ({endpoint})", solid_zero=True)
    parts += body
    parts.append(f'<text x="4" y="{y_bottom + 22:.1f}" font-size="11">{replicates:,} replicates, seed {seed}</text>')
    parts.append("</svg>")
    return "".join(parts)
