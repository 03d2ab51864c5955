"""The registry of item kinds: what a reviewer grades, on which scale, and how a grade is parsed.

The engine defines no kind. Each job defines its kinds and registers them when its app is ready
(``AppConfig.ready``), so a new kind never touches this package. A pool stores its kind's key; a key
that is not registered is refused when a pool is declared.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from reviewapp.review.errors import ReviewError

UNKNOWN = "unknown"


@dataclass(frozen=True)
class SourceContext:
    """Where an item's source comes from, as a reader cites it (shown in the item's header).

    ``facts`` are (label, value) pairs such as ("Jurisdiction", "Nevada"); ``url`` is the official source and
    ``retrieved_at`` when the text was taken from it. A kind builds it from the item's job-side reference; it
    must carry nothing about how the item was chosen (no run, rank, score or system).
    """

    facts: tuple[tuple[str, str], ...]
    url: str = ""
    retrieved_at: datetime | None = None


@dataclass(frozen=True)
class SpanLocations:
    """Where offsets of an item's source text fall in the original document, as a lawyer finds them.

    ``starts`` are (offset, unit number) pairs in ascending offset: the unit numbered ``n`` starts at ``offset``
    (a page of a PDF, a paragraph of a DOCX, a line of a text file); ``unit`` names the unit ("page").
    """

    unit: str
    starts: tuple[tuple[int, int], ...]


class GradeType:
    def __init__(self, key: str, label: str, help_text: str) -> None:
        self.key = key
        self.label = label
        self.help_text = help_text


class PoolKind:
    def __init__(
        self,
        *,
        key: str,
        label: str,
        grade_types: list[GradeType],
        scale: list[tuple[int, str, str]],
        query_label: str,
        source_label: str,
        passage_label: str,
        qrels_grade_type: str,
        reviewer_include: str = "",
        source_context: Callable[[Mapping[str, Any]], SourceContext | None] | None = None,
        document_citations: Callable[[Sequence[Mapping[str, Any]]], list[str | None]] | None = None,
        answers_spans: bool = False,
        workspace_template: str = "",
        span_locations: Callable[[Mapping[str, Any]], SpanLocations | None] | None = None,
    ) -> None:
        self.key = key
        self.label = label
        self.grade_types = grade_types
        # (value, shortcut key, meaning), in ordinal order
        self.scale = scale
        self.query_label = query_label
        self.source_label = source_label
        self.passage_label = passage_label
        self.qrels_grade_type = qrels_grade_type
        # The item's job-side reference (``external_ref``) -> its citation context, or None when unknown.
        self.source_context = source_context
        # Items' job-side references (``external_ref``) -> the document each is about as a lawyer cites it (None
        # when unknown), for the admin pages' document columns; without it they show ``doc_id``.
        self.document_citations = document_citations
        # A template of the job's own, included on the reviewer's item page below the grades (e.g. a form to
        # propose something the item lacks); it receives only ``view`` (the blind ReviewerItem). '' for none.
        self.reviewer_include = reviewer_include
        # The answer carries spans of the source text (``JudgmentRevision.spans``) besides the grades: the
        # ``qrels_grade_type`` says whether there are any (its highest scale value "present", its lowest
        # "absent"). Every other kind's answers have no spans, and spans sent for one are refused.
        self.answers_spans = answers_spans
        # The reviewer's item page of the kind, when it is not the passage workspace ("review/item.html"); it
        # receives the same blind context.
        self.workspace_template = workspace_template
        # The item's job-side reference -> where offsets fall in the original (page, paragraph), or None.
        self.span_locations = span_locations

    @property
    def grade_type_keys(self) -> list[str]:
        return [grade_type.key for grade_type in self.grade_types]

    @property
    def span_present(self) -> int:
        """The grade of ``qrels_grade_type`` that says the source has spans answering the query."""
        return max(self.values)

    @property
    def span_absent(self) -> int:
        return min(self.values)

    @property
    def values(self) -> list[int]:
        return [value for value, _, _ in self.scale]

    @property
    def yes_no(self) -> bool:
        """A two-point scale whose points are words (no / yes): its grades are shown as those words."""
        return len(self.scale) == 2 and all(meaning.isalpha() for _, _, meaning in self.scale)

    def grade_text(self, value: object) -> str:
        """A grade as an admin reads it: "yes"/"no" on a yes/no scale, the number on an ordinal one."""
        if value is None:
            return "(none)"
        if value == UNKNOWN:
            return UNKNOWN
        if self.yes_no and not isinstance(value, bool):
            for point, _, meaning in self.scale:
                if point == value:
                    return meaning
        return str(value)

    def parse_grade(self, raw: object) -> int | str | None:
        """'' / None -> not answered; 'u'/'unknown' -> unknown (never 0); a scale value or its key."""
        if raw is None or raw == "":
            return None
        if isinstance(raw, str):
            text = raw.strip().lower()
            if text in ("u", UNKNOWN):
                return UNKNOWN
            for value, key, _ in self.scale:
                if text in (key, str(value)):
                    return value
            raise ValueError(f"{raw!r} is not on the scale ({', '.join(str(v) for v in self.values)} or unknown)")
        if isinstance(raw, bool):
            raise ValueError(f"{raw!r} is not on the scale")
        if isinstance(raw, int) and raw in self.values:
            return raw
        raise ValueError(f"{raw!r} is not on the scale ({', '.join(str(v) for v in self.values)} or unknown)")


class UnknownKind(LookupError):
    pass


_REGISTRY: dict[str, PoolKind] = {}


def kind_register(kind: PoolKind) -> None:
    """Register a kind (idempotent for the same object: ``ready()`` may run more than once in tests)."""
    existing = _REGISTRY.get(kind.key)
    if existing is not None and existing is not kind and vars(existing) != vars(kind):
        raise ValueError(f"item kind {kind.key!r} is registered already with another definition")
    _REGISTRY[kind.key] = kind


def kind_get(key: str) -> PoolKind:
    try:
        return _REGISTRY[key]
    except KeyError:
        raise UnknownKind(f"kind {key!r} is not one of {sorted(_REGISTRY)}") from None


def pool_kind(kind: str) -> PoolKind:
    """The registered kind of a pool's ``kind`` key; an unknown key is bad input (``ReviewError``)."""
    try:
        return kind_get(kind)
    except UnknownKind as error:
        raise ReviewError(str(error)) from None


def kinds_all() -> dict[str, PoolKind]:
    """Every registered kind by key, in registration order (a copy: callers cannot change the registry)."""
    return dict(_REGISTRY)


def kind_for_grade_type(grade_type: str) -> PoolKind:
    """The registered kind that grades ``grade_type`` (grade type keys are unique across kinds)."""
    for kind in _REGISTRY.values():
        if grade_type in kind.grade_type_keys:
            return kind
    known = sorted(key for kind in _REGISTRY.values() for key in kind.grade_type_keys)
    raise UnknownKind(f"grade_type {grade_type!r} is not one of {known}")
