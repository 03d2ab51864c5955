"""The page comparing a snapshot with an earlier one of the same source. Thin: selectors compare."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from benchmarks.corpus.models import SourceSnapshot, corpus_label
from benchmarks.snapshots import selectors
from reviewapp.core.access import VIEW_REPORTS, perm_required


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
    comparison = selectors.snapshot_comparison(new=new, old=snapshot_against(request, new))
    return render(request, "benchmarks/snapshot_changes.html", {
        "snapshot": new, "label": corpus_label(new.corpus), "comparison": comparison,
        "history": selectors.snapshot_history(snapshot=new),
    })
