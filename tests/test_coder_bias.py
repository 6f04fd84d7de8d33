"""Coder bias (marginal homogeneity) tests and Kendall's W: published examples, and
statsmodels and scipy as oracles on random tables."""

from __future__ import annotations

import numpy as np
import pytest

from irr_audit.metrics.coder_bias import bhapkar, kendall_w, marginal_homogeneity, mcnemar, stuart_maxwell

# Stuart (1955), Biometrika 42, 412-416: unaided distance vision of 7,477 women, right eye (rows)
# by left eye; the marginal homogeneity statistics are 11.96 (Stuart-Maxwell) and 11.98 (Bhapkar),
# df 3 (Agresti 2013, Categorical Data Analysis, 3rd ed., section 11.3; SAS/STAT PROC CATMOD docs).
VISION = np.array([[1520, 266, 124, 66], [234, 1512, 432, 78], [117, 362, 1772, 205], [36, 82, 179, 492]])


def test_stuart_vision_data() -> None:
    sm, bh = stuart_maxwell(VISION), bhapkar(VISION)
    assert (round(sm["statistic"], 2), sm["df"]) == (11.96, 3)
    assert (round(bh["statistic"], 2), bh["df"]) == (11.98, 3)
    assert sm["p_value"] == pytest.approx(0.0075, abs=5e-5)


def test_mcnemar_agresti_presidential_approval() -> None:
    # Agresti (2013), Table 11.1: approval at two surveys, 794 / 150 / 86 / 570; z^2 = 17.36
    result = mcnemar(np.array([[794, 150], [86, 570]]))
    assert round(result["statistic"], 2) == 17.36 and result["df"] == 1
    assert result["p_value"] < 1e-4


@pytest.mark.parametrize("seed", range(60))
def test_statsmodels_agrees_on_random_tables(seed: int) -> None:
    from statsmodels.stats.contingency_tables import SquareTable
    from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 6))
    table = rng.integers(0, 30, size=(k, k)) + np.diag(rng.integers(5, 40, size=k))
    square = SquareTable(table, shift_zeros=False)
    for ours, method in ((stuart_maxwell(table), "stuart_maxwell"), (bhapkar(table), "bhapkar")):
        theirs = square.homogeneity(method=method)
        assert ours["statistic"] == pytest.approx(theirs.statistic, rel=1e-10)
        assert ours["df"] == theirs.df
        # statsmodels takes 1 - cdf, which loses the digits of a p-value below 1e-12; ours is the upper tail
        assert ours["p_value"] == pytest.approx(theirs.pvalue, rel=1e-8, abs=1e-12)
    if k == 2:
        theirs = sm_mcnemar(table, exact=False, correction=False)
        ours = mcnemar(table)
        assert ours["statistic"] == pytest.approx(theirs.statistic, rel=1e-12)
        assert ours["p_value"] == pytest.approx(theirs.pvalue, rel=1e-10)
        assert ours["exact_p_value"] == pytest.approx(sm_mcnemar(table, exact=True).pvalue, rel=1e-10)


@pytest.mark.parametrize(("k", "n"), [(0, 1001), (480, 1001), (500, 1001), (1200, 5000), (49_000, 100_000)])
def test_binomial_tail_beyond_the_exact_sum(k: int, n: int) -> None:
    from scipy.stats import binom

    from irr_audit.metrics.coder_bias import binomial_half_cdf

    assert binomial_half_cdf(k, n) == pytest.approx(binom.cdf(k, n, 0.5), rel=1e-9, abs=1e-300)


def test_mcnemar_of_millions_of_units_is_quick() -> None:
    result = mcnemar(np.array([[3_000_000, 3_000_000], [6_000_000, 3_000_000]]))
    assert result["statistic"] == pytest.approx(3_000_000**2 / 9_000_000) and result["exact_p_value"] == 0.0


def test_many_categories_in_floating_point_agree_with_statsmodels() -> None:
    from statsmodels.stats.contingency_tables import SquareTable

    rng = np.random.default_rng(11)
    table = rng.integers(0, 5, size=(80, 80)) + np.diag(rng.integers(20, 60, size=80))
    ours = stuart_maxwell(table)
    assert ours["df"] == 79
    assert ours["statistic"] == pytest.approx(SquareTable(table, shift_zeros=False).homogeneity().statistic, rel=1e-9)


def test_undefined_cases_say_why() -> None:
    perfect = np.diag([5, 7, 3])
    assert all(not test["defined"] and test["reason"] for test in marginal_homogeneity(perfect))
    assert not mcnemar(np.array([[4, 0], [0, 6]]))["defined"]
    # every unit off the diagonal in one direction: Stuart-Maxwell = n, Bhapkar's covariance is singular
    one_way = np.array([[0, 6], [0, 0]])
    assert stuart_maxwell(one_way)["statistic"] == 6.0
    assert not bhapkar(one_way)["defined"] and "singular" in bhapkar(one_way)["reason"]
    # a category neither coder used leaves the test alone (it has K - 1 df over the used ones)
    padded = np.zeros((3, 3), dtype=int)
    padded[:2, :2] = [[20, 10], [5, 15]]
    assert stuart_maxwell(padded)["statistic"] == stuart_maxwell(padded[:2, :2])["statistic"]
    assert stuart_maxwell(padded)["df"] == 1


@pytest.mark.parametrize("seed", range(40))
def test_kendall_w_matches_friedman_on_random_codes(seed: int) -> None:
    from scipy.stats import friedmanchisquare

    rng = np.random.default_rng(seed)
    n, m, k = int(rng.integers(3, 30)), int(rng.integers(2, 6)), int(rng.integers(2, 6))
    truth = rng.integers(0, k, size=(n, 1))
    codes = np.clip(truth + rng.integers(-1, 2, size=(n, m)), 0, k - 1)
    rows, counts = np.unique(codes, axis=0, return_counts=True)
    ours = kendall_w(rows, counts)
    if not ours["defined"]:
        assert (codes == codes[0, 0]).all()
        return
    # friedmanchisquare: one sample per unit (treatment), the coders are the blocks
    chi2, p = friedmanchisquare(*codes)
    assert ours["friedman_chi2"] == pytest.approx(chi2, rel=1e-10)
    assert ours["value"] == pytest.approx(chi2 / (m * (n - 1)), rel=1e-10)
    assert ours["p_value"] == pytest.approx(p, rel=1e-8)


def test_kendall_w_extremes() -> None:
    same_order = kendall_w(np.array([[0, 0, 0], [1, 1, 1], [2, 2, 2]]), np.array([2, 3, 1]))
    assert same_order["value"] == 1.0
    all_tied = kendall_w(np.array([[1, 1]]), np.array([5]))
    assert not all_tied["defined"] and "same code" in all_tied["reason"]
