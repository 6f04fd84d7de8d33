"""Table files read as text: CSV, TSV, XLSX or JSON Lines, every cell a string.

Nothing is converted: "007" stays "007", "NA" stays "NA", and the row number kept
with each record is the one a spreadsheet shows (header = row 1). CSV and TSV files
are parsed by pyarrow, whatever their line ends, byte-order mark or quoting; a file
pyarrow could read otherwise than Python's csv module (a quote left open, a ragged
row, invalid UTF-8) goes through the csv module, which gives exact row numbers and
precise error messages. XLSX workbooks are read by irr_audit.io.xlsx.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from irr_audit.errors import SheetError, UsageError
from irr_audit.io.csvfields import first_csv_row, long_fields
from irr_audit.io.delimiter import SAMPLE_BYTES, detect_delimiter, shown, suspected
from irr_audit.io.display import printable
from irr_audit.io.encodings import unread_mark, utf32_mark
from irr_audit.io.files import check_name, file_identity, read_bounded
from irr_audit.io.limits import (
    DEFAULT_LIMITS,
    Limits,
    RepeatedKey,
    json_lines,
    limit_error,
    load_json_line,
    number_check_lines,
    repeated_key_sentence,
)
from irr_audit.io.xlsx import read_worksheet

TEXT_FORMATS = {".csv": ",", ".tsv": "\t", ".tab": "\t"}
JSONL_SUFFIXES = (".jsonl", ".ndjson")
XLSX_SUFFIXES = (".xlsx", ".xlsm")
SUPPORTED = ", ".join((*TEXT_FORMATS, *JSONL_SUFFIXES, *XLSX_SUFFIXES))
ROW_TYPE = np.int32  # spreadsheet row numbers: a sheet holds at most a few million rows


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
    unsaved_formulas: dict[int, list[tuple[int, str]]] | None = None  # XLSX: column -> (row, formula) without a value
    spanning: SpanningValues | None = None  # CSV/TSV: the values that run over several lines, if any


@dataclass(frozen=True)
class SpanningValues:
    """The values of a CSV or TSV file that hold a line break: quoted values over
    several lines. One entry per value, in file order: the record (0 = the first
    after the header), the header position, and the file lines the value starts and
    ends on (where its quote opened and closed). Whether such a value is text with a
    newline or a quote left open that swallowed rows depends on its column, which
    the reader of the sheet decides (irr_audit.io.sheets)."""

    records: np.ndarray
    columns: np.ndarray
    first_lines: np.ndarray
    last_lines: np.ndarray
    delimiter: str


@dataclass(frozen=True)
class ParsedFile:
    """A table file parsed, and the fingerprint of its bytes (which are not kept)."""

    table: RawTable
    sha256: str
    size: int
    file_key: tuple[int, int] | None = None  # the file read (io.files.file_identity); None: no file


def refuse_options_no_sheet_reads(paths: Sequence[Path], worksheet: str | None, delimiter: str | None) -> None:
    """A worksheet chooses a tab of an XLSX workbook, a delimiter splits the lines of a text sheet (.csv,
    .tsv): given when no sheet is of that kind, either would be passed over silently and seem applied.
    Among sheets of both kinds each applies to its own."""
    workbooks = [path.suffix.lower() in XLSX_SUFFIXES for path in paths]
    if worksheet is not None and paths and not any(workbooks):
        raise UsageError(
            "worksheet chooses a worksheet of an XLSX sheet; every sheet given is a text file, which has none.",
            hint="leave out worksheet (--worksheet).",
            code="data-form",
        )
    split = [path.suffix.lower() not in (*XLSX_SUFFIXES, *JSONL_SUFFIXES) for path in paths]
    if delimiter is not None and paths and not any(split):
        raise UsageError(
            "delimiter splits the lines of a .csv sheet; every sheet given is an XLSX workbook or a JSONL file, "
            "which has no lines to split.",
            hint="leave out delimiter (--delimiter).",
            code="data-form",
        )


def read_and_parse(
    path: Path,
    worksheet: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
    delimiter: str | None = None,
    *,
    threads: int = 1,
) -> ParsedFile:
    """Read a table file from disk and parse it (on any thread: nothing here is shared).
    ``delimiter``: a `.csv` file's, or None to detect it (irr_audit.io.delimiter). ``threads``:
    how many threads may parse a CSV file (the same table whatever the number)."""
    data = read_table_bytes(path, limits)  # its type and size are checked before it is read
    parsed = _parsed_table(data, path, worksheet, limits, delimiter, threads)
    return ParsedFile(parsed, hashlib.sha256(data).hexdigest(), len(data), file_identity(path))


def parse_file(
    data: bytes,
    path: Path,
    worksheet: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
    delimiter: str | None = None,
    *,
    threads: int = 1,
) -> ParsedFile:
    """Parse table bytes (a CSV file on ``threads`` threads) and fingerprint them. Pure."""
    parsed = parse_table(data, path, worksheet, limits, delimiter, threads=threads)
    return ParsedFile(parsed, hashlib.sha256(data).hexdigest(), len(data))


def read_table_bytes(sheet_path: Path, limits: Limits = DEFAULT_LIMITS) -> bytes:
    """A table file's bytes, read once within the limits (parse them with ``parse_file``)."""
    check_name(sheet_path, "sheet")
    _check_suffix(sheet_path)
    return read_bounded(sheet_path, f"sheet {sheet_path}", limits, code="sheet")


