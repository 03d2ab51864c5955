"""Each parser against an independent reading of its whole source, section by section.

The readings here are written differently from the parsers: lxml and XPath where the parsers walk with
html.parser or xml.etree, a line scan where the HRS parser uses regular expressions. Every disagreement is
listed; a disagreement the project accepts is in DECISIONS with its reason, and any other one fails the test.
Texts are compared as sequences of words and punctuation (line breaks are each reading's own); headings,
history lines, repealed status and the list of sections exactly.

The project's readings that both sides share, each a decision about the source rather than a parse:
- HRS pages print some section numbers with a non-breaking hyphen (U+2011); it reads as a hyphen.
- A repealed or reserved section with no text of its own gets the stub text "Repealed." / "Reserved.".
- A footnote's number stays in the text as "[1]" and its note goes to the notes as "[1] ...".

Measured on the bundled sources when these comparisons were written: HRS 5,473 sections, 641 disagreements
in 537 sections before the parser fixes, 0 after; NRS 302 sections, 0 and 0; US Code 70 sections, 3 in 2
sections before (9 U.S.C. § 305's heading, 1 U.S.C. § 112a's footnote), 0 after; eCFR 576 sections (two
editions of title 1), 8 in 4 sections before (footnote numbers run into the text), 0 after; CFR annual
edition 50 sections, 0 and 0.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import lxml.etree
import lxml.html
import pytest

from benchmarks.corpus.base import ParsedProvision
from benchmarks.corpus.formats import ecfr_xml, hrs_json, nrs_html, uslm_xml

DATA = Path(__file__).parent / "data"
USLM = "http://xml.house.gov/schemas/uslm/1.0"


@dataclass(frozen=True)
class Reading:
    key: str  # number, and "#2" for a second printed version
    heading: str
    body: str
    history: str
    repealed: bool | None = None  # None: this reading does not decide it
    notes: str | None = None


# (corpus, section key, field): why the parser's reading is the one kept.
DECISIONS: dict[tuple[str, str, str], str] = {}


def _words(text: str) -> list[str]:
    return re.findall(r"\w+|[^\w\s]", text)


def _flat(text: str) -> str:
    return " ".join(text.split())


def disagreements(corpus: str, parsed: Iterable[ParsedProvision], readings: list[Reading]) -> list[str]:
    """Every difference between the parser's sections and the independent reading, one line each."""
    out = []
    ours: dict[str, ParsedProvision] = {}
    for p in parsed:
        ours[p.number + (f"#{p.variant}" if p.variant > 1 else "")] = p
    theirs = {r.key: r for r in readings}
    for key in sorted(set(ours) ^ set(theirs)):
        out.append(f"{corpus} {key}: {'only the parser' if key in ours else 'only the independent reading'} has it")
    for key in sorted(set(ours) & set(theirs)):
        p, r = ours[key], theirs[key]
        checks: list[tuple[str, object, object]] = [
            ("heading", _flat(p.heading), _flat(r.heading)), ("history", _flat(p.history), _flat(r.history)),
            ("body", _words(p.body), _words(r.body))]
        if r.repealed is not None:
            checks.append(("repealed", p.repealed, r.repealed))
        if r.notes is not None:
            checks.append(("notes", _words(p.notes), _words(r.notes)))
        for field, mine, other in checks:
            if mine != other and (corpus, key, field) not in DECISIONS:
                shown = (" ".join(mine) if isinstance(mine, list) else str(mine))[:120]
                seen = (" ".join(other) if isinstance(other, list) else str(other))[:120]
                out.append(f"{corpus} {key} {field}: parser {shown!r} / reading {seen!r}")
    return out


# --- Hawaii: a line scan of each page -------------------------------------------------------------------------

HRS_NOTE_HEADERS = hrs_json._NOTE_HEADERS  # the page's own section names: data, not parsing logic
HISTORY_WORDS = {"L", "RL", "CC", "PC", "HRS", "Sp", "am", "ren", "Act"}


