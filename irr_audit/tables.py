"""Table files read as text: CSV, TSV, XLSX or JSON Lines, every cell a string.

Nothing is converted: "007" stays "007", "NA" stays "NA", and the row number kept
with each record is the one a spreadsheet shows (header = row 1). Large, plain CSV
files are parsed by pyarrow; anything unusual (carriage returns, quotes in the
header, ragged rows) goes through Python's csv module, which gives exact row
numbers and precise error messages.

This module does not import pyarrow.compute, so that the command line's prefetch
(irr_audit.prefetch) can start parsing before that import is done.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import json
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from irr_audit.errors import SheetError

TEXT_FORMATS = {".csv": ",", ".tsv": "\t", ".tab": "\t"}
JSONL_SUFFIXES = (".jsonl", ".ndjson")
XLSX_SUFFIXES = (".xlsx", ".xlsm")
SUPPORTED = ", ".join((*TEXT_FORMATS, *JSONL_SUFFIXES, *XLSX_SUFFIXES))
ROW_TYPE = np.int32  # spreadsheet row numbers: a sheet holds at most a few million rows
csv.field_size_limit(2**31 - 1)  # a 10 MB comment body is a cell, not an attack


@dataclass(frozen=True)
class RawTable:
    """A parsed file before columns are chosen: header names, one text column per
    header position, and the spreadsheet row number of every record."""

    header: list[str]
    cells: list[pa.Array]
    rows: np.ndarray
    warnings: tuple[str, ...] = ()
    numeric_cells: dict[int, list[int]] | None = None  # XLSX: column -> rows holding a number or date
    worksheets: tuple[str, ...] = ()  # XLSX: every worksheet's title, when there are several


@dataclass(frozen=True)
class ParsedFile:
    """A table file parsed, and the fingerprint of its bytes (which are not kept)."""

    table: RawTable
    sha256: str
    size: int

def read_and_parse(path: Path, worksheet: str | None = None) -> ParsedFile:
    """Read a table file from disk and parse it (on any thread: nothing here is shared)."""
    return parse_file(_read_bytes(path), path, worksheet)


def parse_file(data: bytes, path: Path, worksheet: str | None = None) -> ParsedFile:
    """Parse table bytes and fingerprint them. Pure."""
    return ParsedFile(parse_table(data, path, worksheet), hashlib.sha256(data).hexdigest(), len(data))


def use_lean_memory_pool() -> None:
    """Give freed Arrow memory back soon (jemalloc, 200 ms decay): a million-unit audit
    then peaks about 20% lower than with the default pool, at no cost in time (an
    immediate return, decay 0, saves a little more memory but re-faults pages and
    costs a fifth more time). Where jemalloc is not built in, nothing changes.
    Call it before pyarrow's first allocation: the decay applies to arenas made after it."""
    try:
        pa.set_memory_pool(pa.jemalloc_memory_pool())
        pa.jemalloc_set_decay_ms(200)
    except (NotImplementedError, pa.ArrowNotImplementedError):
        pass

def _read_bytes(sheet_path: Path) -> bytes:
    if not sheet_path.exists():
        raise SheetError(
            f"sheet {sheet_path} does not exist.",
            hint="check the path; sheets are CSV, TSV, XLSX or JSON Lines files.",
            code="sheet-not-found",
        )
    if not sheet_path.is_file():
        raise SheetError(f"sheet {sheet_path} is not a file.", code="sheet-not-a-file")
    _check_suffix(sheet_path)
    try:
        return sheet_path.read_bytes()
    except OSError as exc:
        raise SheetError(f"sheet {sheet_path} cannot be read: {exc.strerror}.", code="sheet-unreadable") from None

def parse_table(data: bytes, path: Path, worksheet: str | None = None) -> RawTable:
    """Parse table bytes into header and text cells (an XLSX file: ``worksheet``, or its first). Pure."""
    name = path.name
    _check_suffix(path)
    if not data or data.isspace():  # (no stripped copy of a large file)
        raise SheetError(
            f"sheet {name} is empty.",
            hint="export the coder's sheet again; it must have a header row and one row per comment.",
            code="sheet-empty",
        )
    suffix = path.suffix.lower()
    if suffix in XLSX_SUFFIXES:
        return _xlsx_table(data, name, worksheet)
    if suffix in JSONL_SUFFIXES:
        return _jsonl_table(_decode(data, name), name)
    return _delimited_table(data, TEXT_FORMATS[suffix], name)