def parse_table(
    data: bytes,
    path: Path,
    worksheet: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
    delimiter: str | None = None,
    *,
    threads: int = 1,
) -> RawTable:
    """Parse table bytes into header and text cells (an XLSX file: ``worksheet``, or its first;
    a `.csv` file: split on ``delimiter``, or on the one detected; on ``threads`` threads). Pure."""
    _check_suffix(path)
    if len(data) > limits.file_bytes:
        raise limit_error("file_bytes", limits, f"sheet {path.name}", f"is {len(data):,} bytes")
    return _parsed_table(data, path, worksheet, limits, delimiter, threads)


def _parsed_table(
    data: bytes, path: Path, worksheet: str | None, limits: Limits, delimiter: str | None = None, threads: int = 1
) -> RawTable:
    """``parse_table`` once the file's type and size are known to be right."""
    name = path.name
    if not data or data.isspace():  # (no stripped copy of a large file)
        raise SheetError(
            f"sheet {name} is empty.",
            hint="export the coder's sheet again; it must have a header row and one row per comment.",
            code="sheet-empty",
        )
    suffix = path.suffix.lower()
    if suffix in XLSX_SUFFIXES:
        return _xlsx_table(data, name, worksheet, limits)
    _refuse_utf32(data, name)  # before the delimiter is looked for in text decoded as UTF-16
    if suffix in JSONL_SUFFIXES:
        return _jsonl_table(_decode(data, name), name, limits)
    if delimiter is None:
        delimiter = detect_delimiter(_head_text(data), f"sheet {name}") if suffix == ".csv" else TEXT_FORMATS[suffix]
    return _delimited_table(data, delimiter, name, limits, threads)


