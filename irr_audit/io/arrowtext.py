"""Byte-level looks at pyarrow string arrays, for the hot paths on large sheets.

pyarrow's string kernels are exact but copy every value; these read the bytes in
place (numpy views of an array's offsets and data) to answer cheap questions
first: could any value have whitespace around it? Can every id be packed,
losslessly, into one 64-bit integer, so that matching ids hashes integers
instead of strings? Each answer is exact or errs on the safe side (the caller
then takes the exact, slower path).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from irr_audit._threads import Workers, thread_count

PACKED_BYTES = 8  # an id's bytes after the shared prefix fit in one uint64
LENGTH_BLOCK = 1 << 16  # values compared at a time when checking that they step evenly
LOW_BYTES_MASK = np.array([(1 << (8 * count)) - 1 for count in range(PACKED_BYTES + 1)], dtype=np.uint64)


def string_buffers(column: pa.Array) -> tuple[np.ndarray, np.ndarray] | None:
    """(offsets, data) of a string array as numpy views, value i being
    ``data[offsets[i]:offsets[i + 1]]``; None for another type or any null."""
    if column.null_count or column.type not in (pa.string(), pa.large_string()):
        return None
    _, offsets_buffer, data_buffer = column.buffers()
    if offsets_buffer is None:
        return None
    offset_type = np.int32 if column.type == pa.string() else np.int64
    offsets = np.frombuffer(offsets_buffer, dtype=offset_type)[column.offset : column.offset + len(column) + 1]
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else np.empty(0, np.uint8)
    return offsets, data


def from_numpy(values: np.ndarray) -> pa.Array:
    """A 1-D numpy array of numbers as a pyarrow array, without a copy when contiguous.
    (pa.array does the same, but its first call imports numpy.ma, 35 ms, to look for a mask.)"""
    if values.dtype == np.bool_:
        raise TypeError("pyarrow stores booleans as bits: use pa.array for them")
    values = np.ascontiguousarray(values)
    return pa.Array.from_buffers(pa.from_numpy_dtype(values.dtype), len(values), [None, pa.py_buffer(values)])


NUMPY_TYPES = {
    pa.int8(): np.int8,
    pa.int16(): np.int16,
    pa.int32(): np.int32,
    pa.int64(): np.int64,
    pa.uint8(): np.uint8,
    pa.uint16(): np.uint16,
    pa.uint32(): np.uint32,
    pa.uint64(): np.uint64,
    pa.float32(): np.float32,
    pa.float64(): np.float64,
}


def to_numpy(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A pyarrow array as a numpy array, as ``values.to_numpy(zero_copy_only=False)`` gives
    it, read from the array's buffers: pyarrow's conversion imports pandas on its first call
    (0.4 s of start-up) for what a score of a few sheets does not otherwise need. Numbers
    without nulls are a read-only view, booleans are unpacked from their bits, text becomes
    Python strings (None for a null; through pyarrow's conversion once pandas is loaded
    anyway); anything else goes through pyarrow's conversion."""
    if isinstance(values, pa.ChunkedArray):
        chunks = [to_numpy(chunk) for chunk in values.chunks]
        return np.concatenate(chunks) if chunks else values.to_numpy()
    start, stop = values.offset, values.offset + len(values)
    if pa.types.is_string(values.type) or pa.types.is_large_string(values.type):
        # once pandas is loaded anyway, pyarrow's conversion is the faster
        return values.to_numpy(zero_copy_only=False) if "pandas" in sys.modules else python_strings(values)
    if values.null_count:
        return values.to_numpy(zero_copy_only=False)
    if pa.types.is_boolean(values.type):
        bits = values.buffers()[1]
        if bits is None:
            return np.zeros(len(values), dtype=bool)
        return np.unpackbits(np.frombuffer(bits, dtype=np.uint8), bitorder="little")[start:stop].astype(bool)
    dtype = NUMPY_TYPES.get(values.type)
    data = values.buffers()[1]
    if dtype is None or data is None:
        return values.to_numpy(zero_copy_only=False)
    return np.frombuffer(data, dtype=dtype)[start:stop]


