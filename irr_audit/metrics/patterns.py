"""Units compressed to their distinct coding patterns.

Every coefficient here is a function of per-unit quantities summed over units,
so units with the same row of codes can be counted once with a frequency.
A million units of five coders on a short scale collapse to a few hundred
patterns; the bootstrap then resamples patterns with multinomial counts.

Input convention: ``codes`` is an integer array (n_units, n_coders) holding a
category index 0..K-1, or -1 for a missing (not valid) code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

MISSING = -1
# At most this many units in all: kappa decides p_e = 1 from sum_k row_k col_k == n^2, exact in
# 64-bit integers only while n^2 < 2^63.
MAX_UNITS = 3_000_000_000
DIRECT_KEYS = 1 << 20  # rows are counted by key directly when there are at most this many possible keys


def validate_codes(codes: np.ndarray, n_categories: int) -> np.ndarray:
    """Return ``codes`` as a 2-D int64 array; reject indices outside -1..K-1."""
    array = np.asarray(codes)
    if array.ndim == 1:
        array = array[:, None]
    if array.ndim != 2:
        raise ValueError(f"codes must be (n_units, n_coders), got shape {array.shape}")
    if array.size and not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"codes must be integer category indices, got dtype {array.dtype}")
    if not np.issubdtype(array.dtype, np.integer):  # an empty float array, say
        array = array.astype(np.int64)
    # Small integer codes (int8 from the join) stay small: no copy of a large matrix.
    if n_categories < 0:
        raise ValueError(f"n_categories must be >= 0, got {n_categories}")
    if array.size and (array.min() < MISSING or array.max() >= n_categories):
        raise ValueError(
            f"codes must be -1 (missing) or a category index 0..{n_categories - 1}, "
            f"found {int(array.min())}..{int(array.max())}"
        )
    return array


@dataclass(frozen=True)
class Patterns:
    """Distinct rows of codes (P, r) and how many units show each (P,)."""

    rows: np.ndarray
    counts: np.ndarray
    n_categories: int

    @property
    def n_coders(self) -> int:
        return int(self.rows.shape[1])

    @property
    def n_units(self) -> int:
        return int(self.counts.sum())

    @cached_property
    def n_valid(self) -> np.ndarray:
        """m_p: the number of valid codes in each pattern (computed once, read-only)."""
        return _read_only((self.rows >= 0).sum(axis=1))

    @cached_property
    def slots(self) -> tuple[np.ndarray, np.ndarray]:
        """r_pk without its zeros: each pattern's distinct valid codes (P, s), -1 where a pattern has
        fewer, and how many coders gave each (P, s), 0 there. s is at most the number of coders, so
        this is the size of the rows whatever the number of categories (computed once, read-only)."""
        ordered = np.sort(self.rows, axis=1)
        n_patterns, width = ordered.shape
        if width == 0:
            return _read_only(np.full((n_patterns, 0), MISSING)), _read_only(np.zeros((n_patterns, 0), np.int64))
        positions = np.arange(width)
        starts = np.ones(ordered.shape, dtype=bool)
        starts[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
        ends = np.ones(ordered.shape, dtype=bool)
        ends[:, :-1] = starts[:, 1:]
        valid = ordered >= 0
        slot = np.cumsum(starts & valid, axis=1) - 1  # which distinct code of its pattern a position holds
        run_start = np.maximum.accumulate(np.where(starts, positions, 0), axis=1)
        last = ends & valid  # the last position of each run of a valid code: its run is the count
        size = max(int((starts & valid).sum(axis=1).max(initial=0)), 1)
        categories = np.full((n_patterns, size), MISSING, dtype=np.int64)
        counts = np.zeros((n_patterns, size), dtype=np.int64)
        pattern, position = np.nonzero(last)
        categories[pattern, slot[pattern, position]] = ordered[pattern, position]
        counts[pattern, slot[pattern, position]] = position - run_start[pattern, position] + 1
        return _read_only(categories), _read_only(counts)

    def category_totals(self, weights: np.ndarray) -> np.ndarray:
        """sum_p weights_p r_pk for weights (..., P): shape (..., K), float64 (exact for integer weights)."""
        _, counts = self.slots
        weights = np.asarray(weights, dtype=np.float64)
        out = np.zeros((*weights.shape[:-1], self.n_categories))
        for slot, grouping in enumerate(self.slot_groupings):
            out += grouping.sums(weights * counts[:, slot])
        return out

    @cached_property
    def slot_groupings(self) -> tuple[Grouping, ...]:
        """Sums by category of each column of ``slots``."""
        categories, _ = self.slots
        return tuple(Grouping(categories[:, slot], self.n_categories) for slot in range(categories.shape[1]))

    @cached_property
    def _groupings(self) -> dict[object, Grouping]:
        return {}

    def grouping(self, key: object, keys: Callable[[], np.ndarray], n_keys: int) -> Grouping:
        """The Grouping of the keys ``keys()`` makes, made once per ``key`` for these patterns."""
        if key not in self._groupings:
            self._groupings[key] = Grouping(keys(), n_keys)
        return self._groupings[key]

    def select(self, keep: np.ndarray | slice) -> Patterns:
        """Only the patterns where ``keep`` is true."""
        return Patterns(self.rows[keep], self.counts[keep], self.n_categories)

    def columns(self, coders: list[int] | tuple[int, ...]) -> Patterns:
        """The same units seen through a subset of coders, re-compressed."""
        return compress(self.rows[:, list(coders)], self.n_categories, self.counts)


def _read_only(array: np.ndarray) -> np.ndarray:
    """``array``, no longer writable: shared by every coefficient that asks for it."""
    array.flags.writeable = False
    return array


def _keys_fit(n_coders: int, n_categories: int) -> bool:
    """Whether a row of ``n_coders`` codes has an int64 key (base K+1 digits)."""
    return n_coders * np.log2(max(n_categories + 1, 2)) < 62


def _row_keys(codes: np.ndarray, n_categories: int) -> np.ndarray | None:
    """One int64 key per row (base K+1 digits), or None when it would overflow."""
    base = n_categories + 1
    if not _keys_fit(codes.shape[1], n_categories):
        return None
    places = base ** np.arange(codes.shape[1], dtype=np.int64)
    keys = np.full(len(codes), places.sum(), dtype=np.int64)  # the +1 of every digit
    digit = np.empty(len(codes), dtype=np.int64)
    for column, place in enumerate(places):  # column by column, into one buffer: no large temporaries
        np.multiply(codes[:, column], place, out=digit, dtype=np.int64)
        keys += digit
    return keys


def unique_rows(codes: np.ndarray, n_categories: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What ``np.unique(codes, axis=0, return_index=True, return_inverse=True, return_counts=True)``
    gives after its rows (codes from -1 to ``n_categories`` - 1): where each distinct row first
    appears, each row's among them, and how many there are; in the same order, by sorting one
    int64 key per row (the first column its top digit) where the keys fit, not rows."""
    keys = _row_keys(codes[:, ::-1], n_categories)
    if keys is None:
        _, first, inverse, counts = np.unique(codes, axis=0, return_index=True, return_inverse=True, return_counts=True)
    else:
        _, first, inverse, counts = np.unique(keys, return_index=True, return_inverse=True, return_counts=True)
    return first, inverse.reshape(-1), counts