def _head_text(data: bytes) -> str:
    """The start of a text file as text, for detecting its delimiter (UTF-16 with its BOM too;
    any other undecodable byte is left for the reader to name)."""
    head = data[:SAMPLE_BYTES]
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return head[: len(head) // 2 * 2].decode("utf-16", errors="replace")
    return head.decode("utf-8", errors="replace")


def _xlsx_table(data: bytes, name: str, worksheet: str | None, limits: Limits) -> RawTable:
    sheet = read_worksheet(data, name, worksheet, limits)
    table = _padded_table(sheet.header, sheet.body, np.arange(2, len(sheet.body) + 2), name)
    return RawTable(
        table.header,
        table.cells,
        table.rows,
        sheet.warnings,
        sheet.numeric_cells,
        sheet.worksheets,
        unsaved_formulas=sheet.unsaved_formulas,
    )


def refuse_unsaved_formulas(table: RawTable, name: str, columns: Mapping[int, str] | None = None) -> None:
    """A workbook's formula saved without its value reads as blank: in a column its reader reads
    (``columns``: position -> name; every column when None), that would take for missing a value
    the coder did enter, so the file is refused, naming the cells."""
    for at, found in sorted((table.unsaved_formulas or {}).items()):
        if columns is not None and at not in columns:
            continue
        column = columns[at] if columns is not None else table.header[at]
        cells = ", ".join(f"row {row}: {printable(formula, 40)}" for row, formula in found[:3])
        more = f" and {len(found) - 3} more" if len(found) > 3 else ""
        raise SheetError(
            f"sheet {name}: {len(found)} cells of column '{printable(column, 80)}' hold a formula whose value "
            f"was never saved ({cells}{more}). irr-audit reads the values a spreadsheet saved with the "
            "workbook and evaluates no formula, so they would read as blank.",
            hint="open the workbook in a spreadsheet program and save it again (that saves each formula's "
            "value), or type the values in place of the formulas.",
            code="sheet-formula-unsaved",
        )


def _check_suffix(path: Path) -> None:
    suffix = path.suffix.lower()
    if suffix not in (*TEXT_FORMATS, *JSONL_SUFFIXES, *XLSX_SUFFIXES):
        raise SheetError(
            f"sheet {path.name} has an unsupported file type {suffix or '(none)'!r}.",
            hint=f"save it as one of {SUPPORTED}.",
            code="sheet-unsupported-type",
        )


# --- decoding ------------------------------------------------------------------


def _refuse_utf32(data: bytes, name: str) -> None:
    encoding = utf32_mark(data)
    if encoding is not None:
        raise _not_utf8(name, unread_mark(encoding))


def _decode(data: bytes, name: str) -> str:
    """UTF-8 (a BOM is dropped) or UTF-16 with its BOM; anything else is refused by name."""
    _refuse_utf32(data, name)
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


def _check_columns(count: int, name: str, what: str, limits: Limits) -> None:
    if count > limits.columns:
        raise limit_error(
            "columns",
            limits,
            f"sheet {name}",
            f"has {count:,} {what}",
            why="A coding sheet has a comment id, a code and a few more columns.",
        )


def _delimited_table(
    data: bytes, delimiter: str, name: str, limits: Limits = DEFAULT_LIMITS, threads: int = 1
) -> RawTable:
    first_line = data[: _first_line_end(np.frombuffer(data, dtype=np.uint8))]  # a line ends at LF or CR
    _check_columns(first_line.count(delimiter.encode()) + 1, name, "columns in its first line", limits)
    if not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        fast = _arrow_table(data, delimiter, name, threads)
        if fast is not None:
            return fast
    return _csv_module_table(data, delimiter, name)


def _csv_module_table(data: bytes, delimiter: str, name: str) -> RawTable:
    """The exact reader: the csv module (strict), which names every problem precisely."""
    text = _decode(data, name)
    try:
        records = csv_records(text, delimiter)
    except CsvBroken as broken:
        if broken.opened is not None:
            raise _unclosed_quote_error(name, broken.opened, broken.last_line) from None
        raise SheetError(
            f"sheet {name} is not valid {'TSV' if delimiter == chr(9) else 'CSV'} near line {broken.line}: "
            f"{broken.reason}.",
            hint="open it in a spreadsheet and export it again.",
            code="sheet-malformed",
        ) from None
    parsed: Records = [record for _, _, record in records]
    spans: list[tuple[int, int, int, int]] = []  # record, column, first line, last line
    for index, (first, last, record) in enumerate(records[1:]):  # the header is not a record
        if last > first:
            spans += _record_spans(index, record, first)
    if not parsed:
        raise SheetError(
            f"sheet {name} is empty.",
            hint="export the coder's sheet again; it must have a header row and one row per comment.",
            code="sheet-empty",
        )
    header, *body = parsed
    table = _padded_table(header, body, np.arange(2, len(body) + 2), name, delimiter)
    return dataclasses.replace(table, spanning=_spanning(spans, delimiter)) if spans else table


def _arrow_table(data: bytes, delimiter: str, name: str = "sheet", threads: int = 1) -> RawTable | None:
    """pyarrow's parser for UTF-8 files (with or without a BOM), giving what the csv module
    gives: line ends LF, CRLF or CR; quoted values, quoted header names and quoted line
    breaks or delimiters; a blank line read as a row of empty cells, so that record i is
    spreadsheet row i + 2. Only a file pyarrow could read otherwise than the csv module
    gets None, and the csv module reads it and names any problem precisely: NUL bytes,
    invalid UTF-8, ragged rows, a blank first line, a quote left open (pyarrow would run
    it to the end of the file) or any quote that neither opens a value, closes one nor is
    doubled inside one (``_quotes_as_written``), unless ``_lenient_arrow_table`` reads it.

    The values that hold a line break are found from the text buffers without a pass over
    every value."""
    buffer = np.frombuffer(data, dtype=np.uint8)
    start = _bom_length(data)
    buffer = buffer[start:]
    if not len(buffer) or buffer[0] in (LF, CR) or b"\x00" in data:
        return None
    quoted = b'"' in data
    header_end = _quotes_as_written(buffer, ord(delimiter)) if quoted else _first_line_end(buffer)
    if header_end is None:
        return _lenient_arrow_table(data[start:], delimiter, name, threads)
    try:
        header_text = bytes(buffer[:header_end]).decode("utf-8")
        header_line = first_csv_row(header_text, delimiter=delimiter, strict=True)
    except (UnicodeDecodeError, csv.Error):
        return None
    if not header_line:
        return None
    names = [str(position) for position in range(len(header_line))]
    body = pa.py_buffer(data).slice(start + _after_line_end(buffer, header_end))
    try:
        table = _arrow_read(body, names, delimiter, quoted, threads)
    except (pa.ArrowInvalid, pa.ArrowException):
        return None
    cells = [_one_array(table.column(name)) for name in names]
    spanning = _arrow_spanning(cells, delimiter, count_line_breaks(header_text)) if quoted and table.num_rows else None
    return RawTable(
        header=header_line, cells=cells, rows=np.arange(2, table.num_rows + 2, dtype=ROW_TYPE), spanning=spanning
    )


def _lenient_arrow_table(utf8: bytes, delimiter: str, name: str, threads: int = 1) -> RawTable | None:
    """A file with LF line ends, a header without quotes, and quotes the csv module would
    not all read (text after a closing quote, say), read by pyarrow as it reads it: the
    closing quote ends the quoting and the text after it joins the value. A quote left
    open is refused naming its line (pyarrow would run it to the end of the file); only
    the end of the file needs looking at. Anything else (a carriage return, a quote in
    the header): None."""
    end = utf8.find(b"\n")
    first_line = utf8[: end if end >= 0 else len(utf8)]
    if b"\r" in utf8 or b'"' in first_line:
        return None
    try:
        header_line = first_csv_row(io.StringIO(first_line.decode("utf-8")), delimiter=delimiter)
        if not header_line:
            return None
        names = [str(position) for position in range(len(header_line))]
        table = _arrow_read(pa.py_buffer(utf8).slice(len(first_line) + 1), names, delimiter, True, threads)
    except (UnicodeDecodeError, pa.ArrowInvalid, pa.ArrowException):
        return None
    cells = [_one_array(table.column(name)) for name in names]
    spanning = None
    if table.num_rows:
        lines_without_values = table.num_rows + 1 - (not utf8.endswith(b"\n"))
        start = _start_of_last_value(utf8, cells[-1][-1].as_py())
        if _opens_value(utf8, start, delimiter):  # a quote may be open to the end: read every quote to know
            opened = unclosed_quote_line(utf8.decode("utf-8"), 1, delimiter)
            if opened is not None:
                raise _unclosed_quote_error(name, opened, _line_count_bytes(utf8))
        if utf8.count(b"\n") > lines_without_values:
            spanning = _arrow_spanning(cells, delimiter)
    return RawTable(
        header=header_line, cells=cells, rows=np.arange(2, table.num_rows + 2, dtype=ROW_TYPE), spanning=spanning
    )


def _opens_value(utf8: bytes, start: int, delimiter: str) -> bool:
    """Whether an opening quote is right before ``start``. At the start of the last
    value: whether the file ends inside that quoted value (pyarrow reads that without
    an error), the last value being the rest of the file after the quote."""
    if start < 1 or utf8[start - 1 : start] != b'"':
        return False
    if start >= 2 and utf8[start - 2 : start - 1] not in (delimiter.encode(), b"\n"):
        return False  # the quote is no opening quote: it follows other text (or another quote)
    return True


def _start_of_last_value(utf8: bytes, last_value: str) -> int:
    """Where the last value would start if the file ended inside it, or -1."""
    as_written = last_value.encode("utf-8").replace(b'"', b'""')
    return len(utf8) - len(as_written) if utf8.endswith(as_written) else -1


def _line_count_bytes(data: bytes) -> int:
    return data.count(b"\n") + (not data.endswith(b"\n"))


def _arrow_read(body: pa.Buffer, names: list[str], delimiter: str, quoted: bool, threads: int = 1) -> pa.Table:
    """The records after the header, every cell as text (nothing converted, nothing null).
    On one thread the body is one block (one chunk per column: nothing to combine); on more,
    a few blocks per thread, whose chunks are combined after (a small copy next to the parse)."""
    if not body.size:
        return pa.table({name: pa.nulls(0, pa.string()) for name in names})  # (pa.array would import pandas)
    if bytes(body.slice(0, min(3, body.size))) == UTF8_BOM:  # pyarrow would drop it, the csv module keeps it
        raise pa.ArrowInvalid("a byte-order mark opens the first record")  # so the csv module reads this file
    block = body.size + 1 if threads <= 1 else body.size // (threads * BLOCKS_PER_THREAD) + 1
    return pacsv.read_csv(
        pa.BufferReader(body),  # reads the bytes in place, no copy
        read_options=pacsv.ReadOptions(
            column_names=names, use_threads=threads > 1, block_size=max(MIN_BLOCK, min(block, (1 << 31) - 1))
        ),
        # values can hold line breaks only inside quotes; without quotes the parser may split blocks freely
        parse_options=pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=quoted, ignore_empty_lines=False),
        convert_options=pacsv.ConvertOptions(
            column_types=dict.fromkeys(names, pa.string()),
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
            null_values=[],
        ),
        memory_pool=parse_pool(),
    )


