"""Reads for comparing snapshots: a source's snapshots in order, two of them compared, and the suites whose pinned
snapshot a newer one has overtaken, target by target."""

from __future__ import annotations

from dataclasses import dataclass

from benchmarks.corpus.models import Provision, SourceSnapshot
from benchmarks.snapshots.changes import KIND_LABELS, SectionText, SnapshotChanges, snapshot_compare
from benchmarks.suites.models import NominatedTarget, Suite

_TEXT_FIELDS = ("pk", "citation", "variant", "heading", "body", "history", "notes", "repealed")


def snapshot_history(*, snapshot: SourceSnapshot) -> list[SourceSnapshot]:
    """Every snapshot of the same source (code and source file) that carries sections, oldest first."""
    return list(SourceSnapshot.objects.filter(corpus=snapshot.corpus, source_key=snapshot.source_key,
                                              provision_count__gt=0).defer("raw").order_by("id"))


def snapshot_previous(*, snapshot: SourceSnapshot) -> SourceSnapshot | None:
    return (SourceSnapshot.objects.filter(corpus=snapshot.corpus, source_key=snapshot.source_key, id__lt=snapshot.pk,
                                          provision_count__gt=0).defer("raw").order_by("-id").first())


def _sections(queryset) -> list[SectionText]:
    return [SectionText(*row) for row in queryset.order_by("position").values_list(*_TEXT_FIELDS)]


def snapshot_sections(*, snapshot: SourceSnapshot) -> list[SectionText]:
    return _sections(Provision.objects.filter(snapshot=snapshot))


@dataclass(frozen=True)
class SnapshotComparison:
    old: SourceSnapshot
    new: SourceSnapshot
    changes: SnapshotChanges


def snapshot_comparison(*, new: SourceSnapshot, old: SourceSnapshot | None = None) -> SnapshotComparison | None:
    """``new`` against ``old`` (by default the snapshot of the same source just before it); None without one.

    Raises ValueError when ``old`` is a snapshot of another code.
    """
    old = old or snapshot_previous(snapshot=new)
    if old is None:
        return None
    if old.corpus != new.corpus:
        raise ValueError(f"snapshot {old.pk} is of {old.corpus}, not of {new.corpus}")
    return SnapshotComparison(old, new, snapshot_compare(snapshot_sections(snapshot=old),
                                                         snapshot_sections(snapshot=new)))


# --------------------------------------------------------------------------- suites pinned to an older snapshot


@dataclass(frozen=True)
class TargetChange:
    qid: str
    citation: str
    kind: str  # "amended", "notes" or "removed"
    old_pk: int
    new_pk: int | None

    @property
    def kind_label(self) -> str:
        return KIND_LABELS[self.kind]


@dataclass(frozen=True)
class SourceDrift:
    """A suite's pinned snapshot of a source and the newest snapshot of that source, which came after it."""

    pinned: SourceSnapshot
    latest: SourceSnapshot
    targets: int  # the suite's targets in the pinned snapshot
    changed: tuple[TargetChange, ...]

    @property
    def sentence(self) -> str:
        head = (f"A newer snapshot of {self.latest.source_key} (sha256 {self.latest.sha256[:12]}…, imported "
                f"{self.latest.retrieved_at:%Y-%m-%d}) than the one this suite is pinned to (sha256 "
                f"{self.pinned.sha256[:12]}…)")
        if not self.changed:
            return f"{head} leaves all {self.targets} of its targets there unchanged."
        listed = "; ".join(f"{c.qid}: {c.citation} ({c.kind_label})" for c in self.changed[:10])
        more = f"; and {len(self.changed) - 10} more" if len(self.changed) > 10 else ""
        return (f"{head} changes {len(self.changed)} of its {self.targets} targets there ({listed}{more}). The "
                "figures are on the pinned snapshot; a new version of the suite would be checked against the newer "
                "one.")


def suite_source_drift(*, suite: Suite) -> list[SourceDrift]:
    """For each snapshot the suite pinned that a newer snapshot of the same source follows: which of the suite's
    targets in it are amended, have amended notes only, or are gone, by the hashes of their stored texts."""
    out = []
    for pinned in suite.snapshots.filter(provision_count__gt=0).defer("raw").order_by("source_key", "id"):
        latest = (SourceSnapshot.objects.filter(corpus=pinned.corpus, source_key=pinned.source_key,
                                                provision_count__gt=0).defer("raw").order_by("-id").first())
        if latest is None or latest.pk <= pinned.pk:
            continue
        targets = list(NominatedTarget.objects.filter(query__suite=suite, provision__snapshot=pinned)
                       .select_related("query").order_by("query__position", "id"))
        old = {s.pk: s for s in _sections(Provision.objects.filter(pk__in=[t.provision_id for t in targets]))}
        new = {s.key: s for s in _sections(Provision.objects.filter(
            snapshot=latest, citation__in={s.citation for s in old.values()}))}
        changed = []
        for target in targets:
            before = old[target.provision_id]
            after = new.get(before.key)
            if after is None:
                kind = "removed"
            elif after.text_sha256 != before.text_sha256:
                kind = "amended"
            elif after.notes_sha256 != before.notes_sha256:
                kind = "notes"
            else:
                continue
            changed.append(TargetChange(target.query.qid, before.label, kind, before.pk,
                                        after.pk if after is not None else None))
        out.append(SourceDrift(pinned, latest, len(targets), tuple(changed)))
    return out


def suite_drift_caveats(*, suite: Suite) -> tuple[str, ...]:
    """The caveats a report on the suite adds when a newer snapshot changed some of its targets."""
    return tuple(d.sentence for d in suite_source_drift(suite=suite) if d.changed)