def _hrs_numbers(label: str) -> tuple[list[str], int]:
    """The numbers a mark names and how many characters the list takes ("350-6 and 350-7  REP" -> 2 names)."""
    names: list[tuple[str, str]] = []  # (joint before it, number)
    i, joint = 0, ""
    while True:
        j = i
        while j < len(label) and (label[j].isalnum() or label[j] in "-."):
            j += 1
        token = label[i:j].rstrip(".")
        if not token or not token[0].isdigit():
            break
        names.append((joint, token))
        end = i + len(token)
        k = end
        while k < len(label) and label[k] in " \t\n,":
            k += 1
        word = label[k:k + 4]
        if label[end:k].strip() == "," and word.startswith("and "):
            joint, i = ",", k + 4
        elif label[end:k].strip() == ",":
            joint, i = ",", k
        elif word.startswith(("and ", "to ")):
            joint, i = word.split(" ")[0], k + len(word.split(" ")[0]) + 1
        else:
            return _expand(names), end
        while i < len(label) and label[i] in " \t\n":
            i += 1
    return _expand(names), i


def _expand(names: list[tuple[str, str]]) -> list[str]:
    chapter = names[0][1].split("-")[0] if names else ""
    full = [(joint, n if "-" in n else f"{chapter}-{n}") for joint, n in names]
    out = [n for _, n in full]
    for (_, low), (joint, high) in itertools.pairwise(full):
        if joint == "to":
            out.append(f"{low}..{high}")
    return out


def _order(number: str) -> list[tuple[int, str]]:
    return [(int(p), "") if p.isdigit() else (0, p) for p in re.findall(r"\d+|[A-Z]+", number)]


def _names_it(named: list[str], number: str) -> bool:
    for name in named:
        if ".." in name:
            low, high = name.split("..")
            if _order(low) <= _order(number) <= _order(high):
                return True
        elif name == number:
            return True
    return False


def hrs_reading(text: str, number: str) -> Reading:
    text = text.replace("\r\n", "\n").replace("\u2011", "-")
    lines = text.split("\n")
    stripped = [line.strip() for line in lines]
    if "Previous" in stripped:  # the page's navigation closes the text
        last = len(stripped) - 1 - stripped[::-1].index("Previous")
        if all(s in ("", "Next") or s.startswith("Vol") for s in stripped[last + 1:]):
            lines = lines[:last]
    text = "\n".join(lines).strip()
    lines = text.split("\n")
    # Where each line starts in the text, and which lines open a section (first line, or indented, with §).
    starts, at = [], 0
    for line in lines:
        starts.append(at)
        at += len(line) + 1
    openings = []
    for n, line in enumerate(lines):
        if (n == 0 or line[:1] in (" ", "\t")) and line.lstrip().lstrip("[").startswith("§"):
            begin = starts[n] + len(line) - len(line.lstrip())
            label_at = begin + (1 if text[begin] == "[" else 0)
            label_at += len(text[label_at:]) - len(text[label_at:].lstrip("§").lstrip())
            named, used = _hrs_numbers(text[label_at:label_at + 400])
            if named:
                openings.append((label_at + used, named))
    naming = [(end, named) for end, named in openings if _names_it(named, number)]
    current = [(end, named) for end, named in naming if not text[end:].lstrip().startswith("[OLD]")]
    chosen = (current or naming or openings or [(0, [])])[0][0]
    rest = text[chosen:]
    if rest.startswith("]"):
        rest = rest[1:]
    rest = rest.lstrip()
    # The heading: up to the first period that a line break, two spaces, the end or a new sentence follows
    # (no heading has a period followed by a space and a capital inside it; "etc. prohibited" runs on).
    heading, cut = "", 0
    for i, ch in enumerate(rest):
        if ch == "\n" and rest[i + 1:i + 2] == "\n":
            break
        if ch == ".":
            after = i + 2 if rest[i + 1:i + 2] == "]" else i + 1
            following = rest[after:after + 2]
            if following in ("  ", "") or following[:1] == "\n" or (
                    following[:1] == " " and not following[1:].islower()):
                heading, cut = rest[:after], after
                break
    heading = " ".join(heading.split())
    if heading.endswith("]") and heading.count("]") == heading.count("[") + 1:
        heading = heading[:-1]
    elif heading.startswith("[") and heading.endswith("]") and heading.count("[") == 1:
        heading = heading[1:-1]
    rest = rest[cut:]
    # Notes start at an unindented one-line block that is one of the page's note titles.
    notes = ""
    parts = rest.split("\n\n")
    for n in range(1, len(parts)):
        block = parts[n]
        if "\n" not in block and any(block.startswith(h) and len(block) - len(h) <= 60 for h in HRS_NOTE_HEADERS) \
                and n + 1 < len(parts):
            notes = "\n\n".join(parts[n:]).strip()
            rest = "\n\n".join(parts[:n])
            break
    history = ""
    tail = rest.rstrip()
    if tail.endswith("]"):
        opening = tail.rfind("[")
        inside = tail[opening + 1:-1]
        words = set(re.findall(r"[A-Za-z]+", inside))
        if opening >= 0 and "]" not in inside and (words & HISTORY_WORDS or "gen ch" in inside):
            history, rest = " ".join(tail[opening:].split()), tail[:opening]
    body = "\n".join(" ".join(p.split()) for p in re.split(r"\n[ \t]*\n", rest) if p.strip())
    repealed = heading.upper().lstrip("[OLD] ").startswith("REPEALED") or body.startswith("REPEALED")
    return Reading(key=number, heading=heading, body=body, history=history, repealed=repealed, notes=notes)


