"""The family bootstrap gives bit-identical numbers to the code that produced the stored reports.

Stored reports and backups hold intervals computed by the first implementation
(one bootstrap per metric, each drawing its own replicates x families index
matrix and gathering ``values[indices]``). The faster implementation shares one
draw between metrics and systems and works in blocks of replicates; these tests
keep a frozen, self-contained copy of the first implementation and require
exact equality (``==`` on floats, not a tolerance) on random inputs of many
shapes: Hit-like 0/1 values, RR-like fractions, excluded queries, one-query
families and many-query families, replicate counts that do not divide the block
size.
"""

from __future__ import annotations

import math

import numpy as np

from scoring.ir.family_bootstrap import family_bootstrap, paired_family_bootstrap
from scoring.ir.trec_evaluation import METRICS, evaluate_trec_runs
from scoring.stats.units import MIN_UNITS

# ----------------------------------------------------------------------------- frozen first implementation


def _old_missing(value):
    return value is None or (isinstance(value, float) and math.isnan(value))


def _old_bounds(values, level):
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return (float("nan"), float("nan"))
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(values, [tail, 100.0 - tail])
    return (float(low), float(high))


def _old_means(columns, families, replicates, seed):
    labels = sorted(set(families), key=str)
    code_of = {label: code for code, label in enumerate(labels)}
    family_code = np.fromiter((code_of[f] for f in families), dtype=np.intp, count=len(families))
    present, family_code = np.unique(family_code, return_inverse=True)
    n_families = present.size
    sums = np.zeros((n_families, columns.shape[1]))
    np.add.at(sums, family_code, columns)
    counts = np.bincount(family_code, minlength=n_families).astype(float)
    indices = np.random.default_rng(seed).integers(0, n_families, size=(replicates, n_families))
    replicate_sums = sums[indices].sum(axis=1)
    replicate_counts = counts[indices].sum(axis=1)
    return columns.mean(axis=0), replicate_sums / replicate_counts[:, None], n_families


def _old_single(values, families, replicates, seed, level=0.95):
    keep = [i for i, v in enumerate(values) if not _old_missing(v)]
    if not keep:
        return None
    columns = np.array([[float(values[i])] for i in keep])
    point, reps, n_families = _old_means(columns, [families[i] for i in keep], replicates, seed)
    low, high = _old_bounds(reps[:, 0], level)
    return (float(point[0]), low, high), len(keep), len(values) - len(keep), n_families


def _old_paired(values_a, values_b, families, replicates, seed, level=0.95):
    keep = [i for i in range(len(families)) if not (_old_missing(values_a[i]) or _old_missing(values_b[i]))]
    if not keep:
        return None
    columns = np.array([[float(values_a[i]), float(values_b[i])] for i in keep])
    point, reps, n_families = _old_means(columns, [families[i] for i in keep], replicates, seed)
    intervals = []
    for point_value, replicate_values in (
        (point[0], reps[:, 0]),
        (point[1], reps[:, 1]),
        (point[0] - point[1], reps[:, 0] - reps[:, 1]),
    ):
        low, high = _old_bounds(replicate_values, level)
        intervals.append((float(point_value), low, high))
    return intervals, len(keep), len(families) - len(keep), n_families


# ----------------------------------------------------------------------------- random inputs


def _values(rng: np.random.Generator, n: int) -> list[float | None]:
    kind = rng.integers(0, 4)
    if kind == 0:
        values = rng.integers(0, 2, n).astype(float)  # Hit@k
    elif kind == 1:
        values = 1.0 / rng.integers(1, 101, n)  # RR
        values[rng.random(n) < 0.4] = 0.0
    elif kind == 2:
        values = rng.integers(0, 6, n) / 5.0  # judged P@5
    else:
        values = rng.random(n)  # nDCG
    out: list[float | None] = [float(v) for v in values]
    if rng.random() < 0.4:
        for i in np.flatnonzero(rng.random(n) < 0.15):
            out[i] = None if rng.random() < 0.5 else float("nan")
    return out


def _families(rng: np.random.Generator, n: int) -> list[object]:
    if rng.random() < 0.4:
        return [f"q{i}" for i in range(n)]  # every query its own family
    n_families = int(rng.integers(1, max(2, n)))
    # Mixed label types, sorted by str() in the draw.
    return [int(x) if x % 3 == 0 else f"fam-{x}" for x in rng.integers(0, n_families, n)]


