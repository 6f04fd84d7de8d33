"""The join folder's large files (joined.csv, missingness_log.csv, missingness_log.jsonl),
written from the join's arrays in chunks of lines, without pandas.

Ten million units make a joined.csv of 300 MB and a log of 500 MB: each file is made
and written a chunk at a time (irr_audit.io.runfolder hashes the chunks as it writes them),
so no file is ever whole in memory. A line is joined from a few columns of pieces: the id,
and the text of everything else on the line, made once per distinct combination (a
unit's codes; a log row's raw value, reason and detail) and taken for every line.

The bytes are exactly those of the row-by-row definitions: frame_csv_text of
:meth:`JoinResult.joined_frame` and :attr:`JoinResult.log`, and json_line of each log row
(tests/test_join_writers.py compares them on hostile values).
"""

from __future__ import annotations

import functools
import itertools
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from irr_audit._threads import Workers, thread_count
from irr_audit.io.arrowtext import from_numpy, string_array, to_numpy
from irr_audit.io.outputs import csv_line, json_line, jsonl_text, refuse_column_collisions, spreadsheet_safe
from irr_audit.io.textcolumns import joined_lines, json_literal, json_string_bodies, text_fields, text_scalar
from irr_audit.join.join import REASONS, JoinResult, SheetLog, log_parts
from irr_audit.join.missingness import LOG_COLUMNS
from irr_audit.metrics.patterns import compress

CHUNK_ROWS = 1 << 16  # lines made at a time: a few MB each (several are in flight), whatever the number of units
MAX_COMBINATIONS = 1 << 14  # a group of coders' codes is one piece while it has at most this many combinations
UNITS = "units"  # counts.csv's last column: how many units have the row's pattern of codes


def joined_csv_chunks(
    join: JoinResult, chunk_rows: int = CHUNK_ROWS, makers: ThreadPoolExecutor | None = None
) -> Iterator[bytes | memoryview]:
    """joined.csv: the header, then one line per unit (its id, each coder's code or empty, fully_coded).
    ``makers``: the pool the chunks are made on (by default one of the file's own)."""
    yield csv_line([spreadsheet_safe(name) for name in ("comment_id", *join.coders, "fully_coded")]).encode("utf-8")
    labels = text_fields(string_array([*join.rule.categories, ""])).to_pylist()
    groups = _coder_groups(len(join.coders), len(labels))
    pieces = [_group_texts(len(group), labels, last=index == len(groups) - 1) for index, group in enumerate(groups)]
    codes, fully = join.codes, join.fully_coded

    def lines(start: int, stop: int) -> memoryview:
        line: list[pa.Array | str] = [text_fields(join.units[start:stop])]
        for index, (group, texts) in enumerate(zip(groups, pieces)):
            key = np.zeros(stop - start, dtype=np.int64)
            for column in group:  # the last coder of a group varies fastest, as _group_texts lists them
                key *= len(labels)
                key += np.where(codes[start:stop, column] < 0, len(labels) - 1, codes[start:stop, column])
            if index == len(groups) - 1:
                key = key * 2 + fully[start:stop]  # fully_coded and the line's end close the last piece
            line.append(texts.take(from_numpy(key)))
        return joined_lines(line, ",")

    yield from _made_in_order(lines, len(join.units), chunk_rows, makers)


def _coder_groups(coders: int, labels: int) -> list[list[int]]:
    """The coders in consecutive groups whose codes (and fully_coded, for the last) have at most
    MAX_COMBINATIONS combinations."""
    groups: list[list[int]] = [[]]
    for coder in range(coders):
        if groups[-1] and labels ** (len(groups[-1]) + 1) * 2 > MAX_COMBINATIONS:
            groups.append([])
        groups[-1].append(coder)
    return groups


def _group_texts(size: int, labels: list[str], *, last: bool) -> pa.Array:
    """The CSV text of every combination of ``size`` coders' fields, the last coder's varying
    fastest; the last group's texts end with fully_coded (False, True) and the line's end."""
    texts = [",".join(fields) for fields in itertools.product(labels, repeat=size)]
    if last:
        texts = [f"{text},{flag}\n" for text in texts for flag in ("False", "True")]
    return string_array(texts)


def counts_csv_text(join: JoinResult) -> str:
    """counts.csv (irr_audit.join.counts): coder names and codes neutralised as in every CSV
    irr-audit writes (read_counts undoes it exactly), one column per coder, then units."""
    refuse_column_collisions(
        [*((sheet.coder, f"the coder of sheet {sheet.name}") for sheet in join.sheets), (UNITS, "the units column")],
        "counts.csv",
    )
    header = csv_line([spreadsheet_safe(name) for name in (*join.coders, UNITS)])
    patterns = compress(join.codes, len(join.rule.categories))
    if not len(patterns.counts):
        return header
    labels = text_fields(string_array([*join.rule.categories, ""]))
    line: list[pa.Array | str] = []
    for column in range(len(join.coders)):
        rows = patterns.rows[:, column]
        line += [labels.take(from_numpy(np.where(rows < 0, len(labels) - 1, rows))), ","]
    line += [from_numpy(patterns.counts.astype(np.int64)).cast(pa.string()), "\n"]
    return header + bytes(joined_lines(line)).decode("utf-8")


