"""Krippendorff's alpha on the coincidence matrix, any number of coders, missing codes.

Krippendorff, K. (2011), "Computing Krippendorff's Alpha-Reliability",
Annenberg School for Communication Departmental Papers 43,
https://repository.upenn.edu/asc_papers/43 ; Hayes & Krippendorff (2007),
Communication Methods and Measures 1(1), 77-89, doi:10.1080/19312450709336664.

Symbols follow the 2011 paper:

- n_uk: number of codes k in unit u; m_u = sum_k n_uk its pairable values;
- coincidences o_ck = sum_u (n_uc n_uk - [c = k] n_uc) / (m_u - 1), units with m_u >= 2;
- n_c = sum_k o_ck (an integer: the pairable codes of category c), n.. = sum_c n_c;
- alpha = 1 - D_o / D_e = 1 - (n.. - 1) sum_ck o_ck delta_ck / sum_ck n_c n_k delta_ck.

Difference functions delta_ck: nominal [c != k]; ordinal
(sum_{g=c}^{k} n_g - (n_c + n_k) / 2)^2 on the coincidence marginals;
interval (v_c - v_k)^2; ratio ((v_c - v_k) / (v_c + v_k))^2 on the codes' values.
"""

from __future__ import annotations

import functools

import numpy as np

from irr_audit.metrics.estimates import first_code, metric_from, safe_divide, with_normal_ci
from irr_audit.metrics.multi_coder import RatingCounts
from irr_audit.metrics.patterns import Patterns, compress, unit_weights
from irr_audit.metrics.reasons import Undefined
from irr_audit.metrics.result import Metric
from irr_audit.metrics.weights import agreement_classes
from irr_audit.rules.scale import Scale, value_problem

Batch = tuple[np.ndarray, np.ndarray]


def scale_values(scale: Scale | str, n_categories: int, values: object = None) -> np.ndarray | None:
    """The numeric value of each category for interval/ratio rules, checked.

    Raises ValueError for a scale that needs values without them (the rule
    loader rejects such rules earlier; this is the numeric core's own guard).
    """
    scale = Scale(scale)
    if not scale.needs_values:
        return None
    if values is None:
        raise ValueError(f"a {scale.value} scale needs a numeric value for every category")
    array = np.asarray(values, dtype=float)
    if array.shape != (n_categories,) or not np.all(np.isfinite(array)):
        raise ValueError(f"a {scale.value} scale needs {n_categories} finite category values, got {values!r}")
    if scale is Scale.RATIO and np.any(array < 0):
        raise ValueError("a ratio scale needs non-negative category values")
    problems = [f"{value:g}: {problem}" for value in array.tolist() if (problem := value_problem(value))]
    if problems:
        raise ValueError(f"a category value cannot be used ({problems[0]})")
    return array


def pairable_totals(patterns: Patterns, units: np.ndarray) -> np.ndarray:
    """n_c = sum_u units_u n_uc over the pairable units (m_u >= 2): (..., K), integer-valued."""
    return patterns.category_totals(np.asarray(units, dtype=np.float64) * (patterns.n_valid >= 2))


def pairable_sizes(patterns: Patterns) -> np.ndarray:
    """The distinct numbers of valid codes m_u >= 2 among the patterns (at most the number of coders)."""
    present = np.bincount(patterns.n_valid, minlength=2)
    return np.flatnonzero(present[2:]) + 2


# The coincidences weigh a unit's pairs by 1 / (m_u - 1). Summing those fractions unit by unit
# rounds at every step; instead the whole-number pair counts are summed over the units of each
# size m (exact in float64 below 2^53) and divided by m - 1 once per size, so that alpha stays
# correct to the last digit or two whatever the number of units.


