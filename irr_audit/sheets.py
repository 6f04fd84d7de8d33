"""The only place that reads coding sheets. Every cell is read as text.

A sheet is CSV, TSV, XLSX or JSON Lines with one row per comment (CONTRACT.md,
"Coding sheets"). Nothing is converted: "007" stays "007", "NA" stays "NA", and
the row number kept with each row is the one a spreadsheet shows (header = row 1).

Large, plain CSV files are parsed by pyarrow; anything unusual (blank lines,
carriage returns, ragged rows) goes through Python's csv module, which gives
exact row numbers and precise error messages.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import json
import re
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from irr_audit import prefetch
from irr_audit.arrowtext import from_numpy, may_have_edge_space
from irr_audit.errors import SheetError

TEXT_FORMATS = {".csv": ",", ".tsv": "\t", ".tab": "\t"}
JSONL_SUFFIXES = (".jsonl", ".ndjson")
XLSX_SUFFIXES = (".xlsx", ".xlsm")
SUPPORTED = ", ".join((*TEXT_FORMATS, *JSONL_SUFFIXES, *XLSX_SUFFIXES))
VERSION_PATTERN = re.compile(r"[vV]?\s*(\d+)")
TEXT_COLUMNS = ("body", "text")  # the comment's text, shown beside disagreements when a sheet has it
ROW_TYPE = np.int32  # spreadsheet row numbers: a sheet holds at most a few million rows
csv.field_size_limit(2**31 - 1)  # a 10 MB comment body is a cell, not an attack


@dataclass(frozen=True)
class SheetOptions:
    """How to read sheets: which columns hold the id and the code, which worksheet."""

    id_column: str | None = None
    code_column: str | None = None
    worksheet: str | None = None


ColumnChoice = SheetOptions  # the name used before worksheets could be chosen


@dataclass(frozen=True)
class Sheet:
    """One coder's sheet, read.

    One entry per non-empty input row, column by column: ``rows`` (the number a
    spreadsheet shows, header = row 1), and as text exactly as typed
    ``comment_ids``, ``codes``, ``rule_versions`` and ``texts`` (the comment's
    body; the last two None when the sheet has no such column). Text columns are pyarrow string
    arrays: a million rows stay compact and fast. Rows with every cell empty are
    only counted, in ``empty_rows``. ``warnings`` are things a reader should know
    that are not errors (a hidden row, several worksheets).
    """

    path: Path
    name: str
    coder: str
    sha256: str
    size: int
    columns: tuple[str, ...]
    rows: np.ndarray
    comment_ids: pa.Array
    codes: pa.Array
    rule_versions: pa.Array | None  # None: the sheet has no rule_version column
    texts: pa.Array | None  # None: the sheet has no body or text column
    empty_rows: int
    warnings: tuple[str, ...] = ()
    unit_keys: pa.Array | None = None  # the ids as matched: surrounding whitespace trimmed

    @property
    def row_count(self) -> int:
        return len(self.rows)


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


def read_sheet(path: str | Path, options: SheetOptions = SheetOptions()) -> Sheet:
    """Read one coding sheet from disk (or take it from the command line's prefetch)."""
    sheet_path = Path(path)
    return _sheet_from_table(_prefetched_or_read(sheet_path, options), sheet_path, options)


def _prefetched_or_read(path: Path, options: SheetOptions) -> ParsedFile:
    return prefetch.take(path) or read_and_parse(path, options)


def read_and_parse(path: Path, options: SheetOptions = SheetOptions()) -> ParsedFile:
    """Read a table file from disk and parse it (on any thread: nothing here is shared)."""
    return parse_file(_read_bytes(path), path, options)


def parse_file(data: bytes, path: Path, options: SheetOptions = SheetOptions()) -> ParsedFile:
    """Parse table bytes and fingerprint them. Pure."""
    return ParsedFile(parse_table(data, path, options), hashlib.sha256(data).hexdigest(), len(data))


def read_sheets(paths: list[Path], options: SheetOptions = SheetOptions()) -> list[Sheet]:
    """Read several sheets, two at a time: each large CSV is parsed on one thread, so
    two keep both cores busy. The first sheet (in order) that cannot be read raises."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(lambda path: read_sheet(path, options), paths))


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


def read_table(path: str | Path, options: SheetOptions = SheetOptions()) -> RawTable:
    """Read any table irr-audit takes (a counts file, say) with the sheets' checks: every cell as text."""
    return _prefetched_or_read(Path(path), options).table


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


def parse_sheet(data: bytes, path: Path, options: SheetOptions = SheetOptions()) -> Sheet:
    """Parse sheet bytes. Pure: ``path`` names the sheet and picks its format."""
    return _sheet_from_table(parse_file(data, path, options), path, options)


def parse_table(data: bytes, path: Path, options: SheetOptions = SheetOptions()) -> RawTable:
    """Parse table bytes into header and text cells. Pure."""
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
        return _xlsx_table(data, name, options.worksheet)
    if suffix in JSONL_SUFFIXES:
        return _jsonl_table(_decode(data, name), name)
    return _delimited_table(data, TEXT_FORMATS[suffix], name)


def parse_rule_version(text: str) -> int | None:
    """`1`, `v1` or `V1` -> 1; blank -> None; anything else -> ValueError."""
    if not text.strip():
        return None
    match = VERSION_PATTERN.fullmatch(text.strip())
    if not match:
        raise ValueError(text)
    return int(match.group(1))


def _check_suffix(path: Path) -> None:
    suffix = path.suffix.lower()
    if suffix not in (*TEXT_FORMATS, *JSONL_SUFFIXES, *XLSX_SUFFIXES):
        raise SheetError(
            f"sheet {path.name} has an unsupported file type {suffix or '(none)'!r}.",
            hint=f"save it as one of {SUPPORTED}.",
            code="sheet-unsupported-type",
        )


def _sheet_from_table(parsed: ParsedFile, path: Path, options: SheetOptions) -> Sheet:
    name = path.name
    table = parsed.table
    header = table.header
    try:
        id_at = _find_column(header, options.id_column or "comment_id", "--id-column", name)
        code_at = _find_column(header, options.code_column or "code", "--code-column", name)
    except SheetError as error:
        if table.worksheets and not options.worksheet:
            error.hint = (
                f"the workbook has worksheets {', '.join(map(repr, table.worksheets))} and the first was read; "
                "choose one with --worksheet NAME."
            )
        raise
    version_at = _optional_column(header, "rule_version")
    coder_at = _optional_column(header, "coder")
    text_at = next((at for at in (_optional_column(header, column) for column in TEXT_COLUMNS) if at is not None),
                   None)
    ids = table.cells[id_at]
    keys = pc.utf8_trim_whitespace(ids) if may_have_edge_space(ids) else ids
    non_empty = _non_empty_rows(table.cells, keys, code_at)
    if not non_empty.any():
        raise SheetError(
            f"sheet {name} has a header but no coded rows.",
            hint="check that this is the filled sheet, not the blank template.",
            code="sheet-empty",
        )
    if non_empty.all():
        kept, rows = table.cells, table.rows
    else:
        keep = from_numpy(np.flatnonzero(non_empty))
        kept, rows = [column.take(keep) for column in table.cells], table.rows[non_empty]
        keys = kept[id_at] if keys is ids else keys.take(keep)  # one copy when nothing was trimmed
    coder = _coder(kept[coder_at], rows, path) if coder_at is not None else path.stem
    warnings = list(table.warnings)
    numeric_ids = (table.numeric_cells or {}).get(id_at, [])
    if numeric_ids:
        warnings.append(
            f"{len(numeric_ids)} comment ids are stored as numbers or dates, not text (rows "
            f"{', '.join(map(str, numeric_ids[:5]))}{' ...' if len(numeric_ids) > 5 else ''}); "
            "leading zeros and long digits may have been lost. Format the id column as text."
        )
    return Sheet(
        path=path,
        name=name,
        coder=coder,
        sha256=parsed.sha256,
        size=parsed.size,
        columns=tuple(header),
        rows=rows,
        comment_ids=kept[id_at],
        codes=kept[code_at],
        rule_versions=kept[version_at] if version_at is not None else None,
        texts=kept[text_at] if text_at is not None else None,
        empty_rows=int((~non_empty).sum()),
        warnings=tuple(warnings),
        unit_keys=keys,
    )


def _non_empty_rows(cells: list[pa.Array], keys: pa.Array, code_at: int) -> np.ndarray:
    """Rows with any non-blank cell. The id and code columns decide most rows; the
    others (long comment bodies, say) are looked at only for rows those leave blank."""
    filled = (pc.binary_length(keys).to_numpy() > 0) | _filled(cells[code_at])
    rest = np.flatnonzero(~filled)
    if len(rest):
        undecided = from_numpy(rest)
        for column in cells:
            filled[rest] |= _filled(column.take(undecided))
    return filled


def _filled(column: pa.Array) -> np.ndarray:
    """Values with a character other than whitespace (utf8_is_space is false for the empty string)."""
    return (pc.binary_length(column).to_numpy() > 0) & ~pc.utf8_is_space(column).to_numpy(zero_copy_only=False)


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
            hint=f"pass {option} NAME, or rename the column (if the first row is data, add a header row "
            "comment_id,code).",
            code="sheet-missing-column",
        )
    return matches[0]


def _optional_column(header: list[str], wanted: str) -> int | None:
    matches = [i for i, column in enumerate(header) if _column_key(column) == wanted]
    return matches[0] if matches else None


def _coder(names: pa.Array, rows: np.ndarray, path: Path) -> str:
    """The sheet's coder column when it names one coder, else the file name stem."""
    stripped = pc.utf8_trim_whitespace(names)
    named = [name for name in pc.unique(stripped).to_pylist() if name]
    if len(named) > 1:
        first, second = named[:2]
        values = stripped.to_numpy(zero_copy_only=False)
        first_row, second_row = rows[values == first][0], rows[values == second][0]
        raise SheetError(
            f"sheet {path.name} names more than one coder in its coder column: "
            f"{first!r} (row {first_row}) and {second!r} (row {second_row}).",
            hint="give each coder a sheet of their own.",
            code="sheet-several-coders",
        )
    return named[0] if named else path.stem
