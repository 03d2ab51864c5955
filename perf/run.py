"""``make bench``: every bench in one run, then one table of every headline figure beside its peer or target.

Each bench runs as its own process (a fresh interpreter, as a user's command would be) with ``BENCH_FIGURES``
naming a file where ``perf.figures.report`` appends its figures. The summary printed at the end is built from
those records only; ``--write-readme`` puts the same table into README.md between the bench markers, so the
README shows what the last full run measured, never figures typed by hand.

    python perf/run.py [--only NAME ...] [--skip NAME ...] [--write-readme]

A bench that fails stops nothing: the others still run, the failure is listed, and the exit status is 1.
A goal not met is printed as such (benches measure, they never assert).
"""

from __future__ import annotations

import argparse
import datetime
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from perf.figures import FIGURES_ENV, Figure, load_average, read_figures  # noqa: E402

README = REPO / "README.md"
START_MARK = "<!-- bench:start (perf/run.py --write-readme writes this block) -->"
END_MARK = "<!-- bench:end -->"


@dataclass(frozen=True)
class Bench:
    name: str
    script: str
    args: tuple[str, ...] = ()


# Peers and limits first (the ratios), then the absolute targets, then the long load runs.
BENCHES = (
    Bench("trec", "perf/scoring/bench_trec.py"),
    Bench("relevance_metrics", "perf/scoring/bench_relevance_metrics.py"),
    Bench("cuad_process", "perf/cuad/bench_cuad_process.py"),
    Bench("growth", "perf/scoring/bench_growth.py"),
    Bench("bm25", "perf/scoring/bench_bm25.py"),
    Bench("bm25_memory", "perf/scoring/bench_bm25_memory.py"),
    Bench("startup", "perf/service/bench_startup.py"),
    Bench("pages", "perf/web/bench_pages.py"),
    Bench("queue", "perf/web/bench_queue.py"),
    Bench("queue_growth", "perf/web/bench_queue_growth.py"),
    Bench("ecfr_import", "perf/service/bench_ecfr_import.py"),
    Bench("import_growth", "perf/service/bench_import_growth.py"),
    Bench("worker_rss", "perf/service/bench_worker_rss.py"),
    Bench("cuad_leaderboard", "perf/cuad/bench_cuad_leaderboard.py"),
    Bench("leaderboard", "perf/scoring/bench_leaderboard.py"),
    Bench("statutes", "perf/scoring/bench_statutes.py"),
    Bench("providers", "perf/service/bench_providers.py"),
    Bench("report", "perf/scoring/bench_report.py"),
    Bench("cuad_grading", "perf/cuad/bench_cuad_grading.py"),
    Bench("cuad_console", "perf/cuad/bench_cuad_console.py"),
    Bench("review", "perf/web/bench_review.py"),
    Bench("load", "perf/service/bench_load.py"),
    Bench("scaleout", "perf/service/bench_scaleout.py"),
    Bench("capacity", "perf/service/bench_capacity.py"),
)


# The firm-scale goals, one row each of the growth table at 1x, 10x and 100x of the row's smallest size: (row, what
# the sizes are and what each is beside). A bench fills a cell by reporting a figure with ``row`` and ``scale``; a row
# no bench filled in this run says so.
SCALES = ("1x", "10x", "100x")
FIRM_SCALE = (
    ("queue page (PostgreSQL)", "1k / 10k / 100k items per reviewer; beside the 100-item page"),
    ("queue page (SQLite)", "1k / 10k / 100k items per reviewer; beside the 100-item page"),
    ("queue search, every item matches (PostgreSQL)", "1k / 10k / 100k items per reviewer; beside 100 items"),
    ("queue search, every item matches (SQLite)", "1k / 10k / 100k items per reviewer; beside 100 items"),
    ("queue search, ten items match (PostgreSQL)", "1k / 10k / 100k items per reviewer; beside 100 items"),
    ("queue search, ten items match (SQLite)", "1k / 10k / 100k items per reviewer; beside 100 items"),
    ("paired family bootstrap", "30 / 300 / 3,000 queries (10,000 replicates); beside minimal numpy"),
    ("BM25 index memory", "1k / 10k / 100k statute sections; beside bm25s"),
    ("BM25 per query", "1k / 10k / 100k statute sections; beside bm25s"),
    ("corpus import", "eCFR 2 / 20 / 200 MB (200 MB with BENCH_IMPORT_FULL=1); peak memory beside lxml iterparse"),
    ("corpus import, JSON Lines", "1 / 10 / 100 MB (100 MB with BENCH_IMPORT_FULL=1); peak memory beside json.loads "
                                  "per line"),
    ("corpus import, CSV", "1 / 10 / 100 MB (100 MB with BENCH_IMPORT_FULL=1); peak memory beside csv.DictReader"),
)

# Their figures make the detailed growth table: each size beside the size below it (or the smallest), so a change
# that makes cost grow faster than the work shows up there.
GROWTH_BENCHES = ("growth", "queue_growth", "ecfr_import", "import_growth", "bm25_memory")


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _verdict(figure: Figure) -> str:
    return {True: "met", False: "**not met**", None: "-"}[figure.met]


