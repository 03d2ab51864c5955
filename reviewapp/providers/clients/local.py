"""The local heuristic: MiniLM cosine similarity mapped to P(grade 0..3) by a fixed function.

A real, weak, offline model. It reads no prompt: it embeds the query and each
item, takes the cosine, and applies ``distributions.local_grade_probs``
(cumulative-logit mapping, documented there). Shown everywhere as
"local heuristic", never as an LLM. Its "response" is the cosines it computed,
stored in the receipt like any provider answer; reported input tokens are the
local tokenizer's counts (no money is spent).
"""

from __future__ import annotations

import json
import time

from reviewapp.providers.clients.base import Client, load_json
from reviewapp.providers.local import embeddings
from reviewapp.providers.local.distributions import (
    LOCAL_MAPPING_VERSION,
    LOCAL_SCALE,
    LOCAL_THRESHOLDS,
    local_grade_probs,
)
from reviewapp.providers.types import (
    KIND_GRADES,
    METHOD_LOCAL,
    GradeDistribution,
    GradeSpec,
    Parse,
    PreparedRequest,
    ProviderError,
    SendOutcome,
    ValidationFailed,
)

LOCAL_URL = f"local:{embeddings.MODEL_ID}"


class LocalClient(Client):
    name = "local"

    def __init__(self, *, model_id: str = embeddings.MODEL_ID) -> None:
        if model_id != embeddings.MODEL_ID:
            raise ProviderError(f"the local provider runs {embeddings.MODEL_ID!r} only, not {model_id!r}")
        super().__init__(model_id=model_id)

    def prepare_grades(self, spec: GradeSpec, *, method: str | None = None) -> PreparedRequest:
        if method not in (None, METHOD_LOCAL):
            raise ProviderError("the local provider grades by the local heuristic only")
        if tuple(spec.labels) != ("0", "1", "2", "3"):
            raise ProviderError("the local heuristic maps to grades 0..3 only")
        body = {
            "model": self.model_id,
            "mapping": {"version": LOCAL_MAPPING_VERSION, "thresholds": list(LOCAL_THRESHOLDS), "scale": LOCAL_SCALE},
            "max_tokens_per_text": embeddings.MAX_TOKENS,
            "query": spec.query,
            "items": list(spec.items),
        }
        expect = {"kind": KIND_GRADES, "method": METHOD_LOCAL, "n": len(spec.items), "labels": list(spec.labels)}
        return PreparedRequest(provider=self.name, model_id=self.model_id, url=LOCAL_URL, body=body, expect=expect)

    def send(self, prepared: PreparedRequest) -> SendOutcome:
        start = time.perf_counter()
        try:
            encoder = embeddings.get_encoder()
            texts = [prepared.body["query"], *prepared.body["items"]]
            vectors = encoder.embed(texts)
            # Row by row in float64 (embeddings.cosine_rows): a float32 matrix product gave a
            # candidate a different cosine (by one ulp) depending on the other items of the request.
            cosines = embeddings.cosine_rows(vectors[1:], vectors[0]).tolist()
            tokens = sum(encoder.token_counts(texts))
        except ProviderError as error:
            return SendOutcome(sent=False, answered=False, http_status=None, body_text="",
                               latency_ms=(time.perf_counter() - start) * 1000, error=str(error))
        body = json.dumps({"cosines": cosines, "usage": {"input_tokens": tokens}})
        return SendOutcome(sent=True, answered=True, http_status=200, body_text=body,
                           latency_ms=(time.perf_counter() - start) * 1000)

    def usage(self, body_text: str) -> tuple[dict | None, int | None]:
        try:
            usage = load_json(body_text, what="local answer")["usage"]
            return usage, int(usage["input_tokens"])
        except (ValidationFailed, KeyError, TypeError, ValueError):
            return None, None

    def validate(self, prepared: PreparedRequest, outcome: SendOutcome) -> Parse:
        data = load_json(outcome.body_text, what="local answer")
        cosines = data.get("cosines") if isinstance(data, dict) else None
        if not isinstance(cosines, list) or len(cosines) != prepared.expect["n"]:
            raise ValidationFailed("local answer has the wrong number of cosines")
        probs = local_grade_probs(cosines)
        grades = tuple(
            GradeDistribution(probs=tuple(float(p) for p in row), captured_mass=1.0, grade=int(row.argmax()))
            for row in probs
        )
        usage, reported = self.usage(outcome.body_text)
        return Parse(kind=KIND_GRADES, method=METHOD_LOCAL, grades=grades, usage=usage, reported_input_tokens=reported)
