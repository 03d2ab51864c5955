"""The scorecard of a run with a scope: its caption from data, the default run, the comparison of runs with
different scopes on their common contracts with a paired F1 difference, and the one-sentence conclusion."""

from __future__ import annotations

import json

import numpy as np
import pytest

from grading.runs.services import extraction_run_import
from grading.scorecard.selectors import f1_difference
from scoring.cuad.grading import PairTable, Thresholds, classify, contract_tallies
from scoring.stats.bootstrap import resample_indices
from tests.grading.cuad_fixture import gold_run

ALPHA, BETA = "ALPHA-DISTRIBUTOR AGREEMENT", "BETA-LICENSE AGREEMENT"


def _import(dataset, model: str, titles: list[str] | None, *, declare: bool = True):
    run = gold_run(model)
    if titles is not None:
        run["extractions"] = [e for e in run["extractions"] if e["contract"] in titles]
        if declare:
            run["contracts"] = titles
    return extraction_run_import(dataset=dataset, raw=json.dumps(run))[0]


def test_the_scorecard_caption_and_sentence_state_a_partial_runs_scope(loaded, stakeholder_client):
    partial = _import(loaded.dataset, "two-contracts", [ALPHA, BETA])
    response = stakeholder_client.get(f"/cuad/scorecard/?run={partial.pk}")
    page = response.content.decode()
    assert "2 of 4 contracts of the seed-42 sample; intervals resample contracts" in page
    sentence = response.context["conclusion"]
    assert sentence.startswith(f"Run #{partial.pk} (two-contracts) scores F1 100.0%")
    assert "It is a partial run: it covers 2 of 4 contracts, and says nothing about the other 2." in sentence
    assert 'data-testid="conclusion"' in page
    api = stakeholder_client.get(f"/api/v1/cuad/scorecard/?run={partial.pk}").json()
    assert api["scope"]["caption"] == "2 of 4 contracts of the seed-42 sample" and api["scope"]["full"] is False
    assert api["conclusion"] == sentence
    assert api["counts"]["missed"] == 0  # the other two contracts' spans are not missed: not attempted


def test_the_default_scorecard_ignores_a_newer_partial_pasted_run(loaded, admin_client_, stakeholder_client):
    # the case: two extractions pasted without a scope (so scoped to the whole sample)...
    test = gold_run("quick-test")
    test["extractions"] = test["extractions"][:2]
    assert admin_client_.post("/cuad/runs/", {"run_text": json.dumps(test)}).status_code == 302
    # ...and a partial run that declares its one contract
    pasted = {**gold_run("my-test"), "contracts": [ALPHA]}
    pasted["extractions"] = [e for e in pasted["extractions"] if e["contract"] == ALPHA][:2]
    assert admin_client_.post("/cuad/runs/", {"run_text": json.dumps(pasted)}).status_code == 302
    newest = _latest()
    assert newest.model == "my-test"
    response = stakeholder_client.get("/cuad/scorecard/")
    assert response.status_code == 200
    assert response.context["card"].run.pk == loaded.noisy.pk  # the most recent run covering the whole sample
    assert stakeholder_client.get("/api/v1/cuad/scorecard/").json()["run"]["id"] == loaded.noisy.pk
    # chosen explicitly, the partial run is shown, labelled as such
    chosen = stakeholder_client.get(f"/cuad/scorecard/?run={newest.pk}")
    assert chosen.context["card"].run.pk == newest.pk
    assert f"#{newest.pk} my-test (partial: 1 of 4 contracts)" in chosen.content.decode()


def _latest():
    from grading.runs.models import ExtractionRun

    return ExtractionRun.objects.order_by("-created_at", "-id").first()


def test_with_only_partial_runs_the_scorecard_asks_to_choose_one(db, tmp_path, stakeholder_client):
    from grading.dataset.services import cuad_load, sample_create
    from grading.runs.selectors import cache_clear
    from tests.grading.cuad_fixture import cuad_bytes

    cache_clear()
    path = tmp_path / "CUAD_v1.json"
    path.write_bytes(cuad_bytes())
    dataset = cuad_load(path=path).dataset
    sample_create(dataset=dataset, n=4, min_per_type=1, seed=42)
    _import(dataset, "partial-only", [ALPHA])
    response = stakeholder_client.get("/cuad/scorecard/")
    page = response.content.decode()
    assert response.status_code == 200 and "no complete run of the whole sample yet" in page
    assert "choose a run" in page and "card" not in response.context
    assert stakeholder_client.get("/api/v1/cuad/scorecard/").status_code == 400


