"""A frozen gold set as CUAD's own SQuAD-style JSON (the shape of CUAD_v1.json) and as CSV.

The JSON is what ``load_cuad`` / ``grade_cuad --cuad`` read unchanged: ``{"version", "data": [{"title",
"paragraphs": [{"qas": [{"answers": [{"text", "answer_start"}], "id": "<title>__<Category>", "question",
"is_impossible"}], "context"}]}]}``, one paragraph per contract holding its whole stored text, one question per
category in the taxonomy's order, in CUAD's wording. Keys in CUAD's order, UTF-8, one line as CUAD writes it,
so exporting a version twice gives the same bytes.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any

from grading.contracts.gold.models import GoldSet
from grading.contracts.models import ContractText
from reviewapp.core.exports.csv_export import SafeCsvWriter

CSV_COLUMNS = ("contract_set", "gold_version", "gold_sha256", "title", "text_sha256", "category", "present",
               "state", "span", "start", "end", "text")


class GoldExportError(ValueError):
    pass


def cuad_question(category: str, description: str) -> str:
    """CUAD's question for a category, word for word."""
    return (f'Highlight the parts (if any) of this contract related to "{category}" that should be reviewed by a '
            f"lawyer. Details: {description}")


def _texts(gold_set: GoldSet) -> dict[str, str]:
    wanted = {c["text_sha256"] for c in gold_set.content["contracts"]}
    found = dict(ContractText.objects.filter(sha256__in=wanted).values_list("sha256", "text"))
    missing = wanted - set(found)
    if missing:  # texts are append-only, so this means a database restored without them
        raise GoldExportError(f"{gold_set}: {len(missing)} contract text(s) are missing from the database")
    return found


def gold_cuad_document(gold_set: GoldSet) -> dict[str, Any]:
    """The gold set as a CUAD v1 document (a dict in CUAD's key order)."""
    categories = gold_set.content["categories"]
    bad = [c["name"] for c in categories if "__" in c["name"]]
    if bad:
        raise GoldExportError(f"category name(s) {bad} contain '__', which CUAD's question ids cannot carry")
    texts = _texts(gold_set)
    data = []
    for contract in gold_set.content["contracts"]:
        title = contract["title"]
        qas = []
        for category in categories:
            answer = contract["answers"][category["name"]]
            qas.append({
                "answers": [{"text": span["text"], "answer_start": span["start"]} for span in answer["spans"]],
                "id": f"{title}__{category['name']}",
                "question": cuad_question(category["name"], category["description"]),
                "is_impossible": not answer["present"],
            })
        data.append({"title": title, "paragraphs": [{"qas": qas, "context": texts[contract["text_sha256"]]}]})
    return {"version": f"gold v{gold_set.version} {gold_set.sha256[:12]}", "data": data}


def gold_cuad_json(gold_set: GoldSet) -> bytes:
    """The CUAD JSON file's bytes (``json.dumps`` as CUAD_v1.json is written: UTF-8, default separators)."""
    return json.dumps(gold_cuad_document(gold_set), ensure_ascii=False).encode("utf-8")


def gold_csv_rows(gold_set: GoldSet) -> Iterator[list[Any]]:
    """One row per contract x category x span (an absent category: one row with no span)."""
    states = gold_set.provenance
    for contract in gold_set.content["contracts"]:
        for category in gold_set.content["categories"]:
            name = category["name"]
            answer = contract["answers"][name]
            state = states.get(contract["title"], {}).get("categories", {}).get(name, {}).get("state", "")
            head = [gold_set.contract_set.name, gold_set.version, gold_set.sha256, contract["title"],
                    contract["text_sha256"], name, 1 if answer["present"] else 0, state]
            if not answer["spans"]:
                yield [*head, "", "", "", ""]
            for index, span in enumerate(answer["spans"], start=1):
                yield [*head, index, span["start"], span["end"], span["text"]]


def gold_csv(gold_set: GoldSet) -> bytes:
    out = io.StringIO(newline="")
    writer = SafeCsvWriter(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    writer.writerows(gold_csv_rows(gold_set))
    return out.getvalue().encode("utf-8")
