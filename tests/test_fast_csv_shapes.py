"""The files people have take pyarrow's fast path, and it reads them as the csv module does.

Excel on Windows writes CRLF line ends and a UTF-8 byte-order mark, R's `write.csv` and
pyarrow's writer quote every field and the header, comments hold line breaks and commas
inside quotes, and the coders of one audit each have their own mix. Every such file is
read by pyarrow (`_arrow_table` returns a table), giving exactly the header, cells,
spreadsheet rows and values over several lines that the csv module gives
(`_csv_module_table`); a damaged file gets the csv module's message, word for word.
"""

from __future__ import annotations

import csv
import importlib.util
import io
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irr_audit.errors import IrrAuditError
from irr_audit.io.arrowtext import python_strings, string_array, to_numpy
from irr_audit.io.limits import DEFAULT_LIMITS
from irr_audit.io.outputs import _JSON_RAW_CONTROL, _escaped_json
from irr_audit.io.sheets import parse_sheet
from irr_audit.io.tables import MIN_BLOCK, RawTable, _arrow_table, _csv_module_table, csv_records, parse_table

BOM = b"\xef\xbb\xbf"
QUOTING = {"minimal": csv.QUOTE_MINIMAL, "all": csv.QUOTE_ALL, "nonnumeric": csv.QUOTE_NONNUMERIC}


def written(rows: list[list[str]], delimiter: str, terminator: str, quoting: str, bom: bool, last_end: bool) -> bytes:
    """``rows`` as a CSV writer writes them, with the line end and quoting given."""
    buffer = io.StringIO(newline="")
    csv.writer(buffer, delimiter=delimiter, lineterminator=terminator, quoting=QUOTING[quoting]).writerows(rows)
    text = buffer.getvalue()
    if not last_end:
        text = text[: -len(terminator)]
    return (BOM if bom else b"") + text.encode()


def same_tables(fast: RawTable, exact: RawTable) -> None:
    assert fast.header == exact.header
    assert [column.to_pylist() for column in fast.cells] == [column.to_pylist() for column in exact.cells]
    assert fast.rows.tolist() == exact.rows.tolist()
    assert fast.rows.dtype == exact.rows.dtype
    assert fast.warnings == exact.warnings
    assert (fast.spanning is None) == (exact.spanning is None)
    if fast.spanning is not None and exact.spanning is not None:
        for field in ("records", "columns", "first_lines", "last_lines"):
            assert getattr(fast.spanning, field).tolist() == getattr(exact.spanning, field).tolist(), field
        assert fast.spanning.delimiter == exact.spanning.delimiter


def outcome(read, *arguments) -> tuple[str, ...] | RawTable:
    """A table, or the refusal as (code, message, hint)."""
    try:
        return read(*arguments)
    except IrrAuditError as error:
        return (error.code, error.message, str(error.hint))


# --- strategies ------------------------------------------------------------------------------

DELIMITERS = st.sampled_from([",", "\t", ";"])
TERMINATORS = st.sampled_from(["\n", "\r\n", "\r"])


@st.composite
def sheets(draw) -> tuple[bytes, str]:
    """A sheet as some program writes it: any delimiter, line end and quoting, a BOM or not,
    header names and values holding the delimiter, quotes and line breaks of every kind,
    blank lines (the csv module reads a row of empty cells), a last line end or not."""
    delimiter = draw(DELIMITERS)
    alphabet = st.sampled_from(["a", "7", " ", "\u00e9", "\u4e2d", '"', delimiter, ",", "\n", "\r\n", "\r", "\t"])
    cell = st.lists(alphabet, max_size=6).map("".join)
    width = draw(st.integers(1, 4))
    header = draw(st.lists(st.lists(alphabet, min_size=1, max_size=6).map("".join), min_size=width, max_size=width))
    rows = draw(st.lists(st.lists(cell, min_size=width, max_size=width), max_size=10))
    blank = draw(st.lists(st.integers(0, len(rows)), max_size=2))
    for at in sorted(blank, reverse=True):
        rows.insert(at, [])  # written as an empty line
    data = written(
        [header, *rows],
        delimiter,
        draw(TERMINATORS),
        draw(st.sampled_from(sorted(QUOTING))),
        draw(st.booleans()),
        draw(st.booleans()) or not rows or not rows[-1],
    )
    return data, delimiter


