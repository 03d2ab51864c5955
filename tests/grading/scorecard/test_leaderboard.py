"""The CUAD leaderboard: pairwise intervals and Holm-adjusted p-values against an independent computation,
the page (who may read it, thresholds applied to every run, scopes, refusals) and its exports."""

from __future__ import annotations

import csv
import io
import json
import math
import re

import numpy as np
import pytest
from django.utils.html import escape

from grading.runs.services import extraction_run_import
from grading.scorecard import leaderboard
from grading.scorecard.leaderboard import board_grade, board_verdict
from scoring.cuad.grading import PairTable, Thresholds
from scoring.stats.bootstrap import resample_indices
from scoring.stats.multiple import MULTIPLE_COMPARISON_METHOD
from tests.grading.console_support import random_run
from tests.grading.cuad_fixture import gold_run
from tests.references import multipletests

ALPHA, BETA = "ALPHA-DISTRIBUTOR AGREEMENT", "BETA-LICENSE AGREEMENT"

# ---------------------------------------------------------------------------
# The arithmetic against a paired bootstrap computed by hand


def _random_tables(rng: np.random.Generator, *, runs: int, contracts: int, categories: int) -> list[PairTable]:
    """Runs against one random gold: extractions per contract, some matched one-to-one to a span of their cell."""
    span_contract, span_category = [], []
    for c in range(contracts):
        for _ in range(int(rng.integers(0, 6))):
            span_contract.append(c)
            span_category.append(int(rng.integers(categories)))
    span_contract_arr = np.array(span_contract, dtype=np.int64)
    span_category_arr = np.array(span_category, dtype=np.int64)
    tables = []
    for _ in range(runs):
        ext = {"contract": [], "category": [], "f1": [], "grounding": [], "span": []}
        used: set[int] = set()
        quality = rng.uniform(0.2, 1.0)  # runs differ in how often they match well
        for c in range(contracts):
            for _ in range(int(rng.integers(0, 6))):
                k = int(rng.integers(categories))
                free = [j for j in range(len(span_contract)) if span_contract[j] == c and span_category[j] == k
                        and j not in used]
                span = free[0] if free and rng.random() < 0.8 else -1
                if span >= 0:
                    used.add(span)
                ext["contract"].append(c)
                ext["category"].append(k)
                ext["f1"].append(float(rng.uniform(0, 1) ** (1 - quality)) if span >= 0 else 0.0)
                ext["grounding"].append(float(rng.choice([rng.uniform(0, 0.8), 1.0], p=[0.2, 0.8])))
                ext["span"].append(span)
        tables.append(PairTable(
            np.array(ext["contract"], dtype=np.int64), np.array(ext["category"], dtype=np.int64),
            np.array(ext["f1"]), np.array(ext["grounding"]), np.array(ext["span"], dtype=np.int64),
            span_contract_arr, span_category_arr, contracts, categories,
        ))
    return tables


def _hand_tallies(table: PairTable, t: Thresholds) -> list[list[float]]:
    """[credit, extractions, spans, hallucinated] per contract, with the outcome rules written out again."""
    out = [[0.0, 0.0, 0.0, 0.0] for _ in range(table.n_contracts)]
    for i in range(len(table.ext_contract)):
        row = out[int(table.ext_contract[i])]
        row[1] += 1
        if table.ext_grounding[i] < t.grounding:
            row[3] += 1
        elif table.ext_span[i] >= 0 and table.ext_f1[i] >= t.correct:
            row[0] += 1.0
        elif table.ext_span[i] >= 0 and table.ext_f1[i] >= t.partial:
            row[0] += 0.5
    for c in table.span_contract:
        out[int(c)][2] += 1
    return out


def _hand_f1(tallies: list[list[float]], drawn) -> float:
    credit = extractions = spans = 0.0
    for c in drawn:
        credit += tallies[c][0]
        extractions += tallies[c][1]
        spans += tallies[c][2]
    return 2 * credit / (extractions + spans) if extractions + spans else float("nan")


