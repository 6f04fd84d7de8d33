"""The only place that reads coding sheets. Every cell is read as text.

A sheet is CSV, TSV, XLSX or JSON Lines with one row per comment (docs/contract.md,
"Coding sheets"), read by irr_audit.io.tables. Here its id and code columns are
found, rows with every cell empty are dropped (and counted), and its ids are
trimmed as they are matched.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from irr_audit._threads import Workers, thread_count
from irr_audit.errors import SheetError, UsageError
from irr_audit.io.arrowtext import (
    from_numpy,
    has_no_empty_value,
    may_have_edge_space,
    only_printable_ascii,
    steps_evenly,
    to_numpy,
)
from irr_audit.io.csvfields import first_csv_row
from irr_audit.io.delimiter import CANDIDATES, shown
from irr_audit.io.display import CONTROL, printable
from irr_audit.io.files import file_identity
from irr_audit.io.limits import DEFAULT_LIMITS, Limits
from irr_audit.io.tables import (
    ROW_TYPE,
    ParsedFile,
    RawTable,
    SpanningValues,
    SwallowedValue,
    parse_file,
    parse_pool,
    read_and_parse,
    read_table_bytes,
    record_pattern,
    refuse_options_no_sheet_reads,
    refuse_unsaved_formulas,
)

VERSION_PATTERN = re.compile(r"[vV]?\s*(\d+)")
TEXT_COLUMNS = ("body", "text")  # the comment's text, shown beside disagreements when a sheet has it

Item = TypeVar("Item")
Done = TypeVar("Done")


@dataclass(frozen=True)
class ColumnChoice:
    """Which columns hold the id and the code, and which worksheet: what a join
    summary and a bundle manifest record of how the sheets were read."""

    id_column: str | None = None
    code_column: str | None = None
    worksheet: str | None = None
    delimiter: str | None = None  # a .csv sheet's, when forced (--delimiter); None: detected

    def __post_init__(self) -> None:
        # the Python API takes these as given: an int or a list would fail deep in the reader
        refuse_non_text_options(
            {"--id-column": self.id_column, "--code-column": self.code_column, "--worksheet": self.worksheet}
        )

    @property
    def limits(self) -> Limits:
        """The default limits: a choice of columns alone sets none (SheetOptions does)."""
        return DEFAULT_LIMITS


@dataclass(frozen=True)
class SheetOptions(ColumnChoice):
    """How to read sheets: the columns, and the limits on what is read (irr_audit.io.limits).
    The limits are not recorded with the audit: they change what can be read, never what is read."""

    limits: Limits = DEFAULT_LIMITS


COLUMN_NAMES = (
    "a column is named by its header, a worksheet by its name.",
    "pass a column's header as text (id_column='comment_id'), a worksheet's name as text "
    "(worksheet='Sheet1'): the first worksheet is read when none is named.",
)


def refuse_non_text_options(options: Mapping[str, object], why: tuple[str, str] = COLUMN_NAMES) -> None:
    """Refuse an option that names something (option -> value, None: not given) and is not text:
    a header, a worksheet, an export's field are matched as text, never by position; ``why`` is the
    sentence that says so and the hint."""
    for option, value in options.items():
        if value is not None and not isinstance(value, str):
            raise UsageError(
                f"{option} {value!r} is a {type(value).__name__}, not text: {why[0]}",
                hint=why[1],
                code="usage-option-text",
            )


def recorded_columns(record: Mapping[str, str | None] | None) -> ColumnChoice:
    """The column options a join summary or a bundle manifest recorded, its values checked to be
    text or null (irr_audit.io.records); a key of a newer irr-audit is left out."""
    known = {option.name for option in fields(ColumnChoice)}
    return ColumnChoice(**{key: value for key, value in (record or {}).items() if key in known})


@dataclass(frozen=True)
class Sheet:
    """One coder's sheet, read.

    One entry per non-empty input row, column by column: ``rows`` (the number a
    spreadsheet shows, header = row 1: made when asked for from ``row_numbers``, which is None
    when entry i is row i + 2, the usual sheet; ``rows_at`` gives some), and as text exactly as typed
    ``comment_ids``, ``codes``, ``rule_versions`` and ``texts`` (the comment's
    body; the last two None when the sheet has no such column). Text columns are pyarrow string
    arrays: a million rows stay compact and fast. ``codes`` read from a file is dictionary-encoded
    when it holds few distinct values (``compact_codes``: the usual code column, a byte a row);
    its values are the same text either way (``plain_text`` decodes it). Rows with every cell empty are
    only counted, in ``empty_rows``. ``warnings`` are things a reader should know
    that are not errors (a hidden row, several worksheets).
    """

    path: Path
    name: str
    coder: str
    sha256: str
    size: int
    columns: tuple[str, ...]
    row_numbers: np.ndarray | None  # None: no row was dropped, entry i is row i + 2
    comment_ids: pa.Array
    codes: pa.Array
    rule_versions: pa.Array | None  # None: the sheet has no rule_version column
    texts: pa.Array | None  # None: the sheet has no body or text column
    empty_rows: int
    warnings: tuple[str, ...] = ()
    unit_keys: pa.Array | None = None  # the ids as matched: surrounding whitespace trimmed
    # the file read, as (device, inode): two paths to one file (a link) are told apart from two
    # files (io.files.file_identity); None for a DataFrame or a bundle's frozen bytes
    file_key: tuple[int, int] | None = None

    @property
    def row_count(self) -> int:
        return len(self.comment_ids)

    @property
    def rows(self) -> np.ndarray:
        """Every entry's row, as a spreadsheet shows it (made anew when ``row_numbers`` is None)."""
        if self.row_numbers is None:
            return np.arange(2, self.row_count + 2, dtype=ROW_TYPE)
        return self.row_numbers

    def rows_at(self, positions: np.ndarray | int) -> np.ndarray:
        """The rows of the entries at these positions (without making every entry's row)."""
        if self.row_numbers is None:
            return np.asarray(positions, dtype=ROW_TYPE) + 2  # the type of ``rows``, kept or made
        return self.row_numbers[positions]


