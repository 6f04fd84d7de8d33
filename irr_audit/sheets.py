"""The only place that reads coding sheets. Every cell is read as text.

A sheet is CSV, TSV, XLSX or JSON Lines with one row per comment (CONTRACT.md,
"Coding sheets"). Nothing is converted: "007" stays "007", "NA" stays "NA", and
the row number kept with each row is the one a spreadsheet shows (header = row 1).
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import json
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from irr_audit.errors import SheetError

TEXT_FORMATS = {".csv": ",", ".tsv": "\t", ".tab": "\t"}
JSONL_SUFFIXES = (".jsonl", ".ndjson")
XLSX_SUFFIXES = (".xlsx", ".xlsm")
SUPPORTED = ", ".join((*TEXT_FORMATS, *JSONL_SUFFIXES, *XLSX_SUFFIXES))
VERSION_PATTERN = re.compile(r"[vV]?\s*(\d+)")
csv.field_size_limit(2**31 - 1)  # a 10 MB comment body is a cell, not an attack


@dataclass(frozen=True)
class Sheet:
    """One coder's sheet, read, column by column: entry i of ``rows``,
    ``comment_ids``, ``codes`` and ``rule_versions`` is one non-empty input row,
    with ``rows`` the number a spreadsheet shows for it. Rows with every cell
    empty are only counted, in ``empty_rows``."""

    path: Path
    name: str
    coder: str
    sha256: str
    size: int
    columns: tuple[str, ...]
    rows: tuple[int, ...]
    comment_ids: tuple[str, ...]
    codes: tuple[str, ...]
    rule_versions: tuple[str, ...]
    empty_rows: int


@dataclass(frozen=True)
class ColumnChoice:
    id_column: str | None = None
    code_column: str | None = None


def read_sheet(path: str | Path, columns: ColumnChoice = ColumnChoice()) -> Sheet:
    """Read one coding sheet from disk."""
    sheet_path = Path(path)
    if not sheet_path.exists():
        raise SheetError(
            f"sheet {sheet_path} does not exist.",
            hint="check the path; sheets are CSV, TSV, XLSX or JSON Lines files.",
            code="sheet-not-found",
        )
    if not sheet_path.is_file():
        raise SheetError(f"sheet {sheet_path} is not a file.", code="sheet-not-a-file")
    suffix = sheet_path.suffix.lower()
    if suffix not in (*TEXT_FORMATS, *JSONL_SUFFIXES, *XLSX_SUFFIXES):
        raise SheetError(
            f"sheet {sheet_path.name} has an unsupported file type {suffix or '(none)'!r}.",
            hint=f"save it as one of {SUPPORTED}.",
            code="sheet-unsupported-type",
        )
    try:
        data = sheet_path.read_bytes()
    except OSError as exc:
        raise SheetError(
            f"sheet {sheet_path} cannot be read: {exc.strerror}.", code="sheet-unreadable"
        ) from None
    return parse_sheet(data, sheet_path, columns)


def parse_sheet(data: bytes, path: Path, columns: ColumnChoice = ColumnChoice()) -> Sheet:
    """Parse sheet bytes. Pure: ``path`` names the sheet and picks its format."""
    name = path.name
    if not data.strip():
        raise SheetError(
            f"sheet {name} is empty.",
            hint="export the coder's sheet again; it must have a header row and one row per comment.",
            code="sheet-empty",
        )
    suffix = path.suffix.lower()
    if suffix in XLSX_SUFFIXES:
        table = _xlsx_rows(data, name)
    elif suffix in JSONL_SUFFIXES:
        table = _jsonl_rows(_decode(data, name), name)
    else:
        table = _delimited_rows(_decode(data, name), TEXT_FORMATS[suffix], name)
    header, records = table
    id_at = _find_column(header, columns.id_column or "comment_id", "--id-column", name)
    code_at = _find_column(header, columns.code_column or "code", "--code-column", name)
    version_at = _optional_column(header, "rule_version")
    coder_at = _optional_column(header, "coder")
    kept = [(number, record) for number, record in records if any(cell.strip() for cell in record)]
    if not kept:
        raise SheetError(
            f"sheet {name} has a header but no coded rows.",
            hint="check that this is the filled sheet, not the blank template.",
            code="sheet-empty",
        )
    return Sheet(
        path=path,
        name=name,
        coder=_coder(kept, coder_at, path),
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        columns=tuple(header),
        rows=tuple(number for number, _ in kept),
        comment_ids=tuple(_column(kept, id_at)),
        codes=tuple(_column(kept, code_at)),
        rule_versions=tuple(_column(kept, version_at)),
        empty_rows=len(records) - len(kept),
    )


def parse_rule_version(text: str) -> int | None:
    """`1`, `v1` or `V1` -> 1; blank -> None; anything else -> ValueError."""
    if not text.strip():
        return None
    match = VERSION_PATTERN.fullmatch(text.strip())
    if not match:
        raise ValueError(text)
    return int(match.group(1))


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

Records = list[tuple[int, list[str]]]


def _delimited_rows(text: str, delimiter: str, name: str) -> tuple[list[str], Records]:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    try:
        parsed = list(reader)
    except csv.Error as exc:
        raise SheetError(
            f"sheet {name} is not valid {'TSV' if delimiter == chr(9) else 'CSV'} "
            f"near line {reader.line_num}: {exc}.",
            hint="open it in a spreadsheet and export it again.",
            code="sheet-malformed",
        ) from None
    if not parsed:
        raise SheetError(f"sheet {name} is empty.", code="sheet-empty")
    header, *body = parsed
    return _check_width(header, [(index + 2, record) for index, record in enumerate(body)], name)


def _check_width(header: list[str], records: Records, name: str) -> tuple[list[str], Records]:
    """Short rows are padded (spreadsheets drop trailing empty cells); a row with
    non-empty cells beyond the header cannot be read safely and is refused."""
    width = len(header)
    checked: Records = []
    for row_number, record in records:
        if len(record) > width and any(cell.strip() for cell in record[width:]):
            raise SheetError(
                f"sheet {name} row {row_number} has {len(record)} cells but the header has {width}.",
                hint="a value probably contains an unquoted delimiter; quote it or fix the row.",
                code="sheet-ragged",
            )
        checked.append((row_number, (record + [""] * width)[:width]))
    return header, checked


def _jsonl_rows(text: str, name: str) -> tuple[list[str], Records]:
    objects: list[tuple[int, dict[str, Any]]] = []
    header: dict[str, None] = {}
    for line_number, line in enumerate(text.splitlines(), start=1):
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
        objects.append((line_number, item))
    columns = list(header)
    records = [(line, [_json_text(item.get(key)) for key in columns]) for line, item in objects]
    return columns, records


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


def _xlsx_rows(data: bytes, name: str) -> tuple[list[str], Records]:
    from openpyxl import load_workbook  # heavy: import only when an XLSX sheet is read

    try:
        # data_only: a formula cell gives the value Excel cached; no formula is evaluated.
        workbook = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except (zipfile.BadZipFile, KeyError, ValueError, OSError) as exc:
        raise SheetError(
            f"sheet {name} is not a readable XLSX workbook ({type(exc).__name__}).",
            hint="open it in a spreadsheet and save it again as .xlsx, or export CSV UTF-8.",
            code="sheet-malformed",
        ) from None
    try:
        worksheet = workbook.worksheets[0]
        rows = [
            (row_number, [_xlsx_text(value) for value in values])
            for row_number, values in enumerate(worksheet.iter_rows(values_only=True), start=1)
        ]
    finally:
        workbook.close()
    if not rows:
        raise SheetError(f"sheet {name} has an empty first worksheet.", code="sheet-empty")
    (_, header), *body = rows
    return _check_width(header, body, name)


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


# --- columns -----------------------------------------------------------------


def _column_key(text: str) -> str:
    return text.strip().casefold()


def _find_column(header: list[str], wanted: str, option: str, name: str) -> int:
    matches = [i for i, column in enumerate(header) if _column_key(column) == _column_key(wanted)]
    if len(matches) > 1:
        raise SheetError(
            f"sheet {name} has {len(matches)} columns named {wanted!r}.",
            hint="rename or delete the extra columns so the sheet has one.",
            code="sheet-duplicate-column",
        )
    if not matches:
        found = ", ".join(column for column in header if column.strip()) or "(none)"
        raise SheetError(
            f'sheet {name} has no column "{wanted}".\n  Columns found: {found}',
            hint=f"pass {option} NAME, or rename the column.",
            code="sheet-missing-column",
        )
    return matches[0]


def _optional_column(header: list[str], wanted: str) -> int | None:
    matches = [i for i, column in enumerate(header) if _column_key(column) == wanted]
    return matches[0] if matches else None


def _column(records: Records, index: int | None) -> list[str]:
    if index is None:
        return [""] * len(records)
    return [record[index] for _, record in records]


def _coder(records: Records, coder_at: int | None, path: Path) -> str:
    """The sheet's coder column when it names one coder, else the file name stem."""
    if coder_at is None:
        return path.stem
    named: dict[str, int] = {}
    for number, record in records:
        name = record[coder_at].strip()
        if name and name not in named:
            named[name] = number
    if len(named) > 1:
        (first, first_row), (second, second_row) = list(named.items())[:2]
        raise SheetError(
            f"sheet {path.name} names more than one coder in its coder column: "
            f"{first!r} (row {first_row}) and {second!r} (row {second_row}).",
            hint="give each coder a sheet of their own.",
            code="sheet-several-coders",
        )
    return next(iter(named), path.stem)