def rectangular(data: bytes, delimiter: str) -> bool:
    """Whether the header's first line is not blank and every record not blank has the
    header's cells: what pyarrow reads as the csv module does (a short row is padded by the
    csv module's path, a blank header read as no columns)."""
    text = data.decode("utf-8").lstrip("\ufeff")
    records = [cells for _, _, cells in csv_records(text, delimiter)]
    return not text.startswith(("\n", "\r")) and all(len(cells) in (0, len(records[0])) for cells in records)


DAMAGE = st.tuples(
    st.sampled_from(["insert", "delete", "truncate"]),
    st.floats(0, 1, allow_nan=False),
    st.sampled_from([b'"', b",", b"\t", b"\r", b"\n", b"\r\n", BOM, b"\x00", b'""', b',"', b"\xff", b"\xc3"]),
)


def damaged(data: bytes, operations: list[tuple[str, float, bytes]]) -> bytes:
    for operation, where, text in operations:
        at = int(where * len(data))
        if operation == "insert":
            data = data[:at] + text + data[at:]
        elif operation == "delete":
            data = data[:at] + data[at + 1 :]
        else:
            data = data[:at]
    return data


# --- properties --------------------------------------------------------------------------------


@settings(derandomize=True, max_examples=600, deadline=None)
@given(sheets())
def test_every_written_shape_takes_the_fast_path_and_reads_as_the_csv_module(sheet: tuple[bytes, str]) -> None:
    data, delimiter = sheet
    exact = outcome(_csv_module_table, data, delimiter, "s.csv")
    fast = _arrow_table(data, delimiter)
    if fast is None:
        assert not rectangular(data, delimiter), data
    else:
        assert isinstance(exact, RawTable)
        same_tables(fast, exact)


@settings(derandomize=True, max_examples=600, deadline=None)
@given(sheets(), st.lists(DAMAGE, min_size=1, max_size=3))
def test_a_damaged_file_gets_the_csv_modules_table_or_message(sheet: tuple[bytes, str], operations) -> None:
    data, delimiter = sheet
    data = damaged(data, operations)
    if not data or data.isspace():
        return  # refused as empty before either reader
    read = outcome(parse_table, data, Path("s.csv"), None, DEFAULT_LIMITS, delimiter)
    exact = outcome(_csv_module_table, data, delimiter, "s.csv")
    if isinstance(read, RawTable) and not isinstance(exact, RawTable) and lenient_case(data, exact):
        # LF files only: text after a closing quote joins the value, as the hostile corpus pins
        # ("csv: text after a closing quote"), and as the csv module reads it when not strict
        text = data.decode("utf-8").lstrip("\ufeff")
        header, *rows = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)  # not strict
        padded = [(row + [""] * len(header))[: len(header)] for row in rows]
        assert [column.to_pylist() for column in read.cells] == [list(cells) for cells in zip(*padded)] or not rows
    elif isinstance(read, RawTable) and isinstance(exact, RawTable):
        same_tables(read, exact)
    else:
        assert read == exact, data


def lenient_case(data: bytes, refusal: tuple[str, ...]) -> bool:
    return b"\r" not in data and refusal[0] == "sheet-malformed" and "expected after '\"'" in refusal[1]


# --- the shapes by name ----------------------------------------------------------------------

PLAIN = [["comment_id", "code", "body"], ["c1", "yes", "fine"], ["c2", "no", 'he said "no", twice\nthen left']]


@pytest.mark.parametrize("terminator", ["\n", "\r\n", "\r"], ids=["lf", "crlf", "cr"])
@pytest.mark.parametrize("quoting", sorted(QUOTING))
@pytest.mark.parametrize("bom", [False, True], ids=["no-bom", "bom"])
def test_excel_r_and_pyarrow_files_take_the_fast_path(terminator: str, quoting: str, bom: bool) -> None:
    data = written(PLAIN, ",", terminator, quoting, bom, True)
    fast = _arrow_table(data, ",")
    assert fast is not None
    same_tables(fast, _csv_module_table(data, ",", "s.csv"))
    assert fast.header == PLAIN[0]
    assert fast.cells[2].to_pylist() == ["fine", 'he said "no", twice\nthen left']
    assert fast.rows.tolist() == [2, 3]
    assert fast.spanning is not None and fast.spanning.first_lines.tolist() == [3]


