"""The reviewer's pages (/review/workspace/): their queue, an item to grade, and their own history of it.

Thin: parse, call a service or selector, render. Reviewer templates get only the ``ReviewerItem`` /
``QueuePage`` dataclasses, never a model row, so a field that is not listed there cannot reach a reviewer.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from reviewapp.core.auth.accounts import user_shortcuts_get
from reviewapp.core.auth.roles import GRADE, perm_required
from reviewapp.core.http.json_input import JsonInputError, json_loads
from reviewapp.core.http.requests import SignedInHttpRequest
from reviewapp.review.assignment.queue_state import QUEUE_STATES
from reviewapp.review.day.openings import item_opening_record
from reviewapp.review.day.selectors import reviewer_day
from reviewapp.review.errors import NotAssigned, ReviewError
from reviewapp.review.pools.guidelines import reviewer_guidelines
from reviewapp.review.spans.locate import span_rows
from reviewapp.review.workspace.queue import reviewer_queue_pages
from reviewapp.review.workspace.selectors import (
    ReviewerItem,
    reviewer_assignment,
    reviewer_history,
    reviewer_item,
    reviewer_item_after_save,
    reviewer_item_view,
)
from reviewapp.review.workspace.services import (
    SHOWN_HASH_FIELDS,
    SubmitResult,
    TextChanged,
    assignment_skip_set,
    item_shown_hashes,
    judgment_reopen,
    judgment_submit,
    judgment_undo,
)

QUEUE_FILTERS = (("", "All"), ("todo", "To do"), ("draft", "Draft"), ("complete", "Complete"),
                 ("skipped", "Skipped"))


@perm_required(GRADE)
def queue(request: SignedInHttpRequest) -> HttpResponse:
    state = request.GET.get("status", "")
    if state not in QUEUE_STATES:
        state = ""
    search = request.GET.get("q", "").strip()[:200]
    try:
        page = int(request.GET.get("page", "1"))
    except ValueError:
        page = 1
    queues = reviewer_queue_pages(reviewer=request.user, state=state, search=search, page=page,
                                  page_pool=request.GET.get("pool", ""))
    # One pool only (?only=<pool id>): the same figures, the other pools left off the page.
    only = request.GET.get("only", "")
    shown = [q for q in queues if q.pool_id == only] if any(q.pool_id == only for q in queues) else queues
    # ``j`` past the last item of a pool lands here (?end=1); the queue is over only when every pool is.
    open_items = sum(q.total - q.completed for q in queues)
    return render(request, "review/queue.html", {
        "queues": shown, "only": shown[0] if len(shown) < len(queues) else None, "state": state,
        "search": search, "filters": QUEUE_FILTERS, "day": reviewer_day(reviewer=request.user, queues=queues),
        "reached_end": request.GET.get("end") == "1", "all_done": bool(queues) and open_items == 0,
        "open_items": open_items, "idle_cap_minutes": round(settings.REVIEW_IDLE_CAP_SECONDS / 60),
    })


def _grades_from_post(request: HttpRequest, view: ReviewerItem) -> dict[str, str]:
    return {grade_type: request.POST.get(grade_type, "") for grade_type in view.kind.grade_type_keys}


def _next_url(view: ReviewerItem) -> str:
    """Where "next" goes: the next item in order; past the last one, the next open item, else the queue."""
    target = view.next_id or view.next_open_id
    return reverse("review:item", kwargs={"item_id": target}) if target else reverse("review:queue") + "?end=1"


def _spans_from_post(request: HttpRequest, view: ReviewerItem) -> Any:
    """The page's hidden ``spans`` field (JSON [[start, end], ...]); None on a kind without spans."""
    if not view.kind.answers_spans:
        return None
    raw = request.POST.get("spans", "").strip()
    if not raw:
        return []
    try:
        return json_loads(raw)
    except JsonInputError as error:
        raise ReviewError(f"spans: {error}") from None


def _span_context(view: ReviewerItem, *, spans: Any, saved: list) -> dict:
    """What the span workspace adds: the spans (as sent back after a refusal, else saved) and the location map."""
    try:
        rows = span_rows(spans=spans, text=view.source_text, locations=view.span_locations)
    except (TypeError, ValueError):
        rows = []  # spans the server refused as malformed: the list shows none; the hidden field keeps them
    locations = view.span_locations
    return {"span_rows": rows, "spans_json": json.dumps(spans), "saved_spans_json": json.dumps(saved),
            "span_map": {"unit": locations.unit if locations else "",
                         "starts": [list(pair) for pair in locations.starts] if locations else []}}


def _item_template(view: ReviewerItem) -> str:
    """The kind's own workspace (contract clause spans), else the passage workspace."""
    return view.kind.workspace_template or "review/item.html"


