"""TREC run and qrels files: the two formats trec_eval reads, parsed and written.

Run lines are ``qid Q0 docid rank score tag``; as trec_eval does, anything after
the run tag is ignored (trec_eval's own test file ``results.trunc`` carries
comments there). Qrels lines are ``qid 0 docid rel``.

trec_eval (and so ir_measures) orders a run by score descending and breaks
score ties by docid descending, ignoring the rank column; :func:`ranked_docids`
reproduces that order so our figures and theirs describe the same ranking.
No arithmetic here: the measures are in :mod:`scoring.ir.measures`.

The lines are read as trec_eval 10 reads them (get_trec_results.c, get_qrels.c), not as Python would:
- lines end at "\\n" only, and fields are separated by C's ``isspace`` (space, tab, CR, VT, FF); a docid
  holding U+00A0 or another Unicode space is one field, where ``str.split()`` would cut it in two;
- a run line whose first non-blank character is ``#`` is a comment; a qrels line is one when ``#`` is its
  very first character (an indented ``#`` begins a query id there, as in trec_eval);
- a score is read as C's ``atof`` reads it: the longest prefix that is a number ("1_0" is 1.0, "2.5e3x"
  is 2500.0), where Python's ``float`` would read "1_0" as 10.0. A score with no number at its start
  (atof's silent 0.0) and a non-finite one are refused, naming the line and field;
- a relevance or a rank must be a plain integer; anything else (where ``atol`` would read a prefix and
  Python's ``int`` accepts "1_0" or non-ASCII digits) is refused, naming the line and field.
"""

from __future__ import annotations

import math
import os
import re
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from scoring.ir.ranking import check_ranked


class TrecFormatError(ValueError):
    """A malformed TREC run or qrels line; the message names the source and line number."""

    def __init__(self, source: str, line_number: int, problem: str, line: str) -> None:
        self.source = source
        self.line_number = line_number
        self.problem = problem
        super().__init__(f"{source}, line {line_number}: {problem}: {line.rstrip()!r}")


@dataclass(frozen=True)
class RunRow:
    """One line of a TREC run file."""

    qid: str
    docid: str
    rank: int
    score: float
    tag: str


# C's isspace in the "C" locale; every other character, U+00A0 included, belongs to a field.
C_SPACE = " \t\n\r\v\f"
_C_FIELDS = re.compile(r"[^ \t\n\r\v\f]+")
# Characters Python's str.split() takes for separators and C's isspace does not: a line without them splits
# the same both ways, and str.split() is the fast path.
_PYTHON_ONLY_SPACE = re.compile(r"[\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")
# What C's strtod (so atof) reads at the start of a field, in the "C" locale.
_STRTOD = re.compile(
    r"[+-]?(?:0[xX](?:[0-9a-fA-F]+(?:\.[0-9a-fA-F]*)?|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?"
    r"|(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
    r"|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?|[nN][aA][nN](?:\([0-9A-Za-z_]*\))?)"
)
_INTEGER = re.compile(r"[+-]?[0-9]+")


def c_fields(line: str) -> list[str]:
    """The fields of a line split at C's whitespace only, as trec_eval splits them."""
    if line.isascii():  # the common case, checked with memchr-speed tests only
        if "\x1c" in line or "\x1d" in line or "\x1e" in line or "\x1f" in line:
            return _C_FIELDS.findall(line)
        return line.split()
    return line.split() if _PYTHON_ONLY_SPACE.search(line) is None else _C_FIELDS.findall(line)


def c_atof(text: str) -> float | None:
    """The number C's ``atof`` reads from the start of ``text`` ("1_0" -> 1.0); None when it reads none."""
    found = _STRTOD.match(text)
    if found is None:
        return None
    number = found.group(0)
    if "x" in number[:3].lower():
        sign = -1.0 if number.startswith("-") else 1.0
        digits = number.lstrip("+-")
        # "0x" followed by no hex digit reads as the 0 before it, as strtod does.
        return sign * float.fromhex(digits) if re.match(r"0[xX][0-9a-fA-F.]", digits) and digits[2:] != "." \
            else 0.0
    return float(number.split("(", 1)[0])


