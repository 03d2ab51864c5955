"""The offline baselines as stored runs: built on a sample, labelled on the leaderboard, its exports and summary."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from django.core.management import call_command

from grading.baselines.services import baseline_run_create
from grading.baselines.systems import BY_KEY, NEAREST_MODEL, RULES_MODEL, SYSTEMS
from grading.dataset.models import Contract
from grading.dataset.selectors import sample_contract_ids
from grading.runs.local_extractor import MODEL_LABEL, LocalExtractor
from grading.runs.services import extraction_run_import
from scoring.cuad.tokens import tokenize


@pytest.fixture
def small_corpus(monkeypatch):
    """Four short fixture contracts: every word is in more than 5% of the passages, so keep them all."""
    monkeypatch.setattr("grading.baselines.nearest.MAX_DF", 1.0)


def _fake_embed(texts: list[str]) -> np.ndarray:
    out = np.zeros((len(texts), 64))
    for i, t in enumerate(texts):
        for tok in tokenize(t):
            out[i, sum(map(ord, tok)) % 64] += 1.0
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(norms == 0, 1, norms)


def _local_run(loaded):
    """The local extractor's algorithm (with a stand-in embedding: the real model is tested in runs/) as a run."""
    ids = sample_contract_ids(sample=loaded.sample)
    contracts = Contract.objects.filter(pk__in=ids).order_by("position")
    categories = [(c.name, c.description) for c in loaded.dataset.categories.order_by("position")]
    extractor = LocalExtractor(categories, embed=_fake_embed, threshold=-1.0, per_type=1)
    extractions = [{"contract": c.title, "category": f.category, "text": f.text}
                   for c in contracts for f in extractor.extract(c.text).found]
    run_file = {"model": MODEL_LABEL, "contracts": [c.title for c in contracts], "extractions": extractions}
    return extraction_run_import(dataset=loaded.dataset, raw=json.dumps(run_file))[0]


def test_each_baseline_is_stored_once_scoped_to_the_sample_with_its_label(loaded, small_corpus):
    nearest = baseline_run_create(sample=loaded.sample, key="nearest")
    rules = baseline_run_create(sample=loaded.sample, key="rules")
    assert nearest.created and rules.created
    assert nearest.run.model == NEAREST_MODEL and "cross-validated by contract" in nearest.run.model
    assert rules.run.model == RULES_MODEL
    for result in (nearest, rules):
        assert set(result.run.scope.values_list("id", flat=True)) == set(sample_contract_ids(sample=loaded.sample))
        assert result.run.n_extractions > 0
        assert all(g == 1.0 for g in result.run.extractions.values_list("grounding", flat=True))  # verbatim
    confidences = list(nearest.run.extractions.values_list("confidence", flat=True))
    assert all(0.0 < c <= 1.0 for c in confidences)
    assert set(rules.run.extractions.values_list("confidence", flat=True)) == {None}
    again = baseline_run_create(sample=loaded.sample, key="nearest")
    assert not again.created and again.run.pk == nearest.run.pk and again.seconds == 0.0
    rebuilt = baseline_run_create(sample=loaded.sample, key="nearest", rebuild=True)
    assert rebuilt.run.pk == nearest.run.pk and not rebuilt.created  # deterministic: the same content
    with pytest.raises(ValueError, match="not an offline baseline"):
        baseline_run_create(sample=loaded.sample, key="local")


def test_the_command_builds_both_and_says_what_each_is(loaded, small_corpus):
    out = io.StringIO()
    call_command("cuad_baseline", "--sample", str(loaded.sample.pk), stdout=out)
    text = out.getvalue()
    assert f"{BY_KEY['nearest'].name}: run #" in text and f"{BY_KEY['rules'].name}: run #" in text
    assert "Cross-validated by contract" in text


def test_the_leaderboard_lists_the_three_offline_systems_with_their_labels(loaded, small_corpus, stakeholder_client):
    runs = [_local_run(loaded), baseline_run_create(sample=loaded.sample, key="nearest").run,
            baseline_run_create(sample=loaded.sample, key="rules").run]
    query = "&".join(f"run={r.pk}" for r in runs)
    response = stakeholder_client.get(f"/cuad/scorecard/leaderboard/?{query}")
    assert response.status_code == 200
    page = response.content.decode()
    lb = response.context["lb"]
    assert [e.system.key for e in lb.systems] == [e.system.key for e in lb.entries]
    assert {e.system.key for e in lb.entries} == {"local", "nearest", "rules"}
    listed = page.split('data-testid="offline-systems"')[1].split("</ul>")[0]
    for run, system in zip(runs, SYSTEMS, strict=True):
        assert f'data-testid="system-{run.pk}"' in listed and system.name in listed
        assert system.badge in page.split(f'data-testid="standing-{run.pk}"')[1].split("</tr>")[0]
    assert "Cross-validated by contract: 5 folds" in listed and "Uses no CUAD label" in listed
    assert "micro F1" in lb.verdict.sentence and all(f"#{r.pk} {s.name}" in lb.verdict.sentence
                                                     for r, s in zip(runs, SYSTEMS, strict=True))
    # the exports and the summary carry the same labels
    data = stakeholder_client.get(f"/api/v1/cuad/leaderboard/?{query}").json()
    assert {r["system"]["key"] for r in data["runs"]} == {"local", "nearest", "rules"}
    exported = stakeholder_client.get(f"/cuad/scorecard/leaderboard/leaderboard.csv?{query}")
    rows = list(csv.DictReader(io.StringIO(exported.content.decode())))
    assert sorted(r["run"] for r in rows if r["kind"] == "system") == sorted(str(r.pk) for r in runs)
    assert {r["kind"] for r in rows} >= {"verdict", "system", "run", "pair"}
    summary = stakeholder_client.get(f"/cuad/scorecard/summary/?{query}").content.decode()
    assert 'id="summary-systems"' in summary and "nearest labelled example" in summary
    # the run page and the scorecard say what the run is
    run_page = stakeholder_client.get(f"/cuad/runs/{runs[1].pk}/").content.decode()
    assert 'data-testid="run-system"' in run_page and "Cross-validated by contract" in run_page
    card = stakeholder_client.get(f"/cuad/scorecard/?run={runs[2].pk}").content.decode()
    assert "offline baseline, rules" in card and "Uses no CUAD label" in card


def test_the_demo_builds_both_baselines_once_and_says_how_long_it_took(loaded, small_corpus):
    from grading.baselines.demo import load_baselines_demo

    first, second = io.StringIO(), io.StringIO()
    load_baselines_demo(sample=loaded.sample, stdout=first)
    load_baselines_demo(sample=loaded.sample, stdout=second)
    assert first.getvalue().count("built in") == 2 and "s CPU" in first.getvalue()
    assert second.getvalue().count(" present ") == 2 and "built in" not in second.getvalue()
