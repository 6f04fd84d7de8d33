"""pandas DataFrames as coding sheets (the Python API, docs/api.md): every cell is
read as text, then the sheet is checked and its columns chosen exactly as a sheet
file's are (irr_audit.io.sheets).

A cell's text is what a CSV export of the frame (``DataFrame.to_csv``) writes for it:
text as it is (``"NA"`` stays ``"NA"``, ``"007"`` stays ``"007"``), whole numbers
as digits, booleans as True and False, a missing value (None, NaN, pd.NA, NaT) as
a blank cell. Two things are refused rather than converted: a floating-point number
in a column irr-audit matches on (the id, the code, coder and rule_version), since
a float has lost the text it was typed as (``1.0`` is not the code ``1``, and
``1.23457e+11`` no longer names its comment), in whatever holds it (a float column,
objects, a categorical's categories); and bytes in any column, which to_csv writes as
``b'yes'``.

A coder's sheet is named ``<coder>.csv``; its sha256 and size are those of its CSV
form (the frame's text as irr_audit.io.framecsv writes it, which is what pandas'
``to_csv(index=False, lineterminator="\\n")`` writes, but for a field holding a
carriage return, always quoted: pandas leaves a lone one bare, which a reader takes
for a line end), so that auditing the frames and auditing those files give the same
document. A row is numbered as a spreadsheet shows it (its position + 2: the header is row 1).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from irr_audit.errors import SheetError, UsageError
from irr_audit.io.csvfields import csv_rows
from irr_audit.io.framecsv import frame_csv_text
from irr_audit.io.sheets import Sheet, SheetOptions, sheet_from_parsed
from irr_audit.io.tables import ParsedFile, RawTable

CODER_COLUMN = "coder"
READ_AS_TEXT_HINT = (
    "convert the column first: frame[{column!r}].astype('Int64') keeps whole numbers and missing values; or "
    "read the file as text: pd.read_csv(path, dtype=str, keep_default_na=False)."
)


def other_table(value: object) -> str | None:
    """How to name a table of another library (a polars DataFrame, a pyarrow Table: each has
    ``to_pandas``), or None: named by its class alone, a polars DataFrame reads as a pandas one."""
    if isinstance(value, pd.DataFrame) or not callable(getattr(value, "to_pandas", None)):
        return None
    return f"{type(value).__module__.partition('.')[0]} {type(value).__name__}"


TO_PANDAS_HINT = "convert it first: table.to_pandas() gives the pandas DataFrame irr-audit reads."


def frame_sheets(frames: Mapping[Any, Any], options: SheetOptions) -> list[Sheet]:
    """One sheet per coder from a mapping coder -> DataFrame (comment_id, code, any other columns)."""
    sheets = []
    for name, parsed in frame_tables(frames, options):
        sheet = sheet_from_parsed(parsed, Path(f"{name}.csv"), options)
        check_frame_coder(sheet, name)
        sheets.append(sheet)
    return sheets


def frame_tables(
    frames: Mapping[Any, Any], options: SheetOptions, code_columns: Sequence[str] = ()
) -> list[tuple[str, ParsedFile]]:
    """Each coder's DataFrame as the table a sheet file parses into, with the coder's name.
    ``code_columns``: more columns read as codes (a float there is refused), a codebook's variables."""
    tables = []
    coder_of: dict[int, str] = {}  # id() of each frame seen -> its coder (the frames are alive: ids are unique)
    for coder, frame in frames.items():
        name = _coder_name(coder)
        if not isinstance(frame, pd.DataFrame):
            other = other_table(frame)
            raise UsageError(
                f"the data for coder {name!r} is a {other or type(frame).__name__}, not a pandas DataFrame.",
                hint=TO_PANDAS_HINT if other else "pass {coder: DataFrame with the columns comment_id and code}.",
                code="data-form",
            )
        first = coder_of.setdefault(id(frame), name)
        if first != name:  # one coder's codes would be scored as two coders agreeing perfectly
            raise UsageError(
                f"the DataFrames of coders {first!r} and {name!r} are one DataFrame: its codes would be scored "
                "as two coders agreeing perfectly.",
                hint="give each coder's own DataFrame.",
                code="usage-same-sheet",
            )
        header, cells = _text_columns(frame, f"the DataFrame of coder {name!r}", options, code_columns)
        tables.append((name, _parsed(header, cells, np.arange(2, len(frame) + 2, dtype=np.int64))))
    return tables


