"""What a compiled id match would gain: irr-audit's numbering of packed ids (numpy and
pyarrow, ``irr_audit.join.factorize``) against the same partitioned numbering compiled with
numba, on the same keys, in one process. Not a dependency of irr-audit: a measurement for
the decision whether one is worth it (issue 23). Needs ``pip install numba``.

    python benchmarks/compiled_match.py                    # 5 columns of 10^7 keys, shuffled, 2% left out
    python benchmarks/compiled_match.py --units 1e6 --columns 2 --repeat 5

Both numberings must be equal (checked); each is timed best of ``--repeat``, the compiled one
after a first call that compiles it.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from irr_audit.join.factorize import factorize, partition_bits

GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def compiled_kernels(njit: Callable[..., Any]) -> dict[str, Callable[..., Any]]:
    """The four passes of the partitioned numbering, compiled: grouping a column by partition,
    numbering each partition with a small hash table, ranking by first appearance, and reading
    each column's numbers back in row order."""

    @njit(nogil=True, cache=False)
    def group(keys, bits, grouped, rows, partition, starts):
        shift = np.uint64(64 - max(bits, 1))  # a shift by 64 is undefined in compiled code: masked to 0 instead
        mask = np.uint64((1 << bits) - 1)
        counts = np.zeros(1 << bits, np.int64)
        for row in range(len(keys)):
            part = ((keys[row] * GOLDEN) >> shift) & mask
            partition[row] = part
            counts[part] += 1
        starts[0] = 0
        for part in range(1 << bits):
            starts[part + 1] = starts[part] + counts[part]
        cursor = starts[:-1].copy()
        for row in range(len(keys)):
            at = cursor[partition[row]]
            grouped[at] = keys[row]
            rows[at] = row
            cursor[partition[row]] = at + 1

    @njit(nogil=True, cache=False)
    def number(grouped, rows, starts, offsets, bits, local, distinct, first_column, first_row, bases):
        columns = starts.shape[0]
        largest = 0
        for part in range(1 << bits):
            size = 0
            for column in range(columns):
                size += starts[column, part + 1] - starts[column, part]
            largest = max(largest, size)
        slots = 1
        while slots < 2 * largest:
            slots <<= 1
        table_keys = np.zeros(slots, np.uint64)
        table_numbers = np.full(slots, -1, np.int32)
        used = np.empty(slots, np.int64)
        found = 0
        for part in range(1 << bits):
            mask = np.uint64(slots - 1)
            bases[part] = found
            in_use = 0
            for column in range(columns):
                for at in range(offsets[column] + starts[column, part], offsets[column] + starts[column, part + 1]):
                    key = grouped[at]
                    slot = ((key * GOLDEN) << np.uint64(bits)) >> np.uint64(32) & mask
                    while table_numbers[slot] >= 0 and table_keys[slot] != key:
                        slot = (slot + np.uint64(1)) & mask
                    if table_numbers[slot] < 0:
                        table_numbers[slot] = found - bases[part]
                        table_keys[slot] = key
                        used[in_use] = slot
                        in_use += 1
                        distinct[found] = key
                        first_column[found] = column
                        first_row[found] = rows[at]
                        found += 1
                    local[at] = table_numbers[slot]
            for slot_used in range(in_use):
                table_numbers[used[slot_used]] = -1
        bases[1 << bits] = found
        return found

    @njit(nogil=True, cache=False)
    def rank(first_column, first_row, found, lengths):
        ranks = np.empty(found, np.int32)
        next_rank = 0
        for column in range(len(lengths)):
            marks = np.full(lengths[column], -1, np.int32)
            for key in range(found):
                if first_column[key] == column:
                    marks[first_row[key]] = key
            for row in range(lengths[column]):
                if marks[row] >= 0:
                    ranks[marks[row]] = next_rank
                    next_rank += 1
        return ranks

    @njit(nogil=True, cache=False)
    def read_back(local, partition, starts, offset, bases, ranks, out):
        for part in range(len(starts) - 1):
            for at in range(offset + starts[part], offset + starts[part + 1]):
                local[at] = ranks[bases[part] + local[at]]
        cursor = starts[:-1].copy()
        for row in range(len(out)):
            at = cursor[partition[row]]
            out[row] = local[offset + at]
            cursor[partition[row]] = at + 1

    return {"group": group, "number": number, "rank": rank, "read_back": read_back}


