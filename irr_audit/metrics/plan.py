"""Which coefficients apply, each as a batched estimator plus its point Metric.

One :class:`Coefficient` per reported name: ``batch`` maps unit weights (B, P)
to values and undefined-codes (the bootstrap calls it with resampled counts);
``point`` builds the Metric at the observed counts, with its analytic SE where
a standard formula exists. Using the same ``batch`` for the point value and the
replicates keeps the bootstrap honest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from irr_audit.metrics import multi_coder as mc
from irr_audit.metrics import two_coder as tc
from irr_audit.metrics.coder_bias import kendall_w
from irr_audit.metrics.estimates import first_code, metric_from, safe_divide
from irr_audit.metrics.krippendorff import (
    alpha_batch,
    coincidence_diagonal,
    krippendorff_alpha,
    pairable_totals,
    weighted_alpha,
    weighted_alpha_batch,
)
from irr_audit.metrics.patterns import Patterns, pair_tables
from irr_audit.metrics.reasons import Undefined
from irr_audit.metrics.result import Metric
from irr_audit.metrics.weights import (
    WEIGHT_NAMES,
    linear_weights,
    named_weights,
    quadratic_value_weights,
    quadratic_weights,
    weights_problem,
)
from irr_audit.rules.scale import Scale
from irr_audit.rules.weights import named_weights_problem

Batch = tuple[np.ndarray, np.ndarray]
PerCategory = dict[int, Metric]


@dataclass(frozen=True)
class Weighting:
    """Agreement weights a user chose (by name, or a custom matrix named "custom")."""

    name: str
    matrix: np.ndarray


@dataclass(frozen=True)
class Coefficient:
    name: str
    batch: Callable[[np.ndarray], Batch]
    point: Callable[[], Metric | PerCategory]
    bounds: tuple[float, float] = (-1.0, 1.0)
    needs_coders: bool = False  # depends on which coder gave which code, not only on each unit's codes


def resolve_weights(weights: object, scale: Scale, n_categories: int, values: np.ndarray | None) -> Weighting | None:
    """The chosen weights as a matrix: a name of ``WEIGHT_NAMES`` on the codes' values
    (interval and ratio scales) or their positions 1..K (nominal, ordinal), or a K x K matrix
    checked by :func:`weights_problem`. Raises ValueError saying what is wrong."""
    if weights is None:
        return None
    if isinstance(weights, str):
        if weights not in WEIGHT_NAMES:
            raise ValueError(f"unknown weights {weights!r}: one of {', '.join(WEIGHT_NAMES)}")
        numbers = np.asarray(values if scale.needs_values and values is not None else np.arange(1, n_categories + 1))
        problem = named_weights_problem(weights, numbers.astype(float))  # the rule key's checks, for --weights too
        if problem:
            raise ValueError(problem)
        matrix = named_weights(weights, numbers.astype(float))
        return Weighting(weights, matrix)
    try:
        matrix = np.array(weights, dtype=float)
    except (TypeError, ValueError) as error:
        raise ValueError(f"the weights are neither a name nor a matrix of numbers ({error})") from None
    problem = weights_problem(matrix, n_categories)
    if problem:
        raise ValueError(f"the weights matrix cannot be used: {problem}")
    return Weighting("custom", matrix)


def _reuse_last(compute: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
    """``compute(units)``, kept for the next call with the very same units array: every
    coefficient of a plan asks for the same tables of one chunk of replicates."""
    last: list[tuple[np.ndarray, np.ndarray]] = []  # (units, compute(units)) of the last call

    def reused(units: np.ndarray) -> np.ndarray:
        if not last or last[0][0] is not units:
            last[:] = [(units, compute(units))]
        return last[0][1]

    return reused


def ac2_weights(scale: Scale, n_categories: int, values: np.ndarray | None) -> np.ndarray:
    """Quadratic weights: on rank positions (ordinal) or on the codes' values (interval/ratio)."""
    if scale.needs_values and values is not None:
        return quadratic_value_weights(values)
    return quadratic_weights(n_categories)


