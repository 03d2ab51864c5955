"""CUAD's own metric: AUPR and precision at 80% / 90% recall, by the rules of the paper's ``evaluate.py``.

The product's grade (one-to-one token-F1 matching, ``scoring.cuad.grading``) is
ours; this is the paper's, so a run with confidences can be set beside the
CUAD paper's table. The rules, as ``evaluate.py`` in
github.com/TheAtticusProject/cuad applies them:

- A *question* is one (contract, category); its answers are the gold span
  texts (a list: an answer given twice counts twice), its predictions are
  texts with a probability. Predictions are keyed by text: the same text twice
  keeps the later probability; an empty text is not a prediction.
- At a confidence threshold t, the predictions kept are those with
  probability > t (strictly). An answer is a true positive when any kept
  prediction matches it, else a false negative (one prediction may satisfy
  several answers); a kept prediction matching no answer is a false positive,
  and so is every kept prediction of a question with no answer.
- Match: Jaccard >= 0.5 between word sets, after removing ``. , ; :``,
  lower-casing, and turning ``/`` into a space; words are split on single
  spaces (so runs of spaces leave an empty word, as in evaluate.py). For
  Parties, a prediction containing the answer verbatim also matches.
- Thresholds: 0.99, 0.98, ... 0.01 (``numpy.arange(0.99, 0, -0.01)``), then
  0.001 and 0. Precision = tp / (tp + fp), recall = tp / (tp + fn), NaN when
  undefined; the curve starts at (recall 0, precision 1).
- Precisions are made non-increasing in recall (running maximum from the
  last threshold back, Python ``max`` semantics: a NaN in the running value
  stays, a NaN entry is passed over). AUPR = trapezoidal area under that
  curve over recall (``sklearn.metrics.auc``), 0 if NaN. Precision at R%
  recall = the processed precision at the first point with recall >= R%,
  among all points but the last (evaluate.py zips the curve with its
  thresholds, one shorter); 0 when none reaches it.

Population: the questions given (per category: that category's questions,
all of them for the overall figure). Intervals: percentile bootstrap over
contracts (every question of a drawn contract comes with it), the same draws
for every category and the overall figure.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from scoring.stats.bootstrap import Interval, percentile_bounds, resample_indices

IOU_THRESH = 0.5
PARTIES = "Parties"
# evaluate.py's sweep, to the bit: numpy's arange values, then 0.001 and 0.
THRESHOLDS = np.array([*np.arange(0.99, 0, -0.01).tolist(), 0.001, 0.0])
RECALL_LEVELS = (0.8, 0.9)
_REMOVED = (".", ",", ";", ":")


def words(text: str) -> set[str]:
    """evaluate.py's word set of one text (punctuation removed, lower-cased, ``/`` as a space, split on ``' '``)."""
    for token in _REMOVED:
        text = text.replace(token, "")
    return set(text.lower().replace("/", " ").split(" "))


def jaccard(answer: str, prediction: str) -> float:
    """evaluate.py's ``get_jaccard``: |words in both| / |words in either|."""
    a, p = words(answer), words(prediction)
    return len(a & p) / len(a | p)


def is_match(answer: str, prediction: str, *, parties: bool = False) -> bool:
    """Jaccard >= 0.5; for Parties, also a prediction that contains the answer verbatim."""
    return jaccard(answer, prediction) >= IOU_THRESH or (parties and answer in prediction)


@dataclass(frozen=True)
class Question:
    """One (contract, category): gold answer texts and ``(text, probability)`` predictions."""

    contract: str
    category: str
    answers: tuple[str, ...]
    predictions: tuple[tuple[str, float], ...]


