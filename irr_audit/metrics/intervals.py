"""Analytic intervals and tests from an estimate and its standard error: one place for the
reference distribution (normal or Student's t) and the confidence level.

- ``normal``: estimate +/- z_{(1+level)/2} SE, the large-sample interval of Fleiss, Cohen &
  Everitt (1969) and of Gwet (2014, ch. 5) for the chance-corrected coefficients.
- ``t``: estimate +/- t_{(1+level)/2, n-1} SE with n the units of the basis, as irrCAC
  (Gwet's R package and its Python port) prints its intervals and p-values.

p-values are Wald tests on the same SE: two-sided for H0: coefficient = 0, and one-sided for
H0: coefficient <= c (the alternative: the coefficient exceeds a required value c).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from statistics import NormalDist

from irr_audit.metrics.distributions import beta_inc, f_quantile
from irr_audit.metrics.estimates import ANALYTIC_CI, Z_95
from irr_audit.metrics.result import Metric

KINDS = ("normal", "t")
# An SE this small relative to the estimate is a zero variance left over by floating point (the
# per-unit terms all equal the coefficient, as on two units): a real one would need ~10^24 units.
ROUNDING_SE = 1e-12


def normal_upper_tail(z: float) -> float:
    """P(Z >= z) for a standard normal Z, from erfc (accurate far into the tail)."""
    return 0.5 * math.erfc(z / math.sqrt(2))


@dataclass(frozen=True)
class IntervalSpec:
    """How analytic intervals and tests are made: ``level`` in (0, 1), ``kind`` normal or t,
    ``test_against`` the c of a one-sided test of H0: coefficient <= c (None: no such test).

    >>> IntervalSpec().quantile(n=20) == 1.959963984540054
    True
    >>> round(IntervalSpec(0.95, "t").quantile(n=12), 6)  # t_{0.975, 11}
    2.200985
    """

    level: float = 0.95
    kind: str = "normal"
    test_against: float | None = None

    def __post_init__(self) -> None:
        if not (isinstance(self.level, float | int) and not isinstance(self.level, bool) and 0 < self.level < 1):
            raise ValueError(f"the confidence level must lie strictly between 0 and 1, not {self.level!r}")
        if (1 + self.level) / 2 >= 1:  # the interval's quantile is at (1 + level) / 2, which must stay below 1
            raise ValueError(
                f"the confidence level {self.level!r} is so close to 1 that the quantile of its interval, "
                "at (1 + level) / 2, rounds to 1 in floating point: the interval would have no ends"
            )
        if self.kind not in KINDS:
            raise ValueError(f"the interval must be one of {', '.join(KINDS)}, not {self.kind!r}")
        if self.test_against is not None and not (
            isinstance(self.test_against, float | int) and math.isfinite(self.test_against)
        ):
            raise ValueError(f"the value to test against must be a finite number, not {self.test_against!r}")

    @property
    def is_default_interval(self) -> bool:
        """95% normal: the intervals the estimators attach themselves (a test changes none)."""
        return self.level == 0.95 and self.kind == "normal"

    def degrees_of_freedom(self, n: int) -> int | None:
        """n - 1 for t (None when n < 2: no t interval), None for normal."""
        return n - 1 if self.kind == "t" and n >= 2 else None

    def quantile(self, n: int) -> float | None:
        """The two-sided critical value; None when a t interval has no degrees of freedom."""
        if self.kind == "normal":  # Z_95: the estimators' own, correctly rounded (inv_cdf is 1 ulp off there)
            return Z_95 if self.level == 0.95 else NormalDist().inv_cdf((1 + self.level) / 2)
        df = self.degrees_of_freedom(n)
        # T^2 is F(1, df): P(|T| <= t) = level exactly when P(F <= t^2) = level
        return None if df is None else math.sqrt(f_quantile(self.level, 1, df))

    def upper_tail(self, statistic: float, n: int) -> float | None:
        """P(T >= statistic) under the reference distribution."""
        if self.kind == "normal":
            return normal_upper_tail(statistic)
        df = self.degrees_of_freedom(n)
        if df is None:
            return None
        beyond = 0.5 * beta_inc(df / 2, 0.5, df / (df + statistic * statistic))  # P(T >= |statistic|)
        return beyond if statistic >= 0 else 1.0 - beyond

    def method(self, n: int) -> str:
        percent = f"{100 * self.level:g}%"
        if self.kind == "normal":
            return f"normal approximation, {percent}, estimate +/- {self.quantile(n):.4g} SE"
        return f"Student t with {n - 1} df, {percent}, estimate +/- {self.quantile(n):.4g} SE"


def interval(estimate: float, se: float, n: int, spec: IntervalSpec) -> tuple[float, float] | None:
    """(low, high) before clipping; None when the SE or the degrees of freedom are missing.

    Gwet (2014) / irrCAC README, cac.raw4raters: AC1 = 0.77544, SE 0.14295, n = 12 units,
    t interval (0.461, 1) once clipped:

    >>> low, high = interval(0.77544, 0.14295, 12, IntervalSpec(0.95, "t"))
    >>> round(low, 3), round(high, 3)
    (0.461, 1.09)
    """
    q = spec.quantile(n)
    if q is None or not math.isfinite(se):
        return None
    return estimate - q * se, estimate + q * se


def p_value_zero(estimate: float, se: float, n: int, spec: IntervalSpec) -> float | None:
    """Two-sided p-value of H0: coefficient = 0, 2 P(T >= |estimate / SE|). None when SE = 0
    (the ratio has no value) or a t test has no degrees of freedom.

    irrCAC README, cac.raw4raters, AC1: p = 0.000208721 (t, 11 df; from the rounded inputs):

    >>> round(p_value_zero(0.77544, 0.14295, 12, IntervalSpec(0.95, "t")), 6)
    0.000209
    """
    if not (se > 0 and math.isfinite(se)):
        return None
    tail = spec.upper_tail(abs(estimate) / se, n)
    return None if tail is None else min(1.0, 2 * tail)


def p_value_above(estimate: float, se: float, n: int, spec: IntervalSpec, value: float) -> float | None:
    """One-sided p-value of H0: coefficient <= value against coefficient > value,
    P(T >= (estimate - value) / SE); None when SE = 0 or a t test has no degrees of freedom.

    >>> round(p_value_above(0.8, 0.05, 100, IntervalSpec(), 0.8), 3)
    0.5
    """
    if not (se > 0 and math.isfinite(se)):
        return None
    return spec.upper_tail((estimate - value) / se, n)


def restated(metric: Metric, n: int, spec: IntervalSpec, bounds: tuple[float, float] = (-1.0, 1.0)) -> Metric:
    """A metric with its analytic interval made as ``spec`` asks (n: the units of its basis) and
    its tests: ``p_value`` (H0: coefficient = 0, two-sided, on the coefficient's SE as irrCAC
    tests it), ``p_value_h0`` where a null SE exists (the classical z test of kappa = 0) and,
    with ``spec.test_against`` c, ``test_against`` (H0: coefficient <= c, one-sided).
    A p-value that has no value (SE 0, or a t test on one unit) is null with its reason."""
    if not metric.defined or metric.value is None or metric.se is None:
        return metric
    value, se = metric.value, metric.se
    if metric.ci_method == ANALYTIC_CI and not spec.is_default_interval:
        span = interval(value, se, n, spec)
        if span is None:
            metric = replace(metric, ci=None, ci_method=None, ci_clipped=False)
        else:
            metric = metric.with_ci(span[0], span[1], spec.method(n), bounds=bounds)
    extra = dict(metric.extra)
    if zero_to_rounding(se, value):
        se = 0.0  # a zero variance computed in floating point: no test has a value
    extra.update(_test("p_value", p_value_zero(value, se, n, spec), se, n))
    se_h0 = extra.get("se_h0")
    if isinstance(se_h0, float) and se_h0 > 0 and math.isfinite(se_h0):
        extra["p_value_h0"] = min(1.0, 2 * normal_upper_tail(abs(value) / se_h0))
    if spec.test_against is not None:
        c = spec.test_against
        tested = _test("p_value", p_value_above(value, se, n, spec, c), se, n)
        extra["test_against"] = {"value": c, "alternative": "greater", **tested}
    return replace(metric, extra=extra)


def zero_to_rounding(se: float, value: float) -> bool:
    """Whether a standard error is 0 but for floating-point rounding (a variance whose terms cancel)."""
    return se <= ROUNDING_SE * max(1.0, abs(value))


def _test(key: str, p: float | None, se: float, n: int) -> dict[str, object]:
    if p is not None:
        return {key: p}
    why = "the standard error is 0 (to rounding)" if not se > 0 else "a t test needs two or more units"
    return {key: None, f"{key}_reason": why}
