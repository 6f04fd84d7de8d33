"""One JSON decoder serves every line with the same hooks (irr_audit.io.limits._loads): each line
reads as json.loads reads it, and a constant or a byte-order mark is refused as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from irr_audit.errors import SheetError
from irr_audit.io.collector import AS_WRITTEN
from irr_audit.io.limits import RepeatedKey, load_json, load_json_line, repeated_key_place, repeated_key_sentence
from irr_audit.io.sheets import parse_sheet

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(10**12), 10**12), st.text(max_size=8))
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12,
)


@given(value=VALUES)
def test_a_line_reads_as_json_loads_reads_it(value: object) -> None:
    line = json.dumps(value)
    assert load_json_line(line, "test") == json.loads(line)
    assert load_json_line(line, "test", **AS_WRITTEN) == json.loads(line, **AS_WRITTEN)


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_a_constant_is_refused_where_it_stands(constant: str) -> None:
    line = f'{{"a": [1, 2], "b": {constant}}}'
    with pytest.raises(json.JSONDecodeError) as refused:
        load_json_line(line, "test")
    assert refused.value.msg == f"{constant} is not a JSON number"
    assert refused.value.pos == line.find(constant)
    for _ in range(2):  # the shared decoder is unharmed by a refusal
        assert load_json_line('{"b": 1.5}', "test") == {"b": 1.5}


def test_a_byte_order_mark_opening_a_line_is_refused_as_json_loads_refuses_it() -> None:
    line = '\ufeff{"a": 1}'
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(line)
    with pytest.raises(json.JSONDecodeError) as refused:
        load_json_line(line, "test")
    assert (refused.value.msg, refused.value.pos) == (expected.value.msg, expected.value.pos)


def test_a_json_lines_sheet_names_a_key_given_twice_by_its_line() -> None:
    data = (
        b'{"comment_id": "c1", "code": "yes"}\n{"comment_id": "c2", "code": "no"}\n'
        b'{"comment_id": "c3", "code": "no", "code": "yes"}\n'
    )
    with pytest.raises(SheetError) as refused:
        parse_sheet(data, Path("alice.jsonl"))
    assert refused.value.code == "sheet-duplicate-column"
    assert str(refused.value).startswith("sheet alice.jsonl line 3 gives the key 'code' twice.")
    sheet = parse_sheet(data.rsplit(b"\n", 2)[0] + b"\n", Path("alice.jsonl"))
    assert sheet.comment_ids.to_pylist() == ["c1", "c2"] and sheet.codes.to_pylist() == ["yes", "no"]


@pytest.mark.parametrize(
    "line",
    [
        '{"a": 1, "b": {"t": 1, "t": 2}}',
        '{"a": 1, "b": {"t": 1, "t": 2}, "n": 1e999}',  # a line whose numbers are checked one by one
    ],
)
def test_a_key_given_twice_is_refused_in_a_file_a_person_gave_and_found_where_it_is(line: str) -> None:
    for hooks in ({}, AS_WRITTEN):
        with pytest.raises(RepeatedKey) as refused:
            load_json_line(line, "test", **hooks)
        assert refused.value.key == "t" and isinstance(refused.value, ValueError)
        with pytest.raises(RepeatedKey):
            load_json(line, "test", **hooks)
    assert repeated_key_place(line) == (("b",), "t")
    assert repeated_key_place(f"[1, [{line}]]") == ((1, 0, "b"), "t")
    assert repeated_key_sentence("dataset d.json", f"[{line}]", RepeatedKey("t"), "item") == (
        "dataset d.json item 1 gives the key 't' twice (in b)."
    )
    assert repeated_key_place('{"a": 1}') is None


def test_a_file_irr_audit_wrote_is_read_without_the_check() -> None:
    line = '{"a": 1, "a": 2}'
    assert load_json_line(line, "test", own_file=True) == load_json(line, "test", own_file=True) == {"a": 2}
