"""The partitioned numbering of packed ids (irr_audit.join.factorize) numbers them exactly as
one pyarrow dictionary encoding of all the sheets' ids does, and a join over it is the same."""

from __future__ import annotations

from unittest.mock import patch

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from irr_audit.io.arrowtext import may_have_edge_space, packed_keys
from irr_audit.join import factorize as factorize_module
from irr_audit.join import join as join_module
from irr_audit.join.factorize import factorize, gather, partition_bits
from irr_audit.join.join import match_ids


def _reference(columns: list[np.ndarray]) -> tuple[list[np.ndarray], np.ndarray]:
    whole = pa.concat_arrays([pa.array(column, type=pa.uint64()) for column in columns]).dictionary_encode()
    flat = whole.indices.to_numpy()
    bounds = np.cumsum([0, *map(len, columns)])
    return [flat[start:end] for start, end in zip(bounds[:-1], bounds[1:])], whole.dictionary.to_numpy()


def _made(columns: list[np.ndarray]) -> list:
    return [lambda column=column: column for column in columns]


key_columns = st.lists(
    st.lists(st.integers(min_value=0, max_value=40) | st.integers(min_value=0, max_value=2**64 - 1), max_size=60).map(
        lambda values: np.array(values, dtype=np.uint64)
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=300, deadline=None)
@given(columns=key_columns, bits=st.integers(min_value=0, max_value=6), block=st.integers(min_value=1, max_value=70))
def test_factorize_numbers_keys_as_one_dictionary_encoding(columns: list[np.ndarray], bits: int, block: int) -> None:
    if not sum(map(len, columns)):
        indices, distinct = factorize(_made(columns), bits=bits, block=block)
        assert [len(found) for found in indices] == [0] * len(columns) and len(distinct) == 0
        return
    expected_indices, expected_distinct = _reference(columns)
    indices, distinct = factorize(_made(columns), bits=bits, block=block)
    assert distinct.tolist() == expected_distinct.tolist()
    assert [found.tolist() for found in indices] == [found.tolist() for found in expected_indices]
    assert all(found.dtype == np.int32 for found in indices)


def test_factorize_at_scale_with_many_repeats_and_new_keys_late() -> None:
    rng = np.random.default_rng(7)
    shared = rng.integers(0, 2**63, size=200_000, dtype=np.uint64)
    columns = [rng.permutation(shared)[: 150_000 + 10_000 * at] for at in range(4)]
    columns.append(np.concatenate([rng.integers(0, 2**63, size=5_000, dtype=np.uint64), shared[:5_000]]))
    expected_indices, expected_distinct = _reference(columns)
    indices, distinct = factorize(_made(columns))
    assert np.array_equal(distinct, expected_distinct)
    assert all(np.array_equal(found, expected) for found, expected in zip(indices, expected_indices))


@settings(max_examples=100, deadline=None)
@given(columns=key_columns, block=st.integers(min_value=1, max_value=7))
def test_factorize_with_rows_read_back_in_small_blocks(columns: list[np.ndarray], block: int) -> None:
    expected_indices, expected_distinct = _reference(columns)
    with patch.object(factorize_module, "GATHER_BLOCK", block):
        indices, distinct = factorize(_made(columns), bits=2, block=5)
    assert np.array_equal(distinct, expected_distinct)
    assert all(np.array_equal(found, expected) for found, expected in zip(indices, expected_indices))


def test_gather_reads_values_at_positions_block_by_block(monkeypatch) -> None:
    monkeypatch.setattr(factorize_module, "GATHER_BLOCK", 3)
    values = np.array([10, 11, 12, 13, 14, 15, 16], dtype=np.int32)
    positions = np.array([6, 0, 0, 3, 5, 1, 2, 4], dtype=np.int32)
    taken = gather(values, positions)
    assert taken.dtype == np.int32
    assert taken.tolist() == [16, 10, 10, 13, 15, 11, 12, 14]
    assert gather(values, np.empty(0, np.int32)).tolist() == []


def test_match_ids_is_the_same_on_both_paths(monkeypatch) -> None:
    rng = np.random.default_rng(3)
    ids = np.array([f"t1_{value:06x}" for value in rng.integers(0, 50_000, size=30_000)] + ["", "t1_zz"], dtype=object)
    sheets = [pa.array(rng.permutation(ids).tolist(), type=pa.string()) for _ in range(3)]
    small = match_ids(sheets)
    monkeypatch.setattr(join_module, "PARTITIONED_FROM", 1)
    partitioned = match_ids(sheets)
    assert small[0] is partitioned[0] is True
    assert [found.tolist() for found in small[1]] == [found.tolist() for found in partitioned[1]]
    assert small[2].to_pylist() == partitioned[2].to_pylist()


def test_ids_of_one_length_are_checked_past_the_first_block() -> None:
    """A longer (or shorter) id deep in a column of one-length ids is seen: it is packed by its own bytes."""
    ids = [f"t1_{value:06d}" for value in range(200_000)]
    for odd in ("t1_1234567", "t1_12345"):
        column = ids.copy()
        column[150_001] = odd
        keys = packed_keys([pa.array(column, type=pa.string())])
        assert keys is not None
        assert len(set(keys[0].tolist())) == len(set(column))
        assert keys[0][150_001] not in set(keys[0][:150_001].tolist()) | set(keys[0][150_002:].tolist())
        assert may_have_edge_space(pa.array(column + [" t1_000001"], type=pa.string()))


def test_partitions_hold_tens_of_thousands_of_rows_and_at_most_1024_of_them() -> None:
    assert partition_bits(0) == partition_bits(60_000) == 0
    assert partition_bits(1 << 22) == 7  # where matching turns to partitions: 128 of 32,768 rows
    assert partition_bits(4_900_000) == 7  # 10^6 units x 5 coders
    assert partition_bits(49_000_000) == 10  # 10^7 units x 5 coders
    assert partition_bits(10**10) == 10
    for rows in (1 << 22, 5_000_000, 20_000_000, 49_000_000):
        assert 1 << 15 <= rows >> partition_bits(rows) < 1 << 16 or partition_bits(rows) == 10


id_values = st.sampled_from(["t1_a", "t1_b", "t1_c", "", "x 1", "t1_é"]) | st.sampled_from(
    ["t3_" + "x" * 20, "t3_" + "y" * 20]
)
id_sheets = st.lists(st.lists(id_values, max_size=8), min_size=2, max_size=6)


@settings(max_examples=300, deadline=None)
@given(sheets=id_sheets, copies=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), max_size=4))
def test_sheets_with_an_earlier_sheets_ids_share_its_match(sheets: list[list[str]], copies) -> None:
    """Sheets whose ids are an earlier sheet's, row for row, are matched once: every sheet gets
    the indices it would get matched with the others, and the units are the same, in the same order."""
    for source, target in copies:  # some sheets made copies of earlier ones
        if source < target < len(sheets):
            sheets[target] = list(sheets[source])
    columns = [pa.array(ids, type=pa.string()) for ids in sheets]
    for partitioned_from in (join_module.PARTITIONED_FROM, 1):  # one dictionary encoding; the partitioned path
        with patch.object(join_module, "PARTITIONED_FROM", partitioned_from):
            _check_shared_match(sheets, columns)


