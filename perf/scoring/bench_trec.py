"""Relevance metrics on TREC files and the paired family bootstrap, each beside its peer measured in the same run.

Figures (median of REPEATS, runs of ours and the peer interleaved; each with the 1-minute load average
at the time, since the machine may be shared):

1. ``manage.py relevance_metrics --json --replicates 1`` as a whole process (as a user runs it: over files
   alone it runs before Django loads, see scoring/ir/trec_cli.py) (wall time, peak RSS) against
   ``python -m ir_measures`` on the same qrels and run (Success@1/5/10 and RR), at 1,000 and 10,000
   queries x 100 documents. Goal: ratio <= 1.
2. TREC parsing in-process: ``read_qrels`` + ``read_run`` (parsed and ranked) against ir_measures'
   ``read_trec_qrels`` + ``read_trec_run`` consumed into lists. Goal: ratio <= 1.
3. ``paired_family_bootstrap`` at 30, 300 and 3,000 queries (3 queries per family), 10,000 replicates,
   against a minimal vectorised numpy implementation (one index matrix, family sums gathered with
   ``np.take``, percentiles); the faster of a gather and a bincount + matrix-product variant is the peer.
   Goal: ratio <= 1.5.

Synthetic files in a temporary folder, seeded; nothing else is read or written. Prints, asserts nothing.
"""

from __future__ import annotations

import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from perf.figures import report  # noqa: E402
from scoring.ir.family_bootstrap import paired_family_bootstrap  # noqa: E402
from scoring.ir.trec_io import read_qrels, read_run  # noqa: E402

REPEATS = int(os.environ.get("BENCH_TREC_REPEATS", "3"))
SIZES = (1_000, 10_000)
DOCS = 100
REPLICATES = 10_000
SEED = 20260920


def _load() -> float:
    return os.getloadavg()[0]


def _write_files(directory: Path, n_queries: int) -> tuple[Path, Path]:
    rng = random.Random(n_queries)
    qrels, run = directory / f"qrels_{n_queries}.txt", directory / f"run_{n_queries}.txt"
    with qrels.open("w") as q, run.open("w") as r:
        for i in range(n_queries):
            docs = [f"d{i}_{j}" for j in range(DOCS)]
            for d in rng.sample(docs, 3):
                q.write(f"q{i} 0 {d} {rng.randint(0, 3)}\n")
            for rank, d in enumerate(rng.sample(docs, DOCS), start=1):
                r.write(f"q{i} Q0 {d} {rank} {rng.random() * 10:.4f} bench\n")
    return qrels, run