def hrs_readings(folder: Path) -> tuple[list[ParsedProvision], list[Reading]]:
    meta = json.loads((folder / "index-meta.json").read_bytes())
    numbers = {str(sec[0]): str(sec[1]) for chapter in meta["chapters"] for sec in chapter.get("secs", [])}
    parsed: list[ParsedProvision] = []
    readings: list[Reading] = []
    meta_raw = (folder / "index-meta.json").read_bytes()
    for path in sorted(folder.glob("Vol*.json")):
        parsed += hrs_json.parse(path.read_bytes(), meta_raw=meta_raw, filename=path.name).provisions
        seen: dict[str, int] = {}
        for sec_id, entry in json.loads(path.read_bytes()).items():
            number = numbers[sec_id]
            seen[number] = seen.get(number, 0) + 1
            reading = hrs_reading(entry["t"], number)
            key = number + (f"#{seen[number]}" if seen[number] > 1 else "")
            readings.append(Reading(key, reading.heading, reading.body, reading.history, reading.repealed,
                                    reading.notes))
    return parsed, readings


# --- Nevada: lxml.html and XPath -------------------------------------------------------------------------------

def _holder(text: lxml.etree._ElementUnicodeResult) -> lxml.etree._Element:
    """The element a text node lies inside (a tail lies inside its element's parent)."""
    return text.getparent() if text.is_text else text.getparent().getparent()


def nrs_readings(path: Path) -> list[Reading]:
    root = lxml.html.document_fromstring(path.read_bytes().decode("cp1252", errors="replace"))
    out: list[dict] = []
    seen: dict[str, int] = {}
    current: dict | None = None
    for p in root.xpath("//p"):
        css = p.get("class") or ""
        if css == "SectBody" and p.xpath(".//span[@class='Section']"):
            number = _flat(p.xpath("string(.//span[@class='Section'])"))
            heading = _flat("".join(p.xpath(".//span[@class='Leadline']//text()")))
            first = "".join(t for t in p.xpath(".//text()") if not _holder(t).xpath(
                "ancestor-or-self::span[@class='Section' or @class='Leadline' or @class='Empty']"))
            seen[number] = seen.get(number, 0) + 1
            current = {"key": number + (f"#{seen[number]}" if seen[number] > 1 else ""), "heading": heading,
                       "body": [first], "history": [], "after": False}
            out.append(current)
        elif current is not None and css == "SectBody" and not current["after"]:
            current["body"].append(p.text_content())
        elif current is not None and css == "SourceNote":
            current["history"].append(_flat(p.text_content()))
            current["after"] = True
        elif css in {"DocHeading", "DocHeading2", "COHead2", "COHead4", "Chapter"}:
            current = None
    readings = []
    for sec in out:
        body = "\n".join(b for b in sec["body"] if _flat(b))
        readings.append(Reading(sec["key"], sec["heading"], body, "\n".join(h for h in sec["history"] if h)))
    return readings


