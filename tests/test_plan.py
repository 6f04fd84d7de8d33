"""`irr-audit plan` and irr_audit.plan_*: every figure against its source.

Sources, side by side with what the tests assert:

- Krippendorff's alpha, Bloch & Kraemer's formula as Krippendorff (2019, ch. 12) uses it. The
  ATLAS.ti manual, "Sample Size and Decision Rules"
  (https://doc.atlasti.com/ManualWin.v22/ICA/ICASampleSizeAndDecisionRules.html), prints from it:
  "a semantic domain with 4 codes ... equally distributed (pc = 1/4 = 0,25) ... minimum alpha
  0.800 at a 0.05 level of statistical significance, you need a minimum of 139 codings ... For a
  lower alpha of 0.667, you need a minimum of 81 codings". Those two cells are asserted. The other
  cells of the printed table (codes 2-10 x alpha_min .667/.800/.900 x p .100/.050/.010/.005) were
  not available in a form that could be transcribed here; they are the formula's values with the
  exact normal quantile, and the test below records the 12 cells that would differ by one unit if
  the book rounded z to three decimals.
- Cohen's kappa, Cantor (1996): the irr package's documented example, ``N.cohen.kappa(0.5, 0.5,
  0.7, 0.85)`` printing ``[1] 96`` (irr 0.84, man/N.cohen.kappa.Rd; its arguments are rate1, rate2,
  k1 = the true kappa, k0 = the null kappa).
- Donner & Eliasziw (1992): the goodness-of-fit method as the kappaSize package (Rotondi, a
  co-author of Donner's) implements it in PowerBinary; its noncentrality is checked against scipy's
  noncentral chi-square, its cell probabilities against the binary formulas of kappaSize.
- The half-width formula: Q = n Var(kappa-hat) of Fleiss, Cohen & Everitt (1969), checked against
  the SE the audit itself reports (irr_audit.metrics.two_coder.fleiss_cohen_everitt_se), and the
  simulation checked against the formula where the formula is accurate (n near 1000).
"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner

import irr_audit
from irr_audit.cli import app
from irr_audit.errors import UsageError
from irr_audit.metrics import samplesize as ss
from irr_audit.metrics.two_coder import fleiss_cohen_everitt_se

SHEETS = ["examples/sheets/alice.csv", "examples/sheets/bob.csv"]
RULE = "rules/explicit_current_failure/v1.yaml"


def run(*args: str):
    return CliRunner().invoke(app, ["plan", *args], catch_exceptions=False)


# --- Krippendorff's alpha -------------------------------------------------------------------


@pytest.mark.parametrize(("alpha_min", "published"), [(0.800, 139), (0.667, 81)])
def test_alpha_reproduces_the_manuals_examples(alpha_min: float, published: int) -> None:
    assert ss.alpha_units(alpha_min, 0.05, codes=4).units == published
    assert ss.alpha_units(alpha_min, 0.05, smallest_share=0.25).units == published


def test_alpha_formula_by_hand() -> None:
    z = stats.norm.ppf(0.95)
    by_hand = 2 * z**2 * ((1.8 * 2.2) / (4 * 0.2 * 0.25 * 0.75) - 0.8)  # 138.55
    result = ss.alpha_units(0.8, 0.05, codes=4)
    assert result.figures["unrounded"] == pytest.approx(by_hand, rel=1e-12)
    assert result.units == math.ceil(by_hand)


def test_alpha_table_holds_the_manuals_cells_and_grows_as_it_should() -> None:
    table = ss.alpha_table()
    assert [row["codes"] for row in table] == list(range(2, 11))
    four = table[2]
    assert (four["0.800@0.050"], four["0.667@0.050"]) == (139, 81)
    for row in table:
        for a in ("0.667", "0.800", "0.900"):
            cells = [row[f"{a}@{level}"] for level in ("0.100", "0.050", "0.010", "0.005")]
            assert cells == sorted(cells)  # a stricter level needs more units
        for level in ("0.100", "0.050", "0.010", "0.005"):
            cells = [row[f"{a}@{level}"] for a in ("0.667", "0.800", "0.900")]
            assert cells == sorted(cells)  # a higher alpha_min needs more units
    for key in table[0]:
        if "@" in key:
            column = [row[key] for row in table]
            assert column == sorted(column)  # more codes, a rarer smallest code, more units


def test_alpha_table_cells_that_depend_on_how_z_is_rounded() -> None:
    """With z rounded to 1.282, 1.645, 2.326, 2.576 (a printed normal table) 12 of the 108 cells move
    by one unit; the manual's two cells do not. The exact quantile is used; this records where a
    printed table may differ."""
    rounded = {"0.100": 1.282, "0.050": 1.645, "0.010": 2.326, "0.005": 2.576}
    moved = []
    for row in ss.alpha_table():
        p = row["smallest_share"]
        for key, units in row.items():
            if "@" not in key:
                continue
            a, level = key.split("@")
            z, alpha_min = rounded[level], float(a)
            other = math.ceil(
                2 * z * z * ((1 + alpha_min) * (3 - alpha_min) / (4 * (1 - alpha_min) * p * (1 - p)) - alpha_min)
            )
            if other != units:
                assert abs(other - units) == 1
                moved.append((row["codes"], key))
    assert len(moved) == 12
    assert (4, "0.800@0.050") not in moved and (4, "0.667@0.050") not in moved


@pytest.mark.parametrize(
    ("kwargs", "option"),
    [
        ({"codes": 4, "smallest_share": 0.25}, "--codes"),
        ({}, "--codes"),
        ({"codes": 1}, "--codes"),
        ({"codes": True}, "--codes"),
        ({"smallest_share": 0.6}, "--smallest-share"),
        ({"smallest_share": 0.0}, "--smallest-share"),
        ({"smallest_share": float("nan")}, "--smallest-share"),
    ],
)
def test_alpha_refuses_what_the_formula_does_not_cover(kwargs: dict, option: str) -> None:
    with pytest.raises(UsageError) as caught:
        ss.alpha_units(0.8, 0.05, **kwargs)
    assert caught.value.code == "usage-plan"
    assert caught.value.message.startswith(option)


@pytest.mark.parametrize(
    ("alpha_min", "level"), [(1.0, 0.05), (0.0, 0.05), (0.8, 0.0), (0.8, 1.0), (0.8, float("inf"))]
)
def test_alpha_refuses_a_minimum_or_level_out_of_range(alpha_min: float, level: float) -> None:
    with pytest.raises(UsageError):
        ss.alpha_units(alpha_min, level, codes=4)


def test_alpha_near_one_is_refused_not_an_absurd_number() -> None:
    with pytest.raises(UsageError, match="more than"):
        ss.alpha_units(1 - 1e-12, 0.05, codes=4)


# --- kappa: a test ------------------------------------------------------------------------------


@pytest.mark.parametrize(("level", "power"), [(0.05, 0.8), (0.05, 0.9), (0.01, 0.8), (0.1, 0.95)])
def test_noncentrality_agrees_with_scipy(level: float, power: float) -> None:
    lam = ss._chi_square_1_noncentrality(level, power)
    critical = stats.chi2.ppf(1 - level, 1)
    assert stats.ncx2.sf(critical, 1, lam) == pytest.approx(power, abs=1e-9)


def test_donner_eliasziw_binary_cells_are_kappasizes() -> None:
    """kappaSize's PowerBinary (two raters): P0 = (1-p)^2 + k p (1-p), P1 = 2 (1-k) p (1-p),
    P2 = p^2 + k p (1-p); N = lambda / sum (P(k1) - P(k0))^2 / P(k0). Its documented example
    is kappa0 = 0.4, kappa1 = 0.6, prevalence 0.3, alpha 0.05, power 0.8."""

    def cells(k: float, p: float) -> np.ndarray:
        return np.array([(1 - p) ** 2 + k * p * (1 - p), 2 * (1 - k) * p * (1 - p), p**2 + k * p * (1 - p)])

    null, alternative = cells(0.4, 0.3), cells(0.6, 0.3)
    effect = (((alternative - null) ** 2) / null).sum()
    by_hand = ss._chi_square_1_noncentrality(0.05, 0.8) / effect
    result = ss.kappa_units(0.6, 0.4, prevalence=0.3, level=0.05, power=0.8)
    assert result.figures["effect_per_unit"] == pytest.approx(effect, rel=1e-12)
    assert result.figures["unrounded"] == pytest.approx(by_hand, rel=1e-12)
    assert result.units == math.ceil(by_hand) == 191


def test_k_categories_with_two_codes_is_the_binary_case() -> None:
    binary = ss.kappa_units(0.8, 0.6, prevalence=0.2)
    two = ss.kappa_units(0.8, 0.6, shares=[0.2, 0.8])
    assert binary.units == two.units
    assert binary.figures["unrounded"] == pytest.approx(two.figures["unrounded"], rel=1e-12)


def test_k_categories_needs_more_units_when_the_test_is_harder() -> None:
    easy = ss.kappa_units(0.8, 0.4, shares=[0.3, 0.3, 0.4]).units
    hard = ss.kappa_units(0.8, 0.7, shares=[0.3, 0.3, 0.4]).units
    powerful = ss.kappa_units(0.8, 0.7, shares=[0.3, 0.3, 0.4], power=0.95).units
    assert easy < hard < powerful


def test_cantor_reproduces_irrs_documented_example() -> None:
    """irr's N.cohen.kappa(0.5, 0.5, 0.7, 0.85) prints 96: k1 (true) 0.7, k0 (null) 0.85, one-sided.
    Its comment reads the other way (H0 0.7, true 0.85); that reading needs 117."""
    assert ss.cantor_kappa_units(0.7, 0.85, rates=(0.5, 0.5)).units == 96
    assert ss.cantor_kappa_units(0.85, 0.7, rates=(0.5, 0.5)).units == 117


def test_cantor_q_is_n_times_the_audits_own_variance() -> None:
    # rates 0.3 and 0.3, kappa 0.7: cells 0.237, 0.063, 0.063, 0.637, whole at n = 1000
    se, _ = fleiss_cohen_everitt_se(np.array([[237, 63], [63, 637]]))
    assert ss._fleiss_q(0.7, 0.3, 0.3) == pytest.approx(1000 * se**2, rel=1e-12)
    # unequal rates: coder 1 says yes 0.4, coder 2 0.3, kappa 0.5
    q = ss._fleiss_q(0.5, 0.4, 0.3)
    pe = 0.4 * 0.3 + 0.6 * 0.7
    po = 0.5 * (1 - pe) + pe
    p22 = (po - 0.4 + 0.7) / 2
    p11 = po - p22
    table = np.array([[p11, 0.4 - p11], [0.3 - p11, p22]]) * 10**6
    assert np.allclose(table, np.round(table))
    se, _ = fleiss_cohen_everitt_se(np.round(table).astype(np.int64))
    assert q == pytest.approx(10**6 * se**2, rel=1e-9)


@pytest.mark.parametrize(
    ("kwargs", "option"),
    [
        ({"expected": 0.6, "minimum": 0.6, "prevalence": 0.3}, "--min"),
        ({"expected": 0.6, "minimum": 0.4}, "--prevalence"),
        ({"expected": 0.6, "minimum": 0.4, "prevalence": 0.3, "shares": [0.5, 0.5]}, "--prevalence"),
        ({"expected": 0.6, "minimum": 0.4, "shares": [0.5, 0.6]}, "--shares"),
        ({"expected": 0.6, "minimum": 0.4, "shares": [1.0]}, "--shares"),
        ({"expected": 0.6, "minimum": 0.4, "prevalence": 1.0}, "--prevalence"),
        ({"expected": 0.6, "minimum": 0.4, "prevalence": 0.3, "power": 0.04, "level": 0.05}, "--power"),
        ({"expected": 0.6, "minimum": -0.9, "prevalence": 0.1}, "--min"),
        ({"expected": 1.0, "minimum": 0.4, "prevalence": 0.3}, "--expected"),
        ({"expected": 0.6, "minimum": 0.4, "shares": [0.001] * 1000 + [0.0]}, "--shares"),
        ({"expected": 0.6, "minimum": 0.4, "prevalence": 0.3, "level": 0.7}, "--level"),
    ],
)
def test_kappa_refuses_bad_inputs_naming_the_option(kwargs: dict, option: str) -> None:
    with pytest.raises(UsageError) as caught:
        ss.kappa_units(**kwargs)
    assert caught.value.message.startswith(option)


def test_cantor_refuses_a_kappa_the_rates_cannot_reach() -> None:
    with pytest.raises(UsageError, match="not possible") as caught:
        ss.cantor_kappa_units(0.95, 0.1, rates=(0.1, 0.6))  # the largest kappa these rates allow is 0.138
    assert caught.value.message.startswith("--expected")
    with pytest.raises(UsageError, match="not possible") as caught:
        ss.cantor_kappa_units(0.1, 0.95, rates=(0.1, 0.6))
    assert caught.value.message.startswith("--min")


# --- an interval's half-width --------------------------------------------------------------------


def test_half_width_formula() -> None:
    se, _ = fleiss_cohen_everitt_se(np.array([[237, 63], [63, 637]]))  # kappa 0.7, prevalence 0.3
    by_hand = stats.norm.ppf(0.975) ** 2 * 1000 * se**2 / 0.1**2
    result = ss.half_width_units(0.7, 0.3, 0.1)
    assert result.figures["unrounded"] == pytest.approx(by_hand, rel=1e-12)
    assert result.units == math.ceil(by_hand) == 236


@pytest.mark.parametrize(("kappa", "prevalence", "seed"), [(0.7, 0.3, 1), (0.5, 0.5, 2), (0.8, 0.2, 3)])
def test_simulation_agrees_with_the_formula_within_its_monte_carlo_error(
    kappa: float, prevalence: float, seed: int
) -> None:
    """At n near 1000 the large-sample SE is accurate, so the simulated answer must be within
    four of its own Monte Carlo SEs of the formula's."""
    formula = ss.half_width_units(kappa, prevalence, 0.05).figures["unrounded"]
    simulated = ss.simulated_half_width_units(kappa, prevalence, 0.05, seed=seed, simulations=20000)
    mc_se = simulated.figures["units_mc_se"]
    assert 0 < mc_se < 0.02 * formula
    assert abs(simulated.figures["unrounded"] - formula) < 4 * mc_se


