"""TREC files read as trec_eval 10 reads them, at the edges of the format.

The reference is a byte-by-byte port of trec_eval's own line parsers (get_trec_results.c's
parse_results_line and its loop over lines, get_qrels.c's parse_qrels_line) with the C library's own
``strtod`` (through ctypes) for the score: fields end at C's ``isspace`` only, comment lines are skipped
where trec_eval skips them, and a score is what atof reads. Random files with these edges (U+00A0 and
other Unicode spaces inside ids, "1_0" and "2.5e3x" scores, tabs, vertical tabs, form feeds and CRs
between fields, indented comments) must read as the reference reads them, or be refused by name where the
product refuses what trec_eval takes silently.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoring.ir.trec_io import TrecFormatError, c_atof, c_fields, parse_qrels, parse_run, read_qrels, read_run

_LIBC = ctypes.CDLL(ctypes.util.find_library("c"))
_LIBC.strtod.restype = ctypes.c_double
_LIBC.strtod.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p)]
C_SPACE = b" \t\n\r\v\f"
NL = ord("\n")


def libc_strtod(text: bytes) -> tuple[float, int]:
    """(value, bytes read) of the C library's strtod, which atof is."""
    buffer = ctypes.create_string_buffer(text)
    end = ctypes.c_char_p()
    value = _LIBC.strtod(buffer, ctypes.byref(end))
    used = ctypes.cast(end, ctypes.c_void_p).value - ctypes.addressof(buffer)  # type: ignore[operator]
    return value, used


class Malformed(Exception):
    pass


def _skip_blank(buf: bytes, i: int) -> int:
    while buf[i] != NL and buf[i] in C_SPACE:
        i += 1
    return i


def _field(buf: bytes, i: int) -> tuple[bytes, int]:
    start = i
    while buf[i] not in C_SPACE:
        i += 1
    return buf[start:i], i


def trec_eval_results(data: bytes) -> list[tuple[bytes, bytes, bytes, bytes]]:
    """(qid, docno, rank, sim) of each line, as get_trec_results.c reads them."""
    buf = data if data.endswith(b"\n") else data + b"\n"
    out, i = [], 0
    while i < len(buf):
        i = _skip_blank(buf, i)
        if buf[i] == NL:
            i += 1
            continue
        if buf[i] == ord("#"):
            i = buf.index(b"\n", i)
            continue
        qid, i = _field(buf, i)
        if buf[i] == NL:
            raise Malformed
        i += 1
        i = _skip_blank(buf, i)
        _, i = _field(buf, i)
        if buf[i] == NL:
            raise Malformed
        i += 1
        fields = []
        for _ in range(3):  # docno, rank, sim
            i = _skip_blank(buf, i)
            value, i = _field(buf, i)
            if buf[i] == NL:
                raise Malformed
            i += 1
            fields.append(value)
        i = _skip_blank(buf, i)
        if buf[i] == NL:
            raise Malformed
        i = buf.index(b"\n", i) + 1  # the run id and anything after it
        out.append((qid, fields[0], fields[1], fields[2]))
    return out


def trec_eval_qrels(data: bytes) -> list[tuple[bytes, bytes, bytes]]:
    """(qid, docno, rel) of each line, as get_qrels.c reads them."""
    buf = data if data.endswith(b"\n") else data + b"\n"
    out, i = [], 0
    while i < len(buf):
        if buf[i] == ord("#"):
            i = buf.index(b"\n", i) + 1
            continue
        i = _skip_blank(buf, i)
        qid, i = _field(buf, i)
        if buf[i] == NL:
            raise Malformed
        i += 1
        i = _skip_blank(buf, i)
        _, i = _field(buf, i)
        if buf[i] == NL:
            raise Malformed
        i += 1
        i = _skip_blank(buf, i)
        docno, i = _field(buf, i)
        if buf[i] == NL:
            raise Malformed
        i += 1
        i = _skip_blank(buf, i)
        if buf[i] == NL:
            raise Malformed
        rel, i = _field(buf, i)
        i = _skip_blank(buf, i)
        if buf[i] != NL:
            raise Malformed
        i += 1
        out.append((qid, docno, rel))
    return out


