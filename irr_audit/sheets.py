"""The only place that reads coding sheets. Every cell is read as text.

A sheet is CSV, TSV, XLSX or JSON Lines with one row per comment (CONTRACT.md,
"Coding sheets"), read by irr_audit.tables. Here its id and code columns are
found, rows with every cell empty are dropped (and counted), and its ids are
trimmed as they are matched.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from irr_audit import prefetch
from irr_audit.arrowtext import from_numpy, may_have_edge_space
from irr_audit.errors import SheetError
from irr_audit.tables import ParsedFile, RawTable, parse_file, read_and_parse

VERSION_PATTERN = re.compile(r"[vV]?\s*(\d+)")
TEXT_COLUMNS = ("body", "text")  # the comment's text, shown beside disagreements when a sheet has it


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

def read_sheet(path: str | Path, options: SheetOptions = SheetOptions()) -> Sheet:
    """Read one coding sheet from disk (or take it from the command line's prefetch)."""
    sheet_path = Path(path)
    early = prefetch.take(sheet_path)
    if early is not None and early.sheet is not None and options == SheetOptions():
        return early.sheet  # read in the background, with these same (the default) columns
    return sheet_from_parsed(_parsed(sheet_path, early, options), sheet_path, options)


def _parsed(path: Path, early: prefetch.Prefetched | None, options: SheetOptions) -> ParsedFile:
    return early.parsed if early is not None else read_and_parse(path, options.worksheet)

def read_sheets(paths: list[Path], options: SheetOptions = SheetOptions()) -> list[Sheet]:
    """Read several sheets, two at a time: each large CSV is parsed on one thread, so
    two keep both cores busy. The first sheet (in order) that cannot be read raises."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(lambda path: read_sheet(path, options), paths))

def read_table(path: str | Path, options: SheetOptions = SheetOptions()) -> RawTable:
    """Read any table irr-audit takes (a counts file, say) with the sheets' checks: every cell as text."""
    table_path = Path(path)
    return _parsed(table_path, prefetch.take(table_path), options).table

def parse_sheet(data: bytes, path: Path, options: SheetOptions = SheetOptions()) -> Sheet:
    """Parse sheet bytes. Pure: ``path`` names the sheet and picks its format."""
    return sheet_from_parsed(parse_file(data, path, options.worksheet), path, options)

def parse_rule_version(text: str) -> int | None:
    """`1`, `v1` or `V1` -> 1; blank -> None; anything else -> ValueError."""
    if not text.strip():
        return None
    match = VERSION_PATTERN.fullmatch(text.strip())
    if not match:
        raise ValueError(text)
    return int(match.group(1))

def sheet_from_parsed(parsed: ParsedFile, path: Path, options: SheetOptions = SheetOptions()) -> Sheet:
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
    version_at = _optional_column(header, "rule_version")
    coder_at = _optional_column(header, "coder")
    text_at = next((at for at in (_optional_column(header, column) for column in TEXT_COLUMNS) if at is not None),
                   None)
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


def _non_empty_rows(cells: list[pa.Array], keys: pa.Array) -> np.ndarray:
    """Rows with any non-blank cell. The ids (trimmed, or with no space to trim) decide
    most rows; the other cells are looked at only for rows with a blank id."""
    filled = pc.binary_length(keys).to_numpy() > 0
    rest = np.flatnonzero(~filled)
    if len(rest):
        undecided = from_numpy(rest)
        for column in cells:
            filled[rest] |= _filled(column.take(undecided))
    return filled


def _filled(column: pa.Array) -> np.ndarray:
    """Values with a character other than whitespace (utf8_is_space is false for the empty string)."""
    return (pc.binary_length(column).to_numpy() > 0) & ~pc.utf8_is_space(column).to_numpy(zero_copy_only=False)

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
