"""Importing Label Studio and Argilla annotations: the same labels back, never a blind judgment, never forged."""

from __future__ import annotations

import copy
import json

import pytest

from reviewapp.review.agreement import exports
from reviewapp.review.agreement import selectors as agreement
from reviewapp.review.agreement.judgments import pool_completed_judgments
from reviewapp.review.agreement.selectors import pool_labels
from reviewapp.review.assignment.services import item_rebind
from reviewapp.review.exchange import argilla as argilla_export
from reviewapp.review.exchange import labelstudio
from reviewapp.review.exchange.models import ImportedAnnotation, LabelImport
from reviewapp.review.exchange.selectors import pool_imported_labels
from reviewapp.review.exchange.services import annotations_import, document_read, import_report
from reviewapp.review.exchange.texts import ExchangeError
from reviewapp.review.judgments.models import Judgment, JudgmentRevision
from reviewapp.review.workspace.services import judgment_submit
from tests.reviewapp.review.conftest import make_pool


def _exported_labels(pool, *, annotator) -> list[tuple[str, str, str, object]]:
    """(item, annotator, grade type, grade) of every complete, current judgment: what an export must carry."""
    return sorted((j.item_id, annotator(j.reviewer_id), gt, v)
                  for j in pool_completed_judgments(pool=pool) for gt, v in j.grades.items())


def _imported(pool) -> list[tuple[str, str, str, object]]:
    return sorted((r.item_id, r.annotator, r.grade_type, r.value) for r in pool_imported_labels(pool=pool))


def _blind_state(pool) -> tuple:
    """Everything a human-label metric reads: resolved labels, qrels, per-reviewer judgments, agreement."""
    return (
        [(label.item_id, label.grade_type, label.state, label.value) for label in pool_labels(pool=pool)],
        [exports.pool_qrels(pool=pool, grade_type=gt) for gt in ("section", "passage")],
        list(exports.pool_jsonl(pool=pool)),
        repr(agreement.pool_agreement(pool=pool)),
        JudgmentRevision.objects.count(), Judgment.objects.count(),
    )


@pytest.mark.django_db
def test_label_studio_round_trip_gives_back_the_same_labels_as_not_blind_imports(judged_pool):
    pseudonym = lambda rid: exports.reviewer_pseudonym(pool=judged_pool, reviewer_id=rid)  # noqa: E731
    expected = _exported_labels(judged_pool, annotator=pseudonym)
    assert any(value == "unknown" for *_, value in expected)
    tasks = labelstudio.labelstudio_tasks(pool=judged_pool)
    result = annotations_import(pool=judged_pool, tool="label-studio", document=json.loads(json.dumps(tasks)),
                                filename="tasks.json", imported_by="alice_admin")
    assert result.annotations == len(expected)
    assert _imported(judged_pool) == expected
    assert result.label_import.blind is False
    assert {r.blind for r in pool_imported_labels(pool=judged_pool)} == {False}


@pytest.mark.django_db
def test_argilla_round_trip_through_the_zip_gives_back_the_same_labels(judged_pool):
    def user(rid):
        return argilla_export.reviewer_uuid(exports.reviewer_pseudonym(pool=judged_pool, reviewer_id=rid))

    expected = _exported_labels(judged_pool, annotator=user)
    document = document_read(argilla_export.argilla_zip(pool=judged_pool), tool="argilla")
    result = annotations_import(pool=judged_pool, tool="argilla", document=document, filename="pool.zip")
    assert result.annotations == len(expected) and _imported(judged_pool) == expected


@pytest.mark.django_db
def test_argilla_records_as_its_sdk_writes_them_are_refused_until_the_import_is_told_how_to_read_them(judged_pool):
    """Argilla's own records.json (Record.to_dict) carries no response status: the import asks, never assumes."""
    import argilla as rg

    records = [rg.Record.from_dict(raw).to_dict() for raw in argilla_export.argilla_records(pool=judged_pool)]
    assert all("status" not in answer for r in records for answers in r["responses"].values() for answer in answers)
    document = json.loads(json.dumps(records))
    with pytest.raises(ExchangeError, match=r"records\[0\]\.responses\.\w+\[0\]\.status: missing.*submitted or draft"):
        annotations_import(pool=judged_pool, tool="argilla", document=document)
    assert not LabelImport.objects.exists()
    with pytest.raises(ExchangeError, match="no submitted annotation"):
        annotations_import(pool=judged_pool, tool="argilla", document=document, unstated="draft")
    result = annotations_import(pool=judged_pool, tool="argilla", document=document, unstated="submitted")
    assert result.annotations == len(_exported_labels(judged_pool, annotator=str)) and result.skipped == 0


