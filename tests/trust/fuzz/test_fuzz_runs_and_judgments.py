"""Property-based fuzzing of extraction runs (file import and the paste form) and judgment submissions (the
review service, the grading page and the API). Each answer is a result or a clear error naming where (line,
index, field); a refused submission leaves every table as it was; no input makes a page fail with a 500."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.trust.fuzz_support import FUZZ, json_values, mutated, row_counts

# --------------------------------------------------------------------------- extraction runs


@pytest.fixture
def cuad(db, tmp_path):
    from grading.dataset.services import cuad_load
    from tests.grading.cuad_fixture import cuad_bytes

    path = tmp_path / "CUAD_v1.json"
    path.write_bytes(cuad_bytes())
    return cuad_load(path=path).dataset


def _gold() -> dict:
    from tests.grading.cuad_fixture import gold_run

    return gold_run("fuzz-model")


def _as_text(doc, jsonl: bool) -> str:
    if jsonl and isinstance(doc, dict) and isinstance(doc.get("extractions"), list):
        lines = [json.dumps({"model": doc.get("model")})] + [json.dumps(e) for e in doc["extractions"]]
        return "\n".join(lines)
    return json.dumps(doc)


WHERE = re.compile(r"^(top level|extractions\[\d+\]|line \d+|field 'model'|byte \d+|the run)")


@FUZZ
@given(doc=mutated(_gold(), rounds=3) | json_values, jsonl=st.booleans())
def test_a_fuzzed_run_file_is_stored_whole_or_refused_naming_line_or_index_and_field(cuad, doc, jsonl):
    from grading.runs.models import Extraction
    from grading.runs.run_format import RunFormatError
    from grading.runs.services import extraction_run_import

    raw = _as_text(doc, jsonl)
    before = row_counts()
    try:
        run, _created = extraction_run_import(dataset=cuad, raw=raw, source_name="fuzz.json")
    except RunFormatError as error:
        assert error.errors and all(WHERE.match(e) for e in error.errors), error.errors
        assert row_counts() == before
        return
    assert Extraction.objects.filter(run=run).count() == run.n_extractions


@FUZZ
@given(raw=st.binary(max_size=300) | st.text(max_size=300))
def test_run_bytes_that_are_not_a_run_are_refused_with_nothing_stored(cuad, raw):
    from grading.runs.run_format import RunFormatError
    from grading.runs.services import extraction_run_import

    before = row_counts()
    with pytest.raises(RunFormatError) as refused:
        extraction_run_import(dataset=cuad, raw=raw)
    assert all(WHERE.match(e) for e in refused.value.errors), refused.value.errors
    assert row_counts() == before


@FUZZ
@given(doc=mutated(_gold(), rounds=3), jsonl=st.booleans(), upload=st.booleans())
def test_a_fuzzed_pasted_run_answers_a_graded_run_or_a_400_listing_the_errors(cuad, admin_client_, doc, jsonl,
                                                                               upload):
    from django.core.files.uploadedfile import SimpleUploadedFile

    raw = _as_text(doc, jsonl)
    before = row_counts()
    if upload:
        data = {"run_file": SimpleUploadedFile("run.jsonl" if jsonl else "run.json", raw.encode())}
    else:
        data = {"run_text": raw}
    response = admin_client_.post("/cuad/runs/", data)
    if response.status_code == 302:
        assert re.match(r"^/cuad/(runs|jobs)/\d+/$", response["Location"])
        return
    assert response.status_code == 400
    page = response.content.decode()
    assert re.search(r"(extractions\[\d+\]|line \d+|top level|field &#x27;model&#x27;|the run)", page)
    assert row_counts() == before


# --------------------------------------------------------------------------- judgments


@pytest.fixture
def assigned(db, reviewer_user):
    from reviewapp.review.assignment.services import pool_assign
    from reviewapp.review.pools.services import pool_create_model

    # Two different passages: a reviewer is never given the same texts twice (judge-once), so two identical
    # items would make one assignment.
    texts = [f"The landlord shall return the deposit within {days} days." for days in ("thirty", "forty")]
    pool = pool_create_model(
        name="fuzz", kind="passage", declared_rule="fuzz: explicit list",
        items=[{"query_id": f"q{i}", "doc_id": f"d{i}", "query_text": "When is a deposit returned?",
                "source_heading": "Deposits", "source_text": texts[i], "passage_caption": "Deposits",
                "passage_text": texts[i]} for i in range(2)],
    )
    pool_assign(pool=pool, reviewers=[reviewer_user], per_item=1)
    return list(pool.items.order_by("id"))


grade_values = st.sampled_from(["0", "1", "2", "3", "u", "unknown", "", " 2 ", "4", "-1", "x", "\x00", "2\x00"]) \
    | json_values
grade_dicts = st.dictionaries(st.sampled_from(["section", "passage", "clause", "rank", ""]) | st.text(max_size=6),
                              grade_values, max_size=3)
notes = st.text(max_size=50) | st.sampled_from(["", "ok", "a\x00b", "x" * 5000])


@FUZZ
@given(grades=grade_dicts, complete=st.booleans(), note=notes, which=st.integers(0, 1))
def test_a_fuzzed_judgment_is_saved_as_one_revision_or_refused_naming_the_field(assigned, reviewer_user, grades,
                                                                                 complete, note, which):
    from reviewapp.review.errors import ReviewError
    from reviewapp.review.judgments.models import JudgmentRevision
    from reviewapp.review.workspace.services import judgment_submit

    item = assigned[which]
    before = row_counts()
    try:
        result = judgment_submit(item=item, reviewer=reviewer_user, grades=grades, complete=complete,
                                          note=note)
    except ReviewError as error:
        assert re.match(r"^(grades|grades\.\w+|note|cannot mark complete|cannot change a completed judgment)\b",
                        str(error)), str(error)
        assert row_counts() == before
        return
    after = row_counts()
    added = after["reviewapp.JudgmentRevision"] - before["reviewapp.JudgmentRevision"]
    assert added == (1 if result.created else 0)
    assert JudgmentRevision.objects.get(pk=result.revision.pk).status == ("complete" if complete else "draft")


post_values = st.text(max_size=12) | st.sampled_from(["0", "1", "2", "3", "u", "unknown", "4", "\x00", "2" * 400])


@FUZZ
@given(section=post_values, passage=post_values, action=st.sampled_from(["save", "complete", "reopen", "", "x"]),
       note=notes, htmx=st.booleans())
def test_the_grading_page_answers_every_fuzzed_post_with_a_saved_judgment_or_a_message(
        assigned, reviewer_client, section, passage, action, note, htmx):
    item = assigned[0]
    before = row_counts()
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    shown = {"query_hash": item.query_hash, "source_hash": item.source_hash, "passage_hash": item.passage_hash}
    response = reviewer_client.post(f"/review/workspace/items/{item.public_id}/",
                                    {"section": section, "passage": passage, "action": action, "note": note, **shown},
                                    **headers)
    assert response.status_code in (200, 302, 400)
    page = response.content.decode() if response.status_code != 302 else ""
    if htmx and response.has_header("HX-Redirect"):
        # Completed: htmx is sent on to the next open item (auto-advance), after exactly one new revision.
        assert response["HX-Redirect"].startswith("/review/workspace/")
        assert row_counts()["reviewapp.JudgmentRevision"] == before["reviewapp.JudgmentRevision"] + 1
        return
    refused = response.status_code == 400 or (htmx and "saved (revision" not in page.lower()
                                               and "Nothing changed" not in page and "Reopened" not in page
                                               and "Marked complete" not in page)
    if refused:
        assert re.search(r"(grades\.\w+|note|cannot mark complete|reopen it first|nothing to reopen)", page), \
            page[-800:]
        assert row_counts() == before


@FUZZ
@given(body=st.fixed_dictionaries({}, optional={"grades": grade_dicts | json_values, "complete": json_values,
                                                  "note": notes | json_values}) | json_values)
def test_the_judgment_api_answers_every_fuzzed_body_with_a_revision_or_a_400(assigned, reviewer_client, body):
    item = assigned[1]
    before = row_counts()
    if isinstance(body, dict):  # the hashes of the texts shown travel with every grade
        body = {**body, "query_hash": item.query_hash, "source_hash": item.source_hash,
                "passage_hash": item.passage_hash}
    response = reviewer_client.post(f"/api/v1/review/items/{item.public_id}/judgment/", json.dumps(body),
                                    content_type="application/json")
    assert response.status_code in (200, 201, 400), response.content[:300]
    if response.status_code == 400:
        assert response.json()  # DRF names the field; the service names the grade type
        assert row_counts() == before
