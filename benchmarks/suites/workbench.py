"""Edits of a suite draft's document (the suite file being written in the browser). Pure: dict in, dict changed.

The document is a suite file (schema in README.md) as the person wrote it, valid or not: a draft may be
incomplete, and ``suite_normalise`` (through ``services.suite_check``) says what still stops it from freezing.
An edit refuses only what cannot be applied at all (a query that is no longer where the page showed it, a
target nominated twice), naming the query and the field.

Queries and families are addressed by position and the id the page showed there, so a page left open while
the draft changed elsewhere cannot edit the wrong query.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchmarks.suites.citations import citation_parse
from benchmarks.suites.files import KINDS
from scoring.stats.units import unit_support


class DraftEditError(ValueError):
    """An edit that cannot be applied: ``where`` (a query id, family id or "suite"), ``field`` and why."""

    def __init__(self, where: str, field: str, message: str):
        self.where, self.field, self.message = where, field, message
        super().__init__(f"{where}: {field}: {message}")


@dataclass(frozen=True)
class QueryFields:
    id: str
    kind: str
    split: str = ""
    family: str = ""
    text: str = ""
    expected_citation: str = ""


@dataclass(frozen=True)
class FamilyFields:
    id: str
    split: str = ""
    description: str = ""


def _clean(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _list(document: dict[str, Any], key: str) -> list[Any]:
    items = document.get(key)
    if not isinstance(items, list):
        items = document[key] = []
    return items


def _at(document: dict[str, Any], key: str, index: int, expect: str) -> dict[str, Any]:
    items = _list(document, key)
    noun = "query" if key == "queries" else "family"
    if not 0 <= index < len(items) or not isinstance(items[index], dict) \
            or _clean(items[index].get("id")) != expect:
        raise DraftEditError(expect or f"{key}[{index}]", "id",
                             f"{noun} {index + 1} is no longer {expect!r}: the draft changed since this page was "
                             "shown; reload it")
    return items[index]


# ---------------------------------------------------------------------------- the suite's own fields


def header_set(document: dict[str, Any], *, name: str, version: str, corpus: str, description: str,
               nominated_by: str, synthetic: str) -> None:
    """``version`` as typed (a whole number is stored as one; anything else is kept for the validator to name);
    ``synthetic`` is "true", "false" or "" (not declared, so the key is left out)."""
    document["name"] = _clean(name)
    version = _clean(version)
    document["version"] = int(version) if version.isdigit() else version
    document["corpus"] = _clean(corpus)
    document["description"] = _clean(description)
    document["nominated_by"] = _clean(nominated_by)
    if synthetic in ("true", "false"):
        document["synthetic"] = synthetic == "true"
    elif synthetic == "":
        document.pop("synthetic", None)
    else:
        raise DraftEditError("suite", "synthetic", f"must be true, false or not declared, got {synthetic!r}")


# ---------------------------------------------------------------------------- families


def family_add(document: dict[str, Any], fields: FamilyFields) -> None:
    families = _list(document, "families")
    fid = _clean(fields.id)
    if not fid:
        raise DraftEditError("families", "id", "give the new family an id")
    if any(isinstance(f, dict) and _clean(f.get("id")) == fid for f in families):
        raise DraftEditError(fid, "id", "a family with this id already exists")
    families.append({"id": fid, "split": _clean(fields.split), "description": _clean(fields.description)})


def family_save(document: dict[str, Any], *, index: int, expect: str, fields: FamilyFields) -> None:
    """Renaming a family renames it in every query that used it."""
    family = _at(document, "families", index, expect)
    new_id = _clean(fields.id)
    family.update(id=new_id, split=_clean(fields.split), description=_clean(fields.description))
    if new_id and new_id != expect:
        for query in _list(document, "queries"):
            if isinstance(query, dict) and _clean(query.get("family")) == expect:
                query["family"] = new_id


def family_remove(document: dict[str, Any], *, index: int, expect: str) -> None:
    """Queries of a removed family keep its id, so the validator names each of them."""
    _at(document, "families", index, expect)
    del document["families"][index]


# ---------------------------------------------------------------------------- queries


def query_add(document: dict[str, Any], *, qid: str, kind: str) -> None:
    queries = _list(document, "queries")
    qid = _clean(qid)
    if not qid:
        raise DraftEditError("queries", "id", "give the new query an id")
    if kind not in KINDS:
        raise DraftEditError(qid, "kind", f"unknown kind {kind!r}; expected one of {', '.join(KINDS)}")
    if any(isinstance(q, dict) and _clean(q.get("id")) == qid for q in queries):
        raise DraftEditError(qid, "id", "a query with this id already exists")
    queries.append({"id": qid, "kind": kind, "split": "", "family": "", "text": "", "expected_citation": "",
                    "targets": []})


def query_save(document: dict[str, Any], *, index: int, expect: str, fields: QueryFields) -> None:
    query = _at(document, "queries", index, expect)
    query.update(id=_clean(fields.id), kind=_clean(fields.kind), split=_clean(fields.split),
                 family=_clean(fields.family), text=_clean(fields.text),
                 expected_citation=_clean(fields.expected_citation))


def query_remove(document: dict[str, Any], *, index: int, expect: str) -> None:
    _at(document, "queries", index, expect)
    del document["queries"][index]


# ---------------------------------------------------------------------------- targets


def _same_section(a: str, b: str, corpus: str) -> bool:
    if a == b:
        return True
    pa, pb = citation_parse(a, default_corpus=corpus), citation_parse(b, default_corpus=corpus)
    return pa is not None and pb is not None and pa.citation == pb.citation


def target_add(document: dict[str, Any], *, index: int, expect: str, citation: str, note: str = "") -> None:
    """Nominate ``citation`` (as the corpus writes it, or as lawyers do) as a target of the query."""
    query = _at(document, "queries", index, expect)
    citation = _clean(citation)
    if not citation:
        raise DraftEditError(expect, "targets", "give the citation of the provision to nominate")
    targets = query.get("targets")
    if not isinstance(targets, list):
        targets = query["targets"] = []
    corpus = _clean(document.get("corpus"))
    for t_index, target in enumerate(targets):
        given = target.get("citation") if isinstance(target, dict) else target
        if isinstance(given, str) and _same_section(given, citation, corpus):
            raise DraftEditError(expect, f"targets[{t_index}].citation", f"{citation} is already a target")
    target = {"citation": citation}
    if _clean(note):
        target["note"] = _clean(note)
    targets.append(target)


def target_remove(document: dict[str, Any], *, index: int, expect: str, position: int, citation: str) -> None:
    query = _at(document, "queries", index, expect)
    given_targets = query.get("targets")
    targets = given_targets if isinstance(given_targets, list) else []
    target = targets[position] if 0 <= position < len(targets) else None
    given = target.get("citation") if isinstance(target, dict) else target
    if given != citation:
        raise DraftEditError(expect, f"targets[{position}].citation",
                             f"is no longer {citation!r}: the draft changed since this page was shown; reload it")
    del targets[position]


def target_citations(query: dict[str, Any]) -> list[str]:
    """The citations nominated for a query, as written in the draft."""
    given_targets = query.get("targets")
    targets = given_targets if isinstance(given_targets, list) else []
    return [t.get("citation", "") if isinstance(t, dict) else str(t) for t in targets]


SPLIT_LABELS = (("dev", "Development"), ("heldout", "Held-out"))


def split_unit_warnings(document: dict[str, Any]) -> list[str]:
    """What each split's query families will support once frozen (``scoring.stats.units``), in words.

    Intervals and p-values resample a split's topic families: a split of ranking queries in fewer than
    ``MIN_UNITS`` families gets none, one with fewer than ``FEW_UNITS`` gets intervals marked "few units".
    Not a problem that blocks freezing: a small suite is allowed, only told what it will show.
    """
    given_queries = document.get("queries")
    queries = given_queries if isinstance(given_queries, list) else []
    warnings = []
    for split, label in SPLIT_LABELS:
        in_split = [q for q in queries if isinstance(q, dict) and q.get("split") == split
                    and q.get("kind", "ranking") == "ranking"]
        if not in_split:
            continue
        support = unit_support(len({str(q.get("family") or q.get("id")) for q in in_split}), unit="query family")
        if support.has_interval and not support.few:
            continue
        then = ("its figures will have no interval and no p-value; add families to this split for intervals"
                if not support.has_interval else "its intervals will be shown marked as few units")
        warnings.append(f"{label} split: {support.sentence}: {then}.")
    return warnings
