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

from irr_audit.arrowtext import contains_any_byte, starts_with_any_byte
from irr_audit.errors import OutputError
from irr_audit.lazy_pandas import pandas

if TYPE_CHECKING:
    import pandas as pd

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
FORMULA_PATTERN = r"[=+\-@\t\r]"
PLAIN_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
QUOTE = "'"


def spreadsheet_safe(text: str) -> str:
    """Prefix a quote to text a spreadsheet would read as a formula (OWASP CSV injection),
    and to text that already starts with a quote, so that no two texts come out the same
    (``=a`` and ``'=a`` stay two coders) and :func:`spreadsheet_original` undoes it exactly.

    Plain numbers such as "-1" are left alone: they are data, not formulas.

    >>> spreadsheet_safe("=HYPERLINK(1)"), spreadsheet_safe("'=a"), spreadsheet_safe("-1"), spreadsheet_safe("ok")
    ("'=HYPERLINK(1)", "''=a", '-1', 'ok')
    """
    if text.startswith(QUOTE) or (text.startswith(FORMULA_TRIGGERS) and not PLAIN_NUMBER.fullmatch(text)):
        return QUOTE + text
    return text


def spreadsheet_original(text: str) -> str:
    """The text that :func:`spreadsheet_safe` made ``text`` from: its inverse on everything it writes.
    Text it never writes (a quote before ordinary text) is returned as it is.

    >>> spreadsheet_original("'=HYPERLINK(1)"), spreadsheet_original("''=a"), spreadsheet_original("'ok")
    ('=HYPERLINK(1)', "'=a", "'ok")
    """
    if text.startswith(QUOTE) and spreadsheet_safe(text[1:]) == text:
        return text[1:]
    return text


# A field holding any of these is quoted. The csv module (Python 3.11) leaves a lone carriage
# return bare when lines end with "\n", and every CSV reader then splits the row there.
CSV_SPECIAL = ',"\n\r'


def csv_field(text: str) -> str:
    """One CSV field, quoted only when it must be (as the csv module's QUOTE_MINIMAL, and a lone CR too)."""
    if any(character in text for character in CSV_SPECIAL):
        return '"' + text.replace('"', '""') + '"'
    return text


def csv_line(cells: Sequence[str]) -> str:
    if len(cells) == 1 and not cells[0]:  # a lone empty field is quoted, or the line would read as blank
        return '""\n'
    return ",".join(map(csv_field, cells)) + "\n"


