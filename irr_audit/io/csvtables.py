"""CSV for people and spreadsheets at any size: ``csv_text`` of irr_audit.io.outputs, with many
rows made a column at a time (irr_audit.io.textcolumns; pyarrow is loaded for those only). The
same bytes either way (tests/test_outputs_columnwise.py)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from irr_audit.io.outputs import Same, csv_text

COLUMNWISE_FROM = 10_000  # rows from which the fields are made a column at a time


def table_csv_text(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """``csv_text(header, rows)``: every cell as text, formulas neutralised."""
    rows = rows if isinstance(rows, list) else list(rows)
    if len(rows) >= COLUMNWISE_FROM:
        from irr_audit.io.textcolumns import csv_rows_text  # noqa: PLC0415 (pyarrow: for large tables only)

        body = csv_rows_text(rows, len(header))
        if body is not None:
            return csv_text(header, []) + body
    return csv_text(header, rows)


def table_csv_columns(header: Sequence[str], columns: Sequence[Sequence[object] | Same], length: int) -> str:
    """``table_csv_text`` of the rows these columns make (each ``length`` cells long; a ``Same``
    column the same cell on every row), without making the rows when there are many."""
    if length >= COLUMNWISE_FROM and len(columns) >= 2 and not all(isinstance(column, Same) for column in columns):
        from irr_audit.io.textcolumns import csv_columns_text  # noqa: PLC0415 (pyarrow: for large tables only)

        body = csv_columns_text(columns)
        if body is not None:
            return csv_text(header, []) + body
    return csv_text(header, rows_of(columns, length))


def rows_of(columns: Sequence[Sequence[object] | Same], length: int) -> list[tuple[object, ...]]:
    """The rows that columns make (a ``Same`` column gives its cell to every row)."""
    cells = [[column.cell] * length if isinstance(column, Same) else column for column in columns]
    return list(zip(*cells)) if cells else [() for _ in range(length)]
