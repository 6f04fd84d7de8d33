"""Fast paths against the straightforward way: packed id keys, the edge-space check,
the join on packed keys, and pandas kept out of `score`."""

from __future__ import annotations

import csv
import subprocess
import sys
import tempfile
import textwrap
from itertools import combinations
from pathlib import Path
from unittest.mock import patch

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from irr_audit.io.arrowtext import (
    from_numpy,
    has_no_empty_value,
    may_have_edge_space,
    packed_keys,
    starts_with_any_byte,
)
from irr_audit.io.sheets import read_sheet
from irr_audit.join.join import join_sheets
from irr_audit.rules.load import load_rule

ROOT = Path(__file__).resolve().parents[1]
RULE = ROOT / "rules" / "explicit_current_failure" / "v1.yaml"
SHEETS = [ROOT / "examples" / "sheets" / name for name in ("alice.csv", "bob.csv")]
BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"
# Every character some definition calls whitespace: Python's, plus a few that only some call so.
WHITESPACE = [chr(code) for code in range(0x110000) if chr(code).isspace()] + ["\u180e", "\u200b", "\ufeff"]


# --- helpers ---------------------------------------------------------------------------


def as_array(values: list[str], large: bool = False, sliced: bool = False) -> pa.Array:
    """``values`` as a string array; sliced: cut out of a longer array, so its offsets
    start past 0 and its data buffer holds bytes before and after its own."""
    kind = pa.large_string() if large else pa.string()
    if not sliced:
        return pa.array(values, type=kind)
    return pa.array(["before", *values, "after!"], type=kind).slice(1, len(values))


def packable(values: list[str]) -> bool:
    """What packed_keys promises to pack: no NUL, and every non-empty value longer than
    the prefix (all but the longest value's last 8 bytes) and sharing it."""
    encoded = [value.encode() for value in values if value]
    prefix_length = max(0, max(map(len, encoded), default=0) - 8)
    prefix = encoded[0][:prefix_length] if encoded else b""
    return all(b"\0" not in value and len(value) > prefix_length and value.startswith(prefix) for value in encoded)


def join_outcome(result) -> dict:
    return {
        "unit_ids": result.unit_ids.tolist(),
        "codes": result.codes.tolist(),
        "status": result.status.tolist(),
        "positions": result.positions.tolist(),
        "warnings": result.warnings,
    }


