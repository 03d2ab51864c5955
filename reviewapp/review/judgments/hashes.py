"""What a judgment binds to: the hashes of an item's texts, the one place they are computed, and the staleness rule.

Pure functions of texts and hashes (no database): jobs compute hashes for their own ledgers with these same
functions, and a judgment, ruling or annotation whose hashes differ from its item's current ones is stale.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reviewapp.core.records.hashing import sha256_hex, sha256_json
from reviewapp.review.errors import ReviewError

ITEM_TEXT_FIELDS = ("query_text", "source_heading", "source_text", "passage_caption", "passage_text")
ITEM_HASH_FIELDS = ("query_hash", "source_hash", "passage_hash")


def query_hash_of(text: str) -> str:
    return sha256_hex(text)


def source_hash_of(heading: str, text: str) -> str:
    return sha256_json({"heading": heading, "text": text})


def passage_hash_of(caption: str, text: str) -> str:
    return sha256_json({"caption": caption, "text": text})


def item_hashes(*, query_text: str, source_heading: str, source_text: str, passage_caption: str,
                passage_text: str) -> dict[str, str]:
    """The three hashes of an item's texts: the one place they are computed."""
    return {"query_hash": query_hash_of(query_text), "source_hash": source_hash_of(source_heading, source_text),
            "passage_hash": passage_hash_of(passage_caption, passage_text)}


def item_hashes_check(*, texts: Mapping[str, str], claimed: Mapping[str, Any], where: str = "") -> dict[str, str]:
    """The hashes of ``texts`` computed here; a hash in ``claimed`` is only a check, refused when it differs.

    The message names the field (``items[3].passage_hash does not match the passage text``).
    """
    computed = item_hashes(**{field: texts[field] for field in ITEM_TEXT_FIELDS})
    prefix = f"{where}." if where else ""
    for field, value in computed.items():
        sent = claimed.get(field)
        if sent is None or sent == "":
            continue
        if not isinstance(sent, str) or sent.strip().lower() != value:
            text = field.removesuffix("_hash")
            raise ReviewError(f"{prefix}{field} does not match the {text} text (hashes are computed by the server "
                              "from the texts; send them only as a check, or leave them out)")
    return computed


def texts_key(*, query_hash: str, source_hash: str, passage_hash: str) -> str:
    """One digest of the three text hashes: "the same texts" for the never-twice rule."""
    return sha256_json([query_hash, source_hash, passage_hash])


def hashes_match(obj: Any, item: Any) -> bool:
    """True when a judgment, ruling or annotation was made on the item's current texts; otherwise it is stale."""
    return (
        obj.query_hash == item.query_hash
        and obj.source_hash == item.source_hash
        and obj.passage_hash == item.passage_hash
    )
