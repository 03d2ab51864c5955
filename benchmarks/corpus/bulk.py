"""The database's bulk path for a snapshot: its file's bytes streamed into the row, its provisions and passages
written in batches (COPY on PostgreSQL, ``bulk_create`` on SQLite).

Nothing here holds a whole file or all of a snapshot's provisions: the bytes go in chunks of ``CHUNK`` and the
provisions in batches of ``WRITE_BATCH``, so an import's memory does not grow with the file. Every write runs in
the caller's transaction: an import that fails midway rolls all of it back, and nothing half-written is seen.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, BinaryIO

from django.db import connection
from django.db.models import BinaryField, Func, Value

from benchmarks.corpus.base import ParsedProvision
from benchmarks.corpus.models import Passage, Provision, SourceSnapshot
from benchmarks.corpus.passages import passage_extract
from reviewapp.core.records.hashing import sha256_json

CHUNK = 1 << 20
# Provisions written (with their passages) per batch: the rows and parameters held at once stay this many,
# whatever the size of the file.
WRITE_BATCH = 1000


def file_digest(source: BinaryIO) -> tuple[str, int]:
    """The SHA-256 (hex) and size of a file, read in chunks; the file is left at its start."""
    source.seek(0)
    digest, size = hashlib.sha256(), 0
    while chunk := source.read(CHUNK):
        digest.update(chunk)
        size += len(chunk)
    source.seek(0)
    return digest.hexdigest(), size


def _chunks(source: BinaryIO) -> Iterator[bytes]:
    """The file's bytes in chunks, from its start."""
    source.seek(0)
    while chunk := source.read(CHUNK):
        yield chunk


@dataclass(frozen=True)
class SnapshotFields:
    corpus: str
    source_key: str
    title: str
    official_url: str
    retrieved_from: str
    retrieved_at: datetime
    sha256: str
    byte_size: int
    parser_name: str
    parser_version: str
    companion_id: int | None
    provision_count: int


def snapshot_id_reserve() -> int:
    """The id the snapshot being imported will have. Its provisions are written first and the snapshot row last
    (``snapshot_insert``), with its count and title known, so the row is inserted once and never updated (an
    UPDATE would read and rewrite its bytes). The foreign keys are checked at commit (Django makes them
    DEFERRABLE INITIALLY DEFERRED on both engines)."""
    if connection.vendor == "postgresql":
        return _ids(SourceSnapshot, 1)[0]
    table = SourceSnapshot._meta.db_table
    # The import's transaction began with BEGIN IMMEDIATE (the SQLite settings): no other writer can take the id.
    with connection.cursor() as cursor:
        cursor.execute(f'SELECT max(id) FROM "{table}"')  # noqa: S608 -- the model's own table name
        highest = cursor.fetchone()[0] or 0
        cursor.execute("SELECT seq FROM sqlite_sequence WHERE name = %s", [table])
        found = cursor.fetchone()
    return max(highest, found[0] if found else 0) + 1


def snapshot_insert(pk: int, fields: SnapshotFields, *, source: BinaryIO) -> None:
    """Insert the snapshot row ``pk`` with the file's bytes as its ``raw``, streamed in chunks."""
    if connection.vendor == "postgresql":
        _snapshot_copy(pk, fields, source)
        return
    SourceSnapshot.objects.create(
        id=pk, corpus=fields.corpus, source_key=fields.source_key, title=fields.title,
        official_url=fields.official_url, retrieved_from=fields.retrieved_from, retrieved_at=fields.retrieved_at,
        sha256=fields.sha256, byte_size=fields.byte_size, parser_name=fields.parser_name,
        parser_version=fields.parser_version, companion_id=fields.companion_id,
        provision_count=fields.provision_count,
        # Room for the bytes, filled in place below through SQLite's incremental blob I/O (the column ends the
        # row, so SQLite does not hold the zeroes: benchmarks/migrations/0014_snapshot_raw_last.py).
        raw=Func(Value(fields.byte_size), function="zeroblob", output_field=BinaryField()),
    )
    connection.ensure_connection()
    with connection.connection.blobopen(SourceSnapshot._meta.db_table, "raw", pk) as blob:
        for chunk in _chunks(source):
            blob.write(chunk)


def _copy_text(value: Any) -> str:
    """One field of PostgreSQL's COPY text format."""
    if value is None:
        return r"\N"
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    return str(value).replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def _ids(model: type[Provision] | type[SourceSnapshot], count: int) -> list[int]:
    """``count`` ids from the table's own sequence, so rows written by COPY can be referred to before they exist."""
    table = model._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute("SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)", [table, count])
        return [row[0] for row in cursor.fetchall()]


_SNAPSHOT_COLUMNS = ("id", "corpus", "source_key", "title", "official_url", "retrieved_from", "retrieved_at",
                     "byte_size", "sha256", "parser_name", "parser_version", "companion_id", "provision_count",
                     "created_at", "raw")


