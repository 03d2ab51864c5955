"""Database routing: one rule, for the table-less model that only carries the role permissions."""

from __future__ import annotations

from typing import Any


class TablelessModelsRouter:
    """``reviewapp.Access`` (managed=False) has no table. Saying so here keeps whole-database tools off it:
    ``manage.py dumpdata`` with no arguments (a backup) otherwise fails with "no such table: reviewapp_access".
    Its permissions and content type are still created after migrate (those check Permission/ContentType)."""

    def allow_migrate(self, db: str, app_label: str, model_name: str | None = None, **hints: Any) -> bool | None:
        if app_label == "reviewapp" and model_name == "access":
            return False
        return None
