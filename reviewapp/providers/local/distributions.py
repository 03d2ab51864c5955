"""Grade distributions: renormalising, concentration, and the local heuristic's mapping.

Pure functions (numpy only). "Confidence" here is how concentrated a distribution
is; it is NOT a probability that the grade is correct. P(useful) has one
definition, ``scoring.stats.calibration.p_useful`` (P(2) + P(3) of the
distribution renormalised over grades 0..3); it is re-exported here for the
callers that grade through the provider layer.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported by the functions using it: pages import the provider layer, compute nothing
    import numpy as np

# The local heuristic maps a cosine similarity to P(grade 0..3) by a fixed
# cumulative-logit (ordinal) rule: P(grade >= k) = sigmoid((cos - THRESHOLDS[k-1]) / SCALE).
# Increasing thresholds make every P(grade = k) non-negative and the four sum to 1.
# Chosen once from MiniLM's usual ranges (unrelated text ~0.0-0.2, same topic
# ~0.3-0.5, close paraphrase > 0.55), never fitted to any benchmark label.
LOCAL_MAPPING_VERSION = "cumulative-logit-v1"
LOCAL_THRESHOLDS = (0.20, 0.35, 0.50)
LOCAL_SCALE = 0.05


def renormalise(weights: Sequence[float]) -> tuple[tuple[float, ...], float]:
    """Scale non-negative weights to sum 1; return (probabilities, captured mass = the original sum)."""
    # local import: numpy costs ~0.25 s to import; commands import this module and make no vectors
    import numpy as np

    arr = np.asarray(weights, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"weights must be finite and non-negative, got {list(weights)!r}")
    mass = float(arr.sum())
    if mass <= 0:
        raise ValueError("weights sum to zero: no probability mass on any label")
    return tuple(float(x) for x in arr / mass), mass


def from_top_logprobs(top: Sequence[Mapping], labels: Sequence[str]) -> tuple[tuple[float, ...], float]:
    """Distribution over ``labels`` from one position's ``top_logprobs`` (OpenAI shape: token, logprob).

    Token spellings that differ only by surrounding white space (" 2" vs "2") are the
    same label; their probabilities add. Returns renormalised probabilities and the
    captured mass (the share of the model's probability that fell on the labels).
    """
    index = {label: i for i, label in enumerate(labels)}
    weights = [0.0] * len(labels)
    for entry in top:
        token = str(entry.get("token", "")).strip()
        if token in index:
            weights[index[token]] += math.exp(float(entry["logprob"]))
    return renormalise(weights)


def concentration(probs: Sequence[float]) -> float:
    """1 - normalised Shannon entropy: 1 for a one-hot distribution, 0 for uniform. Not P(correct)."""
    # local import: numpy costs ~0.25 s to import; commands import this module and make no vectors
    import numpy as np

    arr = np.asarray(probs, dtype=np.float64)
    nz = arr[arr > 0]
    entropy = float(-(nz * np.log(nz)).sum())
    return float(max(0.0, 1.0 - entropy / math.log(arr.size))) if arr.size > 1 else 1.0


def local_grade_probs(cosines: Sequence[float] | np.ndarray) -> np.ndarray:
    """The fixed local-heuristic mapping: cosine similarities (n,) -> P(grade 0..3) (n, 4). See module note."""
    # local import: numpy costs ~0.25 s to import; commands import this module and make no vectors
    import numpy as np

    cos = np.asarray(cosines, dtype=np.float64)[:, None]
    at_least = 1.0 / (1.0 + np.exp(-(cos - np.asarray(LOCAL_THRESHOLDS)[None, :]) / LOCAL_SCALE))  # (n, 3)
    ones = np.ones((cos.shape[0], 1))
    zeros = np.zeros((cos.shape[0], 1))
    cumulative = np.hstack([ones, at_least, zeros])  # P(>=0)=1 ... P(>=4)=0
    probs = cumulative[:, :-1] - cumulative[:, 1:]
    return np.clip(probs, 0.0, 1.0)
