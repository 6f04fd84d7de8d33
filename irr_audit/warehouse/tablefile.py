"""Checks on a long table's file made before an engine reads it, the same for DuckDB and Spark.

An engine reads what it is given without a word where a sheet would be refused: a CSV quote
never closed swallows the rest of the file as one value; a Parquet column named twice is
renamed (DuckDB) or one of the two picked; a float or a list is cast to text no sheet holds.
These checks read the file itself (its bytes, or its Parquet schema through pyarrow), so each
engine runs the very same function: irr_audit.warehouse.duckdb_counts and
irr_audit.warehouse.spark_counts (where the driver can open the table as a local file).
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

import pyarrow as pa

from irr_audit.errors import SheetError
from irr_audit.io.csvfields import first_csv_row
from irr_audit.io.delimiter import SAMPLE_BYTES
from irr_audit.io.files import shown_name, unreadable
from irr_audit.warehouse.longtable import LongTableColumns, column_places

READ_CHUNK = 1 << 24  # the CSV read in 16 MiB pieces to count its quotes


def check_table_file(path: str | Path, file_format: str, delimiter: str, columns: LongTableColumns) -> None:
    """The checks made on the table's file before the engine reads it, where ``path`` is a local
    file (a folder of Parquet files, or a path on a cluster's file system, is left to the engine):
    a CSV's quotes and header (``file_format`` "csv"), else the Parquet schema's columns."""
    table = Path(path)
    if not table.is_file():
        return
    source = f"table {table.name}"
    if file_format == "csv":
        refuse_unclosed_quote(table, delimiter)
        column_places(csv_header(_head(table), delimiter), columns, source)  # Spark makes names unique
        return
    schema = parquet_schema(table)
    check_parquet_columns(schema, column_places(schema.names, columns, source), source)


# --- a CSV's quotes -----------------------------------------------------------------------------


def csv_header(head: bytes, delimiter: str) -> list[str]:
    """The column names of a CSV from its first bytes (any line end: \\n, \\r\\n or \\r; a
    byte-order mark dropped), as the engines are told to read them."""
    return first_csv_row(head.decode("utf-8", errors="replace").lstrip("\ufeff"), delimiter=delimiter) or []


def _head(table: Path) -> bytes:
    try:
        with open(table, "rb") as stream:
            return stream.read(SAMPLE_BYTES)
    except OSError as exc:
        raise unreadable(f"table {shown_name(table)}", exc, "table", "check the path of the long table.") from None


def refuse_unclosed_quote(table: Path, delimiter: str) -> None:
    """Refuse a CSV with a quote left open, as join refuses such a sheet: DuckDB, even in strict mode,
    reads the value it opens to the end of the file as a null (Spark as one value), and the rows
    after it are lost."""
    opened = unclosed_quote_line(_chunks(table), delimiter.encode("utf-8"))
    if opened is not None:
        raise SheetError(
            f"table {table.name}: the quote opened on line {opened} is never closed: everything after it "
            "would be read as one value.",
            hint=f"close the quote at the end of the value on line {opened}; a quote that is part of the text is "
            'written as two quotes ("") inside a quoted value.',
            code="table-unclosed-quote",
        )


def unclosed_quote_line(chunks: Iterable[bytes], delimiter: bytes) -> int | None:
    """The line of the quote that opens a value never closed, or None. A quote opens a value at the
    start of a field (a quote inside an unquoted field is text, as DuckDB and the csv module read it);
    inside, "" is a quote of the text. A chunk never ends on a quote (carried to the next), so that
    "" is never split, and the byte before each chunk is kept for the look at a field's start."""
    boundary = re.escape(delimiter) + rb"\r\n"
    quoted = rb'[^"]*+(?:""[^"]*+)*+"'  # the rest of a quoted value, to its closing quote
    outside = re.compile(rb"(?:(?<=[" + boundary + rb'])"' + quoted + rb'|[^"]++|(?<=[^' + boundary + rb'])")*+')
    inside = re.compile(quoted)
    opened: int | None = None  # the line of the open quote while inside a quoted value
    lines, before, carried = 1, b"\n", b""
    for piece in itertools.chain(chunks, [None]):
        data = carried + (piece or b"")
        if piece is not None:
            kept = len(data.rstrip(b'"'))
            data, carried = data[:kept], data[kept:]
        if not data or (opened is None and b'"' not in data):  # most chunks: no quote to look at
            lines, before = lines + _line_ends(data, before), data[-1:] or before
            continue
        text = before + data
        at = 1
        if opened is not None:
            closed = inside.match(text, at)
            at = closed.end() if closed else len(text)
            opened = None if closed else opened
        while opened is None and at < len(text):
            found = outside.match(text, at)  # never None: the pattern matches the empty string
            at = found.end() if found else len(text)
            if at < len(text):  # a quote at a field's start, not closed in this chunk
                opened = lines + _line_ends(data, before, at - 1)
                closed = inside.match(text, at + 1)
                at, opened = (closed.end(), None) if closed else (len(text), opened)
        lines += _line_ends(data, before)
        before = data[-1:]
    return opened


def _line_ends(data: bytes, before: bytes, end: int | None = None) -> int:
    """The line ends in ``data[:end]`` as an editor counts them: \\n, \\r and \\r\\n, one each.
    ``before``, the byte before ``data``: a \\r\\n split between two chunks counts once."""
    end = len(data) if end is None else end
    ends = data.count(b"\n", 0, end)
    if before == b"\r" or b"\r" in data:  # most files end lines with \n alone: one count
        split = before == b"\r" and data[:1] == b"\n" and end > 0
        ends += data.count(b"\r", 0, end) - data.count(b"\r\n", 0, end) - split
    return ends


def _chunks(table: Path) -> Iterator[bytes]:
    try:
        with open(table, "rb") as stream:
            yield from iter(functools.partial(stream.read, READ_CHUNK), b"")
    except OSError as exc:
        raise unreadable(f"table {shown_name(table)}", exc, "table", "check the path of the long table.") from None


# --- a Parquet file's columns -------------------------------------------------------------------


def parquet_schema(table: Path) -> pa.Schema:
    """The Parquet file's schema, its columns named as written (DuckDB makes the names unique: a
    second `code`, or `CODE`, becomes code_1, which would hide a column named twice)."""
    import pyarrow.parquet as pq  # noqa: PLC0415 - only for a Parquet table

    try:
        return pq.read_schema(table)
    except (OSError, pa.ArrowException) as error:
        raise SheetError(
            f"table {table.name} cannot be read: {(str(error).strip().splitlines() or [type(error).__name__])[0]}",
            hint="check that the file is a CSV (UTF-8, one header line) or a Parquet file, and its delimiter.",
            code="table-unreadable",
        ) from None


def _is_text(kind: pa.DataType) -> bool:
    is_view = getattr(pa.types, "is_string_view", lambda _: False)  # pyarrow 16 has it; a guard for the odd build
    return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind) or is_view(kind))