def _integer(text: str) -> int | None:
    return int(text) if _INTEGER.fullmatch(text) else None


def _numeric_problem(kind: str, text: str) -> str:
    read = _INTEGER.match(text)
    if read is None:
        return f"{kind} {text!r} is not an integer"
    return f"{kind} {text!r} is not an integer (C's atol, which trec_eval uses, would read {int(read.group(0))})"


def source_lines(source: str | os.PathLike[str] | Iterable[str]) -> tuple[str, Iterable[str]]:
    """(name for error messages, lines) of a path (read as UTF-8) or of an iterable of lines.

    A file's lines end at "\\n" only, as trec_eval's do: a lone CR, a form feed or U+2028 is not a line break.
    """
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"{path}: not UTF-8 text ({exc})") from exc
        return str(path), text.split("\n")
    return "<lines>", source


def parse_run(lines: Iterable[str], *, source: str = "<run>") -> dict[str, list[RunRow]]:
    """Parse TREC run lines ``qid Q0 docid rank score tag`` into rows per query, in file order.

    Blank lines and comment lines (first non-blank character ``#``) are skipped; fields after the tag are
    ignored, as trec_eval ignores them; the score is read as C's ``atof`` reads it (see the module). Fewer
    than six fields, a non-integer rank, a non-finite score or one with no number at its start, or a docid
    repeated within a query raises :class:`TrecFormatError` naming ``source`` and the 1-based line number.
    """
    rows: dict[str, list[RunRow]] = {}
    seen: dict[tuple[str, str], int] = {}
    for line_number, line in enumerate(lines, start=1):
        fields = c_fields(line)
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) < 6:
            raise TrecFormatError(
                source, line_number, f"expected 6 fields 'qid Q0 docid rank score tag', got {len(fields)}", line
            )
        # trec_eval reads six fields and ignores the rest of the line.
        qid, _q0, docid, rank_text, score_text, tag = fields[:6]
        rank = _integer(rank_text)
        if rank is None:
            raise TrecFormatError(source, line_number, _numeric_problem("rank", rank_text), line)
        score = c_atof(score_text)
        if score is None:
            raise TrecFormatError(source, line_number, f"score {score_text!r} is not a number", line)
        if not math.isfinite(score):
            raise TrecFormatError(source, line_number, f"score {score_text!r} is not finite", line)
        key = (qid, docid)
        if key in seen:
            raise TrecFormatError(
                source,
                line_number,
                f"document {docid!r} already listed for query {qid!r} on line {seen[key]}",
                line,
            )
        seen[key] = line_number
        rows.setdefault(qid, []).append(RunRow(qid=qid, docid=docid, rank=rank, score=score, tag=tag))
    return rows


def ranked_docids(rows: Sequence[RunRow], *, order: Literal["score", "rank"] = "score") -> list[str]:
    """Document ids of one query's run rows in rank order.

    ``order="score"`` (default) is trec_eval's order, which ir_measures uses:
    score descending, ties broken by docid descending; the rank column is
    ignored. ``order="rank"`` sorts by the rank column (ties keep file order).
    """
    if order == "score":
        # Two stable sorts: docid descending first, then score descending.
        by_docid = sorted(rows, key=lambda row: row.docid, reverse=True)
        return [row.docid for row in sorted(by_docid, key=lambda row: -row.score)]
    if order == "rank":
        return [row.docid for row in sorted(rows, key=lambda row: row.rank)]
    raise ValueError(f"order must be 'score' or 'rank', got {order!r}")


