"""Krippendorff's bootstrap of alpha (Hayes & Krippendorff 2007): its distribution checked
against the exact moments of the algorithm and against a draw-by-draw transcription of the
KALPHA loop; Krippendorff's (2011) reliability data as the worked example."""

from __future__ import annotations

import numpy as np
import pytest

from irr_audit.metrics.alpha_bootstrap import krippendorff_bootstrap
from irr_audit.metrics.krippendorff import coincidence_matrix, difference_batch, krippendorff_alpha
from irr_audit.metrics.patterns import compress
from irr_audit.rules.scale import Scale
from tests.kalpha_oracle import KRIPPENDORFF_2011, kalpha_replicates


def _moments(codes: np.ndarray, scale: Scale) -> tuple[float, float, int]:
    """The exact mean and variance of alpha* under the algorithm (before the -1 floor and the
    correction of ones), and the number of pairs drawn per replicate."""
    patterns = compress(codes, 5)
    o = coincidence_matrix(patterns)
    n_c = o.sum(axis=1)
    n = n_c.sum()
    delta = np.asarray(difference_batch(scale, n_c.astype(float), None))
    d_e = float(n_c @ delta @ n_c) / (n * (n - 1))
    upper = np.triu_indices(5)
    p = np.where(upper[0] == upper[1], o[upper], 2 * o[upper]) / n
    d = delta[upper]
    m = int(min(25 * np.count_nonzero(o), (4 - 1) * n / 2))
    mean_delta, var_delta = p @ d, p @ d**2 - (p @ d) ** 2
    return 1 - mean_delta / d_e, var_delta / (m * d_e**2), m


@pytest.mark.parametrize("scale", [Scale.NOMINAL, Scale.ORDINAL])
def test_distribution_has_the_algorithms_exact_moments(scale: Scale) -> None:
    patterns = compress(KRIPPENDORFF_2011, 5)
    mean, variance, draws = _moments(KRIPPENDORFF_2011, scale)
    assert mean == pytest.approx(krippendorff_alpha(KRIPPENDORFF_2011, 5, scale).value, abs=1e-12)
    result = krippendorff_bootstrap(patterns, scale, None, 20000, np.random.default_rng(7), (0.667, 0.8))
    assert result["pairs_per_replicate"] == draws  # min(25 q, (m - 1) n.. / 2) = (4 - 1) 41 / 2 -> 61
    assert result["mean"] == pytest.approx(mean, abs=5 * np.sqrt(variance / 20000))
    low, high = result["ci"]
    assert low < mean < high
    assert result["ci"] == pytest.approx([mean - 1.96 * np.sqrt(variance), mean + 1.96 * np.sqrt(variance)], abs=0.03)


def test_agrees_with_a_draw_by_draw_transcription_of_kalpha() -> None:
    """KALPHA draws each pair by comparing a uniform number with the cumulative probabilities."""
    patterns = compress(KRIPPENDORFF_2011, 5)
    n_boot = 4000
    loop = kalpha_replicates(KRIPPENDORFF_2011, 5, draws=61, n_boot=n_boot, seed=3)
    ours = krippendorff_bootstrap(patterns, Scale.NOMINAL, None, n_boot, np.random.default_rng(4), (0.667, 0.8))
    for a in (0.667, 0.8):
        q = next(item["q"] for item in ours["q_below"] if item["alpha_min"] == a)
        assert q == pytest.approx(np.mean(np.array(loop) < a), abs=0.035)
    assert ours["ci"] == pytest.approx(list(np.quantile(loop, [0.025, 0.975])), abs=0.04)


def test_seeded_replicates_are_reproducible_and_q_is_monotone() -> None:
    patterns = compress(KRIPPENDORFF_2011, 5)
    first = krippendorff_bootstrap(
        patterns, Scale.ORDINAL, None, 1000, np.random.default_rng(1), (0.5, 0.667, 0.8, 0.9)
    )
    again = krippendorff_bootstrap(
        patterns, Scale.ORDINAL, None, 1000, np.random.default_rng(1), (0.5, 0.667, 0.8, 0.9)
    )
    assert first == again
    qs = [item["q"] for item in first["q_below"]]
    assert qs == sorted(qs) and 0 <= qs[0] and qs[-1] <= 1


def test_undefined_without_variation_or_pairs() -> None:
    same = compress(np.array([[1, 1], [1, 1], [1, 1]]), 3)
    result = krippendorff_bootstrap(same, Scale.NOMINAL, None, 100, np.random.default_rng(0))
    assert not result["defined"] and "expected disagreement = 0" in result["reason"]
    lonely = compress(np.array([[1, -1], [-1, 2]]), 3)
    result = krippendorff_bootstrap(lonely, Scale.NOMINAL, None, 100, np.random.default_rng(0))
    assert not result["defined"] and "no pairable values" in result["reason"]


def test_a_single_diagonal_value_drawn_alone_counts_as_zero_not_one() -> None:
    # one category dominates: (60 / 62)^31 = 36% of the replicates draw only (yes, yes) pairs, where
    # alpha is 0/0; KALPHA counts them 0, so none is 1 and every replicate is below 1
    codes = np.array([[0, 0]] * 30 + [[0, 1]])
    result = krippendorff_bootstrap(compress(codes, 2), Scale.NOMINAL, None, 2000, np.random.default_rng(5), (0.0, 1.0))
    assert result["pairs_per_replicate"] == 31
    q_zero, q_one = (item["q"] for item in result["q_below"])
    assert q_one == 1.0
    # one (yes, no) pair of 31 gives alpha* = 1 - 1 / (31 D_e) = 0 (D_e = 2 / 62); two or more go below 0
    p = 2 / 62
    assert q_zero == pytest.approx(1 - (1 - p) ** 31 - 31 * p * (1 - p) ** 30, abs=0.03)