def test_monte_carlo_se_matches_the_spread_over_seeds() -> None:
    """The stated Monte Carlo SE is the spread the answer really has from seed to seed (within a
    factor of two, over 12 seeds)."""
    answers, stated = [], []
    for seed in range(12):
        result = ss.simulated_half_width_units(0.7, 0.3, 0.1, seed=seed, simulations=2000)
        answers.append(result.figures["unrounded"])
        stated.append(result.figures["units_mc_se"])
    spread = float(np.std(answers, ddof=1))
    assert 0.5 < spread / float(np.mean(stated)) < 2.0


def test_simulation_is_reproducible_from_its_seed() -> None:
    first = ss.simulated_half_width_units(0.7, 0.3, 0.1, seed=7).to_dict()
    assert ss.simulated_half_width_units(0.7, 0.3, 0.1, seed=7).to_dict() == first
    assert ss.simulated_half_width_units(0.7, 0.3, 0.1, seed=8).to_dict() != first


def test_simulation_counts_the_samples_without_a_kappa() -> None:
    result = ss.simulated_half_width_units(0.5, 0.02, 0.6, seed=1, simulations=500)
    assert result.figures["undefined_samples"] > 0
    assert any("had no kappa" in note for note in result.notes)


def test_simulated_variance_is_nan_when_no_sample_has_a_kappa() -> None:
    variance, se, undefined = ss._simulated_variance(0.5, 1e-9, 1, 200, np.random.default_rng(0))
    assert math.isnan(variance) and math.isnan(se) and undefined == 200


