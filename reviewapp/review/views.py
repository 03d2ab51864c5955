"""Pages of the blinded review (/review/): the reviewer's queue and item pages, and the admin's pool pages.

Thin: parse, call a service or selector, render. Reviewer templates get only
the ``ReviewerItem`` / ``ReviewerPoolQueue`` dataclasses, never a model row,
so a field that is not listed there cannot reach a reviewer.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from reviewapp.core.auth.accounts import user_shortcuts_get
from reviewapp.core.auth.roles import GRADE, MANAGE_REVIEWS, perm_required
from reviewapp.core.http.json_input import JsonInputError, JsonSyntaxError, json_loads
from reviewapp.review import selectors, services
from reviewapp.review.agreement import disagreements, exports
from reviewapp.review.agreement import selectors as agreement
from reviewapp.review.assignment import reuse
from reviewapp.review.assignment.assign import pool_assign_detail
from reviewapp.review.day.openings import item_opening_record
from reviewapp.review.day.selectors import reviewer_day
from reviewapp.review.exchange import selectors as exchange_selectors
from reviewapp.review.kinds import kind_get, kinds_all
from reviewapp.review.models import ReviewItem, ReviewPool
from reviewapp.review.people.views import invitation_url, user_or_404
from reviewapp.review.pools import guidelines, known_answers, pool_admin
from reviewapp.review.spans.locate import span_rows
from reviewapp.review.workspace import skips as workspace

# ---------------------------------------------------------------------------
# Reviewer pages
# ---------------------------------------------------------------------------


QUEUE_FILTERS = (("", "All"), ("todo", "To do"), ("draft", "Draft"), ("complete", "Complete"),
                 ("skipped", "Skipped"))


@perm_required(GRADE)
def queue(request: HttpRequest) -> HttpResponse:
    state = request.GET.get("status", "")
    if state not in selectors.QUEUE_STATES:
        state = ""
    search = request.GET.get("q", "").strip()[:200]
    try:
        page = int(request.GET.get("page", "1"))
    except ValueError:
        page = 1
    queues = selectors.reviewer_queue_pages(reviewer=request.user, state=state, search=search, page=page,
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


def _grades_from_post(request: HttpRequest, view: selectors.ReviewerItem) -> dict[str, str]:
    return {grade_type: request.POST.get(grade_type, "") for grade_type in view.kind.grade_type_keys}


def _next_url(view: selectors.ReviewerItem) -> str:
    """Where "next" goes: the next item in order; past the last one, the next open item, else the queue."""
    target = view.next_id or view.next_open_id
    return reverse("review:item", kwargs={"item_id": target}) if target else reverse("review:queue") + "?end=1"


def _spans_from_post(request: HttpRequest, view: selectors.ReviewerItem) -> Any:
    """The page's hidden ``spans`` field (JSON [[start, end], ...]); None on a kind without spans."""
    if not view.kind.answers_spans:
        return None
    raw = request.POST.get("spans", "").strip()
    if not raw:
        return []
    try:
        return json_loads(raw)
    except JsonInputError as error:
        raise services.ReviewError(f"spans: {error}") from None


def _span_context(view: selectors.ReviewerItem, *, spans: Any, saved: list) -> dict:
    """What the span workspace adds: the spans (as sent back after a refusal, else saved) and the location map."""
    try:
        rows = span_rows(spans=spans, text=view.source_text, locations=view.span_locations)
    except (TypeError, ValueError):
        rows = []  # spans the server refused as malformed: the list shows none; the hidden field keeps them
    locations = view.span_locations
    return {"span_rows": rows, "spans_json": json.dumps(spans), "saved_spans_json": json.dumps(saved),
            "span_map": {"unit": locations.unit if locations else "",
                         "starts": [list(pair) for pair in locations.starts] if locations else []}}


def _item_template(view: selectors.ReviewerItem) -> str:
    """The kind's own workspace (contract clause spans), else the passage workspace."""
    return view.kind.workspace_template or "review/item.html"