def coincidence_matrix(patterns: Patterns, units: np.ndarray | None = None) -> np.ndarray:
    """o_ck summed over units (weights ``units``, default the observed counts), (..., K, K).

    Each pattern adds (n_uc n_uk - [c = k] n_uc) / (m_u - 1) on the cells of its own codes only
    (at most coders^2 cells), so the memory is that of the result and the weights."""
    units = patterns.counts if units is None else units
    weights = np.asarray(units, dtype=np.float64)
    k = patterns.n_categories
    categories, counts = patterns.slots
    out = np.zeros((*weights.shape[:-1], k * k))
    for size in pairable_sizes(patterns):
        pairs_of_size = np.zeros_like(out)
        for first in range(categories.shape[1]):
            for second in range(categories.shape[1]):
                pairs = counts[:, first] * counts[:, second] - (counts[:, first] if first == second else 0)
                cells = patterns.grouping(
                    ("coincidence", int(size), first, second),
                    functools.partial(_coincidence_cells, patterns, int(size), first, second),
                    k * k,
                )
                pairs_of_size += cells.sums(weights * pairs)  # whole numbers: exact
        out += pairs_of_size / (size - 1)
    return out.reshape(*weights.shape[:-1], k, k)


def _coincidence_cells(patterns: Patterns, size: int, first: int, second: int) -> np.ndarray:
    """Each pattern's cell c * K + k of the coincidence matrix, c its code in slot ``first`` and k
    the one in slot ``second``, when it has ``size`` valid codes and both slots are used; -1 otherwise."""
    categories, counts = patterns.slots
    return np.where(
        (patterns.n_valid == size) & (counts[:, first] * counts[:, second] > 0),
        categories[:, first] * patterns.n_categories + categories[:, second],
        -1,
    )


def _diagonal_cells(patterns: Patterns, size: int, slot: int) -> np.ndarray:
    """Each pattern's code in ``slot`` when it has ``size`` valid codes; -1 otherwise."""
    return np.where(patterns.n_valid == size, patterns.slots[0][:, slot], -1)


def coincidence_diagonal(patterns: Patterns, units: np.ndarray) -> np.ndarray:
    """o_kk alone, (..., K): sum_u units_u n_uk (n_uk - 1) / (m_u - 1) over the pairable units."""
    weights = np.asarray(units, dtype=np.float64)
    categories, counts = patterns.slots
    out = np.zeros((*weights.shape[:-1], patterns.n_categories))
    for size in pairable_sizes(patterns):
        pairs_of_size = np.zeros_like(out)
        for slot in range(categories.shape[1]):
            cells = patterns.grouping(
                ("diagonal", int(size), slot),
                functools.partial(_diagonal_cells, patterns, int(size), slot),
                patterns.n_categories,
            )
            r = counts[:, slot]
            pairs_of_size += cells.sums(weights * (r * (r - 1)))  # whole numbers: exact
        out += pairs_of_size / (size - 1)
    return out


def nominal_disagreement(patterns: Patterns, units: np.ndarray) -> np.ndarray:
    """The coincidences off the diagonal, summed, (...,): sum_u units_u (m_u^2 - sum_k n_uk^2) / (m_u - 1)."""
    weights = np.asarray(units, dtype=np.float64)
    m = patterns.n_valid
    _, counts = patterns.slots
    unlike_pairs = (m * m - (counts * counts).sum(axis=1)).astype(np.float64)
    out = np.zeros(weights.shape[:-1])
    for size in pairable_sizes(patterns):
        out += (weights @ np.where(m == size, unlike_pairs, 0.0)) / (size - 1)  # whole numbers: exact
    return out


def difference_batch(scale: Scale, n_c: np.ndarray, values: np.ndarray | None) -> np.ndarray:
    """delta_ck for each replicate's marginals n_c (B, K): (B, K, K)."""
    k = n_c.shape[-1]
    index = np.arange(k)
    if scale is Scale.NOMINAL:
        delta = (index[:, None] != index[None, :]).astype(float)
        return np.broadcast_to(delta, (*n_c.shape[:-1], k, k))
    if scale is Scale.ORDINAL:
        cumulative = np.cumsum(n_c, axis=-1).astype(float)
        low = np.minimum(index[:, None], index[None, :])
        high = np.maximum(index[:, None], index[None, :])
        # sum_{g=low}^{high} n_g - (n_low + n_high) / 2
        between = cumulative[..., high] - cumulative[..., low] + (n_c[..., low] - n_c[..., high]) / 2
        return between**2
    v = np.asarray(values, dtype=float)
    if scale is Scale.INTERVAL:
        delta = (v[:, None] - v[None, :]) ** 2
    else:
        delta = safe_divide(v[:, None] - v[None, :], v[:, None] + v[None, :]) ** 2
        delta = np.where(np.isnan(delta), 0.0, delta)  # v_c = v_k = 0
    return np.broadcast_to(delta, (*n_c.shape[:-1], k, k))