def test_runs_with_different_scopes_are_compared_on_their_common_contracts_with_a_notice(loaded, stakeholder_client):
    partial = _import(loaded.dataset, "two-contracts", [ALPHA, BETA])
    response = stakeholder_client.get(f"/cuad/scorecard/?run={loaded.noisy.pk}&run={partial.pk}")
    comparison = response.context["comparison"]
    assert comparison.common == 2
    assert [c.card.n_contracts for c in comparison.cards] == [2, 2]
    assert "compared only on the 2 contracts they all attempted" in comparison.notice
    page = response.content.decode()
    assert 'data-testid="comparison-notice"' in page
    # the comparison sits above the headline, next to the sentence
    assert page.index('data-testid="conclusion"') < page.index('data-testid="comparison"') < page.index(
        'data-testid="headline"')
    # the primary run's own card keeps its own (full) scope
    assert response.context["card"].card.n_contracts == 4
    api = stakeholder_client.get(f"/api/v1/cuad/scorecard/?run={loaded.noisy.pk}&run={partial.pk}").json()
    assert api["comparison"]["common_contracts"] == 2 and api["comparison"]["notice"]
    diff = api["comparison"]["differences"][0]
    assert diff["first"] == loaded.noisy.pk and diff["other"] == partial.pk
    assert diff["f1_difference"]["estimate"] < 0  # the noisy run is below gold on the common contracts
    assert f"Against run #{partial.pk} (two-contracts), " in api["conclusion"]
    assert "on the 2 contracts both attempted" in api["conclusion"]


def test_runs_with_no_common_contract_are_refused_with_a_message(loaded, stakeholder_client):
    a = _import(loaded.dataset, "alpha", [ALPHA])
    b = _import(loaded.dataset, "beta", [BETA])
    page = stakeholder_client.get(f"/cuad/scorecard/?run={a.pk}&run={b.pk}")
    assert page.status_code == 400 and "the runs chosen for comparison share no contract" in page.content.decode()
    api = stakeholder_client.get(f"/api/v1/cuad/scorecard/?run={a.pk}&run={b.pk}")
    assert api.status_code == 400 and "share no contract" in api.json()["errors"][0]


def test_the_sentence_says_when_the_sample_cannot_tell_two_saturated_runs_apart(loaded, stakeholder_client):
    twin = _import(loaded.dataset, "gold-twin", None)
    data = stakeholder_client.get(f"/api/v1/cuad/scorecard/?run={loaded.gold.pk}&run={twin.pk}").json()
    assert data["comparison"]["differences"][0]["f1_difference"] == {"estimate": 0.0, "ci": [0.0, 0.0],
                                                                     "note": "few units: 4 contracts"}
    assert (f"Against run #{twin.pk} (gold-twin): both score F1 100.0% on the 4 contracts both attempted, "
            "so this sample cannot tell them apart.") in data["conclusion"]


def test_the_sentence_says_whether_the_difference_interval_excludes_zero(loaded, stakeholder_client):
    data = stakeholder_client.get(f"/api/v1/cuad/scorecard/?run={loaded.gold.pk}&run={loaded.noisy.pk}").json()
    d = data["comparison"]["differences"][0]["f1_difference"]
    if d["ci"][0] > 0:
        assert "the interval excludes zero" in data["conclusion"] and "points higher" in data["conclusion"]
    else:
        assert "which includes zero: this sample cannot tell them apart" in data["conclusion"]
    # a threshold where the noisy run's partial answers count makes the gap smaller, never a different sentence kind
    # than its own interval says
    loose = stakeholder_client.get(
        f"/api/v1/cuad/scorecard/?run={loaded.gold.pk}&run={loaded.noisy.pk}&correct=0.1&partial=0&grounding=0").json()
    ld = loose["comparison"]["differences"][0]["f1_difference"]
    assert ("excludes zero" in loose["conclusion"]) == (ld["ci"][0] > 0 or ld["ci"][1] < 0)


def _random_table(rng: np.random.Generator, nc: int, spans_per: np.ndarray) -> PairTable:
    span_contract = np.repeat(np.arange(nc), spans_per)
    n_spans = len(span_contract)
    n_ext = int(rng.integers(1, 3 * n_spans + 2))
    ext_span = np.full(n_ext, -1)
    matched = rng.permutation(n_spans)[: min(n_spans, n_ext)]
    ext_span[: len(matched)] = matched
    ext_contract = np.where(ext_span >= 0, span_contract[np.maximum(ext_span, 0)], rng.integers(0, nc, n_ext))
    return PairTable(ext_contract, np.zeros(n_ext, dtype=np.int64), rng.random(n_ext), rng.random(n_ext), ext_span,
                     span_contract, np.zeros(n_spans, dtype=np.int64), nc, 1)


@pytest.mark.parametrize("seed", range(5))
def test_the_paired_f1_difference_equals_a_plain_loop_bootstrap(seed):
    rng = np.random.default_rng(seed)
    nc = int(rng.integers(2, 25))
    spans_per = rng.integers(0, 6, nc)
    spans_per[0] = max(spans_per[0], 1)
    a, b = _random_table(rng, nc, spans_per), _random_table(rng, nc, spans_per)
    thresholds = Thresholds(0.6, 0.3, 0.4)
    got = f1_difference(a, b, thresholds, replicates=400, seed=seed)

    def per_contract(t):
        return contract_tallies(t, classify(t, thresholds)).sum(axis=1)

    ta, tb = per_contract(a), per_contract(b)

    def f1(rows):
        credit, ext, spans = rows.sum(axis=0)
        return 2 * credit / (ext + spans) if ext + spans else float("nan")

    diffs = [f1(ta[idx]) - f1(tb[idx]) for idx in resample_indices(nc, replicates=400, seed=seed)]
    diffs = np.array([d for d in diffs if d == d])
    assert got.estimate == pytest.approx(f1(ta) - f1(tb))
    assert got.low == pytest.approx(np.percentile(diffs, 2.5))
    assert got.high == pytest.approx(np.percentile(diffs, 97.5))
