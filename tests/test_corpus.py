"""The bad-input corpus: every member has one expected outcome, checked by one test.

Small text members are committed under tests/corpus/files/; binary and large
ones are written by tests/corpus/generate.py into a temporary folder. An outcome
is either exit 2 with a specific error code, or exit 0 with specific log
reasons, warnings and log rows (row as a spreadsheet shows it, raw value verbatim).
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from typer.testing import CliRunner

from irr_audit.cli import app

HERE = Path(__file__).parent
FILES = HERE / "corpus" / "files"
RULE = HERE.parent / "rules" / "explicit_current_failure" / "v1.yaml"


@dataclass(frozen=True)
class Case:
    sheet: str
    exit: int = 0
    error: str | None = None  # the error code on stderr, e.g. "sheet-encoding"
    message: str | None = None  # more text the message must hold
    fully: int | None = None
    reasons: dict[str, int] = field(default_factory=dict)
    warning: str | None = None
    log: tuple[tuple[str, str, str], ...] = ()  # (row, raw_value as in the CSV log, reason) for this sheet
    partner: str = "partner.csv"
    args: tuple[str, ...] = ()


CASES = {
    # encodings
    "utf-8 with BOM": Case("utf8_bom.csv", fully=3),
    "utf-16 with BOM": Case("utf16_bom.csv", fully=3),
    "windows-1252": Case("cp1252.csv", exit=2, error="sheet-encoding", message="Windows-1252"),
    "invalid utf-8": Case("invalid_utf8.csv", exit=2, error="sheet-encoding", message="byte 21 (line 2)"),
    "nul bytes": Case("nul_bytes.csv", exit=2, error="sheet-binary"),
    # shapes
    "crlf": Case("crlf.csv", fully=3),
    "lone cr": Case("lone_cr.csv", fully=3),
    "quoted newlines keep spreadsheet rows": Case(
        "quoted_newlines.csv", fully=2, reasons={"invalid": 1}, log=(("4", "maybe", "invalid"),)
    ),
    "blank lines are counted, rows stay true": Case(
        "blank_lines.csv", fully=2, reasons={"invalid": 1}, log=(("7", "maybe", "invalid"),)
    ),
    "ragged row": Case("ragged.csv", exit=2, error="sheet-ragged", message="row 3 has 3 cells"),
    "header only": Case("header_only.csv", exit=2, error="sheet-empty"),
    "no header": Case("no_header.csv", exit=2, error="sheet-missing-column", message="add a header row"),
    "duplicate column names": Case("duplicate_columns.csv", exit=2, error="sheet-duplicate-column"),
    "empty file": Case("empty.csv", exit=2, error="sheet-empty"),
    "binary named .csv": Case("binary.csv", exit=2, error="sheet-binary"),
    "10 MB single cell": Case("cell_10mb.csv", fully=3),
    "100 MB sheet": Case("sheet_100mb.csv", fully=0, reasons={"absent": 100_003}),
    # spreadsheets
    "several worksheets: the first is read": Case(
        "several_worksheets.xlsx", exit=2, error="sheet-missing-column", message="--worksheet NAME"
    ),
    "several worksheets: --worksheet chooses": Case("several_worksheets.xlsx", fully=3, args=("--worksheet", "Codes")),
    "several worksheets: a warning names them": Case("first_worksheet.xlsx", fully=3, warning="has 2 worksheets"),
    "merged cells": Case(
        "merged.xlsx", fully=2, reasons={"blank": 1}, warning="merged cells B2:B3", log=(("3", "", "blank"),)
    ),
    "formulas: cached value, never evaluated": Case("formulas.xlsx", fully=3),
    "numbers as ids are refused": Case(
        "numbers_as_ids.xlsx", exit=2, error="sheet-number-id", message="stored as numbers or dates"
    ),
    "dates as ids are refused": Case("dates_as_ids.xlsx", exit=2, error="sheet-number-id", message="rows "),
    "hidden rows": Case("hidden_rows.xlsx", fully=3, warning="1 hidden rows were read"),
    # ids
    "excel scientific ids": Case("id_scientific.csv", fully=3, reasons={"absent": 1}, warning="scientific notation"),
    "lost leading zeros": Case(
        "id_leading_zeros.csv", partner="partner_zeros.csv", fully=3, reasons={"absent": 2}, warning="leading zeros"
    ),
    "surrounding whitespace: the same unit": Case(
        "id_whitespace.csv", fully=3, reasons={"duplicate": 1}, log=(("3", "yes", "duplicate"),)
    ),
    "nfc vs nfd: different units, warned": Case(
        "id_nfd.csv", partner="id_nfc.csv", fully=3, reasons={"absent": 2}, warning="Unicode normalisation"
    ),
    "zero-width characters: different units, warned": Case(
        "id_zero_width.csv", fully=2, reasons={"absent": 2}, warning="invisible characters"
    ),
    # codes
    "case, spaces, no-break spaces": Case("code_spelling.csv", fully=3),
    "full-width letters and aliases": Case("code_fullwidth.csv", fully=3),
    "formula-looking codes are logged verbatim, neutralised in CSV": Case(
        "code_formula.csv",
        fully=0,
        reasons={"invalid": 3},
        log=(("2", "'=1+1", "invalid"), ("3", "'@SUM(A1)", "invalid"), ("4", "'-yes", "invalid")),
    ),
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import sys

    sys.path.insert(0, str(HERE / "corpus"))
    from generate import generate

    folder = tmp_path_factory.mktemp("corpus")
    generate(folder, large=True)
    (folder / "utf8_bom.csv").write_bytes(b"\xef\xbb\xbf" + (FILES / "partner.csv").read_bytes())
    return folder


def locate(name: str, corpus: Path) -> Path:
    return FILES / name if (FILES / name).exists() else corpus / name


@pytest.mark.parametrize("name", sorted(CASES), ids=sorted(CASES))
def test_corpus_member(name: str, corpus: Path, tmp_path: Path) -> None:
    case = CASES[name]
    sheet, partner = locate(case.sheet, corpus), locate(case.partner, corpus)
    before = hashlib.sha256(sheet.read_bytes()).hexdigest()
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app,
        ["join", str(sheet), str(partner), "--rule", str(RULE), "--out", str(out), *case.args],
        catch_exceptions=False,
    )
    assert hashlib.sha256(sheet.read_bytes()).hexdigest() == before, "an input was modified"
    assert result.exit_code == case.exit, result.output
    if case.exit == 2:
        assert result.stderr.startswith(f"Error [{case.error}]: ")
        assert sheet.name in result.stderr
        assert case.message is None or case.message in result.stderr
        assert not out.exists()
        return
    summary = json.loads((out / "summary.json").read_text())
    assert summary["units"]["fully_coded"] == case.fully
    assert summary["log_rows"] == case.reasons
    if case.warning:
        assert any(case.warning in warning for warning in summary["warnings"]), summary["warnings"]
        assert case.warning in result.stderr
    else:
        assert summary["warnings"] == []
    with open(out / "missingness_log.csv", newline="", encoding="utf-8") as stream:
        logged = [(r["row"], r["raw_value"], r["reason"]) for r in csv.DictReader(stream) if r["sheet"] == sheet.name]
    for expected in case.log:
        assert expected in logged


def test_formula_text_is_verbatim_in_json(tmp_path: Path) -> None:
    out = tmp_path / "out"
    CliRunner().invoke(
        app,
        ["join", str(FILES / "code_formula.csv"), str(FILES / "partner.csv"), "--rule", str(RULE), "--out", str(out)],
        catch_exceptions=False,
    )
    raw = [json.loads(line)["raw_value"] for line in (out / "missingness_log.jsonl").read_text().splitlines()]
    assert raw == ["=1+1", "@SUM(A1)", "-yes"]


def test_huge_rule_file_is_refused(tmp_path: Path) -> None:
    rule = tmp_path / "v1.yaml"
    with open(rule, "wb") as stream:
        stream.truncate(50 * 1024 * 1024)
    result = CliRunner().invoke(
        app, ["score", str(FILES / "partner.csv"), str(FILES / "crlf.csv"), "--rule", str(rule)], catch_exceptions=False
    )
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error [limit-rule-bytes]: rule file {rule} is 52,428,800 bytes")


# --- paths ---------------------------------------------------------------------


def run_join(*sheets: Path, out: Path):
    return CliRunner().invoke(
        app, ["join", *map(str, sheets), "--rule", str(RULE), "--out", str(out)], catch_exceptions=False
    )


def test_output_into_the_inputs_folder_leaves_inputs_alone(tmp_path: Path) -> None:
    alice, bob = tmp_path / "alice.csv", tmp_path / "bob.csv"
    alice.write_bytes((FILES / "partner.csv").read_bytes())
    bob.write_bytes((FILES / "crlf.csv").read_bytes())
    before = alice.read_bytes(), bob.read_bytes()
    result = run_join(alice, bob, out=tmp_path)  # join replaces its folder as a whole: never one holding inputs
    assert result.exit_code == 2
    assert result.stderr.startswith(
        f"Error [output-overwrites-input]: --out: writing {tmp_path} would overwrite "
        f"an input file: the folder holds {alice}."
    )
    assert (alice.read_bytes(), bob.read_bytes()) == before
    assert not (tmp_path / "joined.csv").exists()


def test_unwritable_output_folder(tmp_path: Path) -> None:
    # /proc refuses new folders even to root, which a chmod'ed folder does not.
    result = run_join(FILES / "partner.csv", FILES / "crlf.csv", out=Path("/proc/irr-audit-test/out"))
    assert result.exit_code == 2
    assert result.stderr.startswith("Error [output-unwritable]: cannot write into /proc/irr-audit-test/out")


def test_missing_parent_folders_are_made(tmp_path: Path) -> None:
    out = tmp_path / "a" / "b" / "c"
    assert run_join(FILES / "partner.csv", FILES / "crlf.csv", out=out).exit_code == 0
    assert (out / "summary.json").exists()


def test_symlinked_output_to_an_input_is_refused(tmp_path: Path) -> None:
    alice = tmp_path / "alice.csv"
    alice.write_bytes((FILES / "partner.csv").read_bytes())
    out = tmp_path / "out"
    out.mkdir()
    os.symlink(alice, out / "joined.csv")
    result = run_join(alice, FILES / "crlf.csv", out=out)
    assert result.exit_code == 2
    assert "would overwrite an input file" in result.stderr
    assert alice.read_bytes() == (FILES / "partner.csv").read_bytes()


def test_symlinked_sheet_is_read(tmp_path: Path) -> None:
    link = tmp_path / "carol.csv"
    os.symlink(FILES / "partner.csv", link)
    assert run_join(link, FILES / "crlf.csv", out=tmp_path / "out").exit_code == 0


def test_output_that_is_a_folder_or_inside_a_file(tmp_path: Path) -> None:
    sheets = [str(FILES / "partner.csv"), str(FILES / "crlf.csv")]
    result = CliRunner().invoke(
        app, ["report", *sheets, "--rule", str(RULE), "--format", "md", "-o", str(tmp_path)], catch_exceptions=False
    )
    assert result.exit_code == 2
    assert f"Error [output-is-a-folder]: --output: cannot write {tmp_path}: it is a folder." in result.stderr
    result = run_join(*map(Path, sheets), out=FILES / "partner.csv")
    assert result.exit_code == 2
    assert "it is a file, not a folder" in result.stderr
