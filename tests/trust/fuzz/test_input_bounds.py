"""Input that used to crash (a 500) is refused with a 400 naming the problem: JSON nested too deep on every
endpoint and upload, list filters and page limits out of range, a malformed label reference, and a "../" path
under /static/ on the development server."""

from __future__ import annotations

import io
import json

import pytest
from django.apps import apps
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import RequestFactory

from tests.helpers import shown_hashes
from tests.trust.fixtures import client_for

pytestmark = pytest.mark.django_db
DEEP = "[" * 50_000 + "]" * 50_000  # far past Python's recursion limit
DEEP_OBJECT = '{"a":' * 50_000 + "1" + "}" * 50_000


def _rows() -> dict[str, int]:
    return {m._meta.label: m._default_manager.count() for m in apps.get_models()
            if m._meta.managed and m._meta.label != "sessions.Session"}


def _zipped(records: str) -> bytes:
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("records.json", records)
    return buffer.getvalue()


def _json(client, url: str, body: str):
    return client.post(url, body, content_type="application/json")


def test_deeply_nested_json_is_a_400_on_every_endpoint_and_upload(world):
    reviewer, admin = client_for(world.users["reviewer"]), client_for(world.users["admin"])
    stakeholder = client_for(world.users["stakeholder"])
    judgment_url = f"/api/v1/review/items/{world.marker_item_id}/judgment/"
    shown = shown_hashes(world.marker_item_id)
    before = _rows()
    answers = {
        "judgment API, deep body": _json(reviewer, judgment_url, DEEP),
        "judgment API, deep grades": _json(reviewer, judgment_url,
                                           '{"grades": {"section": ' + DEEP + "}, " + json.dumps(shown)[1:]),
        "playground API": _json(stakeholder, "/api/v1/cuad/playground/", DEEP_OBJECT),
        "run API, deep body": _json(admin, "/api/v1/cuad/runs/", DEEP),
        "run API, deep run text": _json(admin, "/api/v1/cuad/runs/", json.dumps({"run": DEEP, "source_name": "x"})),
        "run paste form": admin.post("/cuad/runs/", {"run_text": DEEP}),
        "run paste form, JSON Lines": admin.post("/cuad/runs/", {"run_text": '{"model": "m"}\n' + DEEP}),
        "run upload": admin.post("/cuad/runs/", {"run_file": SimpleUploadedFile("run.json", DEEP.encode())}),
        "pool API": _json(admin, "/api/v1/review/pools/", DEEP_OBJECT),
        "pool form": admin.post("/review/pools/new/", {"name": "p", "kind": "passage", "declared_rule": "r",
                                                       "items": DEEP}),
        "label import form": admin.post("/review/exchange/labels/import/", {"name": "deep", "labels": DEEP}),
        "label exchange upload": admin.post(f"/review/exchange/{world.marker_pool_id}/label-imports/",
                                            {"tool": "label-studio", "file": SimpleUploadedFile("t.json",
                                                                                                DEEP.encode())}),
        "label exchange upload, zipped": admin.post(f"/review/exchange/{world.marker_pool_id}/label-imports/",
                                                    {"tool": "argilla", "file": SimpleUploadedFile("a.zip",
                                                                                                   _zipped(DEEP))}),
        "label exchange API": _json(admin, f"/api/v1/review/pools/{world.marker_pool_id}/label-imports/",
                                    DEEP_OBJECT),
    }
    for what, response in answers.items():
        assert response.status_code in (302, 400), f"{what}: {response.status_code}"
        text = response.content.decode()
        if response.status_code == 302:  # the label import form answers with a message on the next page
            text = " ".join(str(m) for m in response.wsgi_request._messages)
        assert "nested" in text, f"{what}: the answer does not say the JSON is nested too deeply"
    assert _rows() == before


@pytest.mark.parametrize("query, parameter", [
    ("/api/v1/benchmarks/provisions/?snapshot=abc", "snapshot"),
    ("/api/v1/benchmarks/provisions/?snapshot=99999999999999999999999", "snapshot"),
    ("/api/v1/benchmarks/provisions/?snapshot=-3", "snapshot"),
    ("/api/v1/benchmarks/provisions/?snapshot=%EF%BC%91", "snapshot"),  # a fullwidth digit is not an id
    ("/api/v1/benchmarks/provisions/?citation=" + "x" * 600, "citation"),
    ("/api/v1/benchmarks/snapshots/?limit=999999999999999999999", "limit"),
    ("/api/v1/benchmarks/snapshots/?limit=1000000", "limit"),
    ("/api/v1/benchmarks/snapshots/?limit=0", "limit"),
    ("/api/v1/benchmarks/snapshots/?limit=abc", "limit"),
    ("/api/v1/benchmarks/snapshots/?offset=-1", "offset"),
    ("/api/v1/benchmarks/snapshots/?offset=99999999999999999999999", "offset"),
    ("/api/v1/benchmarks/suites/?limit=999999999999999999999", "limit"),
    ("/api/v1/benchmarks/retrieval-runs/?limit=999999999999999999999", "limit"),
    ("/api/v1/cuad/dataset/?sample=99999999999999999999999", "sample"),
])
def test_list_filters_and_pages_out_of_range_are_a_400_naming_the_parameter(world, query, parameter):
    response = client_for(world.users["stakeholder"]).get(query)
    assert response.status_code == 400, response.content[:300]
    assert parameter in response.json()


def test_valid_filters_and_pages_still_filter_and_page(world):
    client = client_for(world.users["stakeholder"])
    snapshots = client.get("/api/v1/benchmarks/snapshots/").json()
    assert snapshots["count"] >= 1
    first = snapshots["results"][0]["id"]
    filtered = client.get(f"/api/v1/benchmarks/provisions/?snapshot={first}&limit=2").json()
    assert len(filtered["results"]) == min(2, filtered["count"]) and filtered["count"] >= 1
    assert {p["snapshot"] for p in filtered["results"]} == {first}
    unknown = client.get("/api/v1/benchmarks/provisions/?snapshot=9223372036854775807").json()
    assert unknown["count"] == 0


def test_a_label_source_with_a_non_object_reference_is_a_400(world):
    admin = client_for(world.users["admin"])
    before = _rows()
    body = {"name": "bad ref", "labels": [{"query_id": "q", "doc_id": "d", "grade_type": "section", "value": 2,
                                           "external_ref": "ab"}]}
    response = admin.post("/api/v1/review/label-sources/", json.dumps(body), content_type="application/json")
    assert response.status_code == 400
    assert "labels[0].external_ref" in response.json()["detail"]
    assert _rows() == before


def test_a_dotdot_path_under_static_is_a_404_on_the_development_server(settings):
    """`make demo` runs runserver with DEBUG=1; Django's own static handler let "../" through as a 500."""
    from django.core.management import get_commands, load_command_class

    settings.DEBUG = True
    command = load_command_class(get_commands()["runserver"], "runserver")
    options = vars(command.create_parser("manage.py", "runserver").parse_args([]))
    handler = command.get_handler(**options)
    for path in ("/static/../reviewapp/settings.py", "/static/vendor/htmx/../../../reviewapp/settings.py",
                 "/static/%2e%2e/reviewapp/settings.py"):
        environ = RequestFactory().get("/").environ
        environ.update(PATH_INFO=path, REQUEST_METHOD="GET", **{"wsgi.input": io.BytesIO(b"")})
        statuses: list[str] = []
        body = b"".join(handler(environ, lambda status, headers, *_, seen=statuses: seen.append(status)))
        assert statuses and statuses[0].startswith("404"), (path, statuses)
        assert b"SECRET_KEY" not in body
