"""Which agreement weights a rule (or the caller) may choose: Gwet's (2014, ch. 3) names, as irrCAC
has them, or a custom K x K matrix. The matrices themselves are built in irr_audit.metrics.weights."""

from __future__ import annotations

import numpy as np

WEIGHT_NAMES = ("identity", "linear", "quadratic", "ordinal", "radical", "ratio", "circular", "bipolar")


def weights_problem(matrix: np.ndarray, n_categories: int) -> str | None:
    """Why a custom weights matrix cannot be used, or None. Agreement weights are K x K, symmetric,
    1 on the diagonal and in [0, 1) off it: an off-diagonal 1 would make two categories the
    same, and the chance terms could then reach 1 with more than one category in use."""
    if matrix.shape != (n_categories, n_categories):
        shape = " x ".join(str(size) for size in matrix.shape) or "a single number"
        return f"it is {shape}, not {n_categories} x {n_categories} (one row and one column per code)"
    if not np.isfinite(matrix).all():
        return "it holds a value that is not a finite number"
    if not np.array_equal(np.diag(matrix), np.ones(n_categories)):
        return "its diagonal is not all 1 (a code agrees fully with itself)"
    if not np.array_equal(matrix, matrix.T):
        return "it is not symmetric (w[k][l] must equal w[l][k])"
    off = matrix[~np.eye(n_categories, dtype=bool)]
    if off.size and (off.min() < 0 or off.max() >= 1):
        return "a weight off the diagonal is outside [0, 1) (0: full disagreement; below 1: two codes differ)"
    return None


def named_weights_problem(name: str, numbers: np.ndarray) -> str | None:
    """Why the weights ``name`` cannot be built on the categories' numbers, or None."""
    if name not in WEIGHT_NAMES:
        return f"{name!r} is not a weighting: use one of {', '.join(WEIGHT_NAMES)}"
    if name != "identity" and numbers.size >= 2 and numbers.max() == numbers.min():
        return "the codes' values are all equal: no weights can tell them apart"
    if name == "ratio" and (numbers <= 0).any():
        return "ratio weights need every code's value above 0 (they divide by v_k + v_l)"
    return None
