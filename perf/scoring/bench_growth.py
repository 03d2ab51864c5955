"""How cost grows with the work: CUAD grading at 10 / 100 / 510 contracts, relevance metrics at 1k / 10k / 50k queries.

Each size is one whole process (as a user runs it), median of REPEATS: wall time, CPU time (user + system, the
child's own rusage) and peak RSS.

- contracts: ``grade_cuad --cuad CUAD_v1.json --n N --run run_N.json --json`` (load, seeded sample of N, grade with
  bootstrap B=1000) on a fresh migrated database each time (SQLite; PostgreSQL's scratch database when
  BENCH_DATABASE_URL or DATABASE_URL is postgres://...). The run is built as perf/cuad/bench_cuad_process.py builds
  it (every gold span of the N contracts plus as many noise extractions), so the work is proportional to N.
- queries: ``relevance_metrics --qrels --run --json --replicates 1`` on perf/scoring/bench_trec.py's synthetic files
  (100 documents a query).

Each size above the smallest is reported beside the size below it, with the growth of CPU time and of peak memory
per 10x of work: ``(cost_n / cost_m) ** (1 / log10(n / m))``. Fixed costs (start-up, loading CUAD's 510 contracts)
make it below 10 at small sizes; a figure above 10 means cost grows faster than the work (the goal: at most 10,
linear). Prints, asserts nothing.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from perf.cuad.bench_cuad_process import Process, _cuad_path, _postgres_url, build_run  # noqa: E402
from perf.figures import load_average, report  # noqa: E402
from perf.scoring.bench_trec import _write_files  # noqa: E402
from perf.scratch_db import scratch_postgres  # noqa: E402

BENCH = "growth"
REPEATS = int(os.environ.get("BENCH_GROWTH_REPEATS", "3"))
CONTRACTS = (10, 100, 510)
QUERIES = (1_000, 10_000, 50_000)


def per_tenfold(cost: float, base: float, work: int, base_work: int) -> float:
    """Growth of ``cost`` per 10x of work between two sizes (10 = linear)."""
    if base <= 0 or cost <= 0:
        return math.nan
    return (cost / base) ** (1.0 / math.log10(work / base_work))


def _median(processes: list[Process]) -> tuple[float, float, float]:
    return tuple(statistics.median(getattr(p, k) for p in processes) for k in ("wall", "cpu", "rss"))  # type: ignore[return-value]


def _report_sizes(kind: str, unit: str, figures: dict[int, tuple[float, float, float]], load: float) -> None:
    sizes = sorted(figures)
    for index, n in enumerate(sizes):
        wall, cpu, rss = figures[n]
        ours = f"{wall:.2f} s (CPU {cpu:.2f} s), peak {rss:.0f} MiB"
        if index == 0:
            report(bench=BENCH, what=f"{kind}, {n:,} {unit}", ours=ours, load=load)
            continue
        m = sizes[index - 1]
        base_wall, base_cpu, base_rss = figures[m]
        cpu_growth = per_tenfold(cpu, base_cpu, n, m)
        rss_growth = per_tenfold(rss, base_rss, n, m)
        report(bench=BENCH, what=f"{kind}, {n:,} {unit}", ours=ours,
               peer=f"{m:,} {unit}: {base_wall:.2f} s (CPU {base_cpu:.2f} s), peak {base_rss:.0f} MiB",
               ratio=max(cpu_growth, rss_growth), goal_ratio=10.0, goal="<= 10x per 10x of work",
               ratio_text=f"{cpu_growth:.2f}x CPU, {rss_growth:.2f}x memory per 10x of work", load=load)


def bench_contracts(tmp: Path) -> None:
    cuad = _cuad_path()
    pg = _postgres_url()
    engine = "PostgreSQL" if pg else "SQLite"
    base_env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DJANGO_SETTINGS_MODULE")}
    base_env.update(VAR_DIR=str(tmp / "var"), DEBUG="0", PRODUCTION="0")
    template = tmp / "template.sqlite3"

    def fresh_env(stack: ExitStack) -> dict[str, str]:
        if pg:
            env = {**base_env, "DATABASE_URL": stack.enter_context(scratch_postgres(pg, prefix="bench_growth"))}
            subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=REPO, check=True, env=env)
            return env
        if not template.exists():
            subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=REPO, check=True,
                           env={**base_env, "DATABASE_URL": f"sqlite:///{template}"})
        db = tmp / "round.sqlite3"
        shutil.copyfile(template, db)
        return {**base_env, "DATABASE_URL": f"sqlite:///{db}"}

    data = json.loads(cuad.read_bytes())
    runs: dict[int, Path] = {}
    with ExitStack() as stack:  # untimed: each size's sample, and the run built from it
        env = fresh_env(stack)
        Process([sys.executable, "manage.py", "load_cuad", str(cuad)], env)
        for n in CONTRACTS:
            manifest = tmp / f"manifest_{n}.json"
            Process([sys.executable, "manage.py", "sample_cuad", "--n", str(n), "--seed", "42", "--out",
                     str(manifest)], env)
            titles = [c["title"] for c in json.loads(manifest.read_text())["contracts"]]
            runs[n] = tmp / f"run_{n}.json"
            runs[n].write_text(json.dumps(build_run(data, titles)))
    figures, loads = {}, []
    for n in CONTRACTS:
        processes = []
        for _ in range(REPEATS):
            loads.append(load_average())
            with ExitStack() as stack:
                processes.append(Process([sys.executable, "manage.py", "grade_cuad", "--cuad", str(cuad), "--n",
                                          str(n), "--run", str(runs[n]), "--json"], fresh_env(stack)))
        figures[n] = _median(processes)
        print(f"  {n} contracts: {figures[n][0]:.2f} s (CPU {figures[n][1]:.2f} s), {figures[n][2]:.0f} MiB",
              flush=True)
    _report_sizes(f"CUAD load + sample + grade, one process ({engine})", "contracts", figures,
                  statistics.mean(loads))


def bench_queries(tmp: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    figures, loads = {}, []
    for n in QUERIES:
        qrels, run = _write_files(tmp, n)
        processes = []
        for _ in range(REPEATS):
            loads.append(load_average())
            processes.append(Process([sys.executable, "manage.py", "relevance_metrics", "--qrels", str(qrels),
                                      "--run", str(run), "--json", "--replicates", "1"], env))
        figures[n] = _median(processes)
        print(f"  {n} queries: {figures[n][0]:.2f} s (CPU {figures[n][1]:.2f} s), {figures[n][2]:.0f} MiB",
              flush=True)
    _report_sizes("`relevance_metrics` on TREC files, one process", "queries", figures, statistics.mean(loads))


def main() -> None:
    print(f"bench_growth: median of {REPEATS} a size; {os.cpu_count()} CPUs, load average {load_average():.2f}",
          flush=True)
    with tempfile.TemporaryDirectory(prefix="bench_growth-") as folder:
        bench_queries(Path(folder))
        bench_contracts(Path(folder))


if __name__ == "__main__":
    main()