def _per_category(values: np.ndarray, codes: np.ndarray, **extra: object) -> PerCategory:
    return {k: metric_from(values[k], codes[k], **extra) for k in range(len(values))}


def _specific_agreement_batch(patterns: Patterns, units: np.ndarray) -> Batch:
    """o_kk / n_k on the coincidence matrix; 2 n_kk / (row_k + col_k) for two coders."""
    n_k = pairable_totals(patterns, np.atleast_2d(units))
    codes = first_code((n_k == 0, Undefined.CATEGORY_UNUSED))
    diagonal = coincidence_diagonal(patterns, np.atleast_2d(units))
    return np.where(codes == 0, safe_divide(diagonal, n_k), np.nan), codes


def _ac2(
    counts: mc.RatingCounts, scale: Scale, values: np.ndarray | None, weights: Weighting | None
) -> list[Coefficient]:
    """AC2 with the chosen weights, or quadratic ones on an ordered scale."""
    if weights is None and not scale.is_ordered:
        return []
    w2 = ac2_weights(scale, counts.n_categories, values) if weights is None else weights.matrix
    name = "quadratic" if weights is None else weights.name
    return [
        Coefficient(
            "gwet_ac2",
            lambda u: mc.gwet_batch(counts, u, w2),
            lambda: _named(mc.gwet_ac(counts.patterns, weights=w2), weights=name),
        )
    ]


def _weighted_gwet_framework(counts: mc.RatingCounts, weights: Weighting | None) -> list[Coefficient]:
    """Fleiss', Conger's and Brennan-Prediger's coefficients with the chosen weights."""
    if weights is None:
        return []
    w, rated = weights.matrix, counts.patterns
    return [
        Coefficient(
            "fleiss_kappa_weighted",
            lambda u: mc.fleiss_batch(counts, u, w),
            lambda: _named(mc.fleiss_kappa(rated, weights=w), weights=weights.name),
        ),
        Coefficient(
            "conger_kappa_weighted",
            lambda u: mc.conger_batch(counts, u, w),
            lambda: _named(mc.conger_kappa(rated, weights=w), weights=weights.name),
            needs_coders=True,
        ),
        Coefficient(
            "brennan_prediger_weighted",
            lambda u: mc.brennan_prediger_batch(counts, u, w),
            lambda: _named(mc.brennan_prediger(rated, weights=w), weights=weights.name),
        ),
    ]


def _gwet_family(
    patterns: Patterns, scale: Scale, values: np.ndarray | None, weights: Weighting | None = None
) -> list[Coefficient]:
    counts = mc.RatingCounts.of(patterns)
    plan = [
        Coefficient("gwet_ac1", lambda u: mc.gwet_batch(counts, u), lambda: mc.gwet_ac(patterns)),
        *_ac2(counts, scale, values, weights),
        Coefficient(
            "brennan_prediger", lambda u: mc.brennan_prediger_batch(counts, u), lambda: mc.brennan_prediger(patterns)
        ),
        Coefficient(
            "krippendorff_alpha",
            lambda u: alpha_batch(patterns, u, scale, values),
            lambda: krippendorff_alpha(patterns, scale=scale, values=values),
        ),
    ]
    if weights is not None:
        w = weights.matrix
        plan.append(
            Coefficient(
                "krippendorff_alpha_weighted",
                lambda u: weighted_alpha_batch(patterns, u, w),
                lambda: _named(weighted_alpha(patterns, w), weights=weights.name),
            )
        )
    plan += [
        Coefficient(
            "specific_agreement",
            lambda u: _specific_agreement_batch(patterns, u),
            lambda: _per_category(*(a[0] for a in _specific_agreement_batch(patterns, patterns.counts))),
            (0.0, 1.0),
        ),
    ]
    return plan


def _named(metric: Metric, **extra: object) -> Metric:
    return Metric(**{**metric.__dict__, "extra": {**metric.extra, **extra}})


