"""Backup and restore of everything people made: labels, judgments, receipts, runs, and what they rest on.

One JSON Lines file, written and read by ``manage.py export_all`` / ``import_all``:

- line 1, the header: format, version, the models in dependency order and their row counts;
- one line per row: ``{"model": "app.Model", "pk": ..., "fields": {...}}`` (Django's serialised form;
  users are referred to by username, group memberships by group name; binary columns in base64);
- the last line, the trailer: the sha256 of every row line, so a cut or edited file is refused.

What is in it: every table of the four project apps (statute snapshots with their raw bytes, provisions,
passages, suites, retrieval and rerank runs, the CUAD dataset with its contract texts and spans, samples,
extraction runs and grades, console jobs, audits, review pools, items, assignments, judgments with every
revision, adjudications, imported labels, ledgers and receipts) and the user accounts they point to
(password hashes included, so restored people can log in). Not in it: sessions, API tokens (secrets: issue
new ones), worker heartbeats, the admin log; roles are re-created by name.

A restore goes into an EMPTY database (after ``migrate``), keeps every primary key, so every stored hash,
every export and every report figure is what it was, and is one transaction: a refused file writes nothing.
"""

from __future__ import annotations

import datetime
import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO

from django.contrib.auth import get_user_model
from django.core import serializers
from django.core.management.color import no_style
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection, models, transaction

from reviewapp.core.apps import after_restore_all, product_data_apps
from reviewapp.core.auth.audit import audit_suspended
from reviewapp.core.auth.roles import ensure_role_groups

FORMAT = "legal-eval-backup"
VERSION = 1
# Liveness probes, not work; and the record of browser sessions, which a backup does not carry (a restored
# server signs everyone out).
SKIPPED = {"reviewapp.WorkerHeartbeat", "sso.UserSession"}
BATCH = 2000


class BackupError(ValueError):
    """The file cannot be restored (or the database is not empty); the message says why and where."""


@dataclass(frozen=True)
class BackupSummary:
    counts: dict[str, int]
    sha256: str


def backup_models() -> list:
    """The models in the backup, parents before children (users first)."""
    chosen: list[type[models.Model]] = [get_user_model()]
    for config in product_data_apps():
        for model in config.get_models():
            if model._meta.managed and not model._meta.proxy and model._meta.label not in SKIPPED:
                chosen.append(model)
    ordered = serializers.sort_dependencies([(None, chosen)], allow_cycles=True)
    return [m for m in ordered if m in chosen]


class _Encoder(DjangoJSONEncoder):
    """DjangoJSONEncoder cuts datetimes to milliseconds; a backup keeps every microsecond."""

    def default(self, o):
        if isinstance(o, (datetime.datetime, datetime.time)):
            return o.isoformat()
        return super().default(o)


def _line(payload: dict) -> bytes:
    # No sort_keys: a JSONField keeps its own key order (pages show it), so the backup must too.
    return json.dumps(payload, cls=_Encoder, ensure_ascii=False,
                      separators=(",", ":")).encode("utf-8") + b"\n"


def _rows(model) -> Iterator[bytes]:
    queryset = model._base_manager.order_by("pk")
    for start in range(0, queryset.count(), BATCH):
        chunk = list(queryset[start:start + BATCH])
        for row in serializers.serialize("python", chunk, use_natural_foreign_keys=True):
            fields = row["fields"]
            if model._meta.label == "auth.User":
                fields.pop("user_permissions", None)  # roles come from groups, restored by name
            yield _line({"model": model._meta.label, "pk": row["pk"], "fields": fields})


def backup_export(*, out: IO[bytes]) -> BackupSummary:
    """Write the whole backup to ``out`` inside one read transaction (a consistent snapshot)."""
    models = backup_models()
    digest = hashlib.sha256()
    counts: dict[str, int] = {}
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        counts = {m._meta.label: m._base_manager.count() for m in models}
        out.write(_line({"format": FORMAT, "version": VERSION, "models": [m._meta.label for m in models],
                         "counts": counts}))
        for model in models:
            for line in _rows(model):
                digest.update(line)
                out.write(line)
    summary = BackupSummary(counts=counts, sha256=digest.hexdigest())
    out.write(_line({"end": True, "rows": sum(counts.values()), "sha256": summary.sha256}))
    return summary


