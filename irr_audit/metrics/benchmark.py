"""Gwet's benchmarking: how probable it is that a coefficient lies in or above each band.

Gwet (2014, Handbook of Inter-Rater Reliability, 4th ed., ch. 6) reads a coefficient
against a scale of bands with its uncertainty: the probability that the coefficient lies in
a band (the interval membership probability) comes from the normal distribution of the
estimate (mean the estimate, sd its standard error) truncated to [-1, 1]; the cumulative
probability of a band is that of the band and every band above it. The band reached is the
highest whose cumulative probability is at least 0.95. The bands are conventions, as
irrCAC's ``landis.koch.bf``, ``fleiss.bf`` and ``altman.bf`` have them:

- Landis, J. R. & Koch, G. G. (1977), Biometrics 33(1), 159-174.
- Fleiss, J. L. (1981), Statistical Methods for Rates and Proportions, 2nd ed., Wiley.
- Altman, D. G. (1991), Practical Statistics for Medical Research, Chapman & Hall.
"""

from __future__ import annotations

from typing import Any

from irr_audit.metrics.distributions import normal_cdf as ndtr

# (lower, upper, label), highest band first
SCALES: dict[str, tuple[tuple[float, float, str], ...]] = {
    "landis_koch": (
        (0.8, 1.0, "almost perfect"),
        (0.6, 0.8, "substantial"),
        (0.4, 0.6, "moderate"),
        (0.2, 0.4, "fair"),
        (0.0, 0.2, "slight"),
        (-1.0, 0.0, "poor"),
    ),
    "fleiss": ((0.75, 1.0, "excellent"), (0.40, 0.75, "intermediate to good"), (-1.0, 0.40, "poor")),
    "altman": (
        (0.8, 1.0, "very good"),
        (0.6, 0.8, "good"),
        (0.4, 0.6, "moderate"),
        (0.2, 0.4, "fair"),
        (-1.0, 0.2, "poor"),
    ),
}
CONVENTION = "Gwet (2014, ch. 6) benchmarking: bands are conventions, not tests"
LEVEL = 0.95


def benchmark(value: float, se: float, scale: str = "landis_koch") -> dict[str, Any]:
    """The bands of one scale with the probability of each band and of it or any above.

    irrCAC's benchmarking vignette (``cac.raw4raters``): AC1 = 0.77544 with SE 0.14295 gives the
    cumulative probabilities 0.39674, 0.88336, 0.99542, 0.99997, 1, 1, so "moderate" is reached.

    >>> result = benchmark(0.77544, 0.14295)
    >>> [round(b["cumulative_probability"], 5) for b in result["bands"]], result["reached_at_95"]
    ([0.39674, 0.88336, 0.99542, 0.99997, 1.0, 1.0], 'moderate')
    """
    truncation = ndtr((value + 1) / se) - ndtr((value - 1) / se)
    bands, cumulative, reached = [], 0.0, None
    for lower, upper, label in SCALES[scale]:
        inside = float((ndtr((value - lower) / se) - ndtr((value - upper) / se)) / truncation)
        cumulative += inside
        if reached is None and cumulative >= LEVEL:
            reached = label
        bands.append(
            {
                "band": [lower, upper],
                "label": label,
                "probability": inside,
                "cumulative_probability": min(cumulative, 1.0),
            }
        )
    return {"bands": bands, "reached_at_95": reached}


def benchmarks(value: float, se: float) -> dict[str, Any]:
    """Every scale, for a coefficient with a standard error (se > 0)."""
    return {"convention": CONVENTION, **{name: benchmark(value, se, name) for name in SCALES}}
