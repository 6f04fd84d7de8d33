"""Gwet's benchmarking (2014, ch. 6): irrCAC's published vignette figures, and the truncated
normal of scipy.stats as an oracle."""

from __future__ import annotations

import numpy as np
import pytest

from irr_audit.metrics.benchmark import SCALES, benchmarks


def test_irrcac_benchmarking_vignette() -> None:
    # irrCAC (R) vignette "irrCAC-benchmarking": gwet.ac1.raw(cac.raw4raters) gives AC1 0.77544,
    # SE 0.14295; landis.koch.bf, altman.bf and fleiss.bf print these CumProb columns.
    result = benchmarks(0.77544, 0.14295)
    cumulative = {name: [round(b["cumulative_probability"], 5) for b in result[name]["bands"]] for name in SCALES}
    assert cumulative == {
        "landis_koch": [0.39674, 0.88336, 0.99542, 0.99997, 1.0, 1.0],
        "altman": [0.39674, 0.88336, 0.99542, 0.99997, 1.0],
        "fleiss": [0.54414, 0.99542, 1.0],
    }
    assert result["landis_koch"]["reached_at_95"] == "moderate"  # as the vignette concludes
    assert result["fleiss"]["reached_at_95"] == "intermediate to good"


@pytest.mark.parametrize("seed", range(30))
def test_truncated_normal_oracle(seed: int) -> None:
    from scipy.stats import truncnorm

    rng = np.random.default_rng(seed)
    value, se = float(rng.uniform(-0.5, 1.0)), float(rng.uniform(0.01, 0.4))
    law = truncnorm((-1 - value) / se, (1 - value) / se, loc=value, scale=se)
    for name, bands in SCALES.items():
        ours = benchmarks(value, se)[name]["bands"]
        for (lower, upper, _), band in zip(bands, ours):
            assert band["probability"] == pytest.approx(law.cdf(upper) - law.cdf(lower), abs=1e-12)
            assert band["cumulative_probability"] == pytest.approx(law.sf(lower), abs=1e-12)