def _is_id(kind: pa.DataType) -> bool:
    return _is_text(kind) or bool(pa.types.is_integer(kind))


def _is_name(kind: pa.DataType) -> bool:
    return _is_id(kind) or bool(pa.types.is_boolean(kind) or pa.types.is_null(kind))


def check_parquet_columns(schema: pa.Schema, places: Sequence[int], source: str) -> None:
    """The id column holds text or integers, the coder and code columns text, integers or booleans
    (plain or dictionary-encoded; a column of nulls alone is blank cells). ``places``: the id's,
    the coder's and the code's column in ``schema``."""
    id_at, coder_at, code_at = places
    _check_type(schema, id_at, _is_id, source, "id", "--id-column")
    _check_type(schema, coder_at, _is_name, source, "coder", "--coder-column")
    _check_type(schema, code_at, _is_name, source, "code", "--code-column")


def _check_type(
    schema: pa.Schema, at: int, allowed: Callable[[pa.DataType], bool], source: str, role: str, option: str
) -> None:
    kind = schema.field(at).type
    if allowed(kind.value_type if pa.types.is_dictionary(kind) else kind):
        return
    column = schema.names[at]
    if role == "id":  # a float, a decimal or a date has lost the id's digits as typed (join refuses them too)
        raise SheetError(
            f"{source}: its id column {column!r} holds {kind} values, not text or integers: the ids as typed "
            "cannot be read back from them.",
            hint="store the ids as text (VARCHAR) or integers.",
            code="table-id-type",
        )
    # 1.0 (a float), [yes] (a list), b'\xC3\xA9' (bytes) would be invalid codes or new coders, every one
    raise SheetError(
        f"{source}: its {role} column {column!r} holds {kind} values, not text: they cannot be read as a sheet's "
        "cells (1.0 is not the code 1, nor [yes] the code yes).",
        hint=f"store the column as text (VARCHAR) or integers, or pass {option} naming the right column.",
        code="table-column-type",
    )
