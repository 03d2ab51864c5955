"""Keyword retrieval configurations, and the two database engines of the engine-dependent ones.

The default configuration, ``bm25-v1``, is engine-independent: BM25 over exactly the
provisions of the suite's pinned snapshots (``bm25.py``, ``suite_index.py``), the same
candidates and scores on any database. ``keyword-v1`` and ``heading-v1`` are secondary
baselines whose candidates depend on the database engine and on every provision imported
(their term statistics are the whole table's):

- SQLite: FTS5 ``bm25()`` over (heading, body) with the heading weighted 10x.
- PostgreSQL: weighted tsvector (heading 'A', body 'B') and ``ts_rank_cd``.

Order is deterministic: score, then citation, then variant, then id. A
configuration names a primary search and a fallback; when the primary search
returns fewer than k provisions the fallback fills the pool after them, and
the outcome says so. The engines rank differently by design: each run records
which engine and configuration produced it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from django.db import connection

# Function words and words every statute of a corpus shares: requiring them in
# an AND search only empties the result. Versioned with the configurations.
STOPWORDS_VERSION = "1"
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below between
    both but by can could did do does doing down during each either few for from further had has have having he her
    here hers him his how i if in into is it its itself just may me might more most must my no nor not now of off
    on once only or other our out over own same shall she should so some such than that the their them then there
    these they this those through to too under until up upon very was we were what when where whether which while
    who whom why will with would you your yours
    nevada hawaii nrs hrs statute statutes statutory law laws section sections chapter provision provisions
    u s c usc code""".split()  # noqa: SIM905 -- a word list reads better as prose
)
_TOKEN = re.compile(r"[a-z0-9]+")


def query_terms(text: str) -> list[str]:
    """Content words of a question, lowercased, de-duplicated in order of appearance."""
    seen: dict[str, None] = {}
    for token in _TOKEN.findall(text.lower()):
        if len(token) > 1 and token not in STOPWORDS:
            seen.setdefault(token, None)
    return list(seen)


@dataclass(frozen=True)
class Configuration:
    name: str
    description: str
    # "all_terms", "heading_any_term", or engine-independent over the suite's own documents (suite_index.py):
    # "bm25", "rm3" (RM3 feedback over BM25) or "qld" (query likelihood), see language_models.py.
    primary: str
    fallback: str  # "any_term", or "none"
    engine_independent: bool = False

    def detail(self, engine: Engine) -> dict:
        return {
            "name": self.name,
            "description": self.description,
            "primary": self.primary,
            "fallback": self.fallback,
            "stopwords_version": STOPWORDS_VERSION,
            "engine": engine.name,
            "ranking": engine.ranking,
            "tie_break": "citation, variant, id",
        }


BM25_CONFIGURATION = "bm25-v1"
RM3_CONFIGURATION = "rm3-v1"
QLD_CONFIGURATION = "qld-v1"
CONFIGURATIONS: dict[str, Configuration] = {
    BM25_CONFIGURATION: Configuration(
        name=BM25_CONFIGURATION,
        description="Default, engine-independent: BM25 (Lucene variant, k1 1.2, b 0.75, Lucene English stop "
        "words, Snowball stemmer, heading counted twice) over exactly the suite's pinned snapshots; any query "
        "word matches; ties by citation. Same candidates and scores on SQLite and PostgreSQL, whatever else is "
        "imported. No fallback.",
        primary="bm25",
        fallback="none",
        engine_independent=True,
    ),
    RM3_CONFIGURATION: Configuration(
        name=RM3_CONFIGURATION,
        description="Engine-independent first stage: RM3 pseudo-relevance feedback over bm25-v1 (Lavrenko & Croft "
        "2001; RM3 as Abdul-Jaleel et al. 2004), Anserini's defaults: the 10 best bm25-v1 documents feed a "
        "relevance model of 10 terms (terms in over 10% of documents left out), mixed 0.5/0.5 with the question, "
        "searched again with BM25. Same documents, analyzer and tie rule as bm25-v1. No fallback.",
        primary="rm3",
        fallback="none",
        engine_independent=True,
    ),
    QLD_CONFIGURATION: Configuration(
        name=QLD_CONFIGURATION,
        description="Engine-independent first stage: query likelihood with Dirichlet smoothing, mu 2000 (Zhai & "
        "Lafferty 2001), over the documents and analyzer of bm25-v1; documents holding any query word, ranked "
        "by log P(question | document), ties by citation. No fallback.",
        primary="qld",
        fallback="none",
        engine_independent=True,
    ),
    "keyword-v1": Configuration(
        name="keyword-v1",
        description="Engine-dependent baseline (SQLite FTS5 or PostgreSQL full text; its term statistics cover "
        "every imported provision, so candidates change with the database and with other corpora): every "
        "content word must match (heading or body), heading weighted above body; OR of the words fills the "
        "pool when that finds fewer than k.",
        primary="all_terms",
        fallback="any_term",
    ),
    "heading-v1": Configuration(
        name="heading-v1",
        description="Engine-dependent secondary baseline (different rules; ranked by the database's engine over "
        "every imported provision): any content word in the section heading; OR of the words over heading and "
        "body fills the pool when that finds fewer than k.",
        primary="heading_any_term",
        fallback="any_term",
    ),
}
DEFAULT_CONFIGURATION = BM25_CONFIGURATION


