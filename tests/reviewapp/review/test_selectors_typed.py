"""The review engine's selectors that the jobs call return typed values, never its models or querysets.

A model in a job's hands lets the job query through it (``pool.items.all()``) and bypass the engine's reads; the
jobs get frozen dataclasses (``PoolRef``, ``LabelSourceSummary``, ...) instead. Read from the annotations: every
public function of ``reviewapp/review/**/selectors.py`` that ``benchmarks`` or ``grading`` imports.
"""

import ast
import dataclasses
import importlib
import inspect
import typing
from pathlib import Path

import pytest
from django.db.models import Manager, Model, QuerySet

from reviewapp.review.exchange.selectors import LabelSourceSummary, label_source_find
from reviewapp.review.exchange.services import label_source_import
from reviewapp.review.pools.refs import PoolRef
from reviewapp.review.pools.selectors import pool_find, pool_get, pool_item_keys, reviewer_pools

ROOT = Path(__file__).resolve().parents[3]
JOBS = ("benchmarks", "grading")

# Each exemption says why it still hands over a model: shrink this list, never grow it.
STILL_MODELS = {
    # The judgment save functions (``judgment_submit``, ``adjudication_record``) take the item's model.
    "reviewapp.review.pools.selectors.pool_item",
}


def _selectors_the_jobs_import() -> set[tuple[str, str]]:
    found = set()
    for app in JOBS:
        for path in (ROOT / app).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("reviewapp.review.")
                        and node.module.endswith(".selectors")):
                    found |= {(node.module, alias.name) for alias in node.names}
    return found


def _leaves(hint: object) -> list[object]:
    args = typing.get_args(hint)
    origin = typing.get_origin(hint)
    return ([origin] if isinstance(origin, type) else []) + [leaf for arg in args for leaf in _leaves(arg)] \
        if args else [hint]


def _engine_model_or_queryset(leaf: object) -> bool:
    if not isinstance(leaf, type):
        return False
    if issubclass(leaf, (QuerySet, Manager)):
        return True
    # The auth user is the project's, not the review engine's: the jobs hand reviewers back to assign them.
    return issubclass(leaf, Model) and leaf.__module__.startswith("reviewapp.review.")


@pytest.mark.house
def test_the_jobs_import_the_pool_selectors():
    imported = _selectors_the_jobs_import()
    assert {("reviewapp.review.pools.selectors", name) for name in ("pool_find", "pool_get")} <= imported


@pytest.mark.house
def test_every_engine_selector_a_job_calls_returns_no_model_or_queryset():
    offenders = []
    for module_name, name in sorted(_selectors_the_jobs_import()):
        value = getattr(importlib.import_module(module_name), name)
        if not inspect.isfunction(value) or f"{module_name}.{name}" in STILL_MODELS:
            continue
        returned = typing.get_type_hints(value).get("return")
        assert returned is not None, f"{module_name}.{name}: no return annotation"
        bad = [leaf for leaf in _leaves(returned) if _engine_model_or_queryset(leaf)]
        if bad:
            offenders.append(f"{module_name}.{name} -> {returned}")
    assert offenders == []


@pytest.mark.house
def test_the_exemptions_are_still_needed():
    imported = {f"{module}.{name}" for module, name in _selectors_the_jobs_import()}
    assert imported >= STILL_MODELS, "an exempted selector is no longer imported by a job: drop it from the list"


@pytest.mark.house
def test_the_leaf_walk_finds_a_model_inside_a_container():
    from reviewapp.review.pools.models import ReviewPool  # local import: the model named only by this check

    assert any(_engine_model_or_queryset(leaf) for leaf in _leaves(list[ReviewPool] | None))
    assert any(_engine_model_or_queryset(leaf) for leaf in _leaves(QuerySet[ReviewPool]))
    assert not any(_engine_model_or_queryset(leaf) for leaf in _leaves(list[PoolRef]))


def test_a_job_finding_its_pool_gets_a_frozen_ref(pool, reviewer_user):
    ref = pool_get(public_id=pool.public_id)
    assert isinstance(ref, PoolRef) and ref.external_ref == pool.external_ref and ref.kind == pool.kind
    assert pool_find(external_ref={"run": "RUNMARK_42"}) == [ref] == reviewer_pools(reviewer=reviewer_user)
    assert len(pool_item_keys(pool=ref)) == pool.items.count() == 12
    assert hash(ref) == hash(pool_get(public_id=pool.public_id))
    with pytest.raises(dataclasses.FrozenInstanceError):
        ref.name = "renamed"  # type: ignore[misc]


def test_a_job_finding_a_label_source_gets_its_summary(db):
    labels = [{"query_id": "q1", "doc_id": f"d{n}", "grade_type": "section", "value": 2} for n in range(3)]
    label_source_import(name="nominated targets", labels=labels)
    found = label_source_find(name="nominated targets")
    assert isinstance(found, LabelSourceSummary)
    assert (found.labels, found.grade_types, found.provisional) == (3, ["section"], True)
    assert label_source_find(name="no such source") is None