def _item_context(view: selectors.ReviewerItem, *, reviewer: Any, form_grades: dict | None = None,
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
            "locked": bool(view.current) and view.current.status == "complete" and not view.needs_regrade,
            "shown_hashes": sorted((shown or {}).items()),
            # single keys, Alt + key, or none (the reviewer's own setting, WCAG 2.1.4)
            "shortcuts": user_shortcuts_get(user=reviewer),
            # The pool's current guidelines (text and version only), for review/_guidelines.html.
            "guidelines": guidelines.reviewer_guidelines(pool_id=view.pool_id)}


def _saved_message(action: str, result: services.SubmitResult) -> str:
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
def item(request: HttpRequest, item_id: str) -> HttpResponse:
    try:
        assignment = selectors.reviewer_assignment(reviewer=request.user, item_id=item_id)
    except services.NotAssigned:
        raise Http404("no such item in your queue") from None
    view = selectors.reviewer_item_view(assignment=assignment)
    # The hashes of the texts on this page go out as hidden fields and come back with the grades.
    shown = services.item_shown_hashes(assignment.item)
    if request.method == "GET":
        # Where the time spent on this item starts (per item, never across items or pools).
        item_opening_record(item=assignment.item, reviewer=request.user)
        return render(request, _item_template(view), _item_context(view, reviewer=request.user, shown=shown))

    action = request.POST.get("action", "save")
    if action in ("skip", "unskip"):
        changed = workspace.assignment_skip_set(reviewer=request.user, item=assignment.item, skipped=action == "skip")
        if action == "skip":
            messages.info(request, "Skipped for later: the item moved to the end of your queue." if changed
                          else "Already skipped for later.")
            view = selectors.reviewer_item_view(assignment=assignment)
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
            result = services.judgment_reopen(item=assignment.item, reviewer=request.user)
        elif action == "undo":
            result = workspace.judgment_undo(item=assignment.item, reviewer=request.user)
        else:
            result = services.judgment_submit(
                item=assignment.item, reviewer=request.user, grades=grades, complete=action == "complete", note=note,
                shown={field: request.POST.get(field, "") for field in services.SHOWN_HASH_FIELDS}, spans=spans,
            )
    except services.TextChanged as changed:
        # Nothing was saved. The page is shown again with the new texts (read after the change) to grade.
        assignment = selectors.reviewer_assignment(reviewer=request.user, item_id=item_id)
        view = selectors.reviewer_item_view(assignment=assignment)
        shown = services.item_shown_hashes(assignment.item)
        if request.htmx:
            # The texts sit outside the form fragment: reload the whole page, with the message.
            messages.warning(request, str(changed))
            return HttpResponse(status=200, headers={"HX-Refresh": "true"})
        context = _item_context(view, reviewer=request.user, shown=shown, error=str(changed))
        return render(request, _item_template(view), context, status=409)
    except services.ReviewError as error:
        # A refused submit keeps every field as the reviewer left it, the note included.
        context = _item_context(view, reviewer=request.user, form_grades=grades, form_note=note, error=str(error),
                                shown=shown, form_spans=spans)
        if request.htmx:
            return render(request, _item_template(view) + "#judgment", context)
        return render(request, _item_template(view), context, status=400)
    saved = _saved_message(action, result)
    view = selectors.reviewer_item_after_save(view=view, revision=result.revision)
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
def history(request: HttpRequest, item_id: str) -> HttpResponse:
    try:
        view = selectors.reviewer_item(reviewer=request.user, item_id=item_id)
        revisions = selectors.reviewer_history(reviewer=request.user, item_id=item_id)
    except services.NotAssigned:
        raise Http404("no such item in your queue") from None
    return render(request, "review/history.html", {"view": view, "revisions": revisions})


# ---------------------------------------------------------------------------
# Admin pages
# ---------------------------------------------------------------------------


def _pool_or_404(pool_id: str) -> ReviewPool:
    try:
        return selectors.pool_get(public_id=pool_id)
    except ObjectDoesNotExist:
        raise Http404("no such pool") from None


@perm_required(MANAGE_REVIEWS)
def admin_pools(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "review/admin/pools.html",
        {"pools": selectors.pool_list(), "label_sources": selectors.label_source_list(), "kinds": kinds_all()},
    )


