"""The one way request data becomes JSON: bounded in size and in nesting depth.

Every endpoint (the DRF parser below is the API's default) and every pasted or
uploaded document (CUAD runs, pool items, label imports) goes through
``json_loads``. Python's parser recurses once per nesting level, so "[[[[..."
a few thousand levels deep raised RecursionError, a 500; here the depth is
counted first, in one linear scan that does not recurse, and a document
deeper than ``JSON_MAX_DEPTH`` is refused with a message before it is parsed.
"""

from __future__ import annotations

import json
import re
from typing import IO, Any

from django.conf import settings

# Deep enough for every document the product reads (a run is 3 levels, a pool with
# external references about 6); far below where the parser's recursion would fail.
DEFAULT_MAX_DEPTH = 64

# String literals (escapes included) are dropped first so that brackets inside text do not count as nesting.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_INNERMOST_PAIR = re.compile(r"\[\]|\{\}")


class JsonInputError(ValueError):
    """Request data that is not acceptable JSON; the message says why (and where, when known)."""


class JsonSyntaxError(JsonInputError):
    """Not JSON at all (as opposed to JSON that is too big or too deep); carries the parser's position."""

    def __init__(self, msg: str, lineno: int, colno: int) -> None:
        super().__init__(f"not valid JSON: {msg} at line {lineno} column {colno}")
        self.msg, self.lineno, self.colno = msg, lineno, colno


DEFAULT_MAX_BYTES = 20 * 1024 * 1024


def _setting(name: str, default: int) -> int:
    # Read lazily, and usable without Django settings: the run validator is also plain Python.

    return int(getattr(settings, name, default)) if settings.configured else default


def max_depth() -> int:
    return _setting("JSON_MAX_DEPTH", DEFAULT_MAX_DEPTH)


def max_bytes() -> int:
    return _setting("JSON_MAX_BYTES", DEFAULT_MAX_BYTES)


def nests_deeper_than(text: str, limit: int) -> bool:
    """True when arrays/objects in ``text`` nest more than ``limit`` levels; no recursion, C-speed passes.

    Each pass removes the innermost ``[]``/``{}`` pairs of the bracket skeleton, so a document of
    depth d empties in d passes. Malformed nesting (a pass that removes nothing) is left to the parser.
    """
    if text.count("[") + text.count("{") <= limit:
        return False
    skeleton = _NOT_BRACKET.sub("", _STRING.sub("", text))
    for _ in range(limit):
        reduced = _INNERMOST_PAIR.sub("", skeleton)
        if not reduced or reduced == skeleton:
            return False
        skeleton = reduced
    return True


def _strict_constant(name: str) -> Any:
    raise JsonInputError(f"{name} is not a JSON number")


def json_loads(raw: str | bytes, *, strict_numbers: bool = False, limit_bytes: int | None = None) -> Any:
    """Parse request JSON with the size and depth limits; raise ``JsonInputError`` naming the problem.

    ``strict_numbers`` refuses NaN and Infinity (the API's contract, as DRF's strict JSON).
    """
    cap = max_bytes() if limit_bytes is None else limit_bytes
    size = len(raw) if isinstance(raw, bytes) else len(raw.encode("utf-8", "surrogatepass"))
    if size > cap:
        raise JsonInputError(f"JSON document of {size} bytes is over the {cap} byte limit")
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise JsonInputError(f"byte {error.start}: the JSON is not UTF-8") from None
    depth_cap = max_depth()
    if nests_deeper_than(raw, depth_cap):
        raise JsonInputError(f"JSON nested more than {depth_cap} levels deep")
    try:
        if strict_numbers:
            return json.loads(raw, parse_constant=_strict_constant)
        return json.loads(raw)
    except json.JSONDecodeError as error:
        raise JsonSyntaxError(error.msg, error.lineno, error.colno) from None
    except RecursionError:  # unbalanced "[[[[..." (left to the parser above) recurses before it fails
        raise JsonInputError("JSON nested too deeply") from None


def read_limited(stream: IO[bytes], *, limit: int) -> bytes:
    """At most ``limit`` bytes of a stream; more than that is refused without reading the rest."""
    data = stream.read(limit + 1) if stream is not None else b""
    if len(data) > limit:
        raise JsonInputError(f"JSON body is over the {limit} byte limit")
    return data
