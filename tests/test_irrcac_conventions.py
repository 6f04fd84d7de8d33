"""Gwet's missing-data convention, intervals, tests and weights, against irrCAC's printed values
(tests/examples/F_irrcac_raw4raters and G_irrcac_ben_gerry, each with its SOURCE.md)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import irr_audit
from irr_audit.api import load_rule
from irr_audit.cli import app
from irr_audit.errors import IrrAuditError
from irr_audit.metrics import summarise
from irr_audit.metrics.intervals import IntervalSpec

EXAMPLES = Path(__file__).parent / "examples"
ROOT = Path(__file__).parent.parent


def score(case: Path, *extra: str) -> tuple[int, dict | str]:
    sheets = sorted(str(path) for path in (case / "sheets").iterdir())
    result = CliRunner().invoke(app, ["score", *sheets, "--rule", str(case / "rule.yaml"), "--format", "json", *extra])
    return result.exit_code, (json.loads(result.stdout) if result.exit_code == 0 else result.output)


def decimals(number: float) -> int:
    text = repr(float(number))
    return len(text.split(".")[1]) if "." in text and "e" not in text else 12


def assert_printed(actual: dict, printed: dict, name: str) -> None:
    """Each printed figure, to the digits irrCAC prints it with."""
    assert actual["defined"], name
    assert round(actual["value"], decimals(printed["value"])) == printed["value"], name
    if "se" in printed:
        assert round(actual["se"], 5) == pytest.approx(printed["se"], abs=1e-12), name
    if "ci" in printed:
        places = decimals(printed["ci"][0])
        assert [round(x, places) for x in actual["ci"]] == printed["ci"], name
    if "p_value" in printed:
        assert actual["p_value"] == pytest.approx(printed["p_value"], rel=1e-6), name


@pytest.mark.parametrize("case", ["F_irrcac_raw4raters", "G_irrcac_ben_gerry"])
def test_irrcac_printed_values_through_the_cli(case: str) -> None:
    expected = json.loads((EXAMPLES / case / "expected.json").read_text())
    code, out = score(EXAMPLES / case, "--interval", expected["interval"])
    assert code == 0, out
    assert isinstance(out, dict)
    assert {key: out["units"][key] for key in expected["units"]} == expected["units"]
    for basis in ("gwet_missing", "available_case"):
        for name, printed in expected[basis].items():
            assert_printed(out[basis][name], printed, f"{basis} {name}")


def test_irrcac_weighting_vignette_through_the_cli() -> None:
    case = EXAMPLES / "F_irrcac_raw4raters"
    expected = json.loads((case / "expected.json").read_text())["weighted"]
    code, out = score(case, "--interval", "t", "--weights", expected["weights"])
    assert code == 0, out
    assert isinstance(out, dict)
    for basis in ("gwet_missing", "available_case"):
        for name, printed in expected[basis].items():
            assert out[basis][name]["weights"] == "quadratic"
            assert_printed(out[basis][name], printed, f"{basis} {name}")


def test_with_missing_codes_two_coders_fleiss_and_conger_differ_from_scott_and_cohen() -> None:
    code, out = score(EXAMPLES / "G_irrcac_ben_gerry")
    assert code == 0 and isinstance(out, dict)
    for basis in ("metrics", "available_case"):  # both codes on every unit: the same coefficients
        assert out[basis]["fleiss_kappa"]["value"] == pytest.approx(out[basis]["scott_pi"]["value"], abs=1e-14)
        assert out[basis]["conger_kappa"]["value"] == pytest.approx(out[basis]["cohen_kappa"]["value"], abs=1e-14)
    gwet = out["gwet_missing"]
    assert abs(gwet["fleiss_kappa"]["value"] - out["available_case"]["scott_pi"]["value"]) > 1e-4
    assert abs(gwet["conger_kappa"]["value"] - out["available_case"]["cohen_kappa"]["value"]) > 1e-4


def test_default_intervals_are_the_normal_95_percent_ones_and_level_and_t_change_them() -> None:
    case = EXAMPLES / "F_irrcac_raw4raters"
    _, normal = score(case)
    _, t90 = score(case, "--interval", "t", "--ci-level", "0.9")
    assert isinstance(normal, dict) and isinstance(t90, dict)
    ac1 = normal["gwet_missing"]["gwet_ac1"]
    assert ac1["ci_method"] == "normal approximation, estimate +/- 1.96 SE"
    assert ac1["ci"][0] == pytest.approx(ac1["value"] - 1.959963984540054 * ac1["se"], abs=1e-12)
    low90 = t90["gwet_missing"]["gwet_ac1"]
    assert low90["ci"][0] == pytest.approx(ac1["value"] - 1.7958848187036696 * ac1["se"], abs=1e-12)  # t_{0.95, 11}
    assert "90%" in low90["ci_method"] and "11 df" in low90["ci_method"]
    assert normal["intervals"] == {"level": 0.95, "kind": "normal", "test_against": None, "weights": None}


def test_test_against_is_one_sided_and_its_p_value_falls_as_the_estimate_rises_above_it() -> None:
    _, out = score(EXAMPLES / "F_irrcac_raw4raters", "--test-against", "0.6")
    assert isinstance(out, dict)
    ac1 = out["gwet_missing"]["gwet_ac1"]
    z = (ac1["value"] - 0.6) / ac1["se"]
    from scipy.stats import norm

    assert ac1["test_against"] == {"value": 0.6, "alternative": "greater", "p_value": pytest.approx(norm.sf(z))}


@pytest.mark.parametrize(
    ("options", "code"),
    [
        (["--ci-level", "1.5"], "usage-interval"),
        (["--ci-level", "0"], "usage-interval"),
        (["--ci-level", "0.9999999999999999"], "usage-interval"),  # below 1, but (1 + L) / 2 rounds to 1
        (["--ci-level", "0.9999999999999999", "--interval", "t"], "usage-interval"),
        (["--interval", "wald"], "usage-interval"),
        (["--test-against", "nan"], "usage-interval"),
        (["--weights", "cubic"], "usage-weights"),
    ],
)
def test_bad_statistics_options_are_one_message(options: list[str], code: str) -> None:
    exit_code, output = score(EXAMPLES / "F_irrcac_raw4raters", *options)
    assert exit_code == 2
    assert f"[{code}]" in str(output) and "Traceback" not in str(output)


def test_a_level_whose_quantile_cannot_be_computed_is_the_api_usage_error_and_the_next_one_down_works() -> None:
    sheets = [ROOT / "examples" / "sheets" / name for name in ("alice.csv", "bob.csv")]
    rule = ROOT / "rules" / "explicit_current_failure" / "v1.yaml"
    with pytest.raises(irr_audit.UsageError, match="so close to 1") as refused:
        irr_audit.audit(sheets, rule, ci_level=0.9999999999999999)
    assert refused.value.code == "usage-interval"
    widest = irr_audit.audit(sheets, rule, ci_level=math.nextafter(0.9999999999999999, 0))
    low, high = widest.metrics.loc["cohen_kappa", ["ci_low", "ci_high"]]
    assert math.isfinite(low) and math.isfinite(high)


RULE = "rule: r\nversion: 1\nscale: ordinal\ncodes: [a, b, c]\n"


@pytest.mark.parametrize(
    ("weights", "problem"),
    [
        ("[[1, 0.5], [0.5, 1]]", "not 3 x 3"),
        ("[[1, 0.5, 0], [0.4, 1, 0.5], [0, 0.5, 1]]", "not symmetric"),
        ("[[0.9, 0.5, 0], [0.5, 1, 0.5], [0, 0.5, 1]]", "diagonal"),
        ("[[1, 1, 0], [1, 1, 0.5], [0, 0.5, 1]]", "outside [0, 1)"),
        ("[[1, -0.5, 0], [-0.5, 1, 0.5], [0, 0.5, 1]]", "outside [0, 1)"),
        ("[[1, x, 0], [0.5, 1, 0.5], [0, 0.5, 1]]", "not a number"),
        ("[[1, 0.5], [0.5, 1], [0, 0]]", "not square"),
        ("cubic", "not a weighting"),
        ("{a: 1}", "name or a list of rows"),
    ],
)
def test_a_rule_weights_key_is_validated(tmp_path: Path, weights: str, problem: str) -> None:
    rule = tmp_path / "rule.yaml"
    rule.write_text(RULE + f"weights: {weights}\n")
    with pytest.raises(IrrAuditError) as raised:
        load_rule(rule)
    assert raised.value.code == "rule-invalid"
    assert "key weights" in str(raised.value) and problem in str(raised.value)


def test_a_custom_matrix_in_the_rule_weights_every_weighted_coefficient(tmp_path: Path) -> None:
    rule = tmp_path / "rule.yaml"
    rule.write_text(RULE + "weights: [[1, 0.5, 0], [0.5, 1, 0.5], [0, 0.5, 1]]\n")
    for name, codes in (("ann", "a,a,b,c,c,b"), ("ben", "a,b,b,c,b,a")):
        lines = [f"{i + 1},{c}" for i, c in enumerate(codes.split(","))]
        (tmp_path / f"{name}.csv").write_text("comment_id,code\n" + "\n".join(lines) + "\n")
    result = CliRunner().invoke(
        app, ["score", str(tmp_path / "ann.csv"), str(tmp_path / "ben.csv"), "--rule", str(rule), "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    metrics = json.loads(result.stdout)["metrics"]
    # the matrix is linear weights on 3 codes: Cohen's weighted kappa with it is the linear one
    assert metrics["weighted_kappa"]["value"] == pytest.approx(metrics["weighted_kappa_linear"]["value"], abs=1e-14)
    for name in ("weighted_kappa", "gwet_ac2", "fleiss_kappa_weighted", "conger_kappa_weighted"):
        assert metrics[name]["weights"] == "custom"


def test_conger_below_minus_one_is_the_conventions_value_not_a_bug() -> None:
    """Found by hypothesis: five coders, one unit all 0, one unit (0, 1) by two coders. p_a = 0.5;
    each coder's p_gk: four put all their codes on 0, one splits 0.5/0.5, so p_e = 16/20 = 0.8 and
    kappa = (0.5 - 0.8) / 0.2 = -1.5 (irrCAC's conger gives -1.5 too). Kappa's floor is
    -p_e / (1 - p_e), not -1; the interval is widened to hold the estimate."""
    s = summarise(np.array([[0, 0, 0, 0, 0], [0, 1, -1, -1, -1]]), 2, "nominal")
    conger = s.available_case["conger_kappa"]
    assert conger.value == pytest.approx(-1.5, abs=1e-12)
    assert conger.ci is None or conger.ci[0] <= conger.value <= conger.ci[1]
    # every unit's term equals the coefficient: the SE is 0 up to rounding, so no p-value
    assert conger.se is not None and conger.se < 1e-12
    assert conger.extra["p_value"] is None and "standard error is 0" in conger.extra["p_value_reason"]


def test_interval_spec_refuses_what_it_cannot_honour() -> None:
    for level in (0, 1, 1.2, True):
        with pytest.raises(ValueError, match="level"):
            IntervalSpec(level)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="interval"):
        IntervalSpec(0.95, "z")
    assert IntervalSpec(0.95, "t").quantile(1) is None  # a t interval on one unit has no df


def test_gwet_basis_gets_its_own_seeded_bootstrap_at_the_chosen_level() -> None:
    codes = np.array([[0, 0, -1], [1, 1, 1], [0, 1, 0], [1, -1, -1], [0, 0, 0], [1, 1, 0], [0, -1, -1]] * 3)
    spec = IntervalSpec(0.9, "normal")
    first = summarise(codes, 2, "nominal", n_boot=300, seed=7, intervals=spec)
    again = summarise(codes, 2, "nominal", n_boot=300, seed=7, intervals=spec)
    boot = first.gwet_missing["gwet_ac1"].extra["bootstrap"]
    assert boot == again.gwet_missing["gwet_ac1"].extra["bootstrap"]
    assert boot["n_boot"] == 300 and "90%" in boot["ci_method"]
    low, high = boot["ci"]
    assert low < first.gwet_missing["gwet_ac1"].value < high
    assert first.available_case["fleiss_kappa"].extra["bootstrap"]["n_boot"] == 300


CHANCE_FROM_THE_DATA = (
    "weighted_kappa",
    "weighted_kappa_linear",
    "weighted_kappa_quadratic",
    "fleiss_kappa_weighted",
    "conger_kappa_weighted",
    "krippendorff_alpha_weighted",
)


def test_codes_sharing_a_value_make_a_weighted_coefficient_undefined_not_nan() -> None:
    """Interval codes a and b share the value 1: every weight builds w_ab = 1, so data using only
    a and b leave chance agreement certain. Decided from the counts of the classes, never NaN."""
    codes = np.array([[0, 1], [1, 0], [0, 0], [1, 1]])
    for weights in ("linear", "quadratic", "radical", None):
        s = summarise(codes, 3, "interval", [1, 1, 2], weights=weights)
        for basis in (s.metrics, s.available_case, s.gwet_missing):
            for name, metric in basis.items():
                if isinstance(metric, dict):
                    continue
                assert metric.value is None or np.isfinite(metric.value), (weights, name)
                if name in CHANCE_FROM_THE_DATA:  # Brennan-Prediger and AC2 keep p_e < 1: defined
                    assert not metric.defined and "same value" in str(metric.reason), (weights, name)


@pytest.mark.parametrize("weights", ["identity", "linear", "quadratic", "ordinal", "radical", "circular", "bipolar"])
def test_weighted_coefficients_on_random_data_are_numbers_in_range_or_undefined(weights: str) -> None:
    rng = np.random.default_rng(len(weights))
    for _ in range(15):
        k, coders, units = int(rng.integers(2, 5)), int(rng.integers(2, 4)), int(rng.integers(1, 12))
        codes = rng.integers(-1, k, size=(units, coders))
        s = summarise(codes, k, "ordinal", weights=weights, intervals=IntervalSpec(0.9, "t", 0.2))
        for basis in (s.metrics, s.available_case, s.gwet_missing):
            for name, metric in basis.items():
                if isinstance(metric, dict) or not metric.defined:
                    continue
                assert metric.value is not None and np.isfinite(metric.value) and metric.value <= 1 + 1e-12, name
                if metric.ci is not None:
                    assert metric.ci[0] <= metric.value <= metric.ci[1], name
                p = metric.extra.get("p_value")
                assert p is None or 0 <= p <= 1, name


def test_a_change_of_weights_between_rule_versions_shows_in_the_diff(tmp_path: Path) -> None:
    from irr_audit.rules.diff import render_rule_diff

    old, new = tmp_path / "v1.yaml", tmp_path / "v2.yaml"
    old.write_text(RULE + "weights: linear\n")
    new.write_text(RULE.replace("version: 1", "version: 2") + "weights: [[1, 0.5, 0], [0.5, 1, 0.5], [0, 0.5, 1]]\n")
    diff = render_rule_diff(load_rule(old), load_rule(new))
    assert "@@ weights @@" in diff and "- linear" in diff and "+ 1 0.5 0; 0.5 1 0.5; 0 0.5 1" in diff


def test_no_interval_loads_scipy() -> None:
    """t intervals come from irr_audit.metrics.distributions (T^2 is F(1, df)), not from scipy,
    which maps about 110 MB of address space: no audit loads it, whatever interval it asks for."""
    import subprocess
    import sys

    case = EXAMPLES / "F_irrcac_raw4raters"
    sheets = sorted(str(path) for path in (case / "sheets").iterdir())
    script = (
        "import sys, irr_audit\n"
        f"a = irr_audit.audit({sheets!r}, {str(case / 'rule.yaml')!r}, test_against=0.5)\n"
        "print('scipy' in sys.modules, end=' ')\n"
        f"a = irr_audit.audit({sheets!r}, {str(case / 'rule.yaml')!r}, interval='t', ci_level=0.9)\n"
        "print('scipy' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False False"


# --- every named weighting on hostile values: ties, one value, negatives, zeros, extremes ------


def irrcac_bipolar(x: list[float]) -> np.ndarray:
    """irrCAC's bipolar.weights (R), transcribed loop for loop: NaN when two codes share an end."""
    xmin, xmax, q = min(x), max(x), len(x)
    d = np.zeros((q, q))
    with np.errstate(invalid="ignore", divide="ignore"):
        for k in range(q):
            for m in range(q):
                if k != m:
                    d[k, m] = np.float64(x[k] - x[m]) ** 2 / (((x[k] + x[m]) - 2 * xmin) * (2 * xmax - (x[k] + x[m])))
        return 1 - d / d.max()


WEIGHT_NAMES = ("identity", "linear", "quadratic", "ordinal", "radical", "ratio", "circular", "bipolar")
HOSTILE_VALUES = [
    [1, 2, 2],  # two codes share the highest value: 0/0 in the bipolar formula
    [1, 1, 2],  # ... the lowest value
    [1, 1, 2, 2],
    [-3, 0, 0, 3],  # a shared value between the ends, negatives, a zero
    [0, 1, 2],  # a zero: ratio weights divide by x_k + x_l
    [-2, -1, 0],
    [1, 1 + 2**-52, 1e12],  # x_k + x_l - 2 x_min rounds to 0 for the first two
    [1e-12, 2e-12, 1e12],
    [-1e12, 0, 1e12],
]


@pytest.mark.parametrize("values", HOSTILE_VALUES, ids=str)
@pytest.mark.parametrize("name", WEIGHT_NAMES)
def test_named_weights_are_weights_or_refused_never_nan(name: str, values: list[float]) -> None:
    from irr_audit.metrics.weights import agreement_classes, named_weights
    from irr_audit.rules.weights import named_weights_problem

    x = np.array(values, dtype=float)
    problem = named_weights_problem(name, x)
    if problem:
        assert name == "ratio" and min(values) <= 0, problem  # the one refusal for these values
        return
    w = named_weights(name, x)
    assert np.isfinite(w).all() and (w >= 0).all() and (w <= 1).all(), w
    assert np.array_equal(w, w.T) and np.array_equal(np.diag(w), np.ones(len(values)))
    shared = x[:, None] == x[None, :]
    if name not in ("identity", "ordinal"):  # these two are on positions, whatever the values
        assert (w[shared] == 1).all(), "codes sharing a value are one point of the scale: weight 1"
    assert agreement_classes(w, len(values)).sum() == len(values)  # every code in exactly one class


@pytest.mark.parametrize("values", [[1, 2, 3], [1, 3, 4, 9], [-2, 0.5, 1, 7], [2, 3, 5]], ids=str)
def test_bipolar_weights_equal_irrcac_on_distinct_values(values: list[float]) -> None:
    from irr_audit.metrics.weights import named_weights

    assert named_weights("bipolar", np.array(values, dtype=float)) == pytest.approx(irrcac_bipolar(values), abs=1e-12)


def test_bipolar_weights_on_a_shared_end_value_are_the_limit_irrcac_leaves_nan() -> None:
    """irrCAC gives NaN for every cell (0/0 then max(NaN)); the definition's limit as x_l tends to
    x_k is d = 0: the two codes are one point. The other cells are those of the distinct values."""
    from irr_audit.metrics.weights import named_weights

    assert np.isnan(irrcac_bipolar([1, 2, 2])).any()
    w = named_weights("bipolar", np.array([1.0, 2.0, 2.0]))
    assert w.tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 1.0], [0.0, 1.0, 1.0]]
    near = named_weights("bipolar", np.array([1.0, 2.0 - 1e-9, 2.0]))  # the limit, approached
    assert near[1, 2] == pytest.approx(1.0, abs=1e-8) and near[0, 1] == pytest.approx(0.0, abs=1e-8)
    w4 = named_weights("bipolar", np.array([1.0, 2.0, 3.0, 3.0]))
    assert w4[:3, :3] == pytest.approx(irrcac_bipolar([1, 2, 3]), abs=1e-12) and w4[2, 3] == 1.0


