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
