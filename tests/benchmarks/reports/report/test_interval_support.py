"""Done-when of the minimum-units rule: one-, two- and many-family splits through every statute page and export.

One family per split (the issue's 6-query suite) and two families per split print no interval and no p-value
anywhere: report page, JSON and API, leaderboard page, JSON, CSV and API, and ``relevance_metrics`` by both of
its paths; they say why in words. Twelve families per split give intervals that agree with
``scipy.stats.bootstrap`` (paired, percentile) on the per-query values the leaderboard exports.
"""

from __future__ import annotations

import csv
import io
import json
import re

import numpy as np
import pytest
from django.core.management import call_command
from scipy import stats

from benchmarks.suites.workbench import split_unit_warnings
from scoring.ir import trec_cli
from tests.benchmarks.reports.leaderboard.test_leaderboard import _rerank, _targets_first
from tests.benchmarks.reports.report.test_report_pages import _stored_report_inputs

REPLICATES, SEED = 1000, 7
QS = f"?replicates={REPLICATES}&seed={SEED}"
BOUNDS = re.compile(r"\[[+-]?\d\.\d{3,4}, [+-]?\d\.\d{3,4}\]")  # "[0.333, 0.667]" as the pages print an interval


def _world(families_per_split: int, queries_per_split: int):
    families = ([{"id": f"dev-{k:02d}", "split": "dev"} for k in range(families_per_split)]
                + [{"id": f"ho-{k:02d}", "split": "heldout"} for k in range(families_per_split)])
    family_of_query = [(i // queries_per_split) * families_per_split + (i % queries_per_split) % families_per_split
                       for i in range(2 * queries_per_split)]
    stored = _stored_report_inputs(families=families, family_of_query=family_of_query,
                                   n_queries=2 * queries_per_split)
    stored["oracle"] = _rerank(stored["run"], _targets_first, model="oracle-ish")
    return stored


def _walk(document):
    """Every dict in a JSON document."""
    if isinstance(document, dict):
        yield document
        for value in document.values():
            yield from _walk(value)
    elif isinstance(document, list):
        for value in document:
            yield from _walk(value)


def _no_bounds_and_no_p(document) -> None:
    for node in _walk(document):
        for key in ("low", "high", "p_value", "p_adjusted"):
            if key in node:
                assert node[key] is None, (key, node)
        if isinstance(node.get("ci"), list):
            assert all(x is None for x in node["ci"]), node
        if isinstance(node.get("ci"), dict):  # relevance_metrics: metric -> interval
            for interval in node["ci"].values():
                assert interval["low"] is None and interval["high"] is None, interval


def _leaderboard_url(world, suffix: str = "") -> str:
    return (f"/benchmarks/reports/leaderboard/{world['run'].pk}/{suffix}{QS}"
            f"&rerank={world['oracle'].pk}")  # complete: the verdict is about units, not about a failed run


def _command_outputs(client, world, tmp_path) -> tuple[str, dict]:
    """relevance_metrics on the leaderboard's exports of the held-out split (its qrels and families lines):
    Django's table and JSON, each checked equal to the fast path's."""
    per_query = csv.DictReader(io.StringIO(client.get(_leaderboard_url(world, "per-query.tsv")).content.decode()),
                               delimiter="\t")
    heldout = {r["qid"] for r in per_query if r["split"] == "heldout"}
    files = {"qrels.txt": "qrels", "families.txt": "families", "keyword.run": "keyword",
             f"rerank-{world['oracle'].pk}.run": "oracle"}
    paths = {}
    for export, name in files.items():
        paths[name] = tmp_path / export
        lines = client.get(_leaderboard_url(world, export)).content.decode().splitlines(keepends=True)
        if name in ("qrels", "families"):
            lines = [line for line in lines if line.split()[0] in heldout]
        paths[name].write_text("".join(lines))
    args = ["--qrels", str(paths["qrels"]), "--run", str(paths["keyword"]), "--run", str(paths["oracle"]),
            "--families", str(paths["families"]), "--replicates", str(REPLICATES), "--seed", str(SEED)]
    outputs = []
    for extra in ([], ["--json"]):
        django_out = io.StringIO()
        call_command("relevance_metrics", *args, *extra, stdout=django_out)
        fast_out = io.StringIO()
        assert trec_cli.run(trec_cli.parse_without_django([*args, *extra]), stdout=fast_out, stderr=io.StringIO()) == 0
        assert fast_out.getvalue() == django_out.getvalue()  # the fast path prints exactly what Django's does
        outputs.append(django_out.getvalue())
    return outputs[0], json.loads(outputs[1])


@pytest.mark.parametrize(("families", "reason"), [
    (1, "1 query family: too few for an interval or a p-value (at least 3 needed)"),
    (2, "2 query families: too few for an interval or a p-value (at least 3 needed)"),
])
def test_one_or_two_families_print_no_interval_and_no_p_value_anywhere(db, stakeholder_client, tmp_path, families,
                                                                       reason):
    world = _world(families, 3 if families == 1 else 4)
    assert f"Held-out split: {reason}" in " ".join(split_unit_warnings(json.loads(world["suite"].definition)))

    report = f"/benchmarks/reports/rerank/{world['oracle'].pk}/"
    page = stakeholder_client.get(report + QS).content.decode()
    assert not BOUNDS.search(page) and reason in page
    assert "CI " not in page.split('id="population"')[0]  # the quotable sentence quotes no interval
    _no_bounds_and_no_p(json.loads(stakeholder_client.get(report + "report.json" + QS).content))
    _no_bounds_and_no_p(stakeholder_client.get(f"/api/v1/benchmarks/reports/rerank/{world['oracle'].pk}/{QS}").json())

    page = stakeholder_client.get(_leaderboard_url(world)).content.decode()
    assert not BOUNDS.search(page) and reason[0].upper() + reason[1:] in page
    assert "p 0.000" not in page and "Holm p none" in page
    data = json.loads(stakeholder_client.get(_leaderboard_url(world, "leaderboard.json")).content)
    assert data["verdict"]["kind"] == "too few units" and reason[0].upper() + reason[1:] in data["verdict"]["sentence"]
    _no_bounds_and_no_p(data["splits"])
    api = stakeholder_client.get(_leaderboard_url(world).replace("/benchmarks/", "/api/v1/benchmarks/")).json()
    _no_bounds_and_no_p(api["splits"])
    assert api["verdict"] == data["verdict"]
    rows = list(csv.DictReader(io.StringIO(stakeholder_client.get(_leaderboard_url(world, "leaderboard.csv"))
                                           .content.decode())))
    assert rows[0]["kind"] == "verdict" and rows[0]["note"] == data["verdict"]["sentence"]
    for row in rows:
        assert (row["low"], row["high"], row["p_value"], row["p_adjusted"]) == ("", "", "", "")

    table, document = _command_outputs(stakeholder_client, world, tmp_path)
    assert not re.search(r"\[[+-]?\d\.\d{4}, [+-]?\d\.\d{4}\]", table)
    assert f"note: {reason}" in table
    assert "p none  Holm p none" in table
    _no_bounds_and_no_p({k: document[k] for k in ("runs", "differences", "pairs")})


def test_many_families_give_the_intervals_of_scipys_paired_percentile_bootstrap(db, stakeholder_client, tmp_path):
    world = _world(12, 12)  # one query per family: scipy's paired bootstrap resamples the same units
    assert split_unit_warnings(json.loads(world["suite"].definition)) == []
    data = json.loads(stakeholder_client.get(_leaderboard_url(world, "leaderboard.json")).content)
    oracle = f"rerank-{world['oracle'].pk}"
    per_query = list(csv.DictReader(io.StringIO(stakeholder_client.get(_leaderboard_url(world, "per-query.tsv"))
                                                .content.decode()), delimiter="\t"))
    heldout = next(s for s in data["splits"] if s["split"] == "heldout")
    assert heldout["units"]["support"] == "enough" and heldout["families"] == 12
    values = {(r["qid"], r["system"]): float(r["Hit@5"]) for r in per_query if r["split"] == "heldout"}
    qids = sorted({qid for qid, _ in values})  # the family bootstrap numbers families in sorted order
    families = {r["qid"]: r["family"] for r in per_query}
    assert sorted(families[q] for q in qids) == [families[q] for q in qids]
    a = np.array([values[q, oracle] for q in qids])
    b = np.array([values[q, "keyword"] for q in qids])
    reference = stats.bootstrap((a, b), lambda x, y, axis=-1: x.mean(axis) - y.mean(axis), paired=True,
                                vectorized=True, n_resamples=REPLICATES, method="percentile",
                                rng=np.random.default_rng(SEED)).confidence_interval
    pair = next(p for p in heldout["pairs"] if p["metric"] == "Hit@5" and p["a"] == oracle and p["b"] == "keyword")
    assert pair["ci"] == pytest.approx([reference.low, reference.high], abs=1e-6)
    assert pair["difference"]["note"] == "" and pair["p_value"] is not None

    page = stakeholder_client.get(_leaderboard_url(world)).content.decode()
    assert f"[{reference.low:+.3f}, {reference.high:+.3f}]" in page
    _, document = _command_outputs(stakeholder_client, world, tmp_path)
    assert document["units"]["support"] == "enough"
