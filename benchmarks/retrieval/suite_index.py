"""The BM25 index of a suite: exactly the provisions of its pinned snapshots (configuration bm25-v1).

The documents, their ids and their tie order come from the provisions' text and citations
only, never from database row ids or from what else is imported, so the same suite gives
the same index, candidates and scores on SQLite and PostgreSQL (``bm25.py`` is the engine).
Indexes are cached per (configuration hash, snapshot set): in memory, and on disk under
``VAR_DIR/bm25`` so a new process does not rebuild them.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path

from django.conf import settings

from benchmarks.corpus.models import Provision, SourceSnapshot
from benchmarks.retrieval import bm25, language_models
from benchmarks.retrieval.bm25_cache import IndexCache
from benchmarks.suites.models import Suite

ENGINE = "bm25s"  # recorded as RetrievalRun.engine: the same on every database
DOCUMENT_RULE = (
    "bm25-documents-v1: every provision of the suite's pinned snapshots (repealed ones too); "
    "heading = Provision.heading, body = Provision.body; doc_id = Provision.docid; "
    "sort_key = citation, TAB, variant zero-padded to 5 digits"
)

_cache: IndexCache | None = None
_cache_lock = threading.Lock()


def index_cache() -> IndexCache:
    """The process-wide index cache, stored under ``settings.VAR_DIR / "bm25"``."""
    global _cache
    with _cache_lock:
        if _cache is None:
            _cache = IndexCache(max_entries=8, directory=Path(settings.VAR_DIR) / "bm25")
        return _cache


def provision_sort_key(citation: str, variant: int) -> str:
    """Tie order of a provision: its citation, then its variant (a TAB sorts below any citation character)."""
    return f"{citation}\t{variant:05d}"


def provision_document(provision: Provision) -> bm25.Document:
    return bm25.Document(doc_id=provision.docid, heading=provision.heading, body=provision.body,
                         sort_key=provision_sort_key(provision.citation, provision.variant))


def snapshot_documents(snapshot_ids: list[int]) -> Iterator[bm25.Document]:
    provisions = (Provision.objects.filter(snapshot_id__in=snapshot_ids)
                  .only("citation", "variant", "heading", "body").order_by("citation", "variant"))
    for provision in provisions.iterator(chunk_size=2000):
        yield provision_document(provision)


def snapshot_key(snapshots: list[SourceSnapshot]) -> str:
    """Cache key of the documents of these snapshots: each one's sha256 with the parser that read it
    (and the companion file an HRS volume was parsed with), sorted, plus the document rule."""
    parts = [f"{s.sha256}:{s.parser_name}:{s.parser_version}:{s.companion.sha256 if s.companion else ''}"
             for s in snapshots]
    return bm25.snapshot_set_key(parts, rule=DOCUMENT_RULE)


def suite_index(*, suite: Suite, config: bm25.Bm25Config = bm25.DEFAULT_CONFIG,
                cache: IndexCache | None = None) -> bm25.Bm25Index:
    """The BM25 index of the suite's pinned snapshots (built on the first request, then cached)."""
    snapshots = list(suite.snapshots.select_related("companion").order_by("id"))
    if not snapshots:
        raise ValueError(f"suite {suite} pins no corpus snapshot: nothing to index")
    ids = [s.pk for s in snapshots]
    return (cache or index_cache()).get_or_build(config, snapshot_key(snapshots),
                                                 lambda: snapshot_documents(ids))


_stats: OrderedDict[tuple[str, str], language_models.TermStats] = OrderedDict()
_STATS_ENTRIES = 4


def suite_term_stats(*, suite: Suite, config: bm25.Bm25Config = bm25.DEFAULT_CONFIG) -> language_models.TermStats:
    """Term frequencies of the same documents as ``suite_index`` (for rm3-v1 and qld-v1); cached in memory.

    Built in about a second for a statute corpus; a new process builds them again (they are cheap beside
    the runs they serve, and the documents, not the cache, decide the numbers)."""
    snapshots = list(suite.snapshots.select_related("companion").order_by("id"))
    if not snapshots:
        raise ValueError(f"suite {suite} pins no corpus snapshot: nothing to index")
    key = (config.config_hash(), snapshot_key(snapshots))
    with _cache_lock:
        found = _stats.get(key)
        if found is not None:
            _stats.move_to_end(key)
            return found
    ids = [s.pk for s in snapshots]
    stats = language_models.term_stats_build(snapshot_documents(ids), config)
    with _cache_lock:
        _stats[key] = stats
        while len(_stats) > _STATS_ENTRIES:
            _stats.popitem(last=False)
    return stats


def index_detail(index: bm25.Bm25Index, *, suite: Suite) -> dict:
    """What a run records of its index: every ranking choice, library versions, and the document set."""
    snapshots = sorted(suite.snapshots.values_list("sha256", flat=True))
    config = index.config
    versions = ", ".join(f"{name} {version}" for name, version in bm25.library_versions().items())
    ranking = (f"BM25 {config.variant} k1={config.k1} b={config.b} over the suite's {len(index)} provisions, "
               f"heading x{config.heading_repeat}, stop words {config.stopwords}, stemmer {config.stemmer} "
               f"({versions})")
    return {**index.detail(), "engine": ENGINE, "ranking": ranking, "document_rule": DOCUMENT_RULE,
            "snapshot_sha256s": snapshots}
