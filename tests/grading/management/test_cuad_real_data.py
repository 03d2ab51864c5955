"""The commands on the real CUAD in DATA_DIR, loaded once for this module (the only real-data load)."""

from __future__ import annotations

import json
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command

from grading.dataset.models import Category, Contract, CuadDataset, Span

REAL_SHA256 = "2e022cbd8936aab9311beaa45eaaa3191989c07df9fd177510a3bb72bbba2d7b"


@pytest.fixture(scope="module")
def real_cuad(django_db_setup, django_db_blocker, data_dir):
    """Load the real CUAD outside the per-test transactions, once; remove it when the module is done."""
    with django_db_blocker.unblock():
        out = StringIO()
        call_command("load_cuad", str(data_dir / "cuad" / "CUAD_v1.json"), stdout=out)
        dataset = CuadDataset.objects.get(sha256=REAL_SHA256)
        yield dataset, out.getvalue()
        dataset.delete()
        Category.objects.filter(datasets=None).delete()


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.mark.django_db
def test_it_loads_the_real_cuad_with_every_span_matching_its_text(real_cuad):
    dataset, message = real_cuad
    assert "510 contracts, 41 categories, 13823 spans" in message
    assert Contract.objects.filter(dataset=dataset).count() == 510
    assert Span.objects.filter(contract__dataset=dataset).count() == 13823
    assert dataset.categories.count() == 41
    assert Category.objects.get(name="Governing Law").description.startswith("Which state/country's law")
    sample = Span.objects.filter(contract__dataset=dataset).select_related("contract").order_by("?")[:200]
    assert all(s.contract.text[s.start : s.end] == s.text for s in sample)


