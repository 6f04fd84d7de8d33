"""The intraclass correlation for codes with numeric values (interval and ratio rules).

Six distinct coefficients cover the six forms of Shrout & Fleiss (1979) and the ten of
McGraw & Wong (1996): the two-way random and two-way mixed models of McGraw & Wong share
their formulas (they differ in what the number generalises to, not in the number). Each
comes with its F-based confidence interval (McGraw & Wong 1996, Table 7), the one
pingouin's ``intraclass_corr`` and R's ``psych::ICC`` give (at 95%; here at the report's
--ci-level, the F quantiles taken at 1 - alpha / 2).

- Shrout, P. E. & Fleiss, J. L. (1979). Intraclass correlations: uses in assessing rater
  reliability. Psychological Bulletin 86(2), 420-428. doi:10.1037/0033-2909.86.2.420
- McGraw, K. O. & Wong, S. P. (1996). Forming inferences about some intraclass correlation
  coefficients. Psychological Methods 1(1), 30-46. doi:10.1037/1082-989X.1.1.30

ICC needs every coder's value on every unit: it is computed on the fully coded units.
Whether a mean square is zero is decided exactly, on the values as fractions, never from
floating-point luck.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from irr_audit.metrics.distributions import f_quantile as f_ppf
from irr_audit.metrics.result import Metric


def ci_method(level: float = 0.95) -> str:
    """The intervals' method, naming the level they were made at (--ci-level)."""
    return f"F-based interval (McGraw & Wong 1996, Table 7), {100 * level:g}%"


SINGLE_BOUND_BELOW_POLE = (
    "the single-rater interval reaches down to -1/(k-1), where the step-up to k raters (Spearman-Brown) "
    "has no lower bound: the F-based interval is not defined here"
)


def f_quantile(level: float, dfn: float, dfd: float) -> float:
    """The ``level`` quantile of the F distribution (dfn, dfd): the one place the ICC intervals
    get their critical values (a t/normal interval function of the same shape serves the others)."""
    return f_ppf(level, dfn, dfd)


@dataclass(frozen=True)
class MeanSquares:
    """The two-way ANOVA of n units (rows) by k coders (columns), one value per cell: each mean
    square exact (``exact``: rows, columns, error, within as fractions) and as the nearest float."""

    n: int
    k: int
    rows: float  # MSR, between units (Shrout & Fleiss: BMS)
    columns: float  # MSC, between coders (JMS)
    error: float  # MSE, residual (EMS)
    within: float  # MSW, within units (WMS)
    zero: frozenset[str]  # which of rows, columns, error, within are exactly zero
    exact: tuple[Fraction, Fraction, Fraction, Fraction] = (Fraction(0),) * 4

    def to_dict(self) -> dict[str, float | int]:
        return {"n": self.n, "k": self.k, "msr": self.rows, "msc": self.columns, "mse": self.error, "msw": self.within}


# name -> (Shrout & Fleiss 1979 form, McGraw & Wong 1996 forms), in the order the report shows them
def _both(form: str) -> tuple[str, str]:
    return f"{form}: two-way random", f"{form}: two-way mixed"


FORMS: dict[str, tuple[str, tuple[str, ...]]] = {
    "icc_1": ("ICC(1,1)", ("ICC(1): one-way random, single rater",)),
    "icc_k": ("ICC(1,k)", ("ICC(k): one-way random, mean of k raters",)),
    "icc_a1": ("ICC(2,1)", _both("ICC(A,1), absolute agreement")),
    "icc_ak": ("ICC(2,k)", _both("ICC(A,k), absolute agreement")),
    "icc_c1": ("ICC(3,1)", _both("ICC(C,1), consistency")),
    "icc_ck": ("ICC(3,k)", _both("ICC(C,k), consistency")),
}