@pytest.mark.parametrize("terminator", ["\n", "\r\n"], ids=["lf", "crlf"])
@pytest.mark.parametrize("quoting", ["minimal", "all", "lenient"])
def test_a_file_of_many_blocks_reads_the_same_on_several_threads(terminator: str, quoting: str) -> None:
    """Parsed on several threads, a file is cut into blocks (of MIN_BLOCK bytes at least: this
    one makes about five) and their chunks joined: the same table as one block on one thread,
    values over several lines and rows a quoted line break moves included. ``lenient``: text
    after a closing quote, which pyarrow reads in an LF file (and a CRLF one is refused)."""
    comments = [text for text in COMMENTS if quoting != "lenient" or "\r" not in text]
    rows = [["comment_id", "code", "comment"]]
    rows += [[f"t1_{unit:06d}", ("yes", "no", "")[unit % 3], comments[unit % len(comments)]] for unit in range(160_000)]
    data = written(rows, ",", terminator, "minimal" if quoting == "lenient" else quoting, False, True)
    if quoting == "lenient":
        data = data.replace(b'then left"', b'then left"x')
    assert len(data) > 4 * MIN_BLOCK
    one = _arrow_table(data, ",", "s.csv", threads=1)
    assert (one is None) == (quoting == "lenient" and terminator == "\r\n")
    if one is not None and quoting == "lenient":
        assert one.cells[2][1].as_py() == 'he said "no", twice\nthen leftx'
    for threads in (2, 3, 8):
        many = _arrow_table(data, ",", "s.csv", threads=threads)
        assert (many is None) == (one is None)
        if many is not None and one is not None:
            same_tables(many, one)


COMMENTS = ["fine", 'he said "no", twice\nthen left', "a, b; c", "one\r\ntwo\r\nthree", "", "x" * 40]


def test_a_quoted_line_break_moves_the_lines_of_the_values_after_it() -> None:
    data = b'"comment\r\nid",code,body\r\nc1,yes,"a\r\nb\rc"\r\nc2,no,"x\ny"\r\n'
    fast = _arrow_table(data, ",")
    assert fast is not None
    same_tables(fast, _csv_module_table(data, ",", "s.csv"))
    assert fast.rows.tolist() == [2, 3]  # spreadsheet rows: one per record
    assert fast.spanning is not None
    assert fast.spanning.first_lines.tolist() == [3, 6]  # file lines: the header took two
    assert fast.spanning.last_lines.tolist() == [5, 7]


@pytest.mark.parametrize(
    "data",
    [
        b'comment_id,code\nc1,5" screen\n',  # a quote inside an unquoted value: text
        b'comment_id,code\nc1,"yes\n',  # a quote left open: refused naming its line
        b"comment_id,code\nc1,yes,extra\n",  # ragged: refused
        b"comment_id,code\nc1\n",  # short: padded
        b"comment_id,code\n\xffc1,yes\n",  # not UTF-8: refused
    ],
)
def test_what_pyarrow_would_read_otherwise_gets_the_csv_modules_table_or_message(data: bytes) -> None:
    for variant in (data, data.replace(b"\n", b"\r\n"), BOM + data.replace(b"\n", b"\r")):
        read, exact = outcome(parse_table, variant, Path("s.csv")), outcome(_csv_module_table, variant, ",", "s.csv")
        if isinstance(read, RawTable) and isinstance(exact, RawTable):
            same_tables(read, exact)
        else:
            assert read == exact
    assert _arrow_table(data.replace(b"\n", b"\r\n"), ",") is None


def test_text_after_a_closing_quote_joins_the_value_in_an_lf_file_only() -> None:
    data = b'comment_id,code\nc1,"yes"x\nc2,no\n'
    read = parse_table(data, Path("s.csv"))
    assert isinstance(read, RawTable) and read.cells[1].to_pylist() == ["yesx", "no"]  # then logged as invalid
    refusal = outcome(parse_table, data.replace(b"\n", b"\r\n"), Path("s.csv"))
    assert refusal == outcome(_csv_module_table, data.replace(b"\n", b"\r\n"), ",", "s.csv")
    assert refusal[0] == "sheet-malformed"


def test_a_mix_of_shapes_across_the_coders_sheets_joins_as_one() -> None:
    rows = [["comment_id", "code"], *[[f"t1_{number}", "yes" if number % 3 else "no"] for number in range(50)]]
    shapes = [("\n", "minimal", False), ("\r\n", "all", True), ("\r", "nonnumeric", False), ("\r\n", "minimal", True)]
    sheets = [parse_sheet(written(rows, ",", *shape, True), Path(f"coder{at}.csv")) for at, shape in enumerate(shapes)]
    for sheet in sheets:
        assert sheet.unit_keys.to_pylist() == [row[0] for row in rows[1:]]
        assert sheet.codes.to_pylist() == [row[1] for row in rows[1:]]
        assert list(sheet.rows) == list(range(2, 52))