def _hand_p(differences: list[float]) -> float:
    kept = [d for d in differences if d == d]
    below = (sum(1 for d in kept if d <= 0) + 1) / (len(kept) + 1)
    above = (sum(1 for d in kept if d >= 0) + 1) / (len(kept) + 1)
    return min(1.0, 2 * min(below, above))


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_pairwise_intervals_and_holm_p_values_match_a_hand_computed_paired_bootstrap(seed):
    rng = np.random.default_rng(seed)
    runs = int(rng.integers(3, 6))
    tables = _random_tables(rng, runs=runs, contracts=int(rng.integers(8, 20)), categories=3)
    thresholds = Thresholds(correct=0.7, partial=0.4, grounding=0.5)
    replicates, boot_seed = 300, int(rng.integers(1000))
    board = board_grade(tables, thresholds, replicates=replicates, seed=boot_seed)

    # The same contract draws, recomputed per replicate with plain loops.
    draws = resample_indices(tables[0].n_contracts, replicates=replicates, seed=boot_seed)
    tallies = [_hand_tallies(t, thresholds) for t in tables]
    everything = range(tables[0].n_contracts)
    points = [_hand_f1(tl, everything) for tl in tallies]
    reps = [[_hand_f1(tl, row) for row in draws] for tl in tallies]

    for i, standing in enumerate(board.standings):
        assert standing.overall.f1.estimate == pytest.approx(points[i], nan_ok=True)
        low, high = np.nanpercentile(reps[i], [2.5, 97.5])
        assert (standing.overall.f1.low, standing.overall.f1.high) == pytest.approx((low, high))
        hallucinated = sum(c[3] for c in tallies[i]) / sum(c[1] for c in tallies[i])
        assert standing.hallucination.estimate == pytest.approx(hallucinated)

    ranked = sorted(range(runs), key=lambda i: -points[i])
    assert [points[i] for i in board.order] == pytest.approx([points[i] for i in ranked])
    assert len(board.pairs) == runs * (runs - 1) // 2
    hand_p = []
    for pair in board.pairs:
        assert points[pair.a] >= points[pair.b]  # the higher-ranked run first
        differences = [x - y for x, y in zip(reps[pair.a], reps[pair.b], strict=True)]
        assert pair.f1.estimate == pytest.approx(points[pair.a] - points[pair.b])
        low, high = np.nanpercentile(differences, [2.5, 97.5])
        assert (pair.f1.low, pair.f1.high) == pytest.approx((low, high))
        assert pair.p_value == pytest.approx(_hand_p(differences))
        hand_p.append(_hand_p(differences))
    holm = multipletests(hand_p, method="holm")[1]
    assert [p.p_adjusted for p in board.pairs] == pytest.approx(list(holm))


def test_a_board_refuses_tables_of_different_contracts():
    rng = np.random.default_rng(0)
    a = _random_tables(rng, runs=1, contracts=5, categories=2)[0]
    b = _random_tables(rng, runs=1, contracts=6, categories=2)[0]
    with pytest.raises(leaderboard.LeaderboardError, match="run 2: graded on 6 contracts, the first run on 5"):
        board_grade([a, b], Thresholds(), replicates=50)


# ---------------------------------------------------------------------------
# The page


def _third(loaded):
    return extraction_run_import(dataset=loaded.dataset, raw=json.dumps(random_run(np.random.default_rng(3))))[0]


def _query(*runs, **params) -> str:
    parts = [f"run={r.pk}" for r in runs] + [f"{k}={v}" for k, v in params.items()]
    return "&".join(parts)


def test_reviewers_are_refused_and_readers_of_reports_see_the_leaderboard(
    loaded, reviewer_client, stakeholder_client, admin_client_, client
):
    q = _query(loaded.gold, loaded.noisy)
    assert reviewer_client.get(f"/cuad/scorecard/leaderboard/?{q}").status_code == 403
    assert reviewer_client.get(f"/api/v1/cuad/leaderboard/?{q}").status_code == 403
    assert client.get(f"/cuad/scorecard/leaderboard/?{q}").status_code == 302
    for c in (stakeholder_client, admin_client_):
        assert c.get(f"/cuad/scorecard/leaderboard/?{q}").status_code == 200
        assert c.get(f"/api/v1/cuad/leaderboard/?{q}").status_code == 200