MIN_BLOCK = 1 << 20  # bytes: smaller blocks cost more per block than they share out
BLOCKS_PER_THREAD = 4  # blocks differ in cost: a few per thread keep the threads evenly busy


def parse_pool() -> pa.MemoryPool:
    """The allocator CSV sheets are parsed with: pyarrow's jemalloc where the wheel has it.
    The default (mimalloc) hands the buffers the parser grows and lets go back to the system
    at once, so the next ones are fresh pages the system must zero: at ten million units
    that was 1.5 s more system time a run on the benchmark's machine (benchmarks/README.md);
    jemalloc keeps them a moment for reuse. A choice for these calls, not a setting; one
    made with pyarrow's ARROW_DEFAULT_MEMORY_POOL is the user's, and kept."""
    if os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        return pa.default_memory_pool()
    try:
        return pa.jemalloc_memory_pool()
    except NotImplementedError:  # a pyarrow built without jemalloc
        return pa.default_memory_pool()


LF, CR, QUOTE = 0x0A, 0x0D, 0x22
UTF8_BOM = b"\xef\xbb\xbf"
SCAN_BLOCK = 1 << 22  # bytes looked at per step of a scan: its temporary arrays stay small


def _bom_length(data: bytes) -> int:
    """The bytes of the UTF-8 byte-order marks opening the file (the csv module path drops them all)."""
    start = 0
    while data.startswith(UTF8_BOM, start):
        start += len(UTF8_BOM)
    return start