def read_sheet(path: str | Path, options: ColumnChoice = SheetOptions(), *, threads: int = 1) -> Sheet:
    """Read one coding sheet from disk (a CSV file parsed on ``threads`` threads)."""
    sheet_path = Path(path)
    parsed = read_and_parse(sheet_path, options.worksheet, options.limits, options.delimiter, threads=threads)
    return sheet_from_parsed(parsed, sheet_path, options)


def read_sheets(paths: list[Path], options: ColumnChoice = SheetOptions()) -> list[Sheet]:
    """Read several sheets, one per core at a time: each large CSV is parsed on one thread,
    so every core is busy; the sheets of a last round too small to fill the cores share
    them (five sheets on two cores: the fifth is parsed on both). The first sheet (in
    order) that cannot be read raises."""
    refuse_options_no_sheet_reads(paths, options.worksheet, options.delimiter)
    sheets = on_shares(lambda path, share: read_sheet(path, options, threads=share), paths)
    # pyarrow's allocators keep the parser's freed blocks for reuse; what comes next (the join) is
    # mostly numpy's, which cannot reuse them: hand them back (a fifth of the sheets' size at scale)
    pa.default_memory_pool().release_unused()
    parse_pool().release_unused()  # (the same pool again, harmlessly, where the wheel has no jemalloc)
    return sheets


