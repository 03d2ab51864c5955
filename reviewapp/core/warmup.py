"""What every web process would otherwise do on its first request, and only what many pages share, done once
before it serves any.

Called by ``reviewapp.wsgi`` at import: under ``gunicorn --preload`` (docker-compose) that is the master, so
every forked worker inherits the result. Without ``--preload`` each worker does it while booting, still before it
accepts a connection.

Shared by every page, so built here: the URL config and its reverse tables (built per namespace the first time
``{% url %}`` or ``reverse()`` names one: ~70-160 ms on a first request), the layout every page extends
(``base.html``), the Redis client (~50-90 ms on the first cache read), the modules settings name for a request,
the password validators, and numpy (~45 ms), which every page with figures or bootstraps reaches.

Left to each page's first request: its own view module and templates. Importing every view and compiling all 90
templates here made the web start 3.75-4.2x a bare Django project's (the goal: at most 2x) for a first
request that was 0-5 ms slower than a warm one; now the master takes ~0.3 s less and a page's first request is
at most ~55-95 ms slower than its warm median (the limit: 100 ms), both measured by
``perf/service/bench_startup.py`` in ``make bench``. The cost: a worker holds only the views it has served, and
loads each on its own (memory not shared copy-on-write with the master).
Nothing here opens a connection (database, Redis): connections must not be shared across the fork.
"""

from __future__ import annotations

import contextlib

from django.conf import settings
from django.contrib.auth.password_validation import get_default_password_validators
from django.template import engines
from django.template.backends.django import DjangoTemplates
from django.template.loader import get_template
from django.urls import NoReverseMatch, URLResolver, get_resolver, reverse
from django.utils import formats
from django.utils.module_loading import import_string

LAYOUT = "base.html"


def warm_up() -> None:
    """Import the URL config, build every URL reverse table, compile the layout, load the shared modules."""
    _url_reverse_tables()
    _layout()
    _request_modules()
    _shared_libraries()


def _url_reverse_tables() -> None:
    # The URL config names its views (reviewapp.core.http.lazy_views): each is imported by its page's first
    # request, not here.
    root = get_resolver()
    _walk(root, URLResolver)
    _namespaces(root, prefix="")


def _walk(resolver, resolver_type: type) -> None:
    """Each resolver's own reverse table and every pattern's compiled regex (resolving a path matches them)."""
    resolver.reverse_dict  # noqa: B018 - the property builds the table for the current language
    for pattern in resolver.url_patterns:
        pattern.pattern.regex  # noqa: B018 - compiled on first access, then kept on the pattern
        if isinstance(pattern, resolver_type):
            _walk(pattern, resolver_type)


def _namespaces(resolver, *, prefix: str) -> None:
    """Reversing ``ns:name`` builds (and caches) a resolver per namespace the first time: reverse one name of each
    namespace, nested ones included. An argument mismatch raises after the table is built, which is all we need."""
    for namespace, (_, sub) in resolver.namespace_dict.items():
        path = f"{prefix}{namespace}:"
        name = next((key for key in sub.reverse_dict if isinstance(key, str)), None)
        if name is not None:
            with contextlib.suppress(NoReverseMatch):
                reverse(path + name)
        _namespaces(sub, prefix=path)


def _layout() -> None:
    get_template(LAYOUT)  # the cached loader keeps it for every page that extends it


def _request_modules() -> None:
    """Modules a request loads by name on first use: the cache's client library, the template context
    processors, the message storage, the number formats of the language; and the password validators, built
    once per process by the first page that shows their help (the common-password one reads its 20,000 words from
    a gzip file: ~20 ms of CPU, 60-100 ms on a loaded machine, measured on the password-change page)."""
    if any(str(config["BACKEND"]).endswith(".RedisCache") for config in settings.CACHES.values()):
        # local import: the point of the warm-up; Django's Redis cache imports it on the first cache read, not before
        import redis  # noqa: F401
    for engine in engines.all():
        if isinstance(engine, DjangoTemplates):  # the only backend configured; others have no processors
            engine.engine.template_context_processors  # noqa: B018 - imported on first access
    import_string(settings.MESSAGE_STORAGE)
    formats.get_format("DECIMAL_SEPARATOR")
    get_default_password_validators()  # kept by the function's cache


def _shared_libraries() -> None:
    # local import: the point of the warm-up: the figures, bootstraps and leaderboards of many pages; ~45 ms
    import numpy  # noqa: F401
