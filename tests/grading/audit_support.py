"""Shared set-up for the audit tests: the fixture CUAD with a run that has candidates, and a loopback judge."""

from __future__ import annotations

import hashlib
import json

import numpy as np

from grading.audits.judging.judges import JudgeChoice, parse_choice
from grading.audits.models import Audit, AuditCandidate, AuditJudge, AuditVerdict
from grading.audits.services import audit_create
from grading.runs.services import extraction_run_import
from reviewapp.providers.loopback import Reply
from tests.grading.console_support import load, random_run
from tests.grading.cuad_fixture import contracts

# Verbatim sentences of the fixture contracts, each in a clause type CUAD marks absent for that contract
# (GAMMA and DELTA have no Anti-Assignment span; nobody has a span of another type for these sentences).
ABSENT_QUOTES = [
    ("GAMMA-SUPPLY AGREEMENT", "Anti-Assignment", "Supplier shall deliver the goods."),
    ("DELTA-SERVICES AGREEMENT", "Anti-Assignment", "The consultant provides advice."),
    ("GAMMA-SUPPLY AGREEMENT", "Anti-Assignment", "This contract is governed by New York law."),
]


def audited_run(tmp_path, *, seed: int = 3, extra: int = 0):
    """The fixture CUAD, plus a run: random windows (seeded) and the verbatim absent-type quotes."""
    loaded = load(tmp_path)
    run_data = random_run(np.random.default_rng(seed), model=f"audited-model-{seed}")
    for title, category, text in ABSENT_QUOTES:
        run_data["extractions"].append({"contract": title, "category": category, "text": text})
    rng = np.random.default_rng(seed + 100)
    by_title = {c["title"]: c["context"] for c in contracts()}
    for _ in range(extra):
        title = ["GAMMA-SUPPLY AGREEMENT", "DELTA-SERVICES AGREEMENT"][int(rng.integers(2))]
        words = by_title[title].split()
        a = int(rng.integers(0, len(words) - 3))
        run_data["extractions"].append(
            {"contract": title, "category": "Anti-Assignment", "text": " ".join(words[a : a + int(rng.integers(3, 8))])}
        )
    run, _ = extraction_run_import(dataset=loaded.dataset, raw=json.dumps(run_data))
    return loaded, run


def llm_judges(url: str) -> tuple[JudgeChoice, JudgeChoice]:
    return (
        parse_choice("openai_compatible:judge/model-a", base_url=url),
        parse_choice("anthropic:judge-model-b", base_url=url),
    )


def verdict_responder(path: str, headers: dict, body_bytes: bytes) -> Reply:
    """A loopback judge: yes/no from the request body's hash, a reason that names the hash (to trace leaks)."""
    body = json.loads(body_bytes)
    digest = hashlib.sha256(body_bytes).hexdigest()
    answer = {"verdict": "yes" if int(digest[0], 16) % 2 else "no", "reason": f"loopback-reason-{digest[:12]}"}
    if path.endswith("/chat/completions"):
        payload = {
            "id": "x",
            "object": "chat.completion",
            "model": body["model"],
            "choices": [
                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": json.dumps(answer)}}
            ],
            "usage": {"prompt_tokens": len(body_bytes) // 4, "completion_tokens": 20, "total_tokens": 0},
        }
    else:
        payload = {
            "id": "msg_x",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": [{"type": "tool_use", "id": "toolu_x", "name": body["tool_choice"]["name"], "input": answer}],
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": len(body_bytes) // 4, "output_tokens": 20},
        }
    return Reply(body=json.dumps(payload).encode())


def set_verdicts(audit: Audit, verdicts: dict[str, list[bool]]) -> None:
    """Write verdicts directly (tests of the figures that must not depend on any judge's behaviour)."""
    candidates = list(AuditCandidate.objects.filter(audit=audit).order_by("position"))
    for slot, values in verdicts.items():
        judge = AuditJudge.objects.get(audit=audit, slot=slot)
        for candidate, value in zip(candidates, values, strict=True):
            AuditVerdict(candidate=candidate, judge=judge, verdict=bool(value), reason="set by the test",
                         request_key="test").save(force_insert=True)


def local_audit(run, **kwargs) -> Audit:
    audit, _ = audit_create(
        run=run, judge_a=parse_choice("local-description"), judge_b=parse_choice("local-exemplars"), queue=False,
        **kwargs,
    )
    return audit
