"""Backup and restore: export everything, restore into an empty database, and find every hash, every export
and every report figure identical (relevance report, receipts, human-label metrics and calibration, CUAD
scorecard and run export). A cut or edited backup, or a database that is not empty, is refused."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from tests.trust.fuzz_support import row_counts


def _world(tmp_path, reviewers, settings):
    """A finished rerank run with real receipts (loopback provider), a judged review pool of a second rerank
    run, the CUAD fixture with two graded runs. Returns the URLs whose bodies must survive a restore."""
    from benchmarks.labels import pools as review_pools
    from benchmarks.rerank import services as rerank
    from reviewapp.providers.loopback import LoopbackServer
    from tests.benchmarks.labels.fixtures import judge, random_grades, rerank_world
    from tests.benchmarks.rerank.fixtures import synthetic_retrieval_run
    from tests.grading.console_support import load

    settings.PROVIDER_KEYS = {"openrouter": "", "openai_compatible": "", "anthropic": ""}
    retrieval = synthetic_retrieval_run(seed=31)
    with LoopbackServer() as server:
        run = rerank.rerank_run_create(retrieval_run=retrieval, provider="openai_compatible", model_id="loop/m",
                                       base_url=server.url + "/v1", concurrency=2, enqueue=False)
        assert rerank.rerank_run_execute(run_id=run.pk) == "done"
    judged = rerank_world(seed=33, queries=12)
    pool = review_pools.review_pool_declare(rerank_run=judged, reviewers=reviewers).pool
    judge(pool, reviewers, random_grades(pool, seed=4))
    cuad = load(tmp_path)
    return [
        f"/benchmarks/reports/rerank/{run.pk}/report.json?replicates=1000",
        f"/benchmarks/rerank/{run.pk}/receipts.jsonl",
        f"/benchmarks/labels/rerank/{judged.pk}/calibration/calibration.json",
        f"/benchmarks/labels/rerank/{judged.pk}/human-metrics/human-metrics.json?replicates=1000",
        f"/cuad/scorecard/scorecard.json?run={cuad.noisy.pk}",
        f"/cuad/scorecard/scorecard.json?run={cuad.gold.pk}",
        f"/cuad/runs/{cuad.noisy.pk}/run.json",
        f"/review/agreement/{pool.public_id}/judgments.jsonl",
        f"/review/agreement/{pool.public_id}/qrels.txt",
    ]


def _bodies(urls: list[str]) -> dict[str, bytes]:
    from django.contrib.auth import get_user_model

    client = Client()
    client.force_login(get_user_model().objects.get(username="alice_admin"))
    out = {}
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code)
        body = b"".join(response.streaming_content) if response.streaming else response.content
        if "/benchmarks/reports/" in url:
            # Reading held-out figures appends to the held-out ledger, whose block counts this very read
            # (tests/benchmarks/reports/metrics/test_heldout_exposure.py checks that the ledger survives a restore).
            report = json.loads(body)
            report.pop("heldout_exposure")
            body = json.dumps(report, sort_keys=True).encode()
        out[url] = body
    return out


def _rows_of(backup: bytes) -> list[bytes]:
    return backup.splitlines()[1:]  # everything but the header


def test_a_backup_restored_into_an_empty_database_gives_identical_hashes_exports_and_figures(
        transactional_db, admin_user_, reviewer_user, reviewer2_user, tmp_path, settings):
    from reviewapp.providers.models import Receipt

    urls = _world(tmp_path, [reviewer_user, reviewer2_user], settings)
    before = _bodies(urls)
    counts = row_counts()
    receipts = list(Receipt.objects.order_by("pk").values_list("request_key", "status", "response_body"))
    assert receipts and counts["grading.Span"] and counts["reviewapp.JudgmentRevision"]

    backup = tmp_path / "backup.jsonl"
    call_command("export_all", str(backup), stdout=io.StringIO())
    first = backup.read_bytes()

    call_command("flush", interactive=False, verbosity=0)  # the empty database of a new machine
    assert not any(row_counts().values())
    out = io.StringIO()
    call_command("import_all", str(backup), stdout=out)
    assert "restored" in out.getvalue()

    assert row_counts() == counts
    assert list(Receipt.objects.order_by("pk").values_list("request_key", "status", "response_body")) == receipts
    again = tmp_path / "again.jsonl"
    call_command("export_all", str(again), stdout=io.StringIO())
    assert _rows_of(again.read_bytes()) == _rows_of(first)  # every row, every stored hash, byte for byte
    after = _bodies(urls)
    for url in urls:
        at = next((i for i, (x, y) in enumerate(zip(before[url], after[url], strict=False)) if x != y), 0)
        assert after[url] == before[url], (url, before[url][at - 150:at + 80], after[url][at - 150:at + 80])
    figures = json.loads(after[urls[0]])
    assert figures  # a real report, not an empty page

    # Restored people log in with their own passwords and keep their roles.
    reviewer = Client()
    assert reviewer.login(username="rita_reviewer", password="pw-rita_reviewer")
    assert reviewer.get("/review/workspace/").status_code == 200


def test_a_restore_refuses_a_database_that_is_not_empty(transactional_db, admin_user_, tmp_path):
    from reviewapp.review.pools.models import ReviewPool
    from reviewapp.review.pools.services import pool_create_model

    pool_create_model(name="p", kind="passage", declared_rule="explicit",
                items=[{"query_id": "q", "doc_id": "d", "query_text": "q?", "source_heading": "h",
                        "source_text": "t", "passage_caption": "h", "passage_text": "t"}])
    backup = tmp_path / "backup.jsonl"
    call_command("export_all", str(backup), stdout=io.StringIO())
    with pytest.raises(CommandError, match="not empty"):
        call_command("import_all", str(backup), stdout=io.StringIO())
    assert ReviewPool.objects.count() == 1


@pytest.mark.parametrize("damage", ["cut", "edit", "header"])
def test_a_cut_or_edited_backup_is_refused_with_nothing_written(transactional_db, admin_user_, tmp_path, damage):
    from reviewapp.review.pools.services import pool_create_model

    pool_create_model(name="p", kind="passage", declared_rule="explicit",
                items=[{"query_id": f"q{i}", "doc_id": "d", "query_text": "q?", "source_heading": "h",
                        "source_text": "t", "passage_caption": "h", "passage_text": "t"} for i in range(3)])
    backup = tmp_path / "backup.jsonl"
    call_command("export_all", str(backup), stdout=io.StringIO())
    lines = backup.read_bytes().splitlines(keepends=True)
    if damage == "cut":
        lines = lines[:-2]
    elif damage == "edit":
        # An item's text, wherever the export placed the items (the order of the models is the registry's).
        edited = max(i for i, line in enumerate(lines) if b'"model":"reviewapp.ReviewItem"' in line)
        lines[edited] = lines[edited].replace(b'"query_text":"q', b'"query_text":"Q', 1)
        assert b'"query_text":"Q' in lines[edited]
    else:
        lines[0] = b'{"format": "something else"}\n'
    backup.write_bytes(b"".join(lines))
    call_command("flush", interactive=False, verbosity=0)
    with pytest.raises(CommandError, match=r"(trailer|line 1|do not match)"):
        call_command("import_all", str(backup), stdout=io.StringIO())
    assert not any(row_counts().values())