def _distinct_used(n_c: np.ndarray, scale: Scale, values: np.ndarray | None) -> np.ndarray:
    """How many distinct values the pairable codes take (exact, from integer counts)."""
    used = n_c > 0
    if scale.needs_values and values is not None:
        _, group = np.unique(values, return_inverse=True)
        grouped = np.zeros((*n_c.shape[:-1], group.max() + 1), dtype=np.int64)
        for g in range(group.max() + 1):
            grouped[..., g] = n_c[..., group == g].sum(axis=-1)
        return (grouped > 0).sum(axis=-1)
    return used.sum(axis=-1)


def alpha_batch(
    patterns: Patterns, units: np.ndarray, scale: Scale | str = Scale.NOMINAL, values: np.ndarray | None = None
) -> Batch:
    """Krippendorff's alpha for a batch of unit weights (B, P)."""
    scale = Scale(scale)
    units = unit_weights(units)
    n_c = pairable_totals(patterns, units)  # integer-valued
    n_total = n_c.sum(axis=-1)
    delta = difference_batch(scale, n_c, values)
    if scale is Scale.NOMINAL:  # delta is 1 off the diagonal: the coincidences off it, summed
        observed = nominal_disagreement(patterns, units)
    else:
        observed = (coincidence_matrix(patterns, units) * delta).sum(axis=(-2, -1))
    expected = np.einsum("bc,bck,bk->b", n_c.astype(float), delta, n_c.astype(float))
    codes = first_code(
        (n_total == 0, Undefined.NO_PAIRABLE_VALUES),
        (_distinct_used(n_c, scale, values) <= 1, Undefined.NO_VALUE_VARIATION),
    )
    alpha = 1 - (n_total - 1) * safe_divide(observed, expected)
    return np.where(codes == 0, alpha, np.nan), codes


def gwet_alpha_se(patterns: Patterns, scale: Scale, values: np.ndarray | None) -> float | None:
    """Gwet's (2014, ch. 5; irrCAC ``krippen.alpha.raw``) linearised SE of alpha.

    Alpha is written with agreement weights w = 1 - delta / max(delta), fixed in
    advance, so this applies to the nominal, interval and ratio metrics; the
    ordinal metric depends on the data's own marginals (use the bootstrap).
    """
    if scale is Scale.ORDINAL:
        return None
    k = patterns.n_categories
    delta = difference_batch(scale, np.zeros(k), values)
    return alpha_se_with_weights(patterns, 1 - delta / delta.max())


def alpha_se_with_weights(patterns: Patterns, w: np.ndarray) -> float | None:
    """Gwet's linearised SE of alpha written with agreement weights ``w`` fixed in advance."""
    keep = patterns.n_valid >= 2
    kept = patterns.select(keep)
    m, f = kept.n_valid, kept.counts
    n = int(f.sum())
    if n < 2:
        return None
    rated = RatingCounts(kept, m)  # the same sums over each unit's codes as Gwet's coefficients
    r_mean = (f @ m) / n
    eps = 1 / (f @ m)
    sum_q = rated.weighted_pairs(w) - m  # sum_k r_ik (r*_ik - 1)
    pa_prime = (f @ (sum_q / (r_mean * (m - 1)))) / n
    pi = rated.totals(f) / (n * r_mean)
    p_e = pi @ w @ pi
    p_a = (1 - eps) * pa_prime + eps
    if p_e >= 1:
        return None
    alpha_prime = (pa_prime - p_e) / (1 - p_e)
    # centred on p_a (not p_a'), as irrCAC's krippen.alpha.raw: its README prints SE 0.14557 on cac.raw4raters
    pa_i = sum_q / (r_mean * (m - 1)) - p_a * (m - r_mean) / r_mean
    alpha_i = (pa_i - p_e) / (1 - p_e)
    pi_w = (w @ pi + w.T @ pi) / 2
    pe_i = rated.at_codes(pi_w) / r_mean - p_e * (m - r_mean) / r_mean
    x = alpha_i - 2 * (1 - alpha_prime) * (pe_i - p_e) / (1 - p_e)
    var = float(f @ (x - alpha_prime) ** 2) / (n * (n - 1))
    return float(np.sqrt(max(var, 0.0)))