@pytest.mark.parametrize(
    ("kwargs", "option"),
    [
        ({"seed": -1}, "--seed"),
        ({"seed": 1.5}, "--seed"),
        ({"seed": 1, "simulations": 10}, "--simulations"),
        ({"seed": 1, "simulations": 10**9}, "--simulations"),
    ],
)
def test_simulation_refuses_bad_options(kwargs: dict, option: str) -> None:
    with pytest.raises(UsageError) as caught:
        ss.simulated_half_width_units(0.7, 0.3, 0.1, **kwargs)
    assert caught.value.message.startswith(option)


# --- a pilot --------------------------------------------------------------------------------------


def test_pilot_units_from_the_audits_own_se() -> None:
    pilot = irr_audit.audit(SHEETS, RULE)
    se = float(pilot.metrics.loc["cohen_kappa", "se"])
    plan = irr_audit.plan_pilot(SHEETS, 0.1, rule=RULE)
    row = next(row for row in plan.rows if row.coefficient == "cohen_kappa")
    assert plan.pilot_units == 20
    assert row.half_width == pytest.approx(stats.norm.ppf(0.975) * se)
    assert row.units_needed == math.ceil(20 * (stats.norm.ppf(0.975) * se / 0.1) ** 2) == 194
    assert row.units_to_add == 174
    assert plan.units["cohen_kappa"] == 174
    no_se = next(row for row in plan.rows if row.coefficient == "po")
    assert no_se.units_to_add is None and "bootstrap" in (no_se.reason or "")
    assert "pe" not in plan.units and "prevalence_index" not in plan.units