COUNT_BLOCK = 1 << 20  # rows keyed and counted at a time: the int64 keys of a block stay a few MB
BLOCKED_KEYS = 1 << 16  # possible keys up to which rows are counted a block at a time


def _key_counts(codes: np.ndarray, n_categories: int, counts: np.ndarray | None, size: int) -> np.ndarray:
    """How many rows (or how much of ``counts``) have each of the ``size`` possible row keys. With
    few (a handful of codes and coders), a block of rows at a time: ten million units' keys would
    be an 80 MB array, and bincount widens its input again; with many, at once (each block would
    count into an array of every possible key)."""
    step = COUNT_BLOCK if size <= BLOCKED_KEYS else max(len(codes), 1)
    weights = None if counts is None else np.asarray(counts)
    by_key = np.zeros(size, dtype=np.int64 if weights is None else np.float64)
    for start in range(0, len(codes), step):
        keys = _row_keys(codes[start : start + step], n_categories)
        assert keys is not None  # the caller has checked that keys fit
        found = np.bincount(keys, weights=None if weights is None else weights[start : start + step])
        by_key[: len(found)] += found
    return by_key


def compress(codes: np.ndarray, n_categories: int, counts: np.ndarray | None = None) -> Patterns:
    """Group identical rows of ``codes``; ``counts`` weights rows (default 1 each).

    >>> p = compress(np.array([[0, 1], [0, 1], [1, 1]]), 2)
    >>> p.rows.tolist(), p.counts.tolist()
    ([[0, 1], [1, 1]], [2, 1])
    """
    codes = validate_codes(codes, n_categories)
    if len(codes) == 0:
        return Patterns(codes.reshape(0, codes.shape[1]).astype(np.int64), np.zeros(0, dtype=np.int64), n_categories)
    possible = (n_categories + 1) ** codes.shape[1]
    if _keys_fit(codes.shape[1], n_categories) and possible <= max(DIRECT_KEYS, 2 * len(codes)):
        # few possible rows: count every key directly, no sort; keys ascend, as np.unique's do
        by_key = _key_counts(codes, n_categories, counts, possible)
        present = np.flatnonzero(by_key)
        return Patterns(_rows_of(present, n_categories, codes.shape[1]), by_key[present].astype(np.int64), n_categories)
    keys = _row_keys(codes, n_categories)
    if keys is None:
        _, first, inverse = np.unique(codes, axis=0, return_index=True, return_inverse=True)
    else:
        _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    pattern_counts = np.bincount(inverse, weights=None if counts is None else np.asarray(counts), minlength=len(first))
    return Patterns(codes[first].astype(np.int64), pattern_counts.astype(np.int64), n_categories)


