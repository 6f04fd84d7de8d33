"""Writing files: atomically (a kill leaves the old file or the new one, never half),
and safely for spreadsheets (text that Excel would run as a formula is neutralised)."""

from __future__ import annotations

import csv
import io
import os
import re
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from irr_audit.errors import OutputError
from irr_audit.lazy_pandas import pandas

if TYPE_CHECKING:
    import pandas as pd

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
FORMULA_PATTERN = r"[=+\-@\t\r]"
PLAIN_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def spreadsheet_safe(text: str) -> str:
    """Prefix a quote to text a spreadsheet would read as a formula (OWASP CSV injection).

    Plain numbers such as "-1" are left alone: they are data, not formulas.

    >>> spreadsheet_safe("=HYPERLINK(1)"), spreadsheet_safe("-1"), spreadsheet_safe("ok")
    ("'=HYPERLINK(1)", '-1', 'ok')
    """
    if text.startswith(FORMULA_TRIGGERS) and not PLAIN_NUMBER.fullmatch(text):
        return "'" + text
    return text


def csv_text(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """CSV for people and spreadsheets: every cell as text, formulas neutralised."""
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([spreadsheet_safe(str(cell)) for cell in header])
    for row in rows:
        writer.writerow(["" if cell is None else spreadsheet_safe(str(cell)) for cell in row])
    return buffer.getvalue()


def frame_csv_text(frame: pd.DataFrame, *, for_spreadsheets: bool = True) -> str:
    """A whole table as CSV in one vectorised pass: what `csv_text` does row by row.

    ``for_spreadsheets`` neutralises formula-looking text (the files people open);
    machine files (counts) keep every value exactly. Categorical columns (codes)
    are neutralised once per category, text columns with pyarrow's regex kernels.
    """
    pd = pandas()

    if for_spreadsheets:
        frame = frame.copy()
        frame.columns = [spreadsheet_safe(str(column)) for column in frame.columns]
        for column in frame.columns:
            values = frame[column]
            if isinstance(values.dtype, pd.CategoricalDtype):
                frame[column] = values.cat.rename_categories([spreadsheet_safe(str(c)) for c in values.cat.categories])
            elif pd.api.types.is_string_dtype(values) or values.dtype == object:
                frame[column] = _neutralised(values)
    fast = _arrow_csv(frame)
    return fast if fast is not None else frame.to_csv(index=False, lineterminator="\n")


def _quoted_by_csv_module(character: str) -> bool:
    buffer = io.StringIO(newline="")
    csv.writer(buffer, lineterminator="\n").writerow([f"a{character}b", "c"])
    return buffer.getvalue().startswith('"')


# What makes Python's csv module (and so pandas) quote a field: asked of the module
# itself, since versions differ on a lone carriage return.
CSV_SPECIAL = "[" + "".join(c for c in ',"\n\r' if _quoted_by_csv_module(c)) + "]"


def _arrow_csv(frame: pd.DataFrame) -> str | None:
    """``frame.to_csv(index=False, lineterminator="\\n")``, byte for byte, built with
    pyarrow's string kernels: a million rows in a fraction of pandas' time. None for
    a frame it does not cover (a column of another type, a single column), which
    pandas then writes."""
    import pyarrow.compute as pc

    if frame.shape[1] < 2:  # the csv module quotes a lone empty field; leave that to pandas
        return None
    buffer = io.StringIO(newline="")
    csv.writer(buffer, lineterminator="\n").writerow([str(name) for name in frame.columns])
    header = buffer.getvalue()  # as pandas writes it: the csv module's quoting (names were neutralised above)
    if not len(frame):
        return header
    columns = [_column_text(frame[name]) for name in frame.columns]
    if any(column is None for column in columns):
        return None
    lines = pc.binary_join_element_wise(*map(_csv_field, columns), ",")
    lines = pc.binary_join_element_wise(lines, "", "\n").cast(pa.large_string())  # each line ends with "\n"
    _, offsets, data = lines.buffers()
    bounds = np.frombuffer(offsets, dtype=np.int64)[lines.offset: lines.offset + len(lines) + 1]
    return header + data.slice(int(bounds[0]), int(bounds[-1] - bounds[0])).to_pybytes().decode("utf-8")


def _column_text(values: pd.Series) -> pa.Array | None:
    """A column as pandas writes it into CSV, as pyarrow strings without nulls; None
    for a type this does not cover (floats, dates, mixed objects)."""
    import pyarrow.compute as pc

    pd = pandas()
    dtype = values.dtype
    missing = values.isna().to_numpy()
    if isinstance(dtype, pd.CategoricalDtype):
        categories = _column_text(pd.Series(dtype.categories, dtype=object))
        codes = values.cat.codes.to_numpy()
        return None if categories is None else pc.fill_null(categories.take(pa.array(codes, mask=codes < 0)), "")
    if pd.api.types.is_bool_dtype(dtype):
        flags = pa.array(values.to_numpy(dtype=bool, na_value=False), mask=missing)
        return pc.fill_null(pc.if_else(flags, "True", "False"), "")
    if pd.api.types.is_integer_dtype(dtype):
        numbers = pa.array(values.to_numpy(dtype=np.int64, na_value=0), mask=missing)
        return pc.fill_null(numbers.cast(pa.string()), "")
    if pd.api.types.is_string_dtype(dtype) or pd.api.types.is_object_dtype(dtype):
        try:
            return pa.array(values.astype(object).where(~missing, "").to_numpy(), type=pa.string())
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # not all text: pandas writes each value's str()
            return None
    return None


def _csv_field(text: pa.Array) -> pa.Array:
    """Quoted as the csv module quotes (QUOTE_MINIMAL): only text holding a comma, a quote or a line break."""
    import pyarrow.compute as pc

    quoted = pc.binary_join_element_wise('"', pc.replace_substring(text, '"', '""'), '"', "")
    return pc.if_else(pc.match_substring_regex(text, CSV_SPECIAL), quoted, text)


def _neutralised(values: pd.Series) -> pd.Series:
    pd = pandas()
    import pyarrow as pa
    import pyarrow.compute as pc

    text = pa.array(values.astype(object).where(values.notna(), "").to_numpy(), type=pa.string())
    formula = pc.and_(pc.match_substring_regex(text, "^" + FORMULA_PATTERN),
                      pc.invert(pc.match_substring_regex(text, "^" + PLAIN_NUMBER.pattern + "$")))
    safe = pc.if_else(formula, pc.binary_join_element_wise("'", text, ""), text)
    return pd.Series(safe.to_numpy(zero_copy_only=False), index=values.index, dtype=object)


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write to a temporary file in the same folder, flush it to disk, then rename."""
    folder = path.parent
    if path.is_dir():
        raise OutputError(f"cannot write {path}: it is a folder.", hint="give a file name, e.g. audit.html.",
                          code="output-is-a-folder")
    if folder.exists() and not folder.is_dir():
        raise OutputError(f"cannot write into {folder}: it is a file, not a folder.",
                          hint="choose an output folder that does not exist yet or is a folder.",
                          code="output-unwritable")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise OutputError(
            f"cannot write into {folder}: {exc.strerror}.",
            hint="choose an output folder you can write to.",
            code="output-unwritable",
        ) from None
    try:
        os.chmod(temporary, 0o666 & ~_umask())  # mkstemp makes 0600; outputs get the usual permissions
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except OSError as exc:
        Path(temporary).unlink(missing_ok=True)
        raise OutputError(
            f"cannot write {path}: {exc.strerror}.",
            hint="check the folder's permissions and free space.",
            code="output-unwritable",
        ) from None


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def write_text_atomic(path: Path, text: str) -> None:
    write_bytes_atomic(path, text.encode("utf-8"))


def refuse_overwriting_inputs(outputs: Iterable[Path], inputs: Iterable[Path]) -> None:
    """An output that would replace an input file is an error: originals are never modified."""
    protected = {path.resolve() for path in inputs}
    for output in outputs:
        if output.resolve() in protected:
            raise OutputError(
                f"writing {output} would overwrite an input file.",
                hint="choose another --out folder; input sheets are never modified.",
                code="output-overwrites-input",
            )
