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


MULTI_LINE_RULE = """rule: multi_line
version: 1
question: |
  Does the comment   explicitly
  \tstate a current\r
  product failure?
scale: nominal
codes: ["yes", "no"]
"""
ONE_LINE = "Does the comment explicitly state a current product failure?"


@pytest.fixture
def multi_line(tmp_path: Path) -> list[Path]:
    (tmp_path / "rule.yaml").write_text(MULTI_LINE_RULE)
    (tmp_path / "ann  na.csv").write_text("comment_id,code\n1,yes\n2,no\n3,yes\n")  # a run of spaces in a coder
    (tmp_path / "bob.csv").write_text("comment_id,code\n1,yes\n2,no\n3,no\n")
    return [tmp_path / "ann  na.csv", tmp_path / "bob.csv", tmp_path / "rule.yaml"]


def test_a_multi_line_question_is_one_line_in_the_methods_paragraph(multi_line: list[Path]) -> None:
    """A `question: |` block kept its line breaks and tab inside the paragraph, breaking the sentence."""
    first, second, rule = multi_line
    result = run("report", first, second, "--rule", rule, "--format", "methods")
    assert result.exit_code == 0, result.output
    paragraph = result.stdout.rstrip("\n")
    assert "\n" not in paragraph and "\t" not in paragraph and "\r" not in paragraph and "  " not in paragraph
    assert f'which asks "{ONE_LINE}", with the codes' in paragraph
    assert "Two coders (ann na and bob)" in paragraph


def test_a_multi_line_question_keeps_the_markdown_html_and_text_reports_whole(multi_line: list[Path]) -> None:
    import html
    import re

    first, second, rule = multi_line
    audit = irr_audit.audit([first, second], rule)
    markdown = audit.to_markdown()
    assert f"- Question: {ONE_LINE}\n" in markdown
    methods = markdown.split("## Methods paragraph (to paste)\n\n", 1)[1].split("\n", 1)[0]
    assert f'which asks "{ONE_LINE}"' in methods and methods.endswith("irr-audit " + irr_audit.__version__ + ".")
    page = audit.to_html()
    shown = re.search(r'<p class="methods">(.*?)</p>', page, re.S)
    assert shown is not None and "\n" not in shown.group(1)
    assert f"which asks &#34;{ONE_LINE}&#34;" in shown.group(1) or f'which asks "{ONE_LINE}"' in html.unescape(
        shown.group(1)
    )
    text = audit.to_text(width=None)
    assert f'which asks "{ONE_LINE}"' in text and "\\n" not in text.split("Methods paragraph")[1].split("\n")[1]


def test_condition_sentence_quotes_names_on_one_line() -> None:
    from irr_audit.report.methods import condition_sentence

    sentence = condition_sentence("sev\nerity", "fail ure", ["y\tes"], {"not_applicable": 2})
    assert sentence.startswith("The variable sev erity was asked only where a coder coded fail ure as 'y es': 2 cells")
