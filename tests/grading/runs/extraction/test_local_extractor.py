"""The local heuristic-baseline extractor: verbatim passages, the prefilter, its threshold, and its extraction
jobs (on the worker, resumed after a crash, from the extract_cuad command)."""

from __future__ import annotations

import io

import numpy as np
from django.core.management import call_command

from grading.runs.jobs import extraction_job_create, job_extract_execute
from grading.runs.local_extractor import LocalExtractor, prefilter, split_passages
from grading.runs.models import ConsoleJob
from reviewapp.core.jobs import job_kind_resume
from scoring.cuad.tokens import tokenize


def fake_embed(texts: list[str]) -> np.ndarray:
    """Deterministic bag-of-words vectors (hashing trick), unit length: enough to test the extractor's rules."""
    out = np.zeros((len(texts), 64))
    for i, t in enumerate(texts):
        for tok in tokenize(t):
            out[i, hash(tok) % 64] += 1.0
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(norms == 0, 1, norms)


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

    job = extraction_job_create(sample=loaded.sample, provider="local")
    wait_until(lambda: ConsoleJob.objects.get(pk=job.pk).is_finished, timeout=120)
    job.refresh_from_db()
    assert job.status == "done", job.error
    assert job.done == job.total == 4 and "heuristic" in job.run.model
    assert job.params["threshold"] == -1.0 and job.params["per_type"] == 2
    grounded = list(job.run.extractions.values_list("grounding", flat=True))
    assert grounded and all(g == 1.0 for g in grounded)  # verbatim passages: never a hallucination
    page = stakeholder_client.get(f"/cuad/scorecard/?run={job.run_id}").content.decode()
    assert "heuristic baseline" in page
    # running the task again does nothing (the claim fails)
    assert job_extract_execute(job_id=job.pk) is None


def test_a_stopped_local_job_resumes_and_skips_contracts_already_done(loaded, monkeypatch, low_threshold):
    calls: list[str] = []
    crashed: list[bool] = []
    original = LocalExtractor.extract

    def counting(self, text):
        calls.append(text)
        if len(calls) == 2 and not crashed:
            crashed.append(True)
            raise RuntimeError("worker lost")
        return original(self, text)

    monkeypatch.setattr(LocalExtractor, "extract", counting)
    job = extraction_job_create(sample=loaded.sample, provider="local", queue=False)
    assert job_extract_execute(job_id=job.pk).status == "failed"
    assert job.contracts.filter(done=True).count() == 1
    job_kind_resume(job, enqueue=False)
    calls.clear()
    finished = job_extract_execute(job_id=job.pk)
    assert finished.status == "done", finished.error
    assert len(calls) == 3


def test_extract_cuad_runs_inline_on_the_first_n_contracts(loaded, low_threshold):
    out = io.StringIO()
    call_command("extract_cuad", "--provider", "local", "--limit", "2", "--inline", stdout=out)
    job = ConsoleJob.objects.get()
    assert job.total == 2 and job.status == "done"
    assert f"run {job.run_id}" in out.getvalue()
