"""Agreement between human raters: Cohen's kappa, raw agreement, Krippendorff's alpha.

Population: the items both raters (kappa) or at least two raters (alpha) have
graded. ``None`` (or NaN) means "not graded" and the item is left out and
counted, never read as a category.

- Raw agreement: share of items on which the two grades are equal.
- Cohen's kappa: (p_o - p_e) / (1 - p_e), written in its weighted form
  1 - sum(w * observed) / sum(w * expected), with w = 1 - [i == j]
  (unweighted) or w = (i - j)^2 (quadratic, for ordinal grades), where i, j are
  positions in the declared category list. The category list matters for the
  quadratic weights: grades 0-3 are always positioned 0..3 even when a grade is
  absent from the data (scikit-learn, given no ``labels``, would renumber the
  observed grades). Undefined (None) when the expected disagreement is 0.
- Landis-Koch bands, as in ARCHITECTURE.md: < 0 poor, 0-0.20 slight,
  0.21-0.40 fair, 0.41-0.60 moderate, 0.61-0.80 substantial, 0.81-1 almost
  perfect. The printed bands are two-decimal, so each band's upper bound is
  inclusive and a value between them (e.g. 0.205) belongs to the next band.
- Krippendorff's alpha (ordinal): 1 - D_o / D_e from the coincidence matrix of
  pairable values (units with at least two grades), with the ordinal distance
  delta(c, k)^2 = (sum of n_g for g from c to k - (n_c + n_k) / 2)^2. Any
  number of raters, missing grades allowed. Undefined (None) when D_e = 0.
- Prevalence of a grade: its share of all the pair's grades (both raters
  pooled), pi_k = (row total_k + column total_k) / 2n.
- Gwet's AC1 (nominal) and AC2 (weighted; Gwet 2008, "Computing inter-rater
  reliability and its variance in the presence of high agreement", and the
  irrCAC documentation): (p_a - p_e) / (1 - p_e) with p_a = sum w_kl p_kl and
  p_e = T_w / (q (q - 1)) * sum pi_k (1 - pi_k), agreement weights w = [k == l]
  (AC1) or w = 1 - (k - l)^2 / (q - 1)^2 (quadratic AC2), T_w the sum of the
  weights, q the number of declared categories. Chance agreement falls as one
  grade dominates, where kappa's rises: AC1 is the prevalence-robust figure.
- PABAK (prevalence- and bias-adjusted kappa, Byrt, Bishop and Carlin 1993):
  (q p_o - 1) / (q - 1), i.e. 2 p_o - 1 for yes/no.
- The kappa paradox (Feinstein and Cicchetti 1990): raw agreement high and
  kappa low because one grade is so common that kappa's chance agreement is
  high; ``kappa_paradox_note`` says so in one line.

Intervals (``kappa_interval``, ``alpha_interval``): percentile bootstrap
resampling units (``scoring.stats.bootstrap.unit_bootstrap``): contracts for
the CUAD audit's candidates, items (or query families) for review pools. Each
unit carries its confusion table (kappa) or its share of the coincidence
matrix (alpha), which add up over units, so a replicate's statistic is the
statistic of the summed tables of its drawn units. A resample in which both
raters used one and the same category (kappa) or in which every pairable
grade is the same (alpha) has no expected disagreement: the statistic is
undefined there, that replicate is left out of the percentile and counted
(``UnitBootstrap.undefined``), and the caveat says how many. Units without a
paired item (kappa) or without a pairable item (alpha) take no part in the
draw.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from scoring.stats.bootstrap import DEFAULT_LEVEL, UnitBootstrap, unit_bootstrap, unit_codes

GRADES = (0, 1, 2, 3)

LANDIS_KOCH_BANDS = (
    (0.20, "slight"),
    (0.40, "fair"),
    (0.60, "moderate"),
    (0.80, "substantial"),
    (1.00, "almost perfect"),
)


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _paired(
    a: Sequence[object], b: Sequence[object], categories: Sequence[object]
) -> tuple[np.ndarray, np.ndarray, int]:
    if len(a) != len(b):
        raise ValueError(f"rater a graded {len(a)} items but rater b {len(b)}")
    position = {category: i for i, category in enumerate(categories)}
    index_a: list[int] = []
    index_b: list[int] = []
    excluded = 0
    for item, (x, y) in enumerate(zip(a, b, strict=True)):
        if _missing(x) or _missing(y):
            excluded += 1
            continue
        for rater, value in (("a", x), ("b", y)):
            if value not in position:
                raise ValueError(f"item {item}: rater {rater}'s grade {value!r} is not one of {list(categories)}")
        index_a.append(position[x])
        index_b.append(position[y])
    return np.array(index_a, dtype=int), np.array(index_b, dtype=int), excluded


def confusion_table(a: Sequence[object], b: Sequence[object], *, categories: Sequence[object] = GRADES) -> np.ndarray:
    """Counts of (rater a's grade, rater b's grade) over items both graded; rows a, columns b."""
    index_a, index_b, _ = _paired(a, b, categories)
    k = len(categories)
    return np.bincount(index_a * k + index_b, minlength=k * k).reshape(k, k)


def raw_agreement(a: Sequence[object], b: Sequence[object], *, categories: Sequence[object] = GRADES) -> float | None:
    """Share of items both graded on which the two grades are equal; None if no item was graded by both."""
    index_a, index_b, _ = _paired(a, b, categories)
    if index_a.size == 0:
        return None
    return float(np.mean(index_a == index_b))


def _kappa_from_table(table: np.ndarray, weights: Literal["quadratic"] | None) -> float | None:
    n = table.sum()
    if n == 0:
        return None
    k = table.shape[0]
    i, j = np.indices((k, k))
    if weights is None:
        w = (i != j).astype(float)
    elif weights == "quadratic":
        w = ((i - j) ** 2).astype(float)
    else:
        raise ValueError(f"weights must be None or 'quadratic', got {weights!r}")
    expected = np.outer(table.sum(axis=1), table.sum(axis=0)) / n
    expected_disagreement = float((w * expected).sum())
    if expected_disagreement == 0.0:
        return None
    return 1.0 - float((w * table).sum()) / expected_disagreement


def cohen_kappa(
    a: Sequence[object],
    b: Sequence[object],
    *,
    weights: Literal["quadratic"] | None = None,
    categories: Sequence[object] = GRADES,
) -> float | None:
    """Cohen's kappa of two raters over items both graded (unweighted, or quadratic-weighted).

    Unit: dimensionless, 1 = perfect agreement, 0 = chance. None when
    undefined (no shared item, or both raters used one and the same category).
    """
    return _kappa_from_table(confusion_table(a, b, categories=categories), weights)


def landis_koch_band(kappa: float | None) -> str | None:
    """Landis-Koch label of a kappa (see the module docstring); None for an undefined kappa."""
    if kappa is None or math.isnan(kappa):
        return None
    # Round away float noise so that a kappa of exactly 0.2 computed as 0.20000000000000004 stays "slight".
    value = round(kappa, 10)
    if value < 0:
        return "poor"
    for upper, band in LANDIS_KOCH_BANDS:
        if value <= upper:
            return band
    return "almost perfect"


@dataclass(frozen=True)
class PairAgreement:
    """Agreement of two raters over the items both graded."""

    n: int
    excluded: int
    raw_agreement: float | None
    kappa: float | None
    kappa_quadratic: float | None
    band: str | None
    band_quadratic: str | None
    table: np.ndarray
    agreements: int = 0  # items on which the two grades are equal
    ac1: float | None = None  # Gwet's AC1, nominal
    ac2_quadratic: float | None = None  # Gwet's AC2, quadratic weights
    pabak: float | None = None
    prevalence: tuple[tuple[object, float], ...] = ()  # (grade, share of all the pair's grades)


def _agreement_weights(q: int, weights: Literal["quadratic"] | None) -> np.ndarray:
    """Agreement weights (1 on the diagonal): identity, or 1 - (k - l)^2 / (q - 1)^2."""
    if weights is None:
        return np.eye(q)
    if weights == "quadratic":
        i, j = np.indices((q, q))
        return 1.0 - ((i - j) ** 2) / float(max(q - 1, 1) ** 2)
    raise ValueError(f"weights must be None or 'quadratic', got {weights!r}")


def gwet_of_tables(tables: np.ndarray, weights: Literal["quadratic"] | None = None) -> np.ndarray:
    """Gwet's AC1 (or AC2 with quadratic weights) of each (q, q) table in a (r, q, q) stack; NaN where undefined."""
    tables = np.asarray(tables, dtype=float)
    q = tables.shape[-1]
    w = _agreement_weights(q, weights)
    n = tables.sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        p_a = (w * tables).sum(axis=(1, 2)) / n
        pi = (tables.sum(axis=2) + tables.sum(axis=1)) / (2.0 * n[:, None])
        p_e = w.sum() / (q * (q - 1)) * (pi * (1.0 - pi)).sum(axis=1) if q > 1 else np.ones_like(n)
        value = (p_a - p_e) / (1.0 - p_e)
    return np.where((n > 0) & (q > 1) & (p_e < 1.0), value, np.nan)


