"""`score --table` and `score --category-counts`: published tables reproduced through the CLI,
the same numbers as the sheets or counts they summarise, statsmodels and krippendorff as oracles
on random count matrices, and what a table does not determine reported as such."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from irr_audit.api import audit_counts, audit_table
from irr_audit.cli import app

TABLES = Path(__file__).parent / "fixtures" / "tables"
FLEISS_RULE = TABLES / "fleiss1971_rule.yaml"


def score(*args: str) -> dict:
    result = CliRunner().invoke(app, ["score", *args, "--format", "json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_fleiss_1971_worked_example_from_its_subjects_by_categories_table() -> None:
    # Fleiss (1971), Psychological Bulletin 76(5), 378-382: 30 patients, 6 psychiatrists, 5 diagnoses.
    # P-bar = .556, P-bar_e = .220, kappa = .430; per category (Table 2) .245, .245, .520, .471, .566.
    report = score("--category-counts", str(TABLES / "fleiss1971_category_counts.csv"), "--rule", str(FLEISS_RULE))
    metrics = report["metrics"]
    assert round(metrics["po"]["value"], 3) == 0.556
    assert round(metrics["pe"]["value"], 3) == 0.220
    assert round(metrics["fleiss_kappa"]["value"], 3) == 0.430
    per_category = [round(report["per_category"][c]["kappa"]["value"], 3) for c in report["categories"]]
    assert per_category == [0.245, 0.245, 0.520, 0.471, 0.566]
    assert report["units"]["total"] == 30 and report["table_kind"] == "coincidence"


def test_category_counts_say_what_they_do_not_determine() -> None:
    report = score("--category-counts", str(TABLES / "fleiss1971_category_counts.csv"), "--rule", str(FLEISS_RULE))
    for name in ("conger_kappa", "light_kappa"):
        assert report["metrics"][name]["value"] is None
        assert report["metrics"][name]["reason"].startswith("not determined by a table")
    assert report["pairs"] == [] and report["leave_one_out"] == [] and report["coder_bias"]["pairs"] == []
    assert set(report["input"]["not_determined"]) >= {"pairs", "leave_one_out", "coder_bias", "missingness"}
    assert report["input"]["kind"] == "category_counts"


def test_irrcac_cont3x3abstractors_table() -> None:
    # irrCAC (R) overview vignette, cont3x3abstractors: kappa2.table 0.7964094 (SE 0.05891072),
    # scott2.table 0.7962397 (SE 0.05905473), gwet.ac1.table 0.8493305, bp2.table 0.835,
    # krippen2.table 0.7972585, pa2.table 0.89.
    report = score("--table", str(TABLES / "abstractors_table.csv"), "--rule", str(TABLES / "abstractors_rule.yaml"))
    metrics = report["metrics"]
    published = {
        "cohen_kappa": 0.7964094,
        "scott_pi": 0.7962397,
        "gwet_ac1": 0.8493305,
        "brennan_prediger": 0.835,
        "krippendorff_alpha": 0.7972585,
        "po": 0.89,
    }
    assert {name: round(metrics[name]["value"], 7) for name in published} == published
    assert round(metrics["cohen_kappa"]["se"], 8) == 0.05891072
    assert round(metrics["scott_pi"]["se"], 8) == 0.05905473
    # irrCAC's table functions divide the variance of AC1 by n, the tool (as irrCAC's raw functions) by n - 1
    assert metrics["gwet_ac1"]["se"] * np.sqrt(99 / 100) == pytest.approx(0.04321747, abs=5e-9)
    assert report["table"] == [[13, 0, 0], [0, 20, 7], [0, 4, 56]]
    assert set(report["input"]["not_determined"]) == {"missingness", "disagreements"}


def _write_counts(path: Path, table: np.ndarray, categories: list[str]) -> None:
    lines = ["rows,columns,units"]  # the coders a table names
    lines += [f"{categories[i]},{categories[j]},{table[i, j]}" for i in range(len(table)) for j in range(len(table))]
    path.write_text("\n".join(lines) + "\n")


def _write_table(path: Path, table: np.ndarray, categories: list[str], order: np.ndarray) -> None:
    """The table with its rows and columns in another order than the rule's: labels decide."""
    lines = ["rows \\ columns," + ",".join(categories[j] for j in order)]
    lines += [categories[i] + "," + ",".join(str(table[i, j]) for j in order) for i in order]
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("seed", range(6))
def test_a_table_gives_the_numbers_of_the_counts_it_summarises(tmp_path: Path, seed: int) -> None:
    rng = np.random.default_rng(seed)
    categories = ["0", "1", "2", "3"]
    rule = {"rule": "levels", "version": 1, "scale": "ordinal", "codes": categories}
    table = rng.integers(0, 12, size=(4, 4)) + np.diag(rng.integers(3, 20, size=4))
    _write_counts(tmp_path / "counts.csv", table, categories)
    _write_table(tmp_path / "table.csv", table, categories, rng.permutation(4))
    from_counts = audit_counts(tmp_path / "counts.csv", rule, bootstrap=50, seed=3).to_dict()
    from_table = audit_table(tmp_path / "table.csv", rule, bootstrap=50, seed=3).to_dict()
    for key in ("metrics", "available_case", "per_category", "table", "coder_bias", "benchmarking", "pairs"):
        if key == "pairs":
            for ours, theirs in zip(from_table[key], from_counts[key]):
                assert ours["metrics"] == theirs["metrics"]
        else:
            assert from_table[key] == from_counts[key], key


