"""Intraclass correlations: the published worked example of Shrout & Fleiss (1979) and
pingouin's intraclass_corr as an oracle on random data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from irr_audit.metrics.icc import intraclass_correlations, mean_squares

# Shrout, P. E. & Fleiss, J. L. (1979), Psychological Bulletin 86(2), 420-428, Table 2:
# six targets (rows) rated by four judges (columns).
SHROUT_FLEISS = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]])


def test_shrout_fleiss_mean_squares_table_3() -> None:
    # Table 3: BMS 11.24, JMS 32.49, EMS 1.02, WMS 6.26 (df 5, 3, 15, 18)
    ms = mean_squares(SHROUT_FLEISS)
    assert [round(x, 2) for x in (ms.rows, ms.columns, ms.error, ms.within)] == [11.24, 32.49, 1.02, 6.26]
    # exact: the sums of squares of the table are whole numbers over 24 and 6
    assert ms.rows == pytest.approx(56.2083333333 / 5) and ms.columns == pytest.approx(97.4583333333 / 3)


def test_shrout_fleiss_table_4_all_six_forms() -> None:
    # Table 4: ICC(1,1) .17, ICC(2,1) .29, ICC(3,1) .71, ICC(1,4) .44, ICC(2,4) .62, ICC(3,4) .91
    icc = intraclass_correlations(SHROUT_FLEISS)
    published = {"icc_1": 0.17, "icc_a1": 0.29, "icc_c1": 0.71, "icc_k": 0.44, "icc_ak": 0.62, "icc_ck": 0.91}
    assert {name: round(icc[name].value or 0, 2) for name in published} == published
    assert icc["icc_a1"].extra["shrout_fleiss"] == "ICC(2,1)"
    assert len({form for name in icc for form in icc[name].extra["mcgraw_wong"]}) == 10


def _pingouin(ratings: np.ndarray) -> pd.DataFrame:
    pg = pytest.importorskip("pingouin")
    n, k = ratings.shape
    long = pd.DataFrame(
        {"unit": np.repeat(np.arange(n), k), "coder": np.tile(np.arange(k), n), "value": ratings.ravel()}
    )
    return pg.intraclass_corr(long, targets="unit", raters="coder", ratings="value").set_index("Type")


PINGOUIN_TYPE = {  # pingouin >= 0.7 names the forms by McGraw & Wong (1996)
    "icc_1": "ICC(1,1)",
    "icc_a1": "ICC(A,1)",
    "icc_c1": "ICC(C,1)",
    "icc_k": "ICC(1,k)",
    "icc_ak": "ICC(A,k)",
    "icc_ck": "ICC(C,k)",
}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # pingouin divides by MSE = 0 where we give no interval
@pytest.mark.parametrize("seed", range(40))
def test_pingouin_agrees_on_random_data(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(3, 40)), int(rng.integers(2, 6))
    ratings = rng.integers(0, int(rng.integers(2, 8)), size=(n, 1)) + rng.integers(0, 3, size=(n, k)) * rng.random()
    ratings = np.round(ratings, 1)
    if np.ptp(ratings) == 0:
        ratings[0, 0] += 1
    oracle = _pingouin(ratings)
    ours = intraclass_correlations(ratings)
    for name, kind in PINGOUIN_TYPE.items():
        metric = ours[name]
        if kind not in oracle.index:  # pingouin < 0.7 names them ICC1 ... ICC3k
            kind = {"ICC(1,1)": "ICC1", "ICC(A,1)": "ICC2", "ICC(C,1)": "ICC3"}.get(kind, kind)
            kind = {"ICC(1,k)": "ICC1k", "ICC(A,k)": "ICC2k", "ICC(C,k)": "ICC3k"}.get(kind, kind)
        assert metric.defined, (name, metric.reason)
        assert metric.value == pytest.approx(oracle.loc[kind, "ICC"], abs=1e-10)
        low, high = oracle.loc[kind, "CI95"]
        if metric.ci is not None:  # pingouin rounds its interval to two decimals
            assert metric.ci[0] == pytest.approx(low, abs=0.0051) and metric.ci[1] == pytest.approx(high, abs=0.0051)


def test_counts_weight_rows_like_repeated_units() -> None:
    rows = np.array([[1.0, 2.0, 2.0], [3.0, 3.0, 4.0], [0.0, 1.0, 0.0]])
    counts = np.array([3, 1, 2])
    weighted = intraclass_correlations(rows, counts)
    repeated = intraclass_correlations(np.repeat(rows, counts, axis=0))
    for name in weighted:
        assert weighted[name].value == pytest.approx(repeated[name].value, abs=1e-12)
        assert weighted[name].ci == pytest.approx(repeated[name].ci, abs=1e-12)


def test_undefined_cases_are_decided_exactly() -> None:
    same = intraclass_correlations(np.full((5, 3), 2.5))
    assert all(not m.defined and "no variation" in (m.reason or "") for m in same.values())
    one_unit = intraclass_correlations(np.array([[1.0, 2.0]]))
    assert not one_unit["icc_c1"].defined and "n = 1" in (one_unit["icc_c1"].reason or "")
    # every coder agrees on every unit, the units differ: ICC is 1 and no F interval exists
    perfect = intraclass_correlations(np.array([[0.1, 0.1], [0.7, 0.7], [0.3, 0.3]]))
    assert perfect["icc_1"].value == 1.0 and perfect["icc_1"].ci is None
    assert "infinite" in perfect["icc_1"].extra["ci_reason"]
    # 0.1 + 0.2 is not 0.3 in floating point; the residual is still exactly zero in the values
    shifted = intraclass_correlations(np.array([[0.1, 0.3], [0.2, 0.4], [0.5, 0.7]]))
    assert shifted["icc_c1"].value == 1.0 and shifted["icc_c1"].ci is None


@pytest.mark.parametrize(
    "ratings",
    [
        [[1, 2], [2, 1], [1, 2], [2, 1]],  # MSR = MSC = 0: Satterthwaite's df 0/0
        [[1, 2], [1, 2], [2, 1]],  # MSR = 0: df 0
        [[1, 3], [1, 3], [2, 2]],
        [[3, 1, 3], [3, 2, 1]],  # the single-rater lower bound at -1/(k-1), the step-up's pole
        [[2, 2, 1, 2], [1, 2, 2, 2]],
        [[0.2, 0.1, 0.4, 0.3], [0.2, 0.3, 0.3, 0.2]],  # decimals whose float terms cancel
    ],
)
def test_small_degenerate_audits_give_every_form_or_say_why_not(ratings) -> None:
    """Found crashing (ZeroDivisionError, an F quantile of 0 degrees of freedom) or giving an
    ICC(A,k) interval whose lower bound lay above its upper: every form is a number or undefined
    with its reason, and every interval given is ordered and holds its estimate."""
    for name, metric in intraclass_correlations(np.array(ratings, dtype=float)).items():
        assert metric.defined or metric.reason, name
        if metric.ci is not None:
            low, high = metric.ci
            assert low - 1e-12 <= metric.value <= high + 1e-12, (name, metric)
        elif metric.defined:
            assert metric.extra.get("ci_reason"), name