def _rows_of(keys: np.ndarray, n_categories: int, n_coders: int) -> np.ndarray:
    """The rows of codes behind row keys (the inverse of _row_keys)."""
    base = n_categories + 1
    return (keys[:, None] // base ** np.arange(n_coders, dtype=np.int64) % base) - 1


def merge_coders(patterns: Patterns) -> tuple[Patterns, np.ndarray]:
    """The patterns merged by their codes alone (each row's codes sorted, so which coder
    gave which code is dropped), and each pattern's row among them.

    >>> merged, index = merge_coders(compress(np.array([[0, 1], [1, 0], [1, 1]]), 2))
    >>> merged.rows.tolist(), merged.counts.tolist(), index.tolist()
    ([[0, 1], [1, 1]], [2, 1], [0, 0, 1])
    """
    sorted_rows = np.sort(patterns.rows, axis=1)
    _, first, index = np.unique(sorted_rows, axis=0, return_index=True, return_inverse=True)
    index = index.reshape(-1)
    counts = np.bincount(index, weights=patterns.counts, minlength=len(first)).astype(np.int64)
    return Patterns(sorted_rows[first], counts, patterns.n_categories), index


def unit_weights(units: np.ndarray) -> np.ndarray:
    """Unit weights (B, P) as float64. Counts are integers far below 2**53, so every
    weighted sum of integers stays exact, and the products run in BLAS (numpy's
    integer matrix products do not, and are an order of magnitude slower)."""
    return np.atleast_2d(np.asarray(units, dtype=np.float64))


class Grouping:
    """Sums of values over the entries of each key 0..n_keys-1 (entries with a negative key left
    out), with the keys sorted once: a pattern's codes or a table's cells are summed over for
    every chunk of bootstrap replicates. Memory: the values and the sums, nothing per key x entry."""

    def __init__(self, keys: np.ndarray, n_keys: int) -> None:
        keys = np.asarray(keys)
        self.n_keys = n_keys
        self._kept = np.flatnonzero(keys >= 0)
        self._keys = keys[self._kept]

    @cached_property
    def _sorted(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The entries in the order of their keys, where each key's run starts, and those keys
        (sorted only when a batch is summed: one row of values is counted without sorting)."""
        order = np.argsort(self._keys, kind="stable")
        ordered = self._keys[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if len(ordered) else order
        return self._kept[order], starts, ordered[starts]

    def sums(self, values: np.ndarray) -> np.ndarray:
        """(..., N) values -> (..., n_keys) sums, float64."""
        values = np.asarray(values, dtype=np.float64)
        if int(np.prod(values.shape[:-1])) == 1:  # one row (a point estimate): counted, no sort
            counted = np.bincount(self._keys, weights=values.reshape(-1)[self._kept], minlength=self.n_keys)
            return counted.astype(np.float64).reshape(*values.shape[:-1], self.n_keys)
        flat = values.reshape(int(np.prod(values.shape[:-1])), values.shape[-1])
        out = np.zeros((flat.shape[0], self.n_keys))
        take, starts, present = self._sorted
        if len(take):
            out[:, present] = np.add.reduceat(flat[:, take], starts, axis=1)
        return out.reshape(*values.shape[:-1], self.n_keys)


def pair_tables(patterns: Patterns, a: int, b: int, weights: np.ndarray) -> np.ndarray:
    """K x K tables of coder a (rows) by coder b (columns) for a batch of unit weights.

    ``weights`` has shape (..., P): the number of times each pattern is counted.
    Patterns where either coder is missing contribute nothing. Memory: the tables and the weights.
    """
    k = patterns.n_categories
    rows = patterns.rows
    both = (rows[:, a] >= 0) & (rows[:, b] >= 0)
    cells = patterns.grouping(("pair", a, b), lambda: np.where(both, rows[:, a] * k + rows[:, b], MISSING), k * k)
    tables = cells.sums(weights)  # exact integers (see unit_weights)
    return tables.astype(np.int64).reshape(*np.shape(weights)[:-1], k, k)