TIED_RULE = """rule: r
version: 1
scale: interval
codes:
  - {code: a, value: A}
  - {code: b, value: B}
  - {code: c, value: C}
"""


@pytest.mark.parametrize("values", [(1, 2, 2), (2, 2, 2), (0, 1, 1)], ids=str)
@pytest.mark.parametrize("name", WEIGHT_NAMES)
@pytest.mark.parametrize("where", ["option", "rule"])
def test_score_with_named_weights_on_tied_values_gives_numbers_or_exit_2(
    tmp_path: Path, name: str, values: tuple[int, int, int], where: str
) -> None:
    rule = TIED_RULE.replace("A", str(values[0])).replace("B", str(values[1])).replace("C", str(values[2]))
    (tmp_path / "rule.yaml").write_text(rule + (f"weights: {name}\n" if where == "rule" else ""))
    (tmp_path / "x.csv").write_text("comment_id,code\n1,a\n2,b\n3,c\n4,a\n5,b\n")
    (tmp_path / "y.csv").write_text("comment_id,code\n1,a\n2,c\n3,c\n4,b\n5,b\n")
    extra = ["--weights", name] if where == "option" else []
    args = ["score", str(tmp_path / "x.csv"), str(tmp_path / "y.csv"), "--rule", str(tmp_path / "rule.yaml")]
    result = CliRunner().invoke(app, [*args, "--format", "json", *extra])
    all_equal = len(set(values)) == 1 and name != "identity"
    if all_equal or (name == "ratio" and min(values) <= 0):
        assert result.exit_code == 2, result.output
        assert ("all equal" in result.output) if all_equal else ("above 0" in result.output)
        return
    assert result.exit_code == 0, result.output
    for metric in json.loads(result.stdout)["metrics"].values():
        if isinstance(metric, dict) and "value" in metric and metric["value"] is not None:
            assert math.isfinite(metric["value"])


@pytest.mark.parametrize("value", ["1.0e+308", "-1.0e+200", "1.0e+13", "1.0e-320", "1.0e-13"])
def test_code_values_beyond_double_precision_squares_are_refused(tmp_path: Path, value: str) -> None:
    """ICC, alpha and the weights square differences of values: 1e200 overflowed (exit 70) and
    1e-320 underflowed to a variance of 0 (exit 70); now the rule is refused, naming the key."""
    (tmp_path / "rule.yaml").write_text(TIED_RULE.replace("A", value).replace("B", "0").replace("C", "1"))
    with pytest.raises(IrrAuditError, match=r"codes\[0\]\.value.*outside 1e-12 to 1e\+12"):
        load_rule(tmp_path / "rule.yaml")
    with pytest.raises(ValueError, match="cannot be used"):
        summarise(np.array([[0, 1], [1, 1]]), 3, "interval", [float(value), 0, 1])
