"""Suite files: parse, validate and normalise (schema in benchmarks/suites/README.md).

Pure except for the lookup of target citations, which the caller passes in as
a set. Every problem is reported with the query id (or "suite") and the field,
and all problems are reported at once; nothing is written unless there are none.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

import yaml

from benchmarks.suites.citations import CodePattern, citation_parse
from reviewapp.core.records.storable import contains_nul

KINDS = ("ranking", "outside_corpus", "exact_citation")
SPLITS = ("dev", "heldout")
CORPORA = ("nrs", "hrs", "usc")
DEFAULT_NOMINATOR = "assistant (not a lawyer)"
# How lawyers came to confirm a target (benchmarks.suites.confirmation): all who graded it said yes, or an
# adjudicator ruled after they disagreed.
AGREEMENTS = ("unanimous", "adjudicated")
MAX_VERSION = 2_147_483_647  # the largest value every supported database stores in Suite.version
# A suite file is data a person typed: the largest real one is a few hundred KB. Past these limits (or with a
# YAML alias, which is how a few hundred bytes expand to gigabytes) the file is refused before it is built.
MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_YAML_NODES = 200_000


@dataclass(frozen=True)
class SuiteProblem:
    where: str  # a query id, a family id, or "suite"
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.field}: {self.message}"


class SuiteInvalid(ValueError):
    def __init__(self, problems: list[SuiteProblem], *, filename: str = ""):
        self.problems = problems
        self.filename = filename
        head = f"suite {filename} rejected" if filename else "suite rejected"
        super().__init__(head + ":\n" + "\n".join(f"  - {p}" for p in problems))

    def with_filename(self, filename: str) -> SuiteInvalid:
        """The same problems, naming the file they were found in."""
        return SuiteInvalid(self.problems, filename=filename) if filename and not self.filename else self


class _Refused(yaml.YAMLError):
    pass


class _DataOnlyLoader(yaml.SafeLoader):
    """``SafeLoader`` that refuses anchors and aliases and stops counting past ``MAX_YAML_NODES`` nodes.

    The check runs on parser events, before any node is composed, so an alias bomb costs the few events it
    is written in.
    """

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._nodes = 0

    def _where(self, event: yaml.Event) -> str:
        mark = event.start_mark
        return f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "somewhere"

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            raise _Refused(f"YAML alias *{event.anchor} at {self._where(event)}: aliases and anchors are refused "
                           "in suite files (write the value out)")
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            raise _Refused(f"YAML anchor &{anchor} at {self._where(event)}: aliases and anchors are refused "
                           "in suite files (write the value out)")
        self._nodes += 1
        if self._nodes > MAX_YAML_NODES:
            raise _Refused(f"more than {MAX_YAML_NODES} YAML nodes (at {self._where(event)}): too large for a "
                           "suite file")
        return super().compose_node(parent, index)


def _yaml_load(text: str) -> Any:
    loader = _DataOnlyLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def suite_load(raw: bytes, *, filename: str = "") -> dict[str, Any]:
    """JSON, or YAML for .yaml/.yml files (plain data: no anchors or aliases), at most ``MAX_FILE_BYTES``."""
    if len(raw) > MAX_FILE_BYTES:
        raise SuiteInvalid([SuiteProblem("suite", "file", f"{len(raw)} bytes; a suite file is at most "
                                                          f"{MAX_FILE_BYTES} bytes")])
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SuiteInvalid([SuiteProblem("suite", "file", f"not UTF-8 ({exc})")]) from exc
    try:
        data = _yaml_load(text) if filename.endswith((".yaml", ".yml")) else json.loads(text)
    except _Refused as exc:
        raise SuiteInvalid([SuiteProblem("suite", "file", str(exc))]) from None
    except (json.JSONDecodeError, yaml.YAMLError, RecursionError) as exc:
        raise SuiteInvalid([SuiteProblem("suite", "file", f"cannot be read: {exc}")]) from exc
    if not isinstance(data, dict):
        raise SuiteInvalid([SuiteProblem("suite", "file", "top level must be an object")])
    if contains_nul(data):
        raise SuiteInvalid([SuiteProblem("suite", "file", "contains a NUL character (\\u0000)")])
    return data


# The order a person reads a suite file in (canonical JSON sorts keys; an export need not, since the hash is
# taken of the normalised definition, whatever the order of the file).
_KEY_ORDER = {
    "suite": ("name", "version", "corpus", "description", "nominated_by", "synthetic", "families", "queries"),
    "family": ("id", "split", "description"),
    "query": ("id", "kind", "split", "family", "text", "expected_citation", "targets"),
    "target": ("citation", "provisional", "nominated_by", "note", "confirmed_by", "claimed_confirmed_by"),
}


def _ordered(obj: dict[str, Any], kind: str) -> dict[str, Any]:
    order = _KEY_ORDER[kind]
    return {**{k: obj[k] for k in order if k in obj}, **{k: v for k, v in obj.items() if k not in order}}


def suite_dump(definition: dict[str, Any], *, fmt: str) -> bytes:
    """A normalised definition as a suite file (``json`` or ``yaml``) that ``suite_load`` reads back to it."""
    readable = _ordered(definition, "suite")
    readable["families"] = [_ordered(f, "family") for f in definition.get("families", [])]
    readable["queries"] = [
        {**_ordered(q, "query"), "targets": [_ordered(t, "target") for t in q.get("targets", [])]}
        for q in definition.get("queries", [])
    ]
    if fmt == "json":
        return (json.dumps(readable, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
    if fmt == "yaml":
        # safe_dump quotes every string YAML would otherwise read as another type ("no", "1.510", "0"), so
        # the file loads back to the same strings.
        return yaml.safe_dump(readable, sort_keys=False, allow_unicode=True, width=100).encode("utf-8")
    raise ValueError(f"unknown suite file format {fmt!r}; expected json or yaml")


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _canonical(citation: str, *, corpus: Any, known: set[str] | None, code: CodePattern | None = None) -> str:
    """``citation`` as given when it is already known (or nothing is known); else the
    corpus form the citation parser reads in it, when that is a citation of the suite's corpus."""
    if known is not None and citation in known:
        return citation
    parsed = citation_parse(citation, default_corpus=corpus if isinstance(corpus, str) else "", code=code)
    if parsed is None or parsed.corpus != corpus:
        return citation
    if known is None or parsed.citation in known:
        return parsed.citation
    return citation


