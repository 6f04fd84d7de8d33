"""The fingerprints of a set of unit ids that a bundle's manifest keeps (irr_audit.io.unitsketch
says what the sketch is for): the sketch, and the sha256 of the ids sorted. Both are defined by
what plain Python computes (tests/test_fingerprints.py); here they are made a block at a time so
that ten million ids take seconds, not a minute."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from itertools import islice

import numpy as np
import pyarrow as pa

from irr_audit.io.arrowtext import string_buffers
from irr_audit.io.unitsketch import HASH_DIGITS, SKETCH_SIZE

HASHED_AT_ONCE = 1 << 16  # ids hashed into one bytes object: no list of ten million small ones


def units_sketch(unit_ids: Iterable[str] | pa.Array) -> list[str]:
    """The bottom-k hashes of the ids, ascending (each id once).

    >>> units_sketch(["b", "a", "a"]) == sorted(units_sketch(["a", "b"]))
    True
    """
    return heads_sketch(hash_heads(unit_ids))


def hash_heads(unit_ids: Iterable[str] | pa.Array) -> np.ndarray:
    """Each id's hash as an integer, in the ids' order: hashed once, the sketch of any subset of the
    ids is made from them (the manifest's sketch of every unit and of the fully coded ones)."""
    return np.concatenate([np.empty(0, np.uint64), *map(_hash_heads, _utf8_blocks(unit_ids))])


def heads_sketch(heads: np.ndarray) -> list[str]:
    """The bottom-k of hashes made by :func:`hash_heads`, as the sketch's hex digits, ascending."""
    return [f"{int(head):0{HASH_DIGITS}x}" for head in _smallest_distinct(heads, SKETCH_SIZE)]


def _utf8_blocks(unit_ids: Iterable[str] | pa.Array) -> Iterator[list[bytes]]:
    """The ids' UTF-8 bytes, HASHED_AT_ONCE at a time."""
    if isinstance(unit_ids, pa.Array):
        binary = unit_ids.cast(pa.large_binary())
        for start in range(0, len(binary), HASHED_AT_ONCE):
            yield binary[start : start + HASHED_AT_ONCE].to_pylist()
        return
    encoded = (unit.encode("utf-8") for unit in unit_ids)
    while block := list(islice(encoded, HASHED_AT_ONCE)):
        yield block


def _hash_heads(block: list[bytes]) -> np.ndarray:
    """The first HASH_DIGITS hex digits of each sha256 as an integer (the first 8 bytes, big-endian:
    ordered as the digits are)."""
    sha256 = hashlib.sha256
    heads = b"".join([sha256(unit).digest()[: HASH_DIGITS // 2] for unit in block])
    return np.frombuffer(heads, dtype=">u8").astype(np.uint64)


def _smallest_distinct(values: np.ndarray, count: int) -> np.ndarray:
    """The ``count`` smallest distinct values, ascending, without sorting them all."""
    if len(values) > count:
        bound = np.partition(values, count)[count]  # at least count + 1 values are at most this
        smallest = np.unique(values[values <= bound])
        if len(smallest) >= count:
            return smallest[:count]
    return np.unique(values)[:count]  # (repeated values: fewer distinct ones below the bound)


WIDEST_SORTED_AS_BYTES = 32  # ids of at most this many bytes are sorted as fixed-width byte strings
SORTED_AT_ONCE = 1 << 20  # sorted ids made into lines and hashed a block at a time


def sorted_lines_sha256(unit_ids: Iterable[str] | pa.Array) -> str:
    """sha256 of the ids sorted (as Python sorts str: by code point, which is the order of
    their UTF-8 bytes) and joined by newlines, in UTF-8.

    >>> sorted_lines_sha256(["b", "a"]) == hashlib.sha256(b"a" + bytes([10]) + b"b").hexdigest()
    True
    """
    texts = unit_ids if isinstance(unit_ids, pa.Array) else pa.array(list(unit_ids), type=pa.string())
    padded = _padded_utf8(texts)
    if padded is None:
        return hashlib.sha256("\n".join(sorted(texts.to_pylist())).encode("utf-8")).hexdigest()
    ordered = np.sort(padded.ravel()).view(np.uint8).reshape(len(texts), -1)
    digest = hashlib.sha256()
    for start in range(0, len(ordered), SORTED_AT_ONCE):
        digest.update(_lines(ordered[start : start + SORTED_AT_ONCE], first=start == 0))
    return digest.hexdigest()


def _padded_utf8(texts: pa.Array) -> np.ndarray | None:
    """The ids' UTF-8 bytes as fixed-width byte strings (NUL-padded: a shorter id sorts first, as
    in Python), or None when an id is too wide for that, or holds a NUL (which padding would hide)."""
    buffers = string_buffers(texts) if len(texts) else None
    if buffers is None:
        return None
    offsets, data = buffers
    data = data[offsets[0] : offsets[-1]]
    offsets = offsets.astype(np.int64) - offsets[0]
    lengths = np.diff(offsets)
    width = int(lengths.max())
    if width == 0 or width > WIDEST_SORTED_AS_BYTES or not data.all():
        return None
    if int(lengths.min()) == width:
        return data.reshape(-1, width).view(f"S{width}")  # (read only: the sort makes its own)
    padded = np.zeros((len(texts), width), dtype=np.uint8)
    for column in range(width):  # a byte position at a time: no index array as long as all the bytes
        longer = np.flatnonzero(lengths > column)
        padded[longer, column] = data[offsets[longer] + column]
    return padded.view(f"S{width}")


def _lines(block: np.ndarray, first: bool) -> bytes:
    """Sorted NUL-padded ids (a row each) as their text, each after a newline but the very first."""
    lengths = np.count_nonzero(block, axis=1)  # an id holds no NUL: its length is its non-NUL bytes
    lines = np.zeros((len(block), block.shape[1] + 1), dtype=np.uint8)
    lines[:, 0] = ord("\n")
    lines[:, 1:] = block
    keep = np.arange(lines.shape[1]) <= lengths[:, None]
    if first:
        keep[0, 0] = False
    return lines[keep].tobytes()
