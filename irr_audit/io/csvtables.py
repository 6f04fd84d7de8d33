"""CSV for people and spreadsheets at any size: ``csv_text`` of irr_audit.io.outputs, with many
rows made a column at a time (irr_audit.io.textcolumns; pyarrow is loaded for those only). The
same bytes either way (tests/test_outputs_columnwise.py)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from irr_audit.io.outputs import csv_text

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
