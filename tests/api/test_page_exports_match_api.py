"""Every page's JSON export and its API endpoint give the same figures, for the same query.

The page exports (``report.json``, ``scorecard.json``...) and the API are two doors to one computation; a
serializer that drops, renames or rounds a figure would make a dashboard disagree with the page it cites.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.benchmarks.labels.fixtures import judged_world, world_keys, world_reload
from tests.grading.console_support import load
from tests.helpers import only_savepoint_tests, rows_for_the_module

BOOTSTRAP = "replicates=1000&seed=7"


def _json(client, url: str) -> Any:
    response = client.get(url)
    assert response.status_code == 200, (url, response.content[:500])
    # Through text and back: the API's floats and the page's are compared as a JSON reader sees them.
    return json.loads(response.content)


def _differences(a: Any, b: Any, path: str = "") -> list[str]:
    """Where two JSON values differ (paths and values), so a failure says which figure."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = [f"{path}.{k}: only in one" for k in a.keys() ^ b.keys()]
        for k in a.keys() & b.keys():
            out += _differences(a[k], b[k], f"{path}.{k}")
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in _differences(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"[:300]]


def _without(data: dict, *keys: str) -> dict:
    return {k: v for k, v in data.items() if k not in keys}


@pytest.fixture(scope="module")
def _statute(django_db_setup, django_db_blocker):
    """One judged run for the module's statute tests, which only read it (each in its own savepoint)."""
    with rows_for_the_module(django_db_blocker, lambda: world_keys(*judged_world(
            seed=31, grades_seed=3, reviewer_names=("pe_rev_a", "pe_rev_b"), queries=6))) as keys:
        yield keys


@pytest.fixture
def statute(_statute, request, db):
    only_savepoint_tests(request)
    return world_reload(_statute)[0]


def test_the_statute_report_export_and_the_report_api_agree(statute, stakeholder_client):
    for source, pk in (("rerank", statute.pk), ("retrieval", statute.retrieval_run_id)):
        page = _json(stakeholder_client, f"/benchmarks/reports/{source}/{pk}/report.json?{BOOTSTRAP}")
        api = _json(stakeholder_client, f"/api/v1/benchmarks/reports/{source}/{pk}/?{BOOTSTRAP}")
        # The held-out ledger counts each reading (this one by the API, that one by the export): its own entry
        # differs by design; every figure is the same.
        assert _without(api, "heldout_exposure") == _without(page, "heldout_exposure")
        assert api["primary_endpoint"] == page["primary_endpoint"] and api["systems"] == page["systems"]
        assert api.keys() == page.keys()


def test_the_statute_leaderboard_export_and_its_api_agree(statute, stakeholder_client):
    pk = statute.retrieval_run_id
    page = _json(stakeholder_client, f"/benchmarks/reports/leaderboard/{pk}/leaderboard.json?{BOOTSTRAP}")
    api = _json(stakeholder_client, f"/api/v1/benchmarks/reports/leaderboard/{pk}/?{BOOTSTRAP}")
    assert api.keys() == page.keys()
    # Each system's held-out ledger entry counts this very reading (one by the API, one by the export).
    for board in (api, page):
        # An empty board would make the check below vacuous: the world has a keyword and a reranked system.
        assert len(board["systems"]) >= 2 and any(system["figures"] for system in board["systems"])
        assert all(system.pop("heldout_exposure", None) is not None or not system["figures"]
                   for system in board["systems"])
        for system in (board["known_targets"] or {}).get("systems", []):
            system.pop("heldout_exposure", None)
    assert not _differences(api, page)


def test_the_human_metric_and_calibration_exports_and_their_apis_agree(statute, stakeholder_client):
    base = f"/benchmarks/labels/rerank/{statute.pk}"
    api_base = f"/api/v1/benchmarks/rerank-runs/{statute.pk}"
    calibration = _json(stakeholder_client, f"{base}/calibration/calibration.json?{BOOTSTRAP}")
    assert _json(stakeholder_client, f"{api_base}/calibration/?{BOOTSTRAP}") == calibration
    assert calibration["summary"] and any(row["brier"] is not None for row in calibration["summary"])

    human = _json(stakeholder_client, f"{base}/human-metrics/human-metrics.json?{BOOTSTRAP}")
    api = _json(stakeholder_client, f"{api_base}/human-metrics/?{BOOTSTRAP}")
    # The API spells "@" (not a valid identifier in generated clients) as "_at_"; the figures are the same.
    renamed = [{k.replace("@", "_at_"): v for k, v in row.items()} for row in human["queries"]]
    assert api["queries"] == renamed
    assert _without(api, "queries") == _without(human, "queries")
    assert any(row["estimate"] is not None for row in api["summary"])


@pytest.fixture
def cuad(db, tmp_path):
    return load(tmp_path)


def test_the_cuad_scorecard_comparison_leaderboard_and_explorer_exports_and_their_apis_agree(cuad,
                                                                                              stakeholder_client):
    query = f"sample={cuad.sample.pk}&run={cuad.gold.pk}&run={cuad.noisy.pk}&correct=0.6&partial=0.3"
    for name in ("scorecard", "leaderboard", "explorer"):
        folder = "" if name == "scorecard" else f"{name}/"
        page = _json(stakeholder_client, f"/cuad/scorecard/{folder}{name}.json?{query}")
        api = _json(stakeholder_client, f"/api/v1/cuad/{name}/?{query}")
        assert not _differences(api, page), name
    card = _json(stakeholder_client, f"/api/v1/cuad/scorecard/?{query}")
    assert card["comparison"]["runs"][1]["f1"] < card["f1"] == 1.0


def test_the_cuad_dataset_runs_job_and_playground_exports_and_their_apis_agree(cuad, stakeholder_client):
    page = _json(stakeholder_client, f"/cuad/dataset/dataset.json?sample={cuad.sample.pk}")
    api = _json(stakeholder_client, f"/api/v1/cuad/dataset/?sample={cuad.sample.pk}")
    assert (api["sha256"], api["n_contracts"], api["manifest_sha256"], api["n_spans"]) == (
        page["dataset"]["sha256"], page["dataset"]["contracts"], page["sample"]["manifest_sha256"],
        page["sample"]["spans"])
    assert api["contracts"] == page["manifest"]["contracts"]

    page_runs = {row["id"]: row for row in _json(stakeholder_client, "/cuad/runs/runs.json")["runs"]}
    api_runs = {row["id"]: row for row in _json(stakeholder_client, "/api/v1/cuad/runs/")["runs"]}
    assert page_runs.keys() == api_runs.keys() == {cuad.gold.pk, cuad.noisy.pk}
    for pk, row in api_runs.items():
        assert row["headline"] and all(page_runs[pk][k] == v for k, v in row["headline"].items())
        assert (row["in_sample"], row["scope"]["contracts"]) == (page_runs[pk]["in_sample"],
                                                                 page_runs[pk]["scope_contracts"])
        assert _json(stakeholder_client, f"/api/v1/cuad/runs/{pk}/") == row

    texts = {"a": "governed by the laws of Nevada", "b": "This Agreement is governed by the laws of Nevada",
             "claim": "the laws of Nevada", "source": "This Agreement is governed by the laws of Nevada."}
    query = "&".join(f"{k}={v.replace(' ', '+')}" for k, v in texts.items())
    page = _json(stakeholder_client, f"/cuad/scorecard/playground/playground.json?{query}")
    api = _json(stakeholder_client, f"/api/v1/cuad/playground/?{query}")
    overlap, ground = page["overlap"], page["grounding"]
    assert (api["f1"], api["precision"], api["recall"], api["shared_tokens"]) == (
        overlap["f1"], overlap["precision"], overlap["recall"], overlap["shared_tokens"])
    assert (api["grounding"], api["grounding_found"], api["grounding_total"], api["verbatim"]) == (
        ground["grounding"], ground["found"], ground["total"], ground["verbatim"])
    assert 0 < api["f1"] < 1 and api["grounding"] == 1.0


def test_the_cuad_audit_export_and_its_api_agree(db, tmp_path, stakeholder_client):
    from tests.grading.audit_support import audited_run, local_audit

    _, run = audited_run(tmp_path)
    audit = local_audit(run)
    page = _json(stakeholder_client, f"/cuad/audits/{audit.pk}/audit.json")
    api = _json(stakeholder_client, f"/api/v1/cuad/audits/{audit.pk}/")
    assert not _differences(api, page)
    assert api["candidates"] and api["audit"]["run"] == run.pk
