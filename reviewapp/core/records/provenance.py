"""Provenance as data: who made the labels behind a figure, how they signed in, and by which procedure.

Every label the product keeps records its maker, the sign-in it was saved under and its procedure. A page, PDF,
export or API answer that says where its figures' labels came from gathers those records as ``LabelOrigin``
values (each job's selectors do, from its own rows) and renders ``provenance_sentences`` (or, for machines,
``provenance_records``): the wording and the arithmetic live here once, so two pages can never word the same
labels two ways.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class Procedure(StrEnum):
    """How one label was reached."""

    LAWYER_BLIND = "lawyer_blind"  # lawyers answered blind, and as many as the rule asks for agreed
    ADJUDICATED = "adjudicated"  # at least two lawyers answered and disagreed; an admin ruled
    ADMIN_OWN = "admin_own"  # an admin set it with no lawyer dispute to resolve: their own label
    IMPORTED = "imported"  # a file said so; nobody here confirmed it
    PUBLISHED = "published"  # a published dataset's label, taken as published
    NOMINATED = "nominated"  # put forward (a suite's target) and not yet confirmed by any lawyer


@dataclass(frozen=True)
class LabelOrigin:
    """One body of labels a figure counts, with how each of them was made.

    ``procedures``: (Procedure, how many labels) for the labels the figure counts. ``undecided`` and
    ``rejected`` are labels of the same source the figure does not count (still open, or rejected by lawyers).
    ``answers`` is how many complete lawyer answers lie behind them, ``admin_held`` how many of those were
    saved after signing in with credentials an admin once held (a token counts as the sign-in that made it),
    ``through_idp`` how many after a sign-in through the organisation's identity provider.
    """

    role: str  # what the figure used them as: "targets" | "labels"
    source: str  # where they are kept, as a reader finds it
    unit: str  # one label, singular: "target", "item", "answer"
    procedures: tuple[tuple[str, int], ...] = ()
    lawyers: tuple[str, ...] = ()  # who answered, by name; () when only the number is kept
    lawyer_count: int | None = None  # when names are not kept
    adjudicators: tuple[str, ...] = ()
    nominated_by: str = ""
    undecided: int = 0
    rejected: int = 0
    answers: int = 0
    admin_held: int = 0
    through_idp: int = 0

    @property
    def counted(self) -> int:
        return sum(n for _, n in self.procedures)

    def count_of(self, procedure: str) -> int:
        return sum(n for p, n in self.procedures if p == procedure)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"


def _lawyers(origin: LabelOrigin) -> str:
    n = len(origin.lawyers) if origin.lawyers else (origin.lawyer_count or 0)
    if not n:
        return "lawyers"
    names = f" ({', '.join(origin.lawyers)})" if origin.lawyers else ""
    return _plural(n, "lawyer") + names


def _admins(origin: LabelOrigin) -> str:
    return ", ".join(origin.adjudicators) if origin.adjudicators else "an admin"


def _part(origin: LabelOrigin, procedure: str, n: int) -> str:
    words = {
        Procedure.LAWYER_BLIND: f"agreed by {_lawyers(origin)} answering blind",
        Procedure.ADJUDICATED: f"ruled by {_admins(origin)} after the lawyers disagreed (adjudicated)",
        Procedure.ADMIN_OWN: f"set by {_admins(origin)} as their own label, with no lawyer dispute to resolve",
        Procedure.IMPORTED: "as an imported file states them, confirmed by no lawyer here",
        Procedure.PUBLISHED: "as published, not checked by lawyers here",
        Procedure.NOMINATED: "nominated and not yet confirmed by any lawyer",
    }[Procedure(procedure)]
    return f"{n} {words}"


_ORDER = list(Procedure)


def provenance_sentence(origin: LabelOrigin) -> str:
    """One sentence: the source, how many labels it gives the figure, each procedure's share, who made them."""
    head = f"{origin.role.capitalize()} from {origin.source}: {_plural(origin.counted, origin.unit)} counted"
    parts = [_part(origin, p, n) for p, n in sorted(origin.procedures, key=lambda pn: _ORDER.index(Procedure(pn[0])))
             if n]
    tail = []
    if origin.rejected:
        tail.append(f"{origin.rejected} rejected by the lawyers")
    if origin.undecided:
        tail.append(f"{origin.undecided} not yet decided")
    if origin.nominated_by:
        tail.append(f"nominated by {origin.nominated_by}")
    if origin.answers:
        held = (f"{origin.admin_held} of the {_plural(origin.answers, 'lawyer answer')} saved with credentials an "
                "admin once held")
        if origin.through_idp:
            held += f", {origin.through_idp} by lawyers signed in through the organisation's identity provider"
        tail.append(held)
    body = head + (" (" + "; ".join(parts) + ")" if parts else "")
    return body + "".join(f"; {t}" for t in tail) + "."


def provenance_sentences(origins: Sequence[LabelOrigin]) -> tuple[str, ...]:
    """What every page, PDF and answer that states the provenance of a figure prints: one sentence per origin."""
    return tuple(provenance_sentence(o) for o in origins)


def provenance_records(origins: Sequence[LabelOrigin]) -> list[dict[str, Any]]:
    """The same, for machines (JSON exports and API answers): every count and name, and the sentence."""
    return [
        {"role": o.role, "source": o.source, "unit": o.unit, "counted": o.counted,
         "by_procedure": {str(p): n for p, n in o.procedures}, "lawyers": list(o.lawyers),
         "lawyer_count": len(o.lawyers) if o.lawyers else o.lawyer_count, "adjudicators": list(o.adjudicators),
         "nominated_by": o.nominated_by, "undecided": o.undecided, "rejected": o.rejected, "answers": o.answers,
         "admin_held": o.admin_held, "through_idp": o.through_idp, "sentence": provenance_sentence(o)}
        for o in origins
    ]