def _defined(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def gwet_ac1(
    a: Sequence[object],
    b: Sequence[object],
    *,
    weights: Literal["quadratic"] | None = None,
    categories: Sequence[object] = GRADES,
) -> float | None:
    """Gwet's AC1 of two raters (AC2 with ``weights="quadratic"``) over items both graded; None if none."""
    table = confusion_table(a, b, categories=categories)
    return _defined(float(gwet_of_tables(table[None], weights)[0]))


def pabak(a: Sequence[object], b: Sequence[object], *, categories: Sequence[object] = GRADES) -> float | None:
    """Prevalence- and bias-adjusted kappa, (q p_o - 1) / (q - 1); None if no item was graded by both."""
    observed = raw_agreement(a, b, categories=categories)
    q = len(categories)
    if observed is None or q < 2:
        return None
    return (q * observed - 1.0) / (q - 1)


def prevalence(table: np.ndarray, categories: Sequence[object]) -> tuple[tuple[object, float], ...]:
    """Each grade's share of all the grades in a (q, q) pair table (both raters pooled); () if empty."""
    table = np.asarray(table)
    n = table.sum()
    if n == 0:
        return ()
    shares = (table.sum(axis=0) + table.sum(axis=1)) / (2.0 * n)
    return tuple((category, float(share)) for category, share in zip(categories, shares, strict=True))


# Raw agreement at least this high with kappa at most this low reads as the kappa paradox.
PARADOX_RAW_AGREEMENT = 0.70
PARADOX_KAPPA = 0.40


def kappa_paradox_note(
    *,
    n: int,
    agreements: int,
    kappa: float | None,
    ac1: float | None,
    prevalence: Sequence[tuple[object, float]],
    kappa_name: str = "kappa",
    ac1_name: str = "AC1",
) -> str:
    """One line when raw agreement is high and kappa low (or undefined); '' otherwise.

    "5 of 6 agree and kappa 0.000: one grade (no, 83% of grades) is so common
    that chance agreement is high; AC1 0.80 is robust to that."
    """
    if n == 0 or agreements / n < PARADOX_RAW_AGREEMENT or not prevalence:
        return ""
    if kappa is not None and kappa > PARADOX_KAPPA:
        return ""
    grade, share = max(prevalence, key=lambda pair: pair[1])
    shown = "undefined" if kappa is None else f"{kappa:.3f}"
    robust = "" if ac1 is None else f"; {ac1_name} {ac1:.2f} is robust to that"
    return (f"{agreements} of {n} agree and {kappa_name} {shown}: one grade ({grade}, {share:.0%} of grades) "
            f"is so common that chance agreement is high{robust}.")


def pair_agreement(a: Sequence[object], b: Sequence[object], *, categories: Sequence[object] = GRADES) -> PairAgreement:
    """Raw agreement, kappa (unweighted, quadratic) with Landis-Koch bands, Gwet's AC1/AC2, PABAK, prevalence."""
    _, _, excluded = _paired(a, b, categories)
    table = confusion_table(a, b, categories=categories)
    kappa = _kappa_from_table(table, None)
    kappa_q = _kappa_from_table(table, "quadratic")
    n = int(table.sum())
    return PairAgreement(
        n=n,
        excluded=excluded,
        raw_agreement=float(np.trace(table) / n) if n else None,
        kappa=kappa,
        kappa_quadratic=kappa_q,
        band=landis_koch_band(kappa),
        band_quadratic=landis_koch_band(kappa_q),
        table=table,
        agreements=int(np.trace(table)),
        ac1=_defined(float(gwet_of_tables(table[None])[0])),
        ac2_quadratic=_defined(float(gwet_of_tables(table[None], "quadratic")[0])),
        pabak=None if n == 0 or len(categories) < 2 else (len(categories) * float(np.trace(table)) / n - 1.0)
        / (len(categories) - 1),
        prevalence=prevalence(table, categories),
    )


def krippendorff_alpha_ordinal(reliability_data: Sequence[Sequence[float | None]]) -> float | None:
    """Krippendorff's alpha, ordinal metric, for any number of raters with missing grades.

    ``reliability_data`` is raters x units (one row per rater); None/NaN = not
    graded. Values must be orderable (grades 0-3). Units with fewer than two
    grades are not pairable and drop out. None when undefined (fewer than two
    pairable values, or no variation at all).
    """
    rows = [list(row) for row in reliability_data]
    if not rows:
        return None
    n_units = len(rows[0])
    if any(len(row) != n_units for row in rows):
        raise ValueError("every rater row must have one entry per unit")
    observed = sorted({v for row in rows for v in row if v is not None and not math.isnan(v)})
    position = {v: i for i, v in enumerate(observed)}
    k = len(observed)
    if k == 0:
        return None
    # counts[u, c]: how many raters gave unit u the value c.
    counts = np.zeros((n_units, k))
    for row in rows:
        for unit, value in enumerate(row):
            if value is not None and not math.isnan(value):
                counts[unit, position[value]] += 1
    m = counts.sum(axis=1)
    pairable = m >= 2
    counts, m = counts[pairable], m[pairable]
    if counts.size == 0:
        return None
    coincidence = np.einsum("uc,uk->ck", counts / (m - 1)[:, None], counts)
    coincidence -= np.diag((counts / (m - 1)[:, None]).sum(axis=0))
    n_c = coincidence.sum(axis=1)
    n = n_c.sum()
    cumulative = np.concatenate([[0.0], np.cumsum(n_c)])
    lo = np.minimum.outer(np.arange(k), np.arange(k))
    hi = np.maximum.outer(np.arange(k), np.arange(k))
    between = cumulative[hi + 1] - cumulative[lo]
    delta = (between - (n_c[:, None] + n_c[None, :]) / 2.0) ** 2
    disagreement_observed = float((coincidence * delta).sum())
    disagreement_expected = float((np.outer(n_c, n_c) * delta).sum()) / (n - 1)
    if disagreement_expected == 0.0:
        return None
    alpha: float = 1.0 - disagreement_observed / disagreement_expected
    return alpha


def _weights(k: int, weights: Literal["quadratic"] | None) -> np.ndarray:
    i, j = np.indices((k, k))
    if weights is None:
        different: np.ndarray = i != j
        return different.astype(float)
    if weights == "quadratic":
        return ((i - j) ** 2).astype(float)
    raise ValueError(f"weights must be None or 'quadratic', got {weights!r}")


def kappa_of_tables(tables: np.ndarray, weights: Literal["quadratic"] | None = None) -> np.ndarray:
    """Cohen's kappa of each (k, k) confusion table in a (r, k, k) stack; NaN where undefined."""
    tables = np.asarray(tables, dtype=float)
    w = _weights(tables.shape[-1], weights)
    n = tables.sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = np.einsum("ri,rj->rij", tables.sum(axis=2), tables.sum(axis=1)) / n[:, None, None]
        expected_disagreement = (w * expected).sum(axis=(1, 2))
        observed_disagreement = (w * tables).sum(axis=(1, 2))
        kappa = 1.0 - observed_disagreement / expected_disagreement
    return np.where((n > 0) & (expected_disagreement > 0), kappa, np.nan)


def _unit_tables(
    a: Sequence[object], b: Sequence[object], units: Sequence[Hashable], categories: Sequence[object]
) -> tuple[np.ndarray, int]:
    """Per-unit confusion tables (n_units, k, k) over items both graded, and how many such items there are."""
    if len(units) != len(a):
        raise ValueError(f"rater a graded {len(a)} items but {len(units)} unit labels were given")
    index_a, index_b, _ = _paired(a, b, categories)
    kept_units = [u for u, x, y in zip(units, a, b, strict=True) if not (_missing(x) or _missing(y))]
    code, n_units = unit_codes(kept_units)
    k = len(categories)
    tables = np.bincount(code * k * k + index_a * k + index_b, minlength=n_units * k * k).reshape(n_units, k, k)
    return tables, int(index_a.size)


def kappa_interval(
    a: Sequence[object],
    b: Sequence[object],
    units: Sequence[Hashable],
    *,
    weights: Literal["quadratic"] | None = None,
    categories: Sequence[object] = GRADES,
    unit: str,
    observation: str = "item",
    replicates: int,
    seed: int,
    level: float = DEFAULT_LEVEL,
) -> UnitBootstrap:
    """Cohen's kappa (unweighted or quadratic) of two raters with a percentile interval resampling ``units``.

    Population: items both raters graded; ``units[i]`` is item i's unit (its
    contract, its query family, or the item itself).
    """
    tables, observations = _unit_tables(a, b, units, categories)
    name = "Cohen's kappa" if weights is None else "Cohen's kappa, quadratic"
    return unit_bootstrap(
        tables, lambda t: kappa_of_tables(t, weights), name=name, unit=unit, observation=observation,
        observations=observations, undefined_when="both raters using one and the same category",
        replicates=replicates, seed=seed, level=level,
    )


def raw_agreement_of_tables(tables: np.ndarray) -> np.ndarray:
    """Share of items on the diagonal of each (k, k) table in a (r, k, k) stack; NaN for an empty table."""
    tables = np.asarray(tables, dtype=float)
    n = tables.sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, np.trace(tables, axis1=1, axis2=2) / n, np.nan)