@pytest.mark.parametrize("seed", range(20))
def test_statsmodels_and_krippendorff_agree_on_random_count_matrices(tmp_path: Path, seed: int) -> None:
    import krippendorff
    from statsmodels.stats.inter_rater import fleiss_kappa

    rng = np.random.default_rng(seed)
    k, raters, subjects = int(rng.integers(2, 6)), int(rng.integers(2, 8)), int(rng.integers(5, 40))
    counts = np.array([rng.multinomial(raters, rng.dirichlet(np.ones(k))) for _ in range(subjects)])
    categories = [f"c{c}" for c in range(k)]
    path = tmp_path / "counts.csv"
    path.write_text(",".join(categories) + "\n" + "\n".join(",".join(map(str, row)) for row in counts) + "\n")
    rule = {"rule": "random", "version": 1, "scale": "nominal", "codes": categories}
    metrics = audit_table(path, rule, kind="category_counts").to_dict()["metrics"]
    alpha = krippendorff.alpha(value_counts=counts, level_of_measurement="nominal")
    if np.isnan(alpha):
        assert not metrics["krippendorff_alpha"]["defined"]
    else:
        assert metrics["krippendorff_alpha"]["value"] == pytest.approx(alpha, abs=1e-12)
    kappa = fleiss_kappa(counts)  # two ratings per subject too: the counts determine it
    if metrics["fleiss_kappa"]["defined"]:
        assert metrics["fleiss_kappa"]["value"] == pytest.approx(kappa, abs=1e-12)
        assert metrics["fleiss_kappa"]["ci"] is not None
    else:
        assert (counts.sum(axis=0) > 0).sum() == 1  # one category only: pe = 1
    if raters == 2:
        assert metrics["scott_pi"]["defined"] is metrics["krippendorff_alpha"]["defined"]
        assert metrics["scott_pi"]["value"] == pytest.approx(metrics["fleiss_kappa"]["value"], abs=1e-12)


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("x \\ y,yes,no\nyes,3,1\nmaybe,2,4\n", "table-label"),
        ("x \\ y,yes,yes\nyes,3,1\nno,2,4\n", "table-label"),
        ("x \\ y,yes,no\nyes,3,1.5\nno,2,4\n", "table-count"),
        ("x \\ y,yes,no\nyes,3,\nno,2,4\n", "table-count"),
        ("x \\ y,yes,no\nyes,-3,1\nno,2,4\n", "table-count"),
    ],
)
def test_bad_tables_name_the_file_the_place_and_the_fix(tmp_path: Path, text: str, code: str) -> None:
    (tmp_path / "t.csv").write_text(text)
    (tmp_path / "rule.yaml").write_text("rule: yn\nversion: 1\nscale: nominal\ncodes: [yes, no]\n")
    result = CliRunner().invoke(
        app, ["score", "--table", str(tmp_path / "t.csv"), "--rule", str(tmp_path / "rule.yaml")]
    )
    assert result.exit_code == 2
    assert f"Error [{code}]" in result.output and "t.csv" in result.output and "Hint:" in result.output


