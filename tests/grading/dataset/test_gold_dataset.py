"""A firm's gold set in CUAD's layout, loaded as a dataset of its own: graded like CUAD, never CUAD's default."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from grading.dataset.cuad_file import CuadFileError
from grading.dataset.models import Category, CuadDataset
from grading.dataset.selectors import dataset_chosen, dataset_current, sample_default, sample_scope
from grading.dataset.services import CuadLoadError, dataset_load_gold
from grading.runs.models import ExtractionRun
from tests.grading.cuad_fixture import contracts, cuad_bytes

FIRM_ONLY = "Data Protection"
SHARED = ("Governing Law", "Anti-Assignment")


def firm_contracts() -> list[dict]:
    """Three of the fixture's contracts under the firm's own titles, with two CUAD categories and one of its own."""
    out = []
    for c in contracts()[:3]:
        title = c["title"].replace("AGREEMENT", "AGREEMENT (ACME)")
        text = c["context"] + " Personal data is processed under the data processing addendum."
        answers = {name: c["answers"][name] for name in SHARED}
        answers[FIRM_ONLY] = [(text.index("Personal data"), "Personal data is processed under the data processing "
                                                             "addendum.")]
        out.append({"title": title, "context": text, "answers": answers})
    return out


def firm_run(model: str) -> dict:
    """Every gold span of the firm set, plus one fabricated clause (so the figures are not all 1.0)."""
    items = [{"contract": c["title"], "category": category, "text": text}
             for c in firm_contracts() for category, answers in c["answers"].items() for _, text in answers]
    items.append({"contract": firm_contracts()[0]["title"], "category": "Governing Law",
                  "text": "The purple submarine pays royalties in saffron."})
    return {"model": model, "extractions": items}


@pytest.fixture
def gold(loaded) -> CuadDataset:
    return dataset_load_gold(cuad_json=json.loads(cuad_bytes(firm_contracts())), name="Acme gold set v2",
                             contract_set_id=7, gold_set_version=2)


def _pages(client) -> dict[str, bytes]:
    return {path: client.get(path).content for path in (
        "/cuad/overview.json", "/cuad/runs/runs.json", "/cuad/scorecard/scorecard.json",
        "/cuad/scorecard/leaderboard/leaderboard.json", "/cuad/dataset/dataset.json")}


def test_loading_a_gold_set_leaves_every_cuad_default_page_as_it_was(loaded, stakeholder_client):
    descriptions = dict(Category.objects.values_list("name", "description"))
    before = _pages(stakeholder_client)
    assert all(json.loads(body) for body in before.values())
    gold = dataset_load_gold(cuad_json=cuad_bytes(firm_contracts()), name="Acme gold set v2")
    assert gold.loaded_at > loaded.dataset.loaded_at  # the newest dataset, and still not the default
    assert dataset_current() == loaded.dataset
    assert _pages(stakeholder_client) == before
    shared = {name: text for name, text in dict(Category.objects.values_list("name", "description")).items()
              if name in descriptions}
    assert shared == descriptions  # CUAD's descriptions are not rewritten by the firm's questions


def test_a_gold_set_knows_what_it_is_and_its_sample_is_all_its_contracts(gold):
    assert gold.origin == CuadDataset.Origin.GOLD and gold.is_gold
    assert (gold.label, gold.contract_set_id, gold.gold_set_version) == ("Acme gold set v2", 7, 2)
    assert "Acme gold set v2" in gold.name
    sample = sample_default(dataset=gold)
    assert sample is not None and len(sample_scope(sample=sample)) == gold.n_contracts == 3
    assert {c.name for c in gold.categories.all()} == {*SHARED, FIRM_ONLY}
    again = dataset_load_gold(cuad_json=json.loads(cuad_bytes(firm_contracts())), name="another name")
    assert again == gold and CuadDataset.objects.filter(origin="gold").count() == 1


def test_a_gold_set_with_a_wrong_offset_or_cuads_own_bytes_is_refused(loaded):
    broken = firm_contracts()
    broken[0]["answers"]["Governing Law"] = [(3, "Nevada")]
    with pytest.raises(CuadLoadError, match="Governing Law"):
        dataset_load_gold(cuad_json=cuad_bytes(broken), name="broken")
    with pytest.raises(CuadLoadError, match="already loaded"):
        dataset_load_gold(cuad_json=cuad_bytes(), name="CUAD again")
    with pytest.raises(CuadFileError):
        dataset_load_gold(cuad_json=b"not json", name="junk")
    assert not CuadDataset.objects.filter(origin="gold").exists()


def test_a_run_pasted_on_the_gold_set_is_graded_on_it_and_shown_on_every_page(gold, admin_client_,
                                                                                stakeholder_client):
    page = admin_client_.get(f"/cuad/runs/?dataset={gold.pk}").content.decode()
    assert 'data-testid="dataset-select"' in page and "Acme gold set v2" in page
    response = admin_client_.post("/cuad/runs/", {"dataset": gold.pk, "run_text": json.dumps(firm_run("firm-m"))})
    assert response.status_code == 302
    run = ExtractionRun.objects.get(model="firm-m")
    assert run.dataset == gold
    card = stakeholder_client.get(f"/cuad/scorecard/scorecard.json?run={run.pk}").json()
    assert card["dataset"] == {"id": gold.pk, "name": gold.name, "origin": "gold"}
    overall = card  # the headline figures are the top level of grade_cuad's --json shape
    assert overall["counts"]["spans"] == 8 and overall["counts"]["extractions"] == 9
    assert overall["counts"]["hallucinated"] == 1 and overall["counts"]["correct"] == 8
    assert set(card["per_category"]) == {*SHARED, FIRM_ONLY}
    html = stakeholder_client.get(f"/cuad/scorecard/?run={run.pk}").content.decode()
    assert 'data-testid="population-dataset"' in html
    explorer = stakeholder_client.get(f"/cuad/scorecard/explorer/?run={run.pk}&type={FIRM_ONLY}")
    assert explorer.status_code == 200 and "Personal data is processed" in explorer.content.decode()
    board = stakeholder_client.get(f"/cuad/scorecard/leaderboard/leaderboard.json?dataset={gold.pk}")
    assert board.status_code == 200
    assert "firm-m" in board.content.decode() and "gold-model" not in board.content.decode()
    assert "of Acme gold set v2 (firm gold set) that every run attempted" in board.content.decode()
    assert stakeholder_client.get(f"/cuad/overview.json?dataset={gold.pk}").json()["runs"][0]["id"] == run.pk
    assert stakeholder_client.get("/cuad/scorecard/leaderboard/?dataset=999999").status_code == 404


def test_a_board_never_mixes_cuad_with_a_gold_set(loaded, gold, stakeholder_client):
    from grading.runs.services import extraction_run_import

    run, _ = extraction_run_import(dataset=gold, raw=json.dumps(firm_run("firm-m")))
    for export in ("scorecard/scorecard", "scorecard/leaderboard/leaderboard"):
        response = stakeholder_client.get(f"/cuad/{export}.json?run={run.pk}&run={loaded.gold.pk}")
        assert response.status_code == 400
        assert "another dataset than the sample" in response.content.decode()


def test_the_scorecard_puts_the_same_systems_cuad_figures_beside_for_shared_types_only(loaded, gold,
                                                                                     stakeholder_client):
    from grading.runs.services import extraction_run_import

    run, _ = extraction_run_import(dataset=gold, raw=json.dumps(firm_run(loaded.gold.model)))
    beside = stakeholder_client.get(f"/cuad/scorecard/scorecard.json?run={run.pk}").json()["beside_cuad"]
    assert beside["cuad_run"] == loaded.gold.pk
    assert sorted(r["category"] for r in beside["rows"]) == ["Anti-Assignment", "Governing Law"]
    law = next(r for r in beside["rows"] if r["category"] == "Governing Law")
    assert law["cuad_f1"] == 1.0 and law["firm_f1"] < 1.0  # the firm run has one fabricated Governing Law clause
    assert "Acme gold set v2" in beside["firm_population"] and "CUAD" in beside["cuad_population"]
    html = stakeholder_client.get(f"/cuad/scorecard/?run={run.pk}").content.decode()
    assert 'data-testid="beside-cuad"' in html
    other, _ = extraction_run_import(dataset=gold, raw=json.dumps(firm_run("never-on-cuad")))
    assert "beside_cuad" not in stakeholder_client.get(f"/cuad/scorecard/scorecard.json?run={other.pk}").json()


def test_commands_take_the_gold_set_with_dataset(gold, tmp_path, capsys):
    path = tmp_path / "firm-run.json"
    path.write_text(json.dumps(firm_run("cli-model")))
    call_command("grade_cuad", "--run", str(path), "--dataset", str(gold.pk), "--json")
    card = json.loads(capsys.readouterr().out)
    assert card["counts"]["spans"] == 8 and set(card["per_category"]) == {*SHARED, FIRM_ONLY}
    assert ExtractionRun.objects.get(model="cli-model").dataset == gold
    with pytest.raises(CommandError, match="ACME"):  # no --dataset: CUAD's, which has none of these contracts
        call_command("grade_cuad", "--run", str(path), "--json")


def test_the_chosen_dataset_comes_from_the_query_the_run_or_the_default(loaded, gold):
    from django.http import QueryDict

    from grading.dataset.selectors import ScopeError

    run = ExtractionRun.objects.create(dataset=gold, model="m", content_sha256="x", source_format="json",
                                       n_extractions=0)
    assert dataset_chosen(QueryDict("")) == loaded.dataset
    assert dataset_chosen(QueryDict(f"dataset={gold.pk}")) == gold
    assert dataset_chosen(QueryDict(f"run={run.pk}")) == gold
    with pytest.raises(ScopeError):
        dataset_chosen(QueryDict("dataset=abc"))