def _parse_json_lines(text: str) -> list:
    """A JSON array, or one JSON object per line; errors name the line."""
    text = text.strip()
    if not text:
        return []
    if text.startswith("["):
        try:
            return json_loads(text)
        except JsonInputError as error:
            raise services.ReviewError(f"JSON: {error}") from None
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(json_loads(line))
        except JsonSyntaxError as error:
            raise services.ReviewError(f"line {number}: {error.msg}") from None
        except JsonInputError as error:
            raise services.ReviewError(f"line {number}: {error}") from None
    return rows


@perm_required(MANAGE_REVIEWS)
@require_http_methods(["GET", "POST"])
def admin_pool_new(request: HttpRequest) -> HttpResponse:
    form = {"kind": next(iter(kinds_all()), ""), "reviewers_per_item": "2"}
    if request.method == "POST":
        form = request.POST.dict()
        try:
            items = _parse_json_lines(form.get("items", ""))
            pool = services.pool_create(
                name=form.get("name", ""),
                kind=form.get("kind", ""),
                items=items,
                declared_rule=form.get("declared_rule", ""),
                reviewers_per_item=int(form.get("reviewers_per_item") or 2),
                reviewer_title=form.get("reviewer_title", ""),
                instructions=form.get("instructions", ""),
                created_by=request.user,
            )
        except (services.ReviewError, ValueError) as error:
            return render(request, "review/admin/pool_new.html", {"form": form, "error": str(error),
                                                                  "kinds": kinds_all()}, status=400)
        messages.success(request, f"Pool declared with {pool.items.count()} items. Assign reviewers next.")
        return redirect("review:admin-pool", pool_id=pool.public_id)
    return render(request, "review/admin/pool_new.html", {"form": form, "kinds": kinds_all()})


@perm_required(MANAGE_REVIEWS)
def admin_pool(request: HttpRequest, pool_id: str) -> HttpResponse:
    pool = _pool_or_404(pool_id)
    kind = kind_get(pool.kind)
    context = {
        "pool": pool,
        "kind": kind,
        "progress": agreement.pool_progress(pool=pool),
        "agreement": agreement.pool_agreement(pool=pool),
        "admin_held": exports.pool_admin_held_complete(pool=pool),
        "through_idp": exports.pool_idp_complete(pool=pool),
        "disagreements": agreement.pool_disagreements(pool=pool),
        "documents": agreement.pool_document_citations(pool=pool),
        "stale": selectors.pool_stale_judgments(pool=pool),
        "label_rule": selectors.LABEL_RULE,
        "candidates": selectors.reviewer_candidates(),
        "assignees": selectors.pool_assignees(pool=pool),
        "judged": pool.is_judged(),
        "labels": selectors.pool_labels(pool=pool),
        "accuracy": known_answers.reviewer_accuracy(pool=pool),
        # Judge once: judgments of the same texts made in other pools and serving this one (with provenance).
        "reuse": reuse.pool_reuse_counts(pool=pool),
        "reused": [r for r in selectors.pool_judgments(pool) if r.reused_from],
        # A list, not the dict: ``declared_params.items`` in a template looks up the key "items" first, and a
        # pool declared from a rerank run has one (its item count), which made this page a 500.
        "declared_params": sorted((pool.declared_params or {}).items()),
        "label_imports": exchange_selectors.pool_label_imports(pool=pool),
    }
    context["label_counts"] = {
        state: sum(1 for label in context["labels"] if label.state == state)
        for state in ("adjudicated", "agreed", "unresolved")
    }
    return render(request, "review/admin/pool_detail.html", context)


@perm_required(MANAGE_REVIEWS)
@require_POST
def admin_pool_assign(request: HttpRequest, pool_id: str) -> HttpResponse:
    pool = _pool_or_404(pool_id)
    wanted = set(request.POST.getlist("reviewers"))
    reviewers = [user for user in selectors.reviewer_candidates() if str(user.pk) in wanted]
    try:
        result = pool_assign_detail(pool=pool, reviewers=reviewers, per_item=int(request.POST.get("per_item") or
                                                                                 pool.reviewers_per_item))
    except (services.ReviewError, ValueError) as error:
        messages.error(request, str(error))
    else:
        added = result.assigned
        messages.success(request, f"{added} assignment{'s' if added != 1 else ''} added; {result.reused} reused from "
                                  f"the same reviewers' judgments of the same texts in other pools "
                                  f"({result.reused_complete} complete already).")
    return redirect("review:admin-pool", pool_id=pool.public_id)


