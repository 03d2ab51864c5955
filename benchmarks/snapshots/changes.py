"""What changed between two snapshots of one source: pure, from the sections' stored texts.

A section is the same section in both when its citation and variant agree. It is amended when the hash of its
text (heading, body, repealed) differs; its notes changed when only the hash of its history and notes differs
(a part's authority note amended, say), which does not change what a model or a reviewer is shown.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

from reviewapp.core.records.hashing import sha256_json

KINDS = ("added", "removed", "amended", "notes")
KIND_LABELS = {"added": "added", "removed": "removed", "amended": "text amended", "notes": "notes amended only"}
DIFF_CONTEXT = 1


@dataclass(frozen=True)
class SectionText:
    pk: int
    citation: str
    variant: int
    heading: str
    body: str
    history: str = ""
    notes: str = ""
    repealed: bool = False

    @property
    def key(self) -> tuple[str, int]:
        return self.citation, self.variant

    @property
    def label(self) -> str:
        return self.citation if self.variant == 1 else f"{self.citation} (version {self.variant})"

    @cached_property
    def text_sha256(self) -> str:
        return sha256_json({"heading": self.heading, "body": self.body, "repealed": self.repealed})

    @cached_property
    def notes_sha256(self) -> str:
        return sha256_json({"history": self.history, "notes": self.notes})


@dataclass(frozen=True)
class SectionChange:
    kind: str  # one of KINDS
    label: str
    old_pk: int | None
    new_pk: int | None
    old_text_sha256: str
    new_text_sha256: str
    # Unified diff lines ("-old", "+new", " context", "@@ ..."), of the text and then of the notes.
    diff: tuple[str, ...] = ()

    @property
    def kind_label(self) -> str:
        return KIND_LABELS[self.kind]


@dataclass(frozen=True)
class SnapshotChanges:
    sections_old: int
    sections_new: int
    changes: tuple[SectionChange, ...] = field(default_factory=tuple)

    def of_kind(self, kind: str) -> list[SectionChange]:
        return [c for c in self.changes if c.kind == kind]

    @property
    def counts(self) -> dict[str, int]:
        return {kind: len(self.of_kind(kind)) for kind in KINDS}

    @property
    def unchanged(self) -> int:
        return self.sections_new - sum(self.counts[k] for k in ("added", "amended", "notes"))


def _lines(section: SectionText) -> list[str]:
    # A repeal that leaves the words as they were still shows in the diff.
    return [section.heading, *(section.body.split("\n") if section.body else []),
            *(["[marked repealed]"] if section.repealed else [])]


def section_diff(old: SectionText | None, new: SectionText | None) -> tuple[str, ...]:
    """The unified diff of a section's text (heading first, a paragraph a line), then of its history and notes."""
    out: list[str] = []
    blank = SectionText(0, "", 1, "", "")
    a, b = old or blank, new or blank
    for name, before, after in (("text", _lines(a) if old else [], _lines(b) if new else []),
                                ("notes", [x for x in (a.history, *a.notes.split("\n")) if x] if old else [],
                                 [x for x in (b.history, *b.notes.split("\n")) if x] if new else [])):
        if before == after:
            continue
        out += [line.rstrip("\n") for line in difflib.unified_diff(
            before, after, fromfile=f"{name} before", tofile=f"{name} after", n=DIFF_CONTEXT, lineterm="")][2:]
    return tuple(out)


def snapshot_compare(old: Sequence[SectionText], new: Sequence[SectionText]) -> SnapshotChanges:
    """Every section added, removed, amended (text) or with amended notes only, in the new snapshot's order
    (removed sections where they stood in the old one, after)."""
    before = {s.key: s for s in old}
    after = {s.key: s for s in new}
    changes: list[SectionChange] = []
    for section in new:
        earlier = before.get(section.key)
        if earlier is None:
            changes.append(SectionChange("added", section.label, None, section.pk, "", section.text_sha256,
                                         section_diff(None, section)))
        elif earlier.text_sha256 != section.text_sha256 or earlier.notes_sha256 != section.notes_sha256:
            kind = "amended" if earlier.text_sha256 != section.text_sha256 else "notes"
            changes.append(SectionChange(kind, section.label, earlier.pk, section.pk, earlier.text_sha256,
                                         section.text_sha256, section_diff(earlier, section)))
    changes += [SectionChange("removed", s.label, s.pk, None, s.text_sha256, "", section_diff(s, None))
                for s in old if s.key not in after]
    return SnapshotChanges(sections_old=len(old), sections_new=len(new), changes=tuple(changes))
