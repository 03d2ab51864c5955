"""Who made a frozen gold set's answers, and how: per entry, and as the one provenance statement of the set.

Read from the gold set's own ``provenance`` (written at the freeze: per contract and category the state, the
procedure, the lawyers who answered, those whose answers were saved with credentials an admin once held, and
the admin who ruled). The statement pages print is ``reviewapp.core.records.provenance`` over
``gold_set_origin``; the sidecar file ``gold_provenance_json`` carries the same per entry, keyed by the CUAD
question id of the gold JSON (``<title>__<category>``), so a CUAD reader of the gold file is not disturbed.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from grading.contracts.gold.models import GoldSet
from grading.contracts.gold.resolution import ADJUDICATED, PROCEDURE
from reviewapp.core.records.provenance import LabelOrigin, Procedure, provenance_records


def entry_procedure(cell: dict[str, Any]) -> str:
    """The procedure of one entry; for a set frozen before procedures were recorded, from its state: a ruling
    with fewer than two lawyers' answers behind it resolved no dispute and is the admin's own label."""
    if cell.get("procedure"):
        return str(cell["procedure"])
    if cell.get("state") == ADJUDICATED and len(cell.get("lawyers") or []) < 2:
        return str(Procedure.ADMIN_OWN)
    return str(PROCEDURE.get(cell.get("state", ""), Procedure.ADMIN_OWN))


def gold_set_entries(gold_set: GoldSet) -> list[dict[str, Any]]:
    """One row per contract and category of the gold set, in the gold JSON's order."""
    out = []
    for contract in gold_set.content["contracts"]:
        cells = gold_set.provenance.get(contract["title"], {}).get("categories", {})
        for category in gold_set.content["categories"]:
            cell = cells.get(category["name"], {})
            out.append({
                "id": f"{contract['title']}__{category['name']}", "title": contract["title"],
                "category": category["name"], "procedure": entry_procedure(cell), "state": cell.get("state", ""),
                "lawyers": list(cell.get("lawyers") or []), "admin_held": list(cell.get("admin_held") or []),
                "adjudicator": cell.get("adjudicator"), "pool": cell.get("pool"), "item": cell.get("item"),
            })
    return out


def gold_set_origin(gold_set: GoldSet) -> LabelOrigin:
    """The gold set as one origin of labels: every entry counted by procedure, its lawyers and adjudicators."""
    entries = gold_set_entries(gold_set)
    procedures = Counter(e["procedure"] for e in entries)
    ruled = {str(Procedure.ADJUDICATED), str(Procedure.ADMIN_OWN)}
    return LabelOrigin(
        role="labels", unit="answer",
        source=f"the firm's gold set v{gold_set.version} of {gold_set.contract_set.name} "
               f"(sha256 {gold_set.sha256[:12]}…)",
        procedures=tuple((p, procedures[p]) for p in map(str, Procedure) if procedures[p]),
        lawyers=tuple(sorted({name for e in entries for name in e["lawyers"]})),
        adjudicators=tuple(sorted({e["adjudicator"] for e in entries if e["adjudicator"] and e["procedure"] in ruled})),
        answers=sum(len(e["lawyers"]) for e in entries),
        admin_held=sum(len(e["admin_held"]) for e in entries),
    )


def gold_provenance_document(gold_set: GoldSet) -> dict[str, Any]:
    return {
        "gold_set": {"contract_set": gold_set.contract_set.name, "version": gold_set.version,
                     "sha256": gold_set.sha256},
        "provenance": provenance_records([gold_set_origin(gold_set)]),
        "entries": gold_set_entries(gold_set),
    }


def gold_provenance_json(gold_set: GoldSet) -> bytes:
    """The sidecar of the gold JSON: who made each entry and how (UTF-8, keys in a fixed order)."""
    return json.dumps(gold_provenance_document(gold_set), ensure_ascii=False, indent=1).encode("utf-8")