def _confirmed_by(value: Any) -> dict[str, Any] | str:
    """The normalised ``confirmed_by`` of a target, or the problem with it."""
    if not isinstance(value, dict) or set(value) != {"lawyers", "agreement"}:
        return "must be an object with exactly 'lawyers' and 'agreement'"
    lawyers, agreement = value["lawyers"], value["agreement"]
    if not isinstance(lawyers, int) or isinstance(lawyers, bool) or lawyers < 1:
        return f"lawyers must be a positive whole number, got {lawyers!r}"
    if agreement not in AGREEMENTS:
        return f"agreement must be one of {', '.join(AGREEMENTS)}, got {agreement!r}"
    return {"lawyers": lawyers, "agreement": agreement}


@dataclass
class _Reading:
    """One reading of a suite file: what its checks need to know, and every problem found so far."""

    known: set[str] | None
    code: CodePattern | None
    trust_confirmations: bool
    corpus: Any = None
    nominator: str = DEFAULT_NOMINATOR
    problems: list[SuiteProblem] = field(default_factory=list)

    def bad(self, where: str, at: str, message: str) -> None:
        self.problems.append(SuiteProblem(where, at, message))

    def canonical(self, citation: str) -> str:
        return _canonical(citation, corpus=self.corpus, known=self.known, code=self.code)


def suite_normalise(
    data: dict[str, Any], *, known_citations: set[str] | None, trust_confirmations: bool = False,
    corpora: Collection[str] = CORPORA, code: CodePattern | None = None,
) -> dict[str, Any]:
    """Validated canonical form of a suite file; raises SuiteInvalid listing every problem.

    ``trust_confirmations`` is for the confirmation service only (``benchmarks.suites.confirmation``), whose
    ``confirmed_by`` records lawyers' judgments made here; a file's ``confirmed_by`` is otherwise a claim.

    ``known_citations`` is the set of citations in the pinned corpus snapshots
    (None skips that check, e.g. to lint a file without a database). ``corpora`` are the codes a suite may be
    written on (the built-in ones, and the codes imported from corpus files), ``code`` how the citations of the
    suite's code are read when it was imported from a corpus file. A target or expected
    citation written as lawyers do ("N.R.S. 432B.220(4)", "Nev. Rev. Stat. § 432B.220") is
    stored in the corpus's own form when the citation parser reads it.

    An exact-citation control whose text the parser cannot read is kept: the retrieval run
    reports it as an unresolved (failed) control with the reason. A target or expected
    citation that cannot be read, or is not in the snapshots, refuses the file.
    """
    reading = _Reading(known=known_citations, code=code, trust_confirmations=trust_confirmations)
    header = _suite_header(data, corpora, reading)
    families = _suite_families(data, reading)
    queries = _suite_queries(data, families, reading)
    if reading.problems:
        raise SuiteInvalid(reading.problems)
    normalised = {
        **header,
        "description": _text(data.get("description")),
        "nominated_by": reading.nominator,
        "families": list(families.values()),
        "queries": queries,
    }
    # Only a file that declares the flag carries it, so every suite frozen before the flag existed
    # keeps its canonical definition and its sha256.
    if data.get("synthetic") is not None:
        normalised["synthetic"] = data["synthetic"]
    return normalised