def string_array(values: list[str]) -> pa.Array:
    """Python strings as a pyarrow string array, as ``pa.array(values, type=pa.string())``
    makes it (which imports pandas on its first call, to look for pandas objects)."""
    joined = "".join(values)
    if joined.isascii():  # one character a byte: the lengths are the strings' own, one encoding for all
        data = joined.encode("ascii")
        lengths = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
    else:
        encoded = [value.encode("utf-8") for value in values]
        data = b"".join(encoded)
        lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
    offsets = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    kind = pa.string() if offsets[-1] < 2**31 else pa.large_string()
    offsets = offsets.astype(np.int32) if kind == pa.string() else offsets
    array = pa.Array.from_buffers(kind, len(values), [None, pa.py_buffer(offsets), pa.py_buffer(data)])
    return array if kind == pa.string() else array.cast(pa.string())


def plain_text(values: pa.Array) -> pa.Array:
    """A text column as a plain string array: a dictionary-encoded one (a sheet's codes) decoded."""
    return values.dictionary_decode() if isinstance(values, pa.DictionaryArray) else values


def python_strings(values: pa.Array) -> np.ndarray:
    """A string array as a numpy array of Python strings (None for a null), as pyarrow converts it."""
    text = np.empty(len(values), dtype=object)
    text[:] = values.to_pylist()
    return text


def may_have_edge_space(column: pa.Array) -> bool:
    """False only when no value starts or ends with a byte that can begin or end
    whitespace (ASCII space and control bytes, any non-ASCII byte), so trimming
    whitespace would change nothing."""
    buffers = string_buffers(column)
    if buffers is None:
        return True
    first, last = _edge_bytes(*buffers)
    return _may_be_space(first) or _may_be_space(last)


