"""Agreement between two coders from their K x K table.

Notation follows Cohen (1960), "A coefficient of agreement for nominal scales",
Educational and Psychological Measurement 20(1), 37-46, doi:10.1177/001316446002000104:
p_o is the observed agreement, p_e the agreement expected by chance from each
coder's own marginals. Rows are the first coder, columns the second.

Every ``*_batch`` function takes tables of shape (..., K, K) (a bootstrap's
replicates, or one table) and returns ``(values, codes)`` where ``codes`` are
:class:`~irr_audit.metrics.reasons.Undefined` values decided from the integer
counts. The single-table functions wrap them and return :class:`Metric`.
"""

from __future__ import annotations

import numpy as np

from irr_audit.metrics.estimates import first_code, metric_from, safe_divide, with_normal_ci
from irr_audit.metrics.reasons import REASON_TEXT, Undefined
from irr_audit.metrics.result import Metric
from irr_audit.metrics.weights import agreement_classes, identity_weights

NO_UNITS = REASON_TEXT[Undefined.NO_UNITS]
ONE_CATEGORY = "pe = 1: both coders used one and the same category for every unit"

Batch = tuple[np.ndarray, np.ndarray]


def as_table(table: np.ndarray) -> np.ndarray:
    counts = np.asarray(table, dtype=np.int64)
    if counts.ndim != 2 or counts.shape[0] != counts.shape[1]:
        raise ValueError(f"an agreement table must be square, got shape {counts.shape}")
    return counts