def two_coder_plan(
    patterns: Patterns, scale: Scale, values: np.ndarray | None, weights: Weighting | None = None
) -> list[Coefficient]:
    """Coefficients for two coders, from their K x K table (rows = first coder). Fleiss' and
    Conger's kappa are here too (Gwet's framework for any number of coders): with both codes on
    every unit they equal Scott's pi and Cohen's kappa; with missing codes they do not."""
    k = patterns.n_categories
    counts = mc.RatingCounts.of(patterns)

    @_reuse_last
    def tables(units: np.ndarray) -> np.ndarray:
        return pair_tables(patterns, 0, 1, np.atleast_2d(units))

    table = tables(patterns.counts)[0]
    plan = [
        Coefficient("po", lambda u: tc.po_batch(tables(u)), lambda: tc.observed_agreement(table), (0.0, 1.0)),
        Coefficient("pe", lambda u: tc.pe_batch(tables(u)), lambda: tc.chance_agreement(table), (0.0, 1.0)),
        Coefficient("cohen_kappa", lambda u: tc.kappa_batch(tables(u)), lambda: tc.cohen_kappa(table)),
        Coefficient("scott_pi", lambda u: tc.scott_batch(tables(u)), lambda: tc.scott_pi(table)),
        *_fleiss_conger(counts),
    ]

    def weighted(name: str, w: np.ndarray, **extra: object) -> Coefficient:
        return Coefficient(
            name, lambda u: tc.kappa_batch(tables(u), w), lambda: _named(tc.weighted_kappa(table, w), **extra)
        )

    if scale.is_ordered and scale.needs_values and values is not None:  # on the codes' values, not positions
        plan += [
            weighted("weighted_kappa_linear", named_weights("linear", values)),
            weighted("weighted_kappa_quadratic", named_weights("quadratic", values)),
        ]
    elif scale.is_ordered:
        plan += [
            weighted("weighted_kappa_linear", linear_weights(k)),
            weighted("weighted_kappa_quadratic", quadratic_weights(k)),
        ]
    if weights is not None:
        plan.append(weighted("weighted_kappa", weights.matrix, weights=weights.name))
    plan += _weighted_gwet_framework(counts, weights)
    plan += [
        Coefficient("pabak", lambda u: tc.pabak_batch(tables(u)), lambda: tc.pabak(table)),
        Coefficient(
            "prevalence_index", lambda u: tc.prevalence_index_batch(tables(u)), lambda: tc.prevalence_index(table)
        ),
        Coefficient("bias_index", lambda u: tc.bias_index_batch(tables(u)), lambda: tc.bias_index(table)),
        Coefficient("max_kappa", lambda u: tc.max_kappa_batch(tables(u)), lambda: tc.max_kappa(table)),
    ]
    return plan + _gwet_family(patterns, scale, values, weights) + _kendall(patterns, scale)


def _fleiss_conger(counts: mc.RatingCounts) -> list[Coefficient]:
    rated = counts.patterns
    return [
        Coefficient("fleiss_kappa", lambda u: mc.fleiss_batch(counts, u), lambda: mc.fleiss_kappa(rated)),
        Coefficient(
            "conger_kappa", lambda u: mc.conger_batch(counts, u), lambda: mc.conger_kappa(rated), needs_coders=True
        ),
    ]


