"""Work every web process would otherwise do on its first request, done once before it serves any.

Called by ``reviewapp.wsgi`` at import: under ``gunicorn --preload`` (docker-compose) that is the master, so
every forked worker inherits the result and answers its first request as fast as its second. Without
``--preload`` each worker does it while booting, still before it accepts a connection.

What a first request paid for (measured by perf/web/bench_pages.py): importing the URL config and the views,
the reverse tables of the URL resolvers (built per namespace the first time ``{% url %}`` or ``reverse()``
names one: ~70-160 ms), compiling the templates it renders (the cached loader keeps them per process),
importing the Redis client (~50-90 ms, on the first cache read) and the modules settings name for a request.
Nothing here opens a connection (database, Redis): connections must not be shared across the fork.
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path

logger = logging.getLogger(__name__)


def warm_up() -> None:
    """Import the URL config, build every URL reverse table, compile the project's templates, load the rest."""
    _url_reverse_tables()
    _templates()
    _request_modules()


def _url_reverse_tables() -> None:
    from django.urls import URLResolver, get_resolver

    from reviewapp.core.http.lazy_views import resolve_all

    root = get_resolver()
    # The URL config names its views (reviewapp.core.http.lazy_views) so that `manage.py check` imports none; a web
    # process imports them all here, before its first request.
    resolve_all(root.url_patterns)
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
    from django.urls import NoReverseMatch, reverse

    for namespace, (_, sub) in resolver.namespace_dict.items():
        path = f"{prefix}{namespace}:"
        name = next((key for key in sub.reverse_dict if isinstance(key, str)), None)
        if name is not None:
            with contextlib.suppress(NoReverseMatch):
                reverse(path + name)
        _namespaces(sub, prefix=path)


def _templates() -> None:
    from django.conf import settings
    from django.template import TemplateSyntaxError
    from django.template.loader import get_template

    for config in settings.TEMPLATES:
        for folder in map(Path, config.get("DIRS", [])):
            for path in sorted(folder.rglob("*.html")):
                name = path.relative_to(folder).as_posix()
                try:
                    get_template(name)
                except TemplateSyntaxError:
                    # The page using it fails as it would have; one broken template must not stop the server.
                    logger.warning("template %s does not compile; left for its page to report", name)


def _request_modules() -> None:
    """Modules a request loads by name on first use: the cache's client library, the template context
    processors, the message storage, the number formats of the language; and the password validators, built
    once per process by the first page that shows their help (the common-password one reads its 20,000 words from
    a gzip file: ~20 ms of CPU, 60-100 ms on a loaded machine, measured on the password-change page)."""
    from django.conf import settings
    from django.contrib.auth.password_validation import get_default_password_validators
    from django.template import engines
    from django.utils import formats
    from django.utils.module_loading import import_string

    if any(config["BACKEND"].endswith(".RedisCache") for config in settings.CACHES.values()):
        import redis  # noqa: F401 - imported by Django's Redis cache on the first cache read, not before
    for engine in engines.all():
        engine.engine.template_context_processors  # noqa: B018 - imported on first access
    import_string(settings.MESSAGE_STORAGE)
    formats.get_format("DECIMAL_SEPARATOR")
    get_default_password_validators()  # kept by the function's cache
