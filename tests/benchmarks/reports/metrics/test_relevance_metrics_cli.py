"""``manage.py relevance_metrics`` agrees with ir_measures on random TREC files and names bad lines.

ir_measures reads the same files with its own reader; Success@k and RR are
compared per query and as means (calc_aggregate averages over the qrels
queries, counting unanswered ones as 0, which is also our population).
"""

from __future__ import annotations

import io
import json
import math

import ir_measures
import numpy as np
import pytest
from django.core.management import CommandError, call_command
from ir_measures import RR, Success

from scoring.ir.family_bootstrap import family_bootstrap, paired_family_bootstrap

MEASURES = {"Hit@1": Success @ 1, "Hit@5": Success @ 5, "Hit@10": Success @ 10, "RR": RR}


def _agrees(exported: float | None, computed: float) -> bool:
    """A bound as exported (null when the families cannot support an interval) against the computed float."""
    return math.isnan(computed) if exported is None else exported == computed


def _run_command(*args: str) -> str:
    out = io.StringIO()
    call_command("relevance_metrics", *args, stdout=out)
    return out.getvalue()


def _write_random_files(rng: np.random.Generator, directory, case: int):
    docs = [f"D{i}" for i in range(30)]
    qrels_lines, run_lines = [], []
    for q in range(int(rng.integers(1, 8))):
        qid = f"{case}-{q}"
        for d in rng.choice(docs, size=int(rng.integers(1, 8)), replace=False):
            qrels_lines.append(f"{qid} 0 {d} {int(rng.choice([0, 0, 1, 2, 3]))}\n")
        if rng.random() < 0.1:
            continue  # a qrels query the run never answers
        ranked = rng.choice(docs, size=int(rng.integers(1, 15)), replace=False)
        ranks = rng.permutation(len(ranked)) + 1  # a rank column that disagrees with the scores
        for d, rank in zip(ranked, ranks, strict=True):
            run_lines.append(f"{qid} Q0 {d} {rank} {int(rng.integers(0, 5))} tag\n")
    run_lines.append(f"{case}-extra Q0 D1 1 1 tag\n")  # a run query the qrels do not judge
    rng.shuffle(run_lines)
    qrels_path, run_path = directory / f"qrels{case}", directory / f"run{case}"
    qrels_path.write_text("".join(qrels_lines), encoding="utf-8")
    run_path.write_text("".join(run_lines), encoding="utf-8")
    return qrels_path, run_path


