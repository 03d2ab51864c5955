"""What the loopback test server answers: every provider shape, every job, and the shapes real servers return.

The answers are SIMULATED: nothing here is a language model. Grades are a deterministic function of the
request bytes; extraction quotes are the contract sentences that share the most words with a clause type's
name; audit verdicts say yes when the quoted text shares words with the clause type. They exist so the whole
product (requests, receipts, budgets, resume, pages) can be exercised offline, and every answer carries
``SIMULATED_HEADER`` so a run made against this server is labelled "simulated provider" wherever it is shown.

Shapes (``--shape`` of ``manage.py provider_loopback``), after what OpenAI-compatible servers really do:

- ``auto``: honours the request: ``logprobs``/``top_logprobs`` when asked, ``response_format`` json_schema
  when asked (vLLM, llama.cpp server, recent Ollama and LM Studio).
- ``no-logprobs``: a server that ignores ``logprobs`` (answers the grades as text, ``logprobs: null``).
- ``ignore-schema``: a model that ignores the JSON schema (answers prose instead of the object asked for).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

LABELS = ("0", "1", "2", "3")
SIMULATED_HEADER = "x-simulated-provider"
SIMULATED_VALUE = "provider_loopback (test and demo server; answers are simulated, not a model's)"
SHAPES = ("auto", "no-logprobs", "ignore-schema")
# What a chat model says when it ignores response_format (a common failure of small local models).
IGNORED_SCHEMA_TEXT = "Sure! Here is what I found in the text you sent: it looks relevant. Let me know if you need more"
MAX_QUOTES = 40  # per extraction answer, so an answer stays far below any max_tokens a job asks for

_WORD = re.compile(r"[a-z0-9]+")
_SENTENCE = re.compile(r"[^.;\n]+[.;]?")
_STOP = frozenset({"the", "and", "for", "with", "from", "that", "this", "which", "shall", "will", "into", "upon",
                   "under", "other", "than", "any", "all", "such", "party", "parties", "agreement", "clause", "type"})


def count_items(body: dict[str, Any]) -> int:
    text = json.dumps(body.get("messages", []), ensure_ascii=False)
    match = re.search(r"exactly (\d+) grade", text) or re.search(r"each of the (\d+) items", text)
    return int(match.group(1)) if match else 1


def grades_for(body_bytes: bytes, n: int) -> list[int]:
    """The loopback's grades: a deterministic function of the request body (no reading of the texts)."""
    digest = hashlib.sha256(body_bytes).digest()
    return [digest[i % len(digest)] % 4 for i in range(n)]


def distribution(grade: int) -> dict[str, float]:
    weights = dict.fromkeys(LABELS, 0.04)
    weights[str(grade)] = 0.80
    if grade > 0:
        weights[str(grade - 1)] = 0.08
    return weights


def _stems(text: str) -> set[str]:
    return {w[:5] for w in _WORD.findall(text.lower()) if len(w) >= 4 and w not in _STOP}


def _between(text: str, start: str, end: str) -> str:
    _, found, rest = text.partition(start)
    return rest.partition(end)[0].strip("\n") if found else ""


def extraction_answer(user: str, categories: list[str]) -> dict[str, Any]:
    """Per clause type, the one contract sentence (verbatim) that shares the most words with its name."""
    contract = _between(user, "<contract>\n", "\n</contract>") or user
    sentences = [m.group(0).strip() for m in _SENTENCE.finditer(contract)]
    sentences = [s for s in sentences if len(s) >= 20]
    out: list[dict[str, str]] = []
    for category in categories:
        wanted = _stems(category)
        if not wanted:
            continue
        best, best_score = "", 0
        for sentence in sentences:
            score = len(wanted & _stems(sentence))
            if score > best_score:
                best, best_score = sentence, score
        if best and best_score >= max(1, math.ceil(len(wanted) / 2)):
            out.append({"category": category, "quote": best})
        if len(out) >= MAX_QUOTES:
            break
    return {"extractions": out}


def verdict_answer(user: str) -> dict[str, Any]:
    """Yes when the quoted text shares at least two words with the clause type's name and description."""
    kind = _between(user, "Clause type:", "\n").strip()
    description = _between(user, "description of it:", "\n")
    quote = _between(user, "<quote>\n", "\n</quote>")
    shared = sorted(_stems(f"{kind} {description}") & _stems(quote))
    yes = len(shared) >= 2
    reason = (f"simulated verdict: the quote shares {len(shared)} word stem(s) with the clause type"
              + (f" ({', '.join(shared[:6])})" if shared else "") + ".")
    return {"verdict": "yes" if yes else "no", "reason": reason}


