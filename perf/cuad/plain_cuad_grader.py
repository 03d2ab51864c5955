"""A minimal plain-Python CUAD grader: the peer ``perf/cuad/bench_cuad_process.py`` measures ``load_cuad`` +
``sample_cuad`` + ``grade_cuad`` against.

Written as a careful but naive grader would write it: standard library plus scipy's
``linear_sum_assignment`` for the optimal one-to-one matching. It reads CUAD_v1.json, takes the contracts of a
sample manifest, and grades a run with the same rules as the product (scoring/cuad/tokens.py and grading.py):
lowercased ``\\w+`` tokens, bag-of-tokens F1 (two empty bags 1.0), the maximum-total-F1 assignment within each
(contract, clause type) cell with zero-score pairs dropped, grounding = share of the claim's distinct word
trigrams found in the contract (n = claim length when shorter; 1.0 when verbatim, case-insensitively),
outcomes at correct 0.70 / partial 0.40 / grounding 0.80 (credit 1 / 0.5), and per clause type the micro
figures: P = credit / extractions, R = credit / spans, F1 = 2 credit / (extractions + spans), plus the mean
matched F1. It does not check spans, store anything or bootstrap: it is the least a grader does.

Usage: ``python perf/cuad/plain_cuad_grader.py CUAD_v1.json manifest.json run.json`` prints JSON.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter

import numpy as np
from scipy.optimize import linear_sum_assignment

CORRECT, PARTIAL, GROUNDING = 0.70, 0.40, 0.80
WORD = re.compile(r"\w+")


def tokenize(text: str) -> list[str]:
    return WORD.findall(text.lower())


def f1(a: Counter, len_a: int, b: Counter, len_b: int) -> float:
    if len_a == 0 or len_b == 0:
        return 1.0 if len_a == len_b else 0.0
    overlap = sum((a & b).values())
    return 2.0 * overlap / (len_a + len_b) if overlap else 0.0


def ngrams(tokens: list[str], n: int) -> set[tuple[str, ...]]:
    return set(zip(*(tokens[i:] for i in range(n)), strict=False))


def grounding(claim: str, tokens: list[str], lower_text: str, text_grams: dict[int, set]) -> float:
    stripped = claim.strip()
    if stripped and stripped.lower() in lower_text:
        return 1.0
    if not tokens:
        return 0.0
    n = min(3, len(tokens))
    if n not in text_grams:
        text_grams[n] = ngrams(tokenize(lower_text), n)
    grams = ngrams(tokens, n)
    return sum(1 for g in grams if g in text_grams[n]) / len(grams)


def main(cuad_path: str, manifest_path: str, run_path: str) -> None:
    with open(cuad_path, encoding="utf-8") as f:
        cuad = json.load(f)
    with open(manifest_path, encoding="utf-8") as f:
        titles = [c["title"] for c in json.load(f)["contracts"]]
    with open(run_path, encoding="utf-8") as f:
        run = json.load(f)

    wanted = set(titles)
    texts: dict[str, str] = {}
    gold: dict[tuple[str, str], list[str]] = {}
    categories: list[str] = []
    for entry in cuad["data"]:
        for qa in entry["paragraphs"][0]["qas"]:
            category = qa["id"].rsplit("__", 1)[1]
            if category not in categories:
                categories.append(category)
            if entry["title"] in wanted:
                gold.setdefault((entry["title"], category), []).extend(a["text"] for a in qa["answers"])
        if entry["title"] in wanted:
            texts[entry["title"]] = entry["paragraphs"][0]["context"]

    claims: dict[tuple[str, str], list[str]] = {}
    for e in run["extractions"]:
        if e["contract"] in wanted:
            claims.setdefault((e["contract"], e["category"]), []).append(e["text"])

    totals = {c: {"credit": 0.0, "extractions": 0, "spans": 0, "matched_f1": [],
                  "correct": 0, "partial": 0, "incorrect": 0, "hallucinated": 0} for c in categories}
    for (_, category), spans in gold.items():
        totals[category]["spans"] += len(spans)
    for title in titles:
        lower_text = texts[title].lower()
        text_grams: dict[int, set] = {}
        for category in categories:
            cell = claims.get((title, category), [])
            if not cell:
                continue
            refs = gold.get((title, category), [])
            claim_tokens = [tokenize(t) for t in cell]
            claim_bags = [(Counter(t), len(t)) for t in claim_tokens]
            ref_bags = [(Counter(t), len(t)) for t in (tokenize(r) for r in refs)]
            matched = [0.0] * len(cell)
            has_match = [False] * len(cell)
            if refs:
                matrix = np.array([[f1(a, la, b, lb) for b, lb in ref_bags] for a, la in claim_bags])
                rows, cols = linear_sum_assignment(matrix, maximize=True)
                for r, c in zip(rows, cols, strict=True):
                    if matrix[r, c] > 0:
                        matched[r], has_match[r] = float(matrix[r, c]), True
            t = totals[category]
            for claim, tokens, score, ok in zip(cell, claim_tokens, matched, has_match, strict=True):
                t["extractions"] += 1
                t["matched_f1"].append(score)
                if grounding(claim, tokens, lower_text, text_grams) < GROUNDING:
                    t["hallucinated"] += 1
                elif ok and score >= CORRECT:
                    t["correct"] += 1
                    t["credit"] += 1.0
                elif ok and score >= PARTIAL:
                    t["partial"] += 1
                    t["credit"] += 0.5
                else:
                    t["incorrect"] += 1

    out = {}
    for category, t in totals.items():
        e, s, credit = t["extractions"], t["spans"], t["credit"]
        out[category] = {
            "precision": credit / e if e else None,
            "recall": credit / s if s else None,
            "f1": 2.0 * credit / (e + s) if e + s else None,
            "mean_matched_f1": sum(t["matched_f1"]) / e if e else None,
            "counts": {k: t[k] for k in ("correct", "partial", "incorrect", "hallucinated", "extractions", "spans")},
        }
    json.dump({"contracts": len(titles), "per_type": out}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        raise SystemExit(__doc__.rsplit("Usage: ", 1)[1].strip())
    main(*sys.argv[1:])