def test_one_input_at_a_time(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text("x,yes,no\nyes,1,0\nno,0,1\n")
    result = CliRunner().invoke(
        app,
        ["score", "--table", str(tmp_path / "t.csv"), "--category-counts", str(tmp_path / "t.csv"), "--rule", "r.yaml"],
    )
    assert result.exit_code == 2 and "give one input" in result.output


def test_two_ratings_per_subject_give_fleiss_kappa_golden() -> None:
    """3 subjects, 2 ratings each: statsmodels' fleiss_kappa gives 1/3, as Scott's pi; Fleiss'
    kappa was reported undefined ("do not say which coder gave which code") for two ratings."""
    from statsmodels.stats.inter_rater import fleiss_kappa

    counts = np.array([[2, 0], [1, 1], [0, 2]])
    assert fleiss_kappa(counts) == pytest.approx(1 / 3, abs=1e-12)
    report = audit_counts_matrix(counts, ["yes", "no"])
    for basis in ("metrics", "available_case", "gwet_missing"):
        fleiss = report[basis]["fleiss_kappa"]
        assert fleiss["defined"] and fleiss["value"] == pytest.approx(1 / 3, abs=1e-12), basis
        assert fleiss["ci"] == pytest.approx([-0.9733093230267029, 1.0], abs=1e-9), basis  # SE 2/3 * sqrt(...)
    assert report["metrics"]["scott_pi"]["value"] == pytest.approx(1 / 3, abs=1e-12)
    assert report["metrics"]["krippendorff_alpha"]["value"] == pytest.approx(4 / 9, abs=1e-12)
    for basis, name in [("metrics", "cohen_kappa"), ("metrics", "conger_kappa"), ("gwet_missing", "conger_kappa")]:
        assert not report[basis][name]["defined"], (basis, name)
        assert "which coder gave which code" in report[basis][name]["reason"]
    assert "which coder" in report["paradox"]["max_kappa"]["reason"]  # not "chance agreement is 1"


@pytest.mark.parametrize(
    ("counts", "times"), [([[2, 0], [1, 1], [0, 2]], "two times"), ([[2, 0], [1, 1], [0, 3]], "up to three times")]
)
def test_a_count_matrix_headlines_alpha_and_names_no_coders(counts: list[list[int]], times: str) -> None:
    """Cohen's kappa needs to know which coder gave which code, which a count matrix does not say:
    with two ratings a unit it is no headline (it was, always undefined), and the methods
    paragraph says how often each unit was coded, not "Two coders (rating 1 and rating 2)"."""
    from irr_audit.report.methods import methods_paragraph

    report = audit_counts_matrix(np.array(counts), ["yes", "no"])
    assert report["headline"]["metric"] == "krippendorff_alpha"
    assert report["headline"]["why"].endswith("ratings a unit, coders not told apart, a nominal rule")
    paragraph = methods_paragraph(report)
    assert paragraph.startswith(f"Each of 3 units was coded {times}, as a table of how many codes each unit got")
    assert "coders (" not in paragraph and "Cohen's kappa" not in paragraph


def audit_counts_matrix(counts: np.ndarray, categories: list[str], **rule: object) -> dict:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "counts.csv"
        path.write_text(",".join(categories) + "\n" + "\n".join(",".join(map(str, row)) for row in counts) + "\n")
        spec = {"rule": "random", "version": 1, "scale": "nominal", "codes": categories, **rule}
        return audit_table(path, spec, kind="category_counts").to_dict()


def _coders_at_random(counts: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Sheets the counts could have come from: each subject's codes dealt to coders at random,
    -1 for the coders a subject with fewer ratings lacks."""
    width = int(counts.sum(axis=1).max())
    rows = []
    for row in counts:
        codes = np.repeat(np.arange(len(row)), row)
        rows.append(rng.permutation(np.concatenate([codes, -np.ones(width - len(codes), dtype=int)])))
    return np.array(rows)


# what a count matrix determines (docs/statistics.md, "Tables as input"), by the coders' number
DETERMINED = {
    "po",
    "fleiss_kappa",
    "fleiss_kappa_weighted",
    "gwet_ac1",
    "gwet_ac2",
    "brennan_prediger",
    "brennan_prediger_weighted",
    "krippendorff_alpha",
    "krippendorff_alpha_weighted",
}
NEEDS_CODERS = {"cohen_kappa", "conger_kappa", "conger_kappa_weighted", "weighted_kappa", "bias_index", "max_kappa"}


@pytest.mark.parametrize("ratings", ["2", "3", "varying"])
@pytest.mark.parametrize("seed", range(4))
def test_what_a_count_matrix_reports_is_what_any_coders_behind_it_give(ratings: str, seed: int) -> None:
    """Every coefficient the counts determine equals (value, SE, CI) the one of sheets dealing each
    subject's codes to coders at random, on every basis; those needing coder identity stay undefined."""
    from irr_audit.metrics import summarise

    rng = np.random.default_rng(seed)
    k, subjects = int(rng.integers(2, 5)), int(rng.integers(6, 30))
    totals = rng.integers(1, 5, size=subjects) if ratings == "varying" else np.full(subjects, int(ratings))
    counts = np.array([rng.multinomial(t, rng.dirichlet(np.ones(k) * 2)) for t in totals])
    categories = [f"c{c}" for c in range(k)]
    report = audit_counts_matrix(counts, categories, scale="ordinal", weights="quadratic")
    for _ in range(2):
        s = summarise(_coders_at_random(counts, rng), k, "ordinal", weights="quadratic")
        bases = (("metrics", s.metrics), ("available_case", s.available_case), ("gwet_missing", s.gwet_missing))
        for basis, ours in bases:
            for name, metric in ours.items():
                if isinstance(metric, dict):
                    continue
                got = report[basis][name]
                if name in DETERMINED:
                    assert got["defined"] is metric.defined, (basis, name)
                    if metric.defined:
                        assert got["value"] == pytest.approx(metric.value, abs=1e-12), (basis, name)
                        assert (got.get("se") is None) is (metric.se is None), (basis, name)
                        if metric.se is not None:
                            assert got["se"] == pytest.approx(metric.se, abs=1e-12), (basis, name)
                if name in NEEDS_CODERS:
                    assert not got["defined"] and "which coder" in got["reason"], (basis, name)
    full = counts[totals == totals.max()]
    if totals.max() >= 2 and len(full) and report["metrics"]["fleiss_kappa"]["defined"]:
        from statsmodels.stats.inter_rater import fleiss_kappa

        assert report["metrics"]["fleiss_kappa"]["value"] == pytest.approx(fleiss_kappa(full), abs=1e-12)


@pytest.mark.parametrize("flag", ["--table", "--category-counts"])
def test_a_table_takes_the_interval_and_weights_options(tmp_path: Path, flag: str) -> None:
    """--ci-level, --interval, --test-against and --weights were silently ignored for a table (95%,
    no weighted coefficients); they apply as to sheets."""
    rule = tmp_path / "rule.yaml"
    rule.write_text("rule: r\nversion: 1\nscale: ordinal\ncodes: [a, b, c]\n")
    path = tmp_path / "table.csv"
    if flag == "--table":
        path.write_text("x \\ y,a,b,c\na,3,1,0\nb,0,2,1\nc,0,0,3\n")
    else:
        path.write_text("a,b,c\n2,0,0\n1,1,0\n0,1,1\n0,0,2\n1,0,1\n2,0,0\n")
    options = ["--ci-level", "0.9", "--interval", "t", "--test-against", "0.2", "--weights", "quadratic"]
    report = score(flag, str(path), "--rule", str(rule), *options)
    assert report["intervals"] == {"kind": "t", "level": 0.9, "test_against": 0.2, "weights": "quadratic"}
    fleiss = report["metrics"]["fleiss_kappa_weighted"]
    assert fleiss["defined"] and fleiss["weights"] == "quadratic" and fleiss["ci_method"].startswith("Student t")