def instance_of(schema: dict[str, Any]) -> Any:
    """A minimal value matching a JSON schema (any schema the jobs above do not ask for)."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        return {name: instance_of(sub) for name, sub in schema.get("properties", {}).items()}
    return {"array": [], "string": "", "integer": 0, "number": 0.0, "boolean": False}.get(str(kind))


def structured_answer(schema: dict[str, Any], *, user: str, body_bytes: bytes, n: int) -> dict[str, Any]:
    """The object a schema asks for: grades, CUAD extractions, an audit verdict, or a minimal instance."""
    properties = schema.get("properties", {})
    if "grades" in properties:
        return {"grades": [{"item": i + 1, "grade": str(g), "probabilities": distribution(g)}
                           for i, g in enumerate(grades_for(body_bytes, n))]}
    if "extractions" in properties:
        enum = properties["extractions"].get("items", {}).get("properties", {}).get("category", {}).get("enum", [])
        return extraction_answer(user, [str(c) for c in enum])
    if "verdict" in properties:
        return verdict_answer(user)
    return instance_of(schema)


def _user_text(body: dict[str, Any]) -> str:
    parts = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(str(block.get("text", "")) for block in content if isinstance(block, dict))
    return "\n".join(parts)


def _logprob_tokens(grades: list[int]) -> list[dict[str, Any]]:
    tokens: list[dict[str, Any]] = []
    for i, g in enumerate(grades):
        top: list[dict[str, Any]] = [{"token": label, "logprob": math.log(w), "bytes": list(label.encode())}
               for label, w in distribution(g).items()]
        top.append({"token": "The", "logprob": math.log(0.02), "bytes": list(b"The")})
        top.sort(key=lambda t: -t["logprob"])
        tokens.append({"token": str(g), "logprob": math.log(distribution(g)[str(g)]), "bytes": list(str(g).encode()),
                       "top_logprobs": top})
        if i < len(grades) - 1:
            tokens.append({"token": ",", "logprob": -0.0001, "bytes": [44],
                           "top_logprobs": [{"token": ",", "logprob": -0.0001, "bytes": [44]}]})
    return tokens


def openai_answer(body: dict[str, Any], body_bytes: bytes, *, shape: str = "auto") -> dict[str, Any]:
    """A chat.completion object as vLLM / llama.cpp / Ollama / LM Studio return it, in the given shape."""
    n = count_items(body)
    prompt_tokens = max(1, len(body_bytes) // 4)
    response_format = body.get("response_format") or {}
    logprobs: dict[str, Any] | None = None
    # OpenAI's {"type": "json_schema", "json_schema": {"schema": ...}}, or llama-cpp-python's {"type": "json_object",
    # "schema": ...}.
    if response_format.get("type") == "json_schema" or (response_format.get("type") == "json_object"
                                                        and "schema" in response_format):
        if shape == "ignore-schema":
            content = IGNORED_SCHEMA_TEXT
        else:
            schema = (response_format.get("json_schema") or {}).get("schema") or response_format.get("schema") or {}
            content = json.dumps(structured_answer(schema, user=_user_text(body), body_bytes=body_bytes, n=n),
                                 ensure_ascii=False)
    else:
        grades = grades_for(body_bytes, n)
        content = ",".join(map(str, grades))
        if body.get("logprobs") and shape != "no-logprobs":
            logprobs = {"content": _logprob_tokens(grades), "refusal": None}
    completion_tokens = max(1, len(content) // 4)
    return {
        "id": "chatcmpl-" + hashlib.sha256(body_bytes).hexdigest()[:24],
        "object": "chat.completion",
        "created": 1758326400,
        "model": body.get("model", ""),
        "system_fingerprint": "fp_loopback_simulated",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content, "refusal": None},
                     "logprobs": logprobs, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


def anthropic_answer(body: dict[str, Any], body_bytes: bytes, *, shape: str = "auto") -> dict[str, Any]:
    """A Messages API answer: one forced tool call carrying the object the tool's input schema asks for."""
    n = count_items(body)
    choice = body.get("tool_choice") or {}
    tool = choice.get("name", "record_grades")
    schema = next((t.get("input_schema") or {} for t in body.get("tools", []) if t.get("name") == tool), {})
    digest = hashlib.sha256(body_bytes).hexdigest()
    usage = {"input_tokens": max(1, len(body_bytes) // 4 - 100), "cache_creation_input_tokens": 60,
             "cache_read_input_tokens": 40, "output_tokens": 30 * n}
    if shape == "ignore-schema":
        content: list[dict[str, Any]] = [{"type": "text", "text": IGNORED_SCHEMA_TEXT}]
        stop = "end_turn"
    else:
        answer = structured_answer(schema, user=_user_text(body), body_bytes=body_bytes, n=n)
        content = [{"type": "tool_use", "id": "toolu_" + digest[:20], "name": tool, "input": answer}]
        stop = "tool_use"
    return {"id": "msg_" + digest[:24], "type": "message", "role": "assistant", "model": body.get("model", ""),
            "content": content, "stop_reason": stop, "stop_sequence": None, "usage": usage}