def _ranked_by_score(lines: Iterable[str]) -> dict[str, list[str]] | None:
    """``{qid: docids in trec_eval order}`` of well-formed run lines, or None if any line is not.

    The fast path of :func:`read_run`: no object per line, scores converted a
    block of lines at a time, one sort per query. On anything unusual (a wrong
    field count, a bad rank or score, a repeated docid) it gives up and
    :func:`parse_run` reads the lines again to name the line at fault.
    """
    docids: dict[str, list[str]] = {}
    scores: dict[str, array[float]] = {}
    qid = ""  # no query yet: a split field is never empty
    query_docids: list[str] = []
    block_ranks: list[str] = []
    block_scores: list[str] = []

    def flush() -> bool:
        # Python's int and float read what C does not ("1_0", non-ASCII digits) and refuse what atof reads
        # ("2.5e3x"): only plain ASCII numbers take this path, the rest are read by parse_run.
        ranks, values = "".join(block_ranks), "".join(block_scores)
        if "_" in ranks or "_" in values or not ranks.isascii() or not values.isascii():
            return False
        try:
            for _ in map(int, block_ranks):
                pass
            converted = array("d", map(float, block_scores))
        except ValueError:
            return False
        if not all(map(math.isfinite, converted)):
            return False
        scores[qid].extend(converted)
        block_ranks.clear()
        block_scores.clear()
        return True

    for line in lines:
        fields = c_fields(line)
        if len(fields) < 6:
            if fields and not fields[0].startswith("#"):
                return None
            continue
        if fields[0].startswith("#"):
            continue
        if fields[0] != qid:
            # A new query, or an earlier one listed again further down the file.
            if qid and not flush():
                return None
            qid = fields[0]
            if qid not in docids:
                docids[qid] = []
                scores[qid] = array("d")
            query_docids = docids[qid]
        query_docids.append(fields[2])
        block_ranks.append(fields[3])
        block_scores.append(fields[4])
    if qid and not flush():
        return None
    ranked: dict[str, list[str]] = {}
    for qid, query_docids in docids.items():
        if len(set(query_docids)) != len(query_docids):
            return None
        # Score descending, ties by docid descending: one sort of (score, docid) pairs, reversed.
        ranked[qid] = [docid for _, docid in sorted(zip(scores[qid], query_docids, strict=True), reverse=True)]
    return ranked


def read_run(
    source: str | os.PathLike[str] | Iterable[str], *, order: Literal["score", "rank"] = "score"
) -> dict[str, list[str]]:
    """Read a TREC run (a path or an iterable of lines) into ``{qid: [docid in rank order]}``.

    See :func:`ranked_docids` for the order. Errors are those of :func:`parse_run`.
    """
    if order == "score":
        if isinstance(source, str | os.PathLike):
            try:
                # newline="\n": lines end at LF only, as trec_eval's do (a lone CR is a space within a line).
                with open(source, encoding="utf-8", newline="\n") as handle:
                    ranked = _ranked_by_score(handle)
            except UnicodeDecodeError as exc:
                raise ValueError(f"{Path(source)}: not UTF-8 text ({exc})") from exc
        else:
            source = source if isinstance(source, list | tuple) else list(source)
            ranked = _ranked_by_score(source)
        if ranked is not None:
            return ranked
    name, lines = source_lines(source)
    return {qid: ranked_docids(rows, order=order) for qid, rows in parse_run(lines, source=name).items()}


def parse_qrels(lines: Iterable[str], *, source: str = "<qrels>") -> dict[str, dict[str, int]]:
    """Parse TREC qrels lines ``qid 0 docid rel`` into ``{qid: {docid: rel}}``.

    Blank lines and lines whose first character is ``#`` are skipped (trec_eval 10 skips the second; an
    indented ``#`` is a query id there as here). A wrong field count, a relevance that is not a plain integer
    or a (qid, docid) judged twice raises :class:`TrecFormatError` naming ``source`` and the 1-based line
    number. Only documents listed are judged: an absent document is unjudged, never 0.
    """
    qrels: dict[str, dict[str, int]] = {}
    seen: dict[tuple[str, str], int] = {}
    for line_number, line in enumerate(lines, start=1):
        if line.startswith("#"):
            continue
        fields = c_fields(line)
        if not fields:
            continue
        if len(fields) != 4:
            raise TrecFormatError(source, line_number, f"expected 4 fields 'qid 0 docid rel', got {len(fields)}", line)
        qid, _iteration, docid, rel_text = fields
        rel = _integer(rel_text)
        if rel is None:
            raise TrecFormatError(source, line_number, _numeric_problem("relevance", rel_text), line)
        key = (qid, docid)
        if key in seen:
            raise TrecFormatError(
                source,
                line_number,
                f"document {docid!r} already judged for query {qid!r} on line {seen[key]}",
                line,
            )
        seen[key] = line_number
        qrels.setdefault(qid, {})[docid] = rel
    return qrels


