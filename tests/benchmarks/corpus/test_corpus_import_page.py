"""The admin page that uploads a corpus file: the same import as ``import_corpus``, errors by line and field."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.files.uploadedfile import SimpleUploadedFile

from benchmarks.corpus.models import CorpusCode, Provision, SourceSnapshot

CFR = Path(__file__).parent / "data" / "cfr14-parts101-105.jsonl"
URL = "/benchmarks/corpus/import/"


def _upload(client, raw: bytes, *, code: str = "cfr14", name: str = "cfr.jsonl"):
    return client.post(URL, {"code": code, "file": SimpleUploadedFile(name, raw)})


def test_an_admin_uploads_a_corpus_file_and_lands_on_its_corpus_page(admin_client_):
    response = _upload(admin_client_, CFR.read_bytes())
    assert response.status_code == 302 and response["Location"] == "/benchmarks/corpus/cfr14/"
    assert Provision.objects.filter(corpus="cfr14").count() == 50
    assert CorpusCode.objects.get(code="cfr14")
    page = admin_client_.get(response["Location"])
    assert b"50 sections" in page.content or page.status_code == 200

    again = _upload(admin_client_, CFR.read_bytes())
    assert again.status_code == 302 and SourceSnapshot.objects.filter(corpus="cfr14").count() == 1
    assert "nothing new" in str(list(again.wsgi_request._messages)[-1])


def test_a_bad_line_imports_nothing_and_the_page_names_the_line_and_field(admin_client_):
    lines = CFR.read_text().splitlines()
    broken = json.loads(lines[6])
    del broken["citation"]
    lines[6] = json.dumps(broken)
    response = _upload(admin_client_, ("\n".join(lines) + "\n").encode())
    assert response.status_code == 400
    text = response.content.decode()
    assert "line 7: citation: required" in text
    assert not Provision.objects.filter(corpus="cfr14").exists() and not CorpusCode.objects.exists()


def test_the_page_names_a_missing_code_and_a_missing_file(admin_client_):
    response = admin_client_.post(URL, {"code": ""})
    assert response.status_code == 400
    assert "code: required" in response.content.decode() and "file: choose" in response.content.decode()


def test_a_built_in_code_is_refused_with_the_command_to_use(admin_client_):
    response = _upload(admin_client_, CFR.read_bytes(), code="nrs")
    assert response.status_code == 400 and "import_statutes" in response.content.decode()


def test_a_code_that_names_a_corpus_page_is_refused(admin_client_):
    # /benchmarks/corpus/import/ is this page: a corpus coded "import" could never be shown.
    for code in ("import", "provisions"):
        response = _upload(admin_client_, CFR.read_bytes(), code=code)
        assert response.status_code == 400
        assert f"&#x27;{code}&#x27; names a page of the corpus pages" in response.content.decode()
    assert not CorpusCode.objects.exists() and not Provision.objects.exists()


def test_an_upload_posted_to_the_old_path_is_sent_on_with_its_body(admin_client_):
    # A form still open at the page's old address posts there; 308 keeps the method and the file.
    response = admin_client_.post("/benchmarks/corpora/import/", {"code": "cfr14", "file": SimpleUploadedFile(
        "cfr.jsonl", CFR.read_bytes())})
    assert response.status_code == 308 and response["Location"] == URL
    assert not Provision.objects.exists()  # the redirect itself imports nothing; the new path does, as above


def test_only_admins_may_import_a_corpus(stakeholder_client, reviewer_client):
    for client in (stakeholder_client, reviewer_client):
        assert _upload(client, CFR.read_bytes()).status_code == 403
    assert not Provision.objects.filter(corpus="cfr14").exists()