@dataclass(frozen=True)
class Hit:
    provision_id: int
    score: float
    via_fallback: bool = False


@dataclass
class SearchOutcome:
    hits: list[Hit] = field(default_factory=list)
    primary_expression: str = ""
    primary_count: int = 0
    fallback_used: bool = False
    fallback_expression: str = ""
    fallback_count: int = 0


class Engine:
    name = ""
    ranking = ""

    def expression(self, terms: list[str], mode: str) -> str:
        raise NotImplementedError

    def search(self, *, expression: str, mode: str, snapshot_ids: list[int], limit: int,
               exclude: list[int]) -> list[Hit]:
        raise NotImplementedError

    def index_size(self) -> int:
        raise NotImplementedError

    def rebuild(self) -> None:
        """Make the index match the provisions table (idempotent)."""

    def after_import(self) -> None:
        """Housekeeping after a bulk insert of provisions (the triggers/generated column already indexed them)."""


def _placeholders(values: list) -> str:
    return ", ".join(["%s"] * len(values))


class SqliteFts5(Engine):
    name = "sqlite-fts5"
    ranking = "bm25(heading=10.0, body=1.0), porter unicode61 tokenizer; score = -bm25"

    def expression(self, terms: list[str], mode: str) -> str:
        quoted = [f'"{t}"' for t in terms]
        if mode == "all_terms":
            return " AND ".join(quoted)
        if mode == "heading_any_term":
            return "heading : (" + " OR ".join(quoted) + ")"
        return " OR ".join(quoted)

    def search(self, *, expression, mode, snapshot_ids, limit, exclude):
        if not expression or not snapshot_ids:
            return []
        not_in = f"AND p.id NOT IN ({_placeholders(exclude)})" if exclude else ""
        sql = f"""
            SELECT p.id, bm25(benchmarks_provision_fts, 10.0, 1.0) AS rank_value
            FROM benchmarks_provision_fts
            JOIN benchmarks_provision p ON p.id = benchmarks_provision_fts.rowid
            WHERE benchmarks_provision_fts MATCH %s
              AND p.snapshot_id IN ({_placeholders(snapshot_ids)}) {not_in}
            ORDER BY rank_value ASC, p.citation ASC, p.variant ASC, p.id ASC
            LIMIT %s"""  # noqa: S608 -- only placeholders are interpolated
        with connection.cursor() as cursor:
            cursor.execute(sql, [expression, *snapshot_ids, *exclude, limit])
            # bm25 is "lower is better"; negate so every engine's score is "higher is better".
            return [Hit(row[0], -float(row[1])) for row in cursor.fetchall()]

    def index_size(self) -> int:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM benchmarks_provision_fts")
            return int(cursor.fetchone()[0])

    def rebuild(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute("INSERT INTO benchmarks_provision_fts(benchmarks_provision_fts) VALUES ('rebuild')")


class PostgresFts(Engine):
    name = "postgresql-fts"
    ranking = "ts_rank_cd(weights D=0.1 C=0.2 B(body)=0.4 A(heading)=1.0, normalization 1), english config"

    def expression(self, terms: list[str], mode: str) -> str:
        if mode == "all_terms":
            return " & ".join(terms)
        if mode == "heading_any_term":
            return " | ".join(f"{t}:A" for t in terms)
        return " | ".join(terms)

    def search(self, *, expression, mode, snapshot_ids, limit, exclude):
        if not expression or not snapshot_ids:
            return []
        not_in = f"AND p.id NOT IN ({_placeholders(exclude)})" if exclude else ""
        # Terms are [a-z0-9]+ only (query_terms), so to_tsquery cannot see operators from the user.
        # The query sits in a subquery the planner cannot flatten (OFFSET 0), so it plans with the
        # default match selectivity and reads the matches through the GIN index. Seeing the
        # constant, it estimated the OR fallback's ~1,200 HRS matches and chose a sequential
        # scan that evaluates @@ on every section (~12 ms of the query's 25 ms; the index finds
        # the same rows in under 1 ms). Same rows, same ts_rank_cd, same order: only the plan changes.
        sql = f"""
            SELECT p.id, ts_rank_cd(p.search_tsv, q.query, 1) AS rank_value
            FROM benchmarks_provision p, (SELECT to_tsquery('english', %s) AS query OFFSET 0) AS q
            WHERE p.search_tsv @@ q.query
              AND p.snapshot_id IN ({_placeholders(snapshot_ids)}) {not_in}
            ORDER BY rank_value DESC, p.citation ASC, p.variant ASC, p.id ASC
            LIMIT %s"""  # noqa: S608 -- only placeholders are interpolated
        with connection.cursor() as cursor:
            cursor.execute(sql, [expression, *snapshot_ids, *exclude, limit])
            return [Hit(row[0], float(row[1])) for row in cursor.fetchall()]

    def index_size(self) -> int:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM benchmarks_provision WHERE search_tsv IS NOT NULL")
            return int(cursor.fetchone()[0])

    def rebuild(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute("REINDEX INDEX benchmarks_provision_search_tsv")

    def after_import(self) -> None:
        # A bulk insert leaves rows in the GIN pending list and the planner without
        # statistics: searches then scan the whole table (15 ms instead of 0.1 ms
        # for an AND query over HRS). Both statements are allowed in a transaction.
        with connection.cursor() as cursor:
            cursor.execute("SELECT gin_clean_pending_list('benchmarks_provision_search_tsv'::regclass)")
            cursor.execute("ANALYZE benchmarks_provision")


def engine_for_connection() -> Engine:
    if connection.vendor == "sqlite":
        return SqliteFts5()
    if connection.vendor == "postgresql":
        return PostgresFts()
    raise RuntimeError(f"no keyword engine for database vendor {connection.vendor!r}")


def keyword_search(*, text: str, snapshot_ids: list[int], k: int, configuration: Configuration,
                   engine: Engine | None = None) -> SearchOutcome:
    """Top-k provisions for a question: primary search, then the recorded fallback if short."""
    if configuration.engine_independent:
        raise ValueError(f"{configuration.name} does not search the database; see benchmarks.retrieval.suite_index")
    engine = engine or engine_for_connection()
    terms = query_terms(text)
    outcome = SearchOutcome()
    if not terms:
        return outcome
    outcome.primary_expression = engine.expression(terms, configuration.primary)
    primary = engine.search(expression=outcome.primary_expression, mode=configuration.primary,
                            snapshot_ids=snapshot_ids, limit=k, exclude=[])
    outcome.hits = list(primary)
    outcome.primary_count = len(primary)
    if len(primary) < k:
        outcome.fallback_used = True
        outcome.fallback_expression = engine.expression(terms, configuration.fallback)
        extra = engine.search(expression=outcome.fallback_expression, mode=configuration.fallback,
                              snapshot_ids=snapshot_ids, limit=k - len(primary),
                              exclude=[hit.provision_id for hit in primary])
        outcome.fallback_count = len(extra)
        outcome.hits += [Hit(hit.provision_id, hit.score, via_fallback=True) for hit in extra]
    return outcome
