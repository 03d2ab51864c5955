"""A backup written by the code before the tree was re-laid out (commit a401262) restores into today's code,
and every export it fed then gives the same values now: moving modules changed no table, no stored value and
no figure. Values changed on purpose by later work are listed, with the reason, in CHANGED_BY_DESIGN; new
keys may be added beside the old ones.

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
from django.test import Client

DATA = Path(__file__).parent  # the backup and its bodies, beside this test


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
        # URLs of that time: the console's ``?format=`` exports now redirect to their paths (bookmarks).
        response = client.get(url, follow=True)
        assert response.status_code == 200, url
        got = (b"".join(response.streaming_content) if response.streaming else response.content).decode()
        path = url.split("?")[0]
        if path.endswith(".jsonl"):
            old_lines, new_lines = body.splitlines(), got.splitlines()
            assert len(old_lines) == len(new_lines), url
            for old_line, new_line in zip(old_lines, new_lines, strict=True):
                _assert_kept(json.loads(old_line), json.loads(new_line), url)
        elif path.endswith(".json") or "format=json" in url:
            _assert_kept(json.loads(body), json.loads(got), url)
        else:
            assert got == body, url


# Values that later work changed on purpose, by (URL path, JSON key path). Everything else the old code
# served must come back with the same value; new keys may be added beside it.
CHANGED_BY_DESIGN = {
    # The population box and first caveat now come from the suite's own fields (nominated_by, synthetic)
    # instead of a fixed sentence about "the assistant".
    ("/benchmarks/reports/rerank/1/report.json", "population"),
    ("/benchmarks/reports/rerank/1/report.json", "caveats"),
    # The scorecard's population states the run's scope ("4 of 4 contracts"), taken from the run.
    ("/cuad/scorecard/", "population"),
}


def _dropped_for_too_few_units(key: str, new: dict) -> bool:
    """An interval's bounds (or a p-value) that the minimum-units rule (scoring.stats.units) now withholds: the
    old world's splits have one or two query families, whose zero-width intervals meant nothing. The new value
    is null and the figure says why in its note."""
    return new.get(key, 0) is None and "no interval" in str(new.get("note", ""))


def _assert_kept(old: object, new: object, url: str) -> None:
    """Every value of ``old`` is in ``new`` at the same place (dict keys in any order: jsonb reorders them)."""
    differences: list[str] = []
    _differences(old, new, url.split("?")[0], "", differences)
    assert not differences, f"{url}:\n" + "\n".join(differences)


def _differences(old: object, new: object, path: str, where: str, out: list[str]) -> None:
    if (path, where) in CHANGED_BY_DESIGN:
        return
    if isinstance(old, dict):
        if not isinstance(new, dict):
            out.append(f"{where}: was an object, is {type(new).__name__}")
            return
        for key, value in old.items():
            if key not in new:
                out.append(f"{where}.{key}: missing".lstrip("."))
            elif _dropped_for_too_few_units(key, new):
                continue
            else:
                _differences(value, new[key], path, f"{where}.{key}".lstrip("."), out)
    elif isinstance(old, list):
        if not isinstance(new, list) or len(new) != len(old):
            out.append(f"{where}: list changed length")
            return
        for index, (a, b) in enumerate(zip(old, new, strict=True)):
            _differences(a, b, path, f"{where}[{index}]", out)
    elif old != new:
        out.append(f"{where}: {old!r} became {new!r}")
