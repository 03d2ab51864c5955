"""Plain values passed between the jobs, the clients and the ledger.

A job describes WHAT it wants answered (a ``GradeSpec`` or a ``StructuredSpec``);
a client turns it into a ``PreparedRequest`` (the exact JSON body it would send,
without credentials), sends it once, and validates the answer into a ``Parse``.
Nothing here knows which job asked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from reviewapp.core.records.hashing import canonical_json, sha256_hex

# How a grade distribution was obtained; shown next to every figure built on it.
METHOD_LOGPROBS = "logprobs"
METHOD_STRUCTURED = "structured"
METHOD_LOCAL = "local heuristic"
METHODS = (METHOD_LOGPROBS, METHOD_STRUCTURED, METHOD_LOCAL)

# Shown on every page, export and summary of a run answered by a simulated provider (the loopback test server).
SIMULATED_LABEL = "simulated provider"

KIND_GRADES = "grades"
KIND_STRUCTURED = "structured"


class ProviderError(Exception):
    """A provider is misconfigured (unknown name, missing key, bad base URL). Nothing was sent."""


class ValidationFailed(Exception):
    """The answer arrived but cannot be used (malformed, truncated, unalignable)."""


@dataclass(frozen=True)
class GradeSpec:
    """Grade ``len(items)`` texts on an ordinal scale given by ``labels`` (single tokens, e.g. "0".."3").

    ``system`` and ``user`` are the rendered prompt (the job owns the wording);
    ``query`` and ``items`` are the same content as plain text for the local
    heuristic, which reads no prompt.
    """

    system: str
    user: str
    query: str
    items: tuple[str, ...]
    labels: tuple[str, ...] = ("0", "1", "2", "3")

    def __post_init__(self) -> None:
        if not self.items:
            raise ValueError("GradeSpec.items is empty; a request grades at least one item")
        if len(set(self.labels)) != len(self.labels) or not all(self.labels):
            raise ValueError(f"GradeSpec.labels must be distinct non-empty strings, got {self.labels!r}")


@dataclass(frozen=True)
class StructuredSpec:
    """Ask for one JSON object matching ``schema`` (JSON Schema, strict: every property required)."""

    system: str
    user: str
    schema_name: str
    schema: dict[str, Any]
    max_tokens: int = 2048


@dataclass(frozen=True)
class PreparedRequest:
    """One request exactly as it will be sent, minus credentials (headers carrying keys are added at send time).

    ``expect`` says how to validate the answer (kind, method, item count, labels, schema);
    it is derived from the body and is part of the key so two requests that would be
    read differently never share a key.
    """

    provider: str
    model_id: str
    url: str
    body: dict[str, Any]
    expect: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def body_bytes(self) -> bytes:
        return canonical_json(self.body)

    @cached_property
    def key(self) -> str:
        """sha256 of the canonical request JSON: provider, endpoint, body, reading rule. No credentials."""
        return sha256_hex(
            canonical_json({"provider": self.provider, "url": self.url, "body": self.body, "expect": self.expect})
        )

    @property
    def method(self) -> str:
        return self.expect.get("method", "")


@dataclass(frozen=True)
class SendOutcome:
    """What happened on the wire for one attempt. ``answered`` False with ``sent`` True means unknown."""

    sent: bool
    answered: bool
    http_status: int | None
    body_text: str
    latency_ms: float
    error: str = ""
    # The server said its answers are simulated (the loopback test server's ``x-simulated-provider`` header).
    simulated: bool = False


@dataclass(frozen=True)
class GradeDistribution:
    """One item's distribution over the labels, renormalised; ``captured_mass`` is what the source covered."""

    probs: tuple[float, ...]
    captured_mass: float
    grade: int  # the answered label's index (argmax for the local heuristic)

    def as_json(self) -> dict[str, Any]:
        return {"probs": list(self.probs), "captured_mass": self.captured_mass, "grade": self.grade}


@dataclass(frozen=True)
class Parse:
    """A validated answer: per-item distributions (grades) or one JSON object (structured)."""

    kind: str
    method: str
    grades: tuple[GradeDistribution, ...] = ()
    data: dict[str, Any] | None = None
    reported_input_tokens: int | None = None
    usage: dict[str, Any] | None = None

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "method": self.method}
        if self.kind == KIND_GRADES:
            out["grades"] = [g.as_json() for g in self.grades]
        else:
            out["data"] = self.data
        return out

    @classmethod
    def from_json(cls, raw: dict[str, Any], *, usage: dict | None = None, reported: int | None = None) -> Parse:
        grades = tuple(
            GradeDistribution(probs=tuple(g["probs"]), captured_mass=g["captured_mass"], grade=g["grade"])
            for g in raw.get("grades", [])
        )
        return cls(
            kind=raw["kind"], method=raw["method"], grades=grades, data=raw.get("data"),
            reported_input_tokens=reported, usage=usage,
        )
