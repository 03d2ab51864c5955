"""What the nouns above pools show on the pool pages: each registers its panels at startup (``apps.ready``).

Agreement, assignment and exchange read pools, so pools may not read them back: the pool list, a pool's page and
its known-answer page ask this registry instead, and each noun fills its part of a page from its own reads.

A panel is registered by its dotted path and imported when a page first asks for it: agreement's panels read the
statistics (numpy), which a process that never draws a pool page (``manage.py check``, a worker) does not load.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from django.utils.module_loading import import_string

from reviewapp.review.pools.models import ReviewPool

# A panel: the template context entries it adds to a page, read for one pool (or, on the list, for none).
PoolPanel = Callable[[ReviewPool], Mapping[str, Any]]
ListPanel = Callable[[], Mapping[str, Any]]
# The current rulings (grade type -> adjudicated answer) of one item of a pool, named by its public id.
ItemRulings = Callable[[ReviewPool, str], Mapping[str, Any]]

# Each registry holds panels as registered: a callable, or the dotted path of one.
_LIST_PANELS: list[ListPanel | str] = []
_PAGE_PANELS: list[PoolPanel | str] = []
_KNOWN_ANSWER_PANELS: list[PoolPanel | str] = []
_ITEM_RULINGS: list[ItemRulings | str] = []


def _add(panels: list[Any], panel: Any) -> None:
    # ready() may run twice (the test runner, a reloaded registry): a panel is shown once.
    if panel not in panels:
        panels.append(panel)


def _resolved(panel: Any) -> Any:
    return import_string(panel) if isinstance(panel, str) else panel


def pool_list_panel_add(panel: ListPanel | str) -> None:
    _add(_LIST_PANELS, panel)


def pool_page_panel_add(panel: PoolPanel | str) -> None:
    _add(_PAGE_PANELS, panel)


def known_answer_panel_add(panel: PoolPanel | str) -> None:
    _add(_KNOWN_ANSWER_PANELS, panel)


def item_rulings_set(rulings: ItemRulings | str) -> None:
    _ITEM_RULINGS[:] = [rulings]


def _merged(parts: list[Mapping[str, Any]]) -> dict[str, Any]:
    context: dict[str, Any] = {}
    for part in parts:
        clash = context.keys() & part.keys()
        if clash:
            raise RuntimeError(f"two pool panels both fill {sorted(clash)}")
        context.update(part)
    return context


def pool_list_panels() -> dict[str, Any]:
    return _merged([_resolved(panel)() for panel in _LIST_PANELS])


def pool_page_panels(pool: ReviewPool) -> dict[str, Any]:
    return _merged([_resolved(panel)(pool) for panel in _PAGE_PANELS])


def known_answer_panels(pool: ReviewPool) -> dict[str, Any]:
    return _merged([_resolved(panel)(pool) for panel in _KNOWN_ANSWER_PANELS])


def item_rulings(pool: ReviewPool, item_id: str) -> Mapping[str, Any]:
    if not _ITEM_RULINGS:
        raise RuntimeError("no reader of rulings registered (ReviewConfig.ready registers agreement's)")
    rulings: ItemRulings = _resolved(_ITEM_RULINGS[0])
    return rulings(pool, item_id)