def _process(args: list[str]) -> tuple[float, float, float]:
    """Wall seconds, peak RSS (MiB) and CPU seconds (user + system) of one child process (its own rusage).

    CPU time is printed beside wall time because on a shared machine wall time mostly measures the wait for
    a core; the CPU ratio says what the work itself costs.
    """
    started = time.perf_counter()
    child = subprocess.Popen(args, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - started
    if status != 0:
        raise SystemExit(f"{args[:3]} failed: {child.stderr.read().decode()[-500:]}")
    child.stderr.close()
    return elapsed, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime  # ru_maxrss is in KiB on Linux


def _median_pair(ours: Callable[[], object], peer: Callable[[], object]) -> tuple[list, list, float]:
    """Each callable REPEATS times, interleaved so that load changes hit both; also the mean load average."""
    mine, theirs, loads = [], [], []
    for _ in range(REPEATS):
        loads.append(_load())
        mine.append(ours())
        theirs.append(peer())
    return mine, theirs, statistics.mean(loads)


def _timed(function: Callable[[], object], calls: int = 1) -> Callable[[], float]:
    """Seconds per call, over ``calls`` back-to-back calls (many for millisecond figures, to average out noise)."""

    def run() -> float:
        started = time.perf_counter()
        for _ in range(calls):
            function()
        return (time.perf_counter() - started) / calls

    return run


def bench_whole_process(directory: Path) -> None:
    python = sys.executable
    for n in SIZES:
        qrels, run = _write_files(directory, n)
        ours = [python, "manage.py", "relevance_metrics", "--qrels", str(qrels), "--run", str(run),
                "--json", "--replicates", "1"]
        peer = [python, "-m", "ir_measures", str(qrels), str(run), "Success@1 Success@5 Success@10 RR"]
        mine, theirs, load = _median_pair(lambda a=ours: _process(a), lambda a=peer: _process(a))
        t_ours, t_peer = statistics.median(t for t, _, _ in mine), statistics.median(t for t, _, _ in theirs)
        m_ours, m_peer = statistics.median(m for _, m, _ in mine), statistics.median(m for _, m, _ in theirs)
        c_ours, c_peer = statistics.median(c for _, _, c in mine), statistics.median(c for _, _, c in theirs)
        # The goal is on time and memory both: the ratio checked is the larger of the two.
        report(bench="trec",
               what=f"`relevance_metrics --json --replicates 1`, whole process, {n:,} queries x {DOCS} docs",
               ours=f"{t_ours:.2f} s (CPU {c_ours:.2f} s), {m_ours:.0f} MiB",
               peer=f"ir_measures {t_peer:.2f} s (CPU {c_peer:.2f} s), {m_peer:.0f} MiB",
               ratio=max(t_ours / t_peer, m_ours / m_peer), goal_ratio=1.0, goal="<= 1 (time and memory)",
               ratio_text=f"{t_ours / t_peer:.2f}x time, {c_ours / c_peer:.2f}x CPU, {m_ours / m_peer:.2f}x memory",
               load=load)

        import ir_measures

        def ours_parse(q=qrels, r=run) -> None:
            read_qrels(q)
            read_run(r)

        def peer_parse(q=qrels, r=run) -> None:
            list(ir_measures.read_trec_qrels(str(q)))
            list(ir_measures.read_trec_run(str(r)))

        mine, theirs, load = _median_pair(_timed(ours_parse), _timed(peer_parse))
        t_ours, t_peer = statistics.median(mine), statistics.median(theirs)
        report(bench="trec", what=f"TREC parsing in-process (qrels + run, ranked), {n:,} queries",
               ours=f"{t_ours * 1000:.0f} ms", peer=f"ir_measures {t_peer * 1000:.0f} ms", ratio=t_ours / t_peer,
               goal_ratio=1.0, goal="<= 1", load=load)


def _minimal_gather(sum_a: np.ndarray, sum_b: np.ndarray, count: np.ndarray, n_families: int) -> np.ndarray:
    indices = np.random.default_rng(SEED).integers(0, n_families, size=(REPLICATES, n_families))
    n = np.take(count, indices).sum(axis=1)
    mean_a, mean_b = np.take(sum_a, indices).sum(axis=1) / n, np.take(sum_b, indices).sum(axis=1) / n
    return np.percentile(np.column_stack([mean_a, mean_b, mean_a - mean_b]), [2.5, 97.5], axis=0)


def _minimal_counts(sum_a: np.ndarray, sum_b: np.ndarray, count: np.ndarray, n_families: int) -> np.ndarray:
    indices = np.random.default_rng(SEED).integers(0, n_families, size=(REPLICATES, n_families))
    flat = (indices + n_families * np.arange(REPLICATES)[:, None]).ravel()
    drawn = np.bincount(flat, minlength=REPLICATES * n_families).reshape(REPLICATES, n_families)
    sums = drawn @ np.column_stack([sum_a, sum_b, count])
    mean_a, mean_b = sums[:, 0] / sums[:, 2], sums[:, 1] / sums[:, 2]
    return np.percentile(np.column_stack([mean_a, mean_b, mean_a - mean_b]), [2.5, 97.5], axis=0)


def _bench_paired(n: int, rng: np.random.Generator, *, per_unit: int) -> None:
    families = [f"family-{i // per_unit}" for i in range(n)]
    a = [float(x) for x in 1.0 / rng.integers(1, 31, n)]
    b = [float(x) for x in rng.random(n)]
    codes = np.arange(n) // per_unit
    n_families = int(codes.max()) + 1
    sum_a, sum_b = np.bincount(codes, a, n_families), np.bincount(codes, b, n_families)
    count = np.bincount(codes, minlength=n_families).astype(float)
    calls = max(1, 3_000 // n)
    peers = [
        _timed(lambda v=variant: v(sum_a, sum_b, count, n_families), calls)
        for variant in (_minimal_gather, _minimal_counts)
    ]
    best_peer = min(peers, key=lambda peer: peer())  # the faster variant, chosen once, then measured beside ours
    ours = _timed(lambda: paired_family_bootstrap(a, b, families, replicates=REPLICATES, seed=SEED), calls)
    mine, theirs, load = _median_pair(ours, best_peer)
    t_ours, t_peer = statistics.median(mine), statistics.median(theirs)
    shape = f"{n:,} queries / {n_families:,} families" if per_unit > 1 else f"{n:,} queries, each its own unit"
    report(bench="trec", what=f"paired family bootstrap, {REPLICATES:,} replicates, {shape}",
           ours=f"{t_ours * 1000:.1f} ms", peer=f"minimal numpy {t_peer * 1000:.1f} ms",
           ratio=t_ours / t_peer, goal_ratio=1.5, goal="<= 1.5", load=load,
           # Families of three at 30 / 300 / 3,000 queries are the growth table's 1x / 10x / 100x.
           row="paired family bootstrap" if per_unit > 1 and n in GROWTH_SCALES else "",
           scale=GROWTH_SCALES.get(n, "") if per_unit > 1 else "",
           cell=f"{t_ours * 1000:.1f} ms vs {t_peer * 1000:.1f} ms: {t_ours / t_peer:.2f}x")


GROWTH_SCALES = {30: "1x", 300: "10x", 3_000: "100x"}


def bench_paired_bootstrap() -> None:
    rng = np.random.default_rng(5)
    # Both unit shapes: families of three queries, and each query its own unit (``relevance_metrics`` without a
    # families file), from 3 to 3,000 units.
    for n in (30, 300, 3_000):
        _bench_paired(n, rng, per_unit=3)
    for n in (3, 30, 300, 3_000):
        _bench_paired(n, rng, per_unit=1)


def main() -> None:
    print(f"bench_trec: median of {REPEATS}, ours and peer interleaved; {os.cpu_count()} CPUs, "
          f"load average {_load():.2f} at start")
    with tempfile.TemporaryDirectory(prefix="bench_trec-") as tmp:
        bench_whole_process(Path(tmp))
    bench_paired_bootstrap()
    print(f"  peak RSS of this process {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB; "
          f"load average at end {_load():.2f}")


if __name__ == "__main__":
    main()