def test_pilot_with_bootstrap_covers_every_coefficient_and_a_met_target_adds_nothing(tmp_path) -> None:
    irr_audit.join_folder(SHEETS, RULE, tmp_path / "joined")
    plan = irr_audit.plan_pilot(tmp_path / "joined", 0.5, bootstrap=200, seed=1)
    assert all(units is not None for units in plan.units.values())
    po = next(row for row in plan.rows if row.coefficient == "po")
    assert po.se_source == "bootstrap"
    assert plan.units["cohen_kappa"] == 0


def test_pilot_bootstrap_without_seed_keeps_the_drawn_seed_and_it_repeats_the_answer(tmp_path) -> None:
    irr_audit.join_folder(SHEETS, RULE, tmp_path / "joined")
    drawn = irr_audit.plan_pilot(tmp_path / "joined", 0.1, bootstrap=200)
    assert drawn.bootstrap == 200 and drawn.seed is not None and drawn.seed_drawn
    document = drawn.to_dict()
    assert document["inputs"]["bootstrap"] == 200 and document["inputs"]["seed"] == drawn.seed
    assert f"Bootstrap seed {drawn.seed} was drawn; --seed {drawn.seed}" in " ".join(document["notes"])
    repeated = irr_audit.plan_pilot(tmp_path / "joined", 0.1, bootstrap=200, seed=drawn.seed)
    assert repeated.rows == drawn.rows
    assert repeated.seed == drawn.seed and not repeated.seed_drawn
    assert not any("was drawn" in note for note in repeated.to_dict()["notes"])