def _margins(tables: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """n, row totals (first coder) and column totals (second coder), all integers."""
    rows = tables.sum(axis=-1)
    cols = tables.sum(axis=-2)
    return rows.sum(axis=-1), rows, cols


def _certain_chance(n: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """p_e = 1 exactly: sum_k row_k col_k == n^2 (both coders used one same category)."""
    return (n > 0) & ((rows * cols).sum(axis=-1) == n * n)


def _kappa_codes(n: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Why kappa is undefined for each table (0: it is defined), from the table's margins."""
    return first_code((n == 0, Undefined.NO_UNITS), (_certain_chance(n, rows, cols), Undefined.ONE_CATEGORY_USED))


def po_batch(tables: np.ndarray) -> Batch:
    n, _, _ = _margins(tables)
    diagonal = np.trace(tables, axis1=-2, axis2=-1)
    return safe_divide(diagonal, n), first_code((n == 0, Undefined.NO_UNITS))


def pe_batch(tables: np.ndarray) -> Batch:
    n, rows, cols = _margins(tables)
    return safe_divide((rows * cols).sum(axis=-1), n * n), first_code((n == 0, Undefined.NO_UNITS))


def kappa_batch(tables: np.ndarray, weights: np.ndarray | None = None) -> Batch:
    """Cohen's (weighted) kappa = (p_o - p_e) / (1 - p_e) for a batch of tables.

    Unweighted, the value is formed in exact integer arithmetic up to the one
    division: (n * trace - rows . cols) / (n^2 - rows . cols).
    """
    tables = np.asarray(tables, dtype=np.int64)
    n, rows, cols = _margins(tables)
    codes = _kappa_codes(n, rows, cols)
    if weights is not None:  # codes the weights cannot tell apart (the same value) are one class
        classes = agreement_classes(weights, tables.shape[-1])
        one_class = _certain_chance(n, rows @ classes, cols @ classes)
        codes = np.where((codes == 0) & one_class, np.int8(Undefined.ONE_WEIGHT_CLASS_USED), codes)
    if weights is None:
        chance = (rows * cols).sum(axis=-1)
        above_chance = n * np.trace(tables, axis1=-2, axis2=-1) - chance
        possible = n * n - chance
    else:
        # Both terms multiplied by n^2: n * sum w_ij n_ij - sum w_ij row_i col_j.
        above_chance = n * (tables * weights).sum(axis=(-2, -1)) - np.einsum("...i,ij,...j->...", rows, weights, cols)
        possible = n * n - np.einsum("...i,ij,...j->...", rows, weights, cols)
    values = np.where(codes == 0, safe_divide(above_chance, possible), np.nan)
    return values, codes


def scott_batch(tables: np.ndarray) -> Batch:
    """Scott's pi: p_e = sum_k pi_k^2 with pi_k = (row_k + col_k) / 2n (pooled marginals).

    Scott (1955), Public Opinion Quarterly 19(3), 321-325, doi:10.1086/266577.
    """
    tables = np.asarray(tables, dtype=np.int64)
    n, rows, cols = _margins(tables)
    pooled = rows + cols
    chance = (pooled * pooled).sum(axis=-1)  # = 4 n^2 p_e
    above_chance = 4 * n * np.trace(tables, axis1=-2, axis2=-1) - chance
    possible = 4 * n * n - chance
    codes = first_code((n == 0, Undefined.NO_UNITS), (possible == 0, Undefined.ONE_CATEGORY_USED))
    return np.where(codes == 0, safe_divide(above_chance, possible), np.nan), codes


def pabak_batch(tables: np.ndarray) -> Batch:
    """PABAK = (K p_o - 1) / (K - 1); 2 p_o - 1 for two categories.

    Byrt, Bishop & Carlin (1993), J Clin Epidemiol 46(5), 423-429,
    doi:10.1016/0895-4356(93)90018-V. For K > 2 this is the K-category form,
    identical to Brennan & Prediger (1981), doi:10.1177/001316448104100307.
    """
    tables = np.asarray(tables, dtype=np.int64)
    k = tables.shape[-1]
    n, _, _ = _margins(tables)
    diagonal = np.trace(tables, axis1=-2, axis2=-1)
    codes = first_code((np.full(n.shape, k < 2), Undefined.ONE_CATEGORY_DECLARED), (n == 0, Undefined.NO_UNITS))
    values = safe_divide(k * diagonal - n, n * (k - 1)) if k >= 2 else np.full(n.shape, np.nan)
    return np.where(codes == 0, values, np.nan), codes


def _two_by_two(tables: np.ndarray) -> tuple[np.ndarray, ...]:
    """Byrt et al.'s cells: a = both first category, d = both second, b = (1st, 2nd), c = (2nd, 1st)."""
    return tables[..., 0, 0], tables[..., 0, 1], tables[..., 1, 0], tables[..., 1, 1]


def prevalence_index_batch(tables: np.ndarray) -> Batch:
    """Prevalence index PI = (a - d) / n, 2 x 2 only (Byrt et al. 1993), signed."""
    tables = np.asarray(tables, dtype=np.int64)
    n, _, _ = _margins(tables)
    if tables.shape[-1] != 2:
        return np.full(n.shape, np.nan), np.full(n.shape, Undefined.NOT_TWO_CATEGORIES, np.int8)
    a, _, _, d = _two_by_two(tables)
    codes = first_code((n == 0, Undefined.NO_UNITS))
    return np.where(codes == 0, safe_divide(a - d, n), np.nan), codes


def bias_index_batch(tables: np.ndarray) -> Batch:
    """Bias index BI = (b - c) / n, 2 x 2 only (Byrt et al. 1993), signed."""
    tables = np.asarray(tables, dtype=np.int64)
    n, _, _ = _margins(tables)
    if tables.shape[-1] != 2:
        return np.full(n.shape, np.nan), np.full(n.shape, Undefined.NOT_TWO_CATEGORIES, np.int8)
    _, b, c, _ = _two_by_two(tables)
    codes = first_code((n == 0, Undefined.NO_UNITS))
    return np.where(codes == 0, safe_divide(b - c, n), np.nan), codes


def max_kappa_batch(tables: np.ndarray) -> Batch:
    """kappa_max = (p_o,max - p_e) / (1 - p_e), p_o,max = sum_k min(row_k, col_k) / n.

    The largest kappa the two coders' marginals allow: Cohen (1960), p. 42;
    Sim & Wright (2005), Physical Therapy 85(3), 257-268, doi:10.1093/ptj/85.3.257.
    """
    tables = np.asarray(tables, dtype=np.int64)
    n, rows, cols = _margins(tables)
    chance = (rows * cols).sum(axis=-1)
    best = np.minimum(rows, cols).sum(axis=-1)
    codes = _kappa_codes(n, rows, cols)
    return np.where(codes == 0, safe_divide(n * best - chance, n * n - chance), np.nan), codes


def specific_agreement_batch(tables: np.ndarray) -> Batch:
    """p_s(k) = 2 n_kk / (row_k + col_k), per category, shape (..., K).

    For 2 x 2 these are the positive and negative agreement of Cicchetti &
    Feinstein (1990), J Clin Epidemiol 43(6), 551-558, doi:10.1016/0895-4356(90)90159-M.
    """
    tables = np.asarray(tables, dtype=np.int64)
    _, rows, cols = _margins(tables)
    diagonal = np.diagonal(tables, axis1=-2, axis2=-1)
    used = rows + cols
    codes = first_code((used == 0, Undefined.CATEGORY_UNUSED))
    return np.where(codes == 0, safe_divide(2 * diagonal, used), np.nan), codes


def collapse_to_category(tables: np.ndarray, category: int) -> np.ndarray:
    """The 2 x 2 table of ``category`` (first) against all other categories (second)."""
    tables = np.asarray(tables, dtype=np.int64)
    n, rows, cols = _margins(tables)
    a = tables[..., category, category]
    b = rows[..., category] - a
    c = cols[..., category] - a
    d = n - a - b - c
    return np.stack([np.stack([a, b], -1), np.stack([c, d], -1)], -2)


def collapse_to_each_category(tables: np.ndarray) -> np.ndarray:
    """The 2 x 2 table of every category against the rest at once, (..., K, 2, 2): what
    ``collapse_to_category`` gives for each category, from the diagonal and the margins."""
    tables = np.asarray(tables, dtype=np.int64)
    n, rows, cols = _margins(tables)
    a = np.diagonal(tables, axis1=-2, axis2=-1)
    b = rows - a
    c = cols - a
    d = n[..., None] - a - b - c
    return np.stack([np.stack([a, b], -1), np.stack([c, d], -1)], -2)


# --- standard errors (point estimate only) -----------------------------------------


def fleiss_cohen_everitt_se(table: np.ndarray, weights: np.ndarray | None = None) -> tuple[float, float]:
    """Large-sample SE of (weighted) kappa, and its SE under H0: kappa = 0.

    Fleiss, Cohen & Everitt (1969), "Large sample standard errors of kappa and
    weighted kappa", Psychological Bulletin 72(5), 323-327, doi:10.1037/h0028106:

        var = [sum_ij p_ij (w_ij - (wbar_i. + wbar_.j)(1 - k))^2 - (k - p_e(1 - k))^2] / (n (1 - p_e)^2)
        var_0 = [sum_ij p_i. p_.j (w_ij - (wbar_i. + wbar_.j))^2 - p_e^2] / (n (1 - p_e)^2)

    with wbar_i. = sum_j p_.j w_ij and wbar_.j = sum_i p_i. w_ij. The caller has
    checked that kappa is defined (n > 0, p_e < 1).
    """
    counts = as_table(table)
    w = identity_weights(counts.shape[0]) if weights is None else np.asarray(weights, float)
    n = counts.sum()
    p = counts / n
    p_row, p_col = p.sum(axis=1), p.sum(axis=0)
    p_o = (w * p).sum()
    p_e = p_row @ w @ p_col
    kappa = (p_o - p_e) / (1 - p_e)
    wbar_row = w @ p_col
    wbar_col = p_row @ w
    spread = wbar_row[:, None] + wbar_col[None, :]
    var = ((p * (w - spread * (1 - kappa)) ** 2).sum() - (kappa - p_e * (1 - kappa)) ** 2) / (n * (1 - p_e) ** 2)
    var0 = ((np.outer(p_row, p_col) * (w - spread) ** 2).sum() - p_e**2) / (n * (1 - p_e) ** 2)
    return float(np.sqrt(max(var, 0.0))), float(np.sqrt(max(var0, 0.0)))


def scott_pi_se(table: np.ndarray) -> float:
    """SE of Scott's pi, Gwet (2014, ch. 5; irrCAC ``scott2.table``).

        var = [sum_kl p_kl (w_kl - (1 - pi)(pbar_k + pbar_l))^2 - (p_a - 2(1 - pi) p_e)^2] / (n (1 - p_e)^2)

    Gwet, K. L. (2014), Handbook of Inter-Rater Reliability, 4th ed., ISBN 978-0970806284.
    """
    counts = as_table(table)
    w = identity_weights(counts.shape[0])
    n = counts.sum()
    p = counts / n
    p_row, p_col = p.sum(axis=1), p.sum(axis=0)
    pooled = (p_row + p_col) / 2
    p_a = (w * p).sum()
    p_e = pooled @ w @ pooled
    pi = (p_a - p_e) / (1 - p_e)
    pbar = ((w @ p_col) + (w.T @ p_row)) / 2
    sum1 = (p * (w - (1 - pi) * (pbar[:, None] + pbar[None, :])) ** 2).sum()
    var = (sum1 - (p_a - 2 * (1 - pi) * p_e) ** 2) / (n * (1 - p_e) ** 2)
    return float(np.sqrt(max(var, 0.0)))


# --- one table in, Metric out ------------------------------------------------------


def observed_agreement(table: np.ndarray) -> Metric:
    """p_o = trace / n.

    >>> observed_agreement(np.array([[2, 1], [1, 16]])).value
    0.9
    """
    counts = as_table(table)
    n = int(counts.sum())
    if n == 0:
        return Metric.undefined(NO_UNITS)
    return Metric.of(np.trace(counts) / n)


def chance_agreement(table: np.ndarray) -> Metric:
    """p_e = sum_k (row_k / n)(col_k / n).

    >>> round(chance_agreement(np.array([[2, 1], [1, 16]])).value, 6)
    0.745
    """
    counts = as_table(table)
    n = int(counts.sum())
    if n == 0:
        return Metric.undefined(NO_UNITS)
    rows, cols = counts.sum(axis=1), counts.sum(axis=0)
    return Metric.of(int(rows @ cols) / n**2)


def chance_is_certain(table: np.ndarray) -> bool:
    """p_e = 1 exactly: both coders put every unit in one and the same category.

    Decided from the integer counts (row_k * col_k == n^2 for some k), never
    from a float comparison.
    """
    return bool(_certain_chance(*_margins(as_table(table))))


def _kappa_metric(counts: np.ndarray, weights: np.ndarray | None) -> Metric:
    n = int(counts.sum())
    if n == 0:
        return Metric.undefined(NO_UNITS)
    batch_value, code = kappa_batch(counts, weights)  # one table: 0-d arrays
    if int(code) == Undefined.ONE_CATEGORY_USED:
        return Metric.undefined(ONE_CATEGORY)
    if int(code) != Undefined.DEFINED:
        return Metric.undefined(REASON_TEXT[Undefined(int(code))])
    value = float(batch_value)
    se, se0 = fleiss_cohen_everitt_se(counts, weights)
    return with_normal_ci(Metric.of(value, extra={"se_h0": se0}), se)


def cohen_kappa(table: np.ndarray) -> Metric:
    """Cohen's kappa = (p_o - p_e) / (1 - p_e), undefined when p_e = 1 or n = 0.

    Carries the Fleiss-Cohen-Everitt (1969) SE, a 95% normal interval and, in
    ``extra["se_h0"]``, the SE under H0: kappa = 0.

    Worked example D (docs/statistics.md): po 0.90, pe 0.745, kappa 0.155 / 0.255.

    >>> round(cohen_kappa(np.array([[2, 1], [1, 16]])).value, 10)
    0.6078431373
    """
    return _kappa_metric(as_table(table), None)


def weighted_kappa(table: np.ndarray, weights: np.ndarray) -> Metric:
    """Cohen's (1968) weighted kappa with agreement weights w_kl (1 on the diagonal).

    SAS PROC FREQ documentation example (quoted in statsmodels'
    test_inter_rater.py): linear weights, kappa 0.4701.

    >>> from irr_audit.metrics.weights import linear_weights
    >>> round(weighted_kappa(np.array([[0, 4, 1], [0, 8, 0], [0, 1, 5]]), linear_weights(3)).value, 4)
    0.4701
    """
    return _kappa_metric(as_table(table), np.asarray(weights, dtype=float))


def scott_pi(table: np.ndarray) -> Metric:
    """Scott's (1955) pi with Gwet's (2014) SE.

    Worked example B of docs/statistics.md (identical marginals, so pi equals kappa = -1/19):

    >>> round(scott_pi(np.array([[18, 1], [1, 0]])).value, 6)
    -0.052632
    """
    counts = as_table(table)
    values, codes = scott_batch(counts)
    metric = metric_from(values, codes)
    return with_normal_ci(metric, scott_pi_se(counts) if metric.defined else None)


def pabak(table: np.ndarray) -> Metric:
    """Prevalence- and bias-adjusted kappa, 2 p_o - 1 for 2 x 2.

    Worked example B (docs/statistics.md): p_o = 0.90, so PABAK = 0.80.

    >>> round(pabak(np.array([[18, 1], [1, 0]])).value, 10)
    0.8
    """
    return metric_from(*pabak_batch(as_table(table)))


def prevalence_index(table: np.ndarray) -> Metric:
    """(a - d) / n for a 2 x 2 table; undefined with a reason for K != 2.

    >>> prevalence_index(np.array([[18, 1], [1, 0]])).value
    0.9
    """
    return metric_from(*prevalence_index_batch(as_table(table)))


def bias_index(table: np.ndarray) -> Metric:
    """(b - c) / n for a 2 x 2 table; undefined with a reason for K != 2.

    >>> bias_index(np.array([[8, 2], [1, 9]])).value
    0.05
    """
    return metric_from(*bias_index_batch(as_table(table)))


def max_kappa(table: np.ndarray) -> Metric:
    """Maximum kappa the marginals allow.

    Worked example A (docs/statistics.md): marginals 10/10 and 9/11 allow p_o,max = 0.95, so
    kappa_max = (0.95 - 0.5) / 0.5 = 0.9.

    >>> round(max_kappa(np.array([[8, 2], [1, 9]])).value, 10)
    0.9
    """
    return metric_from(*max_kappa_batch(as_table(table)))


def specific_agreement(table: np.ndarray) -> dict[int, Metric]:
    """Per-category specific agreement 2 n_kk / (row_k + col_k).

    Worked example D (docs/statistics.md): positive (urgent) 2*2/(3+3) = 0.667, negative 2*16/(17+17).

    >>> [round(m.value, 4) for m in specific_agreement(np.array([[2, 1], [1, 16]])).values()]
    [0.6667, 0.9412]
    """
    values, codes = specific_agreement_batch(as_table(table))
    return {k: metric_from(values[k], codes[k]) for k in range(len(values))}
