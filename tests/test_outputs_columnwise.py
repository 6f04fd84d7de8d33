"""table_csv_text writes many rows a column at a time (irr_audit.io.textcolumns.csv_rows_text):
the same bytes as csv_text writes row by row, whatever the cells hold."""

from __future__ import annotations

from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from irr_audit.io import csvtables
from irr_audit.io.csvtables import table_csv_columns, table_csv_text
from irr_audit.io.outputs import Same, csv_text

# formula triggers, quotes, delimiters, line breaks, plain numbers, non-ASCII and no text at all
pieces = st.sampled_from(["", "a", "=", "+", "-", "@", "'", "1", "-1", "1e3", '"', ",", "\n", "\r", "\t", " ", "é"])
cells = (
    st.lists(pieces, max_size=4).map("".join)
    | st.none()
    | st.integers(-5, 5)
    | st.booleans()
    | st.floats()
    | st.sampled_from([b"x", b""])
)


@settings(max_examples=400, deadline=None)
@given(width=st.integers(1, 4), data=st.data())
def test_many_rows_are_the_same_bytes_as_row_by_row(width: int, data: st.DataObject) -> None:
    rows = data.draw(st.lists(st.lists(cells, min_size=width, max_size=width), max_size=12))
    header = [f"column {at}" for at in range(width)]
    with patch.object(csvtables, "COLUMNWISE_FROM", 0):
        assert table_csv_text(header, iter(rows)) == csv_text(header, rows)


def test_rows_of_other_widths_and_text_not_utf8_are_written_row_by_row() -> None:
    rows = [["a", "=b"], ["c"], ["d", "e", "f"]]
    with patch.object(csvtables, "COLUMNWISE_FROM", 0):
        assert table_csv_text(["x", "y"], rows) == "x,y\na,'=b\nc\nd,e,f\n"
        assert table_csv_text(["x", "y"], [[1, None]]) == "x,y\n1,\n"
        assert table_csv_text(["x", "y"], [["\udc80", "a"]]) == "x,y\n\udc80,a\n"  # not UTF-8: row by row


@settings(max_examples=300, deadline=None)
@given(width=st.integers(1, 4), length=st.integers(0, 8), data=st.data())
def test_columns_with_cells_the_same_on_every_row_are_the_same_bytes_as_row_by_row(
    width: int, length: int, data: st.DataObject
) -> None:
    columns = [
        Same(data.draw(cells))
        if data.draw(st.booleans())
        else data.draw(st.lists(cells, min_size=length, max_size=length))
        for _ in range(width)
    ]
    header = [f"column {at}" for at in range(width)]
    rows = [[column.cell if isinstance(column, Same) else column[at] for column in columns] for at in range(length)]
    with patch.object(csvtables, "COLUMNWISE_FROM", 0):
        assert table_csv_columns(header, columns, length) == csv_text(header, rows)
    assert table_csv_columns(header, columns, length) == csv_text(header, rows)
