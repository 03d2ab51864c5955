"""TREC run and qrels reading/writing: round trips, trec_eval's order, and errors that name the line."""

from __future__ import annotations

import ir_measures
import numpy as np
import pytest
from ir_measures import RR, Success

from scoring.ir.ranking import reciprocal_rank
from scoring.ir.trec_io import (
    TrecFormatError,
    format_run,
    parse_qrels,
    parse_run,
    ranked_docids,
    read_qrels,
    read_run,
    write_qrels,
    write_run,
)


def test_a_written_run_reads_back_in_the_same_order_and_ir_measures_reads_the_same_ranking(tmp_path):
    rng = np.random.default_rng(3)
    docs = [f"doc-{i}" for i in range(50)]
    for case in range(100):
        rankings = {
            f"q{q}": list(rng.choice(docs, size=int(rng.integers(1, 30)), replace=False))
            for q in range(int(rng.integers(1, 5)))
        }
        qrels = {q: {d: int(rng.integers(0, 4)) for d in rng.choice(docs, size=6, replace=False)} for q in rankings}
        run_path, qrels_path = tmp_path / f"run{case}.txt", tmp_path / f"qrels{case}.txt"
        write_run(run_path, rankings, tag="sys")
        write_qrels(qrels_path, qrels)
        assert read_run(run_path) == rankings
        assert read_qrels(qrels_path) == qrels
        ours = {q: reciprocal_rank(r, {d for d, rel in qrels[q].items() if rel >= 1}) for q, r in rankings.items()}
        theirs = {
            m.query_id: m.value
            for m in ir_measures.iter_calc(
                [RR], ir_measures.read_trec_qrels(str(qrels_path)), ir_measures.read_trec_run(str(run_path))
            )
        }
        assert ours == pytest.approx(theirs)


def test_the_rank_column_is_ignored_and_score_ties_break_by_docid_descending_as_in_trec_eval():
    lines = [
        "q1 Q0 a 1 1.0 t",
        "q1 Q0 c 2 1.0 t",
        "q1 Q0 b 3 1.0 t",
        "q1 Q0 z 9 5.0 t",
    ]
    assert read_run(lines) == {"q1": ["z", "c", "b", "a"]}
    assert read_run(lines, order="rank") == {"q1": ["a", "c", "b", "z"]}
    qrels = [ir_measures.Qrel("q1", "a", 1)]
    run = [ir_measures.ScoredDoc("q1", d, s) for d, s in (("a", 1.0), ("c", 1.0), ("b", 1.0), ("z", 5.0))]
    (metric,) = ir_measures.iter_calc([Success @ 3], qrels, run)
    assert metric.value == 0.0  # 'a' is fourth for trec_eval too


def test_scores_that_would_reorder_the_ranking_under_trec_eval_are_refused_when_writing():
    assert format_run({"q": ["b", "a"]}, tag="t", scores={"q": [0.5, 0.5]})  # ties by docid descending: fine
    with pytest.raises(ValueError, match="do not reproduce the given order"):
        format_run({"q": ["a", "b"]}, tag="t", scores={"q": [0.5, 0.5]})
    with pytest.raises(ValueError, match="whitespace"):
        format_run({"q 1": ["a"]}, tag="t")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("q1 Q0 a 1 1.0 t\nq1 Q0 b 2 1.0\n", r"<run>, line 2: expected 6 fields"),
        ("q1 Q0 a one 1.0 t\n", r"<run>, line 1: rank 'one' is not an integer"),
        ("\nq1 Q0 a 1 high t\n", r"<run>, line 2: score 'high' is not a number"),
        ("q1 Q0 a 1 nan t\n", r"<run>, line 1: score 'nan' is not finite"),
        ("q1 Q0 a 1 1 t\nq1 Q0 a 2 0 t\n", r"<run>, line 2: document 'a' already listed for query 'q1' on line 1"),
    ],
)
def test_a_malformed_run_line_raises_an_error_naming_the_line(text, message):
    with pytest.raises(TrecFormatError, match=message):
        parse_run(text.splitlines())


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("q1 0 a 1\nq1 0 b\n", r"<qrels>, line 2: expected 4 fields"),
        ("q1 0 a yes\n", r"<qrels>, line 1: relevance 'yes' is not an integer"),
        ("q1 0 a 1\nq1 0 a 2\n", r"<qrels>, line 2: document 'a' already judged for query 'q1' on line 1"),
    ],
)
def test_a_malformed_qrels_line_raises_an_error_naming_the_line(text, message):
    with pytest.raises(TrecFormatError, match=message):
        parse_qrels(text.splitlines())


