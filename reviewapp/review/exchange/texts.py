"""What an exported item carries, and the check that an imported one is still the item it names.

An export carries an item's opaque id and its texts, nothing about how the item was chosen (no run, rank, score,
query or document id, job reference). An import names the item by that id; the server recomputes the three text
hashes from the texts the file carries and refuses the file unless they equal the item's current hashes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db.models import Q

from reviewapp.review.judgments.hashes import ITEM_HASH_FIELDS, item_hashes
from reviewapp.review.judgments.models import ReviewItem
from reviewapp.review.kinds import kind_get
from reviewapp.review.pools.models import ReviewPool

# Item attribute -> key in a Label Studio task's ``data`` (and its object tag's name) and an Argilla record's
# ``fields``: the attribute names themselves, which no grade type shares (both tools want every name unique, and
# "passage" is a grade type).
TEXT_KEYS = {key: key for key in ("query_text", "source_heading", "source_text", "passage_caption", "passage_text")}
# The tool-side key of the item's public id.
ITEM_KEY = "item"
# Which text each hash covers, for naming a mismatch.
HASH_TEXTS = {
    "query_hash": ("query_text",),
    "source_hash": ("source_heading", "source_text"),
    "passage_hash": ("passage_caption", "passage_text"),
}


class ExchangeError(ValueError):
    """A file refused: the message names the task or record and the field."""


@dataclass(frozen=True)
class ParsedAnnotation:
    """One grade read from a file, before it is checked against the pool."""

    location: str  # "tasks[3].annotations[0]"
    item_id: str
    texts: dict[str, str]  # tool-side key -> text, as the file carries it
    annotator: str
    grade_type: str
    raw_value: object


def text_keys(pool: ReviewPool) -> list[str]:
    """The tool-side text keys of a pool's items: the passage's when its kind shows one or any item carries one.

    Every text the item's hashes cover is exported when it is not empty, so that an import can be checked against
    all three hashes (a kind without a passage normally has none).
    """
    keys = ["query_text", "source_heading", "source_text"]
    has_passage = pool.items.filter(~Q(passage_text="") | ~Q(passage_caption="")).exists()
    if kind_get(pool.kind).passage_label or has_passage:
        keys += ["passage_caption", "passage_text"]
    return keys


def item_texts(item: ReviewItem, keys: list[str]) -> dict[str, str]:
    """The item's texts under their tool-side keys."""
    return {key: str(getattr(item, attr) or "") for attr, key in TEXT_KEYS.items() if key in keys}


def item_hash_values(item: ReviewItem) -> dict[str, str]:
    return {field: getattr(item, field) for field in ITEM_HASH_FIELDS}


def texts_read(raw: Mapping[str, Any], *, where: str) -> dict[str, str]:
    """The text keys present in a task's ``data`` / record's ``fields`` (absent ones are read as '')."""
    texts: dict[str, str] = {}
    for key in TEXT_KEYS.values():
        value = raw.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise ExchangeError(f"{where}.{key}: expected text, got {type(value).__name__}")
        texts[key] = value
    return texts


def texts_check(item: ReviewItem, texts: Mapping[str, str], *, where: str) -> dict[str, str]:
    """The item's hashes, recomputed from the file's texts; refused unless equal to the item's current hashes."""
    def text(key: str) -> str:
        return texts.get(key, "")

    computed = item_hashes(**{attr: text(key) for attr, key in TEXT_KEYS.items()})
    differing = [key for field, keys in HASH_TEXTS.items() if computed[field] != getattr(item, field) for key in keys]
    if differing:
        raise ExchangeError(
            f"{where}: the texts ({', '.join(differing)}) are not item {item.public_id}'s current texts (changed in "
            "the file, or the item's texts changed since the export); nothing was imported")
    return computed
