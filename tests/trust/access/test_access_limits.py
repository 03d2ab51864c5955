"""Oversized uploads and absurd parameters are refused with a message (a 4xx or a form error), never a 500,
and nothing is written."""

from __future__ import annotations

import json

import pytest
from django.apps import apps
from django.core.files.uploadedfile import SimpleUploadedFile

from benchmarks.suites.services import suite_import
from tests.trust.fixtures import body_of, client_for

pytestmark = pytest.mark.django_db
HUGE = "9" * 30  # over every database integer
ENORMOUS = "9" * 5000  # over Python's int() digit limit


def _rows() -> dict[str, int]:
    return {m._meta.label: m._default_manager.count() for m in apps.get_models()
            if m._meta.managed and m._meta.label != "sessions.Session"}


# (what, method, url template, data); every one must be refused without a crash or a write.
ABSURD = [
    # report bootstrap settings
    *[("report " + q, "get", "/benchmarks/reports/rerank/{rerank_pk}/?" + q, None) for q in (
        "replicates=1000000000", "replicates=-5", "replicates=abc", "replicates=" + ENORMOUS, "seed=-1",
        "seed=" + HUGE, "secondary=" + HUGE, "secondary=" + ENORMOUS, "secondary=-3")],
    ("report export replicates", "get", "/benchmarks/reports/retrieval/{retrieval_pk}/report.json?replicates=1", None),
    ("report API replicates", "get", "/api/v1/benchmarks/reports/rerank/{rerank_pk}/?replicates=" + HUGE, None),
    ("human metrics replicates", "get", "/benchmarks/labels/rerank/{planted_rerank_pk}/human-metrics/?replicates=-1",
     None),
    ("human metrics API replicates", "get",
     "/api/v1/benchmarks/rerank-runs/{planted_rerank_pk}/human-metrics/?replicates=" + HUGE, None),
    ("human metrics pool", "get", "/benchmarks/labels/rerank/{planted_rerank_pk}/calibration/?pool=" + ENORMOUS, None),
    # CUAD thresholds and ids
    *[("scorecard " + q, "get", "/cuad/scorecard/?" + q, None) for q in (
        "correct=1.5", "partial=-0.2", "grounding=nan", "correct=inf", "partial=0.9&correct=0.1", "run=" + HUGE,
        "run=" + ENORMOUS, "sample=" + HUGE, "contract=x" + HUGE, "matcher=quantum", "sort=nope")],
    ("scorecard API thresholds", "get", "/api/v1/cuad/scorecard/?correct=7", None),
    ("explorer contract", "get", "/cuad/scorecard/explorer/?contract=" + ENORMOUS, None),
    ("dataset sample", "get", "/cuad/dataset/?sample=" + HUGE, None),
    # launches with absurd budgets and sizes
    ("rerank candidates per request", "post", "/benchmarks/rerank/new/",
     {"retrieval_run": "{retrieval_pk}", "provider": "local", "question_version": "statute-relevance-v1",
      "candidates_per_request": "1000000", "max_requests": "10", "max_input_tokens": "1000"}),
    ("rerank negative budget", "post", "/benchmarks/rerank/new/",
     {"retrieval_run": "{retrieval_pk}", "provider": "local", "question_version": "statute-relevance-v1",
      "candidates_per_request": "4", "max_requests": "-1", "max_input_tokens": "-5"}),
    ("rerank huge budget", "post", "/benchmarks/rerank/new/",
     {"retrieval_run": "{retrieval_pk}", "provider": "local", "question_version": "statute-relevance-v1",
      "candidates_per_request": "4", "max_requests": HUGE, "max_input_tokens": HUGE}),
    ("rerank concurrency", "post", "/benchmarks/rerank/new/",
     {"retrieval_run": "{retrieval_pk}", "provider": "local", "question_version": "statute-relevance-v1",
      "candidates_per_request": "4", "max_requests": "10", "max_input_tokens": "1000", "concurrency": "100000"}),
    ("retrieval run unknown suite", "post", "/benchmarks/retrieval/new/", {"suite": HUGE, "configuration": "x"}),
    ("review pool k", "post", "/benchmarks/labels/rerank/{planted_rerank_pk}/review-pool/",
     {"k": "1000000", "reviewers_per_item": "2"}),
    ("review pool negative k", "post", "/benchmarks/labels/rerank/{planted_rerank_pk}/review-pool/",
     {"k": "-3", "reviewers_per_item": "0"}),
    ("review pool reviewers", "post", "/benchmarks/labels/rerank/{planted_rerank_pk}/review-pool/",
     {"k": "3", "reviewers_per_item": HUGE}),
    ("CUAD launch limit", "post", "/cuad/runs/launch/", {"provider": "local", "limit": "-5"}),
    ("CUAD launch sample", "post", "/cuad/runs/launch/", {"provider": "local", "sample": "abc"}),
    ("CUAD launch huge sample", "post", "/cuad/runs/launch/", {"provider": "local", "sample": HUGE}),
    ("CUAD job API negative budget", "post-json", "/api/v1/cuad/jobs/",
     {"provider": "local", "limit": -1, "max_requests": -1, "max_input_tokens": -1}),
    ("CUAD job API huge budget", "post-json", "/api/v1/cuad/jobs/",
     {"provider": "local", "max_requests": int(HUGE), "max_input_tokens": int(HUGE)}),
    ("audit grounding", "post", "/cuad/audits/",
     {"run": "{cuad_run_pk}", "judge_a": "local-description", "judge_b": "local-exemplars", "grounding": "7"}),
    ("audit huge run", "post", "/cuad/audits/",
     {"run": HUGE, "judge_a": "local-description", "judge_b": "local-exemplars"}),
    # review administration
    ("pool reviewers per item", "post", "/review/pools/new/",
     {"name": "p", "kind": "passage", "declared_rule": "r", "reviewers_per_item": HUGE,
      "items": json.dumps([{"query_id": "q", "doc_id": "d", "query_text": "q", "source_heading": "h",
                            "source_text": "s", "passage_caption": "c", "passage_text": "p"}])}),
    ("pool negative reviewers", "post", "/review/pools/new/",
     {"name": "p", "kind": "passage", "declared_rule": "r", "reviewers_per_item": "-2", "items": "[]"}),
    ("pool API reviewers", "post-json", "/api/v1/review/pools/",
     {"name": "p", "kind": "passage", "declared_rule": "r", "reviewers_per_item": int(HUGE), "items": []}),
    ("assign per item", "post", "/review/assignment/{marker_pool_id}/assign/", {"per_item": HUGE}),
    ("assign negative", "post-json", "/api/v1/review/pools/{marker_pool_id}/assign/", {"per_item": -4}),
    ("qrels grade type", "get", "/review/agreement/{marker_pool_id}/qrels.txt?grade_type=" + ENORMOUS, None),
    ("label import", "post", "/review/exchange/labels/import/", {"name": "x", "labels": "[" * 100_000}),
]