def _item_context(view: ReviewerItem, *, reviewer: Any, form_grades: dict | None = None,
                  form_note: str | None = None, error: str = "", saved: str = "",
                  shown: dict[str, str] | None = None, form_spans: Any = None) -> dict:
    saved_grades = view.current.grades if view.current else {}
    grades = form_grades if form_grades is not None else saved_grades
    rows = []
    for grade_type in view.kind.grade_types:
        chosen = grades.get(grade_type.key)
        chosen = "" if chosen is None else str(chosen)
        options = [
            {"value": str(value), "key": key, "meaning": meaning, "checked": chosen == str(value)}
            for value, key, meaning in view.kind.scale
        ]
        options.append({"value": "unknown", "key": "u", "meaning": "unknown", "checked": chosen in ("unknown", "u")})
        rows.append({"key": grade_type.key, "label": grade_type.label, "help": grade_type.help_text,
                     "options": options})
    # What the server holds, so the page can tell saved from unsaved (the reviewer's own grades only).
    saved_state = {key: ("" if saved_grades.get(key) is None else str(saved_grades[key]))
                   for key in view.kind.grade_type_keys}
    saved_state["note"] = view.current.note if view.current else ""
    saved_spans = view.current.spans if view.current else []
    spans = form_spans if isinstance(form_spans, list) else saved_spans
    span_context = _span_context(view, spans=spans, saved=saved_spans) if view.kind.answers_spans else {}
    return {"view": view, **span_context, "grade_rows": rows, "error": error, "saved": saved,
            "note": form_note if form_note is not None else saved_state["note"],
            "saved_state": saved_state, "next_url": _next_url(view),
            "locked": view.current is not None and view.current.status == "complete" and not view.needs_regrade,
            "shown_hashes": sorted((shown or {}).items()),
            # single keys, Alt + key, or none (the reviewer's own setting, WCAG 2.1.4)
            "shortcuts": user_shortcuts_get(user=reviewer),
            # The pool's current guidelines (text and version only), for review/_guidelines.html.
            "guidelines": reviewer_guidelines(pool_id=view.pool_id)}


def _saved_message(action: str, result: SubmitResult) -> str:
    number = result.revision.number
    if not result.created:
        return f"Nothing changed since revision {number}."
    return {
        "complete": f"Marked complete (revision {number}).",
        "reopen": f"Reopened as a draft (revision {number}); the completed one stays in the history.",
        "undo": f"Undone: the state before your last change is restored as revision {number}.",
    }.get(action, f"Draft saved (revision {number}).")


@perm_required(GRADE)
@require_http_methods(["GET", "POST"])
def item(request: SignedInHttpRequest, item_id: str) -> HttpResponse:
    try:
        assignment = reviewer_assignment(reviewer=request.user, item_id=item_id)
    except NotAssigned:
        raise Http404("no such item in your queue") from None
    view = reviewer_item_view(assignment=assignment)
    # The hashes of the texts on this page go out as hidden fields and come back with the grades.
    shown = item_shown_hashes(assignment.item)
    if request.method == "GET":
        # Where the time spent on this item starts (per item, never across items or pools).
        item_opening_record(item=assignment.item, reviewer=request.user)
        return render(request, _item_template(view), _item_context(view, reviewer=request.user, shown=shown))

    action = request.POST.get("action", "save")
    if action in ("skip", "unskip"):
        changed = assignment_skip_set(reviewer=request.user, item=assignment.item, skipped=action == "skip")
        if action == "skip":
            messages.info(request, "Skipped for later: the item moved to the end of your queue." if changed
                          else "Already skipped for later.")
            view = reviewer_item_view(assignment=assignment)
            return redirect(_next_url(view) if view.next_id or view.next_open_id else reverse("review:queue"))
        messages.info(request, "Back in its place in your queue.")
        return redirect("review:item", item_id=item_id)
    grades = _grades_from_post(request, view)
    note = request.POST.get("note", "")
    spans: Any = None
    try:
        spans = _spans_from_post(request, view)
        if action == "reopen":
            grades = dict(view.current.grades) if view.current is not None else grades
            result = judgment_reopen(item=assignment.item, reviewer=request.user)
        elif action == "undo":
            result = judgment_undo(item=assignment.item, reviewer=request.user)
        else:
            result = judgment_submit(
                item=assignment.item, reviewer=request.user, grades=grades, complete=action == "complete", note=note,
                shown={field: request.POST.get(field, "") for field in SHOWN_HASH_FIELDS}, spans=spans,
            )
    except TextChanged as changed:
        # Nothing was saved. The page is shown again with the new texts (read after the change) to grade.
        assignment = reviewer_assignment(reviewer=request.user, item_id=item_id)
        view = reviewer_item_view(assignment=assignment)
        shown = item_shown_hashes(assignment.item)
        if request.htmx:
            # The texts sit outside the form fragment: reload the whole page, with the message.
            messages.warning(request, str(changed))
            return HttpResponse(status=200, headers={"HX-Refresh": "true"})
        context = _item_context(view, reviewer=request.user, shown=shown, error=str(changed))
        return render(request, _item_template(view), context, status=409)
    except ReviewError as error:
        # A refused submit keeps every field as the reviewer left it, the note included.
        context = _item_context(view, reviewer=request.user, form_grades=grades, form_note=note, error=str(error),
                                shown=shown, form_spans=spans)
        if request.htmx:
            return render(request, _item_template(view) + "#judgment", context)
        return render(request, _item_template(view), context, status=400)
    saved = _saved_message(action, result)
    view = reviewer_item_after_save(view=view, revision=result.revision)
    if action == "complete" and result.created:
        # Auto-advance: straight on to the next open item (or the queue when none is left).
        messages.success(request, saved)
        target = (reverse("review:item", kwargs={"item_id": view.next_open_id}) if view.next_open_id
                  else reverse("review:queue") + "?end=1")
        if request.htmx:
            return HttpResponse(status=200, headers={"HX-Redirect": target})
        return redirect(target)
    if request.htmx:
        context = _item_context(view, reviewer=request.user, saved=saved, shown=shown)
        return render(request, _item_template(view) + "#judgment", context)
    messages.success(request, saved)
    return redirect("review:item", item_id=item_id)


@perm_required(GRADE)
def history(request: SignedInHttpRequest, item_id: str) -> HttpResponse:
    try:
        view = reviewer_item(reviewer=request.user, item_id=item_id)
        revisions = reviewer_history(reviewer=request.user, item_id=item_id)
    except NotAssigned:
        raise Http404("no such item in your queue") from None
    return render(request, "review/history.html", {"view": view, "revisions": revisions})
