"""compare_cuad_runs on a small CUAD written by the tests: its JSON schema, its agreement with the leaderboard
arithmetic, and its refusals (file and reason)."""

from __future__ import annotations

import json
import re
from io import StringIO

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from grading.dataset.selectors import manifest_scope
from grading.runs.models import ExtractionRun
from grading.runs.selectors import run_pair_table
from grading.scorecard.leaderboard import board_grade
from scoring.cuad.grading import Thresholds
from scoring.stats.multiple import MULTIPLE_COMPARISON_METHOD
from tests.grading.console_support import noisy_run, random_run
from tests.grading.cuad_fixture import cuad_bytes, gold_run

pytestmark = pytest.mark.django_db

ALPHA, BETA = "ALPHA-DISTRIBUTOR AGREEMENT", "BETA-LICENSE AGREEMENT"


@pytest.fixture
def manifest(tmp_path):
    """The fixture CUAD loaded and a manifest of its four contracts."""
    path = tmp_path / "CUAD_v1.json"
    path.write_bytes(cuad_bytes())
    call_command("load_cuad", str(path), stdout=StringIO())
    out = tmp_path / "manifest.json"
    call_command("sample_cuad", "--n", "4", "--min-per-type", "1", "--seed", "42", "--out", str(out),
                 stdout=StringIO())
    return out


def _write(tmp_path, name: str, run: dict | str):
    path = tmp_path / name
    path.write_text(run if isinstance(run, str) else json.dumps(run), encoding="utf-8")
    return path


@pytest.fixture
def three(tmp_path, manifest):
    return [
        _write(tmp_path, "gold.json", gold_run("gold-model")),
        _write(tmp_path, "noisy.json", noisy_run("noisy-model")),
        _write(tmp_path, "random.json", random_run(np.random.default_rng(5), "random-model")),
    ]


def compare(*args) -> tuple[dict, str]:
    out, err = StringIO(), StringIO()
    call_command("compare_cuad_runs", *args, "--json", stdout=out, stderr=err)
    return json.loads(out.getvalue()), err.getvalue()


def _runs_args(paths) -> list[str]:
    return [a for p in paths for a in ("--run", str(p))]


def test_it_prints_every_run_and_every_pair_in_the_documented_schema(three, manifest):
    result, _ = compare(*_runs_args(three), "--manifest", str(manifest))
    assert {"runs", "pairs", "method"} <= set(result)
    assert result["method"] == MULTIPLE_COMPARISON_METHOD
    assert result["bootstrap"] == {"replicates": 1000, "seed": 0, "unit": "contract", "paired": True}
    assert result["contracts"] == 4
    assert result["runs"][0]["model"] == "gold-model"
    for r in result["runs"]:
        assert {"model", "precision", "recall", "f1", "ci"} <= set(r)
        assert set(r["ci"]) == {"precision", "recall", "f1"} and len(r["ci"]["f1"]) == 2
        assert set(r["hallucination_rate"]) == {"estimate", "ci", "note"}
    assert len(result["pairs"]) == 3
    models = {"gold-model", "noisy-model", "random-model"}
    for p in result["pairs"]:
        assert {"a", "b", "f1_diff", "ci", "p_adjusted"} <= set(p)
        assert {p["a"], p["b"]} <= models and p["a"] != p["b"]
        lo, hi = p["ci"]
        assert lo <= p["f1_diff"] <= hi
        assert p["p_value"] <= p["p_adjusted"] <= 1.0
    by_model = {r["model"]: r["f1"] for r in result["runs"]}
    for p in result["pairs"]:
        assert p["f1_diff"] == pytest.approx(by_model[p["a"]] - by_model[p["b"]])