def _suite_header(data: dict[str, Any], corpora: Collection[str], reading: _Reading) -> dict[str, Any]:
    """The suite's name, version and corpus (and, on ``reading``, its corpus and default nominator)."""
    name = _text(data.get("name"))
    if not name:
        reading.bad("suite", "name", "required (a non-empty string)")
    elif len(name) > 100:
        reading.bad("suite", "name", "at most 100 characters")
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= MAX_VERSION:
        reading.bad("suite", "version", f"required (a positive integer up to {MAX_VERSION})")
    corpus = data.get("corpus")
    if not isinstance(corpus, str) or corpus not in corpora:
        reading.bad("suite", "corpus", f"must be one of {', '.join(corpora)}, got {corpus!r}")
    reading.corpus = corpus
    reading.nominator = _text(data.get("nominated_by")) or DEFAULT_NOMINATOR
    synthetic = data.get("synthetic")
    if synthetic is not None and not isinstance(synthetic, bool):
        reading.bad("suite", "synthetic", f"must be true or false when given, got {synthetic!r}")
    if len(reading.nominator) > 150:
        reading.bad("suite", "nominated_by", "at most 150 characters")
    return {"name": name, "version": version, "corpus": corpus}


def _suite_families(data: dict[str, Any], reading: _Reading) -> dict[str, dict[str, Any]]:
    """The declared topic families by id, in file order."""
    families: dict[str, dict[str, Any]] = {}
    raw_families = data.get("families", [])
    if not isinstance(raw_families, list):
        reading.bad("suite", "families", "must be a list")
        raw_families = []
    for index, fam in enumerate(raw_families):
        fid = _text(fam.get("id")) if isinstance(fam, dict) else ""
        where = fid or f"families[{index}]"
        if not fid:
            reading.bad(where, "id", "required")
            continue
        if fid in families:
            reading.bad(where, "id", "duplicate family id")
            continue
        if len(fid) > 100:
            reading.bad(where, "id", "at most 100 characters")
        split = fam.get("split", "")
        if split and split not in SPLITS:
            reading.bad(where, "split", f"must be one of {', '.join(SPLITS)}, got {split!r}")
        families[fid] = {"id": fid, "split": split or "", "description": _text(fam.get("description"))}
    return families


def _suite_queries(data: dict[str, Any], families: dict[str, dict[str, Any]],
                   reading: _Reading) -> list[dict[str, Any]]:
    """Every query, checked alone and against the others (unique ids, one split per family)."""
    queries: list[dict[str, Any]] = []
    seen_ids: set[str] = set()
    family_split: dict[str, tuple[str, str]] = {}  # family -> (split, first query id)
    raw_queries = data.get("queries")
    if not isinstance(raw_queries, list) or not raw_queries:
        reading.bad("suite", "queries", "required (a non-empty list)")
        raw_queries = []
    for index, q in enumerate(raw_queries):
        if not isinstance(q, dict):
            reading.bad(f"queries[{index}]", "query", "must be an object")
            continue
        qid = _text(q.get("id"))
        where = qid or f"queries[{index}]"
        if not qid:
            reading.bad(where, "id", "required")
        elif qid in seen_ids:
            reading.bad(where, "id", "duplicate query id")
        elif len(qid) > 60:
            reading.bad(where, "id", "at most 60 characters")
        seen_ids.add(qid)
        text = _text(q.get("text"))
        if not text:
            reading.bad(where, "text", "required")
        kind = q.get("kind")
        if kind not in KINDS:
            reading.bad(where, "kind", f"unknown kind {kind!r}; expected one of {', '.join(KINDS)}")
        split = q.get("split") or ""
        if split and split not in SPLITS:
            reading.bad(where, "split", f"unknown split {split!r}; expected one of {', '.join(SPLITS)}")
        if kind == "ranking" and not split:
            reading.bad(where, "split", "required for a ranking query")
        family = _text(q.get("family"))
        _query_family(family, where=where, qid=qid, kind=kind, split=split, families=families,
                      family_split=family_split, reading=reading)
        targets = _query_targets(q, where=where, kind=kind, reading=reading)
        expected = _query_expected(q, where=where, kind=kind, reading=reading)
        queries.append({
            "id": qid, "text": text, "kind": kind, "split": split, "family": family,
            "targets": targets, "expected_citation": expected,
        })
    return queries


