"""The statute benchmark's review kinds: a query, the complete section and the passage the model saw; and a
suite target to confirm (a query and one provision: is it a correct target?)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchmarks.corpus.corpus_file import HIERARCHY
from benchmarks.corpus.selectors import corpus_jurisdiction, provision_citations, provision_get
from reviewapp.review.kinds import GradeType, PoolKind, SourceContext

RELEVANCE_SCALE = [
    (0, "0", "unrelated"),
    (1, "1", "topical but not useful"),
    (2, "2", "useful support, definition, exception or procedure"),
    (3, "3", "directly addresses the issue"),
]

def statute_source_context(external_ref: Mapping[str, Any]) -> SourceContext | None:
    """The section's citation context from its provision and snapshot: what a lawyer cites, and where it is from.

    The heading is not repeated here: the item's own source heading (citation and heading) heads the page.

    Reads only the provision the item points at: never the run, the candidate or anything about its order.
    """
    provision_pk = external_ref.get("provision")
    if not isinstance(provision_pk, int):
        return None
    try:
        provision = provision_get(pk=provision_pk)
    except Exception:  # a missing provision only means no header, never a broken page
        return None
    snapshot = provision.snapshot
    if provision.hierarchy:  # a corpus file's divisions, outermost first: "Title 12, part 1026"
        # Outermost first, whatever order the database keeps a JSON object's keys in (PostgreSQL's jsonb sorts them).
        division = ", ".join(f"{level} {provision.hierarchy[level]}" for level in HIERARCHY
                             if provision.hierarchy.get(level))
        division = division[:1].upper() + division[1:]
    elif provision.corpus == "usc" and "/" in provision.chapter:
        title, chapter = provision.chapter.split("/", 1)
        division = f"Title {title}, chapter {chapter}"
    elif provision.corpus == "usc":
        division = f"Title {provision.chapter}"
    else:
        division = f"Chapter {provision.chapter}"
    if provision.chapter_title:
        division += f": {provision.chapter_title}"
    facts = (
        ("Jurisdiction", corpus_jurisdiction(corpus=provision.corpus)),
        ("Code", provision.corpus_label),
        ("Title / chapter", division),
        ("Section", str(provision)),
        *((("Version", provision.version_label),) if provision.version_label else ()),
        *((("As of", provision.as_of.isoformat()),) if provision.as_of else ()),
    )
    return SourceContext(facts=facts, url=provision.official_url or snapshot.official_url,
                         retrieved_at=snapshot.retrieved_at)


def statute_document_citations(external_refs: Sequence[Mapping[str, Any]]) -> list[str | None]:
    """Each item's section citation, from the provision its reference points at (one query for them all)."""
    pks = [ref.get("provision") for ref in external_refs]
    citations = provision_citations(pks=[pk for pk in pks if isinstance(pk, int)])
    return [citations.get(pk) if isinstance(pk, int) else None for pk in pks]


PASSAGE_KIND = PoolKind(
    key="passage",
    label="Query, section and passage (section grade and passage grade)",
    grade_types=[
        GradeType("section", "Section", "How relevant is the complete section (heading and text) to the query?"),
        GradeType("passage", "Passage", "How relevant is the passage, with its caption, to the query?"),
    ],
    scale=RELEVANCE_SCALE,
    query_label="Query",
    source_label="Complete section",
    passage_label="Passage as shown",
    qrels_grade_type="passage",
    source_context=statute_source_context,
    document_citations=statute_document_citations,
)

TARGET_KIND = PoolKind(
    key="target",
    label="Query and provision: is it a correct target? (yes / no)",
    grade_types=[
        GradeType("target", "Target", "Is this provision a correct target for the query (a section a lawyer "
                  "answering it should find)?"),
    ],
    scale=[(0, "n", "no"), (1, "y", "yes")],
    query_label="Query",
    source_label="Provision",
    passage_label="",
    qrels_grade_type="target",
    reviewer_include="benchmarks/confirmation_propose.html",
    source_context=statute_source_context,
)