def mean_squares(ratings: np.ndarray, counts: np.ndarray | None = None) -> MeanSquares:
    """The mean squares of an (n, k) array of values (rows: units, columns: coders), each row
    weighted by ``counts`` (how many units show it; 1 each by default), computed exactly: a
    value is the decimal it is written as (the shortest text of the float, so 0.3 - 0.1 equals
    0.4 - 0.2 here), each sum of squares a fraction, so a mean square is zero exactly when the
    data make it so and otherwise the float nearest its true value (no cancellation).

    >>> ms = mean_squares(np.array([[1.0, 2.0], [3.0, 5.0]]))
    >>> ms.rows, ms.columns, ms.error
    (6.25, 2.25, 0.25)
    """
    ratings = np.asarray(ratings, dtype=float)
    weights = [1] * len(ratings) if counts is None else [int(count) for count in np.asarray(counts)]
    n, k = sum(weights), ratings.shape[1]
    scaled, scale = _as_integers(ratings)
    totals = [sum(row) for row in scaled]  # each unit's total
    by_coder = [sum(w * row[j] for w, row in zip(weights, scaled)) for j in range(k)]
    grand = sum(by_coder)
    squares = sum(w * sum(x * x for x in row) for w, row in zip(weights, scaled))
    unit_part = Fraction(sum(w * t * t for w, t in zip(weights, totals)), k)
    correction = Fraction(grand * grand, n * k)
    ss_rows = unit_part - correction
    ss_columns = Fraction(sum(c * c for c in by_coder), n) - correction
    ss_within = squares - unit_part
    ss_error = ss_within - ss_columns
    degrees = (n - 1, k - 1, (n - 1) * (k - 1), n * (k - 1))
    sums = (ss_rows, ss_columns, ss_error, ss_within)
    msr, msc, mse, msw = (ss / (df * scale * scale) for ss, df in zip(sums, degrees))
    zero = frozenset(
        name for name, value in zip(("rows", "columns", "error", "within"), (msr, msc, mse, msw)) if not value
    )
    return MeanSquares(n, k, float(msr), float(msc), float(mse), float(msw), zero, (msr, msc, mse, msw))


def _as_integers(ratings: np.ndarray) -> tuple[list[list[int]], int]:
    """The values as integers over one common denominator (each value the decimal of its
    shortest text: 0.1 as the 1/10 a rule writes), and that denominator."""
    exact = {float(v): Fraction(repr(float(v))) for v in np.unique(ratings)}
    scale = math.lcm(*(value.denominator for value in exact.values())) if exact else 1
    whole = {v: int(value * scale) for v, value in exact.items()}
    return [[whole[v] for v in row] for row in ratings.tolist()], scale


def intraclass_correlations(
    ratings: np.ndarray, counts: np.ndarray | None = None, level: float = 0.95
) -> dict[str, Metric]:
    """The six intraclass correlations with their F-based intervals at ``level`` (--ci-level).

    Shrout & Fleiss (1979), Table 2: six targets rated by four judges; their Table 4 gives
    ICC(1,1) = .17, ICC(2,1) = .29, ICC(3,1) = .71, ICC(1,4) = .44, ICC(2,4) = .62, ICC(3,4) = .91.

    >>> x = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]])
    >>> icc = intraclass_correlations(x)
    >>> [f"{icc[name].value:.2f}" for name in ("icc_1", "icc_a1", "icc_c1", "icc_k", "icc_ak", "icc_ck")]
    ['0.17', '0.29', '0.71', '0.44', '0.62', '0.91']
    """
    ratings = np.asarray(ratings, dtype=float)
    if ratings.ndim != 2:
        raise ValueError("ratings are an (n_units, n_coders) array")
    n_units = int(len(ratings) if counts is None else np.asarray(counts).sum())
    if ratings.shape[1] < 2:
        return _all_undefined("one coder: the intraclass correlation needs at least two coders")
    if n_units < 2:
        return _all_undefined(f"n = {n_units}: the intraclass correlation needs at least two fully coded units")
    ms = mean_squares(ratings, counts)
    if {"rows", "within"} <= ms.zero:
        return _all_undefined("no variation: every coder gave every unit the same value")
    return {name: _form(name, ms, level) for name in FORMS}


def _all_undefined(reason: str) -> dict[str, Metric]:
    return {name: _named(Metric.undefined(reason), name) for name in FORMS}


def _named(metric: Metric, name: str) -> Metric:
    shrout_fleiss, mcgraw_wong = FORMS[name]
    extra = {**metric.extra, "shrout_fleiss": shrout_fleiss, "mcgraw_wong": list(mcgraw_wong)}
    return Metric(**{**metric.__dict__, "extra": extra})