def _check_suffix(path: Path) -> None:
    suffix = path.suffix.lower()
    if suffix not in (*TEXT_FORMATS, *JSONL_SUFFIXES, *XLSX_SUFFIXES):
        raise SheetError(
            f"sheet {path.name} has an unsupported file type {suffix or '(none)'!r}.",
            hint=f"save it as one of {SUPPORTED}.",
            code="sheet-unsupported-type",
        )

# --- decoding ------------------------------------------------------------------


def _decode(data: bytes, name: str) -> str:
    """UTF-8 (a BOM is dropped) or UTF-16 with its BOM; anything else is refused by name."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16").lstrip("\ufeff")
        except UnicodeDecodeError:
            raise _not_utf8(name, "it starts with a UTF-16 mark but is not valid UTF-16") from None
    if b"\x00" in data:
        first_nul = data.index(b"\x00")
        raise SheetError(
            f"sheet {name} contains NUL bytes (first at byte {first_nul}); "
            "it is a binary file or UTF-16 without a byte-order mark, not a text sheet.",
            hint="export the sheet again as CSV UTF-8.",
            code="sheet-binary",
        )
    try:
        return data.decode("utf-8").lstrip("\ufeff")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        guess = _legacy_encoding_guess(data)
        detail = f"byte {exc.start} (line {line}) is not UTF-8"
        if guess:
            detail += f"; it looks like {guess}"
        raise _not_utf8(name, detail) from None


def _legacy_encoding_guess(data: bytes) -> str | None:
    try:
        data.decode("cp1252")
    except UnicodeDecodeError:
        return None
    return "Windows-1252 (Latin-1), as Excel writes 'CSV' on Windows"


def _not_utf8(name: str, detail: str) -> SheetError:
    return SheetError(
        f"sheet {name} is not UTF-8 text: {detail}.",
        hint="re-save it as 'CSV UTF-8' (Excel) or with encoding UTF-8 (LibreOffice, Google Sheets).",
        code="sheet-encoding",
    )


# --- formats -----------------------------------------------------------------

Records = list[list[str]]


def _text_columns(records: Records, width: int) -> list[pa.Array]:
    return [pa.array([record[at] for record in records], type=pa.string()) for at in range(width)]


def _delimited_table(data: bytes, delimiter: str, name: str) -> RawTable:
    if not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        fast = _arrow_table(data[3:] if data.startswith(b"\xef\xbb\xbf") else data, delimiter)
        if fast is not None:
            return fast
    text = _decode(data, name)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    try:
        parsed = list(reader)
    except csv.Error as exc:
        raise SheetError(
            f"sheet {name} is not valid {'TSV' if delimiter == chr(9) else 'CSV'} near line {reader.line_num}: {exc}.",
            hint="open it in a spreadsheet and export it again.",
            code="sheet-malformed",
        ) from None
    if not parsed:
        raise SheetError(f"sheet {name} is empty.", code="sheet-empty")
    header, *body = parsed
    return _padded_table(header, body, np.arange(2, len(body) + 2), name)


def _arrow_table(utf8: bytes, delimiter: str) -> RawTable | None:
    """pyarrow's parser for plain UTF-8 files: no carriage returns or NUL bytes, a
    header first; a blank line is read as a row of empty cells, as the csv module
    reads it, so that record i is spreadsheet row i + 2. Anything else, or any
    doubt (invalid UTF-8, ragged rows): None, and the csv module reads the file
    and names the problem precisely."""
    if b"\r" in utf8 or utf8.startswith(b"\n") or b"\x00" in utf8:
        return None
    try:
        end = utf8.find(b"\n")
        first_line = utf8[: end if end >= 0 else len(utf8)].decode("utf-8")
    except UnicodeDecodeError:
        return None
    header_line = next(csv.reader(io.StringIO(first_line), delimiter=delimiter), None)
    if not header_line or '"' in first_line:
        return None
    names = [str(position) for position in range(len(header_line))]
    try:
        table = pacsv.read_csv(
            pa.BufferReader(utf8),  # reads the bytes in place, no copy
            # one block, parsed on this thread: one chunk per column, no copy to combine them
            # (sheets are read two at a time, so both cores still parse)
            read_options=pacsv.ReadOptions(column_names=names, skip_rows=1, use_threads=False,
                                           block_size=max(1 << 20, min(len(utf8) + 1, (1 << 31) - 1))),
            # values can hold newlines only inside quotes; without quotes the parser may split blocks freely
            parse_options=pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=b'"' in utf8,
                                             ignore_empty_lines=False),
            convert_options=pacsv.ConvertOptions(
                column_types=dict.fromkeys(names, pa.string()),
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
                null_values=[],
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowException):
        return None
    cells = [_one_array(table.column(name)) for name in names]
    return RawTable(header=header_line, cells=cells, rows=np.arange(2, table.num_rows + 2, dtype=ROW_TYPE))


def _one_array(column: pa.ChunkedArray) -> pa.Array:
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def _padded_table(header: list[str], body: Records, rows: np.ndarray, name: str) -> RawTable:
    """Short rows are padded (spreadsheets drop trailing empty cells); a row with
    non-empty cells beyond the header cannot be read safely and is refused."""
    width = len(header)
    padded: Records = []
    for row_number, record in zip(rows, body):
        if len(record) > width and any(cell.strip() for cell in record[width:]):
            raise SheetError(
                f"sheet {name} row {row_number} has {len(record)} cells but the header has {width}.",
                hint="a value probably contains an unquoted delimiter; quote it or fix the row.",
                code="sheet-ragged",
            )
        padded.append((record + [""] * width)[:width])
    return RawTable(header=header, cells=_text_columns(padded, width), rows=np.asarray(rows, dtype=ROW_TYPE))


def _jsonl_table(text: str, name: str) -> RawTable:
    objects: list[dict[str, Any]] = []
    lines: list[int] = []
    header: dict[str, None] = {}
    # split on "\n" only: str.splitlines() would also split inside a JSON string at U+2028
    for line_number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SheetError(
                f"sheet {name} line {line_number} is not valid JSON: {exc.msg}.",
                hint="JSON Lines has one JSON object per line.",
                code="sheet-malformed",
            ) from None
        if not isinstance(item, dict):
            raise SheetError(
                f"sheet {name} line {line_number} is a JSON {type(item).__name__}, not an object.",
                hint='write one object per line, e.g. {"comment_id": "c1", "code": "yes"}.',
                code="sheet-malformed",
            )
        header.update(dict.fromkeys(item))
        objects.append(item)
        lines.append(line_number)
    columns = list(header)
    records = [[_json_text(item.get(key)) for key in columns] for item in objects]
    return RawTable(header=columns, cells=_text_columns(records, len(columns)), rows=np.asarray(lines, dtype=ROW_TYPE))


def _json_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _xlsx_table(data: bytes, name: str, worksheet_name: str | None) -> RawTable:
    from openpyxl import load_workbook  # heavy: import only when an XLSX sheet is read

    try:
        # data_only: a formula cell gives the value the spreadsheet cached; no formula is evaluated.
        workbook = load_workbook(io.BytesIO(data), data_only=True)
    except (zipfile.BadZipFile, KeyError, ValueError, OSError, TypeError) as exc:
        raise SheetError(
            f"sheet {name} is not a readable XLSX workbook ({type(exc).__name__}).",
            hint="open it in a spreadsheet and save it again as .xlsx, or export CSV UTF-8.",
            code="sheet-malformed",
        ) from None
    try:
        worksheet, warnings = _choose_worksheet(workbook, name, worksheet_name)
        values = list(worksheet.iter_rows(values_only=True))
        warnings += _worksheet_warnings(worksheet)
    finally:
        workbook.close()
    if not values:
        raise SheetError(f"sheet {name} has an empty worksheet {worksheet.title!r}.", code="sheet-empty")
    header = [_xlsx_text(value) for value in values[0]]
    body = [[_xlsx_text(value) for value in row] for row in values[1:]]
    table = _padded_table(header, body, np.arange(2, len(body) + 2), name)
    numeric: dict[int, list[int]] = {}
    for row_number, row in enumerate(values[1:], start=2):
        for column, value in enumerate(row):
            if isinstance(value, (int, float, dt.date, dt.time)) and not isinstance(value, bool):
                numeric.setdefault(column, []).append(row_number)
    titles = tuple(sheet.title for sheet in workbook.worksheets)
    return RawTable(table.header, table.cells, table.rows, tuple(warnings), numeric, titles if len(titles) > 1 else ())


def _choose_worksheet(workbook: Any, name: str, wanted: str | None) -> tuple[Any, list[str]]:
    titles = [sheet.title for sheet in workbook.worksheets]
    if wanted is not None:
        if wanted not in titles:
            raise SheetError(
                f"sheet {name} has no worksheet {wanted!r}. Worksheets: {', '.join(titles)}.",
                hint="pass --worksheet with one of those names.",
                code="sheet-no-worksheet",
            )
        return workbook[wanted], []
    warnings = []
    if len(titles) > 1:
        warnings.append(
            f"the workbook has {len(titles)} worksheets ({', '.join(titles)}); read the first, {titles[0]!r}. "
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