def check_frame_coder(sheet: Sheet, name: str) -> None:
    """A coder's DataFrame names no other coder in its coder column."""
    if sheet.coder != name:
        raise UsageError(
            f"the DataFrame of coder {name!r} names the coder {sheet.coder!r} in its coder column.",
            hint="give each coder's DataFrame under that coder's name, or drop its coder column.",
            code="data-coder",
        )


def long_frame_sheets(frame: pd.DataFrame, options: SheetOptions) -> list[Sheet]:
    """One sheet per coder from one long DataFrame (comment_id, coder, code): each coder's
    rows, coders in order of first appearance, rows numbered as in the long frame."""
    return [
        sheet_from_parsed(parsed, Path(f"{name}.csv"), options) for name, parsed in long_frame_tables(frame, options)
    ]


def long_frame_tables(
    frame: pd.DataFrame, options: SheetOptions, code_columns: Sequence[str] = ()
) -> list[tuple[str, ParsedFile]]:
    """Each coder's rows of one long DataFrame as the table a sheet file parses into (as
    :func:`frame_tables`), coders in order of first appearance."""
    where = "the DataFrame"
    if not isinstance(frame, pd.DataFrame):
        raise UsageError(
            f"the data is a {type(frame).__name__}, not a pandas DataFrame.",
            hint="pass one DataFrame with the columns comment_id, coder and code, or a mapping {coder: DataFrame}.",
            code="data-form",
        )
    header, cells = _text_columns(frame, where, options, code_columns)
    refuse_column_in_index(frame, header, CODER_COLUMN, where)
    found = [at for at, name in enumerate(header) if _key(name) == CODER_COLUMN]
    if len(found) != 1:
        raise UsageError(
            f"{where} has {'no' if not found else len(found)} columns named {CODER_COLUMN!r}; one long DataFrame "
            "holds every coder's rows, each naming its coder.",
            hint="pass a DataFrame with the columns comment_id, coder and code, or a mapping {coder: DataFrame}.",
            code="data-form",
        )
    coders = pc.utf8_trim_whitespace(cells[found[0]])
    blank = np.flatnonzero(pc.equal(coders, "").to_numpy(zero_copy_only=False))
    if len(blank):
        raise UsageError(
            f"{where}: row {int(blank[0]) + 2} names no coder ({len(blank):,} rows do).",
            hint="fill the coder column of every row, or drop the rows that are not codes.",
            code="data-coder",
        )
    rows = np.arange(2, len(frame) + 2, dtype=np.int64)
    tables = []
    for coder in pc.unique(coders).to_pylist():
        mine = pc.equal(coders, coder)
        taken = [column.filter(mine) for column in cells]
        tables.append((_coder_name(coder), _parsed(header, taken, rows[mine.to_numpy(zero_copy_only=False)])))
    return tables


def refuse_column_in_index(frame: pd.DataFrame, header: list[str], wanted: str, where: str) -> None:
    """A column the frame holds in its index only (after ``set_index("comment_id")`` or a
    ``groupby``) is refused with that fix: the index is not read (it is no column of the frame's
    CSV form), and "no column comment_id" with a hint to rename a column would not say why."""
    if _key(wanted) in {_key(name) for name in header}:
        return
    if _key(wanted) in {_key(str(name)) for name in frame.index.names if name is not None}:
        raise SheetError(
            f"{where} has {wanted!r} in its index, not as a column: the index is not read.",
            hint="make it a column first: frame.reset_index().",
            code="sheet-missing-column",
        )


def _coder_name(coder: Any) -> str:
    """A coder's name, which also names the sheet (<coder>.csv): text, and no folder in it."""
    if not isinstance(coder, str) or not coder.strip() or "/" in coder or "\x00" in coder:
        raise UsageError(
            f"{coder!r} cannot name a coder: a coder's name is text, not blank, without '/'.",
            hint="name each coder with plain text, e.g. {'alice': frame_a, 'bob': frame_b}.",
            code="data-coder",
        )
    return coder


