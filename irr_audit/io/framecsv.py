"""A whole DataFrame as CSV text in one vectorised pass (a codebook join's tables and log,
a long table's counts): what irr_audit.io.outputs.csv_text does row by row. A rule's join
folder is written from the join's arrays, without a frame (irr_audit.join.writers); both
make their fields with irr_audit.io.textcolumns."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from irr_audit.io.csvfields import csv_rows
from irr_audit.io.outputs import csv_line, spreadsheet_safe
from irr_audit.io.textcolumns import csv_lines_text, neutralised, text_fields


def frame_csv_text(frame: pd.DataFrame, *, for_spreadsheets: bool = True) -> str:
    """A whole table as CSV in one vectorised pass: what `csv_text` does row by row.

    ``for_spreadsheets`` (every CSV irr-audit writes, counts.csv included) neutralises
    formula-looking text; False keeps every value exactly (a DataFrame's CSV form,
    which irr_audit.io.dataframes only fingerprints). The text is what pandas'
    ``to_csv`` writes, built with pyarrow's string kernels (a million rows in a
    fraction of pandas' time); pandas writes what those do not cover.
    """
    fast = _arrow_csv(frame, for_spreadsheets)
    return fast if fast is not None else _pandas_csv(frame, for_spreadsheets)


def _pandas_csv(frame: pd.DataFrame, for_spreadsheets: bool) -> str:
    if for_spreadsheets:
        frame = frame.copy()
        frame.columns = [spreadsheet_safe(str(column)) for column in frame.columns]
        # by position: a sheet may name two columns alike (a file's header can), and frame[name] is then a frame
        for at in range(frame.shape[1]):
            values = frame.iloc[:, at]
            if isinstance(values.dtype, pd.CategoricalDtype):
                safe = [spreadsheet_safe(str(category)) for category in values.cat.categories]
                frame.isetitem(at, values.cat.rename_categories(safe).array)
            elif pd.api.types.is_string_dtype(values) or pd.api.types.is_object_dtype(values):
                neutral = neutralised(_text(values)).to_numpy(zero_copy_only=False)
                frame.isetitem(at, pd.Series(neutral, index=values.index, dtype=object))
    # Lines ending "\r\n" make the csv module quote every field with a carriage return;
    # the fields are then written again with "\n" line ends.
    text = frame.to_csv(index=False, lineterminator="\r\n")
    return "".join(csv_line(record) for record in csv_rows(text))


def _arrow_csv(frame: pd.DataFrame, for_spreadsheets: bool = False) -> str | None:
    """The CSV text of ``frame``, byte for byte as ``_pandas_csv`` writes it; None for
    a frame this does not cover (a column of floats or dates, mixed objects, a single column)."""
    if frame.shape[1] < 2:  # the csv module quotes a lone empty field; leave that to pandas
        return None
    header = csv_line([spreadsheet_safe(str(name)) if for_spreadsheets else str(name) for name in frame.columns])
    if not len(frame):
        return header
    # by position: two columns may share a name (frame[name] is then a frame)
    fields = [_csv_fields(frame.iloc[:, at], for_spreadsheets) for at in range(frame.shape[1])]
    if any(column is None for column in fields):
        return None
    return header + csv_lines_text(fields)


def _csv_fields(values: pd.Series, for_spreadsheets: bool) -> pa.Array | None:
    """One column's CSV fields (text, neutralised when asked, quoted where needed)."""
    if isinstance(values.dtype, pd.CategoricalDtype):  # the few categories, not every row
        labels = _csv_fields(pd.Series(values.cat.categories, dtype=object), for_spreadsheets)
        codes = values.cat.codes.to_numpy()
        return None if labels is None else pc.fill_null(labels.take(pa.array(codes, mask=codes < 0)), "")
    missing = values.isna().to_numpy()
    if pd.api.types.is_bool_dtype(values.dtype):
        flags = pa.array(values.to_numpy(dtype=bool, na_value=False), mask=missing)
        return pc.fill_null(pc.if_else(flags, "True", "False"), "")
    if pd.api.types.is_integer_dtype(values.dtype):
        numbers = pa.array(values.to_numpy(dtype=np.int64, na_value=0), mask=missing)
        return pc.fill_null(numbers.cast(pa.string()), "")
    if not (pd.api.types.is_string_dtype(values.dtype) or pd.api.types.is_object_dtype(values.dtype)):
        return None
    try:
        text = _text(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # not all text: pandas writes each value's str()
        return None
    return text_fields(text, for_spreadsheets)


def _text(values: pd.Series) -> pa.Array:
    """A text column as pyarrow strings, a missing value as the empty string."""
    if hasattr(values.array, "__arrow_array__"):  # pandas' pyarrow-backed strings: no copy
        arrow = pa.array(values.array)
        arrow = arrow.combine_chunks() if isinstance(arrow, pa.ChunkedArray) else arrow
        return pc.fill_null(arrow.cast(pa.string()), "")
    return pa.array(values.astype(object).where(values.notna(), "").to_numpy(), type=pa.string())
