"""The manifest's fingerprints of a set of unit ids (irr_audit.io.fingerprints) are exactly
their definitions, computed the plain way: the bottom-k of each id's sha256 (first 16 hex
digits), and the sha256 of the ids sorted as Python sorts them and joined by newlines."""

from __future__ import annotations

import hashlib
import heapq
from unittest.mock import patch

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from irr_audit.io import fingerprints
from irr_audit.io.fingerprints import sorted_lines_sha256, units_sketch
from irr_audit.io.unitsketch import SKETCH_SIZE


def _plain_sketch(ids: list[str]) -> list[str]:
    return heapq.nsmallest(SKETCH_SIZE, {hashlib.sha256(unit.encode("utf-8")).hexdigest()[:16] for unit in ids})


def _plain_digest(ids: list[str]) -> str:
    return hashlib.sha256("\n".join(sorted(ids)).encode("utf-8")).hexdigest()


# ids of one width and of many, short and past the width sorted as bytes, non-ASCII (whose
# UTF-8 sorts as code points do), prefixes of each other, repeats, and the NUL padding hides
texts = st.text(alphabet=st.sampled_from(["a", "b", "z", "0", "_", "é", "€", "😀", "\x01", "\x00", " "]), max_size=40)
id_lists = st.lists(texts, max_size=300) | st.lists(st.sampled_from(["t1_aa", "t1_ab", "t1_zz", "t1_b€"]), max_size=300)


@settings(max_examples=300, deadline=None)
@given(ids=id_lists)
def test_the_fingerprints_are_their_definitions(ids: list[str]) -> None:
    array = pa.array(ids, type=pa.string())
    given_as = [(ids, ids), (array, ids), (array.slice(1), ids[1:]), (pa.array(ids, type=pa.large_string()), ids)]
    for passed, expected in given_as:
        assert sorted_lines_sha256(passed) == _plain_digest(expected)
        assert units_sketch(passed) == _plain_sketch(expected)


@settings(max_examples=50, deadline=None)
@given(ids=st.lists(texts, min_size=1, max_size=200))
def test_blocks_of_any_size_give_the_same_fingerprints(ids: list[str]) -> None:
    with patch.object(fingerprints, "SORTED_AT_ONCE", 3), patch.object(fingerprints, "HASHED_AT_ONCE", 5):
        assert sorted_lines_sha256(ids) == _plain_digest(ids)
        assert units_sketch(ids) == _plain_sketch(ids)


def test_a_large_set_keeps_its_smallest_hashes_once_each() -> None:
    ids = [f"t1_{number:07d}" for number in range(20_000)]
    sketch = units_sketch(ids + ids[:500])
    assert sketch == _plain_sketch(ids) and len(sketch) == SKETCH_SIZE
    assert sorted_lines_sha256(ids[::-1]) == _plain_digest(ids)
