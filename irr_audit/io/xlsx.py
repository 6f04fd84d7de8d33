"""XLSX workbooks read as text, within the limits.

An XLSX file is a zip of XML parts. Before openpyxl parses it, the package is
checked against the limits (unpacked size, compression ratio, cells), and the
worksheet's extent before it is read as a grid; every cell then becomes text
as a spreadsheet shows it.
"""

from __future__ import annotations

import datetime as dt
import io
import re
import zipfile
from dataclasses import dataclass
from typing import Any

from irr_audit.errors import IrrAuditError, SheetError
from irr_audit.io.display import printable
from irr_audit.io.limits import Limits, limit_error


@dataclass(frozen=True)
class WorksheetText:
    """One worksheet of a workbook as text: the header, the records (rows 2, 3, ...) as a
    spreadsheet shows their cells, and what the reader of the sheet needs to know besides."""

    header: list[str]
    body: list[list[str]]
    warnings: tuple[str, ...]
    numeric_cells: dict[int, list[int]]  # column -> rows holding a number or date
    worksheets: tuple[str, ...]  # every worksheet's title, when there are several
    unsaved_formulas: dict[int, list[tuple[int, str]]]  # column -> (row, formula) of formulas saved without a value


def read_worksheet(data: bytes, name: str, worksheet_name: str | None, limits: Limits) -> WorksheetText:
    """The worksheet ``worksheet_name`` (or the first) of the workbook ``data``, within the limits."""
    has_formulas = _check_xlsx_package(data, name, limits)
    # openpyxl adds 0.06 s to every start: imported only when an XLSX sheet is read
    from openpyxl import load_workbook  # noqa: PLC0415

    try:
        # data_only: a formula cell gives the value the spreadsheet cached; no formula is evaluated.
        workbook = load_workbook(io.BytesIO(data), data_only=True)
    except Exception as exc:  # openpyxl raises whatever its parsing hits (KeyError, IndexError, ParseError, ...)
        raise _unreadable_xlsx(name, exc) from None
    try:
        worksheet, warnings = _choose_worksheet(workbook, name, worksheet_name)
        _check_worksheet_extent(worksheet, name, limits)
        values = list(worksheet.iter_rows(values_only=True))
        warnings += _worksheet_warnings(worksheet)
    finally:
        workbook.close()
    if not values:
        raise SheetError(
            f"sheet {name} has an empty worksheet {worksheet.title!r}.",
            hint="choose the worksheet with the codes (--worksheet NAME), or save the coder's sheet again.",
            code="sheet-empty",
        )
    header = [_xlsx_text(value) for value in values[0]]
    body = [[_xlsx_text(value) for value in row] for row in values[1:]]
    numeric: dict[int, list[int]] = {}
    for row_number, row in enumerate(values[1:], start=2):
        for column, value in enumerate(row):
            if isinstance(value, (int, float, dt.date, dt.time)) and not isinstance(value, bool):
                numeric.setdefault(column, []).append(row_number)
    titles = tuple(sheet.title for sheet in workbook.worksheets)
    unsaved = _unsaved_formulas(data, worksheet.title, values) if has_formulas else {}
    return WorksheetText(header, body, tuple(warnings), numeric, titles if len(titles) > 1 else (), unsaved)


def _unsaved_formulas(data: bytes, title: str, values: list[tuple[Any, ...]]) -> dict[int, list[tuple[int, str]]]:
    """The formulas of worksheet ``title`` saved without the value they gave (a file made by a
    program that writes formulas but computes none), which read as blank: column -> (row, formula).
    ``values``: the worksheet's cells as read for their saved values. The workbook is read again,
    for its formulas, only when its XML holds one."""
    from openpyxl import load_workbook  # noqa: PLC0415 (see read_worksheet)

    workbook = load_workbook(io.BytesIO(data), data_only=False)
    try:
        formulas = list(workbook[title].iter_rows(values_only=True))
    finally:
        workbook.close()
    unsaved: dict[int, list[tuple[int, str]]] = {}
    for row_number, (saved, written) in enumerate(zip(values, formulas), start=1):
        for column, (value, formula) in enumerate(zip(saved, written)):
            text = getattr(formula, "text", formula)  # an array formula keeps its text apart
            if value is None and isinstance(text, str) and text.startswith("="):
                unsaved.setdefault(column, []).append((row_number, text))
    return unsaved