@perm_required(MANAGE_REVIEWS)
@require_http_methods(["GET", "POST"])
def admin_adjudicate(request: HttpRequest, pool_id: str, item_id: str) -> HttpResponse:
    pool = _pool_or_404(pool_id)
    try:
        view = agreement.pool_adjudication_item(pool=pool, item_id=item_id)
    except ObjectDoesNotExist:
        raise Http404("no such item in this pool") from None
    error = ""
    if request.method == "POST":
        item_row = ReviewItem.objects.select_related("pool").get(pool=pool, public_id=item_id)
        try:
            recorded = 0
            for grade_type in view.kind.grade_type_keys:
                value = request.POST.get(grade_type, "")
                if value:
                    disagreements.adjudication_record(item=item_row, grade_type=grade_type, value=value,
                                                 adjudicator=request.user, note=request.POST.get("note", ""))
                    recorded += 1
            if not recorded:
                raise services.ReviewError("choose a grade (or unknown) for at least one grade type")
        except services.ReviewError as exc:
            error = str(exc)
        else:
            messages.success(request, "Adjudication recorded.")
            if request.POST.get("then") == "next":
                return redirect(reverse("review:admin-disagreement-next", kwargs={"pool_id": pool.public_id})
                                + f"?after={item_id}")
            return redirect(reverse("review:admin-pool", kwargs={"pool_id": pool.public_id}) + "#disagreements")
    walk = disagreements.disagreement_next(pool=pool, after=item_id)
    return render(request, "review/admin/adjudicate.html",
                  {"pool": pool, "view": view, "error": error, "walk": walk,
                   "open_here": item_id in disagreements.pool_open_disagreements(pool=pool)},
                  status=400 if error else 200)


@perm_required(MANAGE_REVIEWS)
def admin_qrels(request: HttpRequest, pool_id: str) -> HttpResponse:
    pool = _pool_or_404(pool_id)
    grade_type = request.GET.get("grade_type") or None
    try:
        body = exports.pool_qrels(pool=pool, grade_type=grade_type)
    except ValueError as error:
        return HttpResponse(str(error), status=400, content_type="text/plain; charset=utf-8")
    response = HttpResponse(body, content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="pool-{pool.public_id}-{grade_type or "labels"}.qrels"'
    return response


@perm_required(MANAGE_REVIEWS)
def admin_jsonl(request: HttpRequest, pool_id: str) -> StreamingHttpResponse:
    pool = _pool_or_404(pool_id)
    response = StreamingHttpResponse(
        exports.pool_jsonl(
            pool=pool,
            pseudonymise=request.GET.get("pseudonymise") in ("1", "true", "on"),
            include_drafts=request.GET.get("drafts") in ("1", "true", "on"),
        ),
        content_type="application/x-ndjson; charset=utf-8",
    )
    response["Content-Disposition"] = f'attachment; filename="pool-{pool.public_id}-judgments.jsonl"'
    return response


@perm_required(MANAGE_REVIEWS)
@require_POST
def admin_label_import(request: HttpRequest) -> HttpResponse:
    try:
        labels = _parse_json_lines(request.POST.get("labels", ""))
        source = services.label_source_import(
            name=request.POST.get("name", ""),
            labels=labels,
            provisional=request.POST.get("provisional", "on") in ("on", "1", "true"),
            description=request.POST.get("description", ""),
            created_by=request.user,
        )
    except services.ReviewError as error:
        messages.error(request, f"Label import refused: {error}")
    else:
        messages.success(request, f"Imported {source.labels.count()} labels as {source.name!r}.")
    return redirect("review:admin-pools")


# ---------------------------------------------------------------------------
# Admin pages: reviewers (accounts and who is assigned what)
# ---------------------------------------------------------------------------


@perm_required(MANAGE_REVIEWS)
@require_http_methods(["GET", "POST"])
def admin_reviewers(request: HttpRequest) -> HttpResponse:
    """Reviewer accounts: list, create (a random password shown once), deactivate, reactivate."""
    from reviewapp.core.auth import accounts

    form = {"username": "", "first_name": "", "last_name": "", "email": "", "password_mode": "invite"}
    error = ""
    created = None
    invite_link = ""
    if request.method == "POST":
        form = {key: request.POST.get(key, "") for key in form}
        mode = form["password_mode"] or "random"
        typed = request.POST.get("password", "") if mode == "typed" else ""
        try:
            if mode not in ("invite", "random", "typed"):
                raise accounts.AccountError(f"password_mode: {mode!r} is not one of invite, random, typed")
            if mode == "typed" and not typed:
                raise accounts.AccountError("password: type the initial password, or choose another option")
            created = accounts.reviewer_account_create(
                by=request.user, username=form["username"], first_name=form["first_name"],
                last_name=form["last_name"], email=form["email"], invite=mode == "invite", password=typed)
        except accounts.AccountError as exc:
            error = str(exc)
        except ValidationError as exc:
            error = "password: " + " ".join(exc.messages)
        else:
            if created.invitation is not None:
                invite_link = invitation_url(request, created.invitation)
    context = {"reviewers": selectors.reviewer_accounts(), "form": form, "error": error, "created": created,
               "invite_link": invite_link}
    response = render(request, "review/admin/reviewers.html", context, status=400 if error else 200)
    if created is not None:
        response["Cache-Control"] = "no-store"  # the one-time password or invitation link is on this page
    return response


@perm_required(MANAGE_REVIEWS)
@require_POST
def admin_reviewer_active(request: HttpRequest, user_id: int) -> HttpResponse:
    from reviewapp.core.auth import accounts

    user = user_or_404(user_id)
    active = request.POST.get("active") in ("1", "true", "on")
    try:
        accounts.reviewer_account_set_active(user=user, active=active, by=request.user)
    except accounts.AccountError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, f"{user.get_username()} {'reactivated' if active else 'deactivated'}. "
                         "Their judgments stay; reassign their open items on each pool's page.")
    return redirect("review:admin-reviewers")


