"""CUAD console jobs: the local heuristic-baseline extractor, LLM extraction through the provider layer, the
extract_cuad command, and the playground against the grader's own functions on random strings."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from django.core.management import call_command

from grading.runs import jobs as console
from grading.runs.local_extractor import LocalExtractor, prefilter, split_passages
from grading.runs.models import ConsoleJob
from grading.scorecard import selectors as cs
from reviewapp.providers.loopback import LoopbackServer, Reply
from reviewapp.providers.models import Receipt
from scoring.cuad.tokens import SourceIndex, grounding, token_f1, tokenize
from tests.grading.console_support import load


@pytest.fixture
def loaded(db, tmp_path):
    return load(tmp_path)


@pytest.fixture
def low_threshold(monkeypatch):
    """The fixture contracts are a few sentences with one-word type descriptions: any cosine passes."""
    import grading.runs.local_extractor as le

    monkeypatch.setattr(le, "THRESHOLD", -1.0)


def fake_embed(texts: list[str]) -> np.ndarray:
    """Deterministic bag-of-words vectors (hashing trick), unit length: enough to test the extractor's rules."""
    out = np.zeros((len(texts), 64))
    for i, t in enumerate(texts):
        for tok in tokenize(t):
            out[i, hash(tok) % 64] += 1.0
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(norms == 0, 1, norms)


# ---------------------------------------------------------------------------
# Local extractor


def test_passages_are_verbatim_slices_covering_every_word(db):
    rng = np.random.default_rng(0)
    words = ["alpha", "Beta.", "gamma;", "Delta", "(e)", "42.", "zeta\n", "eta\n\n"]
    text = " ".join(words[int(i)] for i in rng.integers(0, len(words), 900))
    passages = split_passages(text)
    assert all(text[p.start:p.end] == p.text for p in passages)
    assert all(len(p.text.split()) <= 70 or "\n" not in p.text for p in passages)
    covered = sum(len(p.text.split()) for p in passages)
    assert covered == len(text.split())


def test_the_prefilter_keeps_the_head_and_caps_the_passages_in_document_order(db):
    text = " ".join(f"Sentence {i} about governing law and assignment." for i in range(200))
    passages = split_passages(text)
    keep = prefilter(passages, [frozenset({"governing", "law"})], cap=10)
    assert len(keep) == 10 and keep == sorted(keep) and keep[:3] == [0, 1, 2]


def test_the_extractor_keeps_passages_above_the_threshold_at_most_per_type(db):
    categories = [("Governing Law", "governed laws state"), ("Insurance", "insurance policy coverage")]
    extractor = LocalExtractor(categories, embed=fake_embed, threshold=0.3, per_type=1)
    text = ("This Agreement is governed by the laws of the State of Nevada. " * 3
            + "Supplier shall maintain insurance coverage under a policy. Unrelated words here entirely.")
    result = extractor.extract(text)
    assert {f.category for f in result.found} <= {"Governing Law", "Insurance"}
    assert max(sum(1 for f in result.found if f.category == c) for c, _ in categories) <= 1
    assert all(f.score >= 0.3 and text[f.start:f.end] == f.text for f in result.found)


def test_a_local_extraction_job_runs_the_real_model_and_grades_the_run(
    loaded, celery_worker, stakeholder_client, low_threshold
):
    from tests.helpers import wait_until

    job = console.extraction_job_create(sample=loaded.sample, provider="local")
    wait_until(lambda: ConsoleJob.objects.get(pk=job.pk).finished, timeout=120)
    job.refresh_from_db()
    assert job.status == "done", job.error
    assert job.done == job.total == 4 and "heuristic" in job.run.model
    assert job.params["threshold"] == -1.0 and job.params["per_type"] == 2
    grounded = list(job.run.extractions.values_list("grounding", flat=True))
    assert grounded and all(g == 1.0 for g in grounded)  # verbatim passages: never a hallucination
    page = stakeholder_client.get(f"/cuad/scorecard/?run={job.run_id}").content.decode()
    assert "heuristic baseline" in page
    # running the task again does nothing (the claim fails)
    assert console.job_extract_execute(job_id=job.pk) is None