@pytest.mark.django_db
def test_the_seed_42_sample_is_byte_identical_and_a_perfect_run_on_it_scores_one(real_cuad, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    run("sample_cuad", "--n", "100", "--min-per-type", "30", "--seed", "42", "--out", str(a))
    run("sample_cuad", "--n", "100", "--min-per-type", "30", "--seed", "42", "--out", str(b))
    assert a.read_bytes() == b.read_bytes()
    manifest = json.loads(a.read_bytes())
    assert len(manifest["contracts"]) == 100 and len(manifest["per_type"]) == 41
    assert manifest["source"]["sha256"] == REAL_SHA256
    for name, count in manifest["per_type"].items():
        assert (count >= 30) or (name in manifest["types_below_target"])

    titles = [c["title"] for c in manifest["contracts"]]
    spans = Span.objects.filter(contract__title__in=titles, contract__dataset=real_cuad[0]).select_related(
        "contract", "category"
    )
    gold = [{"contract": s.contract.title, "category": s.category.name, "text": s.text} for s in spans]
    run_path = tmp_path / "perfect.jsonl"
    run_path.write_text("\n".join(json.dumps({"model": "gold", **g}) for g in gold), encoding="utf-8")
    result = json.loads(run("grade_cuad", "--run", str(run_path), "--manifest", str(a), "--json"))
    assert (result["precision"], result["recall"], result["f1"]) == (1.0, 1.0, 1.0)
    assert result["counts"]["spans"] == len(gold) == result["counts"]["correct"]


@pytest.mark.django_db
def test_the_self_test_flags_every_injected_error_on_the_real_cuad(real_cuad):
    output = run("cuad_selftest")
    assert "SELF-TEST PASSED" in output
    for kind in ("fabricated", "paraphrase", "truncated", "wrong_category", "duplicate", "dropped", "other_contract"):
        assert kind in output


@pytest.mark.django_db
def test_the_self_test_exits_non_zero_when_the_grader_misses_an_error(real_cuad, monkeypatch):
    from django.core.management import CommandError

    from grading.scorecard import selftest
    from scoring.cuad.grading import Thresholds

    # A grader that never calls anything hallucinated must fail the fabricated/paraphrase/other-contract rows.
    monkeypatch.setattr(selftest, "Thresholds", lambda: Thresholds(grounding=0.0))
    with pytest.raises(CommandError, match="missed at least one injected error"):
        run("cuad_selftest", "--contracts", "10", "--per-kind", "1")


def _with_errors(gold: list[dict], *, rate: float, seed: int, model: str) -> tuple[list[dict], int]:
    """Gold with errors injected at ``rate`` each: a span dropped, replaced by a fabricated clause, or cut to
    its first half. Returns the run's lines and how many fabricated clauses it holds."""
    rng = np.random.default_rng(seed)
    lines, fabricated = [], 0
    for g in gold:
        roll = rng.random()
        if roll < rate:
            continue
        if roll < 2 * rate:
            g = {**g, "text": "The purple submarine shall pay royalties in saffron to the moon every solstice."}
            fabricated += 1
        elif roll < 3 * rate and len(g["text"].split()) >= 8:
            words = g["text"].split()
            g = {**g, "text": " ".join(words[: len(words) // 2])}
        lines.append({"model": model, **g})
    return lines, fabricated


@pytest.mark.django_db
def test_three_models_are_compared_end_to_end_on_the_real_sample(real_cuad, tmp_path, stakeholder_client):
    manifest = tmp_path / "manifest.json"
    run("sample_cuad", "--n", "100", "--min-per-type", "30", "--seed", "42", "--out", str(manifest))
    titles = [c["title"] for c in json.loads(manifest.read_bytes())["contracts"]]
    spans = Span.objects.filter(contract__title__in=titles, contract__dataset=real_cuad[0]).select_related(
        "contract", "category"
    ).order_by("contract__title", "category__position", "answer_index")
    gold = [{"contract": s.contract.title, "category": s.category.name, "text": s.text} for s in spans]
    files, fabricated = [], {}
    for model, rate in (("gold", 0.0), ("light-errors", 0.03), ("heavy-errors", 0.12)):
        lines, fabricated[model] = _with_errors(gold, rate=rate, seed=1, model=model)
        path = tmp_path / f"{model}.jsonl"
        path.write_text("\n".join(json.dumps(line) for line in lines), encoding="utf-8")
        files += ["--run", str(path)]

    result = json.loads(run("compare_cuad_runs", *files, "--manifest", str(manifest), "--json"))
    assert result["contracts"] == 100
    assert [r["model"] for r in result["runs"]] == ["gold", "light-errors", "heavy-errors"]
    top = result["runs"][0]
    assert (top["precision"], top["recall"], top["f1"], top["ci"]["f1"]) == (1.0, 1.0, 1.0, [1.0, 1.0])
    for r in result["runs"]:
        assert r["counts"]["hallucinated"] == fabricated[r["model"]]
        assert r["ci"]["f1"][0] <= r["f1"] <= r["ci"]["f1"][1]
    assert [(p["a"], p["b"]) for p in result["pairs"]] == [
        ("gold", "light-errors"), ("gold", "heavy-errors"), ("light-errors", "heavy-errors")]
    for p in result["pairs"]:
        assert 0 < p["ci"][0] <= p["f1_diff"] <= p["ci"][1]  # each step of error rate is a real difference
        assert p["p_adjusted"] < 0.05

    # The leaderboard page ranks the same stored runs on the same sample to the same figures.
    from grading.dataset.models import Sample
    from grading.runs.models import ExtractionRun

    sample = Sample.objects.get(dataset=real_cuad[0], n=100, seed=42, min_per_type=30)
    ids = [ExtractionRun.objects.get(dataset=real_cuad[0], model=r["model"]).pk for r in result["runs"]]
    query = "&".join([f"sample={sample.pk}"] + [f"run={pk}" for pk in reversed(ids)])
    page = stakeholder_client.get(f"/cuad/scorecard/leaderboard/leaderboard.json?{query}").json()
    assert [r["id"] for r in page["runs"]] == ids
    for mine, theirs in zip(page["runs"], result["runs"], strict=True):
        assert (mine["f1"], mine["ci"], mine["hallucination_rate"]) == (
            theirs["f1"], theirs["ci"], theirs["hallucination_rate"])
    for mine, theirs in zip(page["pairs"], result["pairs"], strict=True):
        assert (mine["f1_diff"], mine["ci"], mine["p_adjusted"]) == (theirs["f1_diff"], theirs["ci"],
                                                                      theirs["p_adjusted"])


@pytest.mark.django_db
@pytest.mark.parametrize(("seed", "coarse", "gentle"), [(1, False, False), (2, True, True)])
def test_grade_cuad_with_confidences_gives_evaluate_pys_aupr_and_precision_at_recall(real_cuad, data_dir, tmp_path,
                                                                                       seed, coarse, gentle):
    from tests.scoring.cuad import evaluate_reference as reference

    gold, preds, titles, categories = reference.perturbed_set(data_dir / "cuad" / "CUAD_v1.json", seed=seed,
                                                              coarse=coarse, gentle=gentle)
    lines = [
        json.dumps({"contract": contract, "category": category, "text": p["text"], "confidence": p["probability"]})
        for qid, predictions in preds.items()
        for contract, category in [qid.rsplit("__", 1)]
        for p in predictions
        if p["text"]  # an empty text is no prediction for evaluate.py, and no extraction for the run format
    ]
    run_path, split_path = tmp_path / f"perturbed-{seed}.jsonl", tmp_path / "split.txt"
    run_path.write_text("\n".join(lines), encoding="utf-8")
    split_path.write_text("# a test split: contract titles\n" + "\n".join(titles), encoding="utf-8")
    result = json.loads(run("grade_cuad", "--run", str(run_path), "--split", str(split_path), "--json",
                            "--replicates", "50"))["cuad_evaluate"]
    assert result["available"] and result["contracts"] == len(titles)
    assert result["precision_at_80_recall"]["estimate"] > 0.5 if gentle else result["aupr"]["estimate"] > 0.5
    thresholded = reference.thresholded_preds(preds)
    for category, ours in [(None, result), *((c, result["per_category"][c]) for c in categories)]:
        theirs = reference.evaluate(preds, gold, category=category, thresholded=thresholded)
        assert ours["aupr"]["estimate"] == pytest.approx(theirs["aupr"], abs=1e-6), category
        assert ours["precision_at_80_recall"]["estimate"] == pytest.approx(theirs["prec_at_80_recall"], abs=1e-6)
        assert ours["precision_at_90_recall"]["estimate"] == pytest.approx(theirs["prec_at_90_recall"], abs=1e-6)
        assert ours["aupr"]["low"] <= ours["aupr"]["high"]


@pytest.mark.django_db
def test_the_self_test_runs_on_a_firm_gold_set_made_of_real_cuad_contracts(real_cuad, data_dir):
    """Twenty-five real contracts re-titled as a firm's, loaded as a gold set: the self-test passes on it with
    --dataset, and without it still runs on CUAD's own."""
    from grading.dataset.selectors import dataset_current
    from grading.dataset.services import dataset_load_gold

    cuad = json.loads((data_dir / "cuad" / "CUAD_v1.json").read_bytes())
    entries = []
    for entry in cuad["data"][:25]:
        title = f"FIRM {entry['title']}"
        paragraph = entry["paragraphs"][0]
        qas = [{**qa, "id": f"{title}__{qa['id'].rsplit('__', 1)[1]}"} for qa in paragraph["qas"]]
        entries.append({"title": title, "paragraphs": [{"context": paragraph["context"], "qas": qas}]})
    gold = dataset_load_gold(cuad_json={"version": "firm-1", "data": entries}, name="Firm gold v1",
                             gold_set_version=1)
    assert dataset_current() == real_cuad[0]
    cuad_runs = real_cuad[0].runs.count()
    output = run("cuad_selftest", "--dataset", str(gold.pk), "--contracts", "10", "--per-kind", "1")
    assert "SELF-TEST PASSED" in output
    assert real_cuad[0].runs.count() == cuad_runs  # nothing of it landed on CUAD's own