def test_pilot_without_bootstrap_records_no_seed() -> None:
    plan = irr_audit.plan_pilot(SHEETS, 0.1, rule=RULE, seed=7)  # the library takes a seed alone; it shapes nothing
    assert (plan.bootstrap, plan.seed, plan.seed_drawn) == (0, None, False)
    inputs = plan.to_dict()["inputs"]
    assert (inputs["bootstrap"], inputs["seed"]) == (0, None)


def test_pilot_rows_for_undefined_and_zero_se() -> None:
    rows = ss.pilot_units(20, {"a": (None, None, None), "b": (1.0, 0.0, None), "c": (0.5, 0.1, None)}, 0.1)
    assert [row.units_to_add for row in rows] == [None, None, math.ceil(20 * (1.959963984540054 * 0.1 / 0.1) ** 2) - 20]
    assert "undefined" in (rows[0].reason or "") and "SE is 0" in (rows[1].reason or "")


def test_a_coefficient_without_se_names_plan_pilots_own_bootstrap() -> None:
    (row,) = ss.pilot_units(20, {"po": (0.85, None, None)}, 0.1)
    assert row.reason == "no standard error: add --bootstrap N --seed S to plan pilot (bootstrap= in plan_pilot)"


def test_pilot_checks_the_half_width_before_reading() -> None:
    with pytest.raises(UsageError, match="--half-width"):
        irr_audit.plan_pilot("no/such/folder", 0.0)


# --- the command line --------------------------------------------------------------------------


