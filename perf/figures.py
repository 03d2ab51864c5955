"""One figure a bench measured, printed and (under ``perf/run.py``) collected for the summary and the README.

A bench calls :func:`report` once per headline figure. The line is always printed; when ``BENCH_FIGURES``
names a file (``perf/run.py`` sets it), the figure is also appended there as one JSON line, so the summary
table and the README's performance table are built from what the benches measured in that run, never
typed by hand.

A figure is either a ratio to a peer or a limit measured in the same run (``ratio`` with ``goal_ratio``:
met when ratio <= goal_ratio), or an absolute figure against a target (``value`` with ``goal_value``, in the
same unit: met when value < goal_value). ``met`` is None when the figure has no goal.

A figure may also fill one cell of the firm-scale growth table (``perf/run.py``): ``row`` names the goal (one of
``perf.run.FIRM_SCALE``), ``scale`` the size ("1x", "10x" or "100x" of that row's smallest size) and ``cell`` the
short text shown there (ours beside the peer or limit of the same run).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass

FIGURES_ENV = "BENCH_FIGURES"


@dataclass(frozen=True)
class Figure:
    bench: str
    what: str
    ours: str
    peer: str
    ratio: float | None
    ratio_text: str
    goal: str
    met: bool | None
    load: float
    row: str = ""
    scale: str = ""
    cell: str = ""


def load_average() -> float:
    return os.getloadavg()[0]


def report(*, bench: str, what: str, ours: str, peer: str = "", ratio: float | None = None,
           ratio_text: str = "", goal_ratio: float | None = None, value: float | None = None,
           goal_value: float | None = None, goal: str = "", load: float | None = None, row: str = "",
           scale: str = "", cell: str = "") -> Figure:
    """Prints the figure and records it. ``goal`` is the goal as a reader sees it ("<= 1", "p95 < 300 ms")."""
    if ratio is not None and goal_ratio is not None:
        met: bool | None = ratio <= goal_ratio
    elif value is not None and goal_value is not None:
        met = value < goal_value
    else:
        met = None
    figure = Figure(bench=bench, what=what, ours=ours, peer=peer, ratio=ratio,
                    ratio_text=ratio_text or (f"{ratio:.2f}x" if ratio is not None else ""), goal=goal, met=met,
                    load=load_average() if load is None else load, row=row, scale=scale, cell=cell)
    verdict = {True: "met", False: "NOT MET", None: "no goal"}[met]
    beside = f" | {figure.peer}" if figure.peer else ""
    ratio_part = f" | {figure.ratio_text}" if figure.ratio_text else ""
    goal_part = f" [goal {figure.goal}: {verdict}]" if figure.goal else ""
    print(f"  {what}: {ours}{beside}{ratio_part}{goal_part} (load {figure.load:.2f})", flush=True)
    path = os.environ.get(FIGURES_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps(asdict(figure)) + "\n")
    return figure


def read_figures(path: str) -> list[Figure]:
    with open(path, encoding="utf-8") as source:
        return [Figure(**json.loads(line)) for line in source if line.strip()]