def weighted_alpha_batch(patterns: Patterns, units: np.ndarray, weights: np.ndarray) -> Batch:
    """Alpha with the distance 1 - w_kl of agreement weights (Gwet 2014, ch. 4; irrCAC
    ``krippen.alpha.raw(weights=)``): 1 - (n - 1) sum o_kl (1 - w_kl) / sum n_k n_l (1 - w_kl).
    Off the diagonal the weights are below 1, so the expected disagreement is 0 exactly when
    one category holds every pairable value."""
    units = unit_weights(units)
    n_c = pairable_totals(patterns, units)
    n_total = n_c.sum(axis=-1)
    delta = 1.0 - np.asarray(weights, dtype=float)
    observed = (coincidence_matrix(patterns, units) * delta).sum(axis=(-2, -1))
    expected = np.einsum("bc,ck,bk->b", n_c.astype(float), delta, n_c.astype(float))
    codes = first_code(
        (n_total == 0, Undefined.NO_PAIRABLE_VALUES),
        ((n_c > 0).sum(axis=-1) <= 1, Undefined.NO_VALUE_VARIATION),
        ((n_c @ agreement_classes(weights, n_c.shape[-1]) > 0).sum(axis=-1) <= 1, Undefined.ONE_WEIGHT_CLASS_USED),
    )
    alpha = 1 - (n_total - 1) * safe_divide(observed, expected)
    return np.where(codes == 0, alpha, np.nan), codes


def weighted_alpha(patterns: Patterns, weights: np.ndarray) -> Metric:
    """Weighted alpha with Gwet's SE.

    irrCAC's weighting vignette, cac.raw4raters with quadratic weights: 0.84911, SE 0.12913.

    >>> from irr_audit.metrics.weights import named_weights
    >>> data = np.array([[0, 0, -1, 0], [1, 1, 2, 1], [2, 2, 2, 2], [2, 2, 2, 2],
    ...                  [1, 1, 1, 1], [0, 1, 2, 3], [3, 3, 3, 3], [0, 0, 1, 0],
    ...                  [1, 1, 1, 1], [-1, 4, 4, 4], [-1, -1, 0, 0], [-1, -1, 2, -1]])
    >>> a = weighted_alpha(compress(data, 5), named_weights("quadratic", np.arange(1, 6)))
    >>> round(a.value, 5), round(a.se, 5)
    (0.84911, 0.12913)
    """
    value, code = weighted_alpha_batch(patterns, patterns.counts, weights)
    metric = metric_from(value[0], code[0])
    if not metric.defined:
        return metric
    return with_normal_ci(metric, alpha_se_with_weights(patterns, np.asarray(weights, dtype=float)))


def krippendorff_alpha(
    codes: np.ndarray | Patterns,
    n_categories: int | None = None,
    scale: Scale | str = Scale.NOMINAL,
    values: object = None,
) -> Metric:
    """Krippendorff's alpha; Gwet's SE where the metric is fixed (not ordinal).

    Krippendorff (2011), the 4 coders x 12 units example with missing values:
    nominal 0.743 (and ordinal 0.815, interval 0.849, ratio 0.797).

    >>> data = np.array([[0, 0, -1, 0], [1, 1, 2, 1], [2, 2, 2, 2], [2, 2, 2, 2],
    ...                  [1, 1, 1, 1], [0, 1, 2, 3], [3, 3, 3, 3], [0, 0, 1, 0],
    ...                  [1, 1, 1, 1], [-1, 4, 4, 4], [-1, -1, 0, 0], [-1, -1, 2, -1]])
    >>> round(krippendorff_alpha(data, 5).value, 3)
    0.743
    """
    if isinstance(codes, Patterns):
        patterns = codes
    else:
        if n_categories is None:
            raise ValueError("n_categories is required with a codes array")
        patterns = compress(codes, n_categories)
    scale = Scale(scale)
    checked = scale_values(scale, patterns.n_categories, values)
    value, code = alpha_batch(patterns, patterns.counts, scale, checked)
    metric = metric_from(value[0], code[0], level=scale.value)
    if not metric.defined:
        return metric
    return with_normal_ci(metric, gwet_alpha_se(patterns, scale, checked))