def raw_agreement_interval(
    a: Sequence[object],
    b: Sequence[object],
    units: Sequence[Hashable],
    *,
    categories: Sequence[object] = GRADES,
    unit: str,
    observation: str = "item",
    replicates: int,
    seed: int,
    level: float = DEFAULT_LEVEL,
) -> UnitBootstrap:
    """Raw agreement of two raters with a percentile interval resampling ``units`` (same draw as kappa's)."""
    tables, observations = _unit_tables(a, b, units, categories)
    return unit_bootstrap(
        tables, raw_agreement_of_tables, name="raw agreement", unit=unit, observation=observation,
        observations=observations, undefined_when="no item graded by both", replicates=replicates, seed=seed,
        level=level,
    )


def gwet_interval(
    a: Sequence[object],
    b: Sequence[object],
    units: Sequence[Hashable],
    *,
    weights: Literal["quadratic"] | None = None,
    categories: Sequence[object] = GRADES,
    unit: str,
    observation: str = "item",
    replicates: int,
    seed: int,
    level: float = DEFAULT_LEVEL,
) -> UnitBootstrap:
    """Gwet's AC1 (or quadratic AC2) with a percentile interval resampling ``units`` (same draws as kappa's)."""
    tables, observations = _unit_tables(a, b, units, categories)
    name = "Gwet's AC1" if weights is None else "Gwet's AC2, quadratic"
    return unit_bootstrap(
        tables, lambda t: gwet_of_tables(t, weights), name=name, unit=unit, observation=observation,
        observations=observations, undefined_when="no item graded by both", replicates=replicates, seed=seed,
        level=level,
    )