def _same(interval, expected, n_families: int | None = None) -> bool:
    """Bit for bit, except that below the minimum number of families the interval has no bounds (by rule)."""
    if n_families is not None and n_families < MIN_UNITS:
        expected = (expected[0], math.nan, math.nan)
    got = (interval.estimate, interval.low, interval.high)
    return all((math.isnan(g) and math.isnan(e)) or g == e for g, e in zip(got, expected, strict=True))


def test_single_system_intervals_are_bit_identical_to_the_first_implementation():
    rng = np.random.default_rng(2026)
    for case in range(300):
        n = int(rng.choice([1, 2, 5, 30, 97, 300, 1200]))
        replicates = int(rng.choice([1, 7, 250, 1000, 3001]))
        values, families = _values(rng, n), _families(rng, n)
        ours = family_bootstrap(values, families, replicates=replicates, seed=case)
        old = _old_single(values, families, replicates, case)
        if old is None:
            assert ours.included == 0 and math.isnan(ours.interval.estimate), case
            continue
        expected, included, excluded, n_families = old
        assert _same(ours.interval, expected, n_families), (case, ours.interval, expected)
        assert (ours.included, ours.excluded, ours.families) == (included, excluded, n_families), case


def test_paired_intervals_are_bit_identical_to_the_first_implementation():
    rng = np.random.default_rng(2027)
    for case in range(300):
        n = int(rng.choice([1, 2, 5, 30, 97, 300, 1200]))
        replicates = int(rng.choice([1, 7, 250, 1000, 3001]))
        families = _families(rng, n)
        a, b = _values(rng, n), _values(rng, n)
        ours = paired_family_bootstrap(a, b, families, replicates=replicates, seed=case)
        old = _old_paired(a, b, families, replicates, case)
        if old is None:
            assert ours.included == 0 and math.isnan(ours.difference.estimate), case
            continue
        expected, included, excluded, n_families = old
        for got, want in zip((ours.a, ours.b, ours.difference), expected, strict=True):
            assert _same(got, want, n_families), (case, got, want)
        assert (ours.included, ours.excluded, ours.families) == (included, excluded, n_families), case


def test_the_default_ten_thousand_replicates_are_bit_identical_at_three_thousand_queries():
    rng = np.random.default_rng(7)
    families = [f"f{int(x)}" for x in rng.integers(0, 1000, 3000)]
    a = [float(v) for v in 1.0 / rng.integers(1, 31, 3000)]
    b = [float(v) for v in rng.random(3000)]
    ours = paired_family_bootstrap(a, b, families)
    expected, *_ = _old_paired(a, b, families, 10_000, 20260920)
    for got, want in zip((ours.a, ours.b, ours.difference), expected, strict=True):
        assert _same(got, want), (got, want)


def test_trec_evaluation_intervals_are_those_of_one_bootstrap_per_metric_as_before():
    rng = np.random.default_rng(11)
    for case in range(12):
        n_queries = int(rng.choice([3, 40, 400]))
        queries = [f"q{i}" for i in range(n_queries)]
        docs = [f"d{i}" for i in range(40)]
        qrels = {q: {str(d): int(rng.integers(0, 3)) for d in rng.choice(docs, 4, replace=False)} for q in queries}
        runs = [
            (name, {q: [str(d) for d in rng.permutation(docs)[: int(rng.integers(0, 30))]] for q in queries})
            for name in ("base", "other", "third")
        ]
        families = {q: f"fam{int(rng.integers(0, max(1, n_queries // 3)))}" for q in queries} if case % 2 else None
        evaluation = evaluate_trec_runs(qrels, runs, families=families, replicates=503, seed=case)
        queries = evaluation.queries  # sorted qids: the order in which the means are summed
        family_list = [families[q] if families else q for q in queries]
        for run in evaluation.runs:
            for metric in METRICS:
                values = [run.per_query[q][metric] for q in queries]
                expected, *_ = _old_single(values, family_list, 503, case)
                assert _same(run.intervals[metric].interval, expected, evaluation.families), (case, run.name, metric)
        baseline = evaluation.runs[0]
        for (name, base_name, result), run in zip(evaluation.differences, evaluation.runs[1:], strict=True):
            assert (name, base_name) == (run.name, baseline.name)
            for metric in METRICS:
                expected, *_ = _old_paired(
                    [run.per_query[q][metric] for q in queries],
                    [baseline.per_query[q][metric] for q in queries],
                    family_list,
                    503,
                    case,
                )
                got = result[metric]
                for interval, want in zip((got.a, got.b, got.difference), expected, strict=True):
                    assert _same(interval, want, evaluation.families), (case, name, metric)
