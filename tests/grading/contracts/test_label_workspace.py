"""Blind clause labelling in the review engine: spans stored as normalised offsets into the contract text, refused
with a message naming the problem, idempotent, undone and reopened with the answer, in the API and on the page;
and blind: a reviewer is shown only their own spans, never a run, a model or another lawyer's spans."""

from __future__ import annotations

import json

import pytest

from reviewapp.review.errors import ReviewError
from reviewapp.review.judgments.models import JudgmentRevision
from reviewapp.review.workspace.queue import reviewer_queues
from reviewapp.review.workspace.selectors import reviewer_item
from reviewapp.review.workspace.services import judgment_reopen, judgment_submit, judgment_undo
from tests.factories import client_for
from tests.grading.contracts.labelling_support import item_of, labelling_pool, span_of
from tests.helpers import shown_hashes
from tests.reviewapp.review.conftest import assert_blind, make_pool

pytestmark = pytest.mark.django_db
LAW = "This Agreement is governed by the laws of the State of Nevada."


def _submit(item, reviewer, *, presence=None, spans=None, complete=False, note=""):
    return judgment_submit(item=item, reviewer=reviewer, grades={"presence": presence}, complete=complete,
                                    note=note, shown=shown_hashes(item.public_id), spans=spans)


def test_spans_are_stored_trimmed_and_merged_on_the_revision_bound_to_the_text_hash(reviewer_user, reviewer2_user):
    pool = labelling_pool(reviewers=[reviewer_user, reviewer2_user])
    item = item_of(pool, "Governing Law")
    start, end = span_of(item, LAW)
    # Both run into the white space around the sentence, and overlap each other.
    result = _submit(item, reviewer_user, presence=1, spans=[[start + 10, end + 1], [start - 1, start + 12]],
                     complete=True)
    assert result.revision.spans == [[start, end]]
    assert item.source_text[start:end] == LAW
    assert result.revision.source_hash == item.source_hash
    assert result.revision.status == JudgmentRevision.COMPLETE