def test_three_runs_are_ranked_with_every_pair_and_the_method_named(loaded, stakeholder_client):
    third = _third(loaded)
    response = stakeholder_client.get(f"/cuad/scorecard/leaderboard/?{_query(third, loaded.noisy, loaded.gold)}")
    assert response.status_code == 200
    lb = response.context["lb"]
    assert lb.entries[0].run.pk == loaded.gold.pk  # gold is perfect: F1 1.0
    assert lb.entries[0].standing.overall.f1.estimate == 1.0
    assert [(p.a.run.pk, p.b.run.pk) for p in lb.pairs][:2] == [
        (loaded.gold.pk, lb.entries[1].run.pk), (loaded.gold.pk, lb.entries[2].run.pk)]
    page = response.content.decode()
    assert f"Multiple comparisons: {MULTIPLE_COMPARISON_METHOD}." in page
    assert page.count('data-testid="pair-') == 3
    assert "4 contracts of the seed-42 sample that every run attempted" in page
    # the clause type x model table: one cell per type and run, coloured by class, interval on hover
    heat = page.split('data-testid="heat"')[1].split("</table>")[0]
    cells = re.findall(r'<td class="num (heat-[0-4na]+)" title="([^"]*)">', heat)
    assert len(cells) == 3 * 3
    gold_column = [cells[k * 3] for k in range(3)]
    assert all(css == "heat-4" and "95% interval 100.0 to 100.0" in title for css, title in gold_column)


def test_the_leaderboard_page_has_no_inline_style_or_script(loaded, stakeholder_client):
    page = stakeholder_client.get(f"/cuad/scorecard/leaderboard/?{_query(loaded.gold, loaded.noisy)}").content.decode()
    main = page.split('<form id="controls"')[1]
    assert "style=" not in main and "<script>" not in main and " on" + "change=" not in main
    fragment = stakeholder_client.get(
        f"/cuad/scorecard/leaderboard/?{_query(loaded.gold, loaded.noisy)}", HTTP_HX_REQUEST="true"
    ).content.decode()
    assert fragment.lstrip().startswith('<div id="board"') and "style=" not in fragment


@pytest.mark.parametrize("params", [
    {"correct": "0.3", "partial": "0.1", "grounding": "0.0", "matcher": "greedy"},
    {"correct": "0.95", "partial": "0.9", "grounding": "0.99", "matcher": "hungarian"},
])
def test_thresholds_and_matcher_apply_to_every_run_as_each_runs_own_scorecard(loaded, stakeholder_client, params):
    third = _third(loaded)
    runs = (loaded.gold, loaded.noisy, third)
    board = stakeholder_client.get(f"/api/v1/cuad/leaderboard/?{_query(*runs, **params)}").json()
    assert board["thresholds"] == {k: float(params[k]) for k in ("correct", "partial", "grounding")}
    assert board["matcher"] == params["matcher"]
    by_id = {r["id"]: r for r in board["runs"]}
    for run in runs:
        card = stakeholder_client.get(f"/api/v1/cuad/scorecard/?{_query(run, **params)}").json()
        mine = by_id[run.pk]
        for key in ("precision", "recall", "f1", "ci", "counts"):
            assert mine[key] == card[key], (run.model, key)
        assert mine["hallucination_rate"]["estimate"] == pytest.approx(1 - card["grounded"]["estimate"])
    default = stakeholder_client.get(f"/api/v1/cuad/leaderboard/?{_query(*runs)}").json()
    assert [r["counts"] for r in default["runs"]] != [r["counts"] for r in board["runs"]]


def test_bad_thresholds_are_refused_naming_the_field(loaded, stakeholder_client):
    q = _query(loaded.gold, loaded.noisy, correct="0.3", partial="0.6")
    response = stakeholder_client.get(f"/cuad/scorecard/leaderboard/?{q}")
    assert response.status_code == 400
    assert "partial: the partial floor 0.6 is above the correct threshold 0.3" in response.content.decode()
    api = stakeholder_client.get(f"/api/v1/cuad/leaderboard/?{q}&grounding=2")
    assert api.status_code == 400 and any(e.startswith("grounding:") for e in api.json()["errors"])