def _check_shared_match(sheets: list[list[str]], columns: list[pa.Array]) -> None:
    n_units, units_of, unit_ids = join_module._units(columns, None)
    _, expected, dictionary = match_ids(columns)  # every column matched, none shared
    blank = [at for at, value in enumerate(dictionary.to_pylist()) if value in ("", 0)]
    if blank:
        expected = [np.where(found == blank[0], -1, found - (found > blank[0])) for found in expected]
    assert [found.tolist() for found in units_of] == [found.tolist() for found in expected]
    first_seen = list(dict.fromkeys(value for ids in sheets for value in ids if value))
    assert n_units == len(first_seen) and unit_ids().to_pylist() == first_seen
    assert not any(found.flags.writeable for found in units_of)
    for sample in ([], [""], first_seen[:2] + ["t1_z"], [" t1_b", "", "t1_z", "t1_b ", *first_seen[:1], "t1_z"]):
        units = list(dict.fromkeys(value.strip() for value in sample if value.strip()))  # trimmed, once each
        n_sampled, sampled_of, sampled_ids = join_module._units(columns, sample)
        assert n_sampled == len(units) and sampled_ids().to_pylist() == units
        expected_sampled = [[units.index(value) if value in units else -1 for value in ids] for ids in sheets]
        assert [found.tolist() for found in sampled_of] == expected_sampled


def test_same_as_earlier_names_the_first_equal_sheet() -> None:
    ids = [f"t1_{value:06d}" for value in range(100)]
    shuffled = ids[1:] + ids[:1]
    late = ids[:99] + ["t1_other"]  # equal in the first values, not past them
    columns = [pa.array(column, type=pa.string()) for column in (ids, shuffled, ids, late, shuffled, ids[:50])]
    assert join_module.same_as_earlier(columns) == [0, 1, 0, 3, 1, 5]