def test_refusals_name_the_span_and_the_problem_and_store_nothing(reviewer_user, reviewer2_user):
    pool = labelling_pool(reviewers=[reviewer_user, reviewer2_user])
    item = item_of(pool, "Governing Law")
    size = len(item.source_text)
    cases = [
        ({"presence": 1, "spans": [[0, 5], [3, 4], [10, size + 12]]},
         f"spans[2]: end {size + 12} is past the end of the contract ({size} characters)"),
        ({"presence": 0, "spans": [span_of(item, LAW)]}, "is 0 (absent) but 1 span(s) were sent"),
        ({"presence": 1, "spans": [], "complete": True}, "no span is highlighted"),
        ({"presence": 1, "spans": [[16, 17]]}, "spans[0]: characters 16-17 are only white space"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ReviewError) as refused:
            _submit(item, reviewer_user, **kwargs)
        assert message in str(refused.value)
    assert not JudgmentRevision.objects.exists()


def test_a_draft_may_hold_spans_before_the_answer_and_absent_is_an_explicit_answer(reviewer_user, reviewer2_user):
    pool = labelling_pool(reviewers=[reviewer_user, reviewer2_user])
    law, compete = item_of(pool, "Governing Law"), item_of(pool, "Non-Compete")
    draft = _submit(law, reviewer_user, spans=[span_of(law, LAW)])
    assert (draft.revision.grades, draft.revision.spans) == ({}, [span_of(law, LAW)])
    absent = _submit(compete, reviewer_user, presence=0, complete=True)
    assert (absent.revision.grades, absent.revision.spans) == ({"presence": 0}, [])


def test_the_same_answer_twice_stores_nothing_new_but_other_spans_do(reviewer_user, reviewer2_user):
    pool = labelling_pool(reviewers=[reviewer_user, reviewer2_user])
    item = item_of(pool, "Governing Law")
    first = _submit(item, reviewer_user, presence=1, spans=[span_of(item, LAW)])
    again = _submit(item, reviewer_user, presence=1, spans=[[first.revision.spans[0][0] - 1,
                                                              first.revision.spans[0][1]]])  # trims to the same
    assert first.created and not again.created and again.revision.pk == first.revision.pk
    other = _submit(item, reviewer_user, presence=1, spans=[span_of(item, "State of Nevada")])
    assert other.created and other.revision.number == 2
    assert list(JudgmentRevision.objects.order_by("number").values_list("spans", flat=True)) == [
        [span_of(item, LAW)], [span_of(item, "State of Nevada")]]


def test_undo_restores_the_spans_before_the_last_change_and_reopen_keeps_them(reviewer_user, reviewer2_user):
    pool = labelling_pool(reviewers=[reviewer_user, reviewer2_user])
    item = item_of(pool, "Governing Law")
    both = sorted([span_of(item, LAW), span_of(item, "two years")])
    _submit(item, reviewer_user, presence=1, spans=[span_of(item, LAW)])
    _submit(item, reviewer_user, presence=1, spans=both)
    undone = judgment_undo(item=item, reviewer=reviewer_user)
    assert (undone.revision.number, undone.revision.spans) == (3, [span_of(item, LAW)])
    redone = judgment_undo(item=item, reviewer=reviewer_user)  # an undo is a change: undone in turn
    assert redone.revision.spans == both
    _submit(item, reviewer_user, presence=1, spans=both, complete=True)
    reopened = judgment_reopen(item=item, reviewer=reviewer_user)
    assert (reopened.revision.status, reopened.revision.spans) == (JudgmentRevision.DRAFT, both)
    # Every state is a new row, and the first ones are as they were written.
    assert list(JudgmentRevision.objects.filter(judgment__reviewer=reviewer_user).order_by("number")
                .values_list("spans", flat=True)) == [[span_of(item, LAW)], both, [span_of(item, LAW)], both, both,
                                                      both]


def test_a_kind_without_spans_refuses_them(reviewer_user, reviewer2_user):
    pool = make_pool(reviewers=[reviewer_user, reviewer2_user])
    item = pool.items.first()
    with pytest.raises(ReviewError, match="'passage' are not answered with spans"):
        judgment_submit(item=item, reviewer=reviewer_user, grades={"section": 1, "passage": 1},
                                 complete=False, shown=shown_hashes(item.public_id), spans=[[0, 3]])
    saved = judgment_submit(item=item, reviewer=reviewer_user, grades={"section": 1, "passage": 1},
                                     complete=False, shown=shown_hashes(item.public_id))
    assert saved.revision.spans == []


def test_the_api_takes_spans_and_gives_back_only_the_reviewers_own(reviewer_user, reviewer2_user):
    pool = labelling_pool(reviewers=[reviewer_user, reviewer2_user])
    item = item_of(pool, "Governing Law")
    _submit(item, reviewer2_user, presence=1, spans=[span_of(item, "two years")], complete=True)
    client = client_for(reviewer_user)
    shown = client.get(f"/api/v1/review/items/{item.public_id}/").json()
    assert shown["answers_spans"] is True and shown["current"] is None
    assert shown["span_locations"]["unit"] == "line" and shown["span_locations"]["starts"][0] == [0, 1]
    body = {"grades": {"presence": 1}, "complete": True, "note": "", "spans": [span_of(item, LAW)],
            **{k: shown[k] for k in ("query_hash", "source_hash", "passage_hash")}}
    saved = client.post(f"/api/v1/review/items/{item.public_id}/judgment/", body, content_type="application/json")
    assert saved.status_code == 201 and saved.json()["revision"]["spans"] == [span_of(item, LAW)]
    again = client.get(f"/api/v1/review/items/{item.public_id}/").json()
    assert again["current"]["spans"] == [span_of(item, LAW)]
    assert "two years" not in json.dumps(again["current"])  # the other lawyer's span is nowhere in it
    bad = client.post(f"/api/v1/review/items/{item.public_id}/judgment/",
                      {**body, "spans": [[0, 10 ** 6]], "complete": False}, content_type="application/json")
    assert bad.status_code == 400 and "spans[0]: end 1000000 is past the end of the contract" in bad.json()["detail"]


def test_the_page_saves_spans_from_its_form_and_shows_them_blind(reviewer_user, reviewer2_user):
    pool = labelling_pool(reviewers=[reviewer_user, reviewer2_user])
    item = item_of(pool, "Governing Law")
    _submit(item, reviewer2_user, presence=1, spans=[span_of(item, "two years")], complete=True)
    client = client_for(reviewer_user)
    url = f"/review/workspace/items/{item.public_id}/"
    page = client.get(url)
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="contract-source"' in html and "js/label-spans.js" in html
    assert "Which state&#x27;s law governs the contract?" in html or "Which state's law governs" in html
    post = {**shown_hashes(item.public_id), "presence": "1", "spans": json.dumps([span_of(item, LAW)]),
            "action": "save"}
    assert client.post(url, post).status_code == 302
    html = client.get(url).content.decode()
    start, end = span_of(item, LAW)
    assert f'data-start="{start}" data-end="{end}"' in html and "line 5" in html  # blank lines count
    other = span_of(item, "two years")
    assert f'data-start="{other[0]}"' not in html and f"[{other[0]}, {other[1]}]" not in html
    view = reviewer_item(reviewer=reviewer_user, item_id=item.public_id)
    assert view.current is not None and view.current.spans == [[start, end]]
    # Nothing about the pool's origin: no runs, models, scores, external references.
    without_text = html.replace(item.source_text, "")
    assert "text_sha256" not in html and "set_contract" not in html
    assert_blind(without_text.split('id="contract-source"')[0], where="the span workspace")
    refused = client.post(url, {**post, "spans": "[[0, 99999]]"})
    assert refused.status_code == 400 and "past the end of the contract" in refused.content.decode()
    assert "[[0, 99999]]" in refused.content.decode()  # the refused spans are kept in the form


def test_both_item_kinds_render_the_one_workspace_with_undo_ready_for_the_first_save(reviewer_user, reviewer2_user):
    """One skeleton, one answer form, one core script; a kind adds its script (and, for clauses, its part)."""
    passage_pool = make_pool(reviewers=[reviewer_user, reviewer2_user])
    passage = reviewer_queues(reviewer=reviewer_user)[0].entries[0].item_id
    clause = item_of(labelling_pool(reviewers=[reviewer_user, reviewer2_user]), "Governing Law")
    client = client_for(reviewer_user)
    pages = {kind: client.get(f"/review/workspace/items/{item_id}/").content.decode()
             for kind, item_id in (("passage", passage), ("clause", clause.public_id))}
    assert passage_pool.kind == "passage"
    for kind, html in pages.items():
        assert html.count("js/workspace.js") == 1, kind
        assert 'id="announce"' in html and 'id="announce-error"' in html and 'id="keys-help"' in html, kind
        # nothing saved yet: Undo is there, hidden, for the first automatic save to show
        assert 'data-action="undo" hidden>' in html, kind
    assert "js/workspace-passage.js" in pages["passage"] and "js/label-spans.js" not in pages["passage"]
    assert "js/label-spans.js" in pages["clause"] and 'data-testid="add-span"' in pages["clause"]
    assert 'role="textbox"' in pages["clause"] and 'aria-readonly="true"' in pages["clause"]