def question_counts(question: Question) -> np.ndarray:
    """True positives, false positives and false negatives at each threshold: shape (len(THRESHOLDS), 3)."""
    by_text: dict[str, float] = {}
    for text, probability in question.predictions:
        if text != "":
            by_text[text] = float(probability)
    texts, probs = list(by_text), np.array(list(by_text.values()), dtype=float)
    parties = question.category == PARTIES
    matched = np.array([[is_match(a, p, parties=parties) for p in texts] for a in question.answers], dtype=bool)
    matched = matched.reshape(len(question.answers), len(texts))
    kept = probs[:, None] > THRESHOLDS[None, :]  # predictions x thresholds
    if question.answers:
        # An answer is found at t when its best-matching kept prediction's probability is above t.
        found = (matched[:, :, None] & kept[None, :, :]).any(axis=1)
        tp = found.sum(axis=0)
        fn = len(question.answers) - tp
        fp = kept[~matched.any(axis=0)].sum(axis=0)
    else:
        tp = fn = np.zeros(len(THRESHOLDS), dtype=int)
        fp = kept.sum(axis=0)
    return np.stack([tp, fp, fn], axis=-1).astype(float)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def curve(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(precisions, recalls) of summed counts ``(..., T, 3)``: shape (..., T + 1), starting at (1, 0)."""
    tp, fp, fn = counts[..., 0], counts[..., 1], counts[..., 2]
    lead = (*counts.shape[:-2], 1)
    precisions = np.concatenate([np.ones(lead), _ratio(tp, tp + fp)], axis=-1)
    recalls = np.concatenate([np.zeros(lead), _ratio(tp, tp + fn)], axis=-1)
    return precisions, recalls


def processed(precisions: np.ndarray) -> np.ndarray:
    """evaluate.py's ``process_precisions``: running maximum from the last point back (see the module docstring)."""
    backwards = np.fmax.accumulate(precisions[..., ::-1], axis=-1)[..., ::-1]
    # Python's max keeps a NaN running value: a NaN at the last point makes every point NaN.
    return np.where(np.isnan(precisions[..., -1:]), np.nan, backwards)


def aupr(precisions: np.ndarray, recalls: np.ndarray) -> np.ndarray:
    """Trapezoidal area under the processed curve over recall; 0 where any point is NaN."""
    y = processed(precisions)
    area = np.sum(np.diff(recalls, axis=-1) * (y[..., 1:] + y[..., :-1]) / 2.0, axis=-1)
    return np.where(np.isnan(area), 0.0, area)


def precision_at_recall(precisions: np.ndarray, recalls: np.ndarray, level: float) -> np.ndarray:
    """Processed precision at the first point (last one excluded) whose recall reaches ``level``; 0 if none."""
    y, r = processed(precisions)[..., :-1], recalls[..., :-1]
    with np.errstate(invalid="ignore"):
        reached = r >= level
    first = np.argmax(reached, axis=-1)
    value = np.take_along_axis(y, first[..., None], axis=-1)[..., 0]
    return np.where(reached.any(axis=-1), value, 0.0)


@dataclass(frozen=True)
class PaperFigures:
    """AUPR, P@80%R and P@90%R of one population of questions, with contract-bootstrap intervals."""

    aupr: Interval
    precision_at_80_recall: Interval
    precision_at_90_recall: Interval
    questions: int
    answers: int
    predictions: int

    def as_dict(self) -> dict[str, object]:
        def iv(x: Interval) -> dict[str, float]:
            return {"estimate": x.estimate, "low": x.low, "high": x.high, "level": x.level}

        return {
            "aupr": iv(self.aupr),
            "precision_at_80_recall": iv(self.precision_at_80_recall),
            "precision_at_90_recall": iv(self.precision_at_90_recall),
            "questions": self.questions,
            "answers": self.answers,
            "predictions": self.predictions,
        }


@dataclass(frozen=True)
class PaperResult:
    overall: PaperFigures
    per_category: dict[str, PaperFigures]
    contracts: int
    replicates: int
    seed: int

    def as_dict(self) -> dict[str, object]:
        return {
            **self.overall.as_dict(),
            "per_category": {name: figures.as_dict() for name, figures in self.per_category.items()},
            "contracts": self.contracts,
            "replicates": self.replicates,
            "seed": self.seed,
            "rules": "CUAD evaluate.py: Jaccard >= 0.5 on words, Parties also by containment, "
                     "thresholds 0.99..0.01, 0.001, 0",
            "interval": "percentile 95% bootstrap over contracts",
        }


def _figures(counts: np.ndarray, replicate_counts: np.ndarray, questions: Sequence[Question]) -> PaperFigures:
    point_p, point_r = curve(counts)
    rep_p, rep_r = curve(replicate_counts)
    values = [
        (aupr(point_p, point_r), aupr(rep_p, rep_r)),
        *((precision_at_recall(point_p, point_r, level), precision_at_recall(rep_p, rep_r, level))
          for level in RECALL_LEVELS),
    ]
    aupr_iv, p80, p90 = (Interval(float(point), *percentile_bounds(reps)) for point, reps in values)
    return PaperFigures(
        aupr=aupr_iv,
        precision_at_80_recall=p80,
        precision_at_90_recall=p90,
        questions=len(questions),
        answers=sum(len(q.answers) for q in questions),
        predictions=sum(len({t for t, _ in q.predictions if t}) for q in questions),
    )


def paper_metric(questions: Iterable[Question], *, replicates: int = 1000, seed: int = 0) -> PaperResult:
    """evaluate.py's AUPR, P@80%R and P@90%R per category and overall, with contract-bootstrap intervals."""
    questions = list(questions)
    if not questions:
        raise ValueError("no question to evaluate")
    contracts = sorted({q.contract for q in questions})
    categories = sorted({q.category for q in questions})
    contract_index = {c: i for i, c in enumerate(contracts)}
    category_index = {c: i for i, c in enumerate(categories)}
    cells = np.zeros((len(contracts), len(categories), len(THRESHOLDS), 3))
    for question in questions:
        cells[contract_index[question.contract], category_index[question.category]] += question_counts(question)
    indices = resample_indices(len(contracts), replicates=replicates, seed=seed)
    drawn = np.zeros((replicates, len(contracts)))
    np.add.at(drawn, (np.repeat(np.arange(replicates), len(contracts)), indices.ravel()), 1.0)
    per_category = {}
    for k, name in enumerate(categories):
        column = cells[:, k]
        replicate_counts = (drawn @ column.reshape(len(contracts), -1)).reshape(replicates, len(THRESHOLDS), 3)
        per_category[name] = _figures(column.sum(axis=0), replicate_counts,
                                      [q for q in questions if q.category == name])
    total = cells.sum(axis=1)
    overall_replicates = (drawn @ total.reshape(len(contracts), -1)).reshape(replicates, len(THRESHOLDS), 3)
    return PaperResult(
        overall=_figures(total.sum(axis=0), overall_replicates, questions),
        per_category=per_category,
        contracts=len(contracts),
        replicates=replicates,
        seed=seed,
    )
