"""The label audit's review kind: is the text in question a real clause of the stated type (yes / no)?"""

from __future__ import annotations

from reviewapp.review.kinds import GradeType, PoolKind

CLAUSE_KIND = PoolKind(
    key="clause",
    label="Contract excerpt and clause type (yes / no)",
    grade_types=[
        GradeType("clause", "Clause", "Is the text in question a real clause of the stated type?"),
    ],
    scale=[(0, "n", "no"), (1, "y", "yes")],
    query_label="Clause type and its description",
    source_label="Contract excerpt",
    passage_label="Text in question",
    qrels_grade_type="clause",
)