def test_cli_alpha_json_and_text() -> None:
    result = run("alpha", "--min", "0.800", "--codes", "4", "--level", "0.05", "--format", "json")
    assert result.exit_code == 0
    document = json.loads(result.stdout)
    assert document["units"] == 139
    assert "Krippendorff" in document["citation"] and "Bloch" in document["citation"]
    text = run("alpha", "--min", "0.667", "--smallest-share", "0.25")
    assert text.exit_code == 0
    assert text.stdout.startswith("81 units")
    assert "Source: Krippendorff" in text.stdout


def test_cli_kappa_half_width_and_pilot(tmp_path) -> None:
    kappa = run("kappa", "--expected", "0.6", "--min", "0.4", "--prevalence", "0.3", "--format", "json")
    assert json.loads(kappa.stdout)["units"] == 191
    shares = run("kappa", "--expected", "0.8", "--min", "0.6", "--shares", "0.2,0.8", "--format", "json")
    assert json.loads(shares.stdout)["units"] == ss.kappa_units(0.8, 0.6, prevalence=0.2).units
    cantor = run("kappa", "--expected", "0.7", "--min", "0.85", "--rates", "0.5,0.5", "--format", "json")
    assert json.loads(cantor.stdout)["units"] == 96
    formula = run("half-width", "--half-width", "0.1", "--expected", "0.7", "--prevalence", "0.3")
    assert formula.stdout.startswith("236 units")
    simulated = run("half-width", "--half-width", "0.1", "--expected", "0.7", "--prevalence", "0.3", "--seed", "1")
    assert "Monte Carlo SE" in simulated.stdout
    irr_audit.join_folder(SHEETS, RULE, tmp_path / "joined")
    pilot = run("pilot", str(tmp_path / "joined"), "--half-width", "0.1", "--format", "json")
    assert json.loads(pilot.stdout)["units"]["cohen_kappa"] == 174
    text = run("pilot", str(tmp_path / "joined"), "--half-width", "0.1")
    assert "cohen_kappa: reached +/- 0.311" in text.stdout
    assert "bootstrap:" not in text.stdout and "seed" not in json.loads(pilot.stdout)["notes"][-1]


def test_cli_pilot_shows_a_drawn_seed_in_json_and_passing_it_back_repeats_the_answer(tmp_path) -> None:
    irr_audit.join_folder(SHEETS, RULE, tmp_path / "joined")
    pilot = ("pilot", str(tmp_path / "joined"), "--half-width", "0.1", "--bootstrap", "200")
    drawn = json.loads(run(*pilot, "--format", "json").stdout)
    seed = drawn["inputs"]["seed"]
    assert isinstance(seed, int) and drawn["inputs"]["bootstrap"] == 200
    assert f"Bootstrap seed {seed} was drawn; --seed {seed}" in drawn["notes"][-1]
    repeated = json.loads(run(*pilot, "--seed", str(seed), "--format", "json").stdout)
    assert repeated["coefficients"] == drawn["coefficients"] and repeated["units"] == drawn["units"]
    assert repeated["inputs"] == drawn["inputs"]
    assert repeated["notes"] == drawn["notes"][:-1]  # a seed given is not announced as drawn


def test_cli_pilot_shows_a_drawn_seed_in_text_and_passing_it_back_repeats_the_answer(tmp_path) -> None:
    irr_audit.join_folder(SHEETS, RULE, tmp_path / "joined")
    pilot = ("pilot", str(tmp_path / "joined"), "--half-width", "0.1", "--bootstrap", "200")
    drawn = run(*pilot)
    assert drawn.exit_code == 0
    found = re.search(r"^  bootstrap: 200 replicates, seed (\d+)$", drawn.stdout, re.MULTILINE)
    assert found is not None, drawn.stdout
    seed = found.group(1)
    assert f"Note: Bootstrap seed {seed} was drawn; --seed {seed} " in drawn.stdout
    repeated = run(*pilot, "--seed", seed)
    announced = f"Note: Bootstrap seed {seed} was drawn; --seed {seed} (seed={seed} in plan_pilot) repeats this answer."
    assert repeated.stdout == drawn.stdout.replace(announced + "\n", "")  # all else the same, to the last digit
    assert "was drawn" not in repeated.stdout