def _unreadable_xlsx(name: str, exc: BaseException) -> SheetError:
    detail = printable(str(exc))
    return SheetError(
        f"sheet {name} is not a readable XLSX workbook ({type(exc).__name__}{': ' + detail if detail else ''}).",
        hint="open it in a spreadsheet and save it again as .xlsx, or export CSV UTF-8.",
        code="sheet-malformed",
    )


# An XLSX file is a zip of XML parts. Before openpyxl parses it (all its worksheets,
# into memory), the zip is checked against the limits: declared sizes bound what the
# zip module unpacks, the ratio catches a zip bomb, and the worksheets' cells and
# declared dimensions bound what openpyxl would build. XML entities (the "billion
# laughs") and external entities are refused by defusedxml, which openpyxl uses.
WORKSHEET_PART = re.compile(r"xl/worksheets/[^/]+\.xml", re.IGNORECASE)
CELL_TAG = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?c[\s/>]")
FORMULA_TAG = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?f[\s/>]")
DIMENSION = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?dimension\s[^>]*?ref=[\"']([A-Za-z]*)(\d*)(?::([A-Za-z]+)(\d+))?")
RATIO_CHECKED_FROM = 64 << 20  # smaller parts may pack at any ratio: a long cell of one repeated text is no bomb
STREAM_CHUNK = 1 << 20