def table(figures: list[Figure], *, peers_first: bool = True) -> list[str]:
    """Markdown rows: figures with a peer or limit first, then those against an absolute target (``peers_first``;
    else in the order measured, as the growth table wants each size under the one below it)."""
    lines = ["| what | ours | peer or limit, same run | ratio | goal | | load |", "|---|---|---|---|---|---|---:|"]
    for figure in sorted(figures, key=lambda f: not f.peer) if peers_first else figures:
        lines.append(f"| {_cell(figure.what)} | {_cell(figure.ours)} | {_cell(figure.peer or '-')} | "
                     f"{_cell(figure.ratio_text or '-')} | {_cell(figure.goal or '-')} | {_verdict(figure)} | "
                     f"{figure.load:.2f} |")
    return lines


def growth_table(figures: list[Figure]) -> list[str]:
    """Markdown rows of the firm-scale growth table: each goal of ``FIRM_SCALE`` at 1x, 10x and 100x, every cell
    ours beside the peer or limit measured in the same run; "met" only when every size present met its goal."""
    lines = ["| firm-scale goal | sizes | " + " | ".join(SCALES) + " | goal | |", "|---|---|" + "---|" * len(SCALES)
             + "---|---|"]
    for row, sizes in FIRM_SCALE:
        cells = {f.scale: f for f in figures if f.row == row}
        if not cells:
            lines.append(f"| {_cell(row)} | {_cell(sizes)} | " + " | ".join("-" for _ in SCALES)
                         + " | - | not measured in this run |")
            continue
        verdicts = [f.met for f in cells.values() if f.met is not None]
        verdict = "-" if not verdicts else "met" if all(verdicts) else "**not met**"
        goal = next((f.goal for f in cells.values() if f.goal), "-")
        shown = [_cell(cells[s].cell or f"{cells[s].ours}; {cells[s].ratio_text}") if s in cells else "-"
                 for s in SCALES]
        lines.append(f"| {_cell(row)} | {_cell(sizes)} | " + " | ".join(shown) + f" | {_cell(goal)} | {verdict} |")
    return lines


def summary(figures: list[Figure], *, started: datetime.datetime, loads: list[float], seconds: float,
            failed: list[str], ran: list[str]) -> list[str]:
    missed = [f for f in figures if f.met is False]
    goals = [f for f in figures if f.met is not None]
    lines = [
        f"Measured {started:%Y-%m-%d} by `make bench` (perf/run.py) in {seconds / 60:.0f} min on {os.cpu_count()} "
        f"CPUs; 1-minute load average {min(loads):.2f}-{max(loads):.2f} over the run. Benches: "
        f"{', '.join(ran)}. {len(goals) - len(missed)} of {len(goals)} goals met"
        + (f"; not met: {'; '.join(f.what for f in missed)}." if missed else "."),
        "",
        *table([f for f in figures if f.bench not in GROWTH_BENCHES]),
    ]
    if any(f.row for f in figures):
        lines += ["", "Firm scale: each goal at 1x, 10x and 100x of its smallest size, beside the peer or limit "
                      "measured in the same run:", "", *growth_table(figures)]
    growth = [f for f in figures if f.bench in GROWTH_BENCHES]
    if growth:
        lines += ["", "Growth with the work (items per reviewer: queue and item page medians against 100 items; "
                      "contracts and queries: one whole process each, CPU time and peak memory per 10x of work "
                      "against the size below, 10x = linear):", "", *table(growth, peers_first=False)]
    if failed:
        lines += ["", f"Benches that failed in this run (no figures from them): {', '.join(failed)}."]
    return lines


def write_readme(block: list[str]) -> None:
    text = README.read_text(encoding="utf-8")
    if START_MARK not in text or END_MARK not in text:
        raise SystemExit(f"README.md has no bench markers ({START_MARK} ... {END_MARK})")
    head, rest = text.split(START_MARK, 1)
    _, tail = rest.split(END_MARK, 1)
    README.write_text(head + START_MARK + "\n" + "\n".join(block) + "\n" + END_MARK + tail, encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    names = [bench.name for bench in BENCHES]
    parser.add_argument("--only", nargs="+", choices=names, help="run these benches only")
    parser.add_argument("--skip", nargs="+", choices=names, default=[], help="leave these benches out")
    parser.add_argument("--write-readme", action="store_true", help="write the summary table into README.md")
    options = parser.parse_args()
    chosen = [b for b in BENCHES if (not options.only or b.name in options.only) and b.name not in options.skip]
    if options.write_readme and (options.only or options.skip):
        raise SystemExit("--write-readme needs the full run: the README table describes every bench")
    started, clock = datetime.datetime.now(), time.monotonic()
    loads, failed = [load_average()], []
    with tempfile.TemporaryDirectory(prefix="bench-figures-") as folder:
        path = Path(folder) / "figures.jsonl"
        path.touch()
        for bench in chosen:
            print(f"== {bench.name} ({bench.script}), load average {load_average():.2f}", flush=True)
            env = {**os.environ, FIGURES_ENV: str(path)}
            status = subprocess.run([sys.executable, bench.script, *bench.args], cwd=REPO, env=env,
                                    check=False).returncode
            loads.append(load_average())
            if status != 0:
                failed.append(bench.name)
                print(f"== {bench.name} FAILED (exit status {status})", flush=True)
        figures = read_figures(str(path))
    loads += [f.load for f in figures]
    block = summary(figures, started=started, loads=loads, seconds=time.monotonic() - clock, failed=failed,
                    ran=[b.name for b in chosen])
    print("\n== summary\n" + "\n".join(block))
    if options.write_readme:
        write_readme(block)
        print(f"\nREADME.md performance table rewritten ({len(figures)} figures)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
