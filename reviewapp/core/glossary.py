"""The one list of status words the pages show, each with a one-line explanation.

Templates mark a word with ``{% status_word "fallback" %}`` (or ``{{ value|status_word }}``): it renders as an
``<abbr>`` whose title is the explanation, and /glossary/ lists every entry. A word a page shows is added here,
never explained in a template of its own, so the hover text and the glossary page cannot disagree.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from reviewapp.core.auth.roles import VIEW_REPORTS

# word -> one-line explanation. Keys are lower case; the order is the glossary page's order.
# Words a reviewer meets (REVIEW) are explained without naming anything a reviewer must not learn (no
# model, provider, rank or score: see tests/trust/access/test_blind_crawl.py); the rest are for report readers.
REVIEW: dict[str, str] = {
    "draft": "Saved but not marked complete: not counted in any figure yet.",
    "complete": "Marked complete by the reviewer: counted in agreement and labels.",
    "skipped": "Put aside by the reviewer for later; not counted.",
    "stale": "No heartbeat from its worker for too long; for a judgment, the item's texts changed since it was "
             "graded, so it is graded again.",
    "unknown": "A request sent with no answer recorded; for a human grade, the reviewer could not decide "
               "(left out of agreement, never read as a grade).",
    "adjudicated": "Decided by an admin after reviewers disagreed; the decision is the label.",
    "agreed": "Every complete judgment of the item gave the same grade.",
}
REPORTS: dict[str, str] = {
    "waiting": "A label audit waiting for the extraction job of its run to finish first.",
    "queued": "Waiting for a worker to start it; nothing has been sent yet.",
    "running": "A worker is processing it now; the page follows its progress.",
    "done": "Finished: every planned item was processed (some may still have failed individually).",
    "failed": "Stopped by an error; the message says why, and Resume continues from what was already recorded.",
    "stopped": "Stopped by its budget (requests or input tokens) before finishing; answered requests are kept.",
    "cancelled": "Cancelled by an admin before finishing; answered requests are kept.",
    "incomplete": "Ended with requests that have no answer (unknown: sent, no answer recorded; or failed) or never "
                  "sent; answered requests are kept, and its finish command re-attempts the rest (raising the budget "
                  "where needed).",
    "ok": "Completed normally.",
    "fallback": "The keyword search found too few candidates, so a broader fallback search filled the pool.",
    "short": "Fewer than k candidates were retrieved for the query, even with the fallback search; for a "
             "clause type, the sample holds fewer contracts of it than the target.",
    "resolved": "A citation query whose cited section the citation parser found in the corpus.",
    "unresolved": "A citation query whose cited section is not in the corpus.",
    "provisional": "Not final: target citations or labels not yet confirmed by human review.",
    "final": "Confirmed labels, counted as passage labels.",
    "confirmed": "Both judges agreed that the candidate is a real clause CUAD's labels missed.",
    "heuristic": "A local baseline rule, not a language model: cheap and offline, but not a real judge.",
    "met": "The sample holds at least the target number of contracts of this clause type.",
}
GLOSSARY: dict[str, str] = {**REVIEW, **REPORTS}


def explain(word: str) -> str | None:
    """The explanation of ``word`` (any case), or None when the glossary has no entry for it."""
    return GLOSSARY.get(str(word).strip().lower())


def entries_for(*, reports: bool) -> dict[str, str]:
    """The glossary a reader sees: report readers get every word, everyone else the review words only."""
    return GLOSSARY if reports else REVIEW


def glossary_view(request: HttpRequest) -> HttpResponse:
    """/glossary/: every status word with its explanation (report words for report readers only)."""
    reports = request.user.is_authenticated and request.user.has_perm(VIEW_REPORTS)
    return render(request, "glossary.html", {"entries": entries_for(reports=reports)})
