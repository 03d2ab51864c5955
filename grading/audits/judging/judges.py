"""The audit's judges: how each one asks its question through the provider layer and reads the answer.

A judge is a provider + model + method. It sees ONE candidate at a time (the
clause type, CUAD's description of it, the candidate text, and for LLMs a
contract excerpt around it) and nothing about the other judge: a request is
built from the candidate alone, so its request key (and therefore resume) is
the same whatever the other judge said or whether it has ruled yet.

Offline defaults: two LOCAL judges on the local MiniLM ONNX model (provider
``local``), each labelled "heuristic" wherever it is shown. They use different
evidence and different thresholds:

- Judge A, ``local-description``: cosine similarity of the candidate text to
  CUAD's description of the clause type (the description alone, without the
  type's name). Yes when the cosine is at least ``DESCRIPTION_THRESHOLD``
  (0.50). Caveat shown on the page: the local extractor picked its passages by
  similarity to "<name>: <description>", so on that extractor's runs this judge
  leans yes by construction; it is a weak, correlated check.
- Judge B, ``local-exemplars``: similarity of the candidate to what CUAD
  itself labels as that clause type in OTHER contracts: up to
  ``EXEMPLARS`` (12) CUAD spans of the type, picked deterministically (lowest
  sha256 of the span id) from contracts other than the candidate's. Score =
  mean of the ``TOP_K`` (3) highest cosines. Yes when the score is at least
  ``EXEMPLAR_THRESHOLD`` (0.55).

Both thresholds were set once, before any audit was run, from the local
model's usual ranges (documented in ``reviewapp.providers.local.distributions``:
unrelated text ~0.0-0.2, same topic ~0.3-0.5, close paraphrase > 0.55): judge A
asks for more than "same topic", judge B for near-paraphrase of a real CUAD
clause. They are not fitted to any verdict.

The local client's answer is the list of cosines it computed (kept verbatim in
the receipt's response body); a judge reads its evidence from there.

LLM judges (``openai_compatible`` e.g. OpenRouter, or ``anthropic``): one
structured request per candidate with a strict JSON schema
``{"verdict": "yes"|"no", "reason": "<one or two sentences>"}``. The intended
OpenRouter pair is two different frontier models (e.g. a Sonnet and an Opus).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from reviewapp.providers.clients.base import Client
from reviewapp.providers.local.embeddings import MODEL_ID as LOCAL_MODEL_ID
from reviewapp.providers.types import GradeSpec, PreparedRequest, StructuredSpec

DESCRIPTION = "local-description"
EXEMPLARS_METHOD = "local-exemplars"
LLM = "llm"
LOCAL_METHODS = (DESCRIPTION, EXEMPLARS_METHOD)
PROVIDERS = ("local", "openai_compatible", "anthropic")

DESCRIPTION_THRESHOLD = 0.50
EXEMPLAR_THRESHOLD = 0.55
EXEMPLARS = 12
TOP_K = 3
EXCERPT_CHARS = 1500  # on each side of the candidate, for LLM judges and for human reviewers

VERDICT_SCHEMA_NAME = "cuad_label_verdict"
VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["yes", "no"]},
        "reason": {"type": "string"},
    },
    "required": ["verdict", "reason"],
    "additionalProperties": False,
}
SYSTEM_PROMPT = (
    "You audit labels of the CUAD contract dataset. You are given one clause type with CUAD's description of "
    "it, an excerpt of a contract, and a text quoted from that contract. Decide whether the quoted text is a real "
    "clause of that type as CUAD's description defines it. Answer yes or no, with a short reason (one or two "
    "sentences) that points at the words that decide it."
)


class JudgeChoiceError(ValueError):
    """A judge specification cannot be used; the message says why."""


@dataclass(frozen=True)
class JudgeChoice:
    """What a person picks for one judge slot: provider + model (+ method for the local heuristics)."""

    provider: str
    model_id: str
    method: str
    base_url: str = ""  # HTTP judges only; empty = the provider's default from settings

    @property
    def key(self) -> dict[str, str]:
        return {"provider": self.provider, "model_id": self.model_id, "method": self.method, "base_url": self.base_url}

    def params(self) -> dict[str, Any]:
        if self.method == DESCRIPTION:
            return {
                "evidence": "cosine(candidate, CUAD category description)",
                "threshold": DESCRIPTION_THRESHOLD,
                "label": "heuristic",
            }
        if self.method == EXEMPLARS_METHOD:
            return {
                "evidence": f"mean of the top {TOP_K} cosines to up to {EXEMPLARS} CUAD spans of the type "
                "from other contracts",
                "threshold": EXEMPLAR_THRESHOLD,
                "exemplars": EXEMPLARS,
                "top_k": TOP_K,
                "label": "heuristic",
            }
        return {"schema": VERDICT_SCHEMA_NAME, "excerpt_chars_each_side": EXCERPT_CHARS, "label": "LLM"}


def parse_choice(text: str, *, base_url: str = "") -> JudgeChoice:
    """``local-description`` | ``local-exemplars`` | ``openai_compatible:<model>`` | ``anthropic:<model>``."""
    text = (text or "").strip()
    if text in LOCAL_METHODS:
        return JudgeChoice("local", LOCAL_MODEL_ID, text)
    provider, sep, model = text.partition(":")
    if sep and provider in ("openai_compatible", "anthropic"):
        if not model.strip():
            raise JudgeChoiceError(f"judge {text!r}: a model id is required after '{provider}:'")
        return JudgeChoice(provider, model.strip(), LLM, base_url.strip())
    raise JudgeChoiceError(
        f"judge {text!r}: use local-description, local-exemplars, openai_compatible:<model> or anthropic:<model>"
    )


@dataclass(frozen=True)
class CandidateContext:
    """Everything a judge may see of one candidate (and nothing about the other judge)."""

    category: str
    description: str
    text: str
    excerpt: str
    exemplars: tuple[str, ...]


@dataclass(frozen=True)
class Ruling:
    verdict: bool
    reason: str
    score: float | None


def user_prompt(ctx: CandidateContext) -> str:
    return (
        f"Clause type: {ctx.category}\n"
        f"CUAD's description of it: {ctx.description}\n\n"
        f"Contract excerpt:\n<excerpt>\n{ctx.excerpt}\n</excerpt>\n\n"
        f"Quoted text:\n<quote>\n{ctx.text}\n</quote>\n\n"
        f'Is the quoted text a real "{ctx.category}" clause per CUAD\'s description?'
    )


def prepare(choice: JudgeChoice, client: Client, ctx: CandidateContext) -> PreparedRequest | None:
    """The one request this judge sends for this candidate (None when there is nothing to ask)."""
    if choice.method == DESCRIPTION:
        spec = GradeSpec(system="", user="", query=ctx.description or ctx.category, items=(ctx.text,))
        return client.prepare_grades(spec)
    if choice.method == EXEMPLARS_METHOD:
        if not ctx.exemplars:
            return None
        return client.prepare_grades(GradeSpec(system="", user="", query=ctx.text, items=ctx.exemplars))
    return client.prepare_structured(
        StructuredSpec(
            system=SYSTEM_PROMPT,
            user=user_prompt(ctx),
            schema_name=VERDICT_SCHEMA_NAME,
            schema=VERDICT_SCHEMA,
            max_tokens=400,
        )
    )


def no_request_ruling(choice: JudgeChoice) -> Ruling:
    """When ``prepare`` has nothing to ask (no CUAD exemplar of the type exists elsewhere)."""
    return Ruling(False, "no CUAD span of this type in any other contract to compare with", None)


def _cosines(response_body: str) -> list[float]:
    data = json.loads(response_body)
    return [float(c) for c in data["cosines"]]


def rule(choice: JudgeChoice, *, data: dict | None, response_body: str) -> Ruling:
    """Read an answered request into a verdict. ``data`` is a structured parse; ``response_body`` the raw answer."""
    if choice.method == DESCRIPTION:
        (cos,) = _cosines(response_body)
        yes = cos >= DESCRIPTION_THRESHOLD
        return Ruling(
            yes,
            f"cosine {cos:.3f} to the category description {'≥' if yes else '<'} {DESCRIPTION_THRESHOLD:.2f}",
            cos,
        )
    if choice.method == EXEMPLARS_METHOD:
        cosines = sorted(_cosines(response_body), reverse=True)
        top = cosines[:TOP_K]
        score = sum(top) / len(top)
        yes = score >= EXEMPLAR_THRESHOLD
        return Ruling(
            yes,
            f"mean of top {len(top)} cosines to {len(cosines)} CUAD examples of the type {score:.3f} "
            f"{'≥' if yes else '<'} {EXEMPLAR_THRESHOLD:.2f}",
            score,
        )
    assert data is not None
    reason = " ".join(str(data.get("reason", "")).split())[:600]
    return Ruling(data["verdict"] == "yes", reason or "(no reason given)", None)
