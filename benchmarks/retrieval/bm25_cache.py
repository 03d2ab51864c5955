"""BM25 indexes kept between searches: an in-process LRU, optionally backed by a directory of saved indexes.

Split from ``bm25`` (the engine: analysis, index, search), which knows nothing of where an index is kept.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from pathlib import Path

import bm25s

from benchmarks.retrieval.bm25 import Bm25Config, Bm25Index, Document, build_index

_META = "meta.json"
_FORMAT = 1


class IndexCache:
    """Indexes by (config hash, document-set key): an in-process LRU, optionally backed by a directory.

    The key must change whenever the documents would (a document-set hash, or ``snapshot_set_key``);
    the documents are only read on a miss. A stored index is written to a temporary directory and
    renamed into place, so a reader never sees half of one.
    """

    def __init__(self, max_entries: int = 8, directory: str | Path | None = None) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self.max_entries = max_entries
        self.directory = Path(directory) if directory is not None else None
        self._entries: OrderedDict[tuple[str, str], Bm25Index] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = self.loads = self.builds = 0

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def get_or_build(self, config: Bm25Config, key: str,
                     documents: Callable[[], Iterable[Document]] | Iterable[Document]) -> Bm25Index:
        """The index for ``key`` under ``config``: from memory, else from the directory, else built."""
        cache_key = (config.config_hash(), key)
        # One lock for lookups and builds: builds are rare, and two threads building the same
        # index at once would only waste a core.
        with self._lock:
            found = self._entries.get(cache_key)
            if found is not None:
                self._entries.move_to_end(cache_key)
                self.hits += 1
                return found
            self.misses += 1
            index = self._load(config, cache_key)
            if index is None:
                index = build_index(documents() if callable(documents) else documents, config)
                self.builds += 1
                self._store(index, cache_key)
            else:
                self.loads += 1
            self._entries[cache_key] = index
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
            return index

    def _path(self, cache_key: tuple[str, str]) -> Path | None:
        if self.directory is None:
            return None
        key_hash = hashlib.sha256(cache_key[1].encode("utf-8")).hexdigest()
        return self.directory / f"bm25-{cache_key[0][:16]}-{key_hash[:32]}"

    def _load(self, config: Bm25Config, cache_key: tuple[str, str]) -> Bm25Index | None:
        path = self._path(cache_key)
        if path is None or not (path / _META).is_file():
            return None
        try:
            meta = json.loads((path / _META).read_text(encoding="utf-8"))
            if (meta.get("format"), meta.get("config_hash"), meta.get("key")) != (_FORMAT, *cache_key):
                return None
            retriever = bm25s.BM25.load(path, mmap=False, load_vocab=True, show_progress=False)
            return Bm25Index(config=config, doc_ids=tuple(meta["doc_ids"]), sort_keys=tuple(meta["sort_keys"]),
                             retriever=retriever, document_set_hash=meta["document_set_hash"],
                             average_length=float(meta["average_length"]))
        except (OSError, ValueError, KeyError, TypeError):
            # A damaged entry is rebuilt (and replaced) rather than trusted.
            return None

    def _store(self, index: Bm25Index, cache_key: tuple[str, str]) -> None:
        path = self._path(cache_key)
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=path.parent))
        try:
            index.retriever.save(staging, show_progress=False)
            meta = {"format": _FORMAT, "config_hash": cache_key[0], "key": cache_key[1],
                    "config": index.config.detail(), "doc_ids": list(index.doc_ids),
                    "sort_keys": list(index.sort_keys), "document_set_hash": index.document_set_hash,
                    "average_length": index.average_length}
            (staging / _META).write_text(json.dumps(meta, sort_keys=True), encoding="utf-8")
            if path.exists():  # a damaged copy (a sound one would have loaded)
                shutil.rmtree(path, ignore_errors=True)
            # Fails if another process renamed its copy into place first: theirs is as good.
            with contextlib.suppress(OSError):
                os.replace(staging, path)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
