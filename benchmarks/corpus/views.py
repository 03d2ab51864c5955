"""Corpus browser pages: a corpus, a chapter, a provision. Thin: selectors do the work."""

from __future__ import annotations

from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from benchmarks.corpus import selectors
from benchmarks.corpus.models import corpus_label
from reviewapp.core.access import VIEW_REPORTS, perm_required

# A long chapter (HRS 346 has hundreds of sections) rendered whole was slow; pages keep it quick.
PROVISIONS_PER_PAGE = 50


@perm_required(VIEW_REPORTS)
def corpus_detail(request: HttpRequest, corpus: str) -> HttpResponse:
    if not selectors.corpus_known(corpus=corpus):
        raise Http404("unknown corpus")
    return render(request, "benchmarks/corpus.html", {
        "corpus": corpus, "label": corpus_label(corpus),
        "snapshots": selectors.corpus_current_snapshots(corpus=corpus),
        "chapters": selectors.corpus_chapters(corpus=corpus),
    })


@perm_required(VIEW_REPORTS)
def chapter_detail(request: HttpRequest, corpus: str, chapter: str) -> HttpResponse:
    if not selectors.corpus_known(corpus=corpus):
        raise Http404("unknown corpus")
    paginator = Paginator(selectors.chapter_provisions(corpus=corpus, chapter=chapter), PROVISIONS_PER_PAGE)
    if not paginator.count:
        raise Http404("no such chapter")
    # Out-of-range or malformed ?page= falls back to the nearest page rather than a 404.
    page = paginator.get_page(request.GET.get("page"))
    return render(request, "benchmarks/chapter.html", {
        "corpus": corpus, "label": corpus_label(corpus), "chapter": chapter,
        "chapter_title": page.object_list[0].chapter_title, "provisions": page.object_list, "page": page,
    })


@perm_required(VIEW_REPORTS)
def provision_detail(request: HttpRequest, pk: int) -> HttpResponse:
    try:
        provision = selectors.provision_get(pk=pk)
    except Exception as exc:
        raise Http404("no such provision") from exc
    return render(request, "benchmarks/provision.html", {"provision": provision,
                                                          "passages": provision.passages.all()})
