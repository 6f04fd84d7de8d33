"""Agreement weights w_kl in [0, 1] with w_kk = 1, over ALL declared categories.

Cohen (1968), "Weighted kappa", Psychological Bulletin 70(4), 213-220,
doi:10.1037/h0026256; Fleiss & Cohen (1973), Educational and Psychological
Measurement 33(3), 613-619, doi:10.1177/001316447303300309 (quadratic weights).
Positions are the categories' order in the rule, so an unused category still
widens the scale: weights never depend on which categories the data happen to use.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from irr_audit.rules.weights import WEIGHT_NAMES as WEIGHT_NAMES
from irr_audit.rules.weights import weights_problem as weights_problem


@lru_cache(maxsize=8)
def identity_weights(n_categories: int) -> np.ndarray:
    """w_kl = 1 if k == l else 0 (unweighted agreement). One read-only array per K: every
    coefficient of every bootstrap piece asks for it, and per-pattern sums are kept by it."""
    weights = np.eye(n_categories)
    weights.flags.writeable = False
    return weights


def linear_weights(n_categories: int) -> np.ndarray:
    """w_kl = 1 - |k - l| / (K - 1).

    >>> linear_weights(3).tolist()
    [[1.0, 0.5, 0.0], [0.5, 1.0, 0.5], [0.0, 0.5, 1.0]]
    """
    if n_categories < 2:
        return np.ones((n_categories, n_categories))
    k = np.arange(n_categories)
    return 1.0 - np.abs(k[:, None] - k[None, :]) / (n_categories - 1)


def quadratic_weights(n_categories: int) -> np.ndarray:
    """w_kl = 1 - ((k - l) / (K - 1))^2.

    >>> quadratic_weights(3).tolist()
    [[1.0, 0.75, 0.0], [0.75, 1.0, 0.75], [0.0, 0.75, 1.0]]
    """
    if n_categories < 2:
        return np.ones((n_categories, n_categories))
    k = np.arange(n_categories)
    return 1.0 - ((k[:, None] - k[None, :]) / (n_categories - 1)) ** 2


def quadratic_value_weights(values: np.ndarray) -> np.ndarray:
    """w_kl = 1 - (v_k - v_l)^2 / (v_max - v_min)^2 on the codes' numeric values.

    Gwet (2014) builds his quadratic weights from the category values when they
    are numbers; with equally spaced values this equals :func:`quadratic_weights`.
    """
    v = np.asarray(values, dtype=float)
    spread = v.max() - v.min() if v.size else 0.0
    if spread == 0:
        return np.ones((v.size, v.size))
    return 1.0 - ((v[:, None] - v[None, :]) / spread) ** 2


# --- the weights of Gwet (2014, ch. 3) and irrCAC, by name ------------------------------------


def _scaled_disagreement(d: np.ndarray) -> np.ndarray:
    """1 - d / max(d): a disagreement d_kl >= 0 (0 on the diagonal) as agreement weights."""
    top = d.max() if d.size else 0.0
    return np.ones_like(d) if top == 0 else 1.0 - d / top


def named_weights(name: str, values: np.ndarray) -> np.ndarray:
    """Gwet's weights on the categories' numbers x_k (their values, or positions 1..K), as irrCAC
    builds them (``weights.gen`` in the R package, ``irrCAC.weights`` in Python):

    - identity: 1 on the diagonal, 0 elsewhere;
    - linear: 1 - |x_k - x_l| / (x_max - x_min); quadratic: 1 - (x_k - x_l)^2 / (x_max - x_min)^2;
    - radical: 1 - sqrt|x_k - x_l| / sqrt(x_max - x_min);
    - ordinal: 1 - C(n_kl, 2) / max, n_kl = |k - l| + 1 on positions (values do not matter);
    - ratio: 1 - ((x_k - x_l) / (x_k + x_l))^2 / ((x_max - x_min) / (x_max + x_min))^2 (values > 0);
    - circular: 1 - sin^2(pi (x_k - x_l) / U) / max, U = x_max - x_min + 1;
    - bipolar: 1 - (x_k - x_l)^2 / ((x_k + x_l - 2 x_min)(2 x_max - x_k - x_l)) / max, off the diagonal.

    irrCAC's weighting vignette prints them for the categories 1:3:

    >>> named_weights("radical", np.array([1, 2, 3]))[0].round(7).tolist()
    [1.0, 0.2928932, 0.0]
    >>> named_weights("ordinal", np.array([1, 2, 3]))[0].round(7).tolist()
    [1.0, 0.6666667, 0.0]
    >>> named_weights("bipolar", np.array([1, 2, 3]))[0].round(7).tolist()
    [1.0, 0.6666667, 0.0]
    """
    weights = _named_matrix(name, np.asarray(values, dtype=float))
    if not np.isfinite(weights).all():  # a guard: the values' checks (rules.scale.value_problem) keep this away
        raise ValueError(f"{name} weights on the values {values!r} are not all finite numbers")
    return weights


def _named_matrix(name: str, x: np.ndarray) -> np.ndarray:
    k = x.size
    if name == "identity" or k < 2:
        return np.eye(k)
    diff = x[:, None] - x[None, :]
    spread = x.max() - x.min()
    if spread == 0:  # every code has one value: no weighting tells them apart (one class, see agreement_classes)
        return np.ones((k, k))
    if name == "linear":
        return 1.0 - np.abs(diff) / spread
    if name == "quadratic":
        return 1.0 - (diff / spread) ** 2
    if name == "radical":
        return 1.0 - np.sqrt(np.abs(diff)) / np.sqrt(spread)
    if name == "ordinal":
        steps = np.abs(np.arange(k)[:, None] - np.arange(k)[None, :]) + 1.0
        return _scaled_disagreement(steps * (steps - 1) / 2)
    if name == "ratio":
        if (x <= 0).any():
            raise ValueError("ratio weights need positive values (they divide by x_k + x_l)")
        return 1.0 - ((diff / (x[:, None] + x[None, :])) / (spread / (x.max() + x.min()))) ** 2
    if name == "circular":
        return _scaled_disagreement(np.sin(np.pi * diff / (spread + 1)) ** 2)
    if name == "bipolar":
        return _scaled_disagreement(_bipolar_disagreement(x))
    raise ValueError(f"unknown weights {name!r}: one of {', '.join(WEIGHT_NAMES)}")


def _bipolar_disagreement(x: np.ndarray) -> np.ndarray:
    """d_kl = (x_k - x_l)^2 / ((x_k + x_l - 2 x_min)(2 x_max - x_k - x_l)), and 0 where x_k = x_l.

    The formula is 0/0 for two codes that share the lowest or the highest value (irrCAC's
    bipolar.weights then gives NaN). Two codes with one value are one point of the scale: the
    limit of d_kl as x_l tends to x_k is 0 at the ends too, and between the ends the formula
    itself gives 0/positive = 0, as every other weighting gives weight 1 to a shared value.

    >>> _bipolar_disagreement(np.array([1.0, 2.0, 2.0])).tolist()
    [[0.0, 1.0, 1.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]
    """
    diff = x[:, None] - x[None, :]
    above, below = x - x.min(), x.max() - x  # each factor as a sum of two distances >= 0, not
    # x_k + x_l - 2 x_min, which rounds to 0 for 1 and the next float above it
    denominator = (above[:, None] + above[None, :]) * (below[:, None] + below[None, :])
    distinct = diff != 0  # then each factor is at least |x_k - x_l| > 0, so 0 <= d_kl <= 1
    d = np.zeros_like(diff)
    d[distinct] = diff[distinct] ** 2 / denominator[distinct]
    return d


def agreement_classes(weights: np.ndarray | None, n_categories: int) -> np.ndarray:
    """(K, C) membership of the classes of codes the weights cannot tell apart (w_kl = 1, as two
    codes with the same value get): chance agreement is certain exactly when the codes used all
    lie in one class, so each weighted coefficient decides "undefined" from the counts of these
    classes. Without weights, or with no such pair, every code is its own class.

    >>> agreement_classes(named_weights("linear", np.array([1.0, 1.0, 2.0])), 3).tolist()
    [[1, 0], [1, 0], [0, 1]]
    """
    if weights is None:
        return np.eye(n_categories, dtype=np.int64)
    first = [int(np.flatnonzero(row == 1.0)[0]) for row in np.asarray(weights)]  # the class's first code
    labels = sorted(set(first))
    return np.array([[int(f == label) for label in labels] for f in first], dtype=np.int64).reshape(n_categories, -1)
