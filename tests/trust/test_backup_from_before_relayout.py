"""A backup written by the code before the tree was re-laid out (commit a401262) restores into today's code,
and every page and export it fed then gives the same bytes now (on PostgreSQL, the same JSON values: jsonb
orders keys its own way): moving modules changed no table, no stored value and no figure.

The two files under data/ were made by that commit's own ``export_all`` after building the world of
test_backup_restore.py, together with the bodies of the URLs below as that code served them.
"""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection
from django.test import Client

DATA = Path(__file__).parent / "data"


def test_a_backup_from_before_the_relayout_restores_with_identical_pages_and_exports(transactional_db, tmp_path):
    backup = tmp_path / "backup.jsonl"
    backup.write_bytes(gzip.decompress((DATA / "backup_before_relayout.jsonl.gz").read_bytes()))
    expected = json.loads(gzip.decompress((DATA / "backup_before_relayout.bodies.json.gz").read_bytes()))

    out = io.StringIO()
    call_command("import_all", str(backup), stdout=out)
    assert "restored" in out.getvalue()

    client = Client()
    client.force_login(get_user_model().objects.get(username="alice_admin"))
    for url, body in expected.items():
        response = client.get(url)
        assert response.status_code == 200, url
        got = (b"".join(response.streaming_content) if response.streaming else response.content).decode()
        assert _comparable(url, got) == _comparable(url, body), url


def _comparable(url: str, body: str) -> object:
    """The body itself; on PostgreSQL the parsed JSON, since jsonb keeps keys in its own order (never values)."""
    if connection.vendor == "sqlite":
        return body
    path = url.split("?")[0]
    if path.endswith(".jsonl"):
        return [json.loads(line) for line in body.splitlines() if line]
    if path.endswith(".json") or "format=json" in url:
        return json.loads(body)
    return body