def multi_coder_plan(
    patterns: Patterns, scale: Scale, values: np.ndarray | None, weights: Weighting | None = None
) -> list[Coefficient]:
    """Coefficients for three or more coders; ``po`` is Fleiss' P-bar, ``pe`` Fleiss' p_e."""
    counts = mc.RatingCounts.of(patterns)

    def fleiss_pe(units: np.ndarray) -> Batch:
        _, codes = mc.percent_agreement_batch(counts, units)
        return np.where(codes == 0, mc.fleiss_chance(counts, np.atleast_2d(units)), np.nan), codes

    plan = [
        Coefficient(
            "po", lambda u: mc.percent_agreement_batch(counts, u), lambda: mc.percent_agreement(patterns), (0.0, 1.0)
        ),
        Coefficient("pe", fleiss_pe, lambda: metric_from(*(a[0] for a in fleiss_pe(patterns.counts))), (0.0, 1.0)),
        *_fleiss_conger(counts),
        Coefficient(
            "light_kappa",
            lambda u: light_kappa_batch(patterns, u),
            lambda: metric_from(*(a[0] for a in light_kappa_batch(patterns, patterns.counts))),
            needs_coders=True,
        ),
        *_weighted_gwet_framework(counts, weights),
    ]
    return plan + _gwet_family(patterns, scale, values, weights) + _kendall(patterns, scale)


def gwet_missing_plan(
    patterns: Patterns, scale: Scale, values: np.ndarray | None, weights: Weighting | None = None
) -> list[Coefficient]:
    """Gwet's (2014, ch. 5) missing-data convention, as irrCAC computes it: on every unit with at
    least one code, p_a over the units with two or more codes, and pi_k (and each coder's p_gk)
    over all of them, so a unit one coder alone rated still informs chance agreement."""
    counts = mc.RatingCounts.of(patterns)
    plan = [
        Coefficient(
            "po", lambda u: mc.percent_agreement_batch(counts, u), lambda: mc.percent_agreement(patterns), (0.0, 1.0)
        ),
        *_fleiss_conger(counts),
        Coefficient("gwet_ac1", lambda u: mc.gwet_batch(counts, u), lambda: mc.gwet_ac(patterns)),
        *_ac2(counts, scale, values, weights),
        Coefficient(
            "brennan_prediger", lambda u: mc.brennan_prediger_batch(counts, u), lambda: mc.brennan_prediger(patterns)
        ),
        *_weighted_gwet_framework(counts, weights),
    ]
    return plan


def light_kappa_batch(patterns: Patterns, units: np.ndarray) -> Batch:
    """Light's (1971) kappa: the mean of Cohen's kappa over every pair of coders, undefined
    when any pair's kappa is. Light, R. J. (1971), Psychological Bulletin 76(5), 365-377,
    doi:10.1037/h0031643."""
    units = np.atleast_2d(units)
    coders = range(patterns.n_coders)
    pairs = [(a, b) for a in coders for b in coders if a < b]
    total = np.zeros(units.shape[0])
    undefined = np.zeros(units.shape[0], dtype=bool)
    for a, b in pairs:
        value, code = tc.kappa_batch(pair_tables(patterns, a, b, units))
        undefined |= code != 0
        total += np.where(code == 0, value, 0.0)
    codes = first_code((units.sum(axis=-1) == 0, Undefined.NO_UNITS), (undefined, Undefined.PAIR_UNDEFINED))
    return np.where(codes == 0, total / len(pairs), np.nan), codes


def kendall_w_batch(patterns: Patterns, units: np.ndarray) -> Batch:
    """Kendall's W (ties corrected) for a batch of unit weights; category positions are the ranks."""
    units = np.atleast_2d(np.asarray(units, dtype=np.float64))
    incomplete = (patterns.rows < 0).any(axis=1)
    # ranking needs every coder's code: undefined wherever a unit some coder left uncoded counts
    partial = units[:, incomplete].sum(axis=-1) > 0
    rows, units = patterns.rows[~incomplete], units[:, ~incomplete]
    k, m = patterns.n_categories, patterns.n_coders
    n = units.sum(axis=-1)
    rank_sums = np.zeros_like(units)
    ties = np.zeros(len(units))
    for j in range(m):
        totals = units @ np.eye(k)[rows[:, j]]  # (B, K): the units coder j put in each category
        below = np.cumsum(totals, axis=-1) - totals
        rank_sums += (below + (totals + 1) / 2)[:, rows[:, j]]
        ties += (totals**3 - totals).sum(axis=-1)
    spread = (units * (rank_sums - (m * (n[:, None] + 1) / 2)) ** 2).sum(axis=-1)
    denominator = m * m * (n**3 - n) - m * ties
    codes = first_code(  # whole numbers: exact
        (partial, Undefined.INCOMPLETE_RANKS),
        (n == 0, Undefined.NO_UNITS),
        (n < 2, Undefined.ONE_UNIT),
        (denominator == 0, Undefined.ALL_TIED),
    )
    return np.where(codes == 0, 12 * safe_divide(spread, denominator), np.nan), codes


