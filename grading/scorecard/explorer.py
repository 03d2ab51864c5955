"""The explorer: a run's graded extractions next to the CUAD spans of one contract, located in its text.

Locations are UTF-16 offsets, as the browser counts them: an extraction where
``scoring.cuad.quotes.locate`` finds it (None when it is found nowhere), a CUAD
span at its stored offsets.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from grading.dataset.models import Contract, Span
from grading.runs.models import Extraction
from grading.runs.selectors import stored_pairs
from grading.scorecard.params import View
from scoring.cuad.grading import OUTCOME_NAMES, classify
from scoring.cuad.quotes import Located, as_utf16, locate


@dataclass
class ExplorerItem:
    kind: str  # "extraction" or "span"
    pk: int
    category: str
    text: str
    outcome: str
    f1: float | None = None
    grounding: float | None = None
    partner: int | None = None  # matched span (for an extraction) / extraction (for a span)
    located: Located | None = None


@dataclass
class ContractRow:
    contract_id: int
    title: str
    spans: int = 0
    extractions: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)


@dataclass
class Explorer:
    view: View
    contracts: list[ContractRow]
    contract: Contract | None
    extractions: list[ExplorerItem]
    spans: list[ExplorerItem]
    categories: list[str]

    @property
    def contract_text(self) -> str:
        return self.contract.text if self.contract else ""


def explorer_view(*, view: View) -> Explorer:
    """Graded extractions next to the CUAD spans, per contract (optionally one clause type), from stored scores."""
    pairs = stored_pairs(run=view.run, sample=view.sample, matcher=view.matcher)
    table = pairs.table
    classified = classify(table, view.thresholds)
    categories = [c.name for c in pairs.scope.categories]
    k = categories.index(view.category) if view.category else None
    ext_sel = np.ones(len(table.ext_category), dtype=bool) if k is None else table.ext_category == k
    span_sel = np.ones(len(table.span_category), dtype=bool) if k is None else table.span_category == k

    titles = dict(Contract.objects.filter(pk__in=pairs.scope.contract_ids).values_list("id", "title"))
    rows = [ContractRow(cid, titles[cid]) for cid in pairs.scope.contract_ids]
    for ci, n in zip(*np.unique(table.span_contract[span_sel], return_counts=True), strict=True):
        rows[int(ci)].spans = int(n)
    for i in np.flatnonzero(ext_sel):
        row = rows[int(table.ext_contract[i])]
        row.extractions += 1
        name = OUTCOME_NAMES[int(classified.outcome[i])]
        row.outcomes[name] = row.outcomes.get(name, 0) + 1
    for j in np.flatnonzero(span_sel & classified.span_missed):
        row = rows[int(table.span_contract[j])]
        row.outcomes["missed"] = row.outcomes.get("missed", 0) + 1

    index = {cid: i for i, cid in enumerate(pairs.scope.contract_ids)}
    chosen = view.contract_id if view.contract_id in index else None
    if chosen is None:
        chosen = next((r.contract_id for r in rows if r.extractions or r.spans), None)
    if chosen is None:
        return Explorer(view, rows, None, [], [], categories)
    contract = Contract.objects.get(pk=chosen)
    ci = index[chosen]

    ext_idx = np.flatnonzero(ext_sel & (table.ext_contract == ci))
    span_idx = np.flatnonzero(span_sel & (table.span_contract == ci))
    ext_text = dict(Extraction.objects.filter(pk__in=pairs.extraction_ids[ext_idx].tolist()).values_list("id", "text"))
    span_info = {
        pk: (start, end, text)
        for pk, start, end, text in Span.objects.filter(pk__in=pairs.span_ids[span_idx].tolist()).values_list(
            "id", "start", "end", "text"
        )
    }
    span_to_ext: dict[int, int] = {}
    extractions = []
    for i in ext_idx:
        pk = int(pairs.extraction_ids[i])
        s = int(table.ext_span[i])
        span_pk = int(pairs.span_ids[s]) if s >= 0 else None
        if span_pk is not None:
            span_to_ext[span_pk] = pk
        text = ext_text[pk]
        extractions.append(
            ExplorerItem(
                "extraction",
                pk,
                categories[int(table.ext_category[i])],
                text,
                OUTCOME_NAMES[int(classified.outcome[i])],
                float(table.ext_f1[i]),
                float(table.ext_grounding[i]),
                span_pk,
                _in_browser_offsets(contract.text, locate(contract.text, text)),
            )
        )
    spans = []
    for j in span_idx:
        pk = int(pairs.span_ids[j])
        start, end, text = span_info[pk]
        spans.append(
            ExplorerItem(
                "span",
                pk,
                categories[int(table.span_category[j])],
                text,
                "missed" if classified.span_missed[j] else "credited",
                partner=span_to_ext.get(pk),
                located=as_utf16(contract.text, Located(start, end, "offsets")),
            )
        )
    return Explorer(view, rows, contract, extractions, spans, categories)


def _in_browser_offsets(text: str, found: Located | None) -> Located | None:
    return None if found is None else as_utf16(text, found)


def explorer_json(explorer: Explorer) -> dict:
    def item(x: ExplorerItem) -> dict:
        out = {
            "id": x.pk,
            "category": x.category,
            "text": x.text,
            "outcome": x.outcome,
            "located": None
            if x.located is None
            else {"start": x.located.start, "end": x.located.end, "how": x.located.how},
        }
        if x.kind == "extraction":
            out.update({"f1": x.f1, "grounding": x.grounding, "matched_span": x.partner})
        else:
            out["matched_extraction"] = x.partner
        return out

    c = explorer.contract
    return {
        "run": {"id": explorer.view.run.pk, "model": explorer.view.run.model},
        "thresholds": explorer.view.thresholds.as_dict(),
        "matcher": explorer.view.matcher,
        "type": explorer.view.category or None,
        "contract": None if c is None else {"id": c.pk, "title": c.title, "length": c.length},
        "extractions": [item(x) for x in explorer.extractions],
        "spans": [item(x) for x in explorer.spans],
        "contracts": [
            {"id": r.contract_id, "title": r.title, "spans": r.spans, "extractions": r.extractions, **r.outcomes}
            for r in explorer.contracts
        ],
    }