def compiled_factorize(
    kernels: dict[str, Callable[..., Any]], columns: list[np.ndarray], bits: int
) -> tuple[list[np.ndarray], np.ndarray]:
    """As ``irr_audit.join.factorize.factorize``, through the compiled passes (one thread)."""
    lengths = np.array([len(column) for column in columns], np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    total = int(lengths.sum())
    grouped, rows = np.empty(total, np.uint64), np.empty(total, np.int32)
    starts = np.empty((len(columns), (1 << bits) + 1), np.int64)
    partitions = []
    for at, keys in enumerate(columns):
        partition = np.empty(len(keys), np.uint16)
        mine = slice(int(offsets[at]), int(offsets[at] + len(keys)))
        kernels["group"](keys, bits, grouped[mine], rows[mine], partition, starts[at])
        partitions.append(partition)
    local = np.empty(total, np.int32)
    distinct, first_column, first_row = np.empty(total, np.uint64), np.empty(total, np.int32), np.empty(total, np.int32)
    bases = np.empty((1 << bits) + 1, np.int64)
    found = kernels["number"](grouped, rows, starts, offsets, bits, local, distinct, first_column, first_row, bases)
    ranks = kernels["rank"](first_column, first_row, found, lengths)
    indices = []
    for at in range(len(columns)):
        out = np.empty(int(lengths[at]), np.int32)
        kernels["read_back"](local, partitions[at], starts[at], offsets[at], bases, ranks, out)
        indices.append(out)
    ordered = np.empty(found, np.uint64)
    ordered[ranks] = distinct[:found]
    return indices, ordered


def shuffled_columns(units: int, columns: int, seed: int) -> list[np.ndarray]:
    """Each coder's keys: the units' keys shuffled, about 2% of them left out (as bench.py's sheets)."""
    rng = np.random.default_rng(seed)
    keys = rng.integers(1, 2**63, size=units, dtype=np.uint64)
    return [rng.permutation(keys[rng.random(units) >= 0.02]) for _ in range(columns)]


def best_of(repeat: int, run: Callable[[], Any]) -> tuple[float, Any]:
    """The fastest of ``repeat`` runs, and the last run's result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return min(times), result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--units", type=float, default=1e7, help="distinct keys (default 1e7)")
    parser.add_argument("--columns", type=int, default=5, help="coders' columns (default 5)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each, the fastest shown (default 3)")
    parser.add_argument("--seed", type=int, default=1)
    options = parser.parse_args(argv)
    try:
        from numba import njit  # noqa: PLC0415 (only this script needs it)
    except ImportError:
        print("compiled_match.py needs numba: pip install numba", file=sys.stderr)
        return 2
    columns = shuffled_columns(int(options.units), options.columns, options.seed)
    bits = partition_bits(sum(map(len, columns)))
    kernels = compiled_kernels(njit)
    start = time.perf_counter()
    compiled_factorize(kernels, [column[:1000] for column in columns], bits)
    print(f"compiling the passes: {time.perf_counter() - start:.2f} s")
    numpy_s, (numpy_indices, numpy_distinct) = best_of(
        options.repeat, lambda: factorize([lambda column=column: column for column in columns], bits)
    )
    compiled_s, (compiled_indices, compiled_distinct) = best_of(
        options.repeat, lambda: compiled_factorize(kernels, columns, bits)
    )
    same = np.array_equal(numpy_distinct, compiled_distinct) and all(
        np.array_equal(one, other) for one, other in zip(numpy_indices, compiled_indices)
    )
    rows = sum(map(len, columns))
    print(f"{rows:,} keys in {len(columns)} columns, {len(numpy_distinct):,} distinct, {1 << bits} partitions")
    print(f"irr-audit (numpy and pyarrow, its threads): {numpy_s:.2f} s")
    print(f"compiled (numba, one thread):               {compiled_s:.2f} s")
    print(f"the same numbering: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
