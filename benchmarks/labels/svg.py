"""Server-rendered SVG reliability diagram: five equal-width bins of P(useful), observed rate of useful.

Black on white, no colour needed: outlined bars are the observed rate per bin,
filled dots the bin's mean predicted P(useful) against its observed rate, the
dashed diagonal is perfect calibration, the dotted line the 0.8 diagnostic.
Counts are printed under every bin, so the figure reads in print.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from scoring.stats.calibration import DIAGNOSTIC_THRESHOLD, ReliabilityBin

SIZE = 300  # plot area, pixels per unit
LEFT, TOP, RIGHT, BOTTOM = 58, 40, 24, 74


def _x(v: float) -> float:
    return LEFT + SIZE * v


def _y(v: float) -> float:
    return TOP + SIZE * (1 - v)


def reliability_svg(bins: Sequence[ReliabilityBin], *, title: str, ident: str) -> str:
    """One split's reliability diagram as an inline SVG string."""
    width, height = LEFT + SIZE + RIGHT, TOP + SIZE + BOTTOM
    total = sum(b.count for b in bins)
    title_id = f"{ident}-title"
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'role="img" aria-labelledby="{title_id}" font-family="sans-serif" font-size="11" class="reliability">',
        f'<title id="{title_id}">{escape(title)}</title>',
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#fff"/>',
        f'<text x="{width / 2:.1f}" y="18" text-anchor="middle" font-weight="bold" font-size="12">'
        f'{escape(title)}</text>',
    ]
    for t in (0, 0.2, 0.4, 0.6, 0.8, 1.0):
        parts.append(f'<line x1="{_x(t):.1f}" y1="{_y(0):.1f}" x2="{_x(t):.1f}" y2="{_y(1):.1f}" stroke="#ccc"/>')
        parts.append(f'<line x1="{_x(0):.1f}" y1="{_y(t):.1f}" x2="{_x(1):.1f}" y2="{_y(t):.1f}" stroke="#ccc"/>')
        parts.append(f'<text x="{_x(t):.1f}" y="{_y(0) + 14:.1f}" text-anchor="middle">{t:g}</text>')
        parts.append(f'<text x="{_x(0) - 6:.1f}" y="{_y(t) + 4:.1f}" text-anchor="end">{t:g}</text>')
    for b in bins:
        if not b.count or b.observed_rate is None:
            continue
        x0, x1 = _x(b.low) + 3, _x(b.high) - 3
        parts.append(
            f'<rect x="{x0:.1f}" y="{_y(b.observed_rate):.1f}" width="{x1 - x0:.1f}" '
            f'height="{_y(0) - _y(b.observed_rate):.1f}" fill="#eee" stroke="#000" stroke-width="1">'
            f'<title>{b.low:g}-{b.high:g}: {b.count} items, observed {b.observed_rate:.3f}</title></rect>'
        )
    parts.append(f'<line x1="{_x(0):.1f}" y1="{_y(0):.1f}" x2="{_x(1):.1f}" y2="{_y(1):.1f}" stroke="#000" '
                 'stroke-dasharray="5 4"/>')
    parts.append(f'<line x1="{_x(DIAGNOSTIC_THRESHOLD):.1f}" y1="{_y(0):.1f}" x2="{_x(DIAGNOSTIC_THRESHOLD):.1f}" '
                 f'y2="{_y(1):.1f}" stroke="#000" stroke-dasharray="1 3"/>')
    parts.append(f'<text x="{_x(DIAGNOSTIC_THRESHOLD) - 3:.1f}" y="{_y(1) - 4:.1f}" text-anchor="end" '
                 f'font-size="11">{DIAGNOSTIC_THRESHOLD:g} diagnostic</text>')
    for b in bins:
        mid = (_x(b.low) + _x(b.high)) / 2
        parts.append(f'<text x="{mid:.1f}" y="{_y(0) + 28:.1f}" text-anchor="middle" font-size="11">n={b.count}</text>')
        if b.count and b.mean_predicted is not None and b.observed_rate is not None:
            parts.append(
                f'<circle cx="{_x(b.mean_predicted):.1f}" cy="{_y(b.observed_rate):.1f}" r="4" fill="#000">'
                f'<title>mean predicted {b.mean_predicted:.3f}, observed {b.observed_rate:.3f}, n={b.count}</title>'
                '</circle>'
            )
    parts.append(f'<text x="{_x(0.5):.1f}" y="{height - 26:.1f}" text-anchor="middle">P(useful) predicted by the '
                 'model (bins of 0.2)</text>')
    parts.append(f'<text x="{_x(0.5):.1f}" y="{height - 10:.1f}" text-anchor="middle" font-size="11">'
                 f'bars: observed rate · dots: bin mean vs observed · dashed: ideal · {total} items</text>')
    parts.append(f'<text transform="translate(14 {_y(0.5):.1f}) rotate(-90)" text-anchor="middle">'
                 'Observed rate of useful (human grade ≥ 2)</text>')
    if not total:
        parts.append(f'<text x="{_x(0.5):.1f}" y="{_y(0.5):.1f}" text-anchor="middle" font-weight="bold">'
                     'no completed labels yet</text>')
    parts.append("</svg>")
    return "".join(parts)