def _first_line_end(buffer: np.ndarray) -> int:
    """Where the first line ends (its LF or CR), or the buffer's length. For text without quotes."""
    for begin in range(0, len(buffer), SCAN_BLOCK):
        ends = np.flatnonzero(_is_line_end(buffer[begin : begin + SCAN_BLOCK]))
        if len(ends):
            return begin + int(ends[0])
    return len(buffer)


def _after_line_end(buffer: np.ndarray, end: int) -> int:
    """Past the line end at ``end`` (CRLF is one)."""
    if end >= len(buffer):
        return end
    return end + 2 if buffer[end] == CR and end + 1 < len(buffer) and buffer[end + 1] == LF else end + 1


def _field_bounds(delimiter: int) -> np.ndarray:
    """For each byte, whether it bounds a quoted field: the delimiter, a line end, or another quote."""
    bounds = np.zeros(256, dtype=bool)
    bounds[[delimiter, LF, CR, QUOTE]] = True
    return bounds


def _is_line_end(block: np.ndarray) -> np.ndarray:
    return (block == LF) | (block == CR)


def _quotes_as_written(buffer: np.ndarray, delimiter: int) -> int | None:
    """Where the header ends (the first line end outside quotes, or the buffer's length)
    when every quote of the text is one the csv module (strict) and pyarrow read alike,
    else None. Counting quotes from the start, an even-numbered one opens a value: it
    starts a field (after a delimiter or a line end, or first in the file) or follows
    the quote before it (the second of a doubled quote); an odd-numbered one closes the
    value: it ends the field (before a delimiter, a line end or the end of the file) or
    comes right before the next quote. A quote inside an unquoted value, text after a
    closing quote, or an odd number of quotes (one left open) gives None.
    Vectorised over blocks of the buffer: a quote's number is its position among the quotes."""
    size = len(buffer)
    bounds = _field_bounds(delimiter)  # the bytes an opening quote may follow and a closing one precede
    seen = 0  # quotes before the block
    header_end = None
    for begin in range(0, size, SCAN_BLOCK):
        quotes = np.flatnonzero(buffer[begin : begin + SCAN_BLOCK] == QUOTE) + begin
        if header_end is None:
            ends = np.flatnonzero(_is_line_end(buffer[begin : begin + SCAN_BLOCK])) + begin
            outside = ends[(np.searchsorted(quotes, ends) + seen) % 2 == 0]
            if len(outside):
                header_end = int(outside[0])
        if not len(quotes):
            continue
        # even-numbered quotes open, odd ones close: the quotes alternate, so take every other one
        opening, closing = quotes[(seen % 2) :: 2], quotes[1 - (seen % 2) :: 2]
        opens_field = bounds[buffer[opening[opening > 0] - 1]]
        closes_field = bounds[buffer[closing[closing < size - 1] + 1]]
        if not (opens_field.all() and closes_field.all()):
            return None
        seen += len(quotes)
    if seen % 2:
        return None
    return size if header_end is None else header_end