# --- US Code: lxml and XPath ----------------------------------------------------------------------------------

USLM_BLOCKS = {"num", "heading", "p", "content", "chapeau", "continuation", "subsection", "paragraph", "subparagraph",
               "clause", "subclause", "item", "tr", "td", "th", "note", "notes", "quotedContent", "sourceCredit",
               "section", "toc", "tocItem", "column", "layout", "header", "table"}


def _uslm_text(elem: lxml.etree._Element, skip: set[str]) -> str:
    """Words of an element; footnote notes left out, footnote references written [n].

    Inline elements (<i>, <ref>, <date>) run into their words ("254<i>o</i>"); blocks stand apart.
    """
    name = lxml.etree.QName(elem).localname
    if name in skip or (name == "note" and elem.get("type") == "footnote"):
        return ""
    if name == "ref" and elem.get("class") == "footnoteRef":
        return f"[{_flat(elem.xpath('string(.)'))}]"
    edge = " " if name in USLM_BLOCKS else ""
    inner = (elem.text or "") + "".join(_uslm_text(child, skip) + (child.tail or "") for child in elem)
    return edge + inner + edge


def uslm_readings(path: Path) -> list[Reading]:
    root = lxml.etree.fromstring(path.read_bytes())
    ns = {"u": USLM}
    title = root.get("identifier").rsplit("t", 1)[-1]
    readings = []
    for sec in root.xpath("//u:section[starts-with(@identifier, $p)][not(ancestor::u:note)]"
                          "[not(ancestor::u:quotedContent)]", namespaces=ns, p=f"/us/usc/t{title}/s"):
        number = sec.get("identifier").rsplit("/s", 1)[-1]
        heading = _flat(sec.xpath("string(u:heading)", namespaces=ns))
        history = _flat(sec.xpath("string(u:sourceCredit)", namespaces=ns))
        body = " ".join(_uslm_text(child, {"notes"}) for child in sec
                        if lxml.etree.QName(child).localname not in {"num", "heading", "sourceCredit", "notes"})
        footnotes = [f"[{_flat(n.xpath('string(u:num)', namespaces=ns))}] "
                     + _flat("".join(t for t in n.xpath(".//text()")
                                     if not (t.is_text and t.getparent().tag == f"{{{USLM}}}num")))
                     for n in sec.xpath(".//u:note[@type='footnote']", namespaces=ns)]
        notes = " ".join(footnotes) + " " + " ".join(_uslm_text(n, set()) for n in sec.xpath("u:notes", namespaces=ns))
        status = (sec.get("status") or "").lower()
        repealed = status in {"repealed", "omitted"} or heading.lower().lstrip("[").startswith("repealed")
        readings.append(Reading(number, heading, body, history, repealed, notes))
    return readings


# --- CFR: lxml and XPath over the eCFR and the annual edition ---------------------------------------------------

CFR_NOTES = ("EDNOTE", "EFFDNOT", "EFFDNOTP", "SECAUTH", "FTNT", "CROSSREF")


def _cfr_words(elem: lxml.etree._Element, leave_out: tuple[str, ...]) -> str:
    words = []
    for node in elem.xpath(".//text()"):
        holder = _holder(node)
        chain = [holder, *holder.iterancestors()]
        if any(a.tag in leave_out or a.tag in ("GID", "PRTPAGE", "CFRTOC") for a in chain):
            continue
        footnote_number = holder.tag == "SU" and node.is_text and (
            (holder.getnext() is not None and holder.getnext().tag == "FTREF")
            or (holder.getparent().index(holder) == 0 and not (holder.getparent().text or "").strip()
                and any(a.tag == "FTNT" for a in chain)))
        words.append(f"[{node.strip()}]" if footnote_number else f" {node} ")
    return "".join(words)