def test_the_exports_parse_and_carry_the_same_figures(loaded, stakeholder_client):
    third = _third(loaded)
    q = _query(loaded.gold, loaded.noisy, third)
    data = json.loads(stakeholder_client.get(f"/cuad/scorecard/leaderboard/leaderboard.json?{q}").content)
    assert data["method"] == MULTIPLE_COMPARISON_METHOD
    assert data["bootstrap"] == {"replicates": 1000, "seed": 0, "unit": "contract", "paired": True}
    assert [r["rank"] for r in data["runs"]] == [1, 2, 3] and len(data["pairs"]) == 3
    assert set(data["runs"][0]["per_category"]) == {"Document Name", "Governing Law", "Anti-Assignment"}
    assert stakeholder_client.get(f"/api/v1/cuad/leaderboard/?{q}").json() == data

    response = stakeholder_client.get(f"/cuad/scorecard/leaderboard/leaderboard.csv?{q}")
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    pairs = [r for r in rows if r["kind"] == "pair"]
    assert len(pairs) == 3
    for row, pair in zip(pairs, data["pairs"], strict=True):
        assert (int(row["run"]), int(row["other_run"])) == (pair["a"], pair["b"])
        assert float(row["estimate"]) == pytest.approx(pair["f1_diff"], abs=1e-6)
        assert float(row["p_adjusted"]) == pytest.approx(pair["p_adjusted"], abs=1e-6)
    f1_all = {int(r["run"]): float(r["estimate"]) for r in rows
              if r["kind"] == "run" and r["category"] == "ALL" and r["metric"] == "f1"}
    assert f1_all == {r["id"]: pytest.approx(r["f1"], abs=1e-6) for r in data["runs"]}
    assert len([r for r in rows if r["kind"] == "run"]) == 3 * (4 + 3)  # 4 headline metrics + 3 clause types


def _scoped(loaded, model: str, titles: list[str]):
    run = gold_run(model)
    run["extractions"] = [e for e in run["extractions"] if e["contract"] in titles]
    run["contracts"] = titles
    return extraction_run_import(dataset=loaded.dataset, raw=json.dumps(run))[0]


def test_runs_with_different_scopes_are_ranked_on_their_common_contracts_with_a_notice(loaded, stakeholder_client):
    two = _scoped(loaded, "two-contracts", [ALPHA, BETA])
    response = stakeholder_client.get(f"/cuad/scorecard/leaderboard/?{_query(loaded.noisy, two)}")
    assert response.status_code == 200
    lb = response.context["lb"]
    assert lb.common == 2 and lb.board.n_contracts == 2
    assert "ranked only on the 2 contracts they all attempted" in lb.notice
    assert 'data-testid="leaderboard-notice"' in response.content.decode()
    noisy = next(e for e in lb.entries if e.run.pk == loaded.noisy.pk)
    assert noisy.scope.n == 4  # its own scope is shown; its figures are on the common two
    assert noisy.standing.overall.counts["spans"] == 6


def test_runs_sharing_no_contract_are_refused_with_the_reason(loaded, stakeholder_client):
    a = _scoped(loaded, "alpha-only", [ALPHA])
    b = _scoped(loaded, "beta-only", [BETA])
    response = stakeholder_client.get(f"/cuad/scorecard/leaderboard/?{_query(a, b)}")
    assert response.status_code == 400
    assert "share no contract" in response.content.decode()
    api = stakeholder_client.get(f"/api/v1/cuad/leaderboard/?{_query(a, b)}")
    assert api.status_code == 400 and "covers 1 of 4 contracts" in api.json()["errors"][0]