@pytest.mark.django_db
def test_a_label_studio_export_names_annotators_by_its_user_ids_and_skips_cancelled_work(judged_pool):
    tasks = labelstudio.labelstudio_tasks(pool=judged_pool)
    for task in tasks:
        for n, annotation in enumerate(task["annotations"]):
            del annotation["reviewer"]
            annotation["completed_by"] = 10 + n
    tasks[2]["annotations"][0]["was_cancelled"] = True
    tasks[3]["predictions"] = [{"result": [{"from_name": "section", "to_name": "query_text", "type": "choices",
                                            "value": {"choices": ["3"]}}]}]
    result = annotations_import(pool=judged_pool, tool="label-studio", document=tasks)
    assert {r.annotator for r in pool_imported_labels(pool=judged_pool)} == {"label-studio-user:10",
                                                                             "label-studio-user:11"}
    assert result.skipped == 1
    assert tasks[2]["data"]["item"] not in {r.item_id for r in pool_imported_labels(pool=judged_pool)
                                            if r.annotator == "label-studio-user:10"}


@pytest.mark.django_db
def test_imported_labels_change_no_blind_label_metric_or_judgment(judged_pool):
    before = _blind_state(judged_pool)
    tasks = labelstudio.labelstudio_tasks(pool=judged_pool)
    for task in tasks:  # outside annotators who disagree with everyone: nothing blind may move
        for annotation in task["annotations"]:
            annotation["reviewer"] = "outside-" + annotation["reviewer"]
            for result in annotation["result"]:
                result["value"]["choices"] = ["0"]
    annotations_import(pool=judged_pool, tool="label-studio", document=tasks)
    annotations_import(pool=judged_pool, tool="argilla", document=argilla_export.argilla_records(pool=judged_pool))
    assert ImportedAnnotation.objects.count() > 30
    assert _blind_state(judged_pool) == before


# --- refused: nothing written, the message names the task or record and the field ----------------------------


def _refused(pool, tool, document, *needles: str) -> None:
    with pytest.raises(ExchangeError) as refused:
        annotations_import(pool=pool, tool=tool, document=document)
    for needle in needles:
        assert needle in str(refused.value)
    assert LabelImport.objects.count() == 0 and ImportedAnnotation.objects.count() == 0


@pytest.mark.django_db
def test_a_task_whose_text_was_changed_in_the_file_is_refused_naming_it(judged_pool):
    tasks = labelstudio.labelstudio_tasks(pool=judged_pool)
    tasks[4]["data"]["passage_text"] += " (edited)"
    _refused(judged_pool, "label-studio", tasks, "tasks[4]", "passage_text", tasks[4]["data"]["item"])
    records = argilla_export.argilla_records(pool=judged_pool)
    records[5]["fields"]["query_text"] = "another question"
    _refused(judged_pool, "argilla", records, "records[5]", "query_text")


@pytest.mark.django_db
def test_an_export_of_texts_changed_since_is_refused(judged_pool):
    tasks = labelstudio.labelstudio_tasks(pool=judged_pool)
    item = judged_pool.items.get(public_id=tasks[0]["data"]["item"])
    item_rebind(item=item, source_text=item.source_text + " Amended.")
    _refused(judged_pool, "label-studio", tasks, "tasks[0]", "source_text", "changed since the export")


@pytest.mark.django_db
def test_hashes_in_the_file_are_never_taken_only_recomputed(judged_pool):
    tasks = labelstudio.labelstudio_tasks(pool=judged_pool)
    for task in tasks:
        task["meta"]["passage_hash"] = "f" * 64
    annotations_import(pool=judged_pool, tool="label-studio", document=tasks)
    items = {item.public_id: item for item in judged_pool.items.all()}
    for row in pool_imported_labels(pool=judged_pool):
        assert row.passage_hash == items[row.item_id].passage_hash and not row.stale