def _read(lines: Iterable[bytes]) -> tuple[dict, list[bytes], dict]:
    iterator = iter(lines)
    try:
        header = json.loads(next(iterator))
    except (StopIteration, ValueError) as exc:
        raise BackupError("line 1: not a backup header") from exc
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise BackupError(f"line 1: not a {FORMAT} file")
    if header.get("version") != VERSION:
        raise BackupError(f"line 1: version {header.get('version')!r} is not {VERSION}")
    rows = list(iterator)
    if not rows:
        raise BackupError("the file ends after its header (no trailer): cut short?")
    try:
        trailer = json.loads(rows.pop())
    except ValueError as exc:
        raise BackupError(f"line {len(rows) + 2}: the trailer is not JSON (file cut short?)") from exc
    if not isinstance(trailer, dict) or trailer.get("end") is not True:
        raise BackupError(f"line {len(rows) + 2}: no trailer (file cut short?)")
    digest = hashlib.sha256()
    for line in rows:
        digest.update(line if line.endswith(b"\n") else line + b"\n")
    if digest.hexdigest() != trailer.get("sha256") or len(rows) != trailer.get("rows"):
        raise BackupError(f"the rows do not match the trailer ({len(rows)} rows, sha256 {digest.hexdigest()[:12]}…; "
                          f"trailer says {trailer.get('rows')} rows, {str(trailer.get('sha256'))[:12]}…)")
    return header, rows, trailer


def backup_import(*, lines: Iterable[bytes]) -> BackupSummary:
    """Restore a backup into an empty database; all or nothing. Returns the counts restored."""
    header, rows, trailer = _read(lines)
    known = {m._meta.label: m for m in backup_models()}
    unknown = [label for label in header.get("models", []) if label not in known]
    if unknown:
        raise BackupError(f"line 1: models {unknown} do not exist in this version of the app")
    not_empty = {label: n for label, m in known.items() if (n := m._base_manager.count())}
    if not_empty:
        raise BackupError(f"the database is not empty ({', '.join(f'{k}: {v} rows' for k, v in not_empty.items())});"
                          " restore into a new database after 'manage.py migrate'")
    counts = dict.fromkeys(known, 0)
    # The backup carries its own account audit log: the restore's own writes are not changes to record.
    with transaction.atomic(), connection.constraint_checks_disabled(), audit_suspended():
        ensure_role_groups()
        pending: list = []
        pending_model: type[models.Model] | None = None
        m2m: list = []

        def flush() -> None:
            if not pending:
                return
            model = pending_model
            assert model is not None  # set with the first pending row
            fields = list(model._meta.local_concrete_fields)
            size = max(1, connection.ops.bulk_batch_size(fields, pending) or len(pending))
            for start in range(0, len(pending), size):
                # raw=True: stored values go in as they are (no auto_now, no append-only save() guard).
                # A private QuerySet method Django also puts on managers (queryset_only = False); the stubs omit it.
                model._base_manager._insert(  # type: ignore[attr-defined]
                    pending[start:start + size], fields=fields, using=connection.alias, raw=True)
            pending.clear()

        for number, line in enumerate(rows, start=2):
            try:
                row = json.loads(line)
                label = row["model"]
                if label not in known:
                    raise BackupError(f"line {number}: unknown model {label!r}")
                (obj,) = serializers.deserialize("python", [row], handle_forward_references=False)
            except BackupError:
                raise
            except Exception as exc:
                raise BackupError(f"line {number}: {type(exc).__name__}: {exc}") from exc
            model = type(obj.object)
            if model is not pending_model:
                flush()
                pending_model = model
            pending.append(obj.object)
            if obj.m2m_data:
                m2m.append(obj)
            counts[label] += 1
        flush()
        for obj in m2m:
            for name, values in obj.m2m_data.items():
                field = obj.object._meta.get_field(name)
                if field.remote_field.through._meta.auto_created:
                    getattr(obj.object, name).set(values)
        connection.check_constraints(table_names=[m._meta.db_table for m in known.values()])
        sequences = connection.ops.sequence_reset_sql(no_style(), list(known.values()))
        if sequences:
            with connection.cursor() as cursor:
                for sql in sequences:
                    cursor.execute(sql)
        expected = header.get("counts", {})
        if {k: v for k, v in counts.items() if v} != {k: v for k, v in expected.items() if v}:
            raise BackupError(f"restored row counts differ from the header: {counts} vs {expected}")
    after_restore_all()
    return BackupSummary(counts=counts, sha256=str(trailer["sha256"]))