def test_without_runs_asked_it_ranks_every_run_of_the_dataset_and_names_those_left_out(loaded, stakeholder_client):
    partial = _scoped(loaded, "partial", [ALPHA])  # declared fewer contracts: left out, and named
    # A system that found nothing in one contract and declares no list: graded on the whole sample, so it is in
    quiet = gold_run("found-nothing-in-beta")
    quiet["extractions"] = [e for e in quiet["extractions"] if e["contract"] != BETA]
    third = extraction_run_import(dataset=loaded.dataset, raw=json.dumps(quiet))[0]
    response = stakeholder_client.get("/cuad/scorecard/leaderboard/")
    assert response.status_code == 200
    lb = response.context["lb"]
    assert lb.chosen_by_default and {e.run.pk for e in lb.entries} == {loaded.gold.pk, loaded.noisy.pk, third.pk}
    page = " ".join(response.content.decode().split())
    assert "Runs: by default, every run graded on the whole sample (3)" in page
    assert f"Left out: #{partial.pk} partial (it attempted 1 of 4 contracts" in page
    link = page.split('data-testid="summary-link"')[1].split("</p>")[0]
    assert "/cuad/scorecard/summary/?sample=" in link and f"run={third.pk}" in link
    summary = " ".join(stakeholder_client.get("/cuad/scorecard/summary/").content.decode().split())
    standings = summary.split('id="summary-standings"')[1].split("</table>")[0]
    for run in (loaded.gold, loaded.noisy, third):
        assert f"#{run.pk} {run.model}" in standings
    assert f"#{partial.pk} partial" not in standings and f"Left out: #{partial.pk} partial" in summary


def test_too_many_runs_are_refused(loaded, stakeholder_client, monkeypatch):
    monkeypatch.setattr(leaderboard, "MAX_RUNS", 2)
    response = stakeholder_client.get(f"/api/v1/cuad/leaderboard/?{_query(loaded.gold, loaded.noisy, _third(loaded))}")
    assert response.status_code == 400
    assert response.json()["errors"] == ["run: 3 runs chosen; a leaderboard compares at most 2"]


def test_the_overview_links_to_the_leaderboard(loaded, stakeholder_client):
    assert 'href="/cuad/scorecard/leaderboard/"' in stakeholder_client.get("/cuad/").content.decode()


def test_the_board_opens_with_one_verdict_in_the_page_exports_and_api(loaded, stakeholder_client):
    third = _third(loaded)
    q = _query(loaded.gold, loaded.noisy, third)
    data = json.loads(stakeholder_client.get(f"/cuad/scorecard/leaderboard/leaderboard.json?{q}").content)
    verdict = data["verdict"]
    # Four contracts: intervals shown, marked as few units; the sentence says so and names the population.
    assert data["units"]["support"] == "few" and verdict["kind"] in {"best", "cannot tell apart"}
    assert "over 4 contracts" in verdict["sentence"] and "few units (n=4 contracts)" in verdict["sentence"]
    assert verdict["sentence"].count("#") >= 3 and "top difference" in verdict["sentence"]
    assert stakeholder_client.get(f"/api/v1/cuad/leaderboard/?{q}").json()["verdict"] == verdict
    page = stakeholder_client.get(f"/cuad/scorecard/leaderboard/?{q}").content.decode()
    assert 'data-testid="verdict"' in page and escape(verdict["sentence"]) in page
    assert page.index('data-testid="verdict"') < page.index('data-testid="standings"')
    rows = list(csv.DictReader(io.StringIO(stakeholder_client.get(f"/cuad/scorecard/leaderboard/leaderboard.csv?{q}")
                                           .content.decode())))
    assert (rows[0]["kind"], rows[0]["note"]) == ("verdict", verdict["sentence"])


def test_two_contracts_give_a_board_with_no_interval_no_p_value_and_a_verdict_that_says_why():
    tables = _random_tables(np.random.default_rng(5), runs=3, contracts=2, categories=3)
    board = board_grade(tables, Thresholds(), replicates=500, seed=1)
    assert all(not p.f1.has_bounds and math.isnan(p.p_value) and math.isnan(p.p_adjusted) for p in board.pairs)
    assert all(not s.overall.f1.has_bounds for s in board.standings)
    verdict = board_verdict(board, names=["a", "b", "c"])
    assert verdict.kind == "too few units"
    assert verdict.sentence.startswith("2 contracts: too few for an interval or a p-value (at least 3 needed)")