def csv_text(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """CSV for people and spreadsheets: every cell as text, formulas neutralised."""
    lines = [csv_line([spreadsheet_safe(str(cell)) for cell in header])]
    lines += [csv_line(["" if cell is None else spreadsheet_safe(str(cell)) for cell in row]) for row in rows]
    return "".join(lines)


def refuse_column_collisions(columns: Sequence[tuple[str, str]], output: str) -> None:
    """The columns of a CSV, as written (neutralised), must all differ: a coder named like another
    column (``units``, say) would overwrite or shadow it. ``columns`` are (name, where it comes
    from: a sheet, or irr-audit itself)."""
    seen: dict[str, tuple[str, str]] = {}
    for name, origin in columns:
        written = spreadsheet_safe(name)
        if written in seen:
            first = seen[written]
            raise OutputError(
                f"{output} would have two columns named {written!r}: {first[0]!r} ({first[1]}) "
                f"and {name!r} ({origin}).",
                hint="give the coder another name (the sheet's coder column or its file name); "
                "comment_id, fully_coded and units name columns of irr-audit's files.",
                code="output-column-collision",
            )
        seen[written] = (name, origin)


def frame_csv_text(frame: pd.DataFrame, *, for_spreadsheets: bool = True) -> str:
    """A whole table as CSV in one vectorised pass: what `csv_text` does row by row.

    ``for_spreadsheets`` neutralises formula-looking text (the files people open);
    machine files (counts) keep every value exactly. The text is what pandas'
    ``to_csv`` writes, built with pyarrow's string kernels (a million rows in a
    fraction of pandas' time); pandas writes what those do not cover.
    """
    fast = _arrow_csv(frame, for_spreadsheets)
    return fast if fast is not None else _pandas_csv(frame, for_spreadsheets)


def _pandas_csv(frame: pd.DataFrame, for_spreadsheets: bool) -> str:
    pd = pandas()
    if for_spreadsheets:
        frame = frame.copy()
        frame.columns = [spreadsheet_safe(str(column)) for column in frame.columns]
        for column in frame.columns:
            values = frame[column]
            if isinstance(values.dtype, pd.CategoricalDtype):
                frame[column] = values.cat.rename_categories([spreadsheet_safe(str(c)) for c in values.cat.categories])
            elif pd.api.types.is_string_dtype(values) or pd.api.types.is_object_dtype(values):
                frame[column] = pd.Series(_neutralised(_text(values)).to_numpy(zero_copy_only=False),
                                          index=values.index, dtype=object)
    # Lines ending "\r\n" make the csv module quote every field with a carriage return;
    # the fields are then written again with "\n" line ends.
    text = frame.to_csv(index=False, lineterminator="\r\n")
    return "".join(csv_line(record) for record in csv.reader(io.StringIO(text, newline="")))


def _arrow_csv(frame: pd.DataFrame, for_spreadsheets: bool = False) -> str | None:
    """The CSV text of ``frame``, byte for byte as ``_pandas_csv`` writes it; None for
    a frame this does not cover (a column of floats or dates, mixed objects, a single column)."""
    import pyarrow.compute as pc

    if frame.shape[1] < 2:  # the csv module quotes a lone empty field; leave that to pandas
        return None
    header = csv_line([spreadsheet_safe(str(name)) if for_spreadsheets else str(name) for name in frame.columns])
    if not len(frame):
        return header
    fields = [_csv_fields(frame[name], for_spreadsheets) for name in frame.columns]
    if any(column is None for column in fields):
        return None
    lines = pc.binary_join_element_wise(*fields, ",")
    lines = pc.binary_join_element_wise(lines, "", "\n").cast(pa.large_string())  # each line ends with "\n"
    _, offsets, data = lines.buffers()
    bounds = np.frombuffer(offsets, dtype=np.int64)[lines.offset: lines.offset + len(lines) + 1]
    return header + data.slice(int(bounds[0]), int(bounds[-1] - bounds[0])).to_pybytes().decode("utf-8")


def _csv_fields(values: pd.Series, for_spreadsheets: bool) -> pa.Array | None:
    """One column's CSV fields (text, neutralised when asked, quoted where needed)."""
    import pyarrow.compute as pc

    pd = pandas()
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
    return _quoted(_neutralised(text) if for_spreadsheets else text)


def _text(values: pd.Series) -> pa.Array:
    """A text column as pyarrow strings, a missing value as the empty string."""
    import pyarrow.compute as pc

    if hasattr(values.array, "__arrow_array__"):  # pandas' pyarrow-backed strings: no copy
        arrow = pa.array(values.array)
        arrow = arrow.combine_chunks() if isinstance(arrow, pa.ChunkedArray) else arrow
        return pc.fill_null(arrow.cast(pa.string()), "")
    return pa.array(values.astype(object).where(values.notna(), "").to_numpy(), type=pa.string())


def _quoted(text: pa.Array) -> pa.Array:
    """Quoted as the csv module quotes (QUOTE_MINIMAL): only text holding a comma, a quote or a line break."""
    import pyarrow.compute as pc

    if not contains_any_byte(text, CSV_SPECIAL.encode()):
        return text
    quoted = pc.binary_join_element_wise('"', pc.replace_substring(text, '"', '""'), '"', "")
    return pc.if_else(pc.match_substring_regex(text, "[" + CSV_SPECIAL + "]"), quoted, text)


def _neutralised(text: pa.Array) -> pa.Array:
    """spreadsheet_safe on every value."""
    import pyarrow.compute as pc

    if not starts_with_any_byte(text, ("".join(FORMULA_TRIGGERS) + QUOTE).encode()):
        return text
    formula = pc.and_(pc.match_substring_regex(text, "^" + FORMULA_PATTERN),
                      pc.invert(pc.match_substring_regex(text, "^" + PLAIN_NUMBER.pattern + "$")))
    prefixed = pc.or_(formula, pc.starts_with(text, QUOTE))
    return pc.if_else(prefixed, pc.binary_join_element_wise(QUOTE, text, ""), text)


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
