"""Whether a judgment (or ruling) was made on an item's current texts; one that was not is stale."""

from __future__ import annotations

from typing import Any


def hashes_match(obj: Any, item: Any) -> bool:
    """True when a judgment or ruling was made on the item's current texts; otherwise it is stale."""
    return (
        obj.query_hash == item.query_hash
        and obj.source_hash == item.source_hash
        and obj.passage_hash == item.passage_hash
    )