class LogLines:
    """The missingness log's two files from one reading of the log: its parts, and the distinct
    ends of their lines, made once for both. ``makers``: the pool their chunks are made on (by
    default one of each file's own)."""

    def __init__(self, join: JoinResult, makers: ThreadPoolExecutor | None = None):
        self.parts = [(part, _Ends.of(part)) for part in log_parts(join)]
        self.makers = makers

    def csv_chunks(self, chunk_rows: int = CHUNK_ROWS) -> Iterator[bytes | memoryview]:
        """missingness_log.csv: frame_csv_text of the log, part by part, chunk by chunk."""
        yield csv_line([spreadsheet_safe(name) for name in LOG_COLUMNS]).encode("utf-8")
        reasons = text_fields(string_array([reason.value for reason in REASONS])).to_pylist()
        for part, ends in self.parts:
            sheet, coder = text_fields(string_array([part.sheet, part.coder])).to_pylist()
            raw = text_fields(ends.raw_values).to_pylist()
            details = text_fields(string_array(list(part.detail_texts))).to_pylist()
            tails = string_array([f"{raw[r]},{reasons[why]},{details[d]}\n" for r, why, d in ends.combinations])
            lines = functools.partial(_log_csv_lines, part, ends, f"{sheet},{coder}", tails)
            yield from _made_in_order(lines, len(part), chunk_rows, self.makers)

    def jsonl_chunks(self, chunk_rows: int = CHUNK_ROWS) -> Iterator[bytes | memoryview]:
        """missingness_log.jsonl: json_line of each log row (compact), part by part, chunk by chunk."""
        for part, ends in self.parts:
            head = json_line({"sheet": part.sheet, "coder": part.coder}, compact=True)[:-2] + ',"row":'
            raw = ends.raw_values.to_pylist()
            combinations = [_tail(raw[r], why, part.detail_texts[d]) for r, why, d in ends.combinations]
            # one JSON object a line, '{"raw_value":...}': its end after the id is '","raw_value":...}'
            objects = jsonl_text(combinations, compact=True).split("\n")[:-1]
            tails = string_array([f'",{text[1:]}\n' for text in objects])
            lines = functools.partial(_log_json_lines, part, ends, head, tails)
            yield from _made_in_order(lines, len(part), chunk_rows, self.makers)


def log_csv_chunks(join: JoinResult, chunk_rows: int = CHUNK_ROWS) -> Iterator[bytes | memoryview]:
    """missingness_log.csv alone."""
    return LogLines(join).csv_chunks(chunk_rows)


def log_jsonl_chunks(join: JoinResult, chunk_rows: int = CHUNK_ROWS) -> Iterator[bytes | memoryview]:
    """missingness_log.jsonl alone."""
    return LogLines(join).jsonl_chunks(chunk_rows)


def _log_csv_lines(part: SheetLog, ends: _Ends, head: str, tails: pa.Array, start: int, stop: int) -> memoryview:
    """Lines ``start`` to ``stop`` of a part of the log as CSV: ``head`` (its sheet and coder) and
    ``tails`` (the distinct ends of its lines) as fields."""
    rows = _row_numbers(part.rows[start:stop], "")
    ids = text_fields(part.comment_ids[start:stop])
    return joined_lines([head, rows, ids, tails.take(ends.of_rows(start, stop))], ",")


def _log_json_lines(
    part: SheetLog, ends: _Ends, head: str, tails: pa.Array, start: int, stop: int
) -> bytes | memoryview:
    """Lines ``start`` to ``stop`` of a part of the log as JSON Lines: ``head`` is each line's
    text up to its row number, ``tails`` the distinct texts after its id."""
    ids = part.comment_ids[start:stop]
    if ids.null_count:  # a missing id, which json writes as null: line by line
        return "".join(_json_lines(part, start, stop)).encode("utf-8")
    rows = _row_numbers(part.rows[start:stop], "null")
    return joined_lines([head, rows, ',"comment_id":"', json_string_bodies(ids), tails.take(ends.of_rows(start, stop))])


