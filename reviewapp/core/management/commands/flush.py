"""``manage.py flush`` with the append-only triggers lifted for the wipe.

Emptying the whole database is not editing evidence row by row; on SQLite ``flush`` runs ``DELETE FROM`` on
every table, which the append-only triggers would refuse (PostgreSQL TRUNCATEs, which fires no row trigger).
The test runner flushes between transactional tests through this same command.
"""

from __future__ import annotations

from typing import Any

from django.core.management.commands.flush import Command as DjangoFlush
from django.db import DEFAULT_DB_ALIAS, connections

from reviewapp.core.records.append_only import append_only_bypassed


class Command(DjangoFlush):
    def handle(self, **options: Any) -> None:
        with append_only_bypassed(connections[options.get("database") or DEFAULT_DB_ALIAS]):
            super().handle(**options)
