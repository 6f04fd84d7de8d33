"""Large text files built column-wise with pyarrow: JSON strings of a whole column, and lines
joined from columns of pieces, as bytes ready to write (irr-audit join's joined.csv and
missingness log at ten million rows).

Each function gives exactly what the row-by-row writers of irr_audit.io.outputs give
(json_line, csv_line): the common case (plain ids and codes) in a few vectorised passes,
every value that needs escaping through those writers themselves.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from irr_audit.io.arrowtext import (
    contains_any_byte,
    from_numpy,
    starts_with_any_byte,
    string_array,
    string_buffers,
    to_numpy,
)
from irr_audit.io.outputs import CSV_SPECIAL, FORMULA_PATTERN, FORMULA_TRIGGERS, PLAIN_NUMBER, QUOTE, Same, json_line

# What json_line writes as an escape inside a string: the quote, the backslash, the C0
# controls (json), and DEL, the C1 controls, the bidi controls and the line and paragraph
# separators (its _escaped_json). Lone surrogates, which it escapes too, cannot be in UTF-8 text.
# Written with escapes and these characters, so that pyarrow's RE2 reads it as Python's re does.
JSON_ESCAPED = '["\\\\\\x00-\\x1f\\x7f-\\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]'
_ASCII_ESCAPED = (0x22, 0x5C, 0x7F)  # besides the bytes below 0x20
_LEAD_BYTES = (0xC2, 0xD8, 0xE2)  # the first UTF-8 byte of every non-ASCII character in JSON_ESCAPED


def json_string_bodies(text: pa.Array) -> pa.Array:
    """Each value as json_line writes it inside its quotes (``a"b`` -> ``a\\"b``); a missing
    value (which json writes as null, with no quotes) as the empty string."""
    if text.null_count:
        text = pc.fill_null(text, text_scalar(""))
    if not _may_need_escape(text):
        return text
    escaped = pc.match_substring_regex(text, JSON_ESCAPED)
    at = np.flatnonzero(to_numpy(escaped))
    if not len(at):
        return text
    bodies = [json_literal(value)[1:-1] for value in text.take(from_numpy(at)).to_pylist()]
    return _replaced(text, at, string_array(bodies).cast(text.type))


def _may_need_escape(text: pa.Array) -> bool:
    """False only when no value holds a byte that can begin a character json_line escapes."""
    buffers = string_buffers(text)
    if buffers is None:
        return True
    offsets, data = buffers
    used = data[offsets[0] : offsets[-1]] if len(offsets) else data[:0]
    if not len(used):
        return False
    candidates = _ASCII_ESCAPED if used.max() < 0x80 else _ASCII_ESCAPED + _LEAD_BYTES
    return bool((used < 0x20).any()) or any(byte in used for byte in candidates)


def _replaced(text: pa.Array, at: np.ndarray, values: pa.Array) -> pa.Array:
    """``text`` with the values at positions ``at`` replaced by ``values``."""
    order = np.arange(len(text), dtype=np.int64)
    order[at] = len(text) + np.arange(len(at), dtype=np.int64)
    return pa.concat_arrays([text, values]).take(from_numpy(order))


def joined_lines(pieces: Sequence[pa.Array | str], separator: str = "") -> memoryview:
    """The pieces of each line joined, ``separator`` between them (a text is the same in every
    line), all lines as one block of UTF-8 bytes; at least one piece is a column."""
    columns = [text_scalar(piece) if isinstance(piece, str) else piece for piece in pieces]
    return text_bytes(pc.binary_join_element_wise(*columns, text_scalar(separator)))


def text_scalar(text: str) -> pa.Scalar:
    """A text as a pyarrow scalar, to pass to a kernel: as pyarrow makes it from a str,
    without pyarrow's conversion (which loads pandas on its first call, 0.3 s)."""
    return string_array([text])[0]


def text_bytes(lines: pa.Array) -> memoryview:
    """A string array's values, one after another, as bytes (a view of its buffer: no copy)."""
    buffers = string_buffers(lines)
    if buffers is None:  # nulls, which no caller joins
        raise ValueError("a missing value has no text")
    offsets, data = buffers
    return data[int(offsets[0]) : int(offsets[-1])].data


def json_literal(value: object) -> str:
    """A value as json_line writes it (a string with its quotes)."""
    return json_line({"": value}, compact=True)[4:-2]  # of '{"":...}\n'