def _edge_bytes(offsets: np.ndarray, data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first and the last byte of every non-empty value. Values of one length (the usual
    ids) are a byte matrix: its first and last columns, views rather than copies."""
    if len(offsets) > 1 and offsets[1] > offsets[0] and _one_length(offsets):
        matrix = _byte_matrix(offsets, data)
        return matrix[:, 0], matrix[:, -1]
    starts, ends = offsets[:-1], offsets[1:]
    filled = ends > starts
    if not filled.all():
        starts, ends = starts[filled], ends[filled]
    return data[starts], data[ends - 1]


def _one_length(offsets: np.ndarray) -> bool:
    """Whether every value is as long as the first (the offsets step evenly)."""
    return steps_evenly(offsets, int(offsets[1] - offsets[0]))


def steps_evenly(values: np.ndarray, step: int) -> bool:
    """Whether each value is the one before plus ``step``; a block at a time (no temporary as
    long as the column), after a check of the ends that rules most other columns out at once."""
    if len(values) and int(values[-1] - values[0]) != step * (len(values) - 1):
        return False
    return _every_step(values, lambda steps: steps == step)


def has_no_empty_value(column: pa.Array) -> bool:
    """True only when every value holds a byte (its offsets rise at every step); False when
    unsure (nulls, another type)."""
    buffers = string_buffers(column)
    return buffers is not None and _every_step(buffers[0], lambda steps: steps > 0)


def _every_step(values: np.ndarray, test: Callable[[np.ndarray], np.ndarray]) -> bool:
    """Whether ``test`` holds for every step from one value to the next, a block at a time
    (no temporary as long as the column)."""
    return all(
        bool(test(np.diff(values[start : start + LENGTH_BLOCK + 1])).all())
        for start in range(0, len(values) - 1, LENGTH_BLOCK)
    )


def _lengths(offsets: np.ndarray) -> np.ndarray:
    """Each value's length in bytes; for values of one length, one number seen as many (no copy)."""
    if len(offsets) > 1 and _one_length(offsets):
        return np.broadcast_to(offsets[1] - offsets[0], (len(offsets) - 1,))
    return np.diff(offsets)


def _may_be_space(bytes_: np.ndarray) -> bool:
    """Whether any of these bytes is ASCII space or control, or non-ASCII (two reductions, no
    temporary as long as the column)."""
    return bool(len(bytes_)) and (int(bytes_.min()) <= 0x20 or int(bytes_.max()) >= 0x80)


def only_printable_ascii(column: pa.Array) -> bool:
    """True only when every value is printable ASCII (space to tilde): no control character,
    no byte of a multi-byte character. False when unsure (nulls, another type)."""
    buffers = string_buffers(column)
    if buffers is None:
        return False
    offsets, data = buffers
    used = data[offsets[0] : offsets[-1]] if len(offsets) else data[:0]
    return not len(used) or (int(used.min()) >= 0x20 and int(used.max()) < 0x7F)


def contains_any_byte(column: pa.Array, characters: bytes) -> bool:
    """Whether any value holds one of these (ASCII) characters; True when unsure (nulls, another type)."""
    buffers = string_buffers(column)
    if buffers is None:
        return True
    offsets, data = buffers
    used = data[offsets[0] : offsets[-1]] if len(offsets) else data[:0]
    return any(character in used for character in characters)


def starts_with_any_byte(column: pa.Array, characters: bytes) -> bool:
    """Whether any value starts with one of these (ASCII) characters; True when unsure."""
    buffers = string_buffers(column)
    if buffers is None:
        return True
    first, _ = _edge_bytes(*buffers)
    wanted = np.zeros(256, dtype=bool)
    wanted[np.frombuffer(characters, dtype=np.uint8)] = True
    return bool(wanted[first].any())  # a lookup per value (np.isin compares each value with each character)


def packed_keys(columns: list[pa.Array]) -> list[np.ndarray] | None:
    """Every column's values as uint64 keys, equal exactly when the values are equal,
    with 0 for the empty string and only for it.

    Possible when the non-empty values share a prefix and differ in at most 8 bytes
    after it (``t1_9f3a2c``, ``1234567890``), and no value holds a NUL byte: the
    bytes after the prefix are the key's low bytes, zero-padded. Otherwise None.
    """
    packers = key_packers(columns)
    if packers is None:
        return None
    with Workers(max_workers=thread_count()) as pool:  # numpy copies without the GIL
        return list(pool.map(lambda pack: pack(), packers))


@dataclass(frozen=True)
class KeyPacker:
    """Packs one column's values into uint64 keys: all of them when called, or those of rows
    ``start:stop`` (``rows``), so that a caller can hold a block of a large column's keys at a time."""

    size: int
    rows: Callable[[int, int], np.ndarray]

    def __call__(self) -> np.ndarray:
        return self.rows(0, self.size)


def key_packers(columns: list[pa.Array]) -> list[KeyPacker] | None:
    """As ``packed_keys``, each column's keys made only when asked for (so that a caller can
    let each column's keys go before the next is made); None when some column cannot be packed."""
    views = []
    for column in columns:
        view = string_buffers(column)
        if view is None:
            return None
        views.append(view)
    lengths = [_lengths(offsets) for offsets, _ in views]
    prefix = _shared_prefix(views, lengths)
    if prefix is None or not all(_packable(view, length, prefix) for view, length in zip(views, lengths)):
        return None
    return [_packer(view, length, prefix) for view, length in zip(views, lengths)]


def _shared_prefix(views: list[tuple[np.ndarray, np.ndarray]], lengths: list[np.ndarray]) -> np.ndarray | None:
    """What the values must share for the longest to fit in a key after it: the first
    value's first (longest - 8) bytes; None when the first value is not that long
    (it could not be packed)."""
    longest = max((int(length.max()) for length in lengths if len(length)), default=0)
    needed = max(0, longest - PACKED_BYTES)
    first = _first_value(views, lengths)
    return first[:needed] if len(first) >= needed else None


def _one_length_over(length: np.ndarray, prefix: np.ndarray) -> bool:
    """Whether every value has the same length, longer than the prefix (the usual ids): a byte matrix."""
    return bool(len(length) and length.min() == length.max() > len(prefix))


def _byte_matrix(offsets: np.ndarray, data: np.ndarray) -> np.ndarray:
    """Values of one length, not empty, as a byte matrix: row i is value i's bytes (a view)."""
    return data[offsets[0] : offsets[-1]].reshape(len(offsets) - 1, int(offsets[1] - offsets[0]))


def _packable(view: tuple[np.ndarray, np.ndarray], length: np.ndarray, prefix: np.ndarray) -> bool:
    """Whether the column packs losslessly after ``prefix``: no NUL byte, every non-empty value
    longer than the prefix (else it would pack like the empty string) and starting with it."""
    offsets, data = view
    if _has_nul(data, offsets):
        return False
    if _one_length_over(length, prefix):
        return bool((_byte_matrix(*view)[:, : len(prefix)] == prefix).all())
    filled = length > 0
    if len(prefix) and (length[filled] <= len(prefix)).any():
        return False
    return _shares_prefix(data, offsets[:-1][filled], prefix)


def _packer(view: tuple[np.ndarray, np.ndarray], length: np.ndarray, prefix: np.ndarray) -> KeyPacker:
    """What packs a packable column, or a block of its rows."""
    if _one_length_over(length, prefix):
        matrix = _byte_matrix(*view)
        return KeyPacker(len(matrix), lambda start, stop: _pack_matrix(matrix[start:stop], len(prefix)))
    offsets, data = view
    return KeyPacker(
        len(length), lambda start, stop: _pack(data, offsets[start : stop + 1], length[start:stop], len(prefix))
    )


def _pack_matrix(matrix: np.ndarray, prefix_length: int) -> np.ndarray:
    """Pack values of one length, row i of ``matrix`` being value i's bytes: the
    bytes after the prefix become the key's low bytes (little-endian), zero-padded."""
    if matrix.shape[1] - prefix_length == PACKED_BYTES:  # each key is one (unaligned) word of the matrix
        # copied as opaque 8-byte items (numpy's unaligned integer copy is slower), then read as integers
        return np.ascontiguousarray(matrix[:, prefix_length:].view("V8")[:, 0]).view("<u8")
    padded = np.zeros((len(matrix), PACKED_BYTES), dtype=np.uint8)
    padded[:, : matrix.shape[1] - prefix_length] = matrix[:, prefix_length:]
    return padded.view("<u8").ravel()


def _first_value(views: list[tuple[np.ndarray, np.ndarray]], lengths: list[np.ndarray]) -> np.ndarray:
    for (offsets, data), length in zip(views, lengths):
        filled = np.flatnonzero(length[:64])  # nearly always among the first values: no pass over all
        if not len(filled):
            filled = np.flatnonzero(length)
        if len(filled):
            start = offsets[filled[0]]
            return data[start : start + length[filled[0]]]
    return np.empty(0, np.uint8)


def _has_nul(data: np.ndarray, offsets: np.ndarray) -> bool:
    return not data[offsets[0] : offsets[-1]].all()


def _shares_prefix(data: np.ndarray, starts: np.ndarray, prefix: np.ndarray) -> bool:
    return all((data[starts + at] == byte).all() for at, byte in enumerate(prefix))


def _pack(data: np.ndarray, offsets: np.ndarray, length: np.ndarray, prefix_length: int) -> np.ndarray:
    """Read 8 bytes at each value's first byte after the prefix (an unaligned
    little-endian uint64 view of the data) and keep the value's own bytes."""
    start = np.minimum(offsets[:-1] + prefix_length, offsets[1:])  # an empty value reads at its own offset
    # Starts never decrease, so only the last few values can run past the data's end:
    # those are read from a zero-padded copy of the tail.
    safe = int(np.searchsorted(start, len(data) - PACKED_BYTES, side="right"))
    words = np.empty(len(start), dtype=np.uint64)
    words[:safe] = _words(data)[start[:safe]]
    if safe < len(start):
        tail_at = int(start[safe])
        tail = np.concatenate([data[tail_at:], np.zeros(PACKED_BYTES, np.uint8)])
        words[safe:] = _words(tail)[start[safe:] - tail_at]
    own = length - prefix_length
    if len(own) and own.min() == own.max() > 0:  # one length (the usual id format): one mask for all
        return words & LOW_BYTES_MASK[own[0]]
    return words & LOW_BYTES_MASK[np.maximum(own, 0)]  # the empty id packs to 0


def _words(data: np.ndarray) -> np.ndarray:
    """Every 8-byte little-endian word of ``data``, one starting at each byte (a view)."""
    return np.ndarray((max(len(data) - PACKED_BYTES + 1, 0),), dtype="<u8", buffer=data, strides=(1,))