# Absurd but meaningful (a limit above the sample size means "all of it"): may be accepted, never a 500.
TOLERATED = [
    ("CUAD launch huge limit", "post", "/cuad/runs/launch/", {"provider": "local", "limit": HUGE}),
    ("CUAD job API huge limit", "post-json", "/api/v1/cuad/jobs/", {"provider": "local", "limit": int(HUGE)}),
    ("scorecard unknown contract", "get", "/cuad/scorecard/?contract=" + HUGE, None),
    ("explorer unknown contract", "get", "/cuad/scorecard/explorer/?contract=" + HUGE, None),
]


def _fill(value, world):
    if isinstance(value, str):
        return world.fmt(value) if "{" in value and "[" not in value else value
    if isinstance(value, dict):
        return {k: _fill(v, world) for k, v in value.items()}
    return value


def _send(client, method: str, url: str, data):
    if method == "get":
        return client.get(url)
    if method == "post-json":
        return client.post(url, json.dumps(data), content_type="application/json")
    return client.post(url, data)


def test_absurd_parameters_are_refused_with_a_message_and_write_nothing(world):
    admin = client_for(world.users["admin"])
    admin.raise_request_exception = False  # a crash is a 500 to record, not the end of the test
    problems = []
    for what, method, url, data in ABSURD:
        before = _rows()
        response = _send(admin, method, world.fmt(url), _fill(data, world))
        body = body_of(response).decode("utf-8", errors="replace")
        status = response.status_code
        if status >= 500:
            problems.append(f"{what}: {status}")
        elif status in (200, 302) and method != "get":
            # a form page answered 200: it must say what is wrong; a redirect means it was accepted
            if status == 302 and "error" not in response.get("Location", ""):
                from django.contrib.messages import get_messages

                levels = [m.level_tag for m in get_messages(response.wsgi_request)]
                if "error" not in levels:
                    problems.append(f"{what}: accepted ({status} to {response.get('Location')})")
        elif status == 200 and method == "get":
            problems.append(f"{what}: answered 200 to an absurd parameter")
        if status >= 400 and not body.strip():
            problems.append(f"{what}: refused with an empty body")
        after = _rows()
        written = {k: after[k] - before[k] for k in before if after[k] != before[k]}
        if written:
            problems.append(f"{what}: wrote {written}")
    assert not problems, "\n".join(problems)


