"""CUAD comparisons planned together: declared on the page, the API and the command; the summary of one ranks
every declared run, with the verdict over all of them; a declaration is append-only."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.db import DatabaseError, connection, transaction
from django.http import QueryDict
from django.utils.html import escape

from grading.comparisons.models import CuadComparison
from grading.comparisons.services import CuadComparisonError, cuad_comparison_declare
from grading.runs.services import extraction_run_import
from grading.scorecard.leaderboard import leaderboard_runs, leaderboard_view
from grading.scorecard.params import parse_view
from reviewapp.core.models import AppendOnlyError
from tests.grading.cuad_fixture import gold_run

BETA = "BETA-LICENSE AGREEMENT"


@pytest.fixture
def three(loaded):
    """The fixture's gold and noisy runs, and a third system that found nothing in one contract."""
    quiet = gold_run("found-nothing-in-beta")
    quiet["extractions"] = [e for e in quiet["extractions"] if e["contract"] != BETA]
    third = extraction_run_import(dataset=loaded.dataset, raw=json.dumps(quiet))[0]
    return loaded, [loaded.gold, loaded.noisy, third]


def _words(text: str) -> str:
    return " ".join(text.split())


def test_the_page_declares_runs_and_the_summary_ranks_every_one_of_them(three, admin_client_, stakeholder_client):
    loaded, runs = three
    page = admin_client_.get("/cuad/comparisons/").content.decode()
    for run in runs:
        assert f'id="plan-run-{run.pk}"' in page
    assert stakeholder_client.post("/cuad/comparisons/", {"run": [r.pk for r in runs]}).status_code == 403
    one = admin_client_.post("/cuad/comparisons/", {"dataset": loaded.dataset.pk, "run": [runs[0].pk]})
    assert one.status_code == 400 and "at least 2 runs; got 1" in one.content.decode()
    response = admin_client_.post("/cuad/comparisons/", {"dataset": loaded.dataset.pk, "run": [r.pk for r in runs]})
    declared = CuadComparison.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/cuad/scorecard/summary/?comparison={declared.pk}"
    assert [r["run_id"] for r in declared.runs] == [r.pk for r in runs] and declared.declared_via == "page"

    summary = _words(stakeholder_client.get(response["Location"]).content.decode())
    standings = summary.split('id="summary-standings"')[1].split("</table>")[0]
    for run in runs:
        assert f"#{run.pk} {run.model}" in standings
    params = QueryDict(mutable=True)
    params.setlist("run", [str(r.pk) for r in runs])
    params["sample"] = str(declared.sample_id)
    view, _ = leaderboard_runs(view=parse_view(params, need_run=False), asked=True)
    verdict = leaderboard_view(view=view).verdict.sentence
    assert escape(_words(verdict)) in summary.split('id="summary-verdict"')[1].split("</p>")[0]
    board = stakeholder_client.get(f"/cuad/scorecard/leaderboard/?comparison={declared.pk}")
    assert {e.run.pk for e in board.context["lb"].entries} == {r.pk for r in runs}
    listing = stakeholder_client.get("/cuad/comparisons/").content.decode()
    assert f'href="/cuad/scorecard/summary/?comparison={declared.pk}"' in listing
    assert "planned together: 3 runs" in listing
    assert stakeholder_client.get("/cuad/scorecard/summary/?comparison=999").status_code == 400
    mixed = stakeholder_client.get(f"/cuad/scorecard/summary/?comparison={declared.pk}&run={runs[0].pk}")
    assert mixed.status_code == 400 and "it fixes the runs and the sample" in mixed.content.decode()


def test_the_api_and_both_commands_declare_and_what_cannot_be_declared_says_why(three, admin_client_, admin_user_,
                                                                                stakeholder_client):
    _loaded, runs = three
    url = "/api/v1/cuad/comparisons/"
    body = {"runs": [r.pk for r in runs[:2]]}
    assert stakeholder_client.post(url, body, content_type="application/json").status_code == 403
    missing = admin_client_.post(url, {"runs": [runs[0].pk, 999999]}, content_type="application/json")
    assert missing.status_code == 400 and missing.json() == {"errors": ["runs[1]: no run #999999"]}
    created = admin_client_.post(url, body, content_type="application/json")
    assert created.status_code == 201, created.content
    out = created.json()
    assert out["declared_via"] == "api" and [r["id"] for r in out["runs"]] == body["runs"]
    assert out["summary_url"] == f"/cuad/scorecard/summary/?comparison={out['id']}"
    assert [c["id"] for c in stakeholder_client.get(url).json()["comparisons"]] == [out["id"]]

    text = io.StringIO()
    call_command("declare_comparison", "--cuad-run", str(runs[1].pk), "--cuad-run", str(runs[2].pk),
                 "--by", admin_user_.username, stdout=text)
    assert "planned together: 2 runs" in text.getvalue() and "summary: /cuad/scorecard/summary/?comparison=" in (
        text.getvalue())
    listed = io.StringIO()
    call_command("compare_cuad_runs", "--list-declared", stdout=listed)
    assert listed.getvalue().count("planned together") == 2
    with pytest.raises(CommandError, match=r"--run-id: no run\(s\) #999999"):
        call_command("compare_cuad_runs", "--declare", "--run-id", "999999", "--by", admin_user_.username)

    cases = [({"runs": runs[:1]}, "at least 2 runs"), ({"runs": [runs[0], runs[0]]}, "named twice")]
    for kwargs, message in cases:
        with pytest.raises(CuadComparisonError, match=message):
            cuad_comparison_declare(user=admin_user_, via="command", **kwargs)
    assert CuadComparison.objects.count() == 2


def test_a_cuad_comparison_is_append_only_in_the_orm_and_the_database(three, admin_user_):
    _loaded, runs = three
    declared = cuad_comparison_declare(runs=runs, user=admin_user_, via="command")
    row = CuadComparison.objects.get(pk=declared.pk)
    with pytest.raises(AppendOnlyError):
        row.delete()
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic(), connection.cursor() as cur:
        cur.execute('UPDATE "grading_cuadcomparison" SET runs = %s WHERE id = %s', ["[]", declared.pk])
