"""The local heuristic used by the rerank gives bit-identical probabilities on repeated runs.

Cause of the former drift (up to 4e-7): the cosines were a float32 matrix-vector product, and
OpenBLAS's sgemv blocks the rows by their count, so a candidate's cosine moved by one float32 ulp
with the number of other candidates in its request. The vectors themselves were already
identical (each text runs alone, unpadded); cosines are now summed row by row in float64.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from benchmarks.corpus.models import Passage
from reviewapp.providers.clients.local import LocalClient
from reviewapp.providers.local import embeddings
from reviewapp.providers.types import GradeSpec

QUESTION = "When must a physician or nurse report suspected abuse or neglect of a child, and to whom?"


def _distributions(client: LocalClient, items: list[str], batch: int) -> np.ndarray:
    rows = []
    for start in range(0, len(items), batch):
        spec = GradeSpec(system="", user="", query=QUESTION, items=tuple(items[start:start + batch]))
        prepared = client.prepare_grades(spec)
        parse = client.validate(prepared, client.send(prepared))
        rows += [grade.probs for grade in parse.grades]
    return np.array(rows, dtype=np.float64)


@pytest.fixture
def thirty_passages(nrs_imported):
    texts = list(Passage.objects.filter(provision__chapter="432B").order_by("provision__citation", "id")
                 .values_list("text", flat=True)[:30])
    assert len(texts) == 30
    return texts


def test_two_runs_over_the_same_30_candidates_give_bit_identical_distributions(thirty_passages, monkeypatch):
    results = []
    for batch in (30, 30, 7, 1, 4):
        # A fresh encoder each time: nothing comes from the first run's vector cache.
        monkeypatch.setattr(embeddings, "_encoder", embeddings.LocalEncoder())
        results.append(_distributions(LocalClient(), thirty_passages, batch))
    first = results[0]
    for other in results[1:]:
        assert first.tobytes() == other.tobytes()
    # Another order of the same candidates gives each the same distribution.
    order = list(range(30))
    random.Random(4).shuffle(order)
    shuffled = _distributions(LocalClient(), [thirty_passages[i] for i in order], 8)
    assert shuffled.tobytes() == first[order].tobytes()


def test_cosine_rows_do_not_depend_on_the_other_rows():
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((64, embeddings.DIMENSION)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    full = embeddings.cosine_rows(vectors[1:], vectors[0])
    for size in (1, 2, 3, 7, 16, 30):
        for start in range(1, 64, size):
            part = embeddings.cosine_rows(vectors[start:start + size], vectors[0])
            assert part.tobytes() == full[start - 1:start - 1 + size].tobytes()
