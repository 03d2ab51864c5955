"""Writes of the statute corpora: immutable source snapshots, their provisions and passages, the interactive index."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import date
from functools import partial
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING

from django.db import transaction
from django.utils import timezone

from benchmarks.corpus import ParsedSource, corpus_file
from benchmarks.corpus.formats import ecfr_xml, hrs_json, nrs_html, uslm_xml
from benchmarks.corpus.models import Corpus, CorpusCode, Passage, Provision, SourceSnapshot
from benchmarks.corpus.passages import PASSAGE_RULE, passage_extract
from benchmarks.retrieval.engines import engine_for_connection
from reviewapp.core.records.hashing import sha256_hex, sha256_json

if TYPE_CHECKING:
    import httpx

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
_LIMITS = {"citation": 120, "number": 80, "chapter": 40, "version_label": 100}


def _check_lengths(parsed: ParsedSource, source_key: str) -> None:
    if "\x00" in parsed.title:
        raise ImportProblem(f"{source_key}: the title contains a NUL character (0x00); not a text file")
    for position, p in enumerate(parsed.provisions):
        for name in ("citation", "number", "chapter", "chapter_title", "heading", "body", "history", "notes",
                     "official_url", "version_label"):
            if "\x00" in getattr(p, name):
                raise ImportProblem(f"{source_key}: section {position + 1} ({p.citation[:40]!r}): {name} "
                                    "contains a NUL character (0x00); not a text file")
        for name, limit in _LIMITS.items():
            if len(getattr(p, name)) > limit:
                raise ImportProblem(f"{source_key}: section {position + 1} ({getattr(p, name)[:40]!r}...): "
                                    f"{name} is longer than {limit} characters; not a well-formed section")


def _provision_rows(parsed: ParsedSource, snapshot: SourceSnapshot) -> Iterator[Provision]:
    for position, p in enumerate(parsed.provisions):
        content = {"citation": p.citation, "variant": p.variant, "heading": p.heading, "body": p.body,
                   "history": p.history, "notes": p.notes, "repealed": p.repealed}
        # Only a corpus file gives these: the official parsers' provisions keep the hashes they always had.
        hierarchy = dict(p.hierarchy)
        for key, value in (("as_of", p.as_of), ("version_label", p.version_label), ("hierarchy", hierarchy)):
            if value:
                content[key] = value
        yield Provision(
            snapshot=snapshot, corpus=parsed.corpus, citation=p.citation, number=p.number, variant=p.variant,
            chapter=p.chapter, chapter_title=p.chapter_title[:400], heading=p.heading, body=p.body,
            history=p.history, notes=p.notes, repealed=p.repealed, official_url=p.official_url[:500],
            as_of=date.fromisoformat(p.as_of) if p.as_of else None, version_label=p.version_label,
            hierarchy=hierarchy, position=position, content_sha256=sha256_json(content),
        )


# Provisions written (with their passages) per batch: the rows and INSERT parameters held at once stay this many,
# whatever the size of the file.
WRITE_BATCH = 1000


def passages_ensure(*, provisions: list[Provision], rule: str = PASSAGE_RULE, new: bool = False) -> dict[int, Passage]:
    """The passage of each provision under ``rule``, extracting those not stored yet (``new``: provisions just
    written, which have none, so none is looked up)."""
    existing = {} if new else {p.provision_id: p for p in Passage.objects.filter(provision__in=provisions, rule=rule)}
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
            rows = _provision_rows(parsed, snapshot)
            while batch := list(islice(rows, WRITE_BATCH)):
                passages_ensure(provisions=Provision.objects.bulk_create(batch), new=True)
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
                parse=partial(hrs_json.parse, meta_raw=meta_raw, filename=vol.name),
                parser=(hrs_json.PARSER_NAME, hrs_json.PARSER_VERSION), companion=index.snapshot,
            ))
        return outcomes
    module = nrs_html if fmt == "nrs-html" else uslm_xml
    corpus = "nrs" if fmt == "nrs-html" else "usc"
    for path in files:
        outcomes.append(snapshot_import(
            corpus=corpus, source_key=path.name, raw=path.read_bytes(), retrieved_from=str(path),
            parse=partial(module.parse, filename=path.name),
            parser=(module.PARSER_NAME, module.PARSER_VERSION),
        ))
    return outcomes


# --------------------------------------------------------------------------- corpus files (any code)


CORPUS_FORMATS = ("jsonl", "csv", "ecfr-xml")


def corpus_format(filename: str) -> str:
    """The format of a corpus file by its name: ``ecfr-xml`` for .xml, ``csv`` for .csv, else ``jsonl``."""
    return "ecfr-xml" if filename.lower().endswith(".xml") else corpus_file.file_format(filename)


def corpus_file_import(*, code: str, raw: bytes, filename: str, retrieved_from: str = "",
                       citation_pattern: str = "", citation_form: str = "", fmt: str = "") -> SnapshotOutcome:
    """Import a corpus file (docs/corpus-format.md) or an eCFR XML file as a snapshot of code ``code``, through
    the same snapshot, provision and passage service as the official parsers. A bad line (or element) refuses the
    whole file, naming each line and field (CorpusFileInvalid) or the element and its line (ParseError); so does a
    file that disagrees with the code's first import (its name, jurisdiction or citation pattern).

    ``fmt`` is one of ``CORPUS_FORMATS`` (by default read off the file name). An eCFR file names its own code
    (``cfr`` and the title number) when ``code`` is empty. Without a citation pattern, one is read off the file's
    citations when they share a prefix before the number ("1 CFR 1.1" -> "1 CFR {number}").
    """
    fmt = fmt or corpus_format(filename)
    if fmt not in CORPUS_FORMATS:
        raise ImportProblem(f"unknown corpus format {fmt!r}; expected one of {', '.join(CORPUS_FORMATS)}")
    source_key = Path(filename).name or code
    parser = ((ecfr_xml.PARSER_NAME, ecfr_xml.PARSER_VERSION) if fmt == "ecfr-xml"
              else (corpus_file.PARSER_NAME, corpus_file.PARSER_VERSION))
    # The same bytes again are a no-op, answered before parsing (a 19 MB eCFR file takes seconds to parse).
    same = SourceSnapshot.objects.filter(source_key=source_key, sha256=sha256_hex(raw), parser_name=parser[0],
                                         parser_version=parser[1], companion=None).defer("raw")
    same = same.filter(corpus=code) if code else same.filter(corpus__regex=r"^cfr[0-9]+$") if fmt == "ecfr-xml" \
        else same.none()
    found = same.order_by("id").first()
    if found is not None:
        return SnapshotOutcome(found, False)
    if fmt == "ecfr-xml":
        parsed = ecfr_xml.parse(raw, filename=filename)
        code = code or parsed.corpus
        if (problem := corpus_file.code_id_problem(code)) is not None:
            raise ImportProblem(problem)
        parsed = replace(parsed, corpus=code)
    else:
        parsed = corpus_file.parse(raw, code=code, filename=filename if fmt == corpus_file.file_format(filename)
                                   else f"{filename}.{fmt}")
    if code in Corpus.values:
        raise ImportProblem(f"{code!r} is a built-in code: import its official files with import_statutes")
    if bool(citation_pattern) != bool(citation_form):
        raise ImportProblem("give both a citation pattern and a citation form, or neither")
    if not citation_pattern:
        citation_pattern, citation_form = corpus_file.citation_pattern_derive(parsed)
    if citation_pattern:
        problems = corpus_file.citation_pattern_check(parsed, pattern=citation_pattern, form=citation_form,
                                                      filename=filename)
        if problems:
            raise corpus_file.CorpusFileInvalid(problems, filename=filename)
    with transaction.atomic():
        known, _ = CorpusCode.objects.select_for_update().get_or_create(code=code, defaults={
            "name": parsed.code_name, "jurisdiction": parsed.jurisdiction,
            "citation_pattern": citation_pattern, "citation_form": citation_form,
        })
        for label, mine, theirs in (("code", parsed.code_name, known.name),
                                    ("jurisdiction", parsed.jurisdiction, known.jurisdiction),
                                    ("citation pattern", citation_pattern, known.citation_pattern),
                                    ("citation form", citation_form, known.citation_form)):
            if mine != theirs:
                raise ImportProblem(f"{filename}: {label} {mine!r} differs from {theirs!r}, which the code {code!r} "
                                    "was first imported with; a code's citations and name do not change")
        return snapshot_import(
            corpus=code, source_key=source_key, raw=raw, retrieved_from=retrieved_from or filename,
            parse=lambda _raw: parsed, parser=parser,
        )


def source_fetch(*, url: str, client: httpx.Client | None = None) -> bytes:
    """GET an official page. One request, no retry: a failure is reported to the person who asked."""
    # local import: httpx costs ~75 ms to import; the URL config imports this module, only a fetch needs it
    import httpx

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


