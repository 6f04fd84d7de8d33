"""Light's kappa and Kendall's W as coefficients of the audit: published values, oracles
(scikit-learn's Cohen's kappa, scipy's Friedman test), and the batch the bootstrap uses
against the exact point estimate."""

from __future__ import annotations

import numpy as np
import pytest

from irr_audit.metrics import summarise
from irr_audit.metrics.patterns import compress
from irr_audit.metrics.plan import kendall_w_batch

# Fleiss (1971), Table 1 (the layout of R irr's `diagnoses`): 30 patients, 6 psychiatrists,
# 5 diagnoses (1 depression, 2 personality disorder, 3 schizophrenia, 4 neurosis, 5 other).
DIAGNOSES = np.array(
    [[4, 4, 4, 4, 4, 4], [2, 2, 2, 5, 5, 5], [2, 3, 3, 3, 3, 5], [5, 5, 5, 5, 5, 5], [2, 2, 2, 4, 4, 4],
     [1, 1, 3, 3, 3, 3], [3, 3, 3, 3, 5, 5], [1, 1, 3, 3, 3, 4], [1, 1, 4, 4, 4, 4], [5, 5, 5, 5, 5, 5],
     [1, 4, 4, 4, 4, 4], [1, 2, 4, 4, 4, 4], [2, 2, 2, 3, 3, 3], [1, 4, 4, 4, 4, 4], [2, 2, 4, 4, 4, 5],
     [3, 3, 3, 3, 3, 5], [1, 1, 1, 4, 5, 5], [1, 1, 1, 1, 1, 2], [2, 2, 4, 4, 4, 4], [1, 3, 3, 5, 5, 5],
     [5, 5, 5, 5, 5, 5], [2, 4, 4, 4, 4, 4], [2, 2, 4, 5, 5, 5], [1, 1, 4, 4, 4, 4], [1, 4, 4, 4, 4, 5],
     [2, 2, 2, 2, 2, 4], [1, 1, 1, 1, 5, 5], [2, 2, 4, 4, 4, 4], [1, 3, 3, 3, 3, 3], [5, 5, 5, 5, 5, 5]]
) - 1  # fmt: skip


def test_light_kappa_of_the_diagnoses_data() -> None:
    # R irr, kappam.light(diagnoses): "Light's Kappa for m Raters ... Kappa = 0.459"
    summary = summarise(DIAGNOSES, 5, "nominal")
    assert round(summary.metrics["light_kappa"].value, 3) == 0.459


@pytest.mark.parametrize("seed", range(30))
def test_light_kappa_is_the_mean_of_sklearn_pairwise_kappas(seed: int) -> None:
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(seed)
    n, m, k = int(rng.integers(5, 40)), int(rng.integers(3, 6)), int(rng.integers(2, 5))
    codes = rng.integers(0, k, size=(n, m))
    summary = summarise(codes, k, "nominal")
    pairs = [(a, b) for a in range(m) for b in range(a + 1, m)]
    kappas = [cohen_kappa_score(codes[:, a], codes[:, b], labels=list(range(k))) for a, b in pairs]
    metric = summary.metrics["light_kappa"]
    if any(np.isnan(kappas)):
        assert not metric.defined and "pair" in (metric.reason or "")
    else:
        assert metric.value == pytest.approx(np.mean(kappas), abs=1e-12)


def test_light_kappa_undefined_when_a_pair_is() -> None:
    codes = np.array([[0, 0, 0], [0, 0, 1], [0, 0, 0]])  # coders 1 and 2: every unit "0", pe = 1
    metric = summarise(codes, 2, "nominal").metrics["light_kappa"]
    assert not metric.defined and "pair" in (metric.reason or "")


@pytest.mark.parametrize("seed", range(30))
def test_kendall_w_batch_matches_the_exact_point_and_friedman(seed: int) -> None:
    from scipy.stats import friedmanchisquare

    rng = np.random.default_rng(seed)
    n, m, k = int(rng.integers(3, 40)), int(rng.integers(2, 6)), int(rng.integers(2, 6))
    codes = np.clip(rng.integers(0, k, size=(n, 1)) + rng.integers(-1, 2, size=(n, m)), 0, k - 1)
    summary = summarise(codes, k, "ordinal")
    metric = summary.metrics["kendall_w"]
    patterns = compress(codes, k)
    value, code = kendall_w_batch(patterns, patterns.counts)
    if not metric.defined:
        assert code[0] != 0 and (codes == codes[0, 0]).all()
        return
    chi2, p = friedmanchisquare(*codes)
    assert metric.value == pytest.approx(chi2 / (m * (n - 1)), rel=1e-10)
    assert metric.extra["p_value"] == pytest.approx(p, rel=1e-8)
    assert value[0] == pytest.approx(metric.value, rel=1e-12)


def test_kendall_w_only_for_ordinal_rules_and_fully_coded_units() -> None:
    codes = np.array([[0, 1, 0], [1, 1, 2], [2, 2, 2], [2, -1, 1]])  # the last unit: two codes of three
    assert "kendall_w" not in summarise(codes, 3, "nominal").metrics
    summary = summarise(codes, 3, "ordinal")
    assert summary.metrics["kendall_w"].defined
    assert not summary.available_case["kendall_w"].defined
    assert "fully coded" in (summary.available_case["kendall_w"].reason or "")
