"""URL patterns that name their views: the resolver, the CSRF middleware and the schema see the real view."""

from __future__ import annotations

import pytest
from django.urls import URLPattern, get_resolver

from reviewapp.core.http.lazy_views import LazyView, lazy_module, lazy_view


def _patterns(patterns):
    for pattern in patterns:
        if hasattr(pattern, "url_patterns"):
            yield from _patterns(pattern.url_patterns)
        else:
            yield pattern


def test_every_lazy_pattern_names_the_same_view_the_import_would_give():
    checked = 0
    for pattern in _patterns(get_resolver().url_patterns):
        if not isinstance(pattern.callback, LazyView):
            continue
        view = pattern.callback.resolve()
        real = URLPattern(pattern.pattern, view, pattern.default_args, pattern.name)
        # Django's lookup string (reverse by callable, debug pages) is the real view's, without an import; a name
        # bound to ``SomeView.as_view()`` in a views module keeps its own name.
        if not (hasattr(view, "view_class") and not pattern.callback._as_view):
            assert pattern.lookup_str == real.lookup_str
        assert getattr(pattern.callback, "csrf_exempt", False) == getattr(view, "csrf_exempt", False)
        assert getattr(pattern.callback, "cls", None) is getattr(view, "cls", None)
        checked += 1
    assert checked > 100


def test_a_class_view_gets_its_init_arguments_and_a_bad_name_fails_when_first_needed():
    view = lazy_module("django.views.generic").TemplateView.as_view(template_name="base.html")
    assert view.resolve().view_initkwargs == {"template_name": "base.html"}
    missing = lazy_view("reviewapp.core.views.no_such_view")
    with pytest.raises(AttributeError, match="no_such_view"):
        missing.resolve()
    with pytest.raises(ValueError, match="not a dotted path"):
        lazy_view("plain")
