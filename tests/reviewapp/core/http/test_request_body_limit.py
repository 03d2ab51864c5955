"""Request bodies over REQUEST_BODY_MAX_BYTES are refused (413) before anything reads them, for anonymous and
signed-in callers: an anonymous 300 MB upload used to be spooled to disk by the CSRF check before the login
redirect."""

from __future__ import annotations

import io
import json

import pytest
from django.core.exceptions import RequestDataTooBig
from django.core.files.uploadedfile import SimpleUploadedFile
from django.http import HttpResponse
from django.http.multipartparser import MultiPartParser
from django.test import Client, RequestFactory

from reviewapp.core.http.middleware import RequestBodyLimitMiddleware

LIMIT = 20_000


@pytest.fixture
def small_limit(settings):
    settings.REQUEST_BODY_MAX_BYTES = LIMIT
    return LIMIT


@pytest.fixture
def multipart_reads(monkeypatch):
    """Records every multipart parse (the step that writes uploads to the temporary folder)."""
    calls: list[str] = []
    original = MultiPartParser.parse

    def recording(self):
        calls.append("parse")
        return original(self)

    monkeypatch.setattr(MultiPartParser, "parse", recording)
    return calls


def _csrf_client() -> Client:
    """CSRF checks on and a CSRF cookie held, as after any page view: the check then reads the POST body."""
    client = Client(enforce_csrf_checks=True)
    client.cookies["csrftoken"] = "a" * 32
    return client


def _big_upload() -> dict:
    return {"run_file": SimpleUploadedFile("run.json", b"x" * (LIMIT * 3))}


@pytest.mark.django_db
def test_an_anonymous_oversized_upload_is_refused_before_it_is_read(small_limit, multipart_reads):
    # With CSRF checks on, as in production: the CSRF check is what used to read (and spool) the upload.
    response = _csrf_client().post("/review/workspace/items/x/", _big_upload())
    assert response.status_code == 413
    assert f"the limit is {LIMIT} bytes" in response.content.decode()
    assert multipart_reads == []


def test_a_signed_in_oversized_upload_is_refused_before_it_is_read(small_limit, multipart_reads, admin_client_):
    response = admin_client_.post("/cuad/runs/", _big_upload())
    assert response.status_code == 413 and multipart_reads == []


def test_an_oversized_json_body_is_refused(small_limit, admin_client_):
    body = json.dumps({"run": "x" * (LIMIT * 2), "source_name": "big"})
    response = admin_client_.post("/api/v1/cuad/runs/", body, content_type="application/json")
    assert response.status_code == 413


@pytest.mark.django_db
def test_a_body_under_the_limit_goes_on_to_the_usual_checks(small_limit, multipart_reads):
    upload = {"run_file": SimpleUploadedFile("a.txt", b"x" * 100)}
    response = _csrf_client().post("/review/workspace/items/x/", upload)
    assert response.status_code == 403 and b"CSRF" in response.content
    assert multipart_reads == ["parse"]  # the spy sees the parse when one happens
    response = Client().post("/review/workspace/items/x/", upload)
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_a_body_without_a_length_is_cut_off_at_the_limit(small_limit):
    """A chunked body (no Content-Length) is read through a stream that refuses to go past the limit."""
    request = RequestFactory().post("/api/v1/cuad/runs/", data=b"", content_type="application/octet-stream")
    request.META.pop("CONTENT_LENGTH", None)
    request._stream = io.BytesIO(b"y" * (LIMIT * 5))

    def view(req):
        return HttpResponse(str(len(req.body)))

    with pytest.raises(RequestDataTooBig):
        RequestBodyLimitMiddleware(view)(request)

    short = RequestFactory().post("/x", data=b"", content_type="application/octet-stream")
    short.META.pop("CONTENT_LENGTH", None)
    short._stream = io.BytesIO(b"y" * 10)
    assert RequestBodyLimitMiddleware(view)(short).content == b"10"


def test_a_malformed_content_length_is_a_400(small_limit):
    request = RequestFactory().post("/x", data=b"{}", content_type="application/json")
    request.META["CONTENT_LENGTH"] = "12abc"
    response = RequestBodyLimitMiddleware(lambda req: HttpResponse("reached"))(request)
    assert response.status_code == 400


def test_the_limit_fits_the_largest_upload_the_product_takes(settings):
    from grading.runs.views import MAX_UPLOAD_BYTES

    assert settings.REQUEST_BODY_MAX_BYTES > MAX_UPLOAD_BYTES
    assert settings.MIDDLEWARE[0] == "reviewapp.core.http.middleware.RequestBodyLimitMiddleware"
