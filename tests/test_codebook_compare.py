"""compare of two codebook bundles: variable by variable, each variable exactly as two audits of
its rule are compared; a codebook bundle is compared with another codebook bundle only."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import irr_audit
from tests.conftest import run

ROOT = Path(__file__).resolve().parents[1]
CODEBOOK = ROOT / "codebooks" / "comment_study" / "v1.yaml"
EXAMPLE_SHEETS = sorted((ROOT / "examples" / "codebook" / "sheets").glob("*.csv"))
VARIABLES = ["explicit_current_failure", "product_area", "severity", "sarcasm"]
SARCASM = ROOT / "rules" / "sarcasm" / "v1.yaml"


def frozen(args: list[object]) -> Path:
    result = run("freeze", *args)
    assert result.exit_code == 0, result.output
    return Path(result.stdout.split("  ", 1)[1].strip())


@pytest.fixture
def two_rounds(tmp_path: Path) -> tuple[list[Path], list[Path]]:
    """The example's sheets, and the same with two of carol's sarcasm codes changed."""
    later = tmp_path / "round2"
    later.mkdir()
    sheets = [Path(shutil.copy(sheet, later / sheet.name)) for sheet in EXAMPLE_SHEETS]
    carol = later / "carol.csv"
    lines = carol.read_text(encoding="utf-8").splitlines(keepends=True)
    changed = [line[: line.rindex(",no,")] + ",yes," + line[line.rindex(",no,") + 4 :] for line in lines[1:3]]
    carol.write_text("".join([lines[0], *changed, *lines[3:]]), encoding="utf-8")
    assert carol.read_bytes() != (ROOT / "examples" / "codebook" / "sheets" / "carol.csv").read_bytes()
    return EXAMPLE_SHEETS, sheets


def test_two_codebook_bundles_are_compared_variable_by_variable(two_rounds, tmp_path: Path) -> None:
    first, second = two_rounds
    a = frozen([*first, "--codebook", CODEBOOK, "--into", tmp_path / "audits"])
    b = frozen([*second, "--codebook", CODEBOOK, "--into", tmp_path / "audits"])

    result = run("compare", a, b, "--bootstrap", 200, "--seed", 7, "--format", "json")

    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert sorted(document["variables"]) == sorted(VARIABLES) and document["notes"] == []
    assert document["codebooks"]["a"]["name"] == document["codebooks"]["b"]["name"] == "comment_study"
    assert document["codebooks"]["a"]["source"] == str(a)
    # an unconditional variable is compared exactly as two audits of its rule are (one rule's bundles)
    one_a = frozen([*first, "--rule", SARCASM, "--code-column", "sarcasm", "--into", tmp_path / "sarcasm"])
    one_b = frozen([*second, "--rule", SARCASM, "--code-column", "sarcasm", "--into", tmp_path / "sarcasm"])
    alone = json.loads(run("compare", one_a, one_b, "--bootstrap", 200, "--seed", 7, "--format", "json").stdout)
    sarcasm = document["variables"]["sarcasm"]
    for key in ("differences", "per_category", "units", "coders", "rules", "bootstrap"):
        assert sarcasm[key] == alone[key], key
    assert sarcasm["differences"]["po"]["difference"] < 0  # carol's changed codes disagree more
    text = run("compare", a, b, "--bootstrap", 200, "--seed", 7)
    assert text.exit_code == 0 and "severity: Compared with an earlier audit (B - A)" in text.stdout
    assert "Codebooks compared" in text.stdout
    markdown = run("compare", a, b, "--bootstrap", 200, "--seed", 7, "--format", "md").stdout
    assert "## sarcasm: Compared with an earlier audit (B - A)" in markdown


def test_the_library_compares_codebook_bundles_too(two_rounds, tmp_path: Path) -> None:
    first, second = two_rounds
    a = frozen([*first, "--codebook", CODEBOOK, "--into", tmp_path / "audits"])
    b = frozen([*second, "--codebook", CODEBOOK, "--into", tmp_path / "audits"])

    compared = irr_audit.compare(a, b, bootstrap=200, seed=3)

    frame = compared.differences
    assert "sarcasm: po" in frame.index and "severity: krippendorff_alpha" in frame.index
    assert frame.loc["product_area: po", "difference"] == 0
    assert "sarcasm: kappa[yes]" in compared.per_category.index
    assert compared.to_dict()["variables"]["sarcasm"]["bootstrap"]["seed"] == 3


def test_a_codebook_bundle_is_compared_with_a_codebook_bundle_only(tmp_path: Path) -> None:
    codebook = frozen([*EXAMPLE_SHEETS, "--codebook", CODEBOOK, "--into", tmp_path / "audits"])
    one = frozen([*EXAMPLE_SHEETS, "--rule", SARCASM, "--code-column", "sarcasm", "--into", tmp_path / "one"])
    for a, b, which in ((codebook, one, "B"), (one, codebook, "A")):
        result = run("compare", a, b)
        assert result.exit_code == 2, result.output
        said = " ".join(result.output.split())
        assert f"Error [usage-compare]: {which} ({one}) is not the bundle of a codebook audit" in said
        assert "a codebook bundle is compared with another codebook bundle, variable by variable" in said


def test_a_report_is_not_compared_with_a_codebook_bundle(tmp_path: Path) -> None:
    codebook = frozen([*EXAMPLE_SHEETS, "--codebook", CODEBOOK, "--into", tmp_path / "audits"])
    sheets = [*EXAMPLE_SHEETS[:2], "--rule", SARCASM, "--code-column", "sarcasm"]

    result = run("report", *sheets, "--compare", codebook, "--format", "md")

    assert result.exit_code == 2, result.output
    assert "Error [usage-compare]: B (the audit) is not the bundle of a codebook audit" in " ".join(
        result.output.split()
    )
    both = irr_audit.compare(codebook, codebook, bootstrap=100, seed=1)
    with pytest.raises(irr_audit.UsageError, match="is not put into one audit's report"):
        irr_audit.audit([str(sheet) for sheet in EXAMPLE_SHEETS[:2]], SARCASM, code_column="sarcasm").with_comparison(
            both
        )