def test_a_stopped_local_job_resumes_and_skips_contracts_already_done(loaded, monkeypatch, low_threshold):
    calls: list[str] = []
    crashed: list[bool] = []
    import grading.runs.local_extractor as le

    original = le.LocalExtractor.extract

    def counting(self, text):
        calls.append(text)
        if len(calls) == 2 and not crashed:
            crashed.append(True)
            raise RuntimeError("worker lost")
        return original(self, text)

    monkeypatch.setattr(le.LocalExtractor, "extract", counting)
    job = console.extraction_job_create(sample=loaded.sample, provider="local", queue=False)
    assert console.job_extract_execute(job_id=job.pk).status == "failed"
    assert job.contracts.filter(done=True).count() == 1
    console.job_resume(job=job, queue=False)
    calls.clear()
    finished = console.job_extract_execute(job_id=job.pk)
    assert finished.status == "done", finished.error
    assert len(calls) == 3


def test_extract_cuad_runs_inline_on_the_first_n_contracts(loaded, low_threshold):
    out = io.StringIO()
    call_command("extract_cuad", "--provider", "local", "--limit", "2", "--inline", stdout=out)
    job = ConsoleJob.objects.get()
    assert job.total == 2 and job.status == "done"
    assert f"run {job.run_id}" in out.getvalue()


# ---------------------------------------------------------------------------
# LLM providers through the shared ledger (loopback HTTP server)


def _answer_with_quotes(path: str, headers: dict, body_bytes: bytes) -> Reply:
    body = json.loads(body_bytes)
    user = body["messages"][-1]["content"]
    contract = user.split("<contract>\n", 1)[1].split("\n</contract>", 1)[0]
    first_sentence = contract.split(". ")[1] if ". " in contract else contract
    content = json.dumps({"extractions": [{"category": "Governing Law", "quote": first_sentence}]})
    payload = {
        "id": "x", "object": "chat.completion", "model": body["model"],
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": len(body_bytes) // 4, "completion_tokens": 20, "total_tokens": 0},
    }
    return Reply(body=json.dumps(payload).encode())


def test_an_openai_compatible_run_sends_one_structured_request_per_contract_and_resumes_without_resending(
    loaded, settings
):
    settings.PROVIDER_KEYS = {**settings.PROVIDER_KEYS, "openai_compatible": "sk-test"}
    with LoopbackServer(_answer_with_quotes) as server:
        job = console.extraction_job_create(
            sample=loaded.sample, provider="openai_compatible", model_id="test/model", base_url=server.url,
            queue=False,
        )
        done = console.job_extract_execute(job_id=job.pk)
        assert done.status == "done", done.error
        assert len(server.requests) == 4
        sent = json.loads(server.requests[0]["body"])
        schema = sent["response_format"]["json_schema"]["schema"]
        assert schema["properties"]["extractions"]["items"]["required"] == ["category", "quote"]
        assert Receipt.objects.filter(ledger_id=job.ledger_id, status="answered").count() == 4
        assert set(done.run.extractions.values_list("category__name", flat=True)) == {"Governing Law"}
        # a second job execution of the same requests (resume) sends nothing new
        ConsoleJob.objects.filter(pk=job.pk).update(status="failed")
        job.contracts.update(done=False)
        console.job_resume(job=done, queue=False)
        again = console.job_extract_execute(job_id=job.pk)
        assert again.status == "done" and len(server.requests) == 4


def test_a_failed_request_is_disclosed_and_never_retried_automatically(loaded, settings):
    settings.PROVIDER_KEYS = {**settings.PROVIDER_KEYS, "openai_compatible": "sk-test"}

    def failing(path, headers, body_bytes):
        return Reply(status=500, body=b'{"error": {"message": "boom"}}')

    with LoopbackServer(failing) as server:
        job = console.extraction_job_create(
            sample=loaded.sample, provider="openai_compatible", model_id="test/model", base_url=server.url,
            max_requests=8, queue=False,
        )
        failed = console.job_extract_execute(job_id=job.pk)
        assert failed.status == "failed" and "never re-sent automatically" in failed.error
        assert len(server.requests) == 4 and max(server.counts.values()) == 1
        console.job_resume(job=failed, queue=False)
        console.job_extract_execute(job_id=job.pk)
        assert len(server.requests) == 4  # resume without re-attempt sends nothing
        console.job_resume(job=ConsoleJob.objects.get(pk=job.pk), reattempt=True, queue=False)
        console.job_extract_execute(job_id=job.pk)
        assert len(server.requests) == 8  # an explicit re-attempt sends each failed request once more


