"""A bulk eCFR title is read part by part (lxml iterparse, each part's tree cleared once read), giving exactly the
provisions the whole-tree reading gives; files whose header does not come first are read as a whole tree."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.corpus import ParseError
from benchmarks.corpus.formats import ecfr_xml

ECFR = Path(__file__).parent / "data" / "ecfr"
FILES = [ECFR / "current" / "ECFR-title1.xml", ECFR / "updated" / "ECFR-title1.xml"]


def _whole_tree(monkeypatch, raw: bytes, name: str):
    def refuse(raw, options):
        raise ecfr_xml._NotStreamable("the whole tree, for comparison")
        yield  # a generator, as the real one

    with monkeypatch.context() as patched:
        patched.setattr(ecfr_xml, "_stream_units", refuse)
        return ecfr_xml.parse(raw, filename=name)


def _counting_forgets(monkeypatch) -> list[int]:
    forgotten: list[int] = []
    real = ecfr_xml._forget

    def forget(elem):
        forgotten.append(1)
        real(elem)

    monkeypatch.setattr(ecfr_xml, "_forget", forget)
    return forgotten


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.parent.name)
def test_the_streamed_title_reads_exactly_as_the_whole_tree(path, monkeypatch):
    raw = path.read_bytes()
    expected = _whole_tree(monkeypatch, raw, path.name)
    forgotten = _counting_forgets(monkeypatch)
    streamed = ecfr_xml.parse(raw, filename=path.name)
    assert streamed == expected
    assert len(forgotten) >= 10  # read part by part, each part dropped once read: not one tree


def _title(parts: str, header: str = "<AMDDATE>Dec. 29, 2022</AMDDATE>") -> bytes:
    return (f"<DLPSTEXTCLASS><HEADER>{header}</HEADER><TEXT><BODY><ECFRBRWS>"
            f"<DIV1 N=\"7\" TYPE=\"TITLE\"><HEAD>Title 7—Agriculture</HEAD>"
            f"<DIV3 N=\"I\" TYPE=\"CHAPTER\"><HEAD>CHAPTER I</HEAD>{parts}</DIV3></DIV1>"
            "</ECFRBRWS></BODY></TEXT></DLPSTEXTCLASS>").encode()


def _part(n: int, sections: int = 3, auth_last: bool = False) -> str:
    auth = f"<AUTH><HED>Authority:</HED><PSPACE>7 U.S.C. {n}.</PSPACE></AUTH>"
    body = "".join(f"<DIV8 N=\"§ {n}.{s}\" TYPE=\"SECTION\"><HEAD>§ {n}.{s}   Rule {s}.</HEAD>"
                   f"<P>(a) Text of {n}.{s}.</P><CITA>[1 FR {n}]</CITA></DIV8>" for s in range(1, sections + 1))
    subpart = f"<DIV6 N=\"A\" TYPE=\"SUBPART\"><HEAD>Subpart A</HEAD>{body}</DIV6>"
    return (f"<DIV5 N=\"{n}\" TYPE=\"PART\"><HEAD>PART {n}—RULES</HEAD>"
            + (subpart + auth if auth_last else auth + subpart) + "</DIV5>")


@pytest.mark.parametrize("raw", [
    _title("".join(_part(n) for n in range(1, 6))),
    _title(_part(1, auth_last=True) + _part(2)),  # a part's notes after its sections: still in each section
    _title("<DIV8 N=\"§ 9.1\" TYPE=\"SECTION\"><HEAD>§ 9.1   Alone.</HEAD><P>x</P></DIV8>" + _part(10)),
    _title(_part(1), header=""),  # no date at all
    _title(_part(1), header="") .replace(b"</DIV1>", b"<AMDDATE>Jan. 5, 2023</AMDDATE></DIV1>"),  # a late date
    _title(_part(1)).replace(b'<DIV1 N="7" TYPE="TITLE">', b'<DIV1 TYPE="TITLE">')  # the number only later
    .replace(b"</DLPSTEXTCLASS>", b"<IDNO TYPE=\"title\">7</IDNO></DLPSTEXTCLASS>"),
], ids=["parts", "notes-last", "lone-section", "no-date", "late-date", "late-number"])
def test_odd_layouts_read_as_the_whole_tree_reads_them(raw, monkeypatch):
    assert ecfr_xml.parse(raw, filename="t.xml") == _whole_tree(monkeypatch, raw, "t.xml")


def test_a_broken_file_met_midway_is_refused_with_the_whole_tree_message():
    raw = _title(_part(1) + _part(2)).replace(b"</DIV5><DIV5", b"</DIV5><DIV5 <", 1)
    with pytest.raises(ParseError, match=r"t.xml: not well-formed XML at line 1"):
        ecfr_xml.parse(raw, filename="t.xml")