def test_the_benchmarks_shapes_take_the_fast_path_and_read_as_the_plain_sheets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = importlib.util.spec_from_file_location("bench", Path(__file__).parents[1] / "benchmarks" / "bench.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "bench", bench)  # its dataclasses look their module up
    spec.loader.exec_module(bench)
    read = {}
    for shape in bench.SHAPES:
        bench.generate(tmp_path / shape, 200, 5, 5, 1, shape)
        for coder in range(1, 6):
            data = (tmp_path / shape / f"coder{coder}.csv").read_bytes()
            assert _arrow_table(data, ",") is not None, (shape, coder)
            sheet = parse_sheet(data, Path(f"coder{coder}.csv"))
            read[shape, coder] = (sheet.unit_keys.to_pylist(), sheet.codes.to_pylist(), sheet.rows.tolist())
    for (shape, coder), (ids, codes, _) in read.items():
        plain_ids, plain_codes, _ = read["plain", coder]
        if shape == "ordered":  # every unit, in one order: the plain sheet's rows among them, with their codes
            assert ids == read["ordered", 1][0] and len(ids) == 200
            code_of = dict(zip(ids, codes))
            ids, codes = plain_ids, [code_of[unit] for unit in plain_ids]
        assert (ids, codes) == (plain_ids, plain_codes), (shape, coder)
    assert all(read[shape, coder][2] == read["plain", coder][2] for shape, coder in read if shape != "ordered")


# --- arrays to numpy without pyarrow's conversion (which imports pandas) ----------------------


@pytest.mark.parametrize(
    "values",
    [
        pa.array([True, False, True] * 7).slice(3, 11),
        pa.array([], pa.bool_()),
        pa.array(["a", "", "\u00e9\n", "t1_x"]).slice(1),
        pa.array(["a", None]),
        pa.array([1, 2, 3], pa.int32()).slice(1),
        pa.array([2**63 + 1], pa.uint64()),
        pa.array([1.5, -0.0], pa.float64()),
        pa.array([1, None], pa.int64()),
        pa.array(["x", "y", "x"]).dictionary_encode().indices,
        pa.chunked_array([[1, 2], [3]], pa.int8()),
    ],
)
def test_to_numpy_is_pyarrows_conversion(values) -> None:
    mine = to_numpy(values)
    theirs = values.to_numpy() if isinstance(values, pa.ChunkedArray) else values.to_numpy(zero_copy_only=False)
    assert mine.dtype == theirs.dtype and mine.shape == theirs.shape
    assert [repr(item) for item in mine.tolist()] == [repr(item) for item in theirs.tolist()]
    if pa.types.is_string(values.type):  # without pandas loaded
        assert python_strings(values).tolist() == theirs.tolist() and python_strings(values).dtype == theirs.dtype


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x7F)), st.text(max_size=3))
def test_escaping_json_text_that_is_ascii_is_the_general_escaping(ascii_text: str, other: str) -> None:
    for text in (ascii_text, ascii_text + other):
        assert _escaped_json(text) == _JSON_RAW_CONTROL.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


@pytest.mark.parametrize("values", [[], [""], ["a", "", "\u00e9", "t1_x\n", "\u4e2d\u6587"]])
def test_string_array_is_pa_array(values: list[str]) -> None:
    made = string_array(values)
    made.validate(full=True)
    assert made.equals(pa.array(values, type=pa.string())) and made.type == pa.string()


@pytest.mark.parametrize("data", [b'a\n\xef\xbb\xbf""\n""', b"a\n\xef\xbb\xbfx\n", b"a,b\r\n\xef\xbb\xbfx,y\r\n"])
def test_a_byte_order_mark_after_the_header_is_text_as_the_csv_module_reads_it(data: bytes) -> None:
    # pyarrow drops a BOM at the start of the bytes it is given, which here is the first record
    read = parse_table(data, Path("s.csv"), None, DEFAULT_LIMITS, ",")
    same_tables(read, _csv_module_table(data, ",", "s.csv"))
    assert read.cells[0].to_pylist()[0].startswith("\ufeff")
