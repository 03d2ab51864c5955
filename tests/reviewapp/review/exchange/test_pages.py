"""The label exchange from the pool page, the API and ``manage.py import_labels``: admins only; refusals named."""

from __future__ import annotations

import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from reviewapp.review.exchange import argilla as argilla_export
from reviewapp.review.exchange import labelstudio
from reviewapp.review.exchange.models import ImportedAnnotation, LabelImport

pytestmark = pytest.mark.django_db


def test_the_pool_page_offers_both_downloads_and_they_are_the_exports(judged_pool, admin_client_):
    page = admin_client_.get(f"/review/pools/{judged_pool.public_id}/").content.decode()
    assert 'data-testid="export-label-studio"' in page and 'data-testid="export-argilla"' in page
    assert 'data-testid="label-imports"' in page and "not blind" in page
    base = f"/review/exchange/{judged_pool.public_id}"
    tasks = admin_client_.get(f"{base}/label-studio-tasks.json")
    assert tasks.status_code == 200 and "attachment" in tasks["Content-Disposition"]
    assert json.loads(tasks.content) == json.loads(json.dumps(labelstudio.labelstudio_tasks(pool=judged_pool)))
    config = admin_client_.get(f"{base}/label-studio-config.xml")
    assert config.content.decode() == labelstudio.labelstudio_config(pool=judged_pool)
    archive = admin_client_.get(f"{base}/argilla.zip")
    assert archive["Content-Type"] == "application/zip" and archive.content[:2] == b"PK"


def test_reviewers_get_no_export_and_cannot_import(judged_pool, reviewer_client):
    base = f"/review/exchange/{judged_pool.public_id}"
    for path in ("label-studio-tasks.json", "label-studio-config.xml", "argilla.zip"):
        assert reviewer_client.get(f"{base}/{path}").status_code in (302, 403)
    assert reviewer_client.get(f"/api/v1/review/pools/{judged_pool.public_id}/label-studio/").status_code == 403
    response = reviewer_client.post(f"/api/v1/review/pools/{judged_pool.public_id}/label-imports/",
                                    {"tool": "argilla", "document": []}, content_type="application/json")
    assert response.status_code == 403 and LabelImport.objects.count() == 0


def test_an_admin_uploads_an_argilla_zip_and_the_page_lists_the_import(judged_pool, admin_client_):
    upload = SimpleUploadedFile("pool.zip", argilla_export.argilla_zip(pool=judged_pool))
    response = admin_client_.post(f"/review/exchange/{judged_pool.public_id}/label-imports/",
                                  {"tool": "argilla", "file": upload}, follow=True)
    assert "Imported" in response.content.decode() and "not blind" in response.content.decode()
    imported = LabelImport.objects.get()
    assert (imported.tool, imported.filename, imported.imported_by, imported.blind) == (
        "argilla", "pool.zip", "alice_admin", False)
    assert ImportedAnnotation.objects.filter(label_import=imported).count() > 15


def test_a_refused_upload_names_the_task_and_writes_nothing(judged_pool, admin_client_):
    tasks = labelstudio.labelstudio_tasks(pool=judged_pool)
    tasks[1]["data"]["query_text"] = "a different question"
    upload = SimpleUploadedFile("tasks.json", json.dumps(tasks).encode())
    response = admin_client_.post(f"/review/exchange/{judged_pool.public_id}/label-imports/",
                                  {"tool": "label-studio", "file": upload}, follow=True)
    text = response.content.decode()
    assert "Label import refused" in text and "tasks[1]" in text and "query_text" in text
    assert LabelImport.objects.count() == 0


def test_the_api_exports_and_imports_and_names_the_field_it_refuses(judged_pool, admin_client_):
    base = f"/api/v1/review/pools/{judged_pool.public_id}"
    ls = admin_client_.get(f"{base}/label-studio/").json()
    assert ls["label_config"].startswith("<View>") and len(ls["tasks"]) == judged_pool.items.count()
    rg = admin_client_.get(f"{base}/argilla/").json()
    assert rg["dataset"]["name"] == f"pool-{judged_pool.public_id}" and len(rg["records"]) == len(ls["tasks"])
    bad = json.loads(json.dumps(ls["tasks"]))
    first = next(i for i, t in enumerate(bad) if t["annotations"])
    bad[first]["annotations"][0]["result"][0]["value"]["choices"] = ["9"]
    refused = admin_client_.post(f"{base}/label-imports/", {"tool": "label-studio", "document": bad},
                                 content_type="application/json")
    assert refused.status_code == 400 and f"tasks[{first}].annotations[0]" in refused.json()["detail"]
    created = admin_client_.post(f"{base}/label-imports/", {"tool": "argilla", "document": rg["records"],
                                                            "filename": "records.json"},
                                 content_type="application/json")
    assert created.status_code == 201, created.content
    assert created.json()["blind"] is False and created.json()["annotations"] > 15
    listed = admin_client_.get(f"{base}/label-imports/").json()
    assert [(row["tool"], row["filename"], row["blind"], row["stale"]) for row in listed] == [
        ("argilla", "records.json", False, 0)]


