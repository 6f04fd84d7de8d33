"""Published and worked values, each with its source beside it.

Floats are compared at the precision the source prints.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from irr_audit.metrics import (
    brennan_prediger,
    cohen_kappa,
    conger_kappa,
    fleiss_kappa,
    gwet_ac,
    krippendorff_alpha,
    percent_agreement,
    scott_pi,
    summarise,
    weighted_kappa,
)
from irr_audit.metrics.weights import linear_weights, quadratic_weights


def codes_from_table(table: list[list[int]]) -> np.ndarray:
    """Unit rows (coder 1, coder 2) reproducing a K x K table."""
    rows = [[i, j] for i, row in enumerate(table) for j, n in enumerate(row) for _ in range(n)]
    return np.array(rows, dtype=np.int64).reshape(-1, 2)


# --- docs/statistics.md worked examples -------------------------------------------------------


def test_domain_example_a_two_missing_units_stay_out_of_n():
    # docs/statistics.md, example A: 22 units, one `unknown` (A) and one blank (B) -> 20 in the table.
    agree = [[0, 0]] * 8 + [[0, 1]] * 2 + [[1, 0]] + [[1, 1]] * 9
    codes = np.array(agree + [[-1, 0], [1, -1]])
    s = summarise(codes, 2, "nominal")
    d = s.to_dict(["yes", "no"], ["alice", "bob"])
    assert d["units"] == {"total": 22, "fully_coded": 20, "available_case": 20, "gwet_missing": 22}
    assert d["table"] == [[8, 2], [1, 9]]
    assert d["metrics"]["po"]["value"] == pytest.approx(0.85, abs=1e-12)
    assert d["metrics"]["pe"]["value"] == pytest.approx(0.50, abs=1e-12)
    assert d["metrics"]["cohen_kappa"]["value"] == pytest.approx(0.70, abs=1e-12)
    assert d["pairs"][0]["coders"] == ["alice", "bob"] and d["pairs"][0]["n"] == 20


def test_domain_example_b_high_agreement_negative_kappa_and_paradox_flag():
    # docs/statistics.md, example B: yes 19 / no 1 each, 2 disagreements: po .90, pe .905, kappa -1/19.
    table = [[18, 1], [1, 0]]
    s = summarise(codes_from_table(table), 2, "nominal")
    assert s.metrics["po"].value == pytest.approx(0.90)
    assert s.metrics["pe"].value == pytest.approx(0.905)
    assert s.metrics["cohen_kappa"].value == pytest.approx(-1 / 19, abs=1e-12)
    assert any("kappa paradox" in w for w in s.warnings)
    assert s.metrics["pabak"].value == pytest.approx(0.80)
    assert s.metrics["prevalence_index"].value == pytest.approx(0.90)
    assert s.metrics["bias_index"].value == pytest.approx(0.0)


def test_domain_example_c_kappa_undefined_never_perfect():
    # docs/statistics.md, example C: both coders "yes" on all 20 units: po = pe = 1, kappa undefined.
    s = summarise(np.zeros((20, 2), dtype=int), 2, "nominal")
    d = s.to_dict(["yes", "no"], ["a", "b"])["metrics"]
    assert d["po"]["value"] == 1.0
    for name in ("cohen_kappa", "scott_pi", "max_kappa", "krippendorff_alpha"):
        assert d[name]["value"] is None and d[name]["defined"] is False
        assert d[name]["reason"]
    assert "pe = 1" in d["cohen_kappa"]["reason"]


def test_domain_example_d_support_tickets():
    # docs/statistics.md, example D: kappa = 0.155 / 0.255 = 0.6078...
    a = [1, 1, 1] + [0] * 17
    b = [1, 1, 0, 1] + [0] * 16
    s = summarise(np.column_stack([a, b]), 2, "nominal")
    assert s.table.tolist() == [[16, 1], [1, 2]]  # categories in rule order (0 = not urgent)
    assert s.metrics["po"].value == pytest.approx(0.90)
    assert s.metrics["pe"].value == pytest.approx(0.745)
    assert s.metrics["cohen_kappa"].value == pytest.approx(0.155 / 0.255, abs=1e-12)


def test_domain_example_e_fleiss_three_raters():
    # docs/statistics.md, example E: P_bar = 0.7333, P_e = 0.52, Fleiss' kappa = 0.4444...
    codes = np.array([[1, 1, 1], [1, 1, 0], [0, 0, 0], [1, 0, 0], [0, 0, 0]])
    s = summarise(codes, 2, "nominal")
    assert s.metrics["po"].value == pytest.approx(11 / 15)
    assert s.metrics["pe"].value == pytest.approx(0.52)
    assert s.metrics["fleiss_kappa"].value == pytest.approx(0.4444444444, abs=1e-9)
    assert len(s.pairs) == 3 and s.table.shape == (2, 2)  # coincidence matrix


# --- SAS PROC FREQ printouts quoted in statsmodels' stats/tests/test_inter_rater.py ---

SAS_TABLE = [[0, 4, 1], [0, 8, 0], [0, 1, 5]]


def test_sas_simple_kappa_with_ase_and_ci():
    # SAS: Kappa 0.4842, ASE 0.1380, 95% CI 0.2137..0.7547, ASE under H0 0.1484.
    m = cohen_kappa(np.array(SAS_TABLE))
    assert m.value == pytest.approx(0.4842, abs=5e-5)
    assert m.se == pytest.approx(0.1380, abs=5e-5)
    assert m.ci == pytest.approx((0.2137, 0.7547), abs=5e-5)
    assert m.extra["se_h0"] == pytest.approx(0.1484, abs=5e-5)


def test_sas_weighted_kappa_linear_weights():
    # SAS (Cicchetti-Allison = linear weights): 0.4701, ASE 0.1457, CI 0.1845..0.7558, H0 0.1426.
    m = weighted_kappa(np.array(SAS_TABLE), linear_weights(3))
    assert m.value == pytest.approx(0.4701, abs=5e-5)
    assert m.se == pytest.approx(0.1457, abs=5e-5)
    assert m.ci == pytest.approx((0.1845, 0.7558), abs=5e-5)
    assert m.extra["se_h0"] == pytest.approx(0.1426, abs=5e-5)


# R irr::kappa2(anxiety[, 2:3], ...) printouts in statsmodels' test_inter_rater.py;
# irr drops the unused level 5, so the table has the 5 observed levels 1, 2, 3, 4, 6.
ANXIETY = np.array(
    [
        3,
        3,
        3,
        4,
        5,
        5,
        2,
        3,
        5,
        2,
        2,
        6,
        1,
        5,
        2,
        2,
        1,
        2,
        4,
        3,
        3,
        6,
        4,
        6,
        2,
        4,
        2,
        4,
        3,
        3,
        2,
        3,
        3,
        3,
        2,
        2,
        1,
        3,
        3,
        4,
        2,
        1,
        4,
        4,
        3,
        2,
        1,
        6,
        1,
        1,
        1,
        2,
        3,
        3,
        1,
        1,
        3,
        3,
        2,
        2,
    ]
).reshape(20, 3, order="F")


@pytest.mark.parametrize(
    ("weights", "kappa", "z"),
    [
        (None, -0.006289308, -0.0604067),
        (linear_weights(5), 0.1459075, 1.282472),
        (quadratic_weights(5), 0.2520325, 1.437451),
    ],
)
def test_irr_kappa2_anxiety(weights, kappa, z):
    level = {1: 0, 2: 1, 3: 2, 4: 3, 6: 4}
    codes = np.vectorize(level.get)(ANXIETY[:, 1:])
    table = np.zeros((5, 5), dtype=int)
    np.add.at(table, (codes[:, 0], codes[:, 1]), 1)
    m = cohen_kappa(table) if weights is None else weighted_kappa(table, weights)
    assert m.value == pytest.approx(kappa, abs=1e-7)
    # irr's z is kappa / SE under H0 (Fleiss, Cohen & Everitt 1969).
    assert m.value / m.extra["se_h0"] == pytest.approx(z, abs=1e-5)


# --- Fleiss (1971) diagnoses: 30 patients, 6 psychiatrists, 5 categories --------------
# Data as in statsmodels' test_inter_rater.py and R irr::diagnoses. Fleiss (1971) prints
# kappa = .430; irr::kappam.fleiss gives 0.4302445 with z = 17.65183 (null SE of
# Fleiss, Nee & Landis 1979).
DIAGNOSES = (
    np.array(
        [
            [4, 4, 4, 4, 4, 4],
            [2, 2, 2, 5, 5, 5],
            [2, 3, 3, 3, 3, 5],
            [5, 5, 5, 5, 5, 5],
            [2, 2, 2, 4, 4, 4],
            [1, 1, 3, 3, 3, 3],
            [3, 3, 3, 3, 5, 5],
            [1, 1, 3, 3, 3, 4],
            [1, 1, 4, 4, 4, 4],
            [5, 5, 5, 5, 5, 5],
            [1, 4, 4, 4, 4, 4],
            [1, 2, 4, 4, 4, 4],
            [2, 2, 2, 3, 3, 3],
            [1, 4, 4, 4, 4, 4],
            [2, 2, 4, 4, 4, 5],
            [3, 3, 3, 3, 3, 5],
            [1, 1, 1, 4, 5, 5],
            [1, 1, 1, 1, 1, 2],
            [2, 2, 4, 4, 4, 4],
            [1, 3, 3, 5, 5, 5],
            [5, 5, 5, 5, 5, 5],
            [2, 4, 4, 4, 4, 4],
            [2, 2, 4, 5, 5, 5],
            [1, 1, 4, 4, 4, 4],
            [1, 4, 4, 4, 4, 5],
            [2, 2, 2, 2, 2, 4],
            [1, 1, 1, 1, 5, 5],
            [2, 2, 4, 4, 4, 4],
            [1, 3, 3, 3, 3, 3],
            [5, 5, 5, 5, 5, 5],
        ]
    )
    - 1
)


def test_fleiss_1971_diagnoses():
    m = fleiss_kappa(DIAGNOSES, 5)
    assert round(m.value, 3) == 0.430
    assert m.value == pytest.approx(0.4302445, abs=1e-7)
    assert m.value / m.extra["se_h0"] == pytest.approx(17.65183, abs=1e-4)


# --- Gwet's irrCAC (R) README, cac.raw4raters: Krippendorff's 4 coders x 12 units ------
# (categories 1..5 -> 0..4, NA -> -1). Printed: pa 0.8181818;
# AC1 0.77544 (se 0.14295, pe 0.1903212); Fleiss 0.76117 (se 0.15302, pe 0.2387153);
# Conger 0.76282 (se 0.14917, pe 0.2334252); BP 0.77273 (se 0.14472);
# Krippendorff's alpha 0.74342 (se 0.14557).
RAW4 = np.array(
    [
        [0, 0, -1, 0],
        [1, 1, 2, 1],
        [2, 2, 2, 2],
        [2, 2, 2, 2],
        [1, 1, 1, 1],
        [0, 1, 2, 3],
        [3, 3, 3, 3],
        [0, 0, 1, 0],
        [1, 1, 1, 1],
        [-1, 4, 4, 4],
        [-1, -1, 0, 0],
        [-1, -1, 2, -1],
    ]
)


@pytest.mark.parametrize(
    ("coefficient", "value", "se"),
    [
        (gwet_ac, 0.77544, 0.14295),
        (fleiss_kappa, 0.76117, 0.15302),
        (conger_kappa, 0.76282, 0.14917),
        (brennan_prediger, 0.77273, 0.14472),
    ],
)
def test_irrcac_raw4raters(coefficient, value, se):
    m = coefficient(RAW4, 5)
    assert m.value == pytest.approx(value, abs=5e-6)
    assert m.se == pytest.approx(se, abs=5e-6)


def test_irrcac_raw4raters_percent_agreement_and_alpha():
    assert percent_agreement(RAW4, 5).value == pytest.approx(0.8181818, abs=1e-7)
    alpha = krippendorff_alpha(RAW4, 5)
    assert alpha.value == pytest.approx(0.74342, abs=5e-6)
    # Our transcription of irrCAC's current krippen.alpha.raw variance gives 0.14548;
    # the README printout (an earlier irrCAC build) shows 0.14557. Agree to 1e-4.
    assert alpha.se == pytest.approx(0.14557, abs=1e-4)


# --- Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the same data --
@pytest.mark.parametrize(
    ("scale", "alpha"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)]
)
def test_krippendorff_2011_all_levels_with_missing_data(scale, alpha):
    m = krippendorff_alpha(RAW4, 5, scale, values=[1, 2, 3, 4, 5])
    assert round(m.value, 3) == alpha


def test_krippendorff_three_coders_fifteen_units():
    # Krippendorff's alpha Wikipedia worked example, as in the `krippendorff` package
    # docstring (values 1..5 -> 0..4): nominal 0.691358, interval 0.810845.
    nan = -1
    data = np.array(
        [
            [nan, nan, nan, nan, nan, 3, 4, 1, 2, 1, 1, 3, 3, nan, 3],
            [1, nan, 2, 1, 3, 3, 4, 3, nan, nan, nan, nan, nan, nan, nan],
            [nan, nan, 2, 1, 3, 4, 4, nan, 2, 1, 1, 3, 3, nan, 4],
        ]
    ).T
    codes = np.where(data > 0, data - 1, -1)
    assert krippendorff_alpha(codes, 5).value == pytest.approx(0.691358, abs=5e-7)
    interval = krippendorff_alpha(codes, 5, "interval", [1, 2, 3, 4, 5])
    assert interval.value == pytest.approx(0.810845, abs=5e-7)


# --- irrCAC README, cont3x3abstractors (2 raters, 100 units) ----------------------------
ABSTRACTORS = [[13, 0, 0], [0, 20, 7], [0, 4, 56]]


def test_irrcac_contingency_table_two_raters():
    # kappa2.table: 0.7964094 se 0.05891072 (= Fleiss-Cohen-Everitt); scott2.table:
    # 0.7962397 se 0.05905473; krippen2.table: 0.7972585; pa2.table 0.89.
    table = np.array(ABSTRACTORS)
    kappa = cohen_kappa(table)
    assert kappa.value == pytest.approx(0.7964094, abs=1e-7)
    assert kappa.se == pytest.approx(0.05891072, abs=1e-8)
    pi = scott_pi(table)
    assert pi.value == pytest.approx(0.7962397, abs=1e-7)
    assert pi.se == pytest.approx(0.05905473, abs=1e-8)
    s = summarise(codes_from_table(ABSTRACTORS), 3, "nominal")
    assert s.metrics["po"].value == pytest.approx(0.89)
    assert s.metrics["krippendorff_alpha"].value == pytest.approx(0.7972585, abs=1e-7)


def test_irrcac_contingency_table_ac1_and_bp():
    # gwet.ac1.table 0.8493305 se 0.04321747; bp2.table 0.835 se 0.04693346.
    # The table functions divide the variance by n, the raw-data ones (ours) by n - 1.
    codes = codes_from_table(ABSTRACTORS)
    n = len(codes)
    ac1, bp = gwet_ac(codes, 3), brennan_prediger(codes, 3)
    assert ac1.value == pytest.approx(0.8493305, abs=1e-7)
    assert ac1.se * math.sqrt((n - 1) / n) == pytest.approx(0.04321747, abs=1e-8)
    assert bp.value == pytest.approx(0.835, abs=1e-12)
    assert bp.se * math.sqrt((n - 1) / n) == pytest.approx(0.04693346, abs=1e-8)


# --- irrCAC README, distrib.6raters (15 patients, 6 raters, counts per category) --------
DISTRIB_6 = [
    [0, 0, 0, 6, 0],
    [0, 3, 0, 0, 3],
    [0, 1, 4, 0, 1],
    [0, 0, 0, 0, 6],
    [0, 3, 0, 3, 0],
    [2, 0, 4, 0, 0],
    [0, 0, 4, 0, 2],
    [2, 0, 3, 1, 0],
    [2, 0, 0, 4, 0],
    [0, 0, 0, 0, 6],
    [1, 0, 0, 5, 0],
    [1, 1, 0, 4, 0],
    [0, 3, 3, 0, 0],
    [1, 0, 0, 5, 0],
    [0, 2, 0, 3, 1],
]


def test_irrcac_distribution_of_six_raters():
    # gwet.ac1.dist 0.4448007 (se 0.08418757); fleiss.kappa.dist 0.4139265 (se 0.08119291);
    # krippen.alpha.dist 0.4204384; bp.coeff.dist 0.4388889 (se 0.08312142).
    codes = np.array([np.repeat(np.arange(5), row) for row in DISTRIB_6])
    ac1, fleiss = gwet_ac(codes, 5), fleiss_kappa(codes, 5)
    assert (ac1.value, ac1.se) == pytest.approx((0.4448007, 0.08418757), abs=1e-7)
    assert (fleiss.value, fleiss.se) == pytest.approx((0.4139265, 0.08119291), abs=1e-7)
    assert krippendorff_alpha(codes, 5).value == pytest.approx(0.4204384, abs=1e-7)
    bp = brennan_prediger(codes, 5)
    assert (bp.value, bp.se) == pytest.approx((0.4388889, 0.08312142), abs=1e-7)


# --- degenerate input: an outcome with a reason, never a crash -----------------------


@pytest.mark.parametrize("unit", [[0, 1], [1, 1]])
def test_one_unit(unit):
    s = summarise(np.array([unit]), 2, "nominal", n_boot=20, seed=0)
    assert s.metrics["po"].value == float(unit[0] == unit[1])
    for name in ("cohen_kappa", "scott_pi", "gwet_ac1", "krippendorff_alpha", "max_kappa"):
        assert not s.metrics[name].defined
        assert "single unit" in s.metrics[name].reason
    assert all(not m.defined for m in s.per_category[0].values() if m.reason)


def test_one_unit_three_coders():
    s = summarise(np.array([[0, 1, 1]]), 2, "ordinal")
    assert s.metrics["po"].value == pytest.approx(1 / 3)
    assert "single unit" in s.metrics["fleiss_kappa"].reason


def test_one_coder():
    s = summarise(np.array([[0], [1]]), 2, "nominal")
    d = s.to_dict(["yes", "no"], ["alice"])
    assert d["metrics"]["cohen_kappa"]["defined"] is False
    assert "one coder" in d["metrics"]["cohen_kappa"]["reason"]
    assert d["pairs"] == []


def test_no_shared_unit():
    codes = np.array([[0, -1], [1, -1], [-1, 0], [-1, 1]])
    s = summarise(codes, 2, "nominal")
    assert s.n_fully_coded == 0
    for name in ("po", "pe", "cohen_kappa", "gwet_ac1", "krippendorff_alpha"):
        assert not s.metrics[name].defined and s.metrics[name].reason
    assert s.pairs[0].n == 0


def test_no_shared_unit_among_three_coders_with_bootstrap():
    codes = np.array([[0, -1, -1], [-1, 1, -1], [-1, -1, 0]])
    s = summarise(codes, 2, "nominal", n_boot=50, seed=1)
    assert not s.metrics["fleiss_kappa"].defined
    assert not s.available_case["krippendorff_alpha"].defined


def test_scale_needing_values_without_values():
    with pytest.raises(ValueError, match="needs a numeric value"):
        summarise(np.array([[0, 1], [1, 1]]), 2, "interval")
    with pytest.raises(ValueError, match="non-negative"):
        summarise(np.array([[0, 1], [1, 1]]), 2, "ratio", values=[-1, 1])


def test_codes_outside_the_declared_categories_are_rejected():
    with pytest.raises(ValueError, match="category index"):
        summarise(np.array([[0, 2]]), 2, "nominal")
