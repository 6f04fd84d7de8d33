"""The few distribution functions the tests and intervals need: the normal CDF, the upper tail of
chi-square and the quantiles of F.

Written out here (about 100 lines) rather than imported from scipy: importing scipy.special maps
about 110 MB of address space (its own OpenBLAS and thread buffers), which every `irr-audit`
command run under a memory cap would pay for three functions. The algorithms are the standard
ones: the regularized incomplete gamma function by its series below a + 1 and its continued
fraction above, the regularized incomplete beta function by its continued fraction (both
evaluated by the modified Lentz method; Press et al. 2007, Numerical Recipes, 3rd ed.,
sections 6.2 and 6.4), and the F quantile by bisection of the monotone CDF to the last bit.
tests/test_distributions.py checks them against scipy.stats to 1e-12.
"""

from __future__ import annotations

import math
from collections.abc import Callable

_EPS = 1e-16
_TINY = 1e-300
_MAX_ITERATIONS = 100_000


def normal_cdf(x: float) -> float:
    """P(Z <= x) for a standard normal Z.

    >>> round(normal_cdf(1.959963984540054), 6)
    0.975
    """
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def _lentz(a: Callable[[int], float], b: Callable[[int], float]) -> float:
    """The continued fraction b(0) + a(1) / (b(1) + a(2) / (b(2) + ...)) (modified Lentz)."""
    f = b(0) or _TINY
    c, d = f, 0.0
    for i in range(1, _MAX_ITERATIONS):
        ai, bi = a(i), b(i)
        d = bi + ai * d
        d = _TINY if abs(d) < _TINY else d
        c = bi + ai / c
        c = _TINY if abs(c) < _TINY else c
        d = 1.0 / d
        step = c * d
        f *= step
        if abs(step - 1.0) < _EPS:
            return float(f)
    raise ArithmeticError("continued fraction did not converge")


def _gamma_q(a: float, x: float) -> float:
    """The regularized upper incomplete gamma function Q(a, x) = Gamma(a, x) / Gamma(a)."""
    if x <= 0:
        return 1.0
    log_front = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1:  # the series of P(a, x) converges fast here
        term = total = 1.0 / a
        k = a
        while abs(term) > abs(total) * _EPS:
            k += 1
            term *= x / k
            total += term
        return max(0.0, 1.0 - total * math.exp(log_front))
    # Q(a, x) = e^-x x^a / Gamma(a) * 1 / (x + 1 - a - 1 (1 - a) / (x + 3 - a - ...))
    fraction = _lentz(lambda i: -i * (i - a), lambda i: x + 2 * i + 1 - a)
    return math.exp(log_front) / fraction


def chi2_sf(x: float, df: float) -> float:
    """P(X > x) for X chi-square with df degrees of freedom.

    >>> round(chi2_sf(3.841458820694124, 1), 6)
    0.05
    """
    if x <= 0:
        return 1.0
    return _gamma_q(df / 2.0, x / 2.0)


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of I_x(a, b) (the even and odd terms of Numerical Recipes' betacf)."""

    def numerator(i: int) -> float:
        m = i // 2
        if i % 2 == 0:
            return m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        return -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))

    return _lentz(lambda i: 1.0 if i == 1 else numerator(i - 1), lambda i: 0.0 if i == 0 else 1.0)


def beta_inc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1) / (a + b + 2):
        return math.exp(log_front) * _beta_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(b, a, 1.0 - x) / b


def f_cdf(f: float, dfn: float, dfd: float) -> float:
    """P(F <= f) for F with (dfn, dfd) degrees of freedom."""
    if f <= 0:
        return 0.0
    return beta_inc(dfn / 2.0, dfd / 2.0, dfn * f / (dfn * f + dfd))


def _bisect(below: Callable[[float], bool], low: float, high: float) -> float:
    """The point of [low, high] where ``below`` turns false, to the last bit."""
    while True:
        middle = (low + high) / 2
        if middle in (low, high):
            return middle
        if below(middle):
            low = middle
        else:
            high = middle


def f_quantile(level: float, dfn: float, dfd: float) -> float:
    """The ``level`` quantile of F (dfn, dfd), by bisection on t = dfn f / (dfn f + dfd), where the CDF
    is I_t(dfn / 2, dfd / 2); above the median of t, on u = 1 - t (I_t(a, b) = 1 - I_u(b, a)), so that
    a large quantile keeps its digits.

    >>> round(f_quantile(0.975, 5, 15), 4)  # tables of F: 3.58
    3.5764
    """
    if not 0 < level < 1 or dfn <= 0 or dfd <= 0:
        raise ValueError("level in (0, 1) and positive degrees of freedom")
    a, b = dfn / 2.0, dfd / 2.0
    if beta_inc(a, b, 0.5) >= level:
        t = _bisect(lambda x: beta_inc(a, b, x) < level, 0.0, 0.5)
        return dfd * t / (dfn * (1 - t))
    u = _bisect(lambda x: beta_inc(b, a, x) <= 1 - level, 0.0, 0.5)
    return dfd * (1 - u) / (dfn * u)