@pytest.mark.django_db
def test_bad_items_grades_and_names_are_refused_naming_where(judged_pool, reviewer_user, reviewer2_user):
    tasks = labelstudio.labelstudio_tasks(pool=judged_pool)
    first = next(i for i, t in enumerate(tasks) if t["annotations"])
    bad = copy.deepcopy(tasks)
    bad[first]["annotations"][0]["result"][0]["value"]["choices"] = ["7"]
    _refused(judged_pool, "label-studio", bad, f"tasks[{first}].annotations[0]", "not on the scale")
    bad = copy.deepcopy(tasks)
    bad[first]["annotations"][0]["result"][0]["from_name"] = "relevance"
    _refused(judged_pool, "label-studio", bad, f"tasks[{first}].annotations[0].result[0].from_name", "relevance")
    bad = copy.deepcopy(tasks)
    bad[first]["data"]["item"] = "no-such-item"
    _refused(judged_pool, "label-studio", bad, f"tasks[{first}]", "not an item of pool")
    bad = copy.deepcopy(tasks)
    del bad[first]["data"]
    _refused(judged_pool, "label-studio", bad, f"tasks[{first}].data")
    bad = copy.deepcopy(tasks)
    bad[first]["annotations"].append(copy.deepcopy(bad[first]["annotations"][0]))
    _refused(judged_pool, "label-studio", bad, "twice")
    other = make_pool(reviewers=[reviewer_user, reviewer2_user], name="other")
    _refused(other, "label-studio", tasks, "not an item of pool")
    records = argilla_export.argilla_records(pool=judged_pool)
    at = next(i for i, r in enumerate(records) if r["responses"])
    question = sorted(records[at]["responses"])[0]
    records[at]["responses"][question][0]["user_id"] = ""
    _refused(judged_pool, "argilla", records, f"records[{at}].responses.{question}[0].user_id")
    _refused(judged_pool, "argilla", {"not": "records"}, "expected a JSON list of records")


@pytest.mark.django_db
def test_the_same_content_is_imported_once_per_pool(judged_pool):
    tasks = labelstudio.labelstudio_tasks(pool=judged_pool)
    annotations_import(pool=judged_pool, tool="label-studio", document=tasks)
    with pytest.raises(ExchangeError, match="already"):
        annotations_import(pool=judged_pool, tool="label-studio", document=json.loads(json.dumps(tasks)))
    assert LabelImport.objects.count() == 1


@pytest.mark.django_db
def test_draft_and_discarded_argilla_responses_are_skipped(judged_pool):
    records = argilla_export.argilla_records(pool=judged_pool)
    answers = [a for r in records for answers in r["responses"].values() for a in answers]
    answers[0]["status"], answers[1]["status"] = "draft", "discarded"
    result = annotations_import(pool=judged_pool, tool="argilla", document=records)
    assert result.skipped == 2 and result.annotations == len(answers) - 2
    assert result.skipped_by_status == {"draft": 1, "discarded": 1}
    (draft_at, _), (discarded_at, _) = result.not_imported
    assert draft_at.startswith("records[0].responses.") and result.not_imported[0][1] == "draft"
    report = import_report(result, tool="argilla")
    assert f"{len(answers) - 2} submitted annotations" in report
    assert f"not imported: 1 discarded, 1 draft: {draft_at} (draft), {discarded_at} (discarded)." in report


@pytest.mark.django_db
def test_an_unknown_argilla_status_is_refused_by_name(judged_pool):
    records = argilla_export.argilla_records(pool=judged_pool)
    next(iter(records[1]["responses"].values()))[0]["status"] = "pending"
    with pytest.raises(ExchangeError, match=r"records\[1\].*\.status: 'pending' is not submitted, draft or discarded"):
        annotations_import(pool=judged_pool, tool="argilla", document=records)


def test_a_zip_without_records_or_not_a_zip_is_refused():
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(".argilla/settings.json", "{}")
    with pytest.raises(ExchangeError, match=r"0 records\.json"):
        document_read(buffer.getvalue(), tool="argilla")
    with pytest.raises(ExchangeError, match="not acceptable JSON"):
        document_read(b"PK\x03\x04 not json", tool="label-studio")


@pytest.mark.django_db
@pytest.mark.parametrize("tool", ["label-studio", "argilla"])
def test_a_yes_no_pool_without_a_passage_label_round_trips_bound_to_all_three_texts(tool, reviewer_user,
                                                                                  reviewer2_user):
    """The target kind shows no passage, but its items' hashes cover one: the export carries every text hashed."""
    from tests.helpers import shown_hashes
    from tests.reviewapp.review.conftest import make_items

    pool = make_pool(reviewers=[reviewer_user, reviewer2_user], kind="target",
                     items=make_items(n_queries=1, per_query=3))
    for n, item in enumerate(pool.items.order_by("id")):
        for reviewer in (reviewer_user, reviewer2_user):
            judgment_submit(item=item, reviewer=reviewer, grades={"target": n % 2}, complete=True,
                                     shown=shown_hashes(item.public_id))
    document = (labelstudio.labelstudio_tasks(pool=pool) if tool == "label-studio"
                else argilla_export.argilla_records(pool=pool))
    result = annotations_import(pool=pool, tool=tool, document=document)
    assert result.annotations == 6
    assert sorted(r.value for r in pool_imported_labels(pool=pool)) == [0, 0, 0, 0, 1, 1]
