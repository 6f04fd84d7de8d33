"""Agreement among any number of coders, with missing codes: Gwet's framework.

Gwet, K. L. (2014), Handbook of Inter-Rater Reliability, 4th ed., Advanced
Analytics, ISBN 978-0970806284 (chapters 2-5), as implemented in his R package
irrCAC (``agree.coeff3.raw.r``). Symbols follow the book:

- r_ik: number of coders who put unit i in category k; r_i = sum_k r_ik;
- r*_ik = sum_l w_kl r_il (weighted counts; w = identity when unweighted);
- p_a = (1/n') sum_{i: r_i >= 2} sum_k r_ik (r*_ik - 1) / (r_i (r_i - 1)),
  n' the units with two or more codes (the percent agreement, Fleiss' P-bar);
- pi_k = (1/n) sum_i r_ik / r_i over the n units with at least one code.

Missing codes (Gwet 2014, ch. 5): a unit's agreement uses the codes it has;
units with a single code add nothing to p_a but do inform the classification
probabilities pi_k. Units without any code are dropped.

Coefficients differ only in the chance agreement p_e:

- Fleiss (1971):   p_e = sum_kl w_kl pi_k pi_l             doi:10.1037/h0031619
- Conger (1980):   p_e = sum_kl w_kl (pbar_k pbar_l - s2_kl / r) from each coder's
                   own classification probabilities p_gk     doi:10.1037/0033-2909.88.2.322
- Gwet AC1/AC2:    p_e = T_w / (K (K - 1)) sum_k pi_k (1 - pi_k)   (T_w = sum of weights)
                   Gwet (2008), BJMSP 61(1), 29-48, doi:10.1348/000711006X126600
- Brennan-Prediger (1981): p_e = T_w / K^2                   doi:10.1177/001316448104100307

Standard errors are Gwet's linearised variances,
var = (1 / (n (n - 1))) sum_i (x_i - coefficient)^2, from per-unit terms x_i.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from irr_audit.metrics.estimates import first_code, metric_from, safe_divide, with_normal_ci
from irr_audit.metrics.patterns import Patterns, compress, unit_weights
from irr_audit.metrics.reasons import Undefined
from irr_audit.metrics.result import Metric
from irr_audit.metrics.weights import agreement_classes, identity_weights

Batch = tuple[np.ndarray, np.ndarray]


@dataclass(frozen=True)
class RatingCounts:
    """Per-pattern quantities of Gwet's notation; ``units`` weights every sum.

    r_ik is kept without its zeros (``patterns.slots``: each pattern's distinct codes and
    how many coders gave each), so nothing here grows with patterns x categories."""

    patterns: Patterns
    m: np.ndarray  # r_i, (P,)
    # p_a|i by weights matrix (kept with the matrix itself): the same for every chunk of replicates
    _agreement: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, patterns: Patterns) -> RatingCounts:
        rated = patterns if patterns.n_valid.all() else patterns.select(patterns.n_valid >= 1)
        return cls(rated, rated.n_valid)

    @property
    def n_categories(self) -> int:
        return self.patterns.n_categories

    def totals(self, units: np.ndarray) -> np.ndarray:
        """sum_i units_i r_ik, (B, K)."""
        return self.patterns.category_totals(units)

    def at_codes(self, per_category: np.ndarray) -> np.ndarray:
        """sum_k r_ik x_k for a vector x over the categories, (P,)."""
        categories, counts = self.patterns.slots
        return (counts * np.asarray(per_category, dtype=np.float64)[categories]).sum(axis=1)  # a pad has count 0

    def weighted_pairs(self, weights: np.ndarray) -> np.ndarray:
        """sum_kl r_ik w_kl r_il for each pattern, (P,): over its codes, at most coders^2 terms."""
        categories, counts = self.patterns.slots
        if weights is identity_weights(self.n_categories):  # the codes of a pattern differ: sum_k r_ik^2
            return (counts * counts).sum(axis=1).astype(np.float64)
        total = np.zeros(len(categories))
        for first in range(categories.shape[1]):
            for second in range(categories.shape[1]):
                total += counts[:, first] * counts[:, second] * weights[categories[:, first], categories[:, second]]
        return total

    def agreement_per_unit(self, weights: np.ndarray) -> np.ndarray:
        """p_a|i = sum_k r_ik (r*_ik - 1) / (r_i (r_i - 1)); 0 for units with one code."""
        known = self._agreement.get(id(weights))
        if known is not None and known[0] is weights:
            return known[1]
        sum_q = self.weighted_pairs(weights) - self.m
        agreement = np.where(self.m >= 2, safe_divide(sum_q, self.m * (self.m - 1)), 0.0)
        self._agreement[id(weights)] = (weights, agreement)
        return agreement


def _as_weights(units: np.ndarray) -> np.ndarray:
    return unit_weights(units)


def percent_agreement_batch(counts: RatingCounts, units: np.ndarray, weights: np.ndarray | None = None) -> Batch:
    """p_a (Fleiss' P-bar when nothing is missing) for a batch of unit weights."""
    w = identity_weights(counts.n_categories) if weights is None else weights
    units = _as_weights(units)
    n_paired = units @ (counts.m >= 2)
    p_a = safe_divide(units @ counts.agreement_per_unit(w), n_paired)
    codes = first_code((n_paired == 0, Undefined.NO_PAIRED_UNITS))
    return np.where(codes == 0, p_a, np.nan), codes


def classification_probabilities(counts: RatingCounts, units: np.ndarray) -> np.ndarray:
    """pi_k = (1/n) sum_i r_ik / r_i, shape (B, K)."""
    units = _as_weights(units)
    n = units.sum(axis=1)
    return safe_divide(counts.totals(units / counts.m), n[:, None])  # sum_i units_i r_ik / r_i


def _categories_used(counts: RatingCounts, units: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """How many categories the codes use; with weights, how many classes of codes the weights
    tell apart (agreement_classes)."""
    totals = counts.totals(_as_weights(units))
    if weights is not None:
        totals = totals @ agreement_classes(weights, counts.n_categories)
    return (totals > 0).sum(axis=1)


def _certain_chance_codes(
    counts: RatingCounts, units: np.ndarray, weights: np.ndarray | None
) -> tuple[tuple[np.ndarray, Undefined], tuple[np.ndarray, Undefined]]:
    """The conditions under which p_e = 1 exactly: one category used, or (weighted) one class of
    codes the weights cannot tell apart."""
    return (
        (_categories_used(counts, units) <= 1, Undefined.ONE_CATEGORY_USED),
        (_categories_used(counts, units, weights) <= 1, Undefined.ONE_WEIGHT_CLASS_USED),
    )


def _chance_corrected(p_a: np.ndarray, p_e: np.ndarray, codes: np.ndarray) -> Batch:
    return np.where(codes == 0, safe_divide(p_a - p_e, 1 - p_e), np.nan), codes


def fleiss_chance(counts: RatingCounts, units: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    pi = classification_probabilities(counts, units)
    w = identity_weights(counts.n_categories) if weights is None else weights
    return np.einsum("bk,kl,bl->b", pi, w, pi)


def fleiss_batch(counts: RatingCounts, units: np.ndarray, weights: np.ndarray | None = None) -> Batch:
    """Fleiss' kappa (weighted with agreement weights); undefined when no unit has two codes or
    one category is all there is. Off the diagonal weights are below 1 (weights_problem), so
    p_e = 1 exactly when one category is all there is."""
    p_a, codes = percent_agreement_batch(counts, units, weights)
    codes = first_code((codes != 0, Undefined.NO_PAIRED_UNITS), *_certain_chance_codes(counts, units, weights))
    return _chance_corrected(p_a, fleiss_chance(counts, units, weights), codes)


def _coder_probabilities(counts: RatingCounts, units: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """p_gk = n_gk / n_g for each coder, (B, r, K), and whether the coder coded anything."""
    rows = counts.patterns.rows
    units = _as_weights(units)
    k = counts.n_categories
    n_gk = np.stack(
        [
            counts.patterns.grouping(("coder", coder), functools.partial(_column, rows, coder), k).sums(units)
            for coder in range(rows.shape[1])
        ],
        axis=1,
    )  # (B, r, K)
    n_g = n_gk.sum(axis=2)
    return safe_divide(n_gk, n_g[:, :, None]), n_g > 0


def _column(rows: np.ndarray, at: int) -> np.ndarray:
    return rows[:, at]


def conger_chance(counts: RatingCounts, units: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """p_e = sum_kl w_kl (pbar_k pbar_l - s2_kl / r)
    = sum_kl w_kl [(sum_g p_gk)(sum_g p_gl) - sum_g p_gk p_gl] / (r (r - 1)).

    That is, the mean over ordered pairs of distinct coders of sum_kl w_kl p_gk p_hl.
    Coders with no code in the data are left out of r.
    """
    p, active = _coder_probabilities(counts, units)
    p = np.where(active[:, :, None], p, 0.0)
    r = active.sum(axis=1)
    total = p.sum(axis=1)
    if weights is None:
        pairs = (total**2 - (p**2).sum(axis=1)).sum(axis=1)
    else:
        pairs = np.einsum("bk,kl,bl->b", total, weights, total) - np.einsum("bgk,kl,bgl->b", p, weights, p)
    return safe_divide(pairs, r * (r - 1))


def conger_batch(counts: RatingCounts, units: np.ndarray, weights: np.ndarray | None = None) -> Batch:
    p_a, codes = percent_agreement_batch(counts, units, weights)
    codes = first_code((codes != 0, Undefined.NO_PAIRED_UNITS), *_certain_chance_codes(counts, units, weights))
    return _chance_corrected(p_a, conger_chance(counts, units, weights), codes)


def gwet_chance(counts: RatingCounts, units: np.ndarray, weights: np.ndarray) -> np.ndarray:
    k = counts.n_categories
    pi = classification_probabilities(counts, units)
    return weights.sum() * (pi * (1 - pi)).sum(axis=1) / (k * (k - 1))


def gwet_batch(counts: RatingCounts, units: np.ndarray, weights: np.ndarray | None = None) -> Batch:
    """Gwet's AC1 (identity weights) or AC2 (agreement weights)."""
    w, p_a, codes = _weighted_agreement(counts, units, weights)
    if counts.n_categories < 2:
        return np.full(codes.shape, np.nan), codes
    return _chance_corrected(p_a, gwet_chance(counts, units, w), codes)


def brennan_prediger_batch(counts: RatingCounts, units: np.ndarray, weights: np.ndarray | None = None) -> Batch:
    w, p_a, codes = _weighted_agreement(counts, units, weights)
    k = counts.n_categories
    if k < 2:
        return np.full(codes.shape, np.nan), codes
    return _chance_corrected(p_a, np.full(p_a.shape, w.sum() / k**2), codes)


def _weighted_agreement(
    counts: RatingCounts, units: np.ndarray, weights: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The weights, p_a and the undefined codes shared by AC1/AC2 and Brennan-Prediger:
    undefined with fewer than two declared categories or no unit with two codes."""
    k = counts.n_categories
    w = identity_weights(k) if weights is None else weights
    p_a, codes = percent_agreement_batch(counts, units, w)
    codes = first_code(
        (np.full(codes.shape, k < 2), Undefined.ONE_CATEGORY_DECLARED), (codes != 0, Undefined.NO_PAIRED_UNITS)
    )
    return w, p_a, codes


def per_category_fleiss_batch(counts: RatingCounts, units: np.ndarray) -> Batch:
    """Fleiss' kappa of each category against the rest (binary collapse), shape (B, K).

    Fleiss (1971) eq. for kappa_j; here through the collapsed two-category data,
    which with missing codes follows the same Gwet convention as the overall kappa.
    """
    units = _as_weights(units)
    m = counts.m
    paired = m >= 2
    # A unit's share of agreeing pairs on k-or-not: 1 where it has no code k, and
    # 1 + 2 r_ik (r_ik - m) / (m (m - 1)) where it has (r_ik (r_ik - 1) + (m - r_ik)(m - r_ik - 1) agreeing pairs).
    categories, codes_given = counts.patterns.slots
    n_paired = units @ paired
    agreeing = np.repeat(n_paired[:, None], counts.n_categories, axis=1)
    for slot, grouping in enumerate(counts.patterns.slot_groupings):
        r = codes_given[:, slot]
        correction = np.where(paired, safe_divide(2.0 * r * (r - m), m * (m - 1)), 0.0)
        agreeing += grouping.sums(units * correction)
    p_a = safe_divide(agreeing, n_paired[:, None])
    pi = classification_probabilities(counts, units)
    p_e = pi**2 + (1 - pi) ** 2
    used = counts.totals(units)
    everywhere = (units @ m)[:, None] - used
    codes = first_code(
        ((n_paired == 0)[:, None], Undefined.NO_PAIRED_UNITS),
        (used == 0, Undefined.CATEGORY_UNUSED),
        (everywhere == 0, Undefined.ONE_CATEGORY_USED),
    )
    return _chance_corrected(p_a, p_e, codes)


# --- Gwet's linearised variances (point estimate only) ---------------------------


def _linearised_se(counts: RatingCounts, x: np.ndarray, coefficient: float) -> float | None:
    f = counts.patterns.counts
    n = int(f.sum())
    if n < 2:
        return None
    var = float(f @ (x - coefficient) ** 2) / (n * (n - 1))
    return float(np.sqrt(max(var, 0.0)))


def _unit_terms(counts: RatingCounts, weights: np.ndarray, p_e: float) -> np.ndarray:
    """(n / n') (p_a|i - p_e [r_i >= 2]) / (1 - p_e): Gwet's per-unit coefficient."""
    f = counts.patterns.counts
    n, n_paired = f.sum(), f @ (counts.m >= 2)
    p_a_i = counts.agreement_per_unit(weights)
    return (n / n_paired) * (p_a_i - p_e * (counts.m >= 2)) / (1 - p_e)


def fleiss_se(counts: RatingCounts, kappa: float, weights: np.ndarray | None = None) -> float | None:
    w = identity_weights(counts.n_categories) if weights is None else weights
    f = counts.patterns.counts
    pi = classification_probabilities(counts, f)[0]
    p_e = float(pi @ w @ pi)
    pi_w = (w @ pi + w.T @ pi) / 2
    p_e_i = counts.at_codes(pi_w) / counts.m
    x = _unit_terms(counts, w, p_e) - 2 * (1 - kappa) * (p_e_i - p_e) / (1 - p_e)
    return _linearised_se(counts, x, kappa)


def fleiss_null_se(counts: RatingCounts) -> float | None:
    """SE of Fleiss' kappa under H0: kappa = 0, every unit coded by the same m coders.

    Fleiss, Nee & Landis (1979), Psychological Bulletin 86(5), 974-977,
    doi:10.1037/0033-2909.86.5.974 (correcting Fleiss 1971):
    se_0 = sqrt(2 / (n m (m - 1))) sqrt((sum p_j q_j)^2 - sum p_j q_j (q_j - p_j)) / sum p_j q_j.
    """
    sizes = np.asarray(counts.m)  # one size for every unit, compared without np.unique (its first call loads numpy.ma)
    if sizes.size == 0 or sizes[0] < 2 or (sizes != sizes[0]).any():
        return None
    m = int(sizes[0])
    f = counts.patterns.counts
    n = int(f.sum())
    p = counts.totals(f) / (n * m)
    pq = p * (1 - p)
    if pq.sum() == 0:
        return None
    inner = pq.sum() ** 2 - (pq * ((1 - p) - p)).sum()
    return float(np.sqrt(2 / (n * m * (m - 1))) * np.sqrt(max(inner, 0.0)) / pq.sum())


def conger_se(counts: RatingCounts, kappa: float, weights: np.ndarray | None = None) -> float | None:
    w = identity_weights(counts.n_categories) if weights is None else weights
    f = counts.patterns.counts
    n = f.sum()
    rows = counts.patterns.rows
    p_all, active_all = _coder_probabilities(counts, f)
    active = active_all[0]
    rows = rows[:, active]
    p = p_all[0][active]  # (r, K)
    r = p.shape[0]
    n_g = ((rows >= 0) * f[:, None]).sum(axis=0)
    p_e = float(conger_chance(counts, f, weights)[0])
    a = p.sum(axis=0)[None, :] - p  # a_gk = r pbar_k - p_gk
    b = a @ w  # b_gl = sum_k a_gk w_kl
    c = np.einsum("gk,kl,gl->g", a, w, p)
    coded = rows >= 0
    b_at_code = np.where(coded, b[np.arange(r)[None, :], np.where(coded, rows, 0)], 0.0)
    lam = (n / n_g)[None, :] * (b_at_code - (coded - n_g[None, :] / n) * c[None, :])
    p_e_i = lam.sum(axis=1) / (r * (r - 1))
    x = _unit_terms(counts, w, p_e) - 2 * (1 - kappa) * (p_e_i - p_e) / (1 - p_e)
    return _linearised_se(counts, x, kappa)


def gwet_se(counts: RatingCounts, ac: float, weights: np.ndarray | None = None) -> float | None:
    k = counts.n_categories
    w = identity_weights(k) if weights is None else weights
    f = counts.patterns.counts
    pi = classification_probabilities(counts, f)[0]
    scale = w.sum() / (k * (k - 1))
    p_e = float(scale * (pi * (1 - pi)).sum())
    p_e_i = scale * counts.at_codes(1 - pi) / counts.m
    x = _unit_terms(counts, w, p_e) - 2 * (1 - ac) * (p_e_i - p_e) / (1 - p_e)
    return _linearised_se(counts, x, ac)


def brennan_prediger_se(counts: RatingCounts, bp: float, weights: np.ndarray | None = None) -> float | None:
    k = counts.n_categories
    w = identity_weights(k) if weights is None else weights
    return _linearised_se(counts, _unit_terms(counts, w, w.sum() / k**2), bp)


# --- codes in, Metric out -----------------------------------------------------------


def _counts(codes: np.ndarray | Patterns, n_categories: int | None = None) -> RatingCounts:
    if isinstance(codes, Patterns):
        return RatingCounts.of(codes)
    if n_categories is None:
        raise ValueError("n_categories is required with a codes array")
    return RatingCounts.of(compress(codes, n_categories))


def percent_agreement(codes: np.ndarray | Patterns, n_categories: int | None = None) -> Metric:
    """p_a: the mean share of agreeing coder pairs within a unit (Fleiss' P-bar).

    Worked example E (docs/statistics.md): P-bar = 0.7333.

    >>> e = np.array([[1, 1, 1], [1, 1, 0], [0, 0, 0], [1, 0, 0], [0, 0, 0]])
    >>> round(percent_agreement(e, 2).value, 4)
    0.7333
    """
    counts = _counts(codes, n_categories)
    return metric_from(*(a[0] for a in percent_agreement_batch(counts, counts.patterns.counts)))


def fleiss_kappa(
    codes: np.ndarray | Patterns, n_categories: int | None = None, weights: np.ndarray | None = None
) -> Metric:
    """Fleiss' (1971) kappa, Gwet's (2014) SE; ``extra["se_h0"]`` is the null SE (unweighted).

    Worked example E (docs/statistics.md): (0.7333 - 0.52) / 0.48 = 0.4444.

    >>> e = np.array([[1, 1, 1], [1, 1, 0], [0, 0, 0], [1, 0, 0], [0, 0, 0]])
    >>> round(fleiss_kappa(e, 2).value, 4)
    0.4444

    irrCAC README, cac.raw4raters (units rated by one coder inform pi_k): kappa = 0.76117,
    SE 0.15302; with quadratic weights (irrCAC's weighting vignette) 0.86494, SE 0.14603.

    >>> from irr_audit.metrics.weights import named_weights
    >>> raw4 = np.array([[0, 0, -1, 0], [1, 1, 2, 1], [2, 2, 2, 2], [2, 2, 2, 2],
    ...                  [1, 1, 1, 1], [0, 1, 2, 3], [3, 3, 3, 3], [0, 0, 1, 0],
    ...                  [1, 1, 1, 1], [-1, 4, 4, 4], [-1, -1, 0, 0], [-1, -1, 2, -1]])
    >>> k = fleiss_kappa(raw4, 5)
    >>> round(k.value, 5), round(k.se, 5)
    (0.76117, 0.15302)
    >>> k2 = fleiss_kappa(raw4, 5, named_weights("quadratic", np.arange(1, 6)))
    >>> round(k2.value, 5), round(k2.se, 5)
    (0.86494, 0.14603)
    """
    counts = _counts(codes, n_categories)
    w = None if weights is None else np.asarray(weights, dtype=float)
    metric = _estimate(counts, lambda c, u: fleiss_batch(c, u, w), lambda c, value: fleiss_se(c, value, w))
    null_se = fleiss_null_se(counts) if metric.defined and w is None else None
    return metric if null_se is None else replace(metric, extra={**metric.extra, "se_h0": null_se})


def conger_kappa(
    codes: np.ndarray | Patterns, n_categories: int | None = None, weights: np.ndarray | None = None
) -> Metric:
    """Conger's (1980) kappa with Gwet's (2014) SE; equals Cohen's kappa for two coders who
    both coded every unit.

    >>> round(conger_kappa(np.array([[0, 0], [0, 1], [1, 1], [1, 1]]), 2).value, 4)
    0.5

    irrCAC README, cac.raw4raters: 0.76282, SE 0.14917.

    >>> raw4 = np.array([[0, 0, -1, 0], [1, 1, 2, 1], [2, 2, 2, 2], [2, 2, 2, 2],
    ...                  [1, 1, 1, 1], [0, 1, 2, 3], [3, 3, 3, 3], [0, 0, 1, 0],
    ...                  [1, 1, 1, 1], [-1, 4, 4, 4], [-1, -1, 0, 0], [-1, -1, 2, -1]])
    >>> k = conger_kappa(raw4, 5)
    >>> round(k.value, 5), round(k.se, 5)
    (0.76282, 0.14917)
    """
    w = None if weights is None else np.asarray(weights, dtype=float)
    return _estimate(_counts(codes, n_categories), lambda c, u: conger_batch(c, u, w), lambda c, v: conger_se(c, v, w))


def gwet_ac(codes: np.ndarray | Patterns, n_categories: int | None = None, weights: np.ndarray | None = None) -> Metric:
    """Gwet's AC1 (no weights) or AC2 (agreement weights), with Gwet's SE.

    Gwet (2014) / irrCAC README, cac.raw4raters (Krippendorff's 4 x 12 data): AC1 = 0.77544.

    >>> raw4 = np.array([[0, 0, -1, 0], [1, 1, 2, 1], [2, 2, 2, 2], [2, 2, 2, 2],
    ...                  [1, 1, 1, 1], [0, 1, 2, 3], [3, 3, 3, 3], [0, 0, 1, 0],
    ...                  [1, 1, 1, 1], [-1, 4, 4, 4], [-1, -1, 0, 0], [-1, -1, 2, -1]])
    >>> round(gwet_ac(raw4, 5).value, 5)
    0.77544
    """
    w = None if weights is None else np.asarray(weights, dtype=float)
    return _estimate(
        _counts(codes, n_categories), lambda c, units: gwet_batch(c, units, w), lambda c, value: gwet_se(c, value, w)
    )


def brennan_prediger(
    codes: np.ndarray | Patterns, n_categories: int | None = None, weights: np.ndarray | None = None
) -> Metric:
    """Brennan & Prediger's (1981) coefficient, p_e = 1/K, with Gwet's SE.

    Worked example A (docs/statistics.md): p_o 0.85, K = 2, so (0.85 - 0.5) / 0.5 = 0.7.

    >>> a = np.array([[0, 0]] * 8 + [[0, 1]] * 2 + [[1, 0]] + [[1, 1]] * 9)
    >>> round(brennan_prediger(a, 2).value, 10)
    0.7
    """
    w = None if weights is None else np.asarray(weights, dtype=float)
    return _estimate(
        _counts(codes, n_categories),
        lambda c, units: brennan_prediger_batch(c, units, w),
        lambda c, value: brennan_prediger_se(c, value, w),
    )


def _estimate(
    counts: RatingCounts,
    batch: Callable[[RatingCounts, np.ndarray], Batch],
    se: Callable[[RatingCounts, float], float | None],
) -> Metric:
    """The batch formula at the observed counts, with its normal interval when defined."""
    values, codes = batch(counts, counts.patterns.counts)
    metric = metric_from(values[0], codes[0])
    return with_normal_ci(metric, se(counts, metric.value)) if metric.value is not None else metric
