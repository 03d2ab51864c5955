"""Every page under /review/ names the folder of its view: /review/pools/... is served from review/pools/views.py.

A newcomer finds a page's code from its URL in one hop. Old paths kept as permanent redirects are left out: they
serve no page of their own.
"""

import pytest
from django.urls import URLResolver, get_resolver

from reviewapp.core.http.moved import is_moved


def _review_pages() -> list[tuple[str, str]]:
    def walk(patterns, prefix=""):
        for pattern in patterns:
            route = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                yield from walk(pattern.url_patterns, route)
            elif route.startswith("review/") and not is_moved(pattern.callback):
                view = getattr(pattern.callback, "view_class", None) or pattern.callback
                yield route, view.__module__

    return list(walk(get_resolver().url_patterns))


@pytest.mark.house
def test_every_review_page_url_begins_with_the_folder_of_its_view():
    pages = _review_pages()
    assert len(pages) >= 30
    for route, module in pages:
        folder = module.removeprefix("reviewapp.review.").rsplit(".", 1)[0].split(".")
        segments = route.removeprefix("review/").split("/")
        assert module.startswith("reviewapp.review.") and segments[:len(folder)] == folder, (route, module)


def test_the_old_review_paths_answer_with_a_permanent_redirect_to_the_new_ones(reviewer_client):
    assert reviewer_client.get("/review/")["Location"] == "/review/workspace/"
    response = reviewer_client.get("/review/items/abc/history/?x=1")
    assert response.status_code == 301 and response["Location"] == "/review/workspace/items/abc/history/?x=1"
