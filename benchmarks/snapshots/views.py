"""The page comparing a snapshot with an earlier one of the same source. Thin: selectors compare."""

from __future__ import annotations

from urllib.parse import urlencode

from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from benchmarks.corpus.models import SourceSnapshot, corpus_label
from benchmarks.snapshots import selectors
from benchmarks.snapshots.changes import KIND_LABELS, KINDS
from reviewapp.core.auth.roles import VIEW_REPORTS, perm_required

# A new edition of a whole CFR title can amend thousands of sections: a page of diffs at a time keeps it quick.
CHANGES_PER_PAGE = 100


def changes_kind(request: HttpRequest) -> str:
    """``?kind=`` (added, removed, amended, notes), or '' for every change."""
    kind = request.GET.get("kind", "")
    if kind and kind not in KINDS:
        raise Http404(f"kind: one of {', '.join(KINDS)}, got {kind[:20]!r}")
    return kind


def snapshot_against(request: HttpRequest, new: SourceSnapshot) -> SourceSnapshot | None:
    """The snapshot ``?against=ID`` names (of the same code), or None for the one just before."""
    against = request.GET.get("against", "")
    if not against:
        return None
    if not against.isdigit() or len(against) > 18:
        raise Http404(f"against: {against[:30]!r} is not a snapshot id")
    old = SourceSnapshot.objects.defer("raw").filter(pk=int(against), corpus=new.corpus).first()
    if old is None or old.pk == new.pk:
        raise Http404(f"against: no other snapshot {against} of {new.corpus}")
    return old


@perm_required(VIEW_REPORTS)
def snapshot_changes(request: HttpRequest, pk: int) -> HttpResponse:
    new = get_object_or_404(SourceSnapshot.objects.defer("raw"), pk=pk)
    kind = changes_kind(request)
    comparison = selectors.snapshot_comparison(new=new, old=snapshot_against(request, new))
    shown = [] if comparison is None else [c for c in comparison.changes.changes if not kind or c.kind == kind]
    page = Paginator(shown, CHANGES_PER_PAGE).get_page(request.GET.get("page"))
    kept = {name: request.GET[name] for name in ("against", "kind") if request.GET.get(name)}
    return render(request, "benchmarks/snapshot_changes.html", {
        "snapshot": new, "label": corpus_label(new.corpus), "comparison": comparison, "kind": kind,
        "kinds": [(k, KIND_LABELS[k]) for k in KINDS], "page": page,
        "query_prefix": f"{urlencode(kept)}&" if kept else "",
        "history": selectors.snapshot_history(snapshot=new),
    })
