"""Declared comparisons on stored runs: one look on the leaderboard, report and summary; a later system warns;
a system already scored is refused, naming it; the page, the API and the command; the table is append-only."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.db import DatabaseError, connection, transaction
from django.utils.html import escape

from benchmarks.comparisons.models import DeclaredComparison
from benchmarks.comparisons.services import ComparisonError, comparison_declare
from benchmarks.reports.models import HeldoutExposure
from reviewapp.core.models import AppendOnlyError
from tests.benchmarks.reports.leaderboard.test_leaderboard import _rerank, _reverse_keyword, _targets_first
from tests.benchmarks.reports.report.test_report_pages import _stored_report_inputs

# The systems of these tests only: the leaderboard's default hybrids (RRF of keyword order and each run of the
# bundled model) are left out here and have a test of their own below.
QS = "?replicates=1000&seed=7&hybrid=none"


@pytest.fixture
def runs(db):
    """A two-split suite, a retrieval run and three rerank runs of its candidates (three model configurations)."""
    stored = _stored_report_inputs()
    stored["oracle"] = _rerank(stored["run"], _targets_first, model="oracle-ish")
    stored["reverse"] = _rerank(stored["run"], _reverse_keyword, model="reverse", question="statute-relevance-v2")
    return stored


def _systems(runs, *names):
    run = runs["run"]
    return [(run, None if name == "keyword" else runs[name]) for name in names]


def _board(client, runs, *reranks, suffix=""):
    query = "&".join(f"rerank={r.pk}" for r in reranks)
    response = client.get(f"/benchmarks/reports/leaderboard/{runs['run'].pk}/{suffix}{QS}&{query}")
    assert response.status_code == 200
    return response


def test_systems_planned_together_never_warn_and_a_system_added_later_does(runs, admin_user_, admin_client_):
    rerank, oracle, reverse = runs["rerank"], runs["oracle"], runs["reverse"]
    # The four systems of the board, and the suite's other retrieval configuration (heading-v1), whose held-out
    # figures the leaderboard's known-target table shows too.
    declared = comparison_declare(systems=[*_systems(runs, "keyword", "rerank", "oracle", "reverse"),
                                           (runs["secondary"], None)], user=admin_user_, via="command")

    page = _board(admin_client_, runs, rerank, oracle, reverse).content.decode()
    assert "heldout-warning" not in page and page.count("planned-badge") >= 4
    assert f'id="planned-{declared.pk}"' in page and "Planned together: 5 systems, declared by alice_admin on" in page
    board = json.loads(_board(admin_client_, runs, rerank, oracle, reverse, suffix="leaderboard.json").content)
    for system in board["systems"]:
        exposure = system["heldout_exposure"]
        assert exposure["fresh"] and exposure["warning"] == "" and exposure["declaration"]["id"] == declared.pk
        assert exposure["configurations"] == 5 and exposure["looks"] == 1
    # Each system's computation is its own row: the count as each was appended (the page: 4 + 1).
    assert [s["heldout_exposure"]["times"] for s in board["systems"]] == [6, 7, 8, 9]

    # A fourth model, not declared: it warns, names the declaration, and the declared ones stay fresh.
    late = _rerank(runs["run"], _reverse_keyword, model="late-model")
    page = _board(admin_client_, runs, rerank, oracle, reverse, late).content.decode()
    assert page.count("heldout-warning") == 1
    warned = page[page.index('id="system-rerank-' + str(late.pk)):]
    warned = warned[:warned.index("</li>")]
    assert "Held-out split not fresh." in warned and "added after the comparison declared by alice_admin" in warned
    assert "model_id: &#x27;" in warned and "-&gt; &#x27;late-model&#x27;" in warned
    # The ledger still records every computation: 4 + 1 systems twice, then 5 + 1.
    assert HeldoutExposure.objects.count() == 16
    assert set(HeldoutExposure.objects.values_list("rerank_run_id", flat=True)) == {
        None, rerank.pk, oracle.pk, reverse.pk, late.pk}

    summary = admin_client_.get(f"/benchmarks/reports/summary/{runs['run'].pk}/{QS}&rerank={rerank.pk}"
                                f"&rerank={oracle.pk}&rerank={reverse.pk}&rerank={late.pk}").content.decode()
    assert "Planned together: 5 systems, declared by alice_admin on" in summary and "one exposure" in summary
    assert f"added after comparison #{declared.pk}" in summary and "2 looks" in summary

    report = admin_client_.get(f"/benchmarks/reports/rerank/{oracle.pk}/{QS}").content.decode()
    assert 'id="heldout-planned"' in report and 'id="heldout-warning"' not in report


def test_without_a_declaration_the_same_reads_warn_for_every_model_after_the_first(runs, admin_client_):
    page = _board(admin_client_, runs, runs["rerank"], runs["oracle"], runs["reverse"]).content.decode()
    # The two later models, and the suite's other retrieval configuration in the known-target table.
    assert page.count("heldout-warning") == 3 and "planned-badge" not in page


def test_declaring_a_system_already_scored_is_refused_naming_it_and_writes_nothing(runs, admin_user_,
                                                                                  stakeholder_client):
    oracle = runs["oracle"]
    assert stakeholder_client.get(f"/benchmarks/reports/rerank/{oracle.pk}/{QS}").status_code == 200
    with pytest.raises(ComparisonError, match=rf"already scored on the heldout split .*: rerank #{oracle.pk}: "
                                              r"local oracle-ish, .*\(first on .*, 1 computation\)"):
        comparison_declare(systems=_systems(runs, "keyword", "oracle", "reverse"), user=admin_user_, via="page")
    assert not DeclaredComparison.objects.exists()
    # The systems not yet seen can still be planned together; then none of them can be declared again.
    comparison_declare(systems=_systems(runs, "keyword", "reverse"), user=admin_user_, via="page")
    with pytest.raises(ComparisonError, match=r"already in the comparison declared by alice_admin .*reverse"):
        comparison_declare(systems=_systems(runs, "rerank", "reverse"), user=admin_user_, via="page")
    assert DeclaredComparison.objects.count() == 1


def test_what_cannot_be_declared_says_why(runs, admin_user_, stakeholder_user):
    run, secondary = runs["run"], runs["secondary"]
    cases = [
        ({"systems": _systems(runs, "keyword", "oracle"), "user": stakeholder_user}, "only an admin"),
        ({"systems": _systems(runs, "oracle")}, "at least 2 systems; got 1"),
        ({"systems": _systems(runs, "oracle", "oracle")}, "named twice"),
        ({"systems": [(run, None), (secondary, runs["oracle"])]}, "reranks retrieval run #"),
        ({"systems": _systems(runs, "keyword", "oracle"), "split": "dev"}, "only the heldout split is ledgered"),
        ({"systems": _systems(runs, "keyword", "oracle"), "split": "train"}, "no split 'train'"),
    ]
    twin = _rerank(run, _targets_first, model="oracle-ish")  # the oracle's configuration again
    cases.append(({"systems": [(run, runs["oracle"]), (run, twin)]}, "have the same configuration"))
    for kwargs, message in cases:
        with pytest.raises(ComparisonError, match=message):
            comparison_declare(**{"user": admin_user_, "via": "api", **kwargs})
    assert not DeclaredComparison.objects.exists()


def test_a_declaration_is_append_only_in_the_orm_and_the_database(runs, admin_user_):
    declared = comparison_declare(systems=_systems(runs, "keyword", "oracle"), user=admin_user_, via="command")
    with pytest.raises(AppendOnlyError):
        declared.delete()
    with pytest.raises(AppendOnlyError):
        DeclaredComparison.objects.filter(pk=declared.pk).update(declared_at=declared.declared_at)
    for sql in ('UPDATE "benchmarks_declaredcomparison" SET systems = %s WHERE id = %s',
                'DELETE FROM "benchmarks_declaredcomparison" WHERE id = %s AND %s IS NOT NULL'):
        with pytest.raises(DatabaseError, match="append-only"), transaction.atomic(), connection.cursor() as cur:
            cur.execute(sql, ["[]", declared.pk] if sql.startswith("UPDATE") else [declared.pk, 1])
    assert DeclaredComparison.objects.get(pk=declared.pk).systems[1]["rerank_run_id"] == runs["oracle"].pk


def test_the_page_offers_unseen_systems_and_declares_them(runs, admin_client_, stakeholder_client):
    run, oracle, reverse = runs["run"], runs["oracle"], runs["reverse"]
    url = f"/benchmarks/comparisons/declare/{run.pk}/"
    assert stakeholder_client.get(url).status_code == 403
    stakeholder_client.get(f"/benchmarks/reports/rerank/{oracle.pk}/{QS}")  # the oracle is seen
    page = admin_client_.get(url).content.decode()
    seen = page[page.index(f'id="plan-rerank-{oracle.pk}"'):]
    assert "disabled" in seen[:seen.index("</label>")] and "seen" in seen[:seen.index("</label>")]
    refused = admin_client_.post(url, {"system": [f"rerank-{oracle.pk}", f"rerank-{reverse.pk}"]})
    assert refused.status_code == 400 and f"rerank #{oracle.pk}" in refused.content.decode()
    response = admin_client_.post(url, {"system": [f"retrieval-{run.pk}", f"rerank-{reverse.pk}"]})
    assert response.status_code == 302
    declared = DeclaredComparison.objects.get()
    assert response["Location"] == f"/benchmarks/reports/leaderboard/{run.pk}/?comparison={declared.pk}"
    assert declared.declared_via == "page" and declared.declared_by.username == "alice_admin"
    listing = stakeholder_client.get("/benchmarks/comparisons/").content.decode()
    assert f'id="declaration-{declared.pk}"' in listing and "planned together: 2 systems" in listing


def test_the_api_declares_lists_and_refuses_by_name(runs, admin_client_, stakeholder_client):
    run, oracle, reverse = runs["run"], runs["oracle"], runs["reverse"]
    body = {"systems": [{"retrieval_run": run.pk}, {"retrieval_run": run.pk, "rerank_run": reverse.pk}]}
    url = "/api/v1/benchmarks/comparisons/"
    assert stakeholder_client.post(url, body, content_type="application/json").status_code == 403
    missing = admin_client_.post(url, {"systems": [{"retrieval_run": run.pk, "rerank_run": 999999}]},
                                 content_type="application/json")
    assert missing.status_code == 400 and missing.json() == {
        "errors": ["systems[0].rerank_run: no rerank run #999999"]}
    created = admin_client_.post(url, body, content_type="application/json")
    assert created.status_code == 201
    out = created.json()
    assert out["declared_by"] == "alice_admin" and out["declared_via"] == "api" and out["split"] == "heldout"
    assert [s["rerank_sha256"] == "" for s in out["systems"]] == [True, False]
    assert out["sentence"].startswith("planned together: 2 systems, declared by alice_admin on ")
    assert out["sha256"] == DeclaredComparison.objects.get().sha256
    listed = stakeholder_client.get(f"{url}?suite={run.suite_id}").json()["comparisons"]
    assert [c["id"] for c in listed] == [out["id"]]
    stakeholder_client.get(f"/api/v1/benchmarks/reports/rerank/{oracle.pk}/?replicates=1000")
    seen = admin_client_.post(url, {"systems": [{"retrieval_run": run.pk, "rerank_run": oracle.pk},
                                                {"retrieval_run": run.pk, "rerank_run": runs["rerank"].pk}]},
                              content_type="application/json")
    assert seen.status_code == 400 and f"rerank #{oracle.pk}: local oracle-ish" in seen.json()["errors"][0]


def test_the_command_declares_lists_and_refuses(runs, admin_user_):
    run, oracle, reverse = runs["run"], runs["oracle"], runs["reverse"]
    out = io.StringIO()
    call_command("declare_comparison", "--retrieval-run", str(run.pk), "--rerank-run", str(oracle.pk),
                 "--rerank-run", str(reverse.pk), "--by", admin_user_.username, stdout=out)
    text = out.getvalue()
    assert "planned together: 3 systems, declared by alice_admin on" in text
    assert f"keyword order of retrieval run #{run.pk}" in text and f"rerank #{reverse.pk}: local reverse" in text
    listed = io.StringIO()
    call_command("declare_comparison", "--list", stdout=listed)
    assert listed.getvalue().startswith(f"#{DeclaredComparison.objects.get().pk} report-synthetic v1 heldout")
    with pytest.raises(CommandError, match="already in the comparison declared by alice_admin"):
        call_command("declare_comparison", "--retrieval-run", str(run.pk), "--rerank-run", str(oracle.pk),
                     "--by", admin_user_.username, stdout=io.StringIO())
    with pytest.raises(CommandError, match="--by: no user 'nobody'"):
        call_command("declare_comparison", "--retrieval-run", str(run.pk), "--by", "nobody")
    with pytest.raises(CommandError, match=r"--rerank-run: no rerank run\(s\) #999999"):
        call_command("declare_comparison", "--retrieval-run", str(run.pk), "--rerank-run", "999999",
                     "--by", admin_user_.username)


def test_the_hybrid_of_a_declared_rerank_run_is_planned_with_it(runs, admin_user_, admin_client_):
    rerank, oracle = runs["rerank"], runs["oracle"]
    comparison_declare(systems=_systems(runs, "keyword", "rerank", "oracle"), user=admin_user_, via="command")
    response = admin_client_.get(f"/benchmarks/reports/leaderboard/{runs['run'].pk}/leaderboard.json"
                                 f"?replicates=1000&seed=7&rerank={rerank.pk}&rerank={oracle.pk}&hybrid={rerank.pk}")
    systems = json.loads(response.content)["systems"]
    hybrids = [s for s in systems if s["heldout_exposure"]["entry"]["configuration"]["rerank"]
               and s["heldout_exposure"]["entry"]["configuration"]["rerank"].get("fusion")]
    assert len(hybrids) == 1
    for system in systems:
        assert system["heldout_exposure"]["fresh"], system["heldout_exposure"]["warning"]


def test_any_systems_of_a_suite_are_one_comparison_and_its_summary_lists_them_all(runs, admin_client_,
                                                                                  stakeholder_client):
    """Another retrieval configuration, a rerank run and its hybrid, declared on the page: one look, no warning;
    the summary lists every one of them, counts them by kind and gives the verdict over all of them."""
    run, secondary, rerank = runs["run"], runs["secondary"], runs["rerank"]
    url = f"/benchmarks/comparisons/declare/{run.pk}/"
    page = admin_client_.get(url).content.decode()
    for key in (f"retrieval-{run.pk}", f"retrieval-{secondary.pk}", f"rerank-{rerank.pk}", f"hybrid-{rerank.pk}"):
        assert f'id="plan-{key}"' in page
    chosen = [f"retrieval-{run.pk}", f"retrieval-{secondary.pk}", f"rerank-{rerank.pk}", f"hybrid-{rerank.pk}"]
    response = admin_client_.post(url, {"system": chosen})
    assert response.status_code == 302, response.content.decode()
    declared = DeclaredComparison.objects.get()
    assert {s["key"]: s["hybrid"] for s in declared.systems} == dict.fromkeys(chosen, False) | {chosen[3]: True}

    board = admin_client_.get(f"/benchmarks/reports/leaderboard/{run.pk}/?replicates=1000&seed=7"
                              f"&comparison={declared.pk}").content.decode()
    assert "heldout-warning" not in board and f'id="system-heading-v1-run-{secondary.pk}"' in board
    assert f"/benchmarks/reports/summary/{run.pk}/?comparison={declared.pk}" in board

    summary = stakeholder_client.get(f"/benchmarks/reports/summary/{run.pk}/?replicates=1000&seed=7"
                                     f"&comparison={declared.pk}").content.decode()
    systems = summary[summary.index('class="summary-systems"'):]
    systems = systems[:systems.index("</ul>")]
    for key in ("keyword", f"heading-v1-run-{secondary.pk}", f"rerank-{rerank.pk}", f"hybrid-{rerank.pk}"):
        assert f'<strong class="mono">{key}</strong>' in systems
    assert ("keyword order, 1 rerank run, 1 hybrid and 1 other retrieval configuration (heading-v1)" in summary
            and "2 rerank runs" not in summary)
    assert f"Every system of declared comparison #{declared.pk}" in summary and "NOT fresh" not in summary
    held_out = summary[summary.index('id="summary-heldout"'):]
    assert held_out[:held_out.index("</table>")].count('<th scope="row"') == 4
    from benchmarks.reports.selectors import leaderboard_build
    verdict = leaderboard_build(run=run, reranks=[rerank], hybrids=[rerank], others=[secondary], replicates=1000,
                                seed=7).verdict
    assert escape(verdict.sentence) in summary.split('id="summary-verdict"')[1].split("</p>")[0]
    listing = stakeholder_client.get("/benchmarks/comparisons/").content.decode()
    assert f'href="/benchmarks/reports/summary/{run.pk}/?comparison={declared.pk}"' in listing
    base = f"/benchmarks/reports/leaderboard/{run.pk}/"
    exported = json.loads(stakeholder_client.get(f"{base}leaderboard.json?replicates=1000&comparison={declared.pk}")
                          .content)
    assert {s["key"] for s in exported["systems"]} == {"keyword", f"heading-v1-run-{secondary.pk}",
                                                       f"rerank-{rerank.pk}", f"hybrid-{rerank.pk}"}
    assert all(s["heldout_exposure"]["fresh"] for s in exported["systems"])
    for export in ("leaderboard.csv", "per-query.tsv", f"heading-v1-run-{secondary.pk}.run"):
        assert stakeholder_client.get(f"{base}{export}?replicates=1000&comparison={declared.pk}").status_code == 200
    pdf = stakeholder_client.get(f"/benchmarks/reports/summary/{run.pk}/summary.pdf?replicates=1000"
                                 f"&comparison={declared.pk}")
    assert pdf.status_code == 200 and pdf["Content-Type"] == "application/pdf"
    # The systems of the comparison and nothing else: no rerank= beside it, no comparison of another suite
    assert admin_client_.get(f"/benchmarks/reports/summary/{run.pk}/?comparison={declared.pk}"
                             f"&rerank={rerank.pk}").status_code == 400
    assert admin_client_.get(f"/benchmarks/reports/summary/{run.pk}/?comparison=999").status_code == 400


def test_the_api_and_the_command_declare_other_configurations_and_hybrids(runs, admin_client_, admin_user_):
    run, secondary, rerank, oracle = runs["run"], runs["secondary"], runs["rerank"], runs["oracle"]
    body = {"systems": [{"retrieval_run": secondary.pk}, {"retrieval_run": run.pk, "rerank_run": rerank.pk},
                        {"retrieval_run": run.pk, "rerank_run": rerank.pk, "hybrid": True}]}
    bad = admin_client_.post("/api/v1/benchmarks/comparisons/", {"systems": [{"retrieval_run": run.pk,
                                                                              "hybrid": True}]},
                             content_type="application/json")
    assert bad.status_code == 400 and "systems[0].hybrid" in bad.json()["errors"][0]
    created = admin_client_.post("/api/v1/benchmarks/comparisons/", body, content_type="application/json")
    assert created.status_code == 201, created.content
    out = created.json()
    assert out["sentence"].startswith("planned together: 3 systems") and len(out["systems"]) == 3
    assert out["systems"][2]["configuration"]["rerank"]["fusion"] == "rrf-k60"
    assert out["summary_url"] == f"/benchmarks/reports/summary/{secondary.pk}/?comparison={out['id']}"
    text = io.StringIO()
    call_command("declare_comparison", "--retrieval-run", str(run.pk), "--rerank-run", str(oracle.pk),
                 "--hybrid", str(oracle.pk), "--by", admin_user_.username, stdout=text)
    assert "planned together: 3 systems" in text.getvalue() and f"hybrid of rerank #{oracle.pk}" in text.getvalue()
    assert "summary: /benchmarks/reports/summary/" in text.getvalue()
