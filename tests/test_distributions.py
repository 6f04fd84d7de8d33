"""The distribution functions written out in irr_audit.metrics.distributions against scipy.stats."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from irr_audit.metrics.distributions import chi2_sf, f_cdf, f_quantile, normal_cdf
from irr_audit.metrics.intervals import IntervalSpec


@pytest.mark.parametrize("x", [-40.0, -8.0, -1.96, -0.3, 0.0, 0.7, 1.96, 6.0, 9.0])
def test_normal_cdf(x: float) -> None:
    assert normal_cdf(x) == pytest.approx(stats.norm.cdf(x), rel=1e-13, abs=1e-300)


@pytest.mark.parametrize("df", [1, 2, 3, 4, 7, 15, 28, 99, 1000, 20_000])
def test_chi2_upper_tail_over_its_range(df: int) -> None:
    for quantile in (1e-12, 0.001, 0.3, 0.5, 0.9, 0.999, 1 - 1e-9):
        x = float(stats.chi2.ppf(quantile, df))
        assert chi2_sf(x, df) == pytest.approx(stats.chi2.sf(x, df), rel=1e-10)
    far = float(stats.chi2.isf(1e-250, df))
    assert chi2_sf(far, df) == pytest.approx(stats.chi2.sf(far, df), rel=1e-9)
    assert chi2_sf(0.0, df) == 1.0


@pytest.mark.parametrize("seed", range(40))
def test_f_quantile_and_cdf(seed: int) -> None:
    rng = np.random.default_rng(seed)
    dfn = float(rng.choice([1, 2, 3, 5, 10, 30, 200]))
    dfd = float(rng.uniform(0.5, 300)) if seed % 2 else float(rng.integers(1, 400))  # Satterthwaite's are not whole
    for level in (0.025, 0.5, 0.975, 0.999):
        assert f_quantile(level, dfn, dfd) == pytest.approx(stats.f.ppf(level, dfn, dfd), rel=1e-10)
    f = float(rng.uniform(0.01, 20))
    assert f_cdf(f, dfn, dfd) == pytest.approx(stats.f.cdf(f, dfn, dfd), rel=1e-11, abs=1e-14)


def test_refuses_what_has_no_quantile() -> None:
    with pytest.raises(ValueError):
        f_quantile(1.0, 2, 3)


@pytest.mark.parametrize("df", [1, 2, 3, 7, 11, 30, 250])
@pytest.mark.parametrize("level", [0.8, 0.9, 0.95, 0.99, 0.999])
def test_t_quantiles_and_tails_of_the_intervals_match_scipy(df: int, level: float) -> None:
    """The t interval's critical value (from F(1, df)) and the t test's tail (from the incomplete
    beta) against scipy.stats.t."""
    spec = IntervalSpec(level, "t")
    assert spec.quantile(df + 1) == pytest.approx(stats.t.ppf((1 + level) / 2, df), rel=1e-12)
    for statistic in (-3.5, -0.4, 0.0, 0.7, 2.1, 6.0):
        assert spec.upper_tail(statistic, df + 1) == pytest.approx(stats.t.sf(statistic, df), rel=1e-10, abs=1e-300)
    normal = IntervalSpec(level, "normal")
    assert normal.quantile(10) == pytest.approx(stats.norm.ppf((1 + level) / 2), rel=1e-14)