# --- CSV fields -------------------------------------------------------------------------


def text_fields(text: pa.Array, for_spreadsheets: bool = True) -> pa.Array:
    """The CSV fields of a text column as :func:`frame_csv_text` writes them (neutralised when
    asked, quoted where needed), a missing value as the empty field."""
    text = pc.fill_null(text, text_scalar("")) if text.null_count else text
    return _quoted(neutralised(text) if for_spreadsheets else text)


def csv_rows_text(rows: Sequence[Sequence[object]], width: int) -> str | None:
    """The CSV lines of rows of ``width`` cells (None: an empty field, anything else its str()),
    as ``csv_text`` writes them row by row, made a column at a time; None when a row is not that
    (a row of another width, text that is not UTF-8), for ``csv_text`` to write."""
    if width < 2 or any(len(row) != width for row in rows):  # (a lone empty field is quoted: csv_line)
        return None
    if not rows:
        return ""
    return csv_columns_text(list(zip(*rows)))


def csv_columns_text(columns: Sequence[Sequence[object] | Same]) -> str | None:
    """The CSV lines of two or more columns of one length (cells as in ``csv_rows_text``; a
    ``Same`` column holds one cell on every line, its field made once), as ``csv_text`` writes
    their rows; None for text that is not UTF-8, for ``csv_text`` to write."""
    try:
        fields = [
            _same_field(column.cell) if isinstance(column, Same) else text_fields(_texts(column)) for column in columns
        ]
    except UnicodeEncodeError:
        return None
    return csv_lines_text(fields)


def _same_field(cell: object) -> pa.Scalar:
    """The CSV field of one cell, as a scalar that a line join repeats on every line."""
    return text_fields(_texts([cell]))[0]


def csv_lines_text(fields: Sequence[pa.Array | pa.Scalar]) -> str:
    """Columns of CSV fields (two or more, of equal length; a scalar is the same field on every line,
    and at least one is a column) as the text of their lines, each ending "\n"."""
    lines = pc.binary_join_element_wise(*fields, text_scalar(","))
    lines = pc.binary_join_element_wise(lines, text_scalar(""), text_scalar("\n")).cast(pa.large_string())
    _, offsets, data = lines.buffers()
    bounds = np.frombuffer(offsets, dtype=np.int64)[lines.offset : lines.offset + len(lines) + 1]
    return data.slice(int(bounds[0]), int(bounds[-1] - bounds[0])).to_pybytes().decode("utf-8")


def _texts(cells: Sequence[object]) -> pa.Array:
    """Cells as text: None as a missing value, anything but text as its str() (True, not true;
    b'x' for bytes, as csv_text writes them)."""
    try:
        found = pa.array(cells)
    except (pa.ArrowTypeError, pa.ArrowInvalid):
        found = None
    if found is not None and (pa.types.is_string(found.type) or pa.types.is_null(found.type)):
        return found.cast(pa.string())
    return pa.array([cell if cell is None or isinstance(cell, str) else str(cell) for cell in cells], pa.string())


def _quoted(text: pa.Array) -> pa.Array:
    """Quoted as the csv module quotes (QUOTE_MINIMAL): only text holding a comma, a quote or a line break."""
    if not contains_any_byte(text, CSV_SPECIAL.encode()):
        return text
    quote = text_scalar('"')
    quoted = pc.binary_join_element_wise(quote, pc.replace_substring(text, '"', '""'), quote, text_scalar(""))
    return pc.if_else(pc.match_substring_regex(text, "[" + CSV_SPECIAL + "]"), quoted, text)


def neutralised(text: pa.Array) -> pa.Array:
    """spreadsheet_safe on every value."""
    if not starts_with_any_byte(text, ("".join(FORMULA_TRIGGERS) + QUOTE).encode()):
        return text
    formula = pc.and_(
        pc.match_substring_regex(text, "^" + FORMULA_PATTERN),
        pc.invert(pc.match_substring_regex(text, "^" + PLAIN_NUMBER.pattern + "$")),
    )
    prefixed = pc.or_(formula, pc.starts_with(text, QUOTE))
    return pc.if_else(prefixed, pc.binary_join_element_wise(text_scalar(QUOTE), text, text_scalar("")), text)