def run_python(script: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


# --- strategies ------------------------------------------------------------------------


PREFIXES = ["", "", "t1_", "t3_", "x", "\u00e9", "kq3m", "comment-"]


@st.composite
def id_lists(draw, prefixes: list[str]) -> list[str]:
    """Ids that mostly share a prefix and differ in a few characters (of one alphabet
    per list), some of them blank; in some lists also any text at all."""
    alphabet = draw(st.sampled_from([BASE36, "0123456789", "ab\u00e9\u4e00", "a\0", None]))  # None: any unicode
    size = draw(st.integers(1, 9))
    one_length = draw(st.booleans())  # every tail as long: ids of one length take the byte-matrix path
    tail = st.text(alphabet, min_size=size if one_length else 0, max_size=size) if alphabet else st.text(max_size=3)
    values = [st.just(""), st.builds(str.__add__, st.sampled_from(prefixes), tail)]
    if draw(st.integers(0, 3)) == 0:
        values.append(st.text(max_size=10))
    return draw(st.lists(st.one_of(values), max_size=12))


@st.composite
def columns(draw) -> tuple[list[list[str]], list[pa.Array]]:
    """1-3 columns of ids, one prefix shared by all (or, sometimes, one of two near prefixes),
    each column a string or large string array, maybe sliced out of a longer one."""
    prefixes = draw(st.lists(st.sampled_from(PREFIXES), min_size=1, max_size=2))
    values = draw(st.lists(id_lists(prefixes), min_size=1, max_size=3))
    arrays = [as_array(column, large=draw(st.booleans()), sliced=draw(st.booleans())) for column in values]
    return values, arrays


def edge_texts() -> st.SearchStrategy[str]:
    space = st.text(st.sampled_from(WHITESPACE), max_size=2)
    return st.builds(lambda lead, body, trail: lead + body + trail, space, st.text(max_size=6), space)


# --- packed_keys -----------------------------------------------------------------------


@given(columns())
# A blank id last, after an id with under 8 bytes past the shared prefix: the tail read ran past the data.
@example(([["xxabcdefg1", "xxab", ""]], [pa.array(["xxabcdefg1", "xxab", ""])]))
@example(([["t1_abc1234", "t1_abc123", ""]], [pa.array(["t1_abc1234", "t1_abc123", ""])]))
@example(([["a"]], [pa.array(["a"])]))
@example(([["", "a"], [""]], [pa.array(["", "a"]), pa.array([""])]))
# The first id shorter than the prefix the longest needs, the longest in another column.
@example(([["t1_"], ["t1_000000000"]], [pa.array(["t1_"]), pa.array(["t1_000000000"])]))
def test_packed_keys_are_equal_exactly_when_the_ids_are(data: tuple[list[list[str]], list[pa.Array]]) -> None:
    """Whenever ids are packed, two keys match iff their ids do, and only the empty id packs to 0."""
    values, arrays = data
    keys = packed_keys(arrays)
    if keys is None:
        return
    assert [len(column) for column in keys] == [len(column) for column in values]
    assert all(column.dtype == np.uint64 for column in keys)
    flat_values = [value for column in values for value in column]
    flat_keys = [int(key) for column in keys for key in column]
    for (value, key), (other, other_key) in combinations(zip(flat_values, flat_keys), 2):
        assert (key == other_key) == (value == other), (value, other)
    for value, key in zip(flat_values, flat_keys):
        assert (key == 0) == (value == ""), value


@given(columns())
def test_packed_keys_declines_only_what_cannot_be_packed(data: tuple[list[list[str]], list[pa.Array]]) -> None:
    """packed_keys returns keys exactly when the ids fit its documented shape."""
    values, arrays = data
    keys = packed_keys(arrays)
    assert (keys is not None) == packable([value for column in values for value in column])


@pytest.mark.parametrize(
    "ids",
    [
        ["t1_k3x9a0", "t1_k3x9a0b", "t1_zz0000", "t1_0000000"],  # Reddit comments, 6 and 7 characters
        ["t3_abc1234", "t3_1gx7ka9", "t3_abc123"],  # Reddit posts
        ["1", "007", "12345678", "99999999"],  # digits, up to 8
        ["kq3m1x0", "kq3m4ab", "", "kq3n0c7"],  # the example sheets' ids, one blank
        ["\u00e91", "\u00e92", "a"],  # short non-ASCII
        ["t1_k3x9a0", "t1_zz0000", "t1_000000"],  # one length over 8 bytes: one word of the byte matrix each
        ["0042", "1234", "9999"],  # one length up to 8 bytes: zero-padded rows of the byte matrix
    ],
)
def test_packed_keys_packs_typical_ids(ids: list[str]) -> None:
    """Common id formats take the fast path, in either string type."""
    for large in (False, True):
        keys = packed_keys([as_array(ids, large=large), as_array(ids[::-1], large=large, sliced=True)])
        assert keys is not None
        assert keys[0].tolist() == keys[1].tolist()[::-1]


@pytest.mark.parametrize(
    "arrays",
    [
        [pa.array(["0b7c5f3e-6a51-4f7a-9d0e-2b1f8c4a7e11", "9c2d4a61-13f0-4b8e-a7c5-5e6f7a8b9c0d"])],  # UUIDs
        [pa.array(["t1_abcdefgh"]), pa.array(["t3_abcdefgh"])],  # the prefix differs between columns
        [pa.array(["a\0b", "c"])],  # a NUL byte
        [pa.array(["abcdefghij", "ab"])],  # a value no longer than the prefix
        [pa.array(["a"]), pa.array(["b", None])],  # a null
        [pa.array(["a"]), pa.array([1, 2])],  # not text
    ],
)
def test_packed_keys_declines_what_it_cannot_pack(arrays: list[pa.Array]) -> None:
    """Long distinct ids, another prefix, NUL bytes, short values under a prefix, nulls and non-text give None."""
    assert packed_keys(arrays) is None


# --- may_have_edge_space ---------------------------------------------------------------


@given(st.lists(edge_texts(), max_size=8), st.booleans(), st.booleans())
@example(["\u00a0a", "b\u3000", "\u2028", "\x1c", "\ta", "a\x85"], False, False)
def test_edge_space_check_never_misses_whitespace(values: list[str], large: bool, sliced: bool) -> None:
    """may_have_edge_space says False only when trimming whitespace would change nothing."""
    column = as_array(values, large=large, sliced=sliced)
    if not may_have_edge_space(column):
        assert pc.utf8_trim_whitespace(column).equals(column), values


@given(
    st.integers(1, 4).flatmap(
        lambda size: st.lists(
            st.text(st.sampled_from(["a", "\u00e9", " ", "\t", "\u3000"]), min_size=size, max_size=size), max_size=6
        )
    ),
    st.booleans(),
    st.booleans(),
)
def test_edge_space_check_never_misses_whitespace_in_ids_of_one_length(
    values: list[str], large: bool, sliced: bool
) -> None:
    """Ids of one length (in bytes, too, when ASCII) are looked at as a byte matrix: same promise."""
    column = as_array(values, large=large, sliced=sliced)
    if not may_have_edge_space(column):
        assert pc.utf8_trim_whitespace(column).equals(column), values


def test_edge_space_check_clears_plain_ids() -> None:
    """Plain ids, empty ones included, need no trimming."""
    assert not may_have_edge_space(pa.array(["a1", "b2"]))
    assert not may_have_edge_space(pa.array(["a1", "", "b2"], type=pa.large_string()))
    assert not may_have_edge_space(as_array(["a1", "b2"], sliced=True))


@given(
    st.lists(st.text(st.sampled_from(["a", "1", "=", "\u00e9"]), max_size=3), max_size=8),
    st.sampled_from([b"0123456789", b"=+-@", b"a"]),
    st.booleans(),
    st.booleans(),
)
def test_first_byte_check_is_the_definition(values: list[str], characters: bytes, large: bool, sliced: bool) -> None:
    """starts_with_any_byte: some value starts with one of the characters (values of one length too)."""
    column = as_array(values, large=large, sliced=sliced)
    expected = any(value[:1] and value[0] in characters.decode() for value in values)
    assert starts_with_any_byte(column, characters) == expected


@given(st.lists(st.sampled_from(["", "a", "t1_ab", " "]), max_size=8), st.booleans(), st.booleans())
def test_no_empty_value_check_is_the_definition(values: list[str], large: bool, sliced: bool) -> None:
    """has_no_empty_value: every value holds a byte (a sheet's ids: every row has an id)."""
    assert has_no_empty_value(as_array(values, large=large, sliced=sliced)) == all(values)


def test_no_empty_value_check_looks_past_the_first_block() -> None:
    values = ["t1_a"] * 200_000
    values[150_001] = ""
    assert has_no_empty_value(pa.array(values[:150_000])) and not has_no_empty_value(pa.array(values))
    assert not has_no_empty_value(pa.array(["a", None]))  # unsure: a null


# --- join on packed keys ---------------------------------------------------------------

ID_POOLS = [
    ["c1", "c2", "c10", "007", "7", " c1", "c2 ", "\tc10", "", "  "],  # short ids: no prefix
    ["t1_abc1234", "t1_abc123", "t1_abcd123", " t1_abc123", "t1_abc1234 ", "", " "],  # a shared prefix
    ["c1", "t1_abc1234", "t1_abc123", "", " c1 "],  # cannot be packed: the string path both times
]
CODES = ["yes", "no", "Yes ", "y", " NO", "unknown", "", "maybe"]


@st.composite
def sheet_rows(draw) -> list[list[tuple[str, str]]]:
    pool = draw(st.sampled_from(ID_POOLS))
    row = st.tuples(st.sampled_from(pool), st.sampled_from(CODES))
    # a first row with an id and a code keeps every sheet from being empty
    first = st.tuples(st.sampled_from([value for value in pool if value.strip()]), st.just("yes"))
    sheets = st.builds(lambda head, rest: [head, *rest], first, st.lists(row, max_size=10))
    return draw(st.lists(sheets, min_size=2, max_size=3))


@given(sheet_rows())
# the same tail case through a sheet: a row without an id last
@example([[("t1_abc1234", "yes"), ("t1_abc123", "no"), ("", "yes")], [("t1_abc1234", "yes")]])
def test_join_on_packed_keys_matches_the_string_join(sheets_rows: list[list[tuple[str, str]]]) -> None:
    """Joining on packed integer keys gives the units, cells and log of joining on the id text."""
    rule = load_rule(RULE)
    with tempfile.TemporaryDirectory() as folder:
        sheets = []
        for name, rows in zip(("alice", "bob", "carol"), sheets_rows):
            path = Path(folder) / f"{name}.csv"
            with open(path, "w", newline="", encoding="utf-8") as stream:
                writer = csv.writer(stream, lineterminator="\n")
                writer.writerow(["comment_id", "code"])
                writer.writerows(rows)
            sheets.append(read_sheet(path))
        fast = join_sheets(sheets, rule)
        with patch("irr_audit.join.join.key_packers", return_value=None):
            slow = join_sheets(sheets, rule)
        with patch("irr_audit.join.join.PARTITIONED_FROM", 1):  # the path of large sheets
            partitioned = join_sheets(sheets, rule)
        assert join_outcome(fast) == join_outcome(slow) == join_outcome(partitioned)
        pd.testing.assert_frame_equal(fast.log, slow.log)
        pd.testing.assert_frame_equal(partitioned.log, slow.log)


@pytest.mark.parametrize("pool", ID_POOLS[:2])
def test_join_pools_take_the_fast_path(pool: list[str]) -> None:
    """The packable id pools above really are packed once trimmed, so the join test covers the fast path."""
    assert packed_keys([pc.utf8_trim_whitespace(pa.array(pool))]) is not None


# --- pandas on demand, and other libraries left as they are -------------------------------


def test_an_audit_leaves_pyarrows_pandas_conversions_alone() -> None:
    """A notebook user's own conversions behave the same after irr-audit ran in the process:
    a categorical stays a dictionary, and an Int64 column with NA converts."""
    done = run_python(
        f"""
        import contextlib, io, sys
        from irr_audit import cli
        sys.argv = ["irr-audit", "score", {str(SHEETS[0])!r}, {str(SHEETS[1])!r}, "--rule", {str(RULE)!r}, "-q"]
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                cli.main()
            except SystemExit:
                pass
        import pandas as pd
        import pyarrow as pa
        print(pa.types.is_dictionary(pa.array(pd.Series(["a", "b", "a"], dtype="category")).type))
        print(pa.array(pd.Series([1, None], dtype="Int64")).to_pylist())
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "[1,", "None]"]


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint64, np.float64])
def test_from_numpy_is_pa_array(dtype) -> None:
    """from_numpy gives what pa.array gives, for contiguous and strided arrays."""
    values = np.arange(-3, 9).astype(dtype)
    for view in (values, values[::3], values[1:]):
        assert from_numpy(view).equals(pa.array(view))
    with pytest.raises(TypeError):
        from_numpy(values > 0)