def json_lines(columns: Mapping[str, pa.Array], chunk_rows: int = CHUNK_ROWS) -> Iterator[bytes | memoryview]:
    """JSON Lines of a table: json_line of each row (compact), its keys in the order of ``columns``,
    each a text column or a whole-number one (a missing value: null)."""
    if not columns:
        return
    keys = [json_literal(name) for name in columns]
    size = len(next(iter(columns.values())))

    def lines(start: int, stop: int) -> memoryview:
        pieces: list[pa.Array | str] = []
        for index, (key, column) in enumerate(zip(keys, columns.values())):
            pieces += ["{" if index == 0 else ",", f"{key}:", _json_values(column[start:stop])]
        return joined_lines([*pieces, "}\n"])

    yield from _made_in_order(lines, size, chunk_rows)


def _json_values(values: pa.Array) -> pa.Array:
    """Each value as json_line writes it: a whole number, a string in quotes, or null."""
    if pa.types.is_integer(values.type):
        text = values.cast(pa.string())
    else:
        bodies = json_string_bodies(values)
        quote = text_scalar('"')
        text = pc.binary_join_element_wise(quote, bodies, quote, text_scalar(""))
    return pc.if_else(values.is_null(), text_scalar("null"), text) if values.null_count else text


def _tail(raw: str | None, why: int, detail: str) -> dict[str, object]:
    return {"raw_value": raw, "reason": REASONS[why].value, "detail": detail}


def _json_lines(part: SheetLog, start: int, stop: int) -> Iterator[str]:
    ids = part.comment_ids[start:stop].to_pylist()
    raw = part.raw_values[start:stop].to_pylist()
    for at, (row, comment_id, value) in enumerate(zip(part.rows[start:stop].tolist(), ids, raw)):
        record = {
            "sheet": part.sheet,
            "coder": part.coder,
            "row": row if row >= 0 else None,
            "comment_id": comment_id,
            **_tail(value, int(part.reasons[start + at]), part.detail_texts[part.details[start + at]]),
        }
        yield json_line(record, compact=True)


class _Ends:
    """The end of each log line after its id (raw value, reason, detail): the distinct
    combinations, and each row's as an index into them."""

    def __init__(self, raw_values: pa.Array, combinations: list[tuple[int, int, int]], index: np.ndarray):
        self.raw_values = raw_values  # the distinct raw values (a missing one last, as null)
        self.combinations = combinations  # (raw value, reason, detail), as indices
        self.index = index

    @classmethod
    def of(cls, part: SheetLog) -> _Ends:
        encoded = part.raw_values.dictionary_encode()
        raw_values = encoded.dictionary
        raw = encoded.indices
        if raw.null_count:  # a missing raw value (no sheet reader makes one): a value of its own
            raw = raw.fill_null(len(raw_values))
            raw_values = pa.concat_arrays([raw_values, pa.nulls(1, raw_values.type)])
        raw_index = to_numpy(raw).astype(np.int64)
        pair = raw_index * len(REASONS) + part.reasons  # both small: no overflow
        pairs = pc.dictionary_encode(from_numpy(pair))
        pair_index = to_numpy(pairs.indices).astype(np.int64)
        key = pair_index * max(len(part.detail_texts), 1) + part.details
        keys = pc.dictionary_encode(from_numpy(key))
        distinct = to_numpy(keys.dictionary)
        pair_values = to_numpy(pairs.dictionary)[distinct // max(len(part.detail_texts), 1)]
        combinations = list(
            zip(
                (pair_values // len(REASONS)).tolist(),
                (pair_values % len(REASONS)).tolist(),
                (distinct % max(len(part.detail_texts), 1)).tolist(),
            )
        )
        return cls(raw_values, combinations, to_numpy(keys.indices).astype(np.int32))

    def of_rows(self, start: int, stop: int) -> pa.Array:
        return from_numpy(self.index[start:stop])


def _made_in_order(
    lines: Callable[[int, int], bytes | memoryview],
    size: int,
    chunk_rows: int,
    makers: ThreadPoolExecutor | None = None,
) -> Iterator[bytes | memoryview]:
    """``lines(start, stop)`` of each chunk of ``size`` rows, made on a pool of threads (the
    kernels let go of the GIL; ``makers``, or one of its own) and given in order, with at most
    one chunk per thread ahead."""
    if makers is None:
        with Workers(max_workers=thread_count()) as own:
            yield from _made_in_order(lines, size, chunk_rows, own)
        return
    made: deque[Future[bytes | memoryview]] = deque()
    for start in range(0, size, chunk_rows):
        made.append(makers.submit(lines, start, min(start + chunk_rows, size)))
        if len(made) > thread_count():
            yield made.popleft().result()
    while made:
        yield made.popleft().result()


def _row_numbers(rows: np.ndarray, missing: str) -> pa.Array:
    """Row numbers as text, ``missing`` for an absent cell's (-1)."""
    numbers = from_numpy(rows).cast(pa.string())
    if rows.min(initial=0) >= 0:
        return numbers
    absent = pc.less(from_numpy(rows), from_numpy(np.zeros(1, dtype=np.int64))[0])
    return pc.if_else(absent, text_scalar(missing), numbers)