def _form(name: str, ms: MeanSquares, level: float = 0.95) -> Metric:
    builders: dict[str, Callable[[MeanSquares, float], Metric]] = {
        "icc_1": _one_way_single,
        "icc_k": _one_way_average,
        "icc_a1": _absolute_single,
        "icc_ak": _absolute_average,
        "icc_c1": _consistency_single,
        "icc_ck": _consistency_average,
    }
    return _named(builders[name](ms, level), name)


def _with_bounds(
    value: float, low: float | None, high: float | None, reason: str | None = None, level: float = 0.95
) -> Metric:
    metric = Metric.of(value)
    if low is None or high is None or not (np.isfinite(low) and np.isfinite(high)):
        return Metric.of(value, extra={"ci_reason": reason or "the F-based interval is not defined here"})
    return metric.with_ci(low, high, ci_method(level), bounds=(-np.inf, 1.0))


def upper_tail(level: float) -> float:
    """The F quantile a two-sided ``level`` interval takes at each end: 1 - alpha / 2 with
    alpha = 1 - level (0.975 at 95%), rounded so that 0.95 in binary does not move it."""
    return round((1 + level) / 2, 12)


def _f_bounds(f_obs: float, df1: float, df2: float, level: float) -> tuple[float, float]:
    """F_L = F / F(1 - alpha/2; df1, df2), F_U = F * F(1 - alpha/2; df2, df1)."""
    tail = upper_tail(level)
    return f_obs / f_quantile(tail, df1, df2), f_obs * f_quantile(tail, df2, df1)


def _one_way_single(ms: MeanSquares, level: float = 0.95) -> Metric:
    n, k = ms.n, ms.k
    value = (ms.rows - ms.within) / (ms.rows + (k - 1) * ms.within)
    if "within" in ms.zero:
        return _with_bounds(value, None, None, "MSW = 0: no within-unit variance, the F ratio is infinite")
    fl, fu = _f_bounds(ms.rows / ms.within, n - 1, n * (k - 1), level)
    return _with_bounds(value, (fl - 1) / (fl + k - 1), (fu - 1) / (fu + k - 1), level=level)


def _one_way_average(ms: MeanSquares, level: float = 0.95) -> Metric:
    if "rows" in ms.zero:
        return Metric.undefined("MSR = 0: every unit has the same mean, so the average-rater ICC divides by zero")
    value = (ms.rows - ms.within) / ms.rows
    if "within" in ms.zero:
        return _with_bounds(value, None, None, "MSW = 0: no within-unit variance, the F ratio is infinite")
    fl, fu = _f_bounds(ms.rows / ms.within, ms.n - 1, ms.n * (ms.k - 1), level)
    return _with_bounds(value, 1 - 1 / fl, 1 - 1 / fu, level=level)


def _consistency_single(ms: MeanSquares, level: float = 0.95) -> Metric:
    n, k = ms.n, ms.k
    if {"rows", "error"} <= ms.zero:
        return Metric.undefined("MSR = MSE = 0: units and residuals do not vary, so ICC(C,1) is 0/0")
    value = (ms.rows - ms.error) / (ms.rows + (k - 1) * ms.error)
    if "error" in ms.zero:
        return _with_bounds(value, None, None, "MSE = 0: no residual variance, the F ratio is infinite")
    fl, fu = _f_bounds(ms.rows / ms.error, n - 1, (n - 1) * (k - 1), level)
    return _with_bounds(value, (fl - 1) / (fl + k - 1), (fu - 1) / (fu + k - 1), level=level)


def _consistency_average(ms: MeanSquares, level: float = 0.95) -> Metric:
    if "rows" in ms.zero:
        return Metric.undefined("MSR = 0: every unit has the same mean, so ICC(C,k) divides by zero")
    value = (ms.rows - ms.error) / ms.rows
    if "error" in ms.zero:
        return _with_bounds(value, None, None, "MSE = 0: no residual variance, the F ratio is infinite")
    fl, fu = _f_bounds(ms.rows / ms.error, ms.n - 1, (ms.n - 1) * (ms.k - 1), level)
    return _with_bounds(value, 1 - 1 / fl, 1 - 1 / fu, level=level)