def _snapshot_copy(pk: int, fields: SnapshotFields, source: BinaryIO) -> None:
    values = (pk, fields.corpus, fields.source_key, fields.title, fields.official_url, fields.retrieved_from,
              fields.retrieved_at, fields.byte_size, fields.sha256, fields.parser_name, fields.parser_version,
              fields.companion_id, fields.provision_count, fields.retrieved_at)
    table = SourceSnapshot._meta.db_table
    with connection.cursor() as cursor, cursor.cursor.copy(
            f"COPY {table} ({', '.join(_SNAPSHOT_COLUMNS)}) FROM STDIN") as copy:
        # The bytea in COPY's text form: "\\x" (its backslash escaped) and hex, written chunk by chunk.
        copy.write("\t".join(_copy_text(v) for v in values) + "\t\\\\x")
        for chunk in _chunks(source):
            copy.write(chunk.hex())
        copy.write("\n")


# --------------------------------------------------------------------------- provisions and passages


def provision_values(provision: ParsedProvision, *, corpus: str, position: int) -> dict[str, Any]:
    """The stored fields of one provision, with its content hash (from its texts, as every import hashes them)."""
    p = provision
    content: dict[str, Any] = {"citation": p.citation, "variant": p.variant, "heading": p.heading, "body": p.body,
                               "history": p.history, "notes": p.notes, "repealed": p.repealed}
    # Only a corpus file gives these: the official parsers' provisions keep the hashes they always had.
    hierarchy = dict(p.hierarchy)
    for key, value in (("as_of", p.as_of), ("version_label", p.version_label), ("hierarchy", hierarchy)):
        if value:
            content[key] = value
    return {"corpus": corpus, "citation": p.citation, "number": p.number, "variant": p.variant,
            "chapter": p.chapter, "chapter_title": p.chapter_title[:400], "heading": p.heading, "body": p.body,
            "history": p.history, "notes": p.notes, "repealed": p.repealed, "official_url": p.official_url[:500],
            "as_of": date.fromisoformat(p.as_of) if p.as_of else None, "version_label": p.version_label,
            "hierarchy": hierarchy, "position": position, "content_sha256": sha256_json(content)}


def provisions_write(snapshot_id: int, batch: list[dict[str, Any]]) -> None:
    """Write one batch of provisions (``provision_values``) and their passages under the current rule."""
    if not batch:
        return
    if connection.vendor == "postgresql":
        _provisions_copy(snapshot_id, batch)
        return
    rows = Provision.objects.bulk_create([Provision(snapshot_id=snapshot_id, **values) for values in batch])
    Passage.objects.bulk_create([Passage(provision=row, rule=rule, caption=caption, text=text, word_count=words,
                                         truncated=truncated, sha256=digest)
                                 for row, (_, rule, caption, text, words, truncated, digest)
                                 in zip(rows, _passage_rows((row.pk for row in rows), batch), strict=True)])


_PROVISION_COLUMNS = ("id", "snapshot_id", "corpus", "citation", "number", "variant", "chapter", "chapter_title",
                      "heading", "body", "history", "notes", "repealed", "official_url", "as_of", "version_label",
                      "hierarchy", "position", "content_sha256")
_PASSAGE_COLUMNS = ("provision_id", "rule", "caption", "text", "word_count", "truncated", "sha256")


def _provisions_copy(snapshot_id: int, batch: list[dict[str, Any]]) -> None:
    ids = _ids(Provision, len(batch))
    with connection.cursor() as cursor:
        with cursor.cursor.copy(f"COPY {Provision._meta.db_table} ({', '.join(_PROVISION_COLUMNS)}) "
                                "FROM STDIN") as copy:
            for pk, values in zip(ids, batch, strict=True):
                copy.write_row(_provision_row(pk, snapshot_id, values))
        with cursor.cursor.copy(f"COPY {Passage._meta.db_table} ({', '.join(_PASSAGE_COLUMNS)}) FROM STDIN") as copy:
            for row in _passage_rows(ids, batch):
                copy.write_row(row)


def _provision_row(pk: int, snapshot_id: int, values: dict[str, Any]) -> tuple[Any, ...]:
    return (pk, snapshot_id, *(json.dumps(values[name]) if name == "hierarchy" else values[name]
                               for name in _PROVISION_COLUMNS[2:]))


def _passage_rows(ids: Iterable[int], batch: list[dict[str, Any]]) -> Iterator[tuple[Any, ...]]:
    for pk, values in zip(ids, batch, strict=True):
        text = passage_extract(citation=values["citation"], heading=values["heading"], body=values["body"])
        yield pk, text.rule, text.caption, text.text, text.word_count, text.truncated, text.sha256