def test_the_cli_agrees_with_ir_measures_on_random_trec_files_with_ties_and_missing_queries(tmp_path):
    rng = np.random.default_rng(41)
    compared = 0
    for case in range(150):
        qrels_path, run_path = _write_random_files(rng, tmp_path, case)
        result = json.loads(
            _run_command("--qrels", str(qrels_path), "--run", str(run_path), "--replicates", "20", "--json")
        )
        ours = result["runs"][str(run_path)]
        qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
        run = list(ir_measures.read_trec_run(str(run_path)))
        reference = {
            (m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(MEASURES.values(), qrels, run)
        }
        aggregate = ir_measures.calc_aggregate(MEASURES.values(), qrels, run)
        assert set(ours["per_query"]) == {qid for qid, _ in reference}
        for qid, values in ours["per_query"].items():
            for name, measure in MEASURES.items():
                assert values[name] == pytest.approx(reference[(qid, str(measure))], abs=1e-12)
                compared += 1
        for name, measure in MEASURES.items():
            assert ours["mean"][name] == pytest.approx(aggregate[measure], abs=1e-12)
            assert ours["ci"][name]["estimate"] == ours["mean"][name]
    assert compared > 2000


def test_intervals_resample_the_families_file_or_else_each_query_alone(tmp_path):
    rng = np.random.default_rng(42)
    qrels_path, run_path = _write_random_files(rng, tmp_path, 0)
    (tmp_path / "b").mkdir()
    _, second_run = _write_random_files(rng, tmp_path / "b", 0)  # another run over the same qids
    plain = json.loads(
        _run_command("--qrels", str(qrels_path), "--run", str(run_path), "--replicates", "300", "--json")
    )
    assert "each of the" in plain["families"] and "its own family" in plain["families"]
    per_query = plain["runs"][str(run_path)]["per_query"]
    qids = sorted(per_query)
    alone = family_bootstrap([per_query[q]["RR"] for q in qids], qids, replicates=300, seed=20260920)
    assert _agrees(plain["runs"][str(run_path)]["ci"]["RR"]["low"], alone.interval.low)
    assert _agrees(plain["runs"][str(run_path)]["ci"]["RR"]["high"], alone.interval.high)

    families_path = tmp_path / "families"
    families = {q: f"fam{i % 2}" for i, q in enumerate(qids)}
    families_path.write_text("# qid family\n" + "".join(f"{q}\t{f}\n" for q, f in families.items()), encoding="utf-8")
    grouped = json.loads(
        _run_command(
            "--qrels",
            str(qrels_path),
            "--run",
            str(run_path),
            "--run",
            str(second_run),
            "--families",
            str(families_path),
            "--replicates",
            "300",
            "--seed",
            "7",
            "--json",
        )
    )
    expected = family_bootstrap(
        [per_query[q]["Hit@5"] for q in qids], [families[q] for q in qids], replicates=300, seed=7
    )
    assert _agrees(grouped["runs"][str(run_path)]["ci"]["Hit@5"]["low"], expected.interval.low)
    assert _agrees(grouped["runs"][str(run_path)]["ci"]["Hit@5"]["high"], expected.interval.high)
    other = grouped["runs"][str(second_run)]["per_query"]
    paired = paired_family_bootstrap(
        [other[q]["RR"] for q in qids],
        [per_query[q]["RR"] for q in qids],
        [families[q] for q in qids],
        replicates=300,
        seed=7,
    )
    (difference,) = grouped["differences"]
    assert (difference["run"], difference["baseline"]) == (str(second_run), str(run_path))
    assert _agrees(difference["ci"]["RR"]["low"], paired.difference.low)
    assert difference["ci"]["RR"]["estimate"] == paired.difference.estimate
    assert (grouped["replicates"], grouped["seed"]) == (300, 7)


def test_the_table_says_when_each_query_is_its_own_family(tmp_path):
    qrels_path, run_path = _write_random_files(np.random.default_rng(43), tmp_path, 0)
    text = _run_command("--qrels", str(qrels_path), "--run", str(run_path), "--replicates", "50")
    assert "is its own family" in text
    assert "Hit@5" in text and "seed 20260920" in text


@pytest.mark.parametrize(
    ("which", "content", "message"),
    [
        ("run", "q1 Q0 a 1 1.0 t\nq1 Q0 b 2 1.0\n", r"run.txt, line 2: expected 6 fields"),
        ("run", "q1 Q0 a 1 x t\n", r"run.txt, line 1: score 'x' is not a number"),
        ("run", "q1 Q0 a 1 1 t\n\nq1 Q0 a 2 0 t\n", r"run.txt, line 3: document 'a' already listed"),
        ("qrels", "q1 0 a 1\nq1 0 b high\n", r"qrels.txt, line 2: relevance 'high' is not an integer"),
        ("families", "q1 fam\nq1 other\n", r"families.txt, line 2: query 'q1' already has a family on line 1"),
        ("families", "q1 fam extra\n", r"families.txt, line 1: expected 2 fields"),
        ("families", "q9 fam\n", r"no family for 1 qrels queries: \['q1'\]"),
    ],
)
def test_a_bad_file_gives_an_error_naming_the_file_and_line(tmp_path, which, content, message):
    files = {"run": "q1 Q0 a 1 1.0 t\n", "qrels": "q1 0 a 1\n", "families": "q1 fam\n"}
    files[which] = content
    for name, text in files.items():
        (tmp_path / f"{name}.txt").write_text(text, encoding="utf-8")
    with pytest.raises(CommandError, match=message):
        _run_command(
            "--qrels",
            str(tmp_path / "qrels.txt"),
            "--run",
            str(tmp_path / "run.txt"),
            "--families",
            str(tmp_path / "families.txt"),
            "--json",
        )


def test_a_missing_file_is_named(tmp_path):
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\n", encoding="utf-8")
    with pytest.raises(CommandError, match=r"nowhere\.run: No such file"):
        _run_command("--qrels", str(tmp_path / "qrels.txt"), "--run", str(tmp_path / "nowhere.run"))


def test_the_collector_is_paused_while_files_are_read_and_on_again_after_success_or_a_bad_file(tmp_path,
                                                                                              monkeypatch):
    import gc

    from scoring.ir import trec_cli

    seen = []
    real_read_run = trec_cli.read_run
    monkeypatch.setattr(trec_cli, "read_run", lambda path: seen.append(gc.isenabled()) or real_read_run(path))
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\n", encoding="utf-8")
    (tmp_path / "run.txt").write_text("q1 Q0 a 1 1.0 t\n", encoding="utf-8")
    (tmp_path / "bad.txt").write_text("q1 Q0 a 1 one t\n", encoding="utf-8")
    assert gc.isenabled()
    _run_command("--qrels", str(tmp_path / "qrels.txt"), "--run", str(tmp_path / "run.txt"), "--json")
    assert gc.isenabled()
    with pytest.raises(CommandError, match=r"bad\.txt, line 1"):
        _run_command("--qrels", str(tmp_path / "qrels.txt"), "--run", str(tmp_path / "bad.txt"))
    assert gc.isenabled() and seen == [False, False]


def test_several_runs_get_every_pair_with_intervals_and_holm_p_values_against_a_hand_bootstrap(tmp_path):
    from statsmodels.stats.multitest import multipletests

    from tests.scoring.ir.test_family_bootstrap_pairs import hand_p, hand_pairs

    rng = np.random.default_rng(44)
    qrels_path, first = _write_random_files(rng, tmp_path, 0)
    runs = [first]
    for name in ("b", "c"):
        (tmp_path / name).mkdir()
        runs.append(_write_random_files(rng, tmp_path / name, 0)[1])  # other runs over the same qids
    families_path = tmp_path / "families"
    qids = sorted({line.split()[0] for line in qrels_path.read_text().splitlines()})
    families = {q: f"fam{i % 3}" for i, q in enumerate(qids)}
    families_path.write_text("".join(f"{q} {f}\n" for q, f in families.items()), encoding="utf-8")
    args = ["--qrels", str(qrels_path), "--families", str(families_path), "--replicates", "400", "--seed", "9"]
    for run in runs:
        args += ["--run", str(run)]
    result = json.loads(_run_command(*args, "--json"))
    names = [str(r) for r in runs]
    assert [(p["a"], p["b"]) for p in result["pairs"]] == [(names[1], names[0]), (names[2], names[0]),
                                                            (names[2], names[1])]
    assert "Holm" in result["multiple_comparisons"]
    # The existing fields are unchanged, and a pair against the first run is its "differences" entry.
    assert set(result["differences"][0]) == {"run", "baseline", "ci"}
    for difference, pair in zip(result["differences"], result["pairs"][:2], strict=True):
        for metric in MEASURES:
            assert pair["metrics"][metric]["ci"] == [difference["ci"][metric]["low"], difference["ci"][metric]["high"]]
    for metric in MEASURES:
        systems = {name: [result["runs"][name]["per_query"][q][metric] for q in qids] for name in names}
        reference = hand_pairs(systems, [families[q] for q in qids], replicates=400, seed=9)
        expected_p = []
        for pair in result["pairs"]:
            diffs, point = reference[pair["b"], pair["a"]]
            diffs, point = -diffs, -point
            figures = pair["metrics"][metric]
            assert figures["diff"] == pytest.approx(point, abs=1e-12)
            assert figures["ci"] == pytest.approx(list(np.percentile(diffs, [2.5, 97.5])), abs=1e-12)
            assert figures["p_value"] == pytest.approx(hand_p(diffs), abs=1e-12)
            expected_p.append(hand_p(diffs))
        holm = multipletests(expected_p, method="holm")[1]
        assert [p["metrics"][metric]["p_adjusted"] for p in result["pairs"]] == pytest.approx(list(holm), abs=1e-12)
    table = _run_command(*args)
    assert "every pair of runs" in table and "Holm p " in table


def test_a_single_run_has_no_pairs(tmp_path):
    qrels_path, run_path = _write_random_files(np.random.default_rng(45), tmp_path, 0)
    result = json.loads(_run_command("--qrels", str(qrels_path), "--run", str(run_path), "--replicates", "50",
                                     "--json"))
    assert result["pairs"] == [] and result["differences"] == []


def test_named_measures_get_intervals_and_holm_adjusted_pairs_like_the_default_ones(tmp_path):
    # Seed 0 draws six queries (each its own family): enough units for intervals (scoring.stats.units).
    rng = np.random.default_rng(0)
    qrels_path, _ = _write_random_files(rng, tmp_path, 0)
    runs = []
    for index in range(3):
        _, run_path = _write_random_files(np.random.default_rng(0), tmp_path, 0)
        lines = run_path.read_text().splitlines()
        # Three different rankings of the same queries: reshuffled scores.
        run_path = tmp_path / f"run-{index}"
        run_path.write_text("".join(
            f"{' '.join(line.split()[:4])} {int(rng.integers(0, 9))} tag\n" for line in lines), encoding="utf-8")
        runs += ["--run", str(run_path)]
    measures = ["P@5", "nDCG@10", "MAP", "R@100", "Success@10"]
    out = json.loads(_run_command("--qrels", str(qrels_path), *runs, "-m", *measures, "--rel-level", "2",
                                  "--replicates", "300", "--json"))
    assert out["measures"] == measures and out["relevance_level"] == 2
    for run in out["runs"].values():
        assert set(run["mean"]) == set(run["ci"]) == set(measures)
        for measure in measures:
            ci = run["ci"][measure]
            assert ci["low"] <= ci["estimate"] <= ci["high"]
    assert len(out["pairs"]) == 3  # every pair of three runs
    for pair in out["pairs"]:
        assert set(pair["metrics"]) == set(measures)
        for figures in pair["metrics"].values():
            assert figures["p_adjusted"] is None or figures["p_adjusted"] >= figures["p_value"]


def test_a_named_measure_the_registry_does_not_know_is_an_error_listing_the_known_ones(tmp_path):
    qrels_path, run_path = _write_random_files(np.random.default_rng(1), tmp_path, 0)
    with pytest.raises(CommandError, match=r"unknown measure 'bpref'; known: P@k"):
        _run_command("--qrels", str(qrels_path), "--run", str(run_path), "-m", "bpref")
