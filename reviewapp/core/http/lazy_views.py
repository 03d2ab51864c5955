"""URL patterns name their views by dotted path; a view's module is imported on its first request.

Importing the URL configuration used to import every view, and through them every service, selector, numpy,
scipy and drf-spectacular: about 0.9 s of CPU and 50 MB in every process that merely checks the URLs
(``manage.py check``, each one-shot command that runs the system checks). A ``LazyView`` stands in the pattern
with what the resolver and the checks read without importing anything (``__module__``, ``__qualname__``, so
``URLPattern.lookup_str`` is the same string as the real view's), and imports the view when it is first called
or when someone asks for another attribute (``csrf_exempt`` from the CSRF middleware, ``cls`` from the API schema
generator). A web process imports each view on its page's first request (``reviewapp.core.warmup`` says why
not before).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from importlib import import_module
from typing import Any

_lock = threading.Lock()


class LazyView:
    def __init__(self, target: str, *, as_view: bool = False, **initkwargs: Any) -> None:
        module, _, name = target.rpartition(".")
        if not module or not name:
            raise ValueError(f"lazy_view: {target!r} is not a dotted path to a view")
        self._target = target
        self._as_view = as_view
        self._initkwargs = initkwargs
        self._view: Callable[..., Any] | None = None
        self.__module__ = module
        self.__qualname__ = name
        self.__name__ = name

    def __repr__(self) -> str:
        return f"<lazy view {self._target}{'.as_view()' if self._as_view else ''}>"

    def resolve(self) -> Callable[..., Any]:
        """The real view (imported, and ``as_view(**initkwargs)`` for a class), once."""
        if self._view is None:
            with _lock:
                if self._view is None:
                    module, _, name = self._target.rpartition(".")
                    found = getattr(import_module(module), name)
                    self._view = found.as_view(**self._initkwargs) if self._as_view else found
        return self._view

    def __call__(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        return self.resolve()(request, *args, **kwargs)

    def __getattr__(self, attr: str) -> Any:
        # Only for attributes not set above. ``view_class`` stays absent so that Django's ``lookup_str`` (which
        # prefers it) uses module + qualname without an import; dunders stay absent for copy, pickle, inspect.
        if attr == "view_class" or attr.startswith("__"):
            raise AttributeError(attr)
        return getattr(self.resolve(), attr)


class LazyRef(LazyView):
    """A name in a views module: a function view as it is, or ``.as_view(**initkwargs)`` of a class view."""

    def as_view(self, **initkwargs: Any) -> LazyView:
        return LazyView(self._target, as_view=True, **initkwargs)


class LazyModule:
    """A views (or API) module as URL modules use it, ``views.page`` or ``api.ThingApi.as_view()``, not imported."""

    def __init__(self, module: str) -> None:
        self._module = module

    def __repr__(self) -> str:
        return f"<lazy module {self._module}>"

    def __getattr__(self, name: str) -> LazyRef:
        if name.startswith("__"):
            raise AttributeError(name)
        return LazyRef(f"{self._module}.{name}")


def lazy_module(module: str) -> LazyModule:
    """Stands for ``import module`` in a URL configuration: its views are imported when first needed."""
    return LazyModule(module)


def lazy_view(target: str, *, as_view: bool = False, **initkwargs: Any) -> LazyView:
    """The view at ``target`` ("package.module.name"), imported when first needed; ``as_view`` for a class."""
    return LazyView(target, as_view=as_view, **initkwargs)