def test_absurd_but_meaningful_parameters_never_crash(world):
    admin = client_for(world.users["admin"])
    admin.raise_request_exception = False
    for what, method, url, data in TOLERATED:
        response = _send(admin, method, world.fmt(url), _fill(data, world))
        assert response.status_code < 500, f"{what}: {response.status_code}"


def test_an_oversized_request_body_is_refused_not_crashed(world, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 50_000
    admin = client_for(world.users["admin"])
    big_run = json.dumps({"model": "big", "extractions": [
        {"contract": "ALPHA-DISTRIBUTOR AGREEMENT", "category": "Governing Law", "text": "x" * 200}] * 400})
    assert len(big_run) > settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    before = _rows()
    for what, response in (
        ("pasted run", admin.post("/cuad/runs/", {"run_text": big_run})),
        ("run via API", admin.post("/api/v1/cuad/runs/", json.dumps({"run": big_run}),
                                   content_type="application/json")),
        ("pool items", admin.post("/review/pools/new/", {"name": "p", "kind": "passage", "declared_rule": "r",
                                                         "items": big_run})),
        ("pool via API", admin.post("/api/v1/review/pools/", json.dumps({"name": "p", "items": [big_run]}),
                                    content_type="application/json")),
        ("label import", admin.post("/review/exchange/labels/import/", {"name": "x", "labels": big_run})),
        ("explicit pool list", admin.post(f"/benchmarks/labels/rerank/{world.planted_rerank_pk}/review-pool/",
                                          {"k": "3", "reviewers_per_item": "2", "explicit": big_run})),
    ):
        assert response.status_code in (400, 413), f"{what}: {response.status_code}"
    assert _rows() == before


def test_an_uploaded_run_file_over_the_cap_is_refused_with_its_size(world, monkeypatch):
    monkeypatch.setattr("grading.runs.views.MAX_UPLOAD_BYTES", 1_000)
    admin = client_for(world.users["admin"])
    before = _rows()
    upload = SimpleUploadedFile("run.json", json.dumps({"model": "m", "extractions": []}).encode() + b" " * 2_000)
    response = admin.post("/cuad/runs/", {"run_file": upload})
    assert response.status_code == 400
    assert "byte limit" in response.content.decode()
    assert _rows() == before


def test_an_oversized_or_absurd_suite_file_is_refused_naming_the_problem(world):
    before = _rows()
    families = [{"id": "f", "split": "dev"}]
    absurd = [
        b"{" * 200_000,  # nesting deeper than any parser should follow
        json.dumps({"name": "s", "version": 10**30, "corpus": "nrs", "families": families, "queries": []}).encode(),
        json.dumps({"name": "s" * 100_000, "version": 1, "corpus": "nrs", "families": families,
                    "queries": [{"id": "q", "kind": "ranking", "split": "dev", "family": "f", "text": "x" * 10**6,
                                 "targets": ["NRS 1.010"]}]}).encode(),
    ]
    for raw in absurd:
        with pytest.raises(ValueError) as refused:
            suite_import(raw=raw, filename="absurd.json")
        assert str(refused.value).strip()
    assert _rows() == before
