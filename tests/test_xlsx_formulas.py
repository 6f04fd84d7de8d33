"""A workbook's formulas: irr-audit reads the value a spreadsheet saved with each formula and
evaluates none. A formula saved without its value (a file written by a program that computes
none) would read as blank, so in a column the audit reads it is refused, naming the cells."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from irr_audit.errors import SheetError
from irr_audit.io.sheets import read_sheet
from irr_audit.join.counts import read_counts
from irr_audit.join.table_input import read_agreement_table
from irr_audit.rules.load import rule_from_mapping

HEAD = b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
TAIL = b"</sheetData></worksheet>"


def text_cell(reference: str, text: str) -> str:
    return f'<c r="{reference}" t="inlineStr"><is><t>{text}</t></is></c>'


def formula_cell(reference: str, formula: str, saved: str | None) -> str:
    """A text formula, with the value a spreadsheet saved for it, or none."""
    value = f"<v>{saved}</v>" if saved is not None else ""
    return f'<c r="{reference}" t="str"><f>{formula}</f>{value}</c>'


def workbook(tmp_path: Path, rows: list[list[str]]) -> Path:
    """A workbook (openpyxl's package) whose first worksheet's rows are ``rows`` of cell XML."""
    from openpyxl import Workbook

    buffer = io.BytesIO()
    Workbook().save(buffer)
    with zipfile.ZipFile(buffer) as package:
        members = {name: package.read(name) for name in package.namelist()}
    body = "".join(f'<row r="{number}">{"".join(cells)}</row>' for number, cells in enumerate(rows, start=1))
    members["xl/worksheets/sheet1.xml"] = HEAD + body.encode() + TAIL
    path = tmp_path / "coder.xlsx"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as package:
        for name, data in members.items():
            package.writestr(name, data)
    return path


def header(*names: str) -> list[str]:
    return [text_cell(f"{'ABC'[at]}1", name) for at, name in enumerate(names)]


def test_a_formula_with_its_saved_value_reads_as_that_value(tmp_path: Path) -> None:
    path = workbook(
        tmp_path,
        [
            header("comment_id", "code"),
            [text_cell("A2", "c1"), formula_cell("B2", '"y"&amp;"es"', "yes")],
            [formula_cell("A3", '"c"&amp;"2"', "c2"), text_cell("B3", "no")],
        ],
    )
    sheet = read_sheet(path)
    assert sheet.comment_ids.to_pylist() == ["c1", "c2"]
    assert sheet.codes.cast("string").to_pylist() == ["yes", "no"]


@pytest.mark.parametrize(("column", "at"), [("code", "B"), ("comment_id", "A"), ("rule_version", "C")])
def test_a_formula_saved_without_its_value_in_a_column_the_audit_reads_is_refused(
    tmp_path: Path, column: str, at: str
) -> None:
    cells = {"A": text_cell("A3", "c2"), "B": text_cell("B3", "no"), "C": text_cell("C3", "1")}
    cells[at] = formula_cell(f"{at}3", "LOWER(&quot;NO&quot;)", None)
    rows = [
        header("comment_id", "code", "rule_version"),
        [text_cell("A2", "c1"), text_cell("B2", "yes"), text_cell("C2", "1")],
        [cells["A"], cells["B"], cells["C"]],
    ]
    with pytest.raises(SheetError) as refused:
        read_sheet(workbook(tmp_path, rows))
    assert refused.value.code == "sheet-formula-unsaved"
    assert f"1 cells of column '{column}' hold a formula whose value was never saved" in refused.value.message
    assert 'row 3: =LOWER("NO")' in refused.value.message
    assert "save it again" in (refused.value.hint or "")


def test_a_formula_saved_without_its_value_elsewhere_is_read_as_the_blank_it_shows(tmp_path: Path) -> None:
    rows = [
        header("comment_id", "code", "note"),
        [text_cell("A2", "c1"), text_cell("B2", "yes"), formula_cell("C2", "NOW()", None)],
    ]
    sheet = read_sheet(workbook(tmp_path, rows))
    assert sheet.comment_ids.to_pylist() == ["c1"] and sheet.codes.cast("string").to_pylist() == ["yes"]


def test_a_workbook_without_formulas_is_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from irr_audit.io import xlsx

    def never(*args: object) -> None:
        raise AssertionError("read again for formulas it does not hold")

    monkeypatch.setattr(xlsx, "_unsaved_formulas", never)
    rows = [header("comment_id", "code"), [text_cell("A2", "c1"), text_cell("B2", "f")]]  # "f": a value, no <f>
    assert read_sheet(workbook(tmp_path, rows)).comment_ids.to_pylist() == ["c1"]


def test_every_column_of_a_counts_file_or_an_agreement_table_is_checked(tmp_path: Path) -> None:
    """Counts and tables are read whole: a formula without its value is refused in any column."""
    rule = rule_from_mapping({"rule": "r", "version": 1, "scale": "nominal", "codes": ["yes", "no"]})
    counts = workbook(
        tmp_path,
        [
            header("ann", "ben", "units"),
            [text_cell("A2", "yes"), formula_cell("B2", "LOWER(&quot;YES&quot;)", None), text_cell("C2", "3")],
        ],
    )
    with pytest.raises(SheetError) as refused:
        read_counts([counts], rule)
    assert refused.value.code == "sheet-formula-unsaved" and "column 'ben'" in refused.value.message
    table = workbook(
        tmp_path,
        [
            header("", "yes", "no"),
            [text_cell("A2", "yes"), text_cell("B2", "4"), formula_cell("C2", "1+1", None)],
            [text_cell("A3", "no"), text_cell("B3", "1"), text_cell("C3", "5")],
        ],
    )
    with pytest.raises(SheetError) as refused:
        read_agreement_table(table, rule)
    assert refused.value.code == "sheet-formula-unsaved" and "row 2: =1+1" in refused.value.message
