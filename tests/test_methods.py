"""The methods paragraph: the audit in the sentences of a published content analysis, from the
report dict alone, in every report and as `report --format methods` (sheets, a join, a bundle)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import irr_audit
from irr_audit.cli import app
from irr_audit.report.methods import methods_paragraph

ROOT = Path(__file__).resolve().parent.parent
SHEETS = [ROOT / "examples/sheets/alice.csv", ROOT / "examples/sheets/bob.csv"]
RULE = ROOT / "rules/explicit_current_failure/v1.yaml"
COLLECTOR = ROOT / "examples/collector"


def run(*args: object):
    return CliRunner().invoke(app, [str(arg) for arg in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def example() -> dict:
    return irr_audit.audit(SHEETS, RULE).to_dict()


def test_the_paragraph_names_the_design_the_rule_and_its_digest(example: dict) -> None:
    text = methods_paragraph(example)
    assert text.startswith("Two coders (alice and bob) independently coded 22 units under the coding rule ")
    assert f"explicit_current_failure, version 1 (digest {example['rule']['digest']})" in text
    assert "with the codes 'yes' and 'no' on a nominal scale" in text
    assert "How the units were sampled is not recorded with this audit." in text
    assert "Missing or invalid codes (1 unknown, 1 blank) were logged and not counted as disagreements" in text
    assert "computed on the 20 of 22 units every coder coded validly" in text
    kappa = example["metrics"]["cohen_kappa"]
    low, high = kappa["ci"]
    assert f"Cohen's kappa was {kappa['value']:.2f} (95% CI {low:.2f} to {high:.2f}, normal approximation)" in text
    assert "'substantial' by the Landis & Koch (1977) bands" in text
    assert f"Observed agreement was {100 * example['metrics']['po']['value']:.1f}%." in text
    assert f"irr-audit {example['tool']['version']}" in text
    assert "\n" not in text and "_kappa" not in text


def test_the_paradox_is_said_in_words_when_it_applies() -> None:
    folder = ROOT / "tests/examples/B_high_agreement_negative_kappa"
    report = irr_audit.audit(sorted((folder / "sheets").glob("*.csv")), folder / "rule.yaml").to_dict()
    text = methods_paragraph(report)
    assert "Because one code dominated ('yes', 95.0% of all codes), chance agreement was high (90.5%)" in text
    assert f"Gwet's AC1 ({report['metrics']['gwet_ac1']['value']:.2f})" in text


def test_an_undefined_coefficient_is_said_undefined() -> None:
    folder = ROOT / "tests/examples/C_undefined_kappa"
    report = irr_audit.audit(sorted((folder / "sheets").glob("*.csv")), folder / "rule.yaml").to_dict()
    reason = report["metrics"]["cohen_kappa"]["reason"]
    assert f"Cohen's kappa was undefined ({reason})" in methods_paragraph(report)


def test_format_methods_on_sheets_and_into_a_file(tmp_path: Path, example: dict) -> None:
    result = run("report", *SHEETS, "--rule", RULE, "--format", "methods")
    assert result.exit_code == 0
    assert result.stdout == methods_paragraph(example) + "\n"
    assert result.stdout == irr_audit.audit(SHEETS, RULE).to_methods()
    written = tmp_path / "methods.txt"
    assert run("report", *SHEETS, "--rule", RULE, "--format", "methods", "--output", written).exit_code == 0
    assert written.read_text(encoding="utf-8") == result.stdout


def test_every_report_format_carries_the_paragraph(example: dict) -> None:
    audit = irr_audit.audit(SHEETS, RULE)
    assert "## Methods paragraph (to paste)" in audit.to_markdown()
    text = audit.to_text(width=None)
    assert "Methods paragraph (to paste)" in text.splitlines()
    assert methods_paragraph(example) in text


def test_a_sampled_bundle_says_how_the_units_were_drawn(tmp_path: Path) -> None:
    sample, joined, audits = tmp_path / "sample", tmp_path / "joined", tmp_path / "audits"
    drawn = run(
        "sample",
        COLLECTOR / "dataset.jsonl",
        "--run-record",
        COLLECTOR / "run.json",
        "--rule",
        RULE,
        "--coders",
        "alice,bob",
        "--seed",
        "3",
        "--size",
        "15",
        "--out",
        sample,
    )
    assert drawn.exit_code == 0, drawn.output
    sheets = [sample / "sheets" / "alice.csv", sample / "sheets" / "bob.csv"]
    for sheet, filled in zip(sheets, SHEETS):
        sheet.write_bytes(filled.read_bytes())
    assert run("join", *sheets, "--rule", RULE, "--sample", sample, "--out", joined, "--quiet").exit_code == 0
    text = run("report", joined, "--format", "methods").stdout
    assert "The units were drawn from 23 collected items (dataset.jsonl)" in text
    assert "setting aside unusable items (1 deleted)" in text
    assert "as a simple random sample of 15 of the 22 usable units (seed 3)" in text
    assert run("freeze", joined, "--rule", RULE, "--sample", sample, "--into", audits).exit_code == 0
    (bundle,) = audits.glob("*_v1")
    from_bundle = run("report", bundle, "--format", "methods").stdout
    digest = irr_audit.audit(bundle).to_dict()["bundle"]["digest"]
    assert f"kept in the audit bundle {bundle.name} (digest {digest})" in from_bundle
    assert "seed 3" in from_bundle
