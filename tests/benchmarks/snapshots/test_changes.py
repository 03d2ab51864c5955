"""Snapshots compared: the sections a newer snapshot added, removed and amended (text, or notes only), with a text
diff, as a page and a JSON API; on real data, the two editions of 1 CFR GPO published (en dashes made hyphens)."""

from __future__ import annotations

import io
import random
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from django.core.management import call_command

from benchmarks.corpus.models import SourceSnapshot
from benchmarks.snapshots.changes import SectionText, snapshot_compare
from benchmarks.snapshots.selectors import snapshot_comparison

ECFR = Path(__file__).parents[1] / "corpus" / "data" / "ecfr"
CURRENT, UPDATED = ECFR / "current" / "ECFR-title1.xml", ECFR / "updated" / "ECFR-title1.xml"
_NOT_TEXT = {"CITA", "FTNT", "EDNOTE", "EFFDNOT", "SECAUTH", "CROSSREF"}


@pytest.mark.parametrize("seed", range(20))
def test_the_comparison_finds_exactly_the_changes_made_to_random_sections(seed):
    rng = random.Random(seed)
    words = ["notice", "filing", "agency", "register", "document", "office", "rule", "part"]

    def text(n: int) -> str:
        return "\n".join(" ".join(rng.choices(words, k=6)) for _ in range(n))

    old = [SectionText(i, f"1 CFR {i}.1", 1, text(1), text(rng.randint(1, 4)), text(1), text(1))
           for i in range(rng.randint(5, 40))]
    made: dict[str, set[str]] = {"added": set(), "removed": set(), "amended": set(), "notes": set()}
    new = []
    for s in old:
        roll = rng.random()
        if roll < 0.15:
            made["removed"].add(s.citation)
            continue
        if roll < 0.35:
            field = rng.choice(["heading", "body", "repealed"])
            changed = {"repealed": not s.repealed} if field == "repealed" else {field: getattr(s, field) + " amended"}
            s = SectionText(**{**s.__dict__, "pk": s.pk + 1000, **changed})
            made["amended"].add(s.citation)
        elif roll < 0.5:
            s = SectionText(**{**s.__dict__, "pk": s.pk + 1000, rng.choice(["history", "notes"]): "changed"})
            made["notes"].add(s.citation)
        new.append(s)
    for i in range(rng.randint(0, 5)):
        new.insert(rng.randint(0, len(new)), SectionText(5000 + i, f"1 CFR 99.{i}", 1, "New.", text(2)))
        made["added"].add(f"1 CFR 99.{i}")

    changes = snapshot_compare(old, new)
    assert {kind: {c.label for c in changes.of_kind(kind)} for kind in made} == made
    assert changes.unchanged == len(old) - len(made["removed"]) - len(made["amended"]) - len(made["notes"])
    for c in changes.of_kind("amended"):
        assert any(line[:1] in "+-" for line in c.diff)  # a word changed, or the repealed mark came or went
    assert all(all(line.startswith("+") or line.startswith("@@") for line in c.diff)
               for c in changes.of_kind("added"))


@pytest.fixture
def two_editions(db):
    out = io.StringIO()
    call_command("import_corpus", str(CURRENT), stdout=out)
    call_command("import_corpus", str(UPDATED), stdout=out)
    old, new = SourceSnapshot.objects.filter(corpus="cfr1").order_by("id")
    return old, new


def _section_texts(path: Path) -> dict[str, tuple[str, str]]:
    """An independent reading with xml.etree: each section's text and its notes, as raw concatenated strings."""
    root = ET.fromstring(path.read_bytes())  # noqa: S314 -- our own test file
    out = {}
    for div in (d for d in root.iter() if d.get("TYPE") == "SECTION"):
        number = div.get("N", "").lstrip("§ ").replace("\u2013", "-")
        text = "".join("".join(c.itertext()) for c in div if c.tag not in _NOT_TEXT)
        notes = "".join("".join(c.itertext()) for c in div if c.tag in _NOT_TEXT)
        out[f"1 CFR {number}"] = (" ".join(text.split()), " ".join(notes.split()))
    return out


def test_the_second_edition_of_1_cfr_amends_the_sections_whose_text_changed(two_editions):
    old, new = two_editions
    comparison = snapshot_comparison(new=new)
    assert comparison is not None and comparison.old == old
    changes = comparison.changes
    before, after = _section_texts(CURRENT), _section_texts(UPDATED)
    assert set(before) == set(after)
    assert {c.label for c in changes.of_kind("amended")} == {k for k in before if before[k][0] != after[k][0]}
    assert changes.counts == {"added": 0, "removed": 0, "amended": 35, "notes": 123}
    assert changes.unchanged == 130
    office = next(c for c in changes.changes if c.label == "1 CFR 2.3")
    assert "-(b) The office is located at 732 N. Capitol Street NW, suite A\u2013734, Washington, DC." in office.diff
    assert "+(b) The office is located at 732 N. Capitol Street NW, suite A-734, Washington, DC." in office.diff
    notes_only = next(c for c in changes.changes if c.label == "1 CFR 1.1")
    assert notes_only.kind == "notes" and notes_only.old_text_sha256 == notes_only.new_text_sha256


def test_the_corpus_page_links_the_changes_page_and_its_json(two_editions, stakeholder_client):
    old, new = two_editions
    corpus = stakeholder_client.get("/benchmarks/corpus/cfr1/").content.decode()
    assert f'href="/benchmarks/snapshots/{new.pk}/changes/"' in corpus
    page = stakeholder_client.get(f"/benchmarks/snapshots/{new.pk}/changes/")
    html = page.content.decode()
    assert page.status_code == 200 and "0 added · 0 removed · 35 text amended" in html
    assert "<del>-(b) The office is located at 732 N. Capitol Street NW, suite A–734, Washington, DC.</del>" in html
    api = stakeholder_client.get(f"/api/v1/benchmarks/snapshots/{new.pk}/changes/").json()
    assert api["old"]["sha256"] == old.sha256 and api["new"]["sha256"] == new.sha256
    assert api["counts"] == {"added": 0, "removed": 0, "amended": 35, "notes": 123, "unchanged": 130}
    first = api["changes"][0]
    assert first["citation"] == "1 CFR 1.1" and first["kind"] == "notes" and first["diff"]
    backwards = stakeholder_client.get(f"/api/v1/benchmarks/snapshots/{old.pk}/changes/?against={new.pk}").json()
    assert backwards["counts"]["amended"] == 35
    assert stakeholder_client.get(f"/api/v1/benchmarks/snapshots/{old.pk}/changes/").status_code == 404
    assert stakeholder_client.get(f"/benchmarks/snapshots/{old.pk}/changes/?against=x").status_code == 404
    first_page = stakeholder_client.get(f"/benchmarks/snapshots/{old.pk}/changes/").content.decode()
    assert "nothing earlier to compare it with" in first_page
    # 158 changes: a page of 100 at a time; ?kind= shows one kind (the API's counts stay whole).
    assert html.count('class="section-change"') == 100 and "page 1 of 2 (1–100 of 158 changes)" in html
    amended = stakeholder_client.get(f"/benchmarks/snapshots/{new.pk}/changes/?kind=amended").content.decode()
    assert amended.count('data-testid="change-amended"') == 35 and 'data-testid="change-notes"' not in amended
    only = stakeholder_client.get(f"/api/v1/benchmarks/snapshots/{new.pk}/changes/?kind=amended").json()
    assert len(only["changes"]) == 35 and only["counts"]["notes"] == 123
    assert stakeholder_client.get(f"/benchmarks/snapshots/{new.pk}/changes/?kind=x").status_code == 404