def _plain_integer(text: bytes) -> bool:
    body = text[1:] if text[:1] in (b"+", b"-") else text
    return bool(body) and all(48 <= b <= 57 for b in body)


def expected_run(data: bytes) -> dict[str, list[str]] | None:
    """trec_eval's ranking, or None where trec_eval refuses the file or the product refuses what it takes."""
    try:
        rows = trec_eval_results(data)
    except Malformed:
        return None
    by_query: dict[str, list[tuple[float, str]]] = {}
    for qid, docno, rank, sim in rows:
        value, used = libc_strtod(sim)
        if not _plain_integer(rank) or used == 0 or not math.isfinite(value):
            return None  # refused by name: a rank that is not an integer, a score without a number, inf/nan
        by_query.setdefault(qid.decode(), []).append((value, docno.decode()))
    for pairs in by_query.values():
        if len({d for _, d in pairs}) != len(pairs):
            return None  # trec_eval refuses a repeated document too
    return {q: [d for _, d in sorted(pairs, reverse=True)] for q, pairs in by_query.items()}


ID_CHARS = st.sampled_from([*"abcXYZ019-_.:#é", "\u00a0", "\u2003", "\u3000", "\x1c", "\u2028", "\x85"])
IDS = st.text(ID_CHARS, min_size=1, max_size=5)
SCORES = st.one_of(
    st.sampled_from(["1_0", "2.5e3x", "1e5", ".5", "5.", "-0", "+3", "0x1p3", "0x", "1e", "1e+", "7abc", "--1",
                     "1.5.2", "abc", "inf", "nan", "1\u00a02", "٣", "00012", "1__0", "3_000.5"]),
    st.floats(allow_nan=False, allow_infinity=False, width=32).map(repr),
    st.text(st.sampled_from(list("0123456789._eE+-x")), min_size=1, max_size=6),
)
RANKS = st.one_of(st.integers(-3, 50).map(str), st.sampled_from(["1_0", "٣", "2.0", "x"]))
SEPARATORS = st.text(st.sampled_from(list(" \t\v\f\r")), min_size=1, max_size=3)


@st.composite
def run_files(draw) -> bytes:
    lines = []
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["row"] * 6 + ["comment", "indented comment", "blank", "short"]))
        lead = draw(st.sampled_from(["", " ", "\t", "\f"]))
        if kind == "comment":
            lines.append("#" + draw(st.text(ID_CHARS, max_size=8)))
        elif kind == "indented comment":
            lines.append(lead + " # q0 Q0 d 1 1 t")
        elif kind == "blank":
            lines.append(lead + draw(SEPARATORS))
        else:
            fields = [draw(st.sampled_from(["q1", "q2", "q\u00a01", "#q"])), "Q0", draw(IDS), draw(RANKS),
                      draw(SCORES), "tag", *draw(st.lists(IDS, max_size=2))]
            if kind == "short":
                fields = fields[: draw(st.integers(1, 5))]
            line = lead
            for field in fields:
                line += field + draw(SEPARATORS)
            lines.append(line.rstrip(" \t\v\f\r") if draw(st.booleans()) else line)
    ending = draw(st.sampled_from(["\n", "\r\n"]))
    return (ending.join(lines) + draw(st.sampled_from(["", ending]))).encode("utf-8")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=run_files())
def test_a_run_file_reads_as_trec_eval_reads_it_or_is_refused_by_line(tmp_path, data):
    expected = expected_run(data)
    path = tmp_path / "run.txt"
    path.write_bytes(data)
    readers = [lambda: read_run(path), lambda: read_run(data.decode("utf-8").split("\n")),
               lambda: read_run(path, order="score")]
    for read in readers:
        if expected is None:
            with pytest.raises(TrecFormatError, match=r"line \d+: "):
                read()
        else:
            assert read() == expected