# --- values over several lines, and quotes left open ---------------------------------

LINE_BREAK = re.compile(r"\r\n|\r|\n")


def count_line_breaks(text: str) -> int:
    """Line breaks as an editor counts them (CRLF is one)."""
    return text.count("\n") + text.count("\r") - text.count("\r\n")


def record_pattern(delimiter: str, width: int, id_at: int, code_at: int) -> str:
    """A regular expression (for re and for pyarrow's RE2 alike) matching a line with
    the shape of a record of a sheet: the header's number of fields, a non-blank id
    without spaces, and no space opening the id or code field after a delimiter
    (prose has one there: "Well, honestly, no.")."""
    separator = "\\t" if delimiter == "\t" else re.escape(delimiter)
    space, other = "[\\t\\n\\v\\f\\r ]", f"[^{separator}]"
    word = f"[^{separator}\\t\\n\\v\\f\\r ]"
    fields = []
    for at in range(width):
        if at == id_at:
            fields.append(f"{space}*{word}+{space}*" if at == 0 else f"{word}+{space}*")
        elif at == code_at and at > 0:
            fields.append(f"(?:{word}{other}*)?")
        else:
            fields.append(f"{other}*")
    return "^" + separator.join(fields) + "$"


def _record_spans(record: int, cells: list[str], first_line: int) -> list[tuple[int, int, int, int]]:
    spans = []
    line = first_line
    for column, cell in enumerate(cells):
        breaks = count_line_breaks(cell)
        if breaks:
            spans.append((record, column, line, line + breaks))
            line += breaks
    return spans


def _spanning(spans: list[tuple[int, int, int, int]], delimiter: str) -> SpanningValues:
    records, columns, first, last = (np.asarray(values, dtype=np.int64) for values in zip(*spans))
    return SpanningValues(records, columns, first, last, delimiter)


def _arrow_spanning(cells: list[pa.Array], delimiter: str, header_breaks: int = 0) -> SpanningValues | None:
    """The values holding a line break, found in each column's text buffer: a value's
    first line is its record's row plus the line breaks inside the header and inside all
    values before it (every record ends with one line end)."""
    found = [(column, *_values_with_line_breaks(array)) for column, array in enumerate(cells)]
    records = np.concatenate([values for _, values, _ in found])
    if not len(records):
        return None
    columns = np.concatenate([np.full(len(values), column) for column, values, _ in found])
    breaks = np.concatenate([counts for _, _, counts in found])
    order = np.lexsort((columns, records))
    records, columns, breaks = records[order], columns[order], breaks[order]
    before = np.cumsum(breaks) - breaks
    first = records + 2 + header_breaks + before
    return SpanningValues(records, columns, first, first + breaks, delimiter)