def test_replicates_and_seed_are_the_bootstrap_it_reports(three, manifest):
    base = [*_runs_args(three[:2]), "--manifest", str(manifest)]
    a, _ = compare(*base, "--replicates", "200", "--seed", "3")
    b, _ = compare(*base, "--replicates", "200", "--seed", "3")
    c, _ = compare(*base, "--replicates", "200", "--seed", "4")
    assert a == b
    assert a["bootstrap"]["replicates"] == 200 and a["bootstrap"]["seed"] == 3
    assert a["pairs"][0]["f1_diff"] == c["pairs"][0]["f1_diff"]
    # the same numbers as the leaderboard arithmetic on those draws
    _, ids = manifest_scope(manifest=manifest.read_bytes())
    tables = [run_pair_table(run=ExtractionRun.objects.get(model=m), contract_ids=ids).table
              for m in ("gold-model", "noisy-model")]
    for seed, result in ((3, a), (4, c)):
        board = board_grade(tables, Thresholds(), replicates=200, seed=seed)
        pair = board.pairs[0]
        assert result["pairs"][0]["ci"] == [pair.f1.low, pair.f1.high]
        assert result["pairs"][0]["p_adjusted"] == pair.p_adjusted
    assert a["pairs"][0]["p_value"] != c["pairs"][0]["p_value"]  # other draws, another bootstrap distribution


def test_the_text_output_names_the_method(three, manifest):
    out = StringIO()
    call_command("compare_cuad_runs", *_runs_args(three), "--manifest", str(manifest), stdout=out, stderr=StringIO())
    text = out.getvalue()
    assert " 1. gold-model" in text and "Holm p" in text and MULTIPLE_COMPARISON_METHOD in text


def test_runs_with_different_scopes_are_compared_on_the_common_contracts_with_a_note(tmp_path, three, manifest):
    partial = gold_run("two-contracts")
    partial["extractions"] = [e for e in partial["extractions"] if e["contract"] in (ALPHA, BETA)]
    partial["contracts"] = [ALPHA, BETA]
    path = _write(tmp_path, "partial.json", partial)
    result, err = compare(*_runs_args([three[1], path]), "--manifest", str(manifest))
    assert result["contracts"] == 2
    assert "compared on the 2 they all attempted" in result["notice"] and "note:" in err


def test_it_needs_at_least_two_runs(three, manifest):
    with pytest.raises(CommandError, match=r"--run: a comparison needs at least two run files \(got 1\)"):
        compare("--run", str(three[0]), "--manifest", str(manifest))


def test_a_missing_manifest_is_refused(three, tmp_path):
    with pytest.raises(CommandError, match="--manifest"):
        compare(*_runs_args(three))
    missing = tmp_path / "nowhere.json"
    with pytest.raises(CommandError, match=rf"--manifest {missing}: No such file or directory"):
        compare(*_runs_args(three), "--manifest", str(missing))
    bad = _write(tmp_path, "bad-manifest.json", "{not json")
    with pytest.raises(CommandError, match=rf"--manifest {bad}: manifest: not valid JSON"):
        compare(*_runs_args(three), "--manifest", str(bad))


def test_a_bad_run_file_is_named_with_its_reason(tmp_path, three, manifest):
    unknown = gold_run("x")
    unknown["extractions"][0]["contract"] = "NO SUCH CONTRACT"
    bad = _write(tmp_path, "bad-run.json", unknown)
    reason = "invalid run:\nextractions[0], field 'contract': unknown contract 'NO SUCH CONTRACT'"
    with pytest.raises(CommandError, match=re.escape(f"--run {bad}: {reason}")):
        compare(*_runs_args([three[0], bad]), "--manifest", str(manifest))
    missing = tmp_path / "absent.json"
    with pytest.raises(CommandError, match=rf"--run {missing}: No such file or directory"):
        compare(*_runs_args([three[0], missing]), "--manifest", str(manifest))


def test_runs_sharing_no_contract_are_refused(tmp_path, manifest):
    paths = []
    for title in (ALPHA, BETA):
        run = gold_run(title)
        run["extractions"] = [e for e in run["extractions"] if e["contract"] == title]
        run["contracts"] = [title]
        paths.append(_write(tmp_path, f"{title[:4]}.json", run))
    with pytest.raises(CommandError, match="the runs share no contract of the manifest"):
        compare(*_runs_args(paths), "--manifest", str(manifest))


def test_bad_thresholds_and_replicates_are_refused(three, manifest):
    base = [*_runs_args(three[:2]), "--manifest", str(manifest)]
    with pytest.raises(CommandError, match=r"partial floor 0\.9 is above the correct threshold 0\.7"):
        compare(*base, "--partial", "0.9")
    with pytest.raises(CommandError, match="--replicates: must be at least 1"):
        compare(*base, "--replicates", "0")