@st.composite
def qrels_files(draw) -> bytes:
    lines = []
    for _ in range(draw(st.integers(1, 10))):
        if draw(st.integers(0, 5)) == 0:
            lines.append("#" + draw(st.text(ID_CHARS, max_size=6)))
            continue
        fields = [draw(st.sampled_from(["q1", "q2", "q\u00a01"])), "0", draw(IDS),
                  draw(st.one_of(st.integers(-2, 3).map(str), st.sampled_from(["1_0", "2.5", "٣", "x"])))]
        line = draw(st.sampled_from(["", " ", "\t"]))
        for field in fields:
            line += field + draw(SEPARATORS)
        lines.append(line)
    return "\n".join(lines).encode("utf-8")


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=qrels_files())
def test_a_qrels_file_reads_as_trec_eval_reads_it_or_is_refused_by_line(tmp_path, data):
    path = tmp_path / "qrels.txt"
    path.write_bytes(data)
    try:
        rows = trec_eval_qrels(data)
    except Malformed:
        rows = None
    keys = [(q, d) for q, d, _ in rows or []]
    if rows is None or not all(_plain_integer(rel) for _, _, rel in rows) or len(set(keys)) != len(keys):
        with pytest.raises(TrecFormatError, match=r"line \d+: "):
            read_qrels(path)
        return
    expected: dict[str, dict[str, int]] = {}
    for qid, docno, rel in rows:
        expected.setdefault(qid.decode(), {})[docno.decode()] = int(rel)
    assert read_qrels(path) == expected


def test_a_docid_holding_a_no_break_space_is_one_field_as_in_trec_eval():
    run = parse_run(["q1 Q0 doc\u00a0a 1 2.0 t", "q1 Q0 doc\u00a0b 2 1.0 t"])
    assert [row.docid for row in run["q1"]] == ["doc\u00a0a", "doc\u00a0b"]
    assert parse_qrels(["q1 0 doc\u00a0a 1"]) == {"q1": {"doc\u00a0a": 1}}
    assert c_fields("a\u00a0b\x1cc\u2003d e") == ["a\u00a0b\x1cc\u2003d", "e"]


def test_a_score_reads_as_c_atof_reads_it():
    assert [c_atof(t) for t in ("1_0", "2.5e3x", "5.", ".5", "1e", "0x1p3", "0x", "-0", "abc")] == [
        1.0, 2500.0, 5.0, 0.5, 1.0, 8.0, 0.0, -0.0, None]
    ranked = read_run(["q1 Q0 a 1 1_0 t", "q1 Q0 b 2 9 t"])
    assert ranked == {"q1": ["b", "a"]}  # Python's float("1_0") is 10.0, which would put a first


def test_comment_lines_are_skipped_where_trec_eval_skips_them():
    assert read_run(["# a comment", "   # an indented one", "q1 Q0 a 1 1 t"]) == {"q1": ["a"]}
    assert parse_qrels(["# a comment", "q1 0 a 1"]) == {"q1": {"a": 1}}
    # In a qrels file only a "#" in the first column makes a comment; indented, it starts a query id.
    assert parse_qrels([" #q 0 a 1"]) == {"#q": {"a": 1}}


def test_a_relevance_or_rank_that_python_but_not_c_reads_as_an_integer_is_refused_by_line_and_field():
    with pytest.raises(TrecFormatError, match=r"line 1: relevance '1_0' is not an integer \(C's atol"):
        parse_qrels(["q1 0 a 1_0"])
    with pytest.raises(TrecFormatError, match=r"line 2: rank '\u0663' is not an integer"):
        parse_run(["q1 Q0 a 1 1 t", "q1 Q0 b \u0663 1 t"])