def ecfr_readings(path: Path) -> list[Reading]:
    root = lxml.etree.fromstring(path.read_bytes())
    readings: list[Reading] = []
    seen: dict[str, int] = {}
    for div in root.xpath("//*[starts-with(name(), 'DIV')][@TYPE='SECTION']"):
        number = _flat(div.get("N", "")).lstrip("§ ").replace("\u2013", "-").replace("\u2014", "-")
        head = _flat(div.xpath("string(HEAD)")).replace("\u2013", "-").replace("\u2014", "-")
        heading = _flat(re.sub(r"^§§?\s*" + re.escape(number) + r"\s*", "", head))
        body = " ".join(_cfr_words(c, ("HEAD", "CITA", *CFR_NOTES)) for c in div if c.tag not in ("HEAD", "CITA"))
        history = " ".join(_flat(c.xpath("string(.)")) for c in div.xpath("CITA"))
        if not body.strip() and heading.lower() in ("[reserved]", "[reserved]."):
            body = "Reserved."  # the project's stub text for a reserved section, as for a repealed one
        seen[number] = seen.get(number, 0) + 1
        readings.append(Reading(number + (f"#{seen[number]}" if seen[number] > 1 else ""), heading or "[no heading]",
                                body, history))
    return readings


def annual_readings(path: Path) -> list[Reading]:
    root = lxml.etree.fromstring(path.read_bytes())
    readings = []
    for sec in root.xpath("//SECTION[not(ancestor::CONTENTS)][not(ancestor::TOC)]"):
        number = re.sub(r"^§+\s*", "", _flat(sec.xpath("string(SECTNO)"))).replace("\u2013", "-")
        heading = _flat(sec.xpath("string(SUBJECT)"))
        body = " ".join(_cfr_words(c, CFR_NOTES) for c in sec if c.tag not in ("SECTNO", "SUBJECT", "CITA",
                                                                                "PRTPAGE"))
        history = " ".join(_flat(c.xpath("string(.)")) for c in sec.xpath("CITA"))
        readings.append(Reading(number, heading or "[no heading]", body, history))
    return readings


# --- the comparisons --------------------------------------------------------------------------------------------

def test_the_comparison_lists_a_changed_word_a_changed_heading_and_a_missing_section():
    section = ParsedProvision(citation="X 1", number="1", chapter="1", chapter_title="", heading="Scope.",
                              body="This applies.", history="[L 1]")
    readings = [Reading("1", "Scope", "This applies!", "[L 1]"), Reading("2", "Other.", "", "")]
    assert disagreements("x", [section], readings) == [
        "x 2: only the independent reading has it",
        "x 1 heading: parser 'Scope.' / reading 'Scope'",
        "x 1 body: parser 'This applies .' / reading 'This applies !'",
    ]


def test_every_hrs_section_equals_an_independent_line_scan_of_its_page(data_dir):
    parsed, readings = hrs_readings(data_dir / "statutes" / "hrs")
    assert len(readings) == 5473
    assert disagreements("hrs", parsed, readings) == []


@pytest.mark.parametrize("chapter", ["000", "001", "036", "432B"])
def test_every_nrs_section_equals_an_xpath_reading_of_its_page(data_dir, chapter):
    path = data_dir / "statutes" / "nrs" / f"NRS-{chapter}.html"
    parsed = nrs_html.parse(path.read_bytes(), filename=path.name).provisions
    assert disagreements("nrs", parsed, nrs_readings(path)) == []


@pytest.mark.parametrize("name", ["usc01.xml", "usc09.xml"])
def test_every_us_code_section_equals_an_xpath_reading_of_its_title(data_dir, name):
    path = data_dir / "statutes" / "usc" / name
    parsed = uslm_xml.parse(path.read_bytes(), filename=name).provisions
    assert disagreements("usc", parsed, uslm_readings(path)) == []


@pytest.mark.parametrize("edition", ["current", "updated"])
def test_every_ecfr_section_equals_an_xpath_reading_of_its_title(edition):
    path = DATA / "ecfr" / edition / "ECFR-title1.xml"
    parsed = ecfr_xml.parse(path.read_bytes(), filename=path.name).provisions
    assert disagreements("ecfr", parsed, ecfr_readings(path)) == []


def test_every_annual_edition_cfr_section_equals_an_xpath_reading_of_its_volume():
    path = DATA / "cfr-annual" / "CFR-2015-title14-vol2-parts101-105.xml"
    parsed = ecfr_xml.parse(path.read_bytes(), filename=path.name).provisions
    assert disagreements("cfr-annual", parsed, annual_readings(path)) == []
