"""Every supported measure gives trec_eval's value on trec_eval's own test files, and ir_measures' on random ones.

The files in data/trec_eval/ are trec_eval's (see the README there); ``out.test.*`` is what trec_eval printed
for them, so the comparison is against a reference nobody here wrote.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import ir_measures
import numpy as np
import pytest

from scoring.ir.measures import evaluate_query, parse_measure, parse_measures
from scoring.ir.trec_evaluation import evaluate_trec_runs
from scoring.ir.trec_io import TrecFormatError, parse_run, read_qrels, read_run

DATA = Path(__file__).parent / "data" / "trec_eval"

# trec_eval's measure names -> ours (ir_measures').
TREC_NAMES = [
    (re.compile(r"^P_(\d+)$"), "P@{}"),
    (re.compile(r"^recall_(\d+)$"), "R@{}"),
    (re.compile(r"^success_(\d+)$"), "Success@{}"),
    (re.compile(r"^ndcg_cut_(\d+)$"), "nDCG@{}"),
    (re.compile(r"^map_cut_(\d+)$"), "AP@{}"),
    (re.compile(r"^ndcg$"), "nDCG"),
    (re.compile(r"^map$"), "AP"),
    (re.compile(r"^recip_rank$"), "RR"),
    (re.compile(r"^Rprec$"), "Rprec"),
]


def _ours(trec_name: str) -> str | None:
    for pattern, template in TREC_NAMES:
        match = pattern.match(trec_name)
        if match:
            return template.format(*match.groups())
    return None


def _expected(name: str) -> dict[str, dict[str, str]]:
    """``{our measure: {qid or 'all': trec_eval's printed value}}`` of one out.test.* file."""
    out: dict[str, dict[str, str]] = defaultdict(dict)
    for line in (DATA / name).read_text().splitlines():
        trec_name, qid, value = line.split()
        ours = _ours(trec_name)
        if ours is not None:
            out[ours][qid] = value
    return out


CASES = [
    # (trec_eval's expected output, qrels, run, -l); each was made with -q (and -c for results.trunc)
    ("out.test.aq", "qrels.test", "results.test", 1),
    ("out.test.aqc", "qrels.test", "results.trunc", 1),
    ("out.test.aql", "qrels.rel_level", "results.test", 2),
    ("out.test.meas_params", "qrels.test", "results.test", 1),
]


@pytest.mark.parametrize(("expected_file", "qrels_file", "run_file", "rel_level"), CASES)
def test_every_supported_measure_prints_trec_evals_value_on_its_own_test_files(
    expected_file, qrels_file, run_file, rel_level
):
    expected = _expected(expected_file)
    evaluation = evaluate_trec_runs(
        read_qrels(DATA / qrels_file),
        [("run", read_run(DATA / run_file))],
        measures=sorted(expected),
        rel_level=rel_level,
        replicates=10,
    )
    (run,) = evaluation.runs
    compared = 0
    for measure, values in expected.items():
        for qid, theirs in values.items():
            ours = run.intervals[measure].interval.estimate if qid == "all" else run.per_query[qid][measure]
            assert f"{ours:.4f}" == theirs, (expected_file, measure, qid, ours, theirs)
            compared += 1
    # Every measure trec_eval prints that we support, for every query and the mean.
    assert compared == sum(len(values) for values in expected.values()) >= 40


def test_the_comparison_covers_every_registered_measure():
    covered = {parse_measure(name).kind.name for case in CASES for name in _expected(case[0])}
    assert covered == {"P", "R", "Success", "nDCG", "AP", "RR", "Rprec"}


def test_trec_evals_truncated_run_with_fields_after_the_tag_is_read_as_trec_eval_reads_it():
    lines = (DATA / "results.trunc").read_text().splitlines()
    assert {len(line.split()) for line in lines} >= {6, 7, 8, 9}
    careful = parse_run(lines)
    assert {qid: len(rows) for qid, rows in careful.items()} == {"301": 500, "303": 84}
    assert careful["301"][0].tag == "STANDARD"
    # The fast reader and the careful one give the same ranking.
    assert read_run(lines) == read_run(lines, order="score") == {
        qid: [row.docid for row in sorted(rows, key=lambda r: (-r.score, [-ord(c) for c in r.docid]))]
        for qid, rows in careful.items()
    }


def test_a_run_line_with_fewer_than_six_fields_is_still_refused():
    with pytest.raises(TrecFormatError, match="line 2: expected 6 fields"):
        parse_run(["q1 Q0 a 1 1.0 t extra words", "q1 Q0 b 2 0.5"])


def _ir_measures_name(name: str, rel_level: int) -> str:
    kind, _, cutoff = parse_measure(name).canonical.partition("@")
    rel = "" if kind == "nDCG" else f"(rel={rel_level})"
    return f"{kind}{rel}" + (f"@{cutoff}" if cutoff else "")


@pytest.mark.parametrize("rel_level", [1, 2, 3])
def test_every_measure_agrees_with_ir_measures_on_random_graded_runs_with_ties(rel_level):
    rng = np.random.default_rng(rel_level)
    names = ["P@1", "P@5", "P@20", "R@5", "R@100", "nDCG@5", "nDCG@10", "nDCG", "AP", "AP@10", "RR",
             "Success@1", "Success@10", "Rprec"]
    measures = parse_measures(names)
    docs = [f"d{i:03d}" for i in range(60)]
    qrels = {
        f"q{q}": {d: int(rng.integers(-1, 4)) for d in rng.choice(docs, size=int(rng.integers(1, 40)), replace=False)}
        for q in range(40)
    }
    run_lines = []
    for q in qrels:
        for d in rng.choice(docs, size=int(rng.integers(1, 50)), replace=False):
            run_lines.append(f"{q} Q0 {d} 0 {float(rng.integers(0, 8))} sys")
    rankings = read_run(run_lines)
    ours = {(q, m.name): evaluate_query([m], rankings[q], qrels[q], rel_level=rel_level)[m.name]
            for q in rankings for m in measures}
    by_theirs = {ir_measures.parse_measure(_ir_measures_name(m.name, rel_level)): m.name for m in measures}
    theirs = {
        (r.query_id, by_theirs[r.measure]): r.value
        for r in ir_measures.iter_calc(
            list(by_theirs),
            [ir_measures.Qrel(q, d, rel) for q, judged in qrels.items() for d, rel in judged.items()],
            [ir_measures.ScoredDoc(row[0], row[2], float(row[4])) for row in map(str.split, run_lines)],
        )
    }
    assert ours.keys() == theirs.keys()
    assert max(abs(ours[key] - theirs[key]) for key in ours) < 1e-9


@pytest.mark.parametrize(
    ("names", "message"),
    [(["P"], "needs a cutoff"), (["RR@5"], "takes no cutoff"), (["Bleu"], "unknown measure"),
     (["AP", "MAP"], "same figure"), (["Hit@5", "Success@5"], "same figure")],
)
def test_a_measure_name_that_cannot_be_read_is_refused_with_what_is_accepted(names, message):
    with pytest.raises(ValueError, match=message):
        parse_measures(names)


def test_map_is_ap_and_hit_is_success():
    assert parse_measure("MAP").canonical == "AP" and parse_measure("MAP").trec_eval == "map"
    assert parse_measure("Hit@5").canonical == "Success@5" and parse_measure("Hit@5").trec_eval == "success_5"