def _kendall_point(patterns: Patterns) -> Metric:
    _, codes = kendall_w_batch(patterns, patterns.counts)
    if codes[0] != 0:
        return metric_from(np.nan, codes[0])
    exact = kendall_w(patterns.rows, patterns.counts)
    extra = {key: exact[key] for key in ("friedman_chi2", "df", "p_value", "ties_corrected")}
    return Metric.of(exact["value"], extra=extra)


def _kendall(patterns: Patterns, scale: Scale) -> list[Coefficient]:
    """Kendall's W for ordinal rules (Kendall & Babington Smith 1939), on the units every coder coded."""
    if scale is not Scale.ORDINAL:
        return []
    return [
        Coefficient(
            "kendall_w",
            lambda u: kendall_w_batch(patterns, u),
            lambda: _kendall_point(patterns),
            (0.0, 1.0),
            needs_coders=True,
        )
    ]


def per_category_plan(patterns: Patterns) -> list[Coefficient]:
    """Each category against the rest: Cohen's kappa (two coders) or Fleiss' kappa."""
    k = patterns.n_categories
    if patterns.n_coders == 2:

        @_reuse_last
        def tables(units: np.ndarray) -> np.ndarray:
            return pair_tables(patterns, 0, 1, np.atleast_2d(units))

        def kappa_vs_rest(units: np.ndarray) -> Batch:
            t = tables(units)
            used = t.sum(axis=-1) + t.sum(axis=-2)
            values, codes = tc.kappa_batch(tc.collapse_to_each_category(t))  # (B, K): every category at once
            codes = np.where((used == 0) & (codes != Undefined.NO_UNITS), np.int8(Undefined.CATEGORY_UNUSED), codes)
            return values, codes

        def indices(batch_fn: Callable[[np.ndarray], Batch]) -> Callable[[np.ndarray], Batch]:
            def per(units: np.ndarray) -> Batch:
                return batch_fn(tc.collapse_to_each_category(tables(units)))

            return per

        table = tables(patterns.counts)[0]

        def kappa_point() -> PerCategory:
            _, codes = kappa_vs_rest(patterns.counts)
            return {
                c: (
                    tc.cohen_kappa(tc.collapse_to_category(table, c))
                    if codes[0][c] == 0
                    else metric_from(np.nan, codes[0][c])
                )
                for c in range(k)
            }

        prevalence = indices(tc.prevalence_index_batch)
        bias = indices(tc.bias_index_batch)
        return [
            Coefficient("kappa", kappa_vs_rest, kappa_point),
            Coefficient(
                "prevalence_index", prevalence, lambda: _per_category(*(a[0] for a in prevalence(patterns.counts)))
            ),
            Coefficient("bias_index", bias, lambda: _per_category(*(a[0] for a in bias(patterns.counts)))),
        ]
    counts = mc.RatingCounts.of(patterns)

    def fleiss_point() -> PerCategory:
        _, codes = mc.per_category_fleiss_batch(counts, patterns.counts)
        out: PerCategory = {}
        for c in range(k):
            if codes[0][c] != 0:
                out[c] = metric_from(np.nan, codes[0][c])
                continue
            rows = np.where(patterns.rows >= 0, (patterns.rows == c).astype(np.int64), -1)
            out[c] = mc.fleiss_kappa(Patterns(rows, patterns.counts, 2))
        return out

    return [Coefficient("kappa", lambda u: mc.per_category_fleiss_batch(counts, u), fleiss_point)]