def _parsed(header: list[str], cells: list[pa.Array], rows: np.ndarray) -> ParsedFile:
    """The table as a sheet file parses into, fingerprinted by the bytes of its CSV form."""
    data = _csv_form(header, cells).encode("utf-8")
    return ParsedFile(RawTable(header=header, cells=cells, rows=rows), hashlib.sha256(data).hexdigest(), len(data))


def _csv_form(header: list[str], cells: list[pa.Array]) -> str:
    text = pd.DataFrame({at: column.to_numpy(zero_copy_only=False) for at, column in enumerate(cells)}, dtype=object)
    text.columns = pd.Index(header, dtype=object)
    return frame_csv_text(text, for_spreadsheets=False)


# --- cells as text ---------------------------------------------------------------


def _key(name: str) -> str:
    return name.strip().casefold()


def _text_columns(
    frame: pd.DataFrame, where: str, options: SheetOptions, code_columns: Sequence[str] = ()
) -> tuple[list[str], list[pa.Array]]:
    """The header and every column as text (pyarrow strings, a missing value as "")."""
    if options.worksheet is not None:
        raise UsageError(
            "worksheet chooses a worksheet of an XLSX sheet; a DataFrame has none.",
            hint="leave out worksheet.",
            code="data-form",
        )
    if options.delimiter is not None:  # passed over silently, it would seem to have been applied
        raise UsageError(
            "delimiter splits the lines of a .csv sheet; a DataFrame has no lines to split.",
            hint="leave out delimiter.",
            code="data-form",
        )
    header = [str(name) for name in frame.columns]
    refuse_column_in_index(frame, header, options.id_column or "comment_id", where)
    matched = {_key(name) for name in (options.id_column or "comment_id", options.code_column or "code")}
    matched |= {CODER_COLUMN, "rule_version", *(_key(name) for name in code_columns)}
    cells = []
    for at, name in enumerate(header):
        values = frame.iloc[:, at]
        refuse = name if _key(name) in matched else None
        cells.append(_text(values, f"{where}: column {name!r}", refuse_floats=refuse))
    return header, cells


def _text(values: pd.Series, where: str, *, refuse_floats: str | None) -> pa.Array:
    """One column as the text a CSV export writes (module docstring); ``refuse_floats``: the
    name of a column irr-audit matches on, where a float is refused. Bytes are refused in any
    column: to_csv writes b'yes' for them, pyarrow would read yes."""
    dtype = values.dtype
    missing = values.isna().to_numpy()
    if isinstance(dtype, pd.CategoricalDtype):  # the few categories, not every row
        return _categorical_text(values, missing, where, refuse_floats)
    if _is_arrow_binary(dtype):
        _refuse_bytes(values, missing, where)
    if pd.api.types.is_bool_dtype(dtype):
        flags = pa.array(values.to_numpy(dtype=bool, na_value=False), mask=missing)
        return pc.fill_null(pc.if_else(flags, "True", "False"), "")
    if pd.api.types.is_integer_dtype(dtype):
        numbers = pa.array(values.to_numpy(dtype=np.int64, na_value=0), mask=missing)
        return pc.fill_null(numbers.cast(pa.string()), "")
    if pd.api.types.is_string_dtype(dtype) or pd.api.types.is_object_dtype(dtype):
        try:
            # typed by pyarrow, not told: told "string", it would decode bytes; any bytes make it binary
            text = pa.array(values.astype(object).where(~missing, "").to_numpy())
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # not all text: each value as to_csv writes it
            _refuse_bytes(values, missing, where)
        except UnicodeEncodeError:
            raise _not_text(values, where) from None
        else:
            if pa.types.is_string(text.type):
                return text
            if pa.types.is_binary(text.type):
                _refuse_bytes(values, missing, where)
    if refuse_floats is not None:
        _refuse_floats(values, missing, where, refuse_floats)
    return _as_csv_writes(values, where)


