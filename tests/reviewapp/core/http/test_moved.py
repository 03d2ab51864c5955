"""A moved page's old path: a permanent redirect to the new path, arguments and query kept, a form sent on intact."""

from __future__ import annotations

import json

import pytest
from django.http import HttpRequest, JsonResponse
from django.test import Client
from django.urls import path

from reviewapp.core.http.moved import is_moved, moved


def _echo(request: HttpRequest, pk: int) -> JsonResponse:
    return JsonResponse({"method": request.method, "pk": pk, "query": request.GET.dict(), "body": request.POST.dict()})


urlpatterns = [
    path("new/things/<int:pk>/", _echo, name="thing"),
    moved("things/<int:pk>/", "thing"),
]


@pytest.mark.urls(__name__)
def test_the_old_path_sends_every_method_on_with_its_arguments_query_and_body():
    client = Client()
    answer = client.get("/things/7/?a=1&b=two")
    assert answer.status_code == 301 and answer["Location"] == "/new/things/7/?a=1&b=two"
    assert client.get("/things/7/")["Location"] == "/new/things/7/"
    assert json.loads(client.get("/things/7/?a=1", follow=True).content)["query"] == {"a": "1"}

    posted = client.post("/things/8/?next=x", {"declare": "yes"}, follow=True)
    assert posted.redirect_chain == [("/new/things/8/?next=x", 308)]
    assert json.loads(posted.content) == {"method": "POST", "pk": 8, "query": {"next": "x"},
                                          "body": {"declare": "yes"}}


def test_an_old_path_is_told_apart_from_a_page():
    assert is_moved(urlpatterns[1].callback) and not is_moved(urlpatterns[0].callback) and not is_moved(None)
