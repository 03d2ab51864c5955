"""A small CUAD file in the official layout, written by the tests themselves."""

from __future__ import annotations

import io
import json
import zipfile

CATEGORIES = ("Document Name", "Governing Law", "Anti-Assignment")


def contracts() -> list[dict]:
    """Four contracts; answers are (start, text) found by search so offsets are right by construction."""
    texts = {
        "ALPHA-DISTRIBUTOR AGREEMENT": (
            "DISTRIBUTOR AGREEMENT. This Agreement shall be governed by the laws of the State of Nevada. "
            "Neither party may assign this Agreement without the prior written consent of the other party."
        ),
        "BETA-LICENSE AGREEMENT": (
            "LICENSE AGREEMENT between Beta Corp and Gamma LLC. The laws of Delaware govern this license. "
            "Licensee shall not sublicense or assign any rights granted hereunder to any third party."
        ),
        "GAMMA-SUPPLY AGREEMENT": (
            "SUPPLY AGREEMENT. Supplier shall deliver the goods. This contract is governed by New York law."
        ),
        "DELTA-SERVICES AGREEMENT": "SERVICES AGREEMENT. The consultant provides advice. Zürich law applies here.",
    }
    answers = {
        "ALPHA-DISTRIBUTOR AGREEMENT": {
            "Document Name": ["DISTRIBUTOR AGREEMENT"],
            "Governing Law": ["This Agreement shall be governed by the laws of the State of Nevada."],
            "Anti-Assignment": ["Neither party may assign this Agreement without the prior written consent"],
        },
        "BETA-LICENSE AGREEMENT": {
            "Document Name": ["LICENSE AGREEMENT"],
            "Governing Law": ["The laws of Delaware govern this license."],
            "Anti-Assignment": ["Licensee shall not sublicense or assign any rights granted hereunder"],
        },
        "GAMMA-SUPPLY AGREEMENT": {
            "Document Name": ["SUPPLY AGREEMENT"],
            "Governing Law": ["This contract is governed by New York law."],
            "Anti-Assignment": [],
        },
        "DELTA-SERVICES AGREEMENT": {
            "Document Name": ["SERVICES AGREEMENT"],
            "Governing Law": ["Zürich law applies here."],
            "Anti-Assignment": [],
        },
    }
    out = []
    for title, text in texts.items():
        out.append(
            {
                "title": title,
                "context": text,
                "answers": {cat: [(text.index(a), a) for a in answers[title][cat]] for cat in CATEGORIES},
            }
        )
    return out


def cuad_bytes(items: list[dict] | None = None) -> bytes:
    data = []
    for c in items if items is not None else contracts():
        qas = [
            {
                "id": f"{c['title']}__{category}",
                "question": f'Highlight the parts (if any) of this contract related to "{category}". Details: x',
                "answers": [{"text": t, "answer_start": s} for s, t in answers],
                "is_impossible": not answers,
            }
            for category, answers in c["answers"].items()
        ]
        data.append({"title": c["title"], "paragraphs": [{"context": c["context"], "qas": qas}]})
    return json.dumps({"version": "aok_v1.0", "data": data}, ensure_ascii=False).encode("utf-8")


def zip_of(json_bytes: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("CUAD_v1/CUAD_v1.json", json_bytes)
    return buffer.getvalue()


def gold_run(model: str = "gold") -> dict:
    return {
        "model": model,
        "extractions": [
            {"contract": c["title"], "category": cat, "text": text}
            for c in contracts()
            for cat, answers in c["answers"].items()
            for _, text in answers
        ],
    }