def parse_threads(sheets: int, threads: int) -> list[int]:
    """The threads each of ``sheets`` sheets is parsed on when ``threads`` are read at a time:
    one each, but the sheets of a last round that would leave threads idle share them.

    >>> parse_threads(5, 2), parse_threads(4, 2), parse_threads(2, 4), parse_threads(7, 4)
    ([1, 1, 1, 1, 2], [1, 1, 1, 1], [2, 2], [1, 1, 1, 1, 1, 1, 1])
    """
    last = sheets % threads
    if not last:
        return [1] * sheets
    return [1] * (sheets - last) + [threads // last] * last


def on_shares(work: Callable[[Item, int], Done], items: list[Item]) -> list[Done]:
    """``work(item, threads)`` for each item, a core's worth at a time, each given its share of
    the threads (``parse_threads``); the results in order, the first failure (in order) raised."""
    threads = thread_count()
    with Workers(max_workers=threads) as pool:
        return list(pool.map(work, items, parse_threads(len(items), threads)))


def read_sheets_keeping_bytes(paths: list[Path], options: ColumnChoice = SheetOptions()) -> list[tuple[Sheet, bytes]]:
    """As ``read_sheets``, each sheet with the very bytes it was parsed from (each file read
    once: freeze copies these bytes into a bundle)."""

    def read(path: Path, threads: int) -> tuple[Sheet, bytes]:
        data = read_table_bytes(path, options.limits)
        return replace(parse_sheet(data, path, options, threads=threads), file_key=file_identity(path)), data

    refuse_options_no_sheet_reads(paths, options.worksheet, options.delimiter)
    return on_shares(read, paths)


def parse_sheets(files: list[tuple[bytes, Path]], options: ColumnChoice = SheetOptions()) -> list[Sheet]:
    """Several sheets' bytes parsed as ``read_sheets`` parses files (``path`` names each). Pure."""
    return on_shares(lambda file, threads: parse_sheet(*file, options, threads=threads), files)


def read_table(path: str | Path, options: ColumnChoice = SheetOptions()) -> RawTable:
    """Read any table irr-audit takes (a counts file, say) with the sheets' checks: every cell as text."""
    return read_table_file(path, options).table


def read_table_file(path: str | Path, options: ColumnChoice = SheetOptions()) -> ParsedFile:
    """As ``read_table``, with the sha256 and size of the bytes parsed (the file is read once)."""
    table_path = Path(path)
    parsed = read_and_parse(table_path, options.worksheet, options.limits, options.delimiter)
    _check_spanning(parsed.table, table_path.name, dict(enumerate(parsed.table.header)))
    return parsed


def parse_sheet(data: bytes, path: Path, options: ColumnChoice = SheetOptions(), *, threads: int = 1) -> Sheet:
    """Parse sheet bytes (a CSV file on ``threads`` threads). Pure: ``path`` names the sheet and picks its format."""
    parsed = parse_file(data, path, options.worksheet, options.limits, options.delimiter, threads=threads)
    return sheet_from_parsed(parsed, path, options)


def parse_rule_version(text: str) -> int | None:
    """`1`, `v1` or `V1` -> 1; blank -> None; anything else -> ValueError."""
    if not text.strip():
        return None
    match = VERSION_PATTERN.fullmatch(text.strip())
    if not match:
        raise ValueError(text)
    return int(match.group(1))


def sheet_from_parsed(parsed: ParsedFile, path: Path, options: ColumnChoice = SheetOptions()) -> Sheet:
    """The sheet in a parsed file: its id and code columns chosen, its empty rows dropped. Pure."""
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
    if id_at == code_at:
        raise SheetError(
            f"sheet {name}: the id column and the code column are both '{printable(header[id_at], 80)}'.",
            hint="name two different columns with --id-column and --code-column.",
            code="sheet-same-column",
        )
    version_at = _optional_column(header, "rule_version")
    coder_at = _optional_column(header, "coder")
    text_at = next((at for at in (_optional_column(header, column) for column in TEXT_COLUMNS) if at is not None), None)
    structural = {at: header[at] for at in (id_at, code_at, version_at, coder_at) if at is not None}
    _check_spanning(table, name, structural, id_at, code_at)
    refuse_unsaved_formulas(table, name, structural)
    ids = table.cells[id_at]
    keys = pc.utf8_trim_whitespace(ids) if may_have_edge_space(ids) else ids
    non_empty = _non_empty_rows(table.cells, keys)
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
    _check_control_characters(keys, rows, name, "comment id")
    coder = _coder(kept[coder_at], rows, path) if coder_at is not None else path.stem
    if CONTROL.search(coder):
        raise SheetError(
            f"sheet {name} names its coder '{printable(coder, 80)}', which holds a control character.",
            hint="name the coder (the coder column, or the file name) with printable characters.",
            code="sheet-control-character",
        )
    warnings = list(table.warnings)
    numeric_ids = (table.numeric_cells or {}).get(id_at, [])
    if numeric_ids:  # an id is kept as typed or refused: a number's digits are the spreadsheet's, not the coder's
        raise SheetError(
            f"sheet {name}: {len(numeric_ids)} comment ids are stored as numbers or dates, not text (rows "
            f"{', '.join(map(str, numeric_ids[:5]))}{' ...' if len(numeric_ids) > 5 else ''}): the workbook "
            "keeps a number, which has lost any leading zero and every digit past the 15th, so the id as "
            "typed cannot be read back.",
            hint="format the id column as Text in the spreadsheet and enter the ids again (paste them from "
            "the blank sheet irr-audit sample wrote, or from the collector's file).",
            code="sheet-number-id",
        )
    return Sheet(
        path=path,
        name=name,
        coder=coder,
        sha256=parsed.sha256,
        size=parsed.size,
        columns=tuple(header),
        row_numbers=None if _numbered_from_two(rows) else rows,
        comment_ids=kept[id_at],
        codes=compact_codes(kept[code_at]),
        rule_versions=kept[version_at] if version_at is not None else None,
        texts=kept[text_at] if text_at is not None else None,
        empty_rows=len(non_empty) - int(np.count_nonzero(non_empty)),
        warnings=tuple(warnings),
        unit_keys=keys,
        file_key=parsed.file_key,
    )


def _numbered_from_two(rows: np.ndarray) -> bool:
    """Whether the rows are 2, 3, ..., n + 1 (a sheet of n rows, none dropped): they need not be kept."""
    return bool(len(rows)) and int(rows[0]) == 2 and steps_evenly(rows, 1)


CODES_ENCODED_UP_TO = 127  # distinct codes a code column may hold to be kept as one byte a row


def compact_codes(codes: pa.Array) -> pa.Array:
    """A code column as its distinct values and an int8 index per row when it holds at most
    CODES_ENCODED_UP_TO distinct values (a rule's handful of codes, typos and all): a byte a row
    instead of four of offsets and the text. Any other column (free text in the code column,
    say) is kept as read. The values are the same text either way."""
    encoded = pc.dictionary_encode(codes)
    if len(encoded.dictionary) > CODES_ENCODED_UP_TO:
        return codes
    return pa.DictionaryArray.from_arrays(encoded.indices.cast(pa.int8()), encoded.dictionary)


def _non_empty_rows(cells: list[pa.Array], keys: pa.Array) -> np.ndarray:
    """Rows with any non-blank cell. The ids (trimmed, or with no space to trim) decide
    most rows; the other cells are looked at only for rows with a blank id. When every row
    has an id (the usual sheet), one True seen as many (a read-only view, no array)."""
    if has_no_empty_value(keys):
        return np.broadcast_to(np.True_, (len(keys),))
    filled = to_numpy(pc.binary_length(keys)) > 0
    rest = np.flatnonzero(~filled)
    if len(rest):
        undecided = from_numpy(rest)
        for column in cells:
            filled[rest] |= _filled(column.take(undecided))
    return filled


def _filled(column: pa.Array) -> np.ndarray:
    """Values with a character other than whitespace (utf8_is_space is false for the empty string)."""
    return (to_numpy(pc.binary_length(column)) > 0) & ~to_numpy(pc.utf8_is_space(column))


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
        found = ", ".join(printable(column, 40) for column in header if column.strip()) or "(none)"
        other = header_delimiter(header)
        if other is not None:
            raise SheetError(
                f'sheet {name} has no column "{wanted}": its header is one column, {printable(header[0], 60)}, '
                f"which looks {shown(other)}-delimited.",
                hint=f"pass --delimiter {shown(other)!r} (or leave --delimiter out: it is detected).",
                code="sheet-missing-column",
            )
        raise SheetError(
            f'sheet {name} has no column "{wanted}".\n  Columns found: {found}',
            hint=f"pass {option} NAME, or rename the column (if the first row is data, add a header row "
            "comment_id,code).",
            code="sheet-missing-column",
        )
    return matches[0]


def header_delimiter(header: list[str]) -> str | None:
    """The delimiter a header of one column seems to use (the file was split on another one)."""
    if len(header) != 1:
        return None
    return next((c for c in CANDIDATES if len(first_csv_row([header[0]], delimiter=c) or []) >= 2), None)


def _optional_column(header: list[str], wanted: str) -> int | None:
    matches = [i for i, column in enumerate(header) if _column_key(column) == wanted]
    return matches[0] if matches else None


def _coder(names: pa.Array, rows: np.ndarray, path: Path) -> str:
    """The sheet's coder column when it names one coder, else the file name stem."""
    stripped = pc.utf8_trim_whitespace(names)
    named = [name for name in pc.unique(stripped).to_pylist() if name]
    if len(named) > 1:
        first, second = named[:2]
        values = to_numpy(stripped)
        first_row, second_row = rows[values == first][0], rows[values == second][0]
        raise SheetError(
            f"sheet {path.name} names more than one coder in its coder column: "
            f"{first!r} (row {first_row}) and {second!r} (row {second_row}).",
            hint="give each coder a sheet of their own.",
            code="sheet-several-coders",
        )
    return named[0] if named else path.stem


# --- values over several lines, and control characters ------------------------------------


def _check_spanning(
    table: RawTable, name: str, structural: dict[int, str], id_at: int | None = None, code_at: int | None = None
) -> None:
    """No row may vanish into a neighbour's value through a quote left open.

    A CSV value holds a line break only inside quotes. In the id, code, coder or
    rule_version column that is never right: it is a quote left open. In a text
    column (body, note) it is usually a comment over several lines, and only a
    swallowed line shaped like a record of this sheet gives the quote away.
    Either way the sheet is refused, naming the line where the quote opened and
    the lines it swallowed, rather than read with rows missing: where the quote
    should have closed cannot be known, so no reading of the rest would be right.
    Only the values holding a line break are looked at (``table.spanning``)."""
    spans = table.spanning
    if spans is None:
        return
    at_structural = np.isin(spans.columns, list(structural))
    if at_structural.any():
        first = int(np.flatnonzero(at_structural)[0])
        raise _swallowed(table, spans, first, name, None)
    if id_at is None or code_at is None:
        return
    width = len(table.header)
    for column in np.unique(spans.columns):
        entries = np.flatnonzero(spans.columns == column)
        values = table.cells[int(column)].take(from_numpy(spans.records[entries]))
        found = _record_shaped_line(values, spans.delimiter, width, id_at, code_at)
        if found is not None:
            value, later_line, text = found
            entry = int(entries[value])
            raise _swallowed(table, spans, entry, name, (int(spans.first_lines[entry]) + later_line, text))


def _record_shaped_line(
    values: pa.Array, delimiter: str, width: int, id_at: int, code_at: int
) -> tuple[int, int, str] | None:
    """(value, its line counted from 0, the line) of the first line but a value's first that has
    the shape of a record of this sheet (tables.record_pattern). Vectorised."""
    lines = pc.split_pattern_regex(values, r"\r\n|\r|\n")
    flat = pc.list_flatten(lines)
    offsets = to_numpy(lines.offsets)
    later = np.ones(len(flat), dtype=bool)
    later[offsets[:-1][offsets[:-1] < offsets[-1]] - offsets[0]] = False  # the first line is the opening line's rest
    shaped = to_numpy(pc.match_substring_regex(flat, record_pattern(delimiter, width, id_at, code_at)))
    found = np.flatnonzero(later & shaped)
    if not len(found):
        return None
    at = int(found[0])
    owner = int(np.searchsorted(offsets, at + offsets[0], side="right") - 1)
    return owner, int(at + offsets[0] - offsets[owner]), flat[at].as_py()


def _swallowed(
    table: RawTable, spans: SpanningValues, entry: int, name: str, shaped: tuple[int, str] | None
) -> SheetError:
    first, last = int(spans.first_lines[entry]), int(spans.last_lines[entry])
    value = SwallowedValue(int(spans.columns[entry]), first, last, shaped)
    row = int(table.rows[int(spans.records[entry])])
    return SheetError(
        f"sheet {name}: {value.sentence(table.header[value.column], row, shaped_is='is a row of this sheet')}.",
        hint=f"close the quote at the end of the value on line {first}; a quote that is part of the text is written "
        'as two quotes ("") inside a quoted value. Then save the sheet again.',
        code="sheet-unclosed-quote",
    )


def _check_control_characters(values: pa.Array, rows: np.ndarray, name: str, what: str) -> None:
    at = _control_at(values)
    if at is not None:
        raise SheetError(
            f"sheet {name} row {rows[at]}: {what} '{printable(values[at].as_py(), 80)}' holds a control character.",
            hint=f"remove it from the {what} (ids are matched as text and written to CSV, XLSX and reports, "
            "where a control character is lost or altered).",
            code="sheet-control-character",
        )


def _control_at(values: pa.Array) -> int | None:
    """The first value holding a control character (display.CONTROL), or None."""
    if only_printable_ascii(values):  # the usual ids: one pass over the bytes instead of a regex per value
        return None
    found = np.flatnonzero(to_numpy(pc.match_substring_regex(values, CONTROL.pattern)))
    return int(found[0]) if len(found) else None
