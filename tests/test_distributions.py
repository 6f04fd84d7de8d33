"""The distribution functions written out in irr_audit.metrics.distributions against scipy.stats."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from irr_audit.metrics.distributions import chi2_sf, f_cdf, f_quantile, normal_cdf


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
