"""Corpus browser pages: a corpus, a chapter, a provision. Thin: selectors do the work."""

from __future__ import annotations

from typing import BinaryIO, cast

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from benchmarks.corpus import selectors, services
from benchmarks.corpus.base import ParseError
from benchmarks.corpus.models import corpus_label
from reviewapp.core.auth.roles import LAUNCH_RUNS, VIEW_REPORTS, perm_required

# A corpus file is read whole and validated before anything is written; the request body limit
# (REQUEST_BODY_MAX_BYTES) bounds it first.
CORPUS_FORM_FIELDS = ("code", "citation_pattern", "citation_form")

# A long chapter (HRS 346 has hundreds of sections) rendered whole was slow; pages keep it quick.
PROVISIONS_PER_PAGE = 50


@perm_required(VIEW_REPORTS)
def corpus_detail(request: HttpRequest, corpus: str) -> HttpResponse:
    if not selectors.corpus_known(corpus=corpus):
        raise Http404("unknown corpus")
    snapshots = selectors.corpus_current_snapshots(corpus=corpus)
    chapters = selectors.corpus_chapters(corpus=corpus)
    # A corpus file may give no title, chapter or part (docs/corpus-format.md): its sections have no chapter
    # page to link to, so they are listed here, flat and paginated.
    named = [c for c in chapters if c["chapter"]]
    page = None
    if len(named) < len(chapters):
        page = Paginator(selectors.chapter_provisions(corpus=corpus, chapter=""), PROVISIONS_PER_PAGE).get_page(
            request.GET.get("page"))
    return render(request, "benchmarks/corpus.html", {
        "corpus": corpus, "label": corpus_label(corpus), "snapshots": snapshots,
        "with_previous": selectors.snapshots_with_previous(snapshots=snapshots),
        "chapters": named, "page": page, "provisions": page.object_list if page is not None else [],
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


@perm_required(LAUNCH_RUNS)
def corpus_import(request: HttpRequest) -> HttpResponse:
    """Upload a corpus file (docs/corpus-format.md) or an eCFR XML file as a pinned snapshot of a code, as
    ``import_corpus`` does.

    A bad line refuses the whole file and the page lists every problem by line and field; nothing is written.
    """
    values = {name: request.POST.get(name, "").strip() for name in CORPUS_FORM_FIELDS}
    if request.method != "POST":
        return render(request, "benchmarks/corpus_import.html", {"values": values,
                                                                   "codes": selectors.corpus_codes()})
    upload = request.FILES.get("file")
    problems: list[str] = []
    # A CFR XML file names its own code (cfr and its title number); a corpus file does not.
    if not values["code"] and (upload is None or services.corpus_format(upload.name or "") != "ecfr-xml"):
        problems.append("code: required (a short id such as cfr14)")
    if upload is None:
        problems.append("file: choose a JSON Lines or CSV corpus file, or a CFR XML file")
    if not problems and upload is not None:
        filename = upload.name or "corpus.jsonl"
        try:
            outcome = services.corpus_file_import(
                # The upload's file (in memory up to FILE_UPLOAD_MAX_MEMORY_SIZE, else on disk), read in chunks.
                code=values["code"], raw=cast(BinaryIO, upload.file), filename=filename,
                citation_pattern=values["citation_pattern"], citation_form=values["citation_form"])
        except ParseError as error:  # the file's own problems: one per line and field
            problems = [str(p) for p in getattr(error, "problems", [])] or [str(error)]
        except services.ImportProblem as error:
            problems = [str(error)]
        else:
            snapshot = outcome.snapshot
            word = "imported as a new snapshot" if outcome.created else "is already imported (same bytes); nothing new"
            messages.success(request, f"{filename} {word}: {snapshot.provisions.count()} sections of "
                                      f"{corpus_label(snapshot.corpus)}.")
            return redirect("benchmarks:corpus", corpus=snapshot.corpus)
    return render(request, "benchmarks/corpus_import.html", {
        "values": values, "codes": selectors.corpus_codes(), "problems": problems,
        "filename": upload.name if upload is not None else ""}, status=400)
