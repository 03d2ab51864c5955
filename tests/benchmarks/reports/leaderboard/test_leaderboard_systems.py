"""Three offline statute systems on one leaderboard (MiniLM rerank, its RRF hybrid with BM25, RM3/QL first stages)
and the suite's retrieval configurations compared on known targets, against independent references."""

from __future__ import annotations

import random

import ir_measures
import numpy as np
import pytest
from django.utils.html import escape
from ir_measures import RR, Success

from benchmarks.reports.leaderboard import COMPARISONS_NOTE, COVERAGE, KEYWORD, hybrid_order, known_targets_compute
from benchmarks.reports.models import HeldoutExposure
from benchmarks.reports.selectors import leaderboard_build, leaderboard_inputs_load
from reviewapp.providers.local.embeddings import MODEL_ID
from scoring.ir.fusion import rrf_order
from tests.benchmarks.conftest import freeze_suite, import_synthetic
from tests.benchmarks.reports.leaderboard.test_leaderboard import _rerank
from tests.benchmarks.reports.report.test_report_pages import FAMILIES, FAMILY_OF_QUERY, WORDS

QS = "?replicates=1000&seed=7"
FIRST_STAGES = ("bm25-v1", "rm3-v1", "qld-v1", "keyword-v1")


@pytest.fixture
def world(db, monkeypatch):
    from benchmarks.retrieval import suite_index
    from benchmarks.retrieval.bm25_cache import IndexCache
    from benchmarks.retrieval.services import retrieval_run_create

    monkeypatch.setattr(suite_index, "_cache", IndexCache(max_entries=4))
    rng = random.Random(11)
    rows = [(f"999.{100 + i * 10}", " ".join(rng.sample(WORDS, 3)).capitalize() + ".",
             " ".join(rng.choice(WORDS) for _ in range(40)) + ".") for i in range(60)]
    import_synthetic(rows, key="systems-synthetic.html")
    queries = [{"id": f"q{i}", "kind": "ranking", "split": FAMILIES[FAMILY_OF_QUERY[i]]["split"],
                "family": FAMILIES[FAMILY_OF_QUERY[i]]["id"],
                "text": f"When does the {WORDS[i]} {WORDS[i + 5]} need {WORDS[i + 9]}?",
                "targets": [f"NRS {rows[i][0]}", f"NRS {rows[i + 20][0]}"]} for i in range(8)]
    suite = freeze_suite(queries, name="systems-synthetic", families=FAMILIES)
    runs = {name: retrieval_run_create(suite=suite, configuration=name, k=30) for name in FIRST_STAGES}
    assert all(r.status == "done" for r in runs.values()), [r.error for r in runs.values()]
    # The bundled model's id: its runs get their BM25 hybrid by default. Grades from a seeded rule, not the model.
    minilm = _rerank(runs["bm25-v1"], lambda cand, targets: round(rng.random(), 3), model=MODEL_ID)
    return {"suite": suite, "runs": runs, "minilm": minilm}


def test_the_leaderboard_shows_three_systems_and_the_configurations_on_known_targets(stakeholder_client, world):
    run, minilm = world["runs"]["bm25-v1"], world["minilm"]
    before = HeldoutExposure.objects.count()
    html = stakeholder_client.get(f"/benchmarks/reports/leaderboard/{run.pk}/{QS}").content.decode()
    for key in (KEYWORD, f"rerank-{minilm.pk}", f"hybrid-{minilm.pk}"):
        assert f'id="row-heldout-{key}"' in html
    hybrid = html.split(f'id="system-hybrid-{minilm.pk}"')[1].split("</li>")[0]
    assert "reciprocal rank fusion (RRF, k=60; Cormack, Clarke" in hybrid and MODEL_ID in hybrid
    assert 'id="leaderboard-verdict"' in html and 'id="known-targets-verdict"' in html
    assert "Verdict on known targets.</strong> " in html
    for name, other in world["runs"].items():
        assert f'id="known-row-heldout-{name}-run-{other.pk}"' in html
        listed = html.split(f'id="first-stage-{name}-run-{other.pk}"')[1].split("</li>")[0]
        assert f"retrieval #{other.pk}: {name}" in listed
    rm3 = html.split(f'id="first-stage-rm3-v1-run-{world["runs"]["rm3-v1"].pk}"')[1].split("</li>")[0]
    assert "RM3" in rm3 and "Lavrenko" in rm3 and "10 terms" in rm3
    assert "Zhai" in html.split(f'id="first-stage-qld-v1-run-{world["runs"]["qld-v1"].pk}"')[1].split("</li>")[0]
    assert escape(COMPARISONS_NOTE) in html and "never compared" not in html
    # keyword order, the rerank run, the hybrid, and the three other configurations: one ledger entry each.
    assert HeldoutExposure.objects.count() - before == 6
    configurations = [e.configuration for e in HeldoutExposure.objects.order_by("id")[before:]]
    assert sum(c["rerank"] is not None and c["rerank"].get("fusion") == "rrf-k60" for c in configurations) == 1
    assert {c["retrieval"]["configuration"] for c in configurations} == set(FIRST_STAGES)

    data = stakeholder_client.get(f"/benchmarks/reports/leaderboard/{run.pk}/leaderboard.json{QS}").json()
    hybrid_json = next(s for s in data["systems"] if s["key"] == f"hybrid-{minilm.pk}")
    assert hybrid_json["fusion"]["k"] == 60 and "Cormack" in hybrid_json["fusion"]["citation"]
    assert [s["configuration"] for s in data["known_targets"]["systems"]] == list(FIRST_STAGES)
    table = stakeholder_client.get(f"/benchmarks/reports/leaderboard/{run.pk}/leaderboard.csv{QS}").content.decode()
    assert "known-target difference" in table and "Anserini" in table
    index = stakeholder_client.get("/benchmarks/reports/leaderboard/").content.decode()
    assert "never compared" not in index and "known targets" in index