def test_errors_from_a_file_name_the_file(tmp_path):
    path = tmp_path / "bad.run"
    path.write_text("q1 Q0 a 1 1.0 t\nq1 Q0 b 2\n", encoding="utf-8")
    with pytest.raises(TrecFormatError, match=r"bad\.run, line 2"):
        read_run(path)


def _careful_read(lines: list[str]) -> dict[str, list[str]]:
    """The reference reader: one RunRow per line, trec_eval's order by two stable sorts."""
    return {qid: ranked_docids(rows) for qid, rows in parse_run(lines).items()}


def test_the_fast_run_reader_gives_the_careful_readers_ranking_on_random_files_with_ties(tmp_path):
    rng = np.random.default_rng(17)
    for case in range(200):
        lines = []
        for q in range(int(rng.integers(1, 6))):
            docs = rng.choice([f"d{i}" for i in range(60)], size=int(rng.integers(1, 40)), replace=False)
            for rank, docid in enumerate(docs, start=1):
                # Few distinct scores, so ties (broken by docid) are common; signed zeros and exponents too.
                score = rng.choice(["0", "-0.0", "1e-3", "0.001", "2", "-1.5", "3.25E+1", "7"])
                lines.append(f"q{q}\tQ0  {docid} {rank} {score} tag\n")
        order = rng.permutation(len(lines)) if case % 3 == 0 else np.arange(len(lines))
        lines = [lines[i] for i in order]  # a third of the files interleave their queries
        if case % 4 == 0:
            lines.insert(int(rng.integers(0, len(lines) + 1)), "   \n")  # a blank line
        path = tmp_path / f"run{case}"
        path.write_text("".join(lines), encoding="utf-8")
        expected = _careful_read(lines)
        assert read_run(path) == expected, case
        assert read_run(iter(lines)) == expected, case


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("q1 Q0 a 1 1.0 t\nq1 Q0 b 2 1.0\n", r"bad\.run, line 2: expected 6 fields"),
        ("q1 Q0 a 1 1.0 t\nq2 Q0 a one 1.0 t\n", r"bad\.run, line 2: rank 'one' is not an integer"),
        ("q1 Q0 a 1 1.0 t\n\nq1 Q0 b 1 high t\n", r"bad\.run, line 3: score 'high' is not a number"),
        ("q1 Q0 a 1 inf t\n", r"bad\.run, line 1: score 'inf' is not finite"),
        (
            "q1 Q0 a 1 1 t\nq2 Q0 b 1 1 t\nq1 Q0 a 2 0 t\n",
            r"bad\.run, line 3: document 'a' already listed for query 'q1' on line 1",
        ),
    ],
)
def test_the_fast_run_reader_still_names_the_file_and_line_of_a_malformed_line(tmp_path, text, message):
    path = tmp_path / "bad.run"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TrecFormatError, match=message):
        read_run(path)


def test_a_run_that_is_not_utf8_is_refused_with_the_file_name(tmp_path):
    path = tmp_path / "latin1.run"
    path.write_bytes("q1 Q0 caf\u00e9 1 1.0 t\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"latin1\.run: not UTF-8 text"):
        read_run(path)