def _ordinal_delta(n_c: np.ndarray) -> np.ndarray:
    """Ordinal squared distances (r, k, k) from category totals (r, k)."""
    k = n_c.shape[-1]
    cumulative = np.concatenate([np.zeros((n_c.shape[0], 1)), np.cumsum(n_c, axis=1)], axis=1)
    lo = np.minimum.outer(np.arange(k), np.arange(k))
    hi = np.maximum.outer(np.arange(k), np.arange(k))
    between = cumulative[:, hi + 1] - cumulative[:, lo]
    delta: np.ndarray = (between - (n_c[:, :, None] + n_c[:, None, :]) / 2.0) ** 2
    return delta


def alpha_of_coincidences(coincidence: np.ndarray) -> np.ndarray:
    """Krippendorff's ordinal alpha of each (k, k) coincidence matrix in a (r, k, k) stack; NaN where undefined."""
    o = np.asarray(coincidence, dtype=float)
    n_c = o.sum(axis=2)
    n = n_c.sum(axis=1)
    delta = _ordinal_delta(n_c)
    observed = (o * delta).sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = np.einsum("rc,rk,rck->r", n_c, n_c, delta) / (n - 1)
        alpha = 1.0 - observed / expected
    return np.where((n > 1) & (expected > 0), alpha, np.nan)


