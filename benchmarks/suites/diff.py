"""What changed between two versions of a suite, computed from their canonical (normalised) definitions. Pure.

Queries and families are matched by id: an id present in one version only is added or removed; a query
present in both may have changed text, kind, split, family or expected citation, and its targets are
compared as sets of citations (a target whose nominator, note, provisional flag or confirmation changed is
listed too).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

_SUITE_FIELDS = ("corpus", "description", "nominated_by", "synthetic")
_QUERY_FIELDS = ("kind", "split", "family", "expected_citation")
_TARGET_FIELDS = ("provisional", "nominated_by", "note", "confirmed_by", "claimed_confirmed_by")


# How a lawyer reads each field's name in the diff.
FIELD_LABELS = {
    "provisional": "status", "nominated_by": "nominated by", "note": "note", "confirmed_by": "confirmation",
    "claimed_confirmed_by": "confirmation claimed by the file", "expected_citation": "expected citation",
    "kind": "kind", "split": "split", "family": "topic family", "corpus": "corpus", "description": "description",
    "synthetic": "synthetic queries",
}


def value_words(field_name: str, value: Any) -> str:
    """A field's value as a lawyer reads it: "provisional", "confirmed by 2 lawyers (adjudicated)", "none"."""
    if value is None or value == "":
        return "none"
    if field_name == "provisional" and isinstance(value, bool):
        return "provisional" if value else "not provisional"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict) and "lawyers" in value:
        lawyers = value.get("lawyers")
        agreement = value.get("agreement")
        how = f" ({agreement})" if agreement else ""
        return f"{'confirmed' if field_name == 'confirmed_by' else 'said to be confirmed'} by {lawyers} " \
               f"lawyer{'' if lawyers == 1 else 's'}{how}"
    if isinstance(value, dict):
        return "; ".join(f"{k.replace('_', ' ')}: {value_words(k, v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(value_words(field_name, v) for v in value) or "none"
    return f"“{value}”"


@dataclass(frozen=True)
class FieldChange:
    field: str
    old: Any
    new: Any

    @property
    def label(self) -> str:
        return FIELD_LABELS.get(self.field, self.field.replace("_", " "))

    @property
    def old_text(self) -> str:
        return value_words(self.field, self.old)

    @property
    def new_text(self) -> str:
        return value_words(self.field, self.new)


@dataclass
class QueryChange:
    qid: str
    old_text: str = ""
    new_text: str = ""  # both empty when the text did not change
    fields: list[FieldChange] = field(default_factory=list)
    targets_added: list[str] = field(default_factory=list)
    targets_removed: list[str] = field(default_factory=list)
    targets_changed: list[tuple[str, list[FieldChange]]] = field(default_factory=list)

    @property
    def text_changed(self) -> bool:
        return self.old_text != self.new_text


@dataclass
class SuiteDiff:
    old_version: Any
    new_version: Any
    suite_fields: list[FieldChange] = field(default_factory=list)
    families_added: list[dict[str, Any]] = field(default_factory=list)
    families_removed: list[dict[str, Any]] = field(default_factory=list)
    families_changed: list[tuple[str, list[FieldChange]]] = field(default_factory=list)
    queries_added: list[dict[str, Any]] = field(default_factory=list)
    queries_removed: list[dict[str, Any]] = field(default_factory=list)
    queries_changed: list[QueryChange] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.suite_fields or self.families_added or self.families_removed or self.families_changed
                    or self.queries_added or self.queries_removed or self.queries_changed)


def _changes(old: dict[str, Any], new: dict[str, Any], fields: tuple[str, ...]) -> list[FieldChange]:
    return [FieldChange(f, old.get(f), new.get(f)) for f in fields if old.get(f) != new.get(f)]


def _by_id(items: list[dict[str, Any]], key: str = "id") -> dict[str, dict[str, Any]]:
    return {item[key]: item for item in items}


def definition_diff(old: dict[str, Any], new: dict[str, Any]) -> SuiteDiff:
    """Differences from ``old`` to ``new``, both normalised suite definitions (``suite_normalise`` output)."""
    diff = SuiteDiff(old_version=old.get("version"), new_version=new.get("version"),
                     suite_fields=_changes(old, new, _SUITE_FIELDS))
    old_families, new_families = _by_id(old.get("families", [])), _by_id(new.get("families", []))
    diff.families_added = [f for fid, f in new_families.items() if fid not in old_families]
    diff.families_removed = [f for fid, f in old_families.items() if fid not in new_families]
    diff.families_changed = [(fid, changes) for fid, f in new_families.items() if fid in old_families
                             and (changes := _changes(old_families[fid], f, ("split", "description")))]

    old_queries, new_queries = _by_id(old.get("queries", [])), _by_id(new.get("queries", []))
    diff.queries_added = [q for qid, q in new_queries.items() if qid not in old_queries]
    diff.queries_removed = [q for qid, q in old_queries.items() if qid not in new_queries]
    for qid, q in new_queries.items():
        before = old_queries.get(qid)
        if before is None:
            continue
        old_targets = _by_id(before.get("targets", []), "citation")
        new_targets = _by_id(q.get("targets", []), "citation")
        change = QueryChange(
            qid=qid, fields=_changes(before, q, _QUERY_FIELDS),
            targets_added=[c for c in new_targets if c not in old_targets],
            targets_removed=[c for c in old_targets if c not in new_targets],
            targets_changed=[(c, changes) for c, t in new_targets.items() if c in old_targets
                             and (changes := _changes(old_targets[c], t, _TARGET_FIELDS))],
        )
        if before.get("text") != q.get("text"):
            change.old_text, change.new_text = before.get("text", ""), q.get("text", "")
        if change.text_changed or change.fields or change.targets_added or change.targets_removed \
                or change.targets_changed:
            diff.queries_changed.append(change)
    return diff
