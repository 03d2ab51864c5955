"""The offline CUAD systems this install ships, each labelled as what it is (name, method, data, validation).

A run is recognised by its model label (``ExtractionRun.model``), which is what
every page, export and summary already shows; the registry adds the longer
description beside it. The labels are fixed strings, so a run imported from a
file that claims one of them is shown with that description too: they describe
the method, not a guarantee of where the file came from.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from grading.baselines.nearest import FOLDS, MAX_PER_TYPE, SEED
from grading.runs.local_extractor import MODEL_LABEL as LOCAL_MODEL
from grading.runs.local_extractor import PER_TYPE as LOCAL_PER_TYPE
from grading.runs.local_extractor import THRESHOLD as LOCAL_THRESHOLD

NEAREST_MODEL = (
    f"offline baseline: nearest labelled example (TF-IDF cosine to CUAD spans of other contracts, "
    f"cross-validated by contract, {FOLDS} folds)"
)
RULES_MODEL = "offline baseline: clause-heading/keyword rules (patterns from CUAD's category descriptions)"


@dataclass(frozen=True)
class OfflineSystem:
    key: str  # what ``cuad_baseline --system`` takes
    name: str
    model: str  # the run's model label
    method: str
    data: str  # what it learned from or looked at
    validation: str  # how its labels were kept away from the contracts it is graded on
    confidence: str  # what its per-extraction confidence is, if any
    badge: str  # the short label beside the model name on every page

    def as_dict(self) -> dict[str, str]:
        return asdict(self)

    @property
    def line(self) -> str:
        return f"{self.method}. Data: {self.data}. {self.validation}."


SYSTEMS: tuple[OfflineSystem, ...] = (
    OfflineSystem(
        key="local",
        name="local MiniLM extractor (heuristic baseline)",
        model=LOCAL_MODEL,
        method=(f"passages embedded with the bundled all-MiniLM-L6-v2 (int8 ONNX), cosine to each clause type's "
                f"name and CUAD description >= {LOCAL_THRESHOLD}, at most {LOCAL_PER_TYPE} per type"),
        data="CUAD's 41 category descriptions; no gold span",
        validation="Uses no CUAD label; its threshold was set once by hand on 10 contracts of the demo sample",
        confidence="none",
        badge="heuristic baseline",
    ),
    OfflineSystem(
        key="nearest",
        name="nearest labelled example (TF-IDF, cross-validated by contract)",
        model=NEAREST_MODEL,
        method=(f"per clause type, the contract's passages with the highest TF-IDF cosine (word unigrams and "
                f"bigrams) to a CUAD span of that type in another contract, at most {MAX_PER_TYPE} per type"),
        data="CUAD gold spans of every contract in the other folds (the graded contract's fold never)",
        validation=(f"Cross-validated by contract: {FOLDS} folds (seed {SEED}); each fold's threshold and count "
                    "per type chosen on the training folds only (nested)"),
        confidence="the cosine to the nearest example (a ranking score, not a probability)",
        badge="offline baseline, cross-validated by contract",
    ),
    OfflineSystem(
        key="rules",
        name="clause-heading/keyword rules (no labels used)",
        model=RULES_MODEL,
        method=("per clause type, the passage opening with one of its headings and/or containing one of its "
                "keyword patterns; title, parties and dates as short slices of the preamble"),
        data="patterns written from CUAD's category descriptions; no gold span",
        validation="Uses no CUAD label, so nothing to leak",
        confidence="none",
        badge="offline baseline, rules",
    ),
)
BY_MODEL = {s.model: s for s in SYSTEMS}
BY_KEY = {s.key: s for s in SYSTEMS}


def offline_system(model: str) -> OfflineSystem | None:
    """The offline system a run's model label names, or None (a provider's model, a pasted run)."""
    return BY_MODEL.get(model)