def test_the_command_imports_a_label_studio_export_and_refuses_naming_the_file_and_task(judged_pool, tmp_path):
    tasks = labelstudio.labelstudio_tasks(pool=judged_pool)
    path = tmp_path / "project-1-at-2026.json"
    path.write_text(json.dumps(tasks))
    out = io.StringIO()
    # "--pool=<id>" as one argument: a random public id may begin with "-", which argparse would read as an option.
    pool = f"--pool={judged_pool.public_id}"
    call_command("import_labels", str(path), pool, tool="label-studio", by="ops", stdout=out)
    assert "not blind" in out.getvalue() and LabelImport.objects.get().imported_by == "ops"
    tasks[0]["data"]["item"] = "forged"
    path.write_text(json.dumps(tasks))
    with pytest.raises(CommandError, match=r"project-1-at-2026\.json: tasks\[0\]"):
        call_command("import_labels", str(path), pool, tool="label-studio")
    with pytest.raises(CommandError, match="--pool"):
        call_command("import_labels", str(path), pool="nope", tool="label-studio")


def test_imported_labels_leave_only_through_their_own_export_marked_not_blind(judged_pool, admin_client_):
    from reviewapp.review.exchange.services import annotations_import

    base = f"/review/agreement/{judged_pool.public_id}"
    qrels_before = admin_client_.get(f"{base}/qrels.txt?grade_type=passage").content
    jsonl_before = admin_client_.get(f"{base}/judgments.jsonl").getvalue()
    annotations_import(pool=judged_pool, tool="label-studio", document=labelstudio.labelstudio_tasks(pool=judged_pool))
    page = admin_client_.get(f"/review/pools/{judged_pool.public_id}/").content.decode()
    assert 'data-testid="export-imported"' in page
    export = admin_client_.get(f"/review/exchange/{judged_pool.public_id}/imported-labels.jsonl")
    rows = [json.loads(line) for line in export.content.splitlines()]
    assert rows and all(row["blind"] is False and row["tool"] == "label-studio" for row in rows)
    api = admin_client_.get(f"/api/v1/review/pools/{judged_pool.public_id}/imported-labels/").json()
    assert [(r["item_id"], r["annotator"], r["grade_type"], r["value"]) for r in api] == [
        (r["item_id"], r["annotator"], r["grade_type"], r["value"]) for r in rows]
    assert admin_client_.get(f"{base}/qrels.txt?grade_type=passage").content == qrels_before
    assert admin_client_.get(f"{base}/judgments.jsonl").getvalue() == jsonl_before


def _statusless(pool) -> list[dict]:
    """Records as Argilla's own writer leaves them: responses without a status."""
    records = argilla_export.argilla_records(pool=pool)
    for record in records:
        for answers in record["responses"].values():
            for answer in answers:
                del answer["status"]
    return records


def test_the_upload_form_asks_how_to_read_argilla_responses_without_a_status(judged_pool, admin_client_):
    page = admin_client_.get(f"/review/pools/{judged_pool.public_id}/").content.decode()
    assert 'name="unstated"' in page and 'value="submitted"' in page and 'value="draft"' in page
    url = f"/review/exchange/{judged_pool.public_id}/label-imports/"
    body = json.dumps(_statusless(judged_pool)).encode()
    refused = admin_client_.post(url, {"tool": "argilla", "file": SimpleUploadedFile("records.json", body)},
                                 follow=True).content.decode()
    assert "Label import refused" in refused and ".status: missing" in refused
    assert LabelImport.objects.count() == 0
    done = admin_client_.post(url, {"tool": "argilla", "unstated": "submitted",
                                    "file": SimpleUploadedFile("records.json", body)}, follow=True).content.decode()
    assert "submitted annotations from argilla imported as labels" in done and "nothing left out" in done


def test_the_api_asks_for_unstated_and_reports_what_it_did_not_import(judged_pool, admin_client_):
    base = f"/api/v1/review/pools/{judged_pool.public_id}/label-imports/"
    records = _statusless(judged_pool)
    refused = admin_client_.post(base, {"tool": "argilla", "document": records}, content_type="application/json")
    assert refused.status_code == 400 and ".status: missing" in refused.json()["detail"]
    first = next(iter(records[0]["responses"].values()))[0]
    first["status"] = "discarded"
    created = admin_client_.post(base, {"tool": "argilla", "document": records, "unstated": "submitted"},
                                 content_type="application/json")
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["skipped"] == 1 and body["skipped_by_status"] == {"discarded": 1}
    assert body["not_imported"] == [{"location": "records[0].responses." + next(iter(records[0]["responses"]))
                                     + "[0]", "status": "discarded"}]
    assert "not imported: 1 discarded" in body["report"]


def test_the_command_takes_the_unstated_status_as_a_flag(judged_pool, tmp_path):
    path = tmp_path / "records.json"
    path.write_text(json.dumps(_statusless(judged_pool)))
    pool = f"--pool={judged_pool.public_id}"
    with pytest.raises(CommandError, match=r"records\.json: records\[0\].*status: missing"):
        call_command("import_labels", str(path), pool, tool="argilla", stdout=io.StringIO())
    out = io.StringIO()
    call_command("import_labels", str(path), pool, tool="argilla", unstated_status="submitted", stdout=out)
    assert "submitted annotations from argilla imported as labels" in out.getvalue()