def _categorical_text(values: pd.Series, missing: np.ndarray, where: str, refuse_floats: str | None) -> pa.Array:
    """A categorical column through its categories. A float or bytes category is looked for in
    the rows only when there is one: only a value some row holds is a cell."""
    categories = values.cat.categories
    mixed = pd.api.types.is_object_dtype(categories.dtype) and pd.api.types.infer_dtype(categories) != "string"
    floats = pd.api.types.is_float_dtype(categories.dtype) or (mixed and any(map(_is_float, categories)))
    if refuse_floats is not None and floats:
        _refuse_floats(values.astype(object), missing, where, refuse_floats)
    if mixed and any(isinstance(category, BYTES) for category in categories):
        _refuse_bytes(values.astype(object), missing, where)
        values = values.cat.remove_unused_categories()  # no row holds them: to_csv writes none
        categories = values.cat.categories
    labels = _text(pd.Series(categories, dtype=categories.dtype), where, refuse_floats=None)
    codes = values.cat.codes.to_numpy()
    return pc.fill_null(labels.take(pa.array(codes, mask=codes < 0)), "")


def _as_csv_writes(values: pd.Series, where: str) -> pa.Array:
    """The column's fields as pandas' to_csv writes them, read back (floats, dates, mixed objects)."""
    try:
        written = values.to_frame().to_csv(index=False, header=False, lineterminator="\n")
        fields = [record[0] if record else "" for record in csv_rows(written)]
        return pa.array(fields, type=pa.string())
    except UnicodeEncodeError:
        raise _not_text(values, where) from None


def _is_float(value: object) -> bool:
    """A floating-point number (a complex one too: two floats) that is not NaN, a missing value."""
    if isinstance(value, (float, np.floating)):
        return not math.isnan(value)
    return isinstance(value, (complex, np.complexfloating))


def _refuse_floats(values: pd.Series, missing: np.ndarray, where: str, column: str) -> None:
    for position, value in enumerate(values.to_numpy(dtype=object)):
        if not missing[position] and _is_float(value):
            raise SheetError(
                f"{where} holds the floating-point number {value!r} (row {position + 2}); ids and codes are "
                "text, and a number stored as a float has lost the text it was typed as (1.0 is not the code 1).",
                hint=READ_AS_TEXT_HINT.format(column=column),
                code="data-float",
            )


BYTES = (bytes, bytearray, memoryview)


def _is_arrow_binary(dtype: object) -> bool:
    """pandas' pyarrow-backed bytes (binary, or a dictionary of binary values)."""
    if not isinstance(dtype, pd.ArrowDtype):
        return False
    arrow = dtype.pyarrow_dtype
    arrow = arrow.value_type if pa.types.is_dictionary(arrow) else arrow
    return bool(pa.types.is_binary(arrow) or pa.types.is_large_binary(arrow) or pa.types.is_fixed_size_binary(arrow))


def _refuse_bytes(values: pd.Series, missing: np.ndarray, where: str) -> None:
    """Bytes are no text: decoded, they would read as the text; to_csv writes their repr."""
    for position, value in enumerate(values.to_numpy(dtype=object)):
        if not missing[position] and isinstance(value, BYTES):
            raise SheetError(
                f"{where} holds bytes, {bytes(value)[:40]!r} (row {position + 2}), which are no text.",
                hint=f"decode the column first, e.g. frame[{values.name!r}].str.decode('utf-8').",
                code="data-not-text",
            )


def _not_text(values: pd.Series, where: str) -> SheetError:
    position = next(
        (at for at, value in enumerate(values.to_numpy(dtype=object)) if _has_surrogate(value)), len(values) - 2
    )
    return SheetError(
        f"{where}, row {position + 2}, holds a lone surrogate (a half of a UTF-16 pair), which is no text.",
        hint="repair the value: it was decoded wrongly (e.g. read with errors='surrogateescape').",
        code="data-not-text",
    )


def _has_surrogate(value: object) -> bool:
    return isinstance(value, str) and any("\ud800" <= character <= "\udfff" for character in value)