def alpha_interval(
    reliability_data: Sequence[Sequence[float | None]],
    units: Sequence[Hashable],
    *,
    unit: str,
    replicates: int,
    seed: int,
    level: float = DEFAULT_LEVEL,
) -> UnitBootstrap:
    """Krippendorff's ordinal alpha (raters x items) with a percentile interval resampling ``units``.

    ``units[j]`` is item j's unit (the item itself, or its query family).
    Population: items with at least two grades (pairable); the others
    contribute nothing and a unit with none of them takes no part in the draw.
    """
    rows = [list(row) for row in reliability_data]
    n_items = len(units)
    if any(len(row) != n_items for row in rows):
        raise ValueError(f"every rater row must have one entry per item ({n_items} unit labels given)")
    observed = sorted({v for row in rows for v in row if v is not None and not math.isnan(v)})
    position = {v: i for i, v in enumerate(observed)}
    k = max(len(observed), 1)
    counts = np.zeros((n_items, k))
    for row in rows:
        for item, value in enumerate(row):
            if value is not None and not math.isnan(value):
                counts[item, position[value]] += 1
    m = counts.sum(axis=1)
    pairable = m >= 2
    counts, m = counts[pairable], m[pairable]
    share = counts / (m - 1)[:, None]
    per_item = np.einsum("uc,uk->uck", share, counts) - np.einsum("uc,ck->uck", share, np.eye(k))
    code, n_units = unit_codes([u for u, keep in zip(units, pairable, strict=True) if keep])
    per_unit = np.zeros((n_units, k, k))
    np.add.at(per_unit, code, per_item)
    return unit_bootstrap(
        per_unit, alpha_of_coincidences, name="Krippendorff's alpha (ordinal)", unit=unit,
        observation="pairable item", observations=int(pairable.sum()),
        undefined_when="every pairable grade the same", replicates=replicates, seed=seed, level=level,
    )
