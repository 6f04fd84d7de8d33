"""score and report present every coefficient: grouped, readable at 80 columns, equal to the library."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import irr_audit
from irr_audit.cli import app
from irr_audit.io.sheets import read_sheet
from irr_audit.join.join import join_sheets
from irr_audit.report.model import AuditOptions, GroupSpec, build_report
from irr_audit.rules.load import load_rule

LEVELS = """rule: complexity
version: 1
scale: ordinal
codes: ["0", "1", "2", "3"]
missing_codes: [unknown]
"""
# four coders, ten units; `model` is the reference a group of three is scored against
PANEL = {
    "ann": "0 1 2 3 3 2 1 0 2 unknown",
    "ben": "0 1 2 3 2 2 1 1 2 3",
    "cat": "0 2 2 3 3 1 1 0 3 3",
    "model": "0 1 2 2 3 2 0 0 2 3",
}


def run(*args: str):
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


@pytest.fixture()
def panel(tmp_path: Path) -> tuple[list[str], str]:
    (tmp_path / "rule.yaml").write_text(LEVELS)
    sheets = []
    for coder, codes in PANEL.items():
        lines = ["comment_id,code"] + [f"q{i},{code}" for i, code in enumerate(codes.split())]
        (tmp_path / f"{coder}.csv").write_text("\n".join(lines) + "\n")
        sheets.append(str(tmp_path / f"{coder}.csv"))
    return sheets, str(tmp_path / "rule.yaml")


def test_text_output_is_grouped_and_fits_the_width_asked_for(panel) -> None:
    sheets, rule = panel
    result = run(
        "score",
        *sheets,
        "--rule",
        rule,
        "--bootstrap",
        "200",
        "--seed",
        "1",
        "--group",
        "humans=ann,ben,cat",
        "--against",
        "model",
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    # into a pipe no line is wrapped; 80 columns when asked for (a terminal gives its own width)
    assert "10 units: 9 fully coded, 1 in the missingness log (not counted as disagreements)" in lines
    at_80 = irr_audit.audit(
        list(sheets), rule, bootstrap=200, seed=1, group="humans=ann,ben,cat", against="model", list_disagreements=False
    ).to_text(width=80)
    assert max(map(len, at_80.splitlines())) <= 80
    titles = [line for line in lines if line and not line.startswith(" ")]
    order = [
        "Coincidence matrix",
        "Raw agreement",
        "By category",
        "Chance-corrected coefficients",
        "Uncertainty",
        "Where the disagreement is: code pairs",
        "Where the disagreement is: distance",
        "Which coder moves the result",
        "Pairwise Cohen's kappa",
        "Group humans against model",
    ]
    positions = [next(i for i, title in enumerate(titles) if title.startswith(name)) for name in order]
    assert positions == sorted(positions)


def test_json_is_the_library_report(panel) -> None:
    sheets, rule = panel
    result = run("score", *sheets, "--rule", rule, "--format", "json", "--bootstrap", "100", "--seed", "7", "-q")
    join = join_sheets([read_sheet(path) for path in sheets], load_rule(rule))
    expected = build_report(join, AuditOptions(n_boot=100, seed=7)).to_dict(include_disagreements=False)
    assert json.loads(result.stdout) == json.loads(json.dumps(expected))


def test_bootstrap_is_reproducible_with_a_seed(panel) -> None:
    sheets, rule = panel
    first = run("score", *sheets, "--rule", rule, "--format", "json", "--bootstrap", "100", "--seed", "3").stdout
    second = run("score", *sheets, "--rule", rule, "--format", "json", "--bootstrap", "100", "--seed", "3").stdout
    assert first == second
    kappa = json.loads(first)["metrics"]["fleiss_kappa"]["bootstrap"]
    assert kappa["n_boot"] == 100 and kappa["ci"][0] <= kappa["ci"][1]


def test_group_against_reference(panel) -> None:
    sheets, rule = panel
    document = json.loads(
        run(
            "score",
            *sheets,
            "--rule",
            rule,
            "--format",
            "json",
            "-q",
            "--group",
            "humans=ann,ben,cat",
            "--against",
            "model",
        ).stdout
    )
    group = document["group_comparison"]
    assert group["group"] == ["ann", "ben", "cat"] and group["reference"] == "model"
    assert group["consensus_method"].startswith("median")
    # q1: ann 1, ben 1, cat 2 -> median 1; q4: 3, 2, 3 -> 3; q9: unknown, 3, 3 -> 3 (two codes)
    assert group["against_reference"]["units"]["fully_coded"] + sum(group["undecided"].values()) == 10
    undecided = {item["comment_id"]: item["reason"] for item in group["undecided_units"]}
    assert set(undecided) == {f"q{i}" for i in range(10)} - _decided_units()
    assert "group_agreement" in group and "fleiss_kappa" in group["group_agreement"]["metrics"]


def _decided_units() -> set[str]:
    """Units whose median of the three humans is one code (no even split, at least two codes)."""
    decided = set()
    for unit in range(10):
        codes = sorted(int(PANEL[c].split()[unit]) for c in ("ann", "ben", "cat") if PANEL[c].split()[unit].isdigit())
        if len(codes) >= 2 and (len(codes) % 2 == 1 or codes[len(codes) // 2 - 1] == codes[len(codes) // 2]):
            decided.add(f"q{unit}")
    return decided


@pytest.mark.parametrize(
    ("group", "against", "message"),
    [
        ("humans=ann,ben", "nobody", "'nobody', which is no coder of this audit"),
        ("humans=ann,model", "model", "--against 'model' is also in the group"),
        ("humans", "model", "is not NAME=CODER,CODER"),
    ],
)
def test_bad_group(panel, group: str, against: str, message: str) -> None:
    sheets, rule = panel
    result = run("score", *sheets, "--rule", rule, "--group", group, "--against", against)
    assert result.exit_code == 2
    assert message in result.stderr


def test_no_shared_fully_coded_unit_is_undefined_not_zero(tmp_path: Path) -> None:
    (tmp_path / "rule.yaml").write_text(LEVELS)
    (tmp_path / "a.csv").write_text("comment_id,code\nx,1\ny,2\n")
    (tmp_path / "b.csv").write_text("comment_id,code\nz,1\nw,2\n")
    document = json.loads(
        run(
            "score",
            str(tmp_path / "a.csv"),
            str(tmp_path / "b.csv"),
            "--rule",
            str(tmp_path / "rule.yaml"),
            "--format",
            "json",
            "-q",
        ).stdout
    )
    assert document["units"]["fully_coded"] == 0
    for name in ("po", "cohen_kappa", "krippendorff_alpha", "gwet_ac1"):
        assert document["metrics"][name]["defined"] is False and document["metrics"][name]["value"] is None
        assert document["metrics"][name]["reason"]


def test_a_single_unit_is_undefined_with_its_reason(tmp_path: Path) -> None:
    (tmp_path / "rule.yaml").write_text(LEVELS)
    (tmp_path / "a.csv").write_text("comment_id,code\nx,1\n")
    (tmp_path / "b.csv").write_text("comment_id,code\nx,2\n")
    document = json.loads(
        run(
            "score",
            str(tmp_path / "a.csv"),
            str(tmp_path / "b.csv"),
            "--rule",
            str(tmp_path / "rule.yaml"),
            "--format",
            "json",
            "-q",
        ).stdout
    )
    kappa = document["metrics"]["cohen_kappa"]
    assert kappa["defined"] is False and "single unit" in kappa["reason"]
    assert document["metrics"]["po"]["value"] == 0.0


def test_paradox_warning_on_example_b() -> None:
    case = Path(__file__).parent / "examples" / "B_high_agreement_negative_kappa"
    sheets = sorted(str(p) for p in (case / "sheets").iterdir())
    result = run("score", *sheets, "--rule", str(case / "rule.yaml"))
    text = " ".join(result.stdout.split())
    assert "Kappa paradox: the coders agree on 90.0% of codes, but Cohen's kappa is only -0.05" in text
    assert "The rates each coder used allow Cohen's kappa to reach at most 1.00" in text


def test_interval_rule_uses_the_codes_values(tmp_path: Path) -> None:
    rule = tmp_path / "rule.yaml"
    rule.write_text(
        "rule: severity\nversion: 1\nscale: interval\ncodes:\n"
        "  - {code: low, value: 1}\n  - {code: mid, value: 2}\n  - {code: high, value: 10}\n"
    )
    (tmp_path / "a.csv").write_text("comment_id,code\n1,low\n2,mid\n3,high\n4,low\n")
    (tmp_path / "b.csv").write_text("comment_id,code\n1,mid\n2,mid\n3,high\n4,low\n")
    document = json.loads(
        run(
            "score", str(tmp_path / "a.csv"), str(tmp_path / "b.csv"), "--rule", str(rule), "--format", "json", "-q"
        ).stdout
    )
    import krippendorff
    import numpy as np

    expected = krippendorff.alpha(
        np.array([[1, 2, 10, 1], [2, 2, 10, 1]], dtype=float), level_of_measurement="interval"
    )
    assert document["metrics"]["krippendorff_alpha"]["value"] == pytest.approx(expected, abs=1e-12)
    assert document["metrics"]["krippendorff_alpha"]["level"] == "interval"


def test_group_spec_parsing() -> None:
    assert GroupSpec.parse("humans = ann, ben ,cat", "model") == GroupSpec("humans", ("ann", "ben", "cat"), "model")