@pytest.mark.parametrize(
    "args",
    [
        ("alpha", "--min", "0.8", "--codes", "4", "--smallest-share", "0.25"),
        ("alpha", "--min", "0.8"),
        ("alpha", "--min", "1", "--codes", "4"),
        ("alpha", "--min", "nan", "--codes", "4"),
        ("kappa", "--expected", "0.6", "--min", "0.4", "--shares", "0.2,x"),
        ("kappa", "--expected", "0.6", "--min", "0.4", "--rates", "0.2"),
        ("kappa", "--expected", "0.6", "--min", "0.4", "--shares", "1e-300,1"),  # a share of 1: no numpy warning
        ("kappa", "--expected", "0.6", "--min", "0.4", "--prevalence", "1e-300"),
        ("kappa", "--expected", "0.6", "--min", "0.4", "--rates", "0.3,0.99999999999"),
        ("kappa", "--expected", "0.6", "--min", "0.4", "--rates", "1e-17,1e-17"),
        ("kappa", "--expected", "0.6", "--min", "0.4", "--rates", "0.2,0.3", "--prevalence", "0.3"),
        ("half-width", "--half-width", "0", "--expected", "0.7", "--prevalence", "0.3"),
        ("half-width", "--half-width", "0.1", "--expected", "0.7", "--prevalence", "0.3", "--seed", "-1"),
    ],
)
def test_cli_bad_input_is_one_message_and_exit_2(args: tuple[str, ...]) -> None:
    result = run(*args)
    assert result.exit_code == 2
    assert result.stderr.startswith("Error [usage-plan]: "), result.stderr
    assert "Hint: " in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("level", ["1e-17", "1e-300", "5e-324"])
@pytest.mark.parametrize(
    "args",
    [
        ("alpha", "--min", "0.8", "--codes", "3"),
        ("kappa", "--expected", "0.6", "--min", "0.4", "--prevalence", "0.3"),
        ("kappa", "--expected", "0.6", "--min", "0.4", "--rates", "0.3,0.4"),
        ("half-width", "--half-width", "0.1", "--expected", "0.7", "--prevalence", "0.3"),
    ],
)
def test_a_level_whose_quantile_rounds_away_is_usage_plan(args: tuple[str, ...], level: str) -> None:
    result = run(*args, "--level", level)
    assert result.exit_code == 2 and result.stderr.startswith("Error [usage-plan]: --level is ")
    assert "rounds to 1" in result.stderr
    assert run(*args, "--level", "1e-15").exit_code == 0  # small, and still a quantile


@pytest.mark.parametrize(
    "args",
    [
        ("half-width", "--half-width", "1e-300", "--expected", "0.7", "--prevalence", "0.3"),  # h * h underflows
        ("half-width", "--half-width", "0.1", "--expected", "0.7", "--prevalence", "1e-17"),  # chance agreement 1
        ("half-width", "--half-width", "0.1", "--expected", "0.7", "--prevalence", "1e-17", "--seed", "1"),
        ("pilot", "PILOT", "--half-width", "1e-300"),  # (SE / h) ** 2 overflows
    ],
)
def test_inputs_too_extreme_for_any_sample_ask_for_too_many_units(args: tuple[str, ...], tmp_path) -> None:
    if "PILOT" in args:
        irr_audit.join_folder(SHEETS, RULE, tmp_path / "joined")
        args = tuple(str(tmp_path / "joined") if arg == "PILOT" else arg for arg in args)
    result = run(*args)
    assert result.exit_code == 2 and result.stderr.startswith("Error [usage-plan]: ")
    assert "asks for more than 1,000,000,000 units" in result.stderr


def test_cli_pilot_of_a_folder_that_is_not_a_join() -> None:
    result = run("pilot", "examples/sheets", "--half-width", "0.1")
    assert result.exit_code == 2
    assert "usage-not-a-join-dir" in result.stderr


def test_the_library_refuses_rates_that_are_not_two() -> None:
    with pytest.raises(ss.PlanInputError) as refused:
        irr_audit.plan_kappa(0.6, 0.4, rates=(0.5,))
    assert "--rates is (0.5,), not two rates" in str(refused.value)
