"""Contract texts are stored exactly, and compressed with lz4 on a PostgreSQL server that has it."""

from __future__ import annotations

import random

import pytest
from django.db import DatabaseError, connection, transaction

from grading.dataset.models import Contract, CuadDataset

pytestmark = pytest.mark.django_db


def server_has_lz4() -> bool:
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL default_toast_compression = 'lz4'")
        return True
    except DatabaseError:
        return False


def test_a_long_contract_text_reads_back_exactly_and_is_lz4_compressed_on_postgresql():
    rng = random.Random(3)
    words = ["Licensee", "shall", "indemnify", "the", "Licensor", "§", "Dé", "½", "\n", "—", "royalties"]
    text = " ".join(rng.choice(words) for _ in range(40_000))  # well past the TOAST threshold
    dataset = CuadDataset.objects.create(sha256="0" * 64, source_name="t.json", version="v", n_contracts=1,
                                         n_spans=0)
    contract = Contract.objects.create(dataset=dataset, title="LONG", position=0, text=text, length=len(text))
    assert Contract.objects.get(pk=contract.pk).text == text
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_column_compression(text) FROM grading_contract WHERE id = %s", [contract.pk])
            method = cursor.fetchone()[0]
        assert method == ("lz4" if server_has_lz4() else "pglz")
    else:
        assert connection.vendor == "sqlite"  # SQLite stores text as it is: the migration changes nothing