def _check_xlsx_package(data: bytes, name: str, limits: Limits) -> bool:
    """Check the package against the limits; returns whether a worksheet holds a formula."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
        raise _unreadable_xlsx(name, exc) from None
    subject = f"sheet {name}"
    total = 0
    for member in members:
        total += member.file_size
        if total > limits.xlsx_bytes:
            raise limit_error(
                "xlsx_bytes",
                limits,
                subject,
                f"unpacks to more than {limits.xlsx_bytes:,} bytes "
                f"(part {printable(member.filename)} alone is {member.file_size:,} bytes)",
                why="An XLSX file is a zip of XML parts.",
            )
        packed = max(member.compress_size, 1)
        if member.file_size > RATIO_CHECKED_FROM and member.file_size > limits.xlsx_ratio * packed:
            raise limit_error(
                "xlsx_ratio",
                limits,
                subject,
                f"has a part {printable(member.filename)} that unpacks "
                f"{member.file_size // packed:,} times larger than it is packed "
                f"({member.file_size:,} bytes)",
                why="This is how a zip bomb looks.",
            )
    cells, formulas = 0, False
    for member in members:
        if WORKSHEET_PART.fullmatch(member.filename):
            counted, has_formula = _worksheet_part_cells(archive, member, subject, limits)
            cells, formulas = cells + counted, formulas or has_formula
            if cells > limits.xlsx_cells:
                raise limit_error(
                    "xlsx_cells",
                    limits,
                    subject,
                    f"has more than {limits.xlsx_cells:,} cells in its worksheets",
                    why="Every worksheet of a workbook is read into memory.",
                )
    return formulas


def _worksheet_part_cells(
    archive: zipfile.ZipFile, member: zipfile.ZipInfo, subject: str, limits: Limits
) -> tuple[int, bool]:
    """The cells of one worksheet part, counted from its XML as it unpacks (never
    held whole), after its declared dimension is checked; and whether it holds a formula."""
    cells, formula = 0, False
    tail = b""
    try:
        with archive.open(member) as stream:
            while chunk := stream.read(STREAM_CHUNK):
                if not cells and not tail:
                    _check_dimension(chunk, member.filename, subject, limits)
                window = tail + chunk
                cells += len(CELL_TAG.findall(window)) - len(CELL_TAG.findall(tail))
                formula = formula or FORMULA_TAG.search(window) is not None
                tail = window[-64:]
                if cells > limits.xlsx_cells:
                    break
    except IrrAuditError:
        raise
    except Exception as exc:  # a damaged zip raises BadZipFile, zlib.error, EOFError, NotImplementedError, ...
        raise _unreadable_xlsx(subject.removeprefix("sheet "), exc) from None
    return cells, formula


def _check_dimension(head: bytes, part: str, subject: str, limits: Limits) -> None:
    match = DIMENSION.search(head)
    if match is None:
        return
    groups = [(group or b"").decode("ascii") for group in match.groups()]
    column, row = (groups[2], groups[3]) if groups[2] else (groups[0], groups[1])
    if column and row:
        _check_extent(
            int(row[:9]),
            _column_number(column),
            f"{column.upper()}{row}",
            subject,
            f"declares (in {printable(part)}) that it reaches cell",
            limits,
        )


def _check_worksheet_extent(worksheet: Any, name: str, limits: Limits) -> None:
    """Before the worksheet is read as a grid of rows x columns: its last cell within the limits
    (a single cell at XFD1048576 would make a grid of 17 billion cells)."""
    from openpyxl.utils import get_column_letter  # noqa: PLC0415 (openpyxl: see read_worksheet)

    rows, columns = worksheet.max_row, worksheet.max_column
    _check_extent(
        rows,
        columns,
        f"{get_column_letter(min(columns, 18278))}{rows}",
        f"sheet {name}",
        f"worksheet {printable(worksheet.title)!r} reaches cell",
        limits,
    )


def _check_extent(rows: int, columns: int, cell: str, subject: str, what: str, limits: Limits) -> None:
    why = "A worksheet is read as rows x columns; delete what lies beyond your data (Ctrl+End shows the last cell)."
    found = f"{what} {cell} ({rows:,} rows x {columns:,} columns)"
    if rows > limits.xlsx_rows:
        raise limit_error("xlsx_rows", limits, subject, found, why=why)
    if columns > limits.columns:
        raise limit_error("columns", limits, subject, found, why=why)
    if rows * columns > limits.xlsx_cells:
        raise limit_error("xlsx_cells", limits, subject, f"{found} = {rows * columns:,} cells", why=why)


def _column_number(letters: str) -> int:
    number = 0
    for letter in letters.upper()[:8]:
        number = number * 26 + ord(letter) - ord("A") + 1
    return number


def _choose_worksheet(workbook: Any, name: str, wanted: str | None) -> tuple[Any, list[str]]:
    titles = [sheet.title for sheet in workbook.worksheets]
    shown = [repr(printable(title, 40)) for title in titles]  # titles are the file's text: escaped in messages
    if not titles:
        raise SheetError(
            f"sheet {name} has no worksheet to read: a workbook of only chartsheets, or one whose worksheet part "
            "is missing, holds no table.",
            hint="save the coder's table as a worksheet of a new workbook, or export it as CSV UTF-8.",
            code="sheet-no-worksheet",
        )
    if wanted is not None:
        if wanted not in titles:
            raise SheetError(
                f"sheet {name} has no worksheet {printable(wanted)!r}. Worksheets: {', '.join(shown)}.",
                hint="pass --worksheet with one of those names.",
                code="sheet-no-worksheet",
            )
        return workbook[wanted], []
    warnings = []
    if len(titles) > 1:
        warnings.append(
            f"the workbook has {len(titles)} worksheets ({', '.join(shown)}); read the first, {shown[0]}. "
            "Choose another with --worksheet."
        )
    return workbook.worksheets[0], warnings


def _worksheet_warnings(worksheet: Any) -> list[str]:
    warnings = []
    hidden = [number for number, dims in worksheet.row_dimensions.items() if dims.hidden]
    if hidden:
        shown = ", ".join(map(str, hidden[:10])) + (" ..." if len(hidden) > 10 else "")
        warnings.append(f"{len(hidden)} hidden rows were read like any other (rows {shown}).")
    merged = [str(cells) for cells in worksheet.merged_cells.ranges]
    if merged:
        warnings.append(
            f"merged cells {', '.join(merged[:5])}: only the top-left cell of each holds a value; "
            "the others are read as blank."
        )
    return warnings


def _xlsx_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    return str(value)