@perm_required(MANAGE_REVIEWS)
@require_POST
def admin_pool_unassign(request: HttpRequest, pool_id: str) -> HttpResponse:
    pool = _pool_or_404(pool_id)
    user = user_or_404(request.POST.get("reviewer"))
    result = pool_admin.assignment_unassign(pool=pool, reviewer=user)
    messages.success(request, f"{user.get_username()}: {result.removed} open assignment(s) removed; "
                     f"{result.kept_judged} with a judgment kept.")
    return redirect("review:admin-pool", pool_id=pool.public_id)


@perm_required(MANAGE_REVIEWS)
@require_POST
def admin_pool_reassign(request: HttpRequest, pool_id: str) -> HttpResponse:
    pool = _pool_or_404(pool_id)
    source = user_or_404(request.POST.get("from_reviewer"))
    target = user_or_404(request.POST.get("to_reviewer"))
    try:
        result = pool_admin.assignment_reassign(pool=pool, from_reviewer=source, to_reviewer=target)
    except services.ReviewError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, f"{result.moved} open item(s) moved from {source.get_username()} to "
                         f"{target.get_username()} ({result.already_held} they held already; {result.kept_judged} "
                         "judged kept).")
    return redirect("review:admin-pool", pool_id=pool.public_id)


@perm_required(MANAGE_REVIEWS)
@require_POST
def admin_pool_new_version(request: HttpRequest, pool_id: str) -> HttpResponse:
    pool = _pool_or_404(pool_id)
    try:
        per_item = int(request.POST.get("reviewers_per_item") or pool.reviewers_per_item)
        new = pool_admin.pool_new_version(pool=pool, reviewers_per_item=per_item, created_by=request.user)
    except ValueError as error:  # ReviewError is a ValueError
        messages.error(request, f"reviewers_per_item: {error}" if not isinstance(error, services.ReviewError)
                       else str(error))
        return redirect("review:admin-pool", pool_id=pool.public_id)
    messages.success(request, f"New version declared with {new.reviewers_per_item} reviewer(s) per item; "
                     f"the judged pool {pool.public_id} stays as it was. Assign reviewers next.")
    return redirect("review:admin-pool", pool_id=new.public_id)
