"""Writes of the statute benchmark: snapshots and provisions, frozen suites, retrieval runs."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from django.db import DatabaseError, transaction
from django.utils import timezone

from benchmarks.citations import citation_parse
from benchmarks.corpus import ParsedSource, ParseError, hrs_json, nrs_html, uslm_xml
from benchmarks.models import (
    NominatedTarget,
    Passage,
    Provision,
    QueryFamily,
    QueryKind,
    ResultStatus,
    RetrievalCandidate,
    RetrievalResult,
    RetrievalRun,
    RunStatus,
    SourceSnapshot,
    Suite,
    SuiteQuery,
)
from benchmarks.passages import PASSAGE_RULE, passage_extract
from benchmarks.retrieval import CONFIGURATIONS, engine_for_connection, keyword_search
from benchmarks.selectors import corpus_current_snapshots
from benchmarks.suites import SuiteInvalid, SuiteProblem, suite_load, suite_normalise
from reviewapp.hashing import canonical_json, sha256_hex, sha256_json

FORMATS = ("nrs-html", "hrs-json", "uslm-xml")
HRS_INDEX = "index-meta.json"
HRS_INDEX_PARSER = ("hrs-json-index", "1")
MAX_FETCH_BYTES = 50 * 1024 * 1024


class ImportProblem(ValueError):
    pass


@dataclass(frozen=True)
class SnapshotOutcome:
    snapshot: SourceSnapshot
    created: bool


# --------------------------------------------------------------------------- snapshots


# Column widths of the identifying fields: a longer value is a malformed file, refused with its section named
# (PostgreSQL would otherwise refuse the row mid-import; SQLite would silently store it).
_LIMITS = {"citation": 120, "number": 80, "chapter": 40}


def _check_lengths(parsed: ParsedSource, source_key: str) -> None:
    if "\x00" in parsed.title:
        raise ImportProblem(f"{source_key}: the title contains a NUL character (0x00); not a text file")
    for position, p in enumerate(parsed.provisions):
        for name in ("citation", "number", "chapter", "chapter_title", "heading", "body", "history", "notes",
                     "official_url"):
            if "\x00" in getattr(p, name):
                raise ImportProblem(f"{source_key}: section {position + 1} ({p.citation[:40]!r}): {name} "
                                    "contains a NUL character (0x00); not a text file")
        for name, limit in _LIMITS.items():
            if len(getattr(p, name)) > limit:
                raise ImportProblem(f"{source_key}: section {position + 1} ({getattr(p, name)[:40]!r}...): "
                                    f"{name} is longer than {limit} characters; not a well-formed section")


def _provision_rows(parsed: ParsedSource, snapshot: SourceSnapshot) -> list[Provision]:
    rows = []
    for position, p in enumerate(parsed.provisions):
        content = {"citation": p.citation, "variant": p.variant, "heading": p.heading, "body": p.body,
                   "history": p.history, "notes": p.notes, "repealed": p.repealed}
        rows.append(Provision(
            snapshot=snapshot, corpus=parsed.corpus, citation=p.citation, number=p.number, variant=p.variant,
            chapter=p.chapter, chapter_title=p.chapter_title[:400], heading=p.heading, body=p.body,
            history=p.history, notes=p.notes, repealed=p.repealed, official_url=p.official_url[:500],
            position=position, content_sha256=sha256_json(content),
        ))
    return rows


def passages_ensure(*, provisions: list[Provision], rule: str = PASSAGE_RULE) -> dict[int, Passage]:
    """The passage of each provision under ``rule``, extracting those not stored yet."""
    existing = {p.provision_id: p for p in Passage.objects.filter(provision__in=provisions, rule=rule)}
    missing = []
    for provision in provisions:
        if provision.pk in existing:
            continue
        text = passage_extract(citation=str(provision.citation), heading=provision.heading, body=provision.body)
        missing.append(Passage(provision=provision, rule=text.rule, caption=text.caption, text=text.text,
                               word_count=text.word_count, truncated=text.truncated, sha256=text.sha256))
    for passage in Passage.objects.bulk_create(missing, batch_size=1000):
        existing[passage.provision_id] = passage
    return existing


def snapshot_import(*, corpus: str, source_key: str, raw: bytes, retrieved_from: str,
                    parse: Callable[[bytes], ParsedSource] | None, parser: tuple[str, str],
                    official_url: str = "", companion: SourceSnapshot | None = None) -> SnapshotOutcome:
    """Store one source file and its provisions; identical bytes (same parser) are a no-op.

    ``parse`` is None for a file that carries no sections itself (HRS index-meta).
    """
    digest = sha256_hex(raw)
    existing = SourceSnapshot.objects.filter(
        corpus=corpus, source_key=source_key, sha256=digest, parser_name=parser[0], parser_version=parser[1],
        companion=companion,
    ).first()
    if existing is not None:
        return SnapshotOutcome(existing, False)
    parsed = parse(raw) if parse is not None else None  # parse before writing: a bad file writes nothing
    if parsed is not None:
        _check_lengths(parsed, source_key)
    with transaction.atomic():
        snapshot = SourceSnapshot.objects.create(
            corpus=corpus, source_key=source_key, title=(parsed.title if parsed else source_key)[:300],
            official_url=(parsed.official_url if parsed else official_url)[:500] or official_url,
            retrieved_from=retrieved_from[:1000], retrieved_at=timezone.now(), raw=raw, byte_size=len(raw),
            sha256=digest, parser_name=parser[0], parser_version=parser[1], companion=companion,
            provision_count=len(parsed.provisions) if parsed else 0,
        )
        if parsed:
            provisions = Provision.objects.bulk_create(_provision_rows(parsed, snapshot), batch_size=1000)
            passages_ensure(provisions=provisions)
            engine_for_connection().after_import()
    return SnapshotOutcome(snapshot, True)


def _expand(fmt: str, paths: list[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            if fmt == "nrs-html":
                files += sorted(path.glob("NRS-*.html"))
            elif fmt == "hrs-json":
                files += sorted(path.glob("Vol*.json"))
            else:
                files += sorted(path.glob("*.xml"))
        elif path.is_file():
            files.append(path)
        else:
            raise ImportProblem(f"{path}: no such file or directory")
    return files


def statutes_import(*, fmt: str, paths: list[Path], hrs_index: Path | None = None) -> list[SnapshotOutcome]:
    """Import official statute files of one format (directories are expanded).

    One transaction for the whole call: a bad file anywhere leaves nothing of the call behind
    (not even the HRS index snapshot stored before a volume that fails to parse).
    """
    if fmt not in FORMATS:
        raise ImportProblem(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    with transaction.atomic():
        return _statutes_import(fmt=fmt, files=_expand(fmt, paths), hrs_index=hrs_index)


def _statutes_import(*, fmt: str, files: list[Path], hrs_index: Path | None) -> list[SnapshotOutcome]:
    outcomes: list[SnapshotOutcome] = []
    if fmt == "hrs-json":
        volumes = [f for f in files if f.name != HRS_INDEX]
        index_path = hrs_index or next((f for f in files if f.name == HRS_INDEX), None)
        if index_path is None and volumes:
            index_path = volumes[0].parent / HRS_INDEX
        if index_path is None or not index_path.is_file():
            raise ImportProblem(f"HRS volumes need {HRS_INDEX} (numbers and headings); not found at {index_path}")
        meta_raw = index_path.read_bytes()
        index = snapshot_import(corpus="hrs", source_key=HRS_INDEX, raw=meta_raw, retrieved_from=str(index_path),
                                parse=None, parser=HRS_INDEX_PARSER, official_url=hrs_json.OFFICIAL_BASE)
        outcomes.append(index)
        for vol in volumes:
            outcomes.append(snapshot_import(
                corpus="hrs", source_key=vol.name, raw=vol.read_bytes(), retrieved_from=str(vol),
                parse=lambda raw, name=vol.name: hrs_json.parse(raw, meta_raw=meta_raw, filename=name),
                parser=(hrs_json.PARSER_NAME, hrs_json.PARSER_VERSION), companion=index.snapshot,
            ))
        return outcomes
    module = nrs_html if fmt == "nrs-html" else uslm_xml
    corpus = "nrs" if fmt == "nrs-html" else "usc"
    for path in files:
        outcomes.append(snapshot_import(
            corpus=corpus, source_key=path.name, raw=path.read_bytes(), retrieved_from=str(path),
            parse=lambda raw, name=path.name: module.parse(raw, filename=name),
            parser=(module.PARSER_NAME, module.PARSER_VERSION),
        ))
    return outcomes


def source_fetch(*, url: str, client: httpx.Client | None = None) -> bytes:
    """GET an official page. One request, no retry: a failure is reported to the person who asked."""
    own = client is None
    client = client or httpx.Client(timeout=60, follow_redirects=True,
                                    headers={"User-Agent": "legal-eval statute snapshot"})
    try:
        response = client.get(url)
        response.raise_for_status()
        if len(response.content) > MAX_FETCH_BYTES:
            raise ImportProblem(f"{url}: {len(response.content)} bytes is more than {MAX_FETCH_BYTES}")
        return response.content
    except httpx.HTTPError as exc:
        raise ImportProblem(f"{url}: fetch failed ({exc})") from exc
    finally:
        if own:
            client.close()


def statutes_import_url(*, fmt: str, url: str, hrs_index_url: str = "",
                        client: httpx.Client | None = None) -> list[SnapshotOutcome]:
    """Snapshot an official URL through the same parser as the files."""
    if fmt not in FORMATS:
        raise ImportProblem(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    raw = source_fetch(url=url, client=client)
    key = url.rstrip("/").rsplit("/", 1)[-1] or url
    if fmt == "hrs-json":
        if not hrs_index_url:
            raise ImportProblem("an HRS volume URL needs --hrs-index URL of index-meta.json")
        meta_raw = source_fetch(url=hrs_index_url, client=client)
        with transaction.atomic():  # a volume that fails to parse leaves no index snapshot behind
            index = snapshot_import(corpus="hrs", source_key=HRS_INDEX, raw=meta_raw, retrieved_from=hrs_index_url,
                                    parse=None, parser=HRS_INDEX_PARSER, official_url=hrs_index_url)
            return [index, snapshot_import(
                corpus="hrs", source_key=key, raw=raw, retrieved_from=url,
                parse=lambda r: hrs_json.parse(r, meta_raw=meta_raw, filename=key),
                parser=(hrs_json.PARSER_NAME, hrs_json.PARSER_VERSION), companion=index.snapshot,
            )]
    module = nrs_html if fmt == "nrs-html" else uslm_xml
    return [snapshot_import(
        corpus="nrs" if fmt == "nrs-html" else "usc", source_key=key, raw=raw, retrieved_from=url,
        parse=lambda r: module.parse(r, filename=key), parser=(module.PARSER_NAME, module.PARSER_VERSION),
    )]


def search_index_rebuild() -> None:
    """Rebuild the keyword index from the provisions table; safe to run any number of times."""
    engine_for_connection().rebuild()


# --------------------------------------------------------------------------- suites


def suite_import(*, raw: bytes, filename: str = "", frozen_by: str = "") -> tuple[Suite, bool]:
    """Validate and freeze a suite file. The same definition again is a no-op; a different one
    under an existing name and version is refused (make a new version)."""
    data = suite_load(raw, filename=filename)
    corpus = data.get("corpus")
    snapshots = corpus_current_snapshots(corpus=corpus) if isinstance(corpus, str) else []
    if isinstance(corpus, str) and not snapshots:
        raise SuiteInvalid([SuiteProblem("suite", "corpus", f"no snapshots of corpus {corpus!r} imported yet")])
    provisions = Provision.objects.filter(snapshot__in=snapshots).order_by("citation", "variant", "id")
    by_citation: dict[str, Provision] = {}
    for provision in provisions:
        by_citation.setdefault(provision.citation, provision)
    definition = suite_normalise(data, known_citations=set(by_citation))
    digest = sha256_hex(canonical_json(definition))
    existing = Suite.objects.filter(name=definition["name"], version=definition["version"]).first()
    if existing is not None:
        if existing.sha256 == digest:
            return existing, False
        raise SuiteInvalid([SuiteProblem(
            "suite", "version",
            f"{existing} is frozen with sha256 {existing.sha256[:12]}…; this file differs "
            f"({digest[:12]}…). Frozen suites are never edited: give the changed suite a new version.",
        )])
    with transaction.atomic():
        suite = Suite.objects.create(
            name=definition["name"], version=definition["version"], corpus=definition["corpus"],
            description=definition["description"], definition=canonical_json(definition).decode("utf-8"),
            sha256=digest, sources_sha256=sha256_json(sorted(s.sha256 for s in snapshots)),
            source_filename=Path(filename).name if filename else "", frozen_at=timezone.now(),
            frozen_by=frozen_by,
        )
        suite.snapshots.set(snapshots)
        families = {
            f["id"]: QueryFamily.objects.create(suite=suite, name=f["id"], description=f["description"],
                                                split=f["split"] or _family_split(definition, f["id"]))
            for f in definition["families"]
        }
        for position, q in enumerate(definition["queries"]):
            query = SuiteQuery.objects.create(
                suite=suite, qid=q["id"], text=q["text"], kind=q["kind"], split=q["split"],
                family=families.get(q["family"]), expected_citation=q["expected_citation"],
                expected_provision=by_citation.get(q["expected_citation"]) if q["expected_citation"] else None,
                position=position, text_sha256=sha256_json({"id": q["id"], "text": q["text"]}),
            )
            NominatedTarget.objects.bulk_create([
                NominatedTarget(query=query, citation=t["citation"], provision=by_citation[t["citation"]],
                                provisional=t["provisional"], nominated_by=t["nominated_by"], note=t["note"])
                for t in q["targets"]
            ])
    return suite, True


def _family_split(definition: dict[str, Any], family: str) -> str:
    return next((q["split"] for q in definition["queries"] if q["family"] == family and q["split"]), "")


# --------------------------------------------------------------------------- retrieval


def _keyword_status(*, k: int, primary: int, total: int) -> str:
    if primary >= k:
        return ResultStatus.OK
    if total >= k:
        return ResultStatus.FALLBACK
    return ResultStatus.SHORT


def retrieval_run_create(*, suite: Suite, configuration: str = "keyword-v1", k: int = 30,
                         user: Any = None) -> RetrievalRun:
    """Retrieve k keyword candidates for every query of a frozen suite and record the run.

    Exact-citation controls go through the citation parser (no search, no model).
    A query whose search fails is recorded as failed with the error, never dropped.
    """
    if configuration not in CONFIGURATIONS:
        raise ValueError(f"unknown configuration {configuration!r}; expected one of {', '.join(CONFIGURATIONS)}")
    if not 1 <= k <= 200:
        raise ValueError("k must be between 1 and 200")
    engine = engine_for_connection()
    config = CONFIGURATIONS[configuration]
    run = RetrievalRun.objects.create(
        suite=suite, engine=engine.name, configuration=config.name, configuration_detail=config.detail(engine),
        k=k, passage_rule=PASSAGE_RULE, index_documents=engine.index_size(), status=RunStatus.RUNNING,
        created_by=user if getattr(user, "is_authenticated", False) else None, started_at=timezone.now(),
    )
    try:
        _retrieval_run_fill(run=run, suite=suite, config=config, engine=engine, k=k)
    except Exception as exc:
        # The run row stays, marked failed with the reason: failures are disclosed, not hidden.
        RetrievalRun.objects.filter(pk=run.pk).update(status=RunStatus.FAILED, error=f"{type(exc).__name__}: {exc}",
                                                      finished_at=timezone.now())
        run.refresh_from_db()
    return run


def _retrieval_run_fill(*, run: RetrievalRun, suite: Suite, config, engine, k: int) -> None:
    snapshot_ids = sorted(suite.snapshots.values_list("id", flat=True))
    queries = list(suite.queries.prefetch_related("targets").order_by("position"))
    planned: list[tuple[SuiteQuery, dict[str, Any], list[tuple[int, float, bool]]]] = []
    for query in queries:
        started = time.perf_counter()
        fields: dict[str, Any] = {}
        hits: list[tuple[int, float, bool]] = []
        if query.kind == QueryKind.EXACT_CITATION:
            parsed = citation_parse(query.text)
            fields["method"] = "citation-parser"
            fields["parsed_citation"] = parsed.citation if parsed else ""
            provision = (
                Provision.objects.filter(snapshot_id__in=snapshot_ids, citation=parsed.citation)
                .order_by("variant", "id").first() if parsed else None
            )
            if provision is not None:
                hits = [(provision.pk, 1.0, False)]
                fields["status"] = ResultStatus.RESOLVED
            else:
                fields["status"] = ResultStatus.UNRESOLVED
                fields["error"] = "no citation found in the text" if parsed is None else (
                    f"{parsed.citation} is not in the suite's snapshots")
        else:
            fields["method"] = "keyword"
            try:
                with transaction.atomic():  # a savepoint: a failed statement must not poison the run
                    outcome = keyword_search(text=query.text, snapshot_ids=snapshot_ids, k=k,
                                             configuration=config, engine=engine)
            except DatabaseError as exc:
                fields.update(status=ResultStatus.FAILED, error=f"{type(exc).__name__}: {exc}")
            else:
                hits = [(h.provision_id, h.score, h.via_fallback) for h in outcome.hits]
                fields.update(
                    status=_keyword_status(k=k, primary=outcome.primary_count, total=len(hits)),
                    primary_expression=outcome.primary_expression, primary_count=outcome.primary_count,
                    fallback_used=outcome.fallback_used, fallback_expression=outcome.fallback_expression,
                    fallback_count=outcome.fallback_count,
                )
                if not hits:
                    fields["error"] = "the question has no searchable words" if not outcome.primary_expression \
                        else "no provision matched"
        fields["elapsed_ms"] = (time.perf_counter() - started) * 1000
        planned.append((query, fields, hits))

    provision_ids = {pid for _, _, hits in planned for pid, _, _ in hits}
    provisions = {p.pk: p for p in Provision.objects.filter(pk__in=provision_ids)}
    passages = passages_ensure(provisions=list(provisions.values()), rule=run.passage_rule)
    fingerprint = []
    with transaction.atomic():
        for query, fields, hits in planned:
            targets = [t.citation for t in query.targets.all()]
            found_citations = {provisions[pid].citation for pid, _, _ in hits}
            found = [c for c in targets if c in found_citations]
            result = RetrievalResult.objects.create(
                run=run, query=query, targets_total=len(targets), targets_found=found,
                coverage=(len(found) / len(targets)) if targets else None, **fields,
            )
            RetrievalCandidate.objects.bulk_create([
                RetrievalCandidate(result=result, rank=rank, provision_id=pid, passage=passages[pid], score=score,
                                   via_fallback=via_fallback)
                for rank, (pid, score, via_fallback) in enumerate(hits, start=1)
            ])
            fingerprint.append([query.qid, [provisions[pid].docid for pid, _, _ in hits]])
        RetrievalRun.objects.filter(pk=run.pk).update(
            status=RunStatus.DONE, finished_at=timezone.now(), candidates_sha256=sha256_json(fingerprint),
        )
    run.refresh_from_db()


__all__ = [
    "FORMATS",
    "ImportProblem",
    "ParseError",
    "SnapshotOutcome",
    "passages_ensure",
    "retrieval_run_create",
    "search_index_rebuild",
    "snapshot_import",
    "source_fetch",
    "statutes_import",
    "statutes_import_url",
    "suite_import",
]