def read_qrels(source: str | os.PathLike[str] | Iterable[str]) -> dict[str, dict[str, int]]:
    """Read TREC qrels (a path or an iterable of lines); see :func:`parse_qrels`."""
    name, lines = source_lines(source)
    return parse_qrels(lines, source=name)


def _check_token(kind: str, value: str) -> None:
    if not value or any(ch.isspace() for ch in value):
        raise ValueError(f"{kind} {value!r} cannot be written to a TREC file (empty or contains whitespace)")


def format_run(
    rankings: Mapping[str, Sequence[str]],
    *,
    tag: str,
    scores: Mapping[str, Sequence[float]] | None = None,
) -> str:
    """TREC run text for ``{qid: [docid in rank order]}``.

    Without ``scores`` each document gets score = (list length - rank + 1), so
    the scores strictly decrease with rank. With ``scores`` (one per document),
    they are written as given, but only if trec_eval's order (score descending,
    ties by docid descending) reproduces the given order; otherwise a tool
    reading the file would evaluate a different ranking, so ValueError.
    """
    _check_token("tag", tag)
    out: list[str] = []
    for qid, ranked in rankings.items():
        _check_token("query id", qid)
        check_ranked(ranked)
        if scores is None:
            query_scores: Sequence[float] = [float(len(ranked) - i) for i in range(len(ranked))]
        else:
            query_scores = scores[qid]
            if len(query_scores) != len(ranked):
                raise ValueError(f"query {qid!r}: {len(ranked)} documents but {len(query_scores)} scores")
            rows = [
                RunRow(qid, d, i + 1, float(s), tag) for i, (d, s) in enumerate(zip(ranked, query_scores, strict=True))
            ]
            if ranked_docids(rows) != list(ranked):
                raise ValueError(
                    f"query {qid!r}: these scores do not reproduce the given order under trec_eval's "
                    "rule (score descending, ties by docid descending)"
                )
        for rank, (docid, score) in enumerate(zip(ranked, query_scores, strict=True), start=1):
            _check_token("document id", docid)
            out.append(f"{qid} Q0 {docid} {rank} {float(score)!r} {tag}\n")
    return "".join(out)


def write_run(
    path: str | os.PathLike[str],
    rankings: Mapping[str, Sequence[str]],
    *,
    tag: str,
    scores: Mapping[str, Sequence[float]] | None = None,
) -> None:
    """Write :func:`format_run` output to ``path`` (UTF-8)."""
    Path(path).write_text(format_run(rankings, tag=tag, scores=scores), encoding="utf-8")


def format_qrels(qrels: Mapping[str, Mapping[str, int]]) -> str:
    """TREC qrels text for ``{qid: {docid: rel}}``. Only judged documents are written (never a 0 for unjudged)."""
    out: list[str] = []
    for qid, judged in qrels.items():
        _check_token("query id", qid)
        for docid, rel in judged.items():
            _check_token("document id", docid)
            if isinstance(rel, bool) or not isinstance(rel, int):
                raise ValueError(f"query {qid!r}, document {docid!r}: relevance must be an integer, got {rel!r}")
            out.append(f"{qid} 0 {docid} {rel}\n")
    return "".join(out)


def write_qrels(path: str | os.PathLike[str], qrels: Mapping[str, Mapping[str, int]]) -> None:
    """Write :func:`format_qrels` output to ``path`` (UTF-8)."""
    Path(path).write_text(format_qrels(qrels), encoding="utf-8")
