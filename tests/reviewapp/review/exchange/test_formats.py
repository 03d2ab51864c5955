"""Exports validate against the tools' own import formats.

Argilla: its SDK (argilla 2.x, a dev dependency) reads our files exactly as ``Dataset.from_disk`` does
(``Settings.from_json``, ``Record.from_dict`` through ``JsonIO``, ``DatasetModel``), offline: its client is
pointed at a closed loopback port, so any call to a server would fail the test.

Label Studio: its SDK cannot be installed here without downgrading numpy (opencv-python-headless pins numpy<2.3),
so the tasks are checked against a JSON Schema written from its published format (labelstud.io/guide/task_format,
/guide/predictions), and the labeling config by the rules its SDK applies (``LabelInterface``: unique names,
every ``toName`` names an object tag, every ``$variable`` present in each task's data, every result's choice
one of its ``Choices``).
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from xml.etree import ElementTree

import httpx
import jsonschema
import pytest

from reviewapp.review.exchange import argilla as argilla_export
from reviewapp.review.exchange import labelstudio
from reviewapp.review.kinds import kind_get
from tests.reviewapp.review.conftest import assert_blind, make_items, make_pool
from tests.reviewapp.review.exchange.conftest import judge_pool

LABEL_STUDIO_TASKS_SCHEMA = json.loads((Path(__file__).parent / "label_studio_tasks.schema.json").read_text())


@pytest.fixture
def rg():
    """The Argilla SDK with an offline default client (no server: a closed loopback port)."""
    import argilla
    from argilla._api._client import ArgillaAPI

    client = object.__new__(argilla.Argilla)
    client.api_url, client.api_key = "http://127.0.0.1:9", "offline"
    client.http_client = httpx.Client(base_url=client.api_url, timeout=1)
    client.api = ArgillaAPI(client.http_client)
    previous = argilla.Argilla._default_client
    argilla.Argilla._set_default(client)
    yield argilla
    argilla.Argilla._default_client = previous
    client.http_client.close()


def _unzip(content: bytes, into: Path) -> Path:
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        archive.extractall(into)
    return into


@pytest.mark.django_db
@pytest.mark.parametrize("kind", ["passage", "target", "clause"])
def test_the_argilla_export_is_read_by_argillas_own_from_disk_steps(rg, tmp_path, kind, reviewer_user,
                                                                    reviewer2_user):
    from argilla.datasets._io._disk import DiskImportExportMixin
    from argilla.records._io._json import JsonIO

    pool = make_pool(reviewers=[reviewer_user, reviewer2_user], kind=kind, items=make_items(n_queries=2, per_query=3))
    if kind == "passage":
        judge_pool(pool, [reviewer_user, reviewer2_user])
    folder = _unzip(argilla_export.argilla_zip(pool=pool), tmp_path)
    dataset_path, settings_path, records_path = DiskImportExportMixin._define_child_paths(path=folder)
    dataset_model = DiskImportExportMixin._load_dataset_model(path=dataset_path)
    settings = rg.Settings.from_json(path=settings_path)
    settings.validate()
    records = JsonIO._records_from_json(path=records_path)

    ours = json.loads(settings_path.read_text())
    # The SDK writes back exactly what we wrote: its own shape (compared as lines, for a readable difference).
    assert (json.dumps(settings.serialize(), sort_keys=True, indent=1).splitlines()
            == json.dumps(ours, sort_keys=True, indent=1).splitlines())
    assert dataset_model.name == f"pool-{pool.public_id}"
    assert len(records) == pool.items.count()
    questions = {q.name: q for q in settings.questions}
    fields = {f.name: f for f in settings.fields}
    assert set(questions) == set(kind_get(kind).grade_type_keys)
    for record, raw in zip(records, json.loads(records_path.read_text()), strict=True):
        assert record.to_dict()["fields"] == raw["fields"]
        assert set(record.fields) <= set(fields)
        assert all(name in record.fields for name, field in fields.items() if field.required)
        assert set(record.metadata) == {m.name for m in settings.metadata}
        for response in record.responses:
            assert response.status == "submitted"
            assert response.value in questions[response.question_name].labels
    assert_blind(settings_path.read_text() + records_path.read_text(), where="the Argilla export")


@pytest.mark.django_db
def test_the_argilla_export_carries_every_complete_current_judgment_as_submitted_responses(rg, judged_pool):
    from reviewapp.review.agreement.judgments import pool_completed_judgments

    records = [rg.Record.from_dict(raw) for raw in argilla_export.argilla_records(pool=judged_pool)]
    exported = sorted((r.id, resp.question_name, resp.value) for r in records for resp in r.responses)
    expected = sorted((j.item_id, gt, str(v)) for j in pool_completed_judgments(pool=judged_pool)
                      for gt, v in j.grades.items())
    assert exported == expected and len(expected) > 15


def _config_objects_and_choices(config: str) -> tuple[set[str], dict[str, tuple[str, set[str]]], list[str]]:
    root = ElementTree.fromstring(config)  # noqa: S314 (our own export, made by the test)
    assert root.tag == "View"
    names = [el.get("name") for el in root.iter() if el.get("name") is not None]
    assert len(names) == len(set(names)), "Label Studio refuses a config whose names repeat"
    objects = {el.get("name") for el in root.iter("Text")}
    variables = [el.get("value", "")[1:] for el in root.iter("Text")]
    assert all(el.get("value", "").startswith("$") for el in root.iter("Text"))
    choices = {}
    for tag in root.iter("Choices"):
        assert tag.get("toName") in objects, "every toName names an object tag"
        assert tag.get("choice") in ("single", "single-radio", "multiple")
        choices[tag.get("name")] = (tag.get("toName"), {c.get("value") for c in tag.iter("Choice")})
    return objects, choices, variables


@pytest.mark.django_db
@pytest.mark.parametrize("kind", ["passage", "target", "clause"])
def test_label_studio_tasks_and_config_validate_against_its_published_format(kind, reviewer_user, reviewer2_user):
    pool = make_pool(reviewers=[reviewer_user, reviewer2_user], kind=kind, items=make_items(n_queries=2, per_query=3))
    if kind == "passage":
        judge_pool(pool, [reviewer_user, reviewer2_user])
    tasks = labelstudio.labelstudio_tasks(pool=pool)
    config = labelstudio.labelstudio_config(pool=pool)
    jsonschema.validate(tasks, LABEL_STUDIO_TASKS_SCHEMA)
    _, choices, variables = _config_objects_and_choices(config)
    assert set(choices) == set(kind_get(kind).grade_type_keys)
    for task in tasks:
        assert all(isinstance(task["data"].get(v), str) for v in variables)
        for annotation in task["annotations"]:
            ids = [r["id"] for r in annotation["result"]]
            assert len(ids) == len(set(ids))
            for result in annotation["result"]:
                to_name, values = choices[result["from_name"]]
                assert result["to_name"] == to_name
                assert result["value"]["choices"][0] in values
    assert len(tasks) == pool.items.count()
    if kind == "passage":
        assert sum(len(t["annotations"]) for t in tasks) > 8
    assert_blind(json.dumps(tasks) + config, where="the Label Studio export")


def test_the_schema_refuses_what_label_studio_refuses():
    """The hand-written schema is not vacuous: tasks Label Studio's import would refuse fail it."""
    good = {"data": {"query": "q"}, "annotations": [{"result": [
        {"from_name": "section", "to_name": "query", "type": "choices", "value": {"choices": ["2"]}}]}]}
    jsonschema.validate([good], LABEL_STUDIO_TASKS_SCHEMA)
    bad = [
        {"annotations": []},  # no data
        {"data": "q"},  # data not an object
        {"data": {}, "annotations": [{"result": [{"from_name": "s", "type": "choices", "value": {}}]}]},
        {"data": {}, "annotations": [{"result": "2"}]},
        {"data": {}, "annotations": [{"completed_by": "rita", "result": []}]},  # a user id is an integer
    ]
    for task in bad:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate([task], LABEL_STUDIO_TASKS_SCHEMA)