def _values_with_line_breaks(array: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(value indices, line breaks in each) of a string array's values that hold a line
    break: LF, CR or CRLF, as ``count_line_breaks`` counts them."""
    _, offsets_buffer, data_buffer = array.buffers()
    offsets = np.frombuffer(offsets_buffer, dtype=np.int32)[array.offset : array.offset + len(array) + 1]
    if data_buffer is None or offsets[-1] == offsets[0]:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    data = np.frombuffer(data_buffer, dtype=np.uint8)[offsets[0] : offsets[-1]]
    if LF not in data and CR not in data:  # most columns: two quick scans, no mask as long as the text
        return np.empty(0, np.int64), np.empty(0, np.int64)
    at = np.flatnonzero(_is_line_end(data))
    if not len(at):
        return np.empty(0, np.int64), np.empty(0, np.int64)
    owners = np.searchsorted(offsets, at + offsets[0], side="right") - 1
    # the LF of a CRLF within one value is no break of its own
    second = (data[at] == LF) & (at > 0) & (data[np.maximum(at - 1, 0)] == CR)
    second &= at - 1 + offsets[0] >= offsets[owners]
    owners = owners[~second]  # in order (the breaks are found in order): the runs are the values
    starts = np.flatnonzero(np.r_[True, owners[1:] != owners[:-1]])
    return owners[starts].astype(np.int64), np.diff(np.r_[starts, len(owners)]).astype(np.int64)


def _line_count(text: str) -> int:
    return count_line_breaks(text) + (not text.endswith(("\n", "\r")))


class CsvBroken(ValueError):
    """CSV text the csv module cannot read: near ``line``, with ``opened`` the line of a
    quote left open (None when the fault is another), ``last_line`` the text's last line."""

    def __init__(self, line: int, opened: int | None, last_line: int, reason: str):
        super().__init__(reason)
        self.line, self.opened, self.last_line, self.reason = line, opened, last_line, reason


def csv_records(text: str, delimiter: str = ",") -> list[tuple[int, int, list[str]]]:
    """The records of CSV text read by the csv module (strict), each as (its first line,
    its last line, its cells): every CSV irr-audit reads with the csv module goes through
    here, so a quote left open is found, and named by its line, the same way. Raises CsvBroken."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    records = []
    ended = 0  # the line the previous record ended on
    try:
        with long_fields():
            for record in reader:
                records.append((ended + 1, reader.line_num, record))
                ended = reader.line_num
    except csv.Error as exc:
        opened = unclosed_quote_line(text, ended + 1, delimiter)
        raise CsvBroken(reader.line_num, opened, _line_count(text), str(exc)) from None
    return records


@dataclass(frozen=True)
class SwallowedValue:
    """A value over several lines that a quote left open made swallow the rows after it."""

    column: int
    opened: int  # the line where its quote opened
    closed: int  # the line where it closed
    shaped: tuple[int, str] | None  # a line it swallowed that has the shape of a record: (its line, its text)

    def sentence(self, column: str, row: int, what: str = "rows", shaped_is: str = "is a row of this file") -> str:
        """What happened, for a message: which value, where its quote opened and closed, what it swallowed."""
        swallowed = (
            f"line {self.closed}" if self.closed == self.opened + 1 else f"lines {self.opened + 1}-{self.closed}"
        )
        looks = f"; line {self.shaped[0]}, '{printable(self.shaped[1], 80)}', {shaped_is}" if self.shaped else ""
        return (
            f"the {column!r} value of row {row} starts with a quote on line {self.opened} that is not closed until "
            f"line {self.closed}, so {swallowed} would be read as part of that value, not as {what}{looks}"
        )


def swallowed_value(
    record: list[str], first_line: int, free_text: set[int], shape: re.Pattern[str]
) -> SwallowedValue | None:
    """The first value of a record (from ``csv_records``) that swallowed rows through a
    quote left open: a value over several lines in a column that never holds a line
    break, or in a free-text column (``free_text``) a value one of whose later lines has
    the shape of a record (``shape``, from ``record_pattern``). None when there is none."""
    line = first_line
    for at, cell in enumerate(record):
        breaks = count_line_breaks(cell)
        if not breaks:
            continue
        later = LINE_BREAK.split(cell)[1:]
        shaped = next(((line + after, text) for after, text in enumerate(later, start=1) if shape.match(text)), None)
        if at not in free_text or shaped is not None:
            return SwallowedValue(at, line, line + breaks, shaped)
        line += breaks
    return None


def unclosed_quote_line(text: str, first_line: int, delimiter: str) -> int | None:
    """The line of the quote left open at the end of ``text``, looking from the start of
    ``first_line`` (where the record the csv module failed on began), or None when
    every quote from there is closed. Looks only at the quote characters."""
    start = 0
    for _ in range(first_line - 1):
        match = LINE_BREAK.search(text, start)
        if match is None:
            return None
        start = match.end()
    opened = None
    position = start
    while True:
        at = text.find('"', position)
        if at < 0:
            break
        if opened is None:
            if at == start or text[at - 1] in (delimiter, "\n", "\r"):
                opened = at
            position = at + 1
        elif text.startswith('""', at):
            position = at + 2
        else:
            opened, position = None, at + 1
    if opened is None:
        return None
    return first_line + count_line_breaks(text[start:opened])


def _unclosed_quote_error(name: str, line: int, last_line: int) -> SheetError:
    swallowed = f"lines {line + 1}-{last_line}" if last_line > line + 1 else f"line {last_line}"
    rest = f": everything after it ({swallowed}) would be read as one value" if last_line > line else ""
    return SheetError(
        f"sheet {name}: the quote opened on line {line} is never closed{rest}.",
        hint=f"close the quote at the end of the value on line {line}; a quote that is part of the text is "
        'written as two quotes ("") inside a quoted value. Then save the sheet again.',
        code="sheet-unclosed-quote",
    )


def _one_array(column: pa.ChunkedArray) -> pa.Array:
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def _padded_table(
    header: list[str], body: Records, rows: np.ndarray, name: str, delimiter: str | None = None
) -> RawTable:
    """Short rows are padded (spreadsheets drop trailing empty cells); a row with
    non-empty cells beyond the header cannot be read safely and is refused, naming the
    delimiter it was split on and (when one fits better) the one the file seems to use."""
    width = len(header)
    padded: Records = []
    for row_number, record in zip(rows, body):
        if len(record) > width and any(cell.strip() for cell in record[width:]):
            if delimiter is None:
                raise SheetError(
                    f"sheet {name} row {row_number} has {len(record)} cells but the header has {width}.",
                    hint="a value probably contains an unquoted delimiter; quote it or fix the row.",
                    code="sheet-ragged",
                )
            other = suspected(delimiter.join(header), delimiter.join(record), delimiter)
            raise SheetError(
                f"sheet {name} row {row_number} has {len(record)} cells but the header has {width}"
                + (f", split on {shown(delimiter)!r}; the file looks {shown(other)}-delimited." if other else "."),
                hint=f"pass --delimiter {shown(other)!r}."
                if other
                else f"a value probably contains an unquoted {shown(delimiter)!r}; quote it or fix the row.",
                code="sheet-ragged",
            )
        padded.append((record + [""] * width)[:width])
    return RawTable(header=header, cells=_text_columns(padded, width), rows=np.asarray(rows, dtype=ROW_TYPE))


def _jsonl_table(text: str, name: str, limits: Limits) -> RawTable:
    objects: list[dict[str, Any]] = []
    lines: list[int] = []
    header: dict[str, None] = {}
    flagged = number_check_lines(text, limits)
    for line_number, line in json_lines(text, f"sheet {name}", limits):
        try:
            # A number is kept as the text it is written as (an id 1.10 stays "1.10", 1e2 stays
            # "1e2"), and so are NaN and Infinity, which Python's json writes.
            item = load_json_line(
                line,
                f"sheet {name} line {line_number}",
                limits,
                numbers_checked=line_number not in flagged,
                parse_constant=str,
                parse_int=str,
                parse_float=str,
            )
        except RepeatedKey as repeated:  # load_json_line refuses it in every file a person gives
            raise SheetError(
                repeated_key_sentence(f"sheet {name} line {line_number}", line, repeated),
                hint="keep one of the two values; JSON Lines has one value per key.",
                code="sheet-duplicate-column",
            ) from None
        except ValueError as exc:  # json.JSONDecodeError
            raise SheetError(
                f"sheet {name} line {line_number} is not valid JSON: {getattr(exc, 'msg', exc)}.",
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
        _check_columns(len(header), name, f"different keys by line {line_number}", limits)
        objects.append(item)
        lines.append(line_number)
    columns = list(header)
    records = [[_json_text(item.get(key)) for key in columns] for item in objects]
    for record, line_number in zip(records, lines):
        _refuse_surrogates(record, name, line_number)
    return RawTable(header=columns, cells=_text_columns(records, len(columns)), rows=np.asarray(lines, dtype=ROW_TYPE))


SURROGATE = re.compile("[\ud800-\udfff]")


def _refuse_surrogates(record: list[str], name: str, line: int) -> None:
    """A lone surrogate (an escape such as \\ud800 that is half of a character) is no text."""
    if any(SURROGATE.search(cell) for cell in record):
        raise SheetError(
            f"sheet {name} line {line} holds a lone surrogate escape (such as \\ud800), which is "
            "half of a character, not text.",
            hint="write the whole character, or remove the escape.",
            code="sheet-malformed",
        )


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