def test_the_budget_preflight_stops_a_run_that_would_exceed_its_requests(loaded, settings):
    settings.PROVIDER_KEYS = {**settings.PROVIDER_KEYS, "openai_compatible": "sk-test"}
    with LoopbackServer(_answer_with_quotes) as server:
        job = console.extraction_job_create(
            sample=loaded.sample, provider="openai_compatible", model_id="test/model", base_url=server.url,
            max_requests=2, queue=False,
        )
        stopped = console.job_extract_execute(job_id=job.pk)
        assert stopped.status == "failed" and "stopped" in stopped.error
        assert len(server.requests) == 2


def test_an_llm_provider_needs_a_model_id(loaded):
    with pytest.raises(console.JobError, match="needs a model id"):
        console.extraction_job_create(sample=loaded.sample, provider="anthropic", model_id=" ")


# ---------------------------------------------------------------------------
# Playground: exactly the grader's code path


def _random_text(rng: np.random.Generator) -> str:
    vocab = ["the", "The", "party", "Party", "shall", "not", "assign", "law", "of", "Nevada", "—", "é", "x1", "A.B"]
    seps = [" ", "  ", ", ", ". ", "\n", "-", ""]
    n = int(rng.integers(0, 14))
    return "".join(vocab[int(rng.integers(len(vocab)))] + seps[int(rng.integers(len(seps)))] for _ in range(n))


def test_the_playground_endpoint_returns_the_graders_figures_on_random_strings(db, stakeholder_client):
    rng = np.random.default_rng(11)
    for _ in range(60):
        a, b = _random_text(rng), _random_text(rng)
        data = stakeholder_client.get("/api/cuad/playground/", {"a": a, "b": b, "claim": a, "source": b}).json()
        assert data["f1"] == token_f1(tokenize(a), tokenize(b))
        assert data["grounding"] == grounding(a, SourceIndex(b))
        overlap = cs.playground_overlap(a=a, b=b)
        assert sum(len(tokenize(p.text)) for p in overlap.a_pieces if p.marked) == overlap.shared
        assert "".join(p.text for p in overlap.a_pieces) == a


def test_the_playground_page_recomputes_a_fragment_as_you_type(db, stakeholder_client):
    response = stakeholder_client.get(
        "/cuad/playground/", {"part": "overlap", "a": "governed by Nevada law", "b": "Nevada law governs"},
        HTTP_HX_REQUEST="true",
    )
    page = response.content.decode()
    assert page.lstrip().startswith('<div id="overlap"') and "<mark>Nevada</mark>" in page
    assert "0.571" in page  # 2·2/(4+3)


def test_an_admin_launches_the_local_extractor_from_the_runs_page(loaded, admin_client_, celery_worker, low_threshold):
    from tests.helpers import wait_until

    response = admin_client_.post("/cuad/runs/launch/", {"provider": "local", "limit": "2"})
    assert response.status_code == 302 and response["Location"].startswith("/cuad/jobs/")
    job = ConsoleJob.objects.get()
    wait_until(lambda: ConsoleJob.objects.get(pk=job.pk).finished, timeout=120)
    page = admin_client_.get(response["Location"]).content.decode()
    assert "heuristic baseline" in page and "done" in page


def test_the_launch_form_refuses_bad_input_with_a_message(loaded, admin_client_):
    response = admin_client_.post("/cuad/runs/launch/", {"provider": "local", "limit": "many"})
    assert response.status_code == 400 and "limit: &#x27;many&#x27; is not a whole number" in response.content.decode()
    response = admin_client_.post("/cuad/runs/launch/", {"provider": "anthropic", "model_id": ""})
    assert response.status_code == 400 and "needs a model id" in response.content.decode()
    assert not ConsoleJob.objects.exists()


def test_the_api_launches_a_job_for_admins_only(loaded, admin_client_, stakeholder_client, low_threshold):
    assert stakeholder_client.post("/api/cuad/jobs/", {"provider": "local"}).status_code == 403
    response = admin_client_.post("/api/cuad/jobs/", {"provider": "local", "limit": 1},
                                  content_type="application/json")
    assert response.status_code == 202
    job = admin_client_.get(f"/api/cuad/jobs/{response.json()['id']}/").json()
    assert job["provider"] == "local" and job["total"] == 1
