"""A codebook's text, Markdown and HTML reports show the warnings every variable gives (the
sheets' own: a copied sheet) once, before the variables, and each variable's own warnings under
that variable; the JSON keeps every variable's document whole."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

import irr_audit
from irr_audit.report.reliability import codebook_html, codebook_markdown, codebook_text, common_warnings
from tests.conftest import run

ROOT = Path(__file__).resolve().parents[1]
CODEBOOK = ROOT / "codebooks" / "comment_study" / "v1.yaml"
VARIABLES = ["explicit_current_failure", "product_area", "severity", "sarcasm"]
COPIED = "hold the very same bytes"
OWN = "a warning of severity alone"


@pytest.fixture
def copied_sheets(tmp_path: Path) -> list[Path]:
    """The example's sheets and a copy of alice's as dave's: a warning every variable gives."""
    sheets = [Path(shutil.copy(path, tmp_path)) for path in sorted((ROOT / "examples/codebook/sheets").glob("*.csv"))]
    return [*sheets, Path(shutil.copy(tmp_path / "alice.csv", tmp_path / "dave.csv"))]


def document_with_an_own_warning(sheets: list[Path]) -> dict[str, Any]:
    document = irr_audit.audit_codebook(sheets, CODEBOOK).to_dict()
    severity = document["variables"]["severity"]
    severity["warnings"] = [*severity["warnings"], OWN]
    return document


def test_the_common_warning_is_found_and_the_json_keeps_it_per_variable(copied_sheets: list[Path]) -> None:
    document = irr_audit.audit_codebook(copied_sheets, CODEBOOK).to_dict()
    for variable in VARIABLES:
        assert any(COPIED in warning for warning in document["variables"][variable]["warnings"])
    (common,) = common_warnings(document)
    assert COPIED in common
    assert common_warnings(document_with_an_own_warning(copied_sheets)) == [common]  # one variable's is not common


def unwrapped_text(document: dict[str, Any]) -> str:
    return codebook_text(document, None)


@pytest.mark.parametrize("render", [codebook_markdown, unwrapped_text, codebook_html])
def test_a_common_warning_is_shown_once_and_a_variables_own_under_it(copied_sheets: list[Path], render: Any) -> None:
    document = document_with_an_own_warning(copied_sheets)

    text = render(document)

    assert text.count(COPIED) == 1
    assert text.count(OWN) == 1
    assert text.index("Warnings (every variable)") < text.index("Variable severity")
    assert text.index("Variable severity") < text.index(OWN) < text.index("Variable sarcasm")
    assert document["variables"]["product_area"]["warnings"] == [common_warnings(document)[0]]  # left unchanged


@pytest.mark.parametrize("output_format", ["md", "text"])
def test_the_command_shows_the_copied_sheet_once(copied_sheets: list[Path], output_format: str) -> None:
    result = run("report", *copied_sheets, "--codebook", CODEBOOK, "--format", output_format)
    assert result.exit_code == 0, result.output
    assert result.stdout.count(COPIED) == 1
    assert result.stderr.count(COPIED) == 1  # stderr gives it once too


def test_a_single_variable_keeps_its_warnings_in_its_own_report() -> None:
    document = {"variables": {"only": {"warnings": ["a sheet warning"]}}}
    assert common_warnings(document) == []
