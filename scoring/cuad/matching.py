"""One-to-one matching of extractions (rows) to reference spans (columns) by score.

Both matchers return the matched pairs as two index arrays ``(rows, cols)``,
sorted by row, and drop pairs whose score is 0: an extraction paired with a
span it shares no token with is no match at all, and leaving it unpaired gives
the same outcome (F1 0) while keeping "matched span" meaningful for display.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import lru_cache
from importlib.machinery import EXTENSION_SUFFIXES, ExtensionFileLoader
from importlib.util import module_from_spec, spec_from_loader
from pathlib import Path

import numpy as np

MATCHERS = ("hungarian", "greedy")

# scipy's solver, reached through a module attribute (so typed Any) on the fast path below.
_Solver = Callable[..., tuple[np.ndarray, np.ndarray]]


def _as_matrix(scores: np.ndarray) -> np.ndarray:
    matrix = np.asarray(scores, dtype=float)
    if matrix.ndim != 2:
        raise ValueError("scores must be a 2-D matrix (extractions x spans)")
    return matrix


def _empty() -> tuple[np.ndarray, np.ndarray]:
    return np.empty(0, dtype=np.intp), np.empty(0, dtype=np.intp)


@lru_cache(maxsize=1)
def _linear_sum_assignment() -> _Solver:
    """scipy's ``linear_sum_assignment``, loaded on first match (never with the URL config).

    ``import scipy.optimize`` costs ~0.4 s of CPU (it loads every solver, scipy.linalg and their docstrings) for
    the one function a grading process uses; that function is the whole of the extension module
    ``scipy.optimize._lsap``, which loads in ~10 ms by itself. So that module is loaded from its file (as
    ``scipy.optimize`` would load it, under the same name, so a later ``import scipy.optimize`` reuses it) and
    only if that fails (another scipy layout) is ``scipy.optimize`` imported. The function is the same object.
    """
    optimize = sys.modules.get("scipy.optimize")
    if optimize is not None:
        loaded: _Solver = optimize.linear_sum_assignment
        return loaded
    name = "scipy.optimize._lsap"
    module = sys.modules.get(name)
    try:
        if module is None:
            # local import: only scipy's folder, to load the solver's extension alone (the docstring says why)
            import scipy

            folder = Path(scipy.__file__).parent / "optimize"
            path = next(p for p in (folder / f"_lsap{suffix}" for suffix in EXTENSION_SUFFIXES) if p.is_file())
            loader = ExtensionFileLoader(name, str(path))
            spec = spec_from_loader(name, loader)
            if spec is None:
                raise ImportError(name)
            module = module_from_spec(spec)
            loader.exec_module(module)
            solver: _Solver = module.linear_sum_assignment
            sys.modules[name] = module
            return solver
        cached: _Solver = module.linear_sum_assignment
        return cached
    except (ImportError, OSError, StopIteration, AttributeError):
        # local import: scipy.optimize costs over 1 s to import; whole only when its extension will not load alone
        from scipy.optimize import linear_sum_assignment

        return linear_sum_assignment


def hungarian(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Maximum-total-score one-to-one assignment (scipy's Jonker-Volgenant solver)."""
    matrix = _as_matrix(scores)
    if matrix.size == 0:
        return _empty()
    rows, cols = _linear_sum_assignment()(matrix, maximize=True)
    keep = matrix[rows, cols] > 0
    return rows[keep].astype(np.intp), cols[keep].astype(np.intp)


def greedy(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Greedy assignment: pairs by score descending, ties by row then column; take a pair if both ends are free."""
    matrix = _as_matrix(scores)
    if matrix.size == 0:
        return _empty()
    n_rows, n_cols = matrix.shape
    row_idx, col_idx = np.nonzero(matrix > 0)
    # lexsort sorts by the last key first: score descending, then row, then column.
    order = np.lexsort((col_idx, row_idx, -matrix[row_idx, col_idx]))
    row_free = np.ones(n_rows, dtype=bool)
    col_free = np.ones(n_cols, dtype=bool)
    taken_rows: list[int] = []
    taken_cols: list[int] = []
    limit = min(n_rows, n_cols)
    for k in order:
        r, c = row_idx[k], col_idx[k]
        if row_free[r] and col_free[c]:
            row_free[r] = col_free[c] = False
            taken_rows.append(r)
            taken_cols.append(c)
            if len(taken_rows) == limit:
                break
    rows = np.asarray(taken_rows, dtype=np.intp)
    cols = np.asarray(taken_cols, dtype=np.intp)
    by_row = np.argsort(rows, kind="stable")
    return rows[by_row], cols[by_row]


def match(scores: np.ndarray, *, matcher: str) -> tuple[np.ndarray, np.ndarray]:
    """Dispatch to ``hungarian`` or ``greedy`` by name."""
    if matcher == "hungarian":
        return hungarian(scores)
    if matcher == "greedy":
        return greedy(scores)
    raise ValueError(f"unknown matcher {matcher!r}; expected one of {', '.join(MATCHERS)}")


def assignment_total(scores: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> float:
    """Sum of the scores of the matched pairs."""
    matrix = _as_matrix(scores)
    return float(matrix[rows, cols].sum()) if len(rows) else 0.0
