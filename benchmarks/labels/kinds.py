"""The statute benchmark's review kind: a query, the complete section and the passage the model saw."""

from __future__ import annotations

from reviewapp.review.kinds import GradeType, PoolKind

RELEVANCE_SCALE = [
    (0, "0", "unrelated"),
    (1, "1", "topical but not useful"),
    (2, "2", "useful support, definition, exception or procedure"),
    (3, "3", "directly addresses the issue"),
]

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
)
