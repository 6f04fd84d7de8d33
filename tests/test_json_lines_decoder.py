"""One JSON decoder serves every line with the same hooks (irr_audit.io.limits._loads): each line
reads as json.loads reads it, and a constant or a byte-order mark is refused as before."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from irr_audit.io.collector import AS_WRITTEN
from irr_audit.io.limits import load_json_line

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
