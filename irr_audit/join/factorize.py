"""Numbering many integer keys by a cache-sized hash table at a time.

Matching ids numbers every sheet's (packed) ids by one dictionary of the distinct ids, in
order of first appearance. One hash table over ten million distinct keys is far larger
than a core's cache, so nearly every row costs a trip to memory. Here the keys are first
split by a hash of their bits into partitions (a stable counting sort per column), each
partition is numbered by a hash table that fits in cache, and the numbers are then put
back in order of first appearance. The result is exactly what pyarrow's
``dictionary_encode`` of the columns chained gives (tests/test_factorize.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np

from irr_audit._threads import Workers, thread_count
from irr_audit.io.arrowtext import KeyPacker, from_numpy, to_numpy

GROUP_BLOCK = 1 << 20  # rows grouped at a time: a block's temporaries stay a few MB
PARTITION_BITS = 10  # at most 1024 partitions: ten million distinct keys leave each table well inside a core's cache
ROWS_PER_PARTITION = 1 << 15  # fewer rows a partition outgrow no cache and pay more per-partition overhead (measured)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: the product's top bits mix every bit of the key


@dataclass(frozen=True)
class _Column:
    """One column's rows grouped by partition (rows in order within a group): the keys in that
    order, where each partition starts, and ``position``: where each row went (row i's key is
    ``keys[position[i]]``)."""

    position: np.ndarray
    keys: np.ndarray
    starts: np.ndarray  # partition p is keys[starts[p]:starts[p + 1]]


_Placement = tuple[np.ndarray, np.ndarray, np.ndarray]  # a column's rows' positions, partition starts, and numbers


@dataclass(frozen=True)
class _Partition:
    """One partition's keys numbered from 0 in order of first appearance (column by
    column, rows in order): its distinct keys, and where each distinct key first appears
    (its column, and its place in that column's grouped keys). The numbers themselves are
    written over the partition's keys (``_numbers``)."""

    distinct: np.ndarray
    first_column: np.ndarray
    first_position: np.ndarray


def factorize(
    columns: Sequence[Callable[[], np.ndarray]], bits: int = PARTITION_BITS, block: int = GROUP_BLOCK
) -> tuple[list[np.ndarray], np.ndarray]:
    """Each column's uint64 keys as int32 indices into the distinct keys, and the distinct
    keys, numbered in order of first appearance (the first column's rows in order, then the
    next column's): as ``pa.chunked_array(columns).dictionary_encode()`` numbers them.
    ``columns`` make each column's keys when called (a ``KeyPacker`` makes ``block`` rows of
    them at a time): a column's keys are made only while it is grouped."""
    with Workers(max_workers=thread_count()) as pool:
        grouped = list(pool.map(lambda make: _group(*_key_blocks(make), bits, block), columns))
        partitions = list(pool.map(partial(_number_partition, grouped), range(1 << bits)))
        positions = [column.position for column in grouped]
        # the threads take each column's numbers out of its keys (which then go) while this one
        # puts the distinct keys in order of first appearance
        numbering = [pool.submit(_placement, column) for column in grouped]
        grouped.clear()
        bases = np.cumsum([0] + [len(partition.distinct) for partition in partitions])
        order = _first_appearance(partitions, positions)
        del positions
        rank = np.empty(len(order), dtype=np.int32)
        rank[order] = np.arange(len(order), dtype=np.int32)
        distinct = np.concatenate([partition.distinct for partition in partitions])[order]
        del partitions, order
        placement: list[_Placement | None] = [numbered.result() for numbered in numbering]
        del numbering
        indices = list(pool.map(lambda at: _renumbered(*_handed_over(placement, at), bases, rank), range(len(columns))))
    return indices, distinct


def partition_bits(rows: int) -> int:
    """How many bits of the hash split ``rows`` keys into partitions: 32,768-65,536 rows a
    partition, at most 2**PARTITION_BITS partitions (five million rows: 128; fifty million: 1024)."""
    return min(PARTITION_BITS, max(0, (rows // ROWS_PER_PARTITION).bit_length() - 1))


def _placement(column: _Column) -> _Placement:
    """What renumbering a column needs: its rows' positions, partition starts and numbers (not its keys)."""
    return column.position, column.starts, _numbers(column)


def _handed_over(items: list[_Placement | None], at: int) -> _Placement:
    """The item at ``at``, no longer held by the list (its arrays go once its user is done)."""
    item = items[at]
    items[at] = None
    assert item is not None
    return item


def _key_blocks(make: Callable[[], np.ndarray]) -> tuple[int, Callable[[int, int], np.ndarray]]:
    """A column's length and what makes the keys of its rows ``start:stop``: a packer's are made
    a block at a time (no column of keys but the grouped one); others are made whole first."""
    if isinstance(make, KeyPacker):
        return make.size, make.rows
    keys = make()
    return len(keys), lambda start, stop: keys[start:stop]


def _group(size: int, keys_of: Callable[[int, int], np.ndarray], bits: int, block: int) -> _Column:
    """The column's rows grouped by partition: a counting sort (stable, linear), a block of rows
    at a time. Fresh memory is dear (each new page is zeroed by the system): only the grouped keys,
    the rows' positions and their partitions are as long as the column; a block's keys are made
    twice (for its partitions, then to be placed) rather than kept. Each row's position is written
    where the row is (inside the block), not each row where its position is: writes that stay in
    a block's few MB rather than spread over the whole column."""
    partition = np.empty(size, dtype=np.uint16)
    block_counts = []  # each block's rows per partition (bincount widens a block, not the column)
    for start in range(0, size, block):
        partition[start : start + block] = _partitions(keys_of(start, min(start + block, size)), bits)
        block_counts.append(np.bincount(partition[start : start + block], minlength=1 << bits))
    counts = np.sum(block_counts, axis=0, dtype=np.int64) if block_counts else np.zeros(1 << bits, np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)])
    position = np.empty(size, dtype=np.int32)
    keys = np.empty(size, dtype=np.uint64)
    placed = starts[:-1].copy()  # where each partition's next row goes
    steps = np.arange(min(block, size), dtype=np.int64)
    for start, in_block in zip(range(0, size, block), block_counts):
        stop = min(start + block, size)
        mine = partition[start:stop]
        local = np.argsort(mine, kind="stable")  # the block's rows by partition, rows in order
        # the i-th row of the sorted block goes to its partition's next place, moved on by the
        # rows of its partition before it in the block (i less where that partition starts there)
        shift = placed - (np.cumsum(in_block) - in_block)
        at = shift[mine[local]]
        at += steps[: stop - start]
        position[local + start] = at
        keys[at] = keys_of(start, stop)[local]
        placed += in_block
    return _Column(position, keys, starts)


def _partitions(keys: np.ndarray, bits: int) -> np.ndarray:
    """Each key's partition: the top ``bits`` of its Fibonacci hash."""
    with np.errstate(over="ignore"):
        hashed = keys * _GOLDEN
    hashed >>= np.uint64(64 - bits)
    return hashed.astype(np.uint16)


def _number_partition(grouped: list[_Column], part: int) -> _Partition:
    """Number one partition's keys across all columns with one small hash table. The numbers
    are written over the partition's keys, which are no longer needed (``_numbers`` reads them):
    no array of numbers beside the keys."""
    pieces = [column.keys[column.starts[part] : column.starts[part + 1]] for column in grouped]
    chained = np.concatenate(pieces) if pieces else np.empty(0, np.uint64)
    encoded = from_numpy(chained).dictionary_encode() if len(chained) else None
    numbers = to_numpy(encoded.indices).astype(np.int32, copy=False) if encoded else np.empty(0, np.int32)
    distinct = to_numpy(encoded.dictionary) if encoded else np.empty(0, np.uint64)
    first = _growth_points(numbers)  # ascending: each column's first appearances are one run of them
    bounds = np.cumsum([0] + [len(piece) for piece in pieces])
    runs = np.searchsorted(first, bounds)
    position = np.empty(len(first), dtype=np.int32)
    for at, source in enumerate(grouped):
        mine = slice(runs[at], runs[at + 1])
        position[mine] = source.starts[part] + first[mine] - bounds[at]
        _number_slot(source, part)[:] = numbers[bounds[at] : bounds[at + 1]]
    column = np.repeat(np.arange(len(grouped), dtype=np.int32), np.diff(runs))
    return _Partition(distinct, column, position)


def _number_slot(column: _Column, part: int) -> np.ndarray:
    """Where a partition's numbers are written: the first half of the bytes of its keys."""
    start, end = int(column.starts[part]), int(column.starts[part + 1])
    return column.keys.view(np.int32)[2 * start : 2 * start + end - start]


def _numbers(column: _Column) -> np.ndarray:
    """A column's numbers, partition after partition (as its keys were), out of its keys' buffer."""
    return np.concatenate([_number_slot(column, part) for part in range(len(column.starts) - 1)])


def _growth_points(numbers: np.ndarray) -> np.ndarray:
    """Where each number first appears: numbered in order of first appearance, a number is
    new exactly where the running maximum grows."""
    if not len(numbers):
        return np.empty(0, np.int64)
    running = np.maximum.accumulate(numbers)
    return np.flatnonzero(np.r_[True, running[1:] > running[:-1]])


def _first_appearance(partitions: list[_Partition], positions: list[np.ndarray]) -> np.ndarray:
    """The global numbers (partition by partition) in order of first appearance: column by
    column, and within a column by the row where each first appears. Each column's first
    appearances are marked at their grouped places (in order: partition by partition, places
    ascending), and the marks read back in row order through the rows' positions (no sort)."""
    first_column = np.concatenate([partition.first_column for partition in partitions])
    first_position = np.concatenate([partition.first_position for partition in partitions])
    found = []
    for column, position in enumerate(positions):
        mine = np.flatnonzero(first_column == column).astype(np.int32)
        marks = np.full(len(position), -1, dtype=np.int32)
        marks[first_position[mine]] = mine
        in_row_order = gather(marks, position)
        found.append(in_row_order[in_row_order >= 0])
    return np.concatenate(found) if found else np.empty(0, np.int32)


def _renumbered(
    position: np.ndarray, starts: np.ndarray, numbers: np.ndarray, bases: np.ndarray, rank: np.ndarray
) -> np.ndarray:
    """One column's indices in row order: each partition's numbers ranked by first appearance
    (a partition's ranks are a small slice of ``rank``: the lookups stay in the cache; in place),
    then read in row order. Row after row reads each partition's numbers in turn, so the reads
    stay near a thousand moving places: a scatter to rows would touch a new page per write."""
    for part in range(len(starts) - 1):
        piece = numbers[starts[part] : starts[part + 1]]
        np.take(rank[bases[part] : bases[part + 1]], piece, out=piece)
    return gather(numbers, position)


GATHER_BLOCK = 1 << 20  # rows read at a time: numpy widens the positions of each block to 64 bits


def gather(values: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """``values[positions]``, a block of rows at a time: the widened positions of a block stay small."""
    taken = np.empty(len(positions), dtype=values.dtype)
    for start in range(0, len(positions), GATHER_BLOCK):
        np.take(values, positions[start : start + GATHER_BLOCK], out=taken[start : start + GATHER_BLOCK])
    return taken


SCATTER_BLOCK = 1 << 20  # rows written at a time: numpy widens the positions of each block to 64 bits


def scatter(target: np.ndarray, positions: np.ndarray, values: np.ndarray) -> None:
    """``target[positions] = values``, a block of rows at a time (in row order, so a later row
    wins as in one assignment): the widened positions of a block stay small."""
    for start in range(0, len(positions), SCATTER_BLOCK):
        target[positions[start : start + SCATTER_BLOCK]] = values[start : start + SCATTER_BLOCK]