def _absolute_denominator_is_zero(ms: MeanSquares) -> bool:
    """n MSR + k MSC + (nk - n - k) MSE = 0: all three are 0, or n = k = 2 with MSR = MSC = 0."""
    both = {"rows", "columns"} <= ms.zero
    return both and ("error" in ms.zero or ms.n * ms.k - ms.n - ms.k == 0)


def _absolute_single_bounds(
    ms: MeanSquares, value: float, level: float
) -> tuple[float | None, float | None, str | None]:
    """McGraw & Wong (1996), Table 7, case A,1: F with Satterthwaite's degrees of freedom."""
    n, k = ms.n, ms.k
    if "error" in ms.zero:
        return None, None, "MSE = 0: no residual variance, the F ratio is infinite"
    if value >= 1:
        return None, None, "the estimate is 1: Satterthwaite's degrees of freedom are not defined"
    if "rows" in ms.zero:
        # a MSC + b MSE works out to n MSR (MSC + (n - 1) MSE) / (n D (1 - value)), D the estimate's denominator
        return None, None, "MSR = 0: Satterthwaite's degrees of freedom are 0, so the F-based interval is not defined"
    a = k * value / (n * (1 - value))
    b = 1 + k * value * (n - 1) / (n * (1 - value))
    spread = (a * ms.columns) ** 2 / (k - 1) + (b * ms.error) ** 2 / ((n - 1) * (k - 1))
    v = (a * ms.columns + b * ms.error) ** 2 / spread if spread > 0 else 0.0
    if not 0 < v < np.inf:
        return None, None, "Satterthwaite's degrees of freedom are not a positive number here"
    try:
        f_low, f_high = f_quantile(upper_tail(level), n - 1, v), f_quantile(upper_tail(level), v, n - 1)
    except ArithmeticError:  # v so near 0 (MSR tiny beside MSC and MSE) that the F quantile does not converge
        return None, None, f"Satterthwaite's degrees of freedom ({v:.3g}) are too few for an F quantile"
    rest = k * ms.columns + (k * n - k - n) * ms.error
    low = n * (ms.rows - f_low * ms.error) / (f_low * rest + n * ms.rows)
    high = n * (f_high * ms.rows - ms.error) / (rest + n * f_high * ms.rows)
    return low, high, None


def _absolute_single(ms: MeanSquares, level: float = 0.95) -> Metric:
    if _absolute_denominator_is_zero(ms):
        return Metric.undefined("MSR = MSC = 0 and no residual term in the denominator: ICC(A,1) is 0/0")
    n, k = ms.n, ms.k
    value = (ms.rows - ms.error) / (ms.rows + (k - 1) * ms.error + k * (ms.columns - ms.error) / n)
    low, high, reason = _absolute_single_bounds(ms, value, level)
    return _with_bounds(value, low, high, reason, level)


def _absolute_average(ms: MeanSquares, level: float = 0.95) -> Metric:
    n, k = ms.n, ms.k
    msr, msc, mse, _ = ms.exact
    if n * msr + msc - mse == 0 or _absolute_denominator_is_zero(ms):
        return Metric.undefined("MSR + (MSC - MSE) / n = 0: ICC(A,k) divides by zero")
    value = float((msr - mse) / (msr + (msc - mse) / n))  # exact: the float terms can cancel to 0
    single = (ms.rows - ms.error) / (ms.rows + (k - 1) * ms.error + k * (ms.columns - ms.error) / n)
    low, high, reason = _absolute_single_bounds(ms, single, level)
    if low is None or high is None:
        return _with_bounds(value, None, None, reason)
    if low * (k - 1) <= -1:
        # k L / (1 + (k - 1) L) falls to minus infinity as L comes down to -1/(k-1) and turns positive
        # past it: stepped up, such a bound would be no bound (pingouin then shows a lower bound above the upper)
        return _with_bounds(value, None, None, SINGLE_BOUND_BELOW_POLE)
    # Spearman-Brown of the single-rater bounds: McGraw & Wong's case A,k, as pingouin and psych::ICC give it
    return _with_bounds(value, k * low / (1 + (k - 1) * low), k * high / (1 + (k - 1) * high), level=level)
