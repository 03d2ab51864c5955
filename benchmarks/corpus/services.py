"""Writes of the statute corpora: immutable source snapshots, their provisions and passages, the interactive index."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from django.db import transaction
from django.utils import timezone

from benchmarks.corpus import ParsedProvision, ParsedSource, bulk, corpus_file
from benchmarks.corpus.base import SourceHead, SourceItem, source_items
from benchmarks.corpus.formats import ecfr_xml, hrs_json, nrs_html, uslm_xml
from benchmarks.corpus.models import Corpus, CorpusCode, Passage, Provision, SourceSnapshot
from benchmarks.corpus.passages import PASSAGE_RULE, passage_extract
from benchmarks.retrieval.engines import engine_for_connection

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
_TEXTS = ("citation", "number", "chapter", "chapter_title", "heading", "body", "history", "notes", "official_url",
          "version_label")


def _check_lengths(p: ParsedProvision, position: int, source_key: str) -> None:
    for name in _TEXTS:
        if "\x00" in getattr(p, name):
            raise ImportProblem(f"{source_key}: section {position + 1} ({p.citation[:40]!r}): {name} "
                                "contains a NUL character (0x00); not a text file")
    for name, limit in _LIMITS.items():
        if len(getattr(p, name)) > limit:
            raise ImportProblem(f"{source_key}: section {position + 1} ({getattr(p, name)[:40]!r}...): "
                                f"{name} is longer than {limit} characters; not a well-formed section")


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


# A file to import: its bytes, or an open binary file (read in chunks, never whole).
Raw = bytes | BinaryIO
# What reads a file: a parser's stream (``benchmarks.corpus.base``) or, from tests, a source held whole.
Reader = Callable[[BinaryIO], ParsedSource | Iterable[SourceItem]]


def _opened(raw: Raw) -> BinaryIO:
    return io.BytesIO(raw) if isinstance(raw, (bytes, bytearray)) else raw


def _items(read: Reader, source: BinaryIO) -> Iterator[SourceItem]:
    found = read(source)
    return source_items(found) if isinstance(found, ParsedSource) else iter(found)


def snapshot_import(*, corpus: str, source_key: str, raw: Raw, retrieved_from: str, parse: Reader | None,
                    parser: tuple[str, str], official_url: str = "", companion: SourceSnapshot | None = None,
                    finish: Callable[[SourceSnapshot, SourceHead], None] | None = None) -> SnapshotOutcome:
    """Store one source file and its provisions; identical bytes (same parser) are a no-op.

    The file is read section by section and written in batches (``benchmarks.corpus.bulk``): its bytes are
    hashed and stored in chunks, never held whole, and at most ``WRITE_BATCH`` provisions are held at once. All
    of it happens in one transaction, so an import that fails midway (a bad section, a parse error at the end
    of the file, ``finish`` refusing it) leaves nothing behind and nobody sees a half-written snapshot.

    ``parse`` is None for a file that carries no sections itself (HRS index-meta). ``corpus`` empty: the code the
    parser's head names. ``finish`` runs last, in the transaction, on the written snapshot (a corpus file's
    checks of its citations).
    """
    source = _opened(raw)
    digest, size = bulk.file_digest(source)
    if corpus:
        existing = SourceSnapshot.objects.filter(
            corpus=corpus, source_key=source_key, sha256=digest, parser_name=parser[0], parser_version=parser[1],
            companion=companion,
        ).defer("raw").first()
        if existing is not None:
            return SnapshotOutcome(existing, False)
    items = _items(parse, source) if parse is not None else iter(())
    try:
        return _snapshot_write(items, corpus=corpus, source_key=source_key, source=source, digest=digest, size=size,
                               retrieved_from=retrieved_from, parser=parser, official_url=official_url,
                               companion=companion, finish=finish)
    finally:
        # A reading stopped midway lets go of its file now, while the file is still open.
        close = getattr(items, "close", None)
        if close is not None:
            close()


def _snapshot_write(items: Iterator[SourceItem], *, corpus: str, source_key: str, source: BinaryIO, digest: str,
                    size: int, retrieved_from: str, parser: tuple[str, str], official_url: str,
                    companion: SourceSnapshot | None,
                    finish: Callable[[SourceSnapshot, SourceHead], None] | None) -> SnapshotOutcome:
    # The head comes before any section: a file refused at its start writes nothing.
    head = next(items, None)
    if head is not None and not isinstance(head, SourceHead):
        raise ImportProblem(f"{source_key}: the parser gave a section before the source's title")
    with transaction.atomic():
        snapshot_id = bulk.snapshot_id_reserve()
        count = 0
        if head is not None:
            count, head = _provisions_write(snapshot_id, head, items, source_key)
        bulk.snapshot_insert(snapshot_id, bulk.SnapshotFields(
            corpus=corpus or (head.corpus if head else ""), source_key=source_key,
            title=(head.title if head else source_key)[:300],
            official_url=(head.official_url if head else official_url)[:500] or official_url,
            retrieved_from=retrieved_from[:1000], retrieved_at=timezone.now(), sha256=digest, byte_size=size,
            parser_name=parser[0], parser_version=parser[1], companion_id=companion.pk if companion else None,
            provision_count=count,
        ), source=source)
        snapshot = SourceSnapshot.objects.defer("raw").get(pk=snapshot_id)
        if finish is not None and head is not None:
            finish(snapshot, head)
        if count:
            engine_for_connection().after_import()
    return SnapshotOutcome(snapshot, True)


def _provisions_write(snapshot_id: int, head: SourceHead, items: Iterator[SourceItem],
                      source_key: str) -> tuple[int, SourceHead]:
    """Write the stream's provisions in batches; the number written and the last head. A second head (the reader
    starting again) rolls back what was written after the first."""
    savepoint = transaction.savepoint()
    batch: list[dict[str, Any]] = []
    position = 0
    if "\x00" in head.title:
        raise ImportProblem(f"{source_key}: the title contains a NUL character (0x00); not a text file")
    for item in items:
        if isinstance(item, SourceHead):
            transaction.savepoint_rollback(savepoint)
            savepoint = transaction.savepoint()
            batch, position, head = [], 0, item
            continue
        _check_lengths(item, position, source_key)
        batch.append(bulk.provision_values(item, corpus=head.corpus, position=position))
        position += 1
        if len(batch) >= bulk.WRITE_BATCH:
            bulk.provisions_write(snapshot_id, batch)
            batch = []
    bulk.provisions_write(snapshot_id, batch)
    transaction.savepoint_commit(savepoint)
    return position, head


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
        # The index (a few MB) is what every volume's sections are named from: it is held while they are read.
        meta_raw = index_path.read_bytes()
        index = snapshot_import(corpus="hrs", source_key=HRS_INDEX, raw=meta_raw, retrieved_from=str(index_path),
                                parse=None, parser=HRS_INDEX_PARSER, official_url=hrs_json.OFFICIAL_BASE)
        outcomes.append(index)
        for vol in volumes:
            with vol.open("rb") as source:
                outcomes.append(snapshot_import(
                    corpus="hrs", source_key=vol.name, raw=source, retrieved_from=str(vol),
                    parse=partial(hrs_json.read, meta_raw=meta_raw, filename=vol.name),
                    parser=(hrs_json.PARSER_NAME, hrs_json.PARSER_VERSION), companion=index.snapshot,
                ))
        return outcomes
    read = nrs_html.read if fmt == "nrs-html" else uslm_xml.read
    parser = (nrs_html.PARSER_NAME, nrs_html.PARSER_VERSION) if fmt == "nrs-html" \
        else (uslm_xml.PARSER_NAME, uslm_xml.PARSER_VERSION)
    corpus = "nrs" if fmt == "nrs-html" else "usc"
    for path in files:
        with path.open("rb") as source:
            outcomes.append(snapshot_import(
                corpus=corpus, source_key=path.name, raw=source, retrieved_from=str(path),
                parse=partial(read, filename=path.name), parser=parser,
            ))
    return outcomes


# --------------------------------------------------------------------------- corpus files (any code)


CORPUS_FORMATS = ("jsonl", "csv", "ecfr-xml")


def corpus_format(filename: str) -> str:
    """The format of a corpus file by its name: ``ecfr-xml`` for .xml, ``csv`` for .csv, else ``jsonl``."""
    return "ecfr-xml" if filename.lower().endswith(".xml") else corpus_file.file_format(filename)


def corpus_file_import(*, code: str, raw: Raw, filename: str, retrieved_from: str = "",
                       citation_pattern: str = "", citation_form: str = "", fmt: str = "") -> SnapshotOutcome:
    """Import a corpus file (docs/corpus-format.md) or an eCFR XML file as a snapshot of code ``code``, through
    the same snapshot, provision and passage service as the official parsers. A bad line (or element) refuses the
    whole file, naming each line and field (CorpusFileInvalid) or the element and its line (ParseError); so does a
    file that disagrees with the code's first import (its name, jurisdiction or citation pattern).

    ``raw`` is the file's bytes or an open binary file, read line by line (or section by section), never whole.
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
    source = _opened(raw)
    # The same bytes again are a no-op, answered before parsing (a 19 MB eCFR file takes seconds to parse).
    digest, _ = bulk.file_digest(source)
    same = SourceSnapshot.objects.filter(source_key=source_key, sha256=digest, parser_name=parser[0],
                                         parser_version=parser[1], companion=None).defer("raw")
    same = same.filter(corpus=code) if code else same.filter(corpus__regex=r"^cfr[0-9]+$") if fmt == "ecfr-xml" \
        else same.none()
    found = same.order_by("id").first()
    if found is not None:
        return SnapshotOutcome(found, False)
    if code in Corpus.values:
        raise ImportProblem(f"{code!r} is a built-in code: import its official files with import_statutes")
    if bool(citation_pattern) != bool(citation_form):
        raise ImportProblem("give both a citation pattern and a citation form, or neither")
    named = filename if fmt == "ecfr-xml" or fmt == corpus_file.file_format(filename) else f"{filename}.{fmt}"

    def read(opened: BinaryIO) -> Iterator[SourceItem]:
        if fmt != "ecfr-xml":
            yield from corpus_file.read(opened, code=code, filename=named)
            return
        for item in ecfr_xml.read(opened, filename=filename):
            if isinstance(item, SourceHead):
                if (problem := corpus_file.code_id_problem(code or item.corpus)) is not None:
                    raise ImportProblem(problem)
                item = replace(item, corpus=code or item.corpus)
            yield item

    def finish(snapshot: SourceSnapshot, head: SourceHead) -> None:
        """The file's citations read back through the code's pattern, and the code as first imported: checked
        on the stored provisions, in batches, before the import commits."""
        def citations() -> Iterator[tuple[str, str]]:
            return (Provision.objects.filter(snapshot=snapshot).order_by("position")
                    .values_list("citation", "number").iterator(chunk_size=bulk.WRITE_BATCH))

        pattern, form = citation_pattern, citation_form
        if not pattern:
            pattern, form = corpus_file.citation_pattern_derive(citations())
        if pattern:
            problems = corpus_file.citation_pattern_check(citations(), pattern=pattern, form=form, filename=filename)
            if problems:
                raise corpus_file.CorpusFileInvalid(problems, filename=filename)
        known, _ = CorpusCode.objects.select_for_update().get_or_create(code=snapshot.corpus, defaults={
            "name": head.code_name, "jurisdiction": head.jurisdiction,
            "citation_pattern": pattern, "citation_form": form,
        })
        for label, mine, theirs in (("code", head.code_name, known.name),
                                    ("jurisdiction", head.jurisdiction, known.jurisdiction),
                                    ("citation pattern", pattern, known.citation_pattern),
                                    ("citation form", form, known.citation_form)):
            if mine != theirs:
                raise ImportProblem(f"{filename}: {label} {mine!r} differs from {theirs!r}, which the code "
                                    f"{snapshot.corpus!r} was first imported with; a code's citations and name do "
                                    "not change")

    return snapshot_import(corpus=code, source_key=source_key, raw=source, retrieved_from=retrieved_from or filename,
                           parse=read, parser=parser, finish=finish)


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
                parse=lambda f: hrs_json.read(f, meta_raw=meta_raw, filename=key),
                parser=(hrs_json.PARSER_NAME, hrs_json.PARSER_VERSION), companion=index.snapshot,
            )]
    read = nrs_html.read if fmt == "nrs-html" else uslm_xml.read
    parser = (nrs_html.PARSER_NAME, nrs_html.PARSER_VERSION) if fmt == "nrs-html" \
        else (uslm_xml.PARSER_NAME, uslm_xml.PARSER_VERSION)
    return [snapshot_import(
        corpus="nrs" if fmt == "nrs-html" else "usc", source_key=key, raw=raw, retrieved_from=url,
        parse=lambda f: read(f, filename=key), parser=parser,
    )]


def search_index_rebuild() -> None:
    """Rebuild the keyword index from the provisions table; safe to run any number of times."""
    engine_for_connection().rebuild()