def _query_family(family: str, *, where: str, qid: str, kind: Any, split: str, families: dict[str, dict[str, Any]],
                  family_split: dict[str, tuple[str, str]], reading: _Reading) -> None:
    """A query's family is declared, agrees with the query's split, and no family crosses splits."""
    if not family:
        if kind == "ranking":
            reading.bad(where, "family", "required for a ranking query")
        return
    if family not in families:
        reading.bad(where, "family", f"unknown family {family!r} (declare it under 'families')")
        return
    declared = families[family]["split"]
    if declared and split and declared != split:
        reading.bad(where, "family", f"family {family!r} is declared {declared} but this query is {split}")
    if split:
        first = family_split.setdefault(family, (split, qid))
        if first[0] != split:
            reading.bad(where, "family",
                        f"family {family!r} used in both {first[0]} ({first[1]}) and {split}; "
                        "topic families must not cross splits")


def _query_targets(q: dict[str, Any], *, where: str, kind: Any, reading: _Reading) -> list[dict[str, Any]]:
    """A ranking query's nominated targets, each once, each in the corpus snapshot."""
    targets: list[dict[str, Any]] = []
    raw_targets = q.get("targets", [])
    if not isinstance(raw_targets, list):
        reading.bad(where, "targets", "must be a list")
        raw_targets = []
    if kind == "ranking" and not raw_targets:
        reading.bad(where, "targets", "a ranking query needs at least one nominated target")
    if kind != "ranking" and raw_targets:
        reading.bad(where, "targets", f"only ranking queries carry nominated targets (kind is {kind!r})")
    seen_targets: set[str] = set()
    for t_index, target in enumerate(raw_targets):
        if isinstance(target, str):
            target = {"citation": target}
        citation = _text(target.get("citation")) if isinstance(target, dict) else ""
        at = f"targets[{t_index}].citation"
        if not citation:
            reading.bad(where, at, "required")
            continue
        citation = reading.canonical(citation)
        if citation in seen_targets:
            reading.bad(where, at, f"{citation} nominated twice")
            continue
        seen_targets.add(citation)
        if reading.known is not None and citation not in reading.known:
            reading.bad(where, at, f"{citation} is not in the {reading.corpus} corpus snapshot")
        targets.append(_target(target, citation, where=where, at=f"targets[{t_index}]", reading=reading))
    return targets


def _target(target: dict[str, Any], citation: str, *, where: str, at: str, reading: _Reading) -> dict[str, Any]:
    """One nominated target in canonical form: who nominated it, and whether lawyers confirmed it here."""
    provisional = target.get("provisional", True)
    if not isinstance(provisional, bool):
        reading.bad(where, f"{at}.provisional", "must be true or false")
    if len(_text(target.get("nominated_by"))) > 150:
        reading.bad(where, f"{at}.nominated_by", "at most 150 characters")
    normalised = {
        "citation": citation,
        "provisional": provisional is not False,
        "nominated_by": _text(target.get("nominated_by")) or reading.nominator,
        "note": _text(target.get("note")),
    }
    # Only a confirmed target carries the key, so every suite frozen before confirmation existed keeps
    # its canonical definition and its sha256. A file's word that lawyers confirmed a target is a claim:
    # only confirmations made in this install (``trust_confirmations``) make it confirmed; otherwise it
    # is kept, shown and exported as ``claimed_confirmed_by`` and the target stays provisional.
    for key in ("confirmed_by", "claimed_confirmed_by"):
        if key not in target:
            continue
        confirmed = _confirmed_by(target[key])
        if isinstance(confirmed, str):
            reading.bad(where, f"{at}.{key}", confirmed)
        elif key == "confirmed_by" and reading.trust_confirmations:
            if provisional is not False:
                reading.bad(where, f"{at}.provisional", "a confirmed target is not provisional (false)")
            normalised["confirmed_by"] = confirmed
        else:
            if "confirmed_by" not in normalised:
                normalised["provisional"] = True
            normalised["claimed_confirmed_by"] = confirmed
    return normalised


def _query_expected(q: dict[str, Any], *, where: str, kind: Any, reading: _Reading) -> str:
    """An exact-citation control's expected citation (canonical when the parser reads it)."""
    expected = _text(q.get("expected_citation"))
    if kind == "exact_citation":
        if not expected:
            reading.bad(where, "expected_citation", "required for an exact-citation control")
        else:
            expected = reading.canonical(expected)
            if reading.known is not None and expected not in reading.known:
                reading.bad(where, "expected_citation", f"{expected} is not in the {reading.corpus} corpus snapshot")
        # A text the parser cannot read is not refused: the control is what measures the
        # parser, so its failure is reported by the retrieval run (status unresolved).
    elif expected:
        reading.bad(where, "expected_citation", f"only exact-citation controls carry one (kind is {kind!r})")
    return expected
