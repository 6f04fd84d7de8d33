"""CSV writing: the pyarrow writer must produce exactly what pandas writes."""

from __future__ import annotations

import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from irr_audit.io.framecsv import _arrow_csv, _pandas_csv, frame_csv_text

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=8) | st.sampled_from(
    ["", ",", '"', "\n", "\r", "\r\n", 'a"b,c', " lead", "trail ", "=SUM(A1)", "-1", "é,漢"]
)


@st.composite
def frames(draw) -> pd.DataFrame:
    rows = draw(st.integers(0, 12))
    columns: dict[str, object] = {}
    for at, kind in enumerate(
        draw(st.lists(st.sampled_from(["text", "category", "bool", "int", "Int64"]), min_size=2, max_size=5))
    ):
        name = draw(TEXT) + f"_{at}"
        if kind == "text":
            columns[name] = pd.Series(draw(st.lists(st.none() | TEXT, min_size=rows, max_size=rows)), dtype=object)
        elif kind == "category":
            columns[name] = pd.Categorical(draw(st.lists(st.none() | TEXT, min_size=rows, max_size=rows)))
        elif kind == "bool":
            columns[name] = draw(st.lists(st.booleans(), min_size=rows, max_size=rows))
        elif kind == "int":
            columns[name] = pd.Series(
                draw(st.lists(st.integers(-(10**12), 10**12), min_size=rows, max_size=rows)), dtype="int64"
            )
        else:
            columns[name] = pd.array(
                draw(st.lists(st.none() | st.integers(-99, 99), min_size=rows, max_size=rows)), dtype="Int64"
            )
    return pd.DataFrame(columns)


@given(frames())
def test_arrow_csv_writes_what_pandas_writes(frame: pd.DataFrame) -> None:
    """Byte for byte, for every column type the join's files hold (pandas' fields, with a lone
    carriage return quoted too)."""
    assert _arrow_csv(frame) == _pandas_csv(frame, for_spreadsheets=False)
    if "\r" not in frame.to_csv(index=False, lineterminator="\n"):
        assert _arrow_csv(frame) == frame.to_csv(index=False, lineterminator="\n")


@given(frames())
def test_csv_reads_back_as_written(frame: pd.DataFrame) -> None:
    """Every CSV reader gets the same rows back: no field with a line break or carriage return splits a row."""
    import csv
    import io

    text = frame_csv_text(frame, for_spreadsheets=False)
    records = list(csv.reader(io.StringIO(text, newline="")))
    assert len(records) == len(frame) + 1
    assert records[0] == [str(name) for name in frame.columns]


@given(frames())
def test_arrow_csv_neutralises_formulas_as_pandas_path_does(frame: pd.DataFrame) -> None:
    """With formulas neutralised for spreadsheets too (headers, text and codes)."""
    assert _arrow_csv(frame, for_spreadsheets=True) == _pandas_csv(frame, for_spreadsheets=True)


def test_arrow_csv_leaves_other_columns_to_pandas() -> None:
    """Floats and single-column frames are not covered: pandas writes them."""
    assert _arrow_csv(pd.DataFrame({"a": ["x"], "b": [0.5]})) is None
    assert _arrow_csv(pd.DataFrame({"a": [""]})) is None
    assert frame_csv_text(pd.DataFrame({"a": [""]})) == pd.DataFrame({"a": [""]}).to_csv(
        index=False, lineterminator="\n"
    )


def test_frame_csv_text_neutralises_formulas_in_text_and_codes() -> None:
    frame = pd.DataFrame({"comment_id": ["=cmd()", "-1", "ok"], "code": pd.Categorical(["@x", "yes", "yes"])})
    assert frame_csv_text(frame) == "comment_id,code\n'=cmd(),'@x\n-1,yes\nok,yes\n"