def test_hybrid_hidden_by_choice_and_refused_for_a_run_not_shown(stakeholder_client, world):
    run, minilm = world["runs"]["bm25-v1"], world["minilm"]
    html = stakeholder_client.get(f"/benchmarks/reports/leaderboard/{run.pk}/{QS}&hybrid=none").content.decode()
    assert f'id="row-heldout-hybrid-{minilm.pk}"' not in html and f'id="row-heldout-rerank-{minilm.pk}"' in html
    response = stakeholder_client.get(f"/benchmarks/reports/leaderboard/{run.pk}/{QS}&hybrid=999999")
    assert response.status_code == 400 and "hybrid=&#x27;999999&#x27;" in response.content.decode()


def test_the_hybrid_ranks_as_rrf_of_keyword_and_rerank_order_and_the_figures_match_ir_measures(world):
    run, minilm = world["runs"]["bm25-v1"], world["minilm"]
    board = leaderboard_build(run=run, reranks=[minilm], hybrids=[minilm], replicates=1000, seed=7)
    assert [s.key for s in board.systems] == [KEYWORD, f"rerank-{minilm.pk}", f"hybrid-{minilm.pk}"]
    entry = next(e for e in board.inputs.reranks if e.meta.fusion)
    qrels, run_rows = [], []
    for query in entry.queries:
        if query.kind != "ranking":
            continue
        keyword = [c.docid for c in sorted(query.candidates, key=lambda c: c.keyword_rank)]
        # The reference: the rerank order by P(useful), ties by keyword rank, fused by the few-line RRF.
        reranked = [c.docid for c in sorted(query.candidates, key=lambda c: (-(c.p_useful or -1), c.keyword_rank))]
        expected = rrf_order([keyword, reranked])
        assert [c.docid for c in hybrid_order(query.candidates)] == expected
        qrels += [ir_measures.Qrel(query.qid, d, 1) for d in query.targets]
        run_rows += [ir_measures.ScoredDoc(query.qid, d, float(len(expected) - i)) for i, d in enumerate(expected)]
    reference = {(m.query_id, str(m.measure)): m.value
                 for m in ir_measures.iter_calc([Success @ 5, RR], qrels, run_rows)}
    for q in board.queries:
        values = q.values[f"hybrid-{minilm.pk}"]
        assert values["Hit@5"] == reference.get((q.qid, "Success@5"), 0.0)
        assert values["RR"] == pytest.approx(reference.get((q.qid, "RR"), 0.0))


def test_configurations_on_known_targets_match_a_plain_reference(world):
    run = world["runs"]["bm25-v1"]
    inputs = leaderboard_inputs_load(run=run, reranks=[])
    known = known_targets_compute(inputs.first_stages, replicates=1000, seed=7)
    assert [s.retrieval.configuration for s in known.systems] == list(FIRST_STAGES)
    for split in known.splits:
        assert split.queries == 4 and split.families == 3
        for row, stage in zip(split.rows, inputs.first_stages, strict=True):
            queries = [q for q in stage.queries if q.kind == "ranking" and q.split == split.split]
            hit5, coverage = [], []
            for q in queries:
                ranked = [c.docid for c in sorted(q.candidates, key=lambda c: c.keyword_rank)]
                hit5.append(float(any(d in q.targets for d in ranked[:5])))
                cited = [any(d in ranked for d in versions) for _, versions in q.target_groups()]
                coverage.append(sum(cited) / len(cited))
            assert row.means["Hit@5"].estimate == pytest.approx(np.mean(hit5))
            assert row.means[COVERAGE].estimate == pytest.approx(np.mean(coverage))
        # Every pair once per metric, each difference the difference of the two means (paired, same queries).
        assert len(split.pairs_of("Hit@5")) == len(FIRST_STAGES) * (len(FIRST_STAGES) - 1) // 2
        means = {r.system.key: r.means for r in split.rows}
        for pair in split.pairs:
            assert pair.difference.estimate == pytest.approx(
                means[pair.a][pair.metric].estimate - means[pair.b][pair.metric].estimate)
            assert pair.p_adjusted >= pair.p_value or np.isnan(pair.p_value)
    assert known.verdict.sentence
