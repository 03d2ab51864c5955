"""Old paths kept as permanent redirects to where their pages moved: bookmarks and links people hold keep working.

Django's ``RedirectView`` (the target by URL name, the arguments and the query kept), with one change: a read
(GET, HEAD) gets 301, what every client follows with its query; anything else gets 308, so a form posted to an
old path (declaring a review pool, resuming a job, importing a corpus) is sent again, method and body kept, to the
new path, where the new path's own permission and CSRF checks apply. The redirect reads nothing from the
database, so every role, signed in or not, gets the same answer, and it tells nobody more than the path they asked
for already says (a page's existence and permission are checked at the new path, as before).
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponsePermanentRedirect
from django.urls import URLPattern, path
from django.views.generic import RedirectView


class MovedView(RedirectView):
    permanent = True
    query_string = True

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponsePermanentRedirect:
        # RedirectView answers every method with get(); only a read may become a GET on the way.
        url = self.get_redirect_url(*args, **kwargs)
        assert url is not None  # a pattern name reverses to a URL (or raises NoReverseMatch)
        return HttpResponsePermanentRedirect(url, preserve_request=request.method not in ("GET", "HEAD"))


def moved(old_route: str, to: str) -> URLPattern:
    """The pattern ``old_route`` sending every request on to the pattern named ``to``, arguments and query kept."""
    return path(old_route, MovedView.as_view(pattern_name=to))


def is_moved(view: Any) -> bool:
    """Whether ``view`` is an old path's redirect (benches that visit every page leave those out)."""
    return getattr(view, "view_class", None) is MovedView
