"""Classify every (unit, coder) cell and join the sheets on comment ID.

Every input row ends up exactly once: as the row behind a cell (valid, or in the
log with its reason), or in the log as a duplicate, a conflict, a row without an
id, or a row outside the sample. Every unit ends up exactly once: fully coded,
or with at least one row in the missingness log. Missing is never a disagreement.

Ids are matched once, as integers: every sheet's trimmed ids are encoded into
unit indices in one pass, and the rest (duplicates, conflicts, placing each
cell) is integer arithmetic. The missingness log is kept as integer arrays and
becomes text only when someone reads it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from irr_audit._threads import Workers, thread_count
from irr_audit.errors import SheetError, UsageError
from irr_audit.io.arrowtext import from_numpy, key_packers, plain_text, string_array, to_numpy
from irr_audit.io.files import shown_name
from irr_audit.io.idcheck import suspicious_id_warnings
from irr_audit.io.sheets import Sheet, parse_rule_version
from irr_audit.join.factorize import factorize, partition_bits, scatter
from irr_audit.join.fullnames import reddit_keys
from irr_audit.join.missingness import LOG_COLUMNS, Reason, count_phrase, rows_word
from irr_audit.join.problems import audit_problems, near_miss_warnings
from irr_audit.rules.lookalikes import lookalike_note
from irr_audit.rules.model import CodeStatus, Rule, code_key

if TYPE_CHECKING:
    import pandas as pd

STATUSES = tuple(CodeStatus)  # a cell's status is stored as its index in this tuple
STATUS_INDEX = {status: index for index, status in enumerate(STATUSES)}
VALID = STATUS_INDEX[CodeStatus.VALID]
ABSENT = STATUS_INDEX[CodeStatus.ABSENT]
CONFLICT = STATUS_INDEX[CodeStatus.CONFLICT]
REASONS = tuple(Reason)  # a log entry's reason is stored as its index in this tuple
REASON_INDEX = {reason: index for index, reason in enumerate(REASONS)}
REASON_VALUES = np.array([reason.value for reason in REASONS], dtype=object)
CELL_REASON = np.full(len(STATUSES), -1, dtype=np.int8)  # a kept row's status -> its log reason
for _status, _reason in (
    (CodeStatus.UNKNOWN, Reason.UNKNOWN),
    (CodeStatus.BLANK, Reason.BLANK),
    (CodeStatus.INVALID, Reason.INVALID),
):
    CELL_REASON[STATUS_INDEX[_status]] = REASON_INDEX[_reason]
RESERVED_COLUMNS = ("comment_id", "fully_coded")
# The join knows the sampled ids only: an id of the ledger not drawn (in_sample false) is outside
# the sample too, so the detail names both cases rather than sending the user after a typo.
NOT_IN_SAMPLE = "comment id is not one of the sample's units (not drawn into the sample, or not in its ledger)"


class UnitContext(NamedTuple):
    """What a sample's ledger holds of a unit beside its id: the text every coder was given
    (the sheets may carry other copies), a link to the comment, and the context shown with it."""

    text: str
    link: str = ""
    parent_text: str = ""
    thread_title: str = ""


@dataclass(frozen=True)
class LogEntries:
    """The missingness log as integer arrays, one entry per log row.

    ``sheet`` indexes the sheets; ``position`` is the row's position in its
    sheet's columns (-1 for an absent cell, which has no row); ``unit`` indexes
    the units (-1 for a row that is no unit); ``reason`` indexes ``REASONS``;
    ``ref`` is the position of the row a duplicate repeats, else -1; ``status``
    is the row's own code status (for the detail of a row outside the sample). Positions,
    units and refs are int32 (a sheet's rows and the units number fewer than 2**31): a log of
    millions of rows stays small.
    """

    sheet: np.ndarray
    position: np.ndarray
    unit: np.ndarray
    reason: np.ndarray
    ref: np.ndarray
    status: np.ndarray

    @classmethod
    def concat(cls, parts: list[LogEntries]) -> LogEntries:
        return cls(*(np.concatenate([getattr(part, name) for part in parts]) for name in cls.__dataclass_fields__))

    def __len__(self) -> int:
        return len(self.reason)


def _entries(
    sheet: int,
    position: np.ndarray,
    unit: np.ndarray,
    reason: int | np.ndarray,
    ref: np.ndarray | None = None,
    status: np.ndarray | None = None,
) -> LogEntries:
    size = len(position)
    return LogEntries(
        sheet=np.full(size, sheet, dtype=np.int32),
        position=np.asarray(position, dtype=np.int32),
        unit=np.asarray(unit, dtype=np.int32),
        reason=np.broadcast_to(np.asarray(reason, dtype=np.int8), (size,)).copy(),
        ref=np.full(size, -1, dtype=np.int32) if ref is None else np.asarray(ref, dtype=np.int32),
        status=np.full(size, VALID, dtype=np.int8) if status is None else np.asarray(status, dtype=np.int8),
    )


@dataclass(frozen=True)
class JoinResult:
    """Sheets joined under a rule.

    ``codes[u, c]`` is the category index (into ``rule.categories``) of coder c's
    code for unit u, or -1 when that cell is not valid; ``status[u, c]`` indexes
    ``STATUSES``; ``positions[u, c]`` (int32) is the position of the row behind the cell
    in coder c's sheet (-1 when absent or in conflict), made when asked for from
    ``cell_rows``: per sheet, the units that got a cell and the row behind each (None:
    the i-th of them is row i, the usual sheet). ``units`` holds the ids as
    a pyarrow string array; ``unit_ids`` is the same as a numpy array, made when asked for.
    """

    rule: Rule
    sheets: tuple[Sheet, ...]
    units: pa.Array
    codes: np.ndarray
    status: np.ndarray
    cell_rows: tuple[tuple[np.ndarray, np.ndarray | None], ...]
    entries: LogEntries
    warnings: tuple[str, ...] = ()
    context: Mapping[str, UnitContext] | None = None  # comment id -> its ledger entry, for a sampled join

    @cached_property
    def unit_ids(self) -> np.ndarray:
        return read_only_array(to_numpy(self.units))

    @cached_property
    def positions(self) -> np.ndarray:
        positions = np.full(self.codes.shape, -1, dtype=np.int32, order="F")
        for column, (cell_units, rows) in enumerate(self.cell_rows):
            positions[:, column][cell_units] = np.arange(len(cell_units), dtype=np.int32) if rows is None else rows
        return read_only_array(positions)

    @cached_property
    def coders(self) -> tuple[str, ...]:
        return tuple(sheet.coder for sheet in self.sheets)

    @cached_property
    def fully_coded(self) -> np.ndarray:
        return read_only_array(across_columns(self.status, lambda column: column == VALID, np.logical_and))

    @cached_property
    def log(self) -> pd.DataFrame:
        """The missingness log as text (LOG_COLUMNS), in sheet order, rows before absent cells."""
        return _log_frame(self)

    def log_counts(self) -> dict[str, int]:
        counts = np.bincount(self.entries.reason, minlength=len(REASONS))
        return {reason.value: int(counts[index]) for index, reason in enumerate(REASONS) if counts[index]}

    def log_counts_by_coder(self) -> dict[str, dict[str, int]]:
        width = len(REASONS)
        counts = np.bincount(self.entries.sheet * width + self.entries.reason, minlength=len(self.sheets) * width)
        return {
            coder: {
                reason.value: int(counts[column * width + index])
                for index, reason in enumerate(REASONS)
                if counts[column * width + index]
            }
            for column, coder in enumerate(self.coders)
        }

    def joined_frame(self) -> pd.DataFrame:
        """One row per unit, one column per coder (the code, or empty), and fully_coded."""
        import pandas as pd  # noqa: PLC0415 (loaded on use: a score builds no frame)

        categories = [*self.rule.categories, ""]
        category_type = pd.CategoricalDtype(categories)
        frame = pd.DataFrame({"comment_id": self.unit_ids})
        for column, coder in enumerate(self.coders):
            codes = np.where(self.codes[:, column] < 0, len(categories) - 1, self.codes[:, column])
            # a cell that is not valid: ""; pandas-stubs < 3 type the codes as a Sequence[int], not an array
            frame[coder] = pd.Categorical.from_codes(codes, dtype=category_type)  # type: ignore[arg-type,unused-ignore]
        frame["fully_coded"] = self.fully_coded
        return frame

    def texts_for(self, units: np.ndarray) -> list[str | None]:
        """The comment text of these units (by index), from the first sheet that has it."""
        texts: list[str | None] = [None] * len(units)
        for column, sheet in enumerate(self.sheets):
            if sheet.texts is None:
                continue
            positions = self.positions[units, column]
            wanted = np.flatnonzero((positions >= 0) & np.array([text is None for text in texts], dtype=bool))
            if not len(wanted):
                continue
            found = sheet.texts.take(from_numpy(positions[wanted])).to_pylist()
            for at, text in zip(wanted, found):
                if text and text.strip():
                    texts[at] = text
        return texts

    @cached_property
    def problems(self) -> list[dict[str, Any]]:
        """What leaves this join with nothing (or little) to score (irr_audit.join.problems)."""
        return audit_problems(self)

    def summary(self) -> dict[str, Any]:
        total = len(self.units)
        fully = int(self.fully_coded.sum())
        # one pass per status over each sheet's column (contiguous): bincount would first widen the
        # int8 matrix to int64, and a comparison of the whole matrix makes a matrix of booleans
        cells = [
            sum(int(np.count_nonzero(self.status[:, column] == index)) for column in range(self.status.shape[1]))
            for index in range(len(STATUSES))
        ]
        found: dict[str, Any] = {
            "units": {"total": total, "fully_coded": fully, "missing": total - fully},
            "log_rows": self.log_counts(),
            "cells": {status.value: cells[index] for index, status in enumerate(STATUSES)},
        }
        if self.problems:  # present only when there is one: outputs of sound audits stay as they were
            found["problems"] = self.problems
        return found

    def summary_line(self) -> str:
        """Units, then the log's rows by reason: one count of units when each unit not fully
        coded has one row in the log, else the units and the rows counted apart (so that the
        numbers in brackets add up to the number before them)."""
        total, fully = len(self.units), int(self.fully_coded.sum())
        counts = self.log_counts()
        rows = sum(counts.values())
        reasons = count_phrase(counts)
        head = f"{total} units from {len(self.coders)} coders: {fully} fully coded"
        if rows == total - fully:
            return f"{head}, {rows} in the missingness log" + (f" ({reasons})." if reasons else ".")
        return f"{head}, {total - fully} not; {rows} {rows_word(rows)} in the missingness log" + (
            f" ({reasons})." if reasons else "."
        )


def read_only_array(array: np.ndarray) -> np.ndarray:
    """``array``, marked read-only (no copy): what a join hands out once it is made."""
    array.flags.writeable = False
    return array


def read_only_join(join: JoinResult) -> JoinResult:
    """``join`` with its arrays marked read-only (no copy, whatever their size): an Audit's join,
    from which its report lists the disagreements and its frames are made, so that a cell
    changed after the fact cannot show in them."""
    arrays = [join.codes, join.status, *(getattr(join.entries, name) for name in LogEntries.__dataclass_fields__)]
    arrays += [array for cells in join.cell_rows for array in cells if array is not None]
    arrays += [sheet.row_numbers for sheet in join.sheets if sheet.row_numbers is not None]
    for array in arrays:
        read_only_array(array)
    return join


def across_columns(matrix: np.ndarray, test: Callable[[np.ndarray], np.ndarray], combine: np.ufunc) -> np.ndarray:
    """``test`` on each (contiguous) column of a column-major matrix, combined across columns:
    many times faster than a reduction along rows of a large column-major matrix."""
    result = test(matrix[:, 0])
    for column in range(1, matrix.shape[1]):
        combine(result, test(matrix[:, column]), out=result)
    return result


@dataclass(frozen=True)
class UnitMatch:
    """Sheets' ids matched to units: ``units_of`` each sheet's rows as unit indices. A codebook's
    sheets are matched once for all its variables (irr_audit.join.variables); ``warnings``, when
    known, are those of the variables' joins, which share the same rows and ids (wide sheets)."""

    n_units: int
    units_of: tuple[np.ndarray, ...]
    units: pa.Array
    warnings: tuple[str, ...] | None = None  # the join's warnings, once a first join made them


def join_sheets(
    sheets: list[Sheet] | tuple[Sheet, ...],
    rule: Rule,
    sample_ids: list[str] | None = None,
    *,
    matched: UnitMatch | None = None,
) -> JoinResult:
    """Join two or more sheets under ``rule``. Pure.

    With ``sample_ids`` (the ledger of `irr-audit sample`) the units are exactly
    those ids: a sheet row for any other id is logged as not_in_sample, and a
    sampled unit that a sheet lacks is absent there. ``matched``: these sheets' ids
    matched already (and their warnings), as :func:`match_units` gives them.
    """
    check_sheets(sheets, rule)
    trimmed = [unit_keys(sheet) for sheet in sheets]
    # Codes are classified (once per distinct code: quick) while this thread matches the ids; then
    # the sheets are placed side by side, one per core, while the units' ids are taken out and checked.
    with Workers(max_workers=thread_count()) as pool:
        classifying = pool.map(lambda sheet: _classify(sheet.codes, rule), sheets)
        if matched is None:
            n_units, units_of, make_unit_ids = _units(trimmed, sample_ids)
        else:
            n_units, units_of, make_unit_ids = matched.n_units, list(matched.units_of), lambda: matched.units
        unit_ids = pool.submit(make_unit_ids)
        classified = list(classifying)
        n_sheets = len(sheets)
        # Column-major: a sheet fills one contiguous column, so its scattered writes stay close together.
        codes = np.full((n_units, n_sheets), -1, dtype=_category_type(rule), order="F")
        status = np.full((n_units, n_sheets), ABSENT, dtype=np.int8, order="F")
        # each sheet fills its own column: the sheets are placed side by side
        place = partial(_place_column, units_of, trimmed, classified, len(rule.categories), codes, status)
        placing = pool.map(place, range(n_sheets))
        known = matched.warnings if matched is not None else None
        # queued behind the sheets: waiting for the units' ids, it would hold a thread the sheets could use
        id_warnings = pool.submit(lambda: [] if known is not None else suspicious_id_warnings(unit_ids.result()))
        placed = list(placing)
        parts = [part for entries, _ in placed for part in entries]
        cell_rows = [cells for _, cells in placed]
        warnings = identical_sheet_warnings(sheets) + look_alike_coder_warnings(sheets)
        warnings += [f"sheet {sheet.name}: {warning}" for sheet in sheets for warning in sheet.warnings]
        warnings += id_warnings.result()
    joined = JoinResult(
        rule=rule,
        sheets=tuple(sheets),
        units=unit_ids.result(),
        codes=codes,
        status=status,
        cell_rows=tuple(cell_rows),
        entries=LogEntries.concat(parts),
    )
    if known is None:  # else the same rows and ids: the same warnings
        warnings += near_miss_warnings(joined, sample_mode=sample_ids is not None)
    # pyarrow's pool keeps the blocks the matching freed (the ids' texts taken, hashed, looked up) for
    # reuse; what follows (scoring, writing) is mostly numpy's: hand them back (70 MB at 10^7 units)
    pa.default_memory_pool().release_unused()
    return dataclasses.replace(joined, warnings=known if known is not None else tuple(warnings))


def match_units(sheets: list[Sheet] | tuple[Sheet, ...], sample_ids: list[str] | None = None) -> UnitMatch:
    """The sheets' ids matched to units, as :func:`join_sheets` matches them."""
    n_units, units_of, make_unit_ids = _units([unit_keys(sheet) for sheet in sheets], sample_ids)
    return UnitMatch(n_units, tuple(units_of), make_unit_ids())


def _units(
    trimmed: list[pa.Array], sample_ids: list[str] | None
) -> tuple[int, list[np.ndarray], Callable[[], pa.Array]]:
    """How many units there are, each sheet's rows as unit indices (-1: no id, or
    outside the sample), and a function that makes the units' ids (in order of first
    appearance, or the sample's), to run while the sheets are placed.

    A sheet whose ids are those of an earlier sheet, row for row (the order `sample`
    wrote them in, kept by the coders), is matched once: it shares that sheet's
    indices (the same array, read only) and adds no unit."""
    first_equal = same_as_earlier(trimmed)
    distinct = [column for at, column in enumerate(trimmed) if first_equal[at] == at]
    if sample_ids is not None:
        units, indices = _sampled(sample_ids, distinct)
        return len(units), _shared(indices, first_equal), lambda: units
    packed, indices, dictionary = match_ids(distinct)
    blank = _blank_at(dictionary, packed)
    first_indices = indices
    if blank >= 0:  # the empty id is no unit: renumber the others
        indices = [np.where(found == blank, -1, found - (found > blank)) for found in indices]

    def unit_ids() -> pa.Array:
        units = _first_values(distinct, first_indices) if packed else dictionary
        return pa.concat_arrays([units[:blank], units[blank + 1 :]]) if blank >= 0 else units

    return len(dictionary) - (blank >= 0), _shared(indices, first_equal), unit_ids


def same_as_earlier(columns: list[pa.Array]) -> list[int]:
    """For each column, the first column equal to it value for value (itself when none
    before is).

    >>> same_as_earlier([pa.array(["a", "b"]), pa.array(["a", "c"]), pa.array(["a", "b"]), pa.array(["a"])])
    [0, 1, 0, 3]
    """
    first: list[int] = []
    for at, column in enumerate(columns):
        first.append(next((earlier for earlier in sorted(set(first)) if _equal(columns[earlier], column)), at))
    return first


SAME_HEAD = 64  # values compared before whole columns are: shuffled sheets differ there, at no cost


def _equal(one: pa.Array, other: pa.Array) -> bool:
    return len(one) == len(other) and one.slice(0, SAME_HEAD).equals(other.slice(0, SAME_HEAD)) and one.equals(other)


def _shared(indices: list[np.ndarray], first_equal: list[int]) -> list[np.ndarray]:
    """The distinct columns' indices handed to every column, an equal column sharing its
    first one's array. Read only: no user can change one sheet's through another's."""
    by_column = dict(zip(sorted(set(first_equal)), indices))
    for array in by_column.values():
        array.setflags(write=False)
    return [by_column[first] for first in first_equal]


def _blank_at(dictionary: pa.Array, packed: bool) -> int:
    """Where the empty id is in the dictionary of ids (packed keys: 0 is the empty id), or -1."""
    empty = to_numpy(dictionary) == 0 if packed else to_numpy(pc.binary_length(dictionary)) == 0
    found = np.flatnonzero(empty)
    return int(found[0]) if len(found) else -1


PARTITIONED_FROM = 1 << 22  # rows of ids from which one hash table over all of them outgrows the caches (measured)


def match_ids(trimmed: list[pa.Array]) -> tuple[bool, list[np.ndarray], pa.Array]:
    """Every sheet's ids as indices into one dictionary of the distinct ids (the empty
    one included), in order of first appearance; and whether the ids were packed into
    integers (the dictionary then holds the packed keys, 0 for the empty id). Pure."""
    # Ids that pack losslessly into integers (most id formats) are hashed as integers: a
    # chunked dictionary encoding numbers them in order of first appearance, with one
    # dictionary shared by all chunks; many of them by hash tables the size of a cache.
    packers = key_packers(trimmed)
    if packers is None:
        return False, *_encode(trimmed)
    rows = sum(map(len, trimmed))
    if rows >= PARTITIONED_FROM:
        indices, distinct = factorize(packers, partition_bits(rows))  # each sheet's keys live only while grouped
        return True, indices, from_numpy(distinct)
    return True, *_encode([from_numpy(pack()) for pack in packers])


def _encode(columns: list[pa.Array]) -> tuple[list[np.ndarray], pa.Array]:
    """Each column's values as indices into one dictionary of the distinct values, in order of first appearance."""
    encoded = pa.chunked_array(columns, type=columns[0].type).dictionary_encode()
    if encoded.num_chunks == len(columns) and len({len(chunk.dictionary) for chunk in encoded.chunks}) == 1:
        indices = [to_numpy(chunk.indices).astype(np.int32, copy=False) for chunk in encoded.chunks]
        return indices, encoded.chunk(0).dictionary
    # an empty chunk dropped, or a pyarrow with a dictionary per chunk: encode one array, then split
    whole = pa.concat_arrays(columns).dictionary_encode()
    flat = to_numpy(whole.indices).astype(np.int32, copy=False)
    bounds = np.cumsum([0, *map(len, columns)])
    return [flat[start:end] for start, end in zip(bounds[:-1], bounds[1:])], whole.dictionary


def _first_values(columns: list[pa.Array], indices: list[np.ndarray]) -> pa.Array:
    """The value behind each dictionary index, taken from its first appearance."""
    parts, seen = [], -1
    for column, found in zip(columns, indices):
        # a value's first appearance is where the running maximum of the indices grows
        running = np.maximum.accumulate(np.r_[seen, found])
        first = np.flatnonzero(running[1:] > running[:-1])
        # a column whose every value is new (the first sheet, usually) is taken whole: no copy of it
        parts.append(column if len(first) == len(column) else column.take(from_numpy(first)))
        seen = int(running[-1])
    filled = [part for part in parts if len(part)]
    return filled[0] if len(filled) == 1 else pa.concat_arrays(parts)


def _sampled(sample_ids: list[str], id_columns: list[pa.Array]) -> tuple[pa.Array, list[np.ndarray]]:
    """The sample's distinct ids (trimmed, blanks left out, in order of first appearance), and
    each column's ids as positions among them (-1: outside the sample). The sample is matched
    first with the columns, so that its ids are numbered before any other: an id outside it
    gets a number past them. (The partitioned matching of many ids: a hash table of ten
    million sampled ids, to find them and then to look each row up in, took three times as long.)"""
    sample = pc.utf8_trim_whitespace(pa.array(sample_ids, type=pa.string()))
    sample = sample.filter(pc.not_equal(sample, ""))
    keys = [reddit_keys(column) for column in (sample, *id_columns)]
    packed, indices, dictionary = match_ids(keys)
    sampled = int(indices[0].max()) + 1 if len(sample) else 0
    # the units are the ledger's ids as written (t1_abc stays t1_abc), not the keys matched
    units = _first_values([sample], indices[:1]) if packed or keys[0] is not sample else dictionary[:sampled]
    return units, [np.where(found < sampled, found, -1).astype(np.int32, copy=False) for found in indices[1:]]


def unit_keys(sheet: Sheet) -> pa.Array:
    """A sheet's ids as matched: surrounding whitespace trimmed."""
    return sheet.unit_keys if sheet.unit_keys is not None else pc.utf8_trim_whitespace(sheet.comment_ids)


def _is_empty(texts: pa.Array) -> np.ndarray:
    return to_numpy(pc.equal(texts, ""))


def _category_type(rule: Rule) -> type[np.int8] | type[np.int32]:
    """The smallest integer type for a category index, or -1 for no valid code."""
    return np.int8 if len(rule.categories) < 127 else np.int32


def distinct_codes(raw_codes: pa.Array) -> pa.DictionaryArray:
    """A sheet's codes as indices into its distinct codes (the rule plays no part): as the
    sheet holds them when it was read encoded (io.sheets.compact_codes)."""
    return raw_codes if isinstance(raw_codes, pa.DictionaryArray) else raw_codes.dictionary_encode()


class Classified(NamedTuple):
    """A sheet's codes classified once per distinct value: each row's index into its distinct
    values, and each distinct value's status and category. The rows get theirs (``of_rows``)
    only when the sheet is placed, so that the sheets' rows are not all classified at once."""

    indices: np.ndarray
    status: np.ndarray
    category: np.ndarray

    def of_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """Each row's status and category."""
        return self.status[self.indices], self.category[self.indices]


def _classify(raw_codes: pa.Array, rule: Rule) -> Classified:
    """Classify each distinct raw code once."""
    encoded = distinct_codes(raw_codes)
    category_of = {code: index for index, code in enumerate(rule.categories)}
    distinct = encoded.dictionary.to_pylist()
    status = np.empty(len(distinct), dtype=np.int8)
    category = np.full(len(distinct), -1, dtype=_category_type(rule))
    for index, raw in enumerate(distinct):
        cell_status, code = rule.classify(raw)
        status[index] = STATUS_INDEX[cell_status]
        if code is not None:
            category[index] = category_of[code]
    return Classified(to_numpy(encoded.indices), status, category)


def _place_column(
    units_of: list[np.ndarray],
    trimmed: list[pa.Array],
    classified: list[Classified],
    n_categories: int,
    codes: np.ndarray,
    status: np.ndarray,
    column: int,
) -> tuple[list[LogEntries], tuple[np.ndarray, np.ndarray | None]]:
    """Place one sheet in its column; its log entries (its rows', then its absent units') and its cell rows."""
    row_status, row_category = classified[column].of_rows()
    entries, cells = _place_sheet(
        column, units_of[column], trimmed[column], row_status, row_category, n_categories, codes, status
    )
    absent = np.flatnonzero(status[:, column] == ABSENT)
    return [entries, _entries(column, np.full(len(absent), -1), absent, REASON_INDEX[Reason.ABSENT])], cells


def _place_sheet(
    column: int,
    unit: np.ndarray,
    ids: pa.Array,
    row_status: np.ndarray,
    row_category: np.ndarray,
    n_categories: int,
    codes: np.ndarray,
    status: np.ndarray,
) -> tuple[LogEntries, tuple[np.ndarray, np.ndarray | None]]:
    """Put one sheet's rows into the cells of its column; return its row-level log
    entries and its cell rows (the units that got a cell, and the row behind each, None
    when unit i is row i). ``row_category`` is -1 wherever ``row_status`` is not valid."""
    if _place_distinct(unit, row_status, row_category, codes[:, column], status[:, column]):
        logged = np.flatnonzero(row_status != VALID)  # in row order, as the log lists them
        return _entries(column, logged, unit[logged], CELL_REASON[row_status[logged]]), (unit, None)
    has_unit = unit >= 0
    if has_unit.all():  # every row has a unit, some more than one row
        inside: np.ndarray = np.arange(len(unit), dtype=np.int32)
        missing_id: np.ndarray = np.empty(0, np.int64)
        outside: np.ndarray = missing_id
    else:
        inside = np.flatnonzero(has_unit)
        no_id = _is_empty(ids)
        missing_id, outside = np.flatnonzero(no_id), np.flatnonzero(~has_unit & ~no_id)
    kept, duplicates, duplicate_of, conflicts = _repeats(inside, unit, row_status, row_category, n_categories)
    if len(kept) == len(unit):  # every row is a cell: no gathers needed
        kept_status, kept_category, cell_units, cell_rows = row_status, row_category, unit, None
    else:
        kept_status, kept_category, cell_units, cell_rows = row_status[kept], row_category[kept], unit[kept], kept
    scatter(status[:, column], cell_units, kept_status)
    scatter(codes[:, column], cell_units, kept_category)
    logged = kept[kept_status != VALID]
    if len(conflicts):
        status[:, column][unit[conflicts]] = CONFLICT
    parts = [
        _entries(column, missing_id, np.full(len(missing_id), -1), REASON_INDEX[Reason.MISSING_ID]),
        _entries(
            column, outside, np.full(len(outside), -1), REASON_INDEX[Reason.NOT_IN_SAMPLE], status=row_status[outside]
        ),
        _entries(column, duplicates, unit[duplicates], REASON_INDEX[Reason.DUPLICATE], ref=duplicate_of),
        _entries(column, conflicts, unit[conflicts], REASON_INDEX[Reason.CONFLICT]),
        _entries(column, logged, unit[logged], CELL_REASON[row_status[logged]]),
    ]
    entries = LogEntries.concat(parts)
    order = np.argsort(entries.position, kind="stable")  # the log lists a sheet's rows in row order
    in_row_order = LogEntries(*(getattr(entries, name)[order] for name in LogEntries.__dataclass_fields__))
    return in_row_order, (cell_units, cell_rows)


def _place_distinct(
    unit: np.ndarray,
    row_status: np.ndarray,
    row_category: np.ndarray,
    codes_column: np.ndarray,
    status_column: np.ndarray,
) -> bool:
    """Make each row its unit's cell when every row has a unit of its own (the usual
    sheet). False, with nothing placed, when some row has no unit or a unit repeats.
    A repeat is seen without counting rows per unit: the column, absent everywhere
    before, then holds fewer cells than the sheet has rows (a row is never absent)."""
    if len(unit) == 0 or unit.min() < 0:
        return False
    scatter(status_column, unit, row_status)
    if np.count_nonzero(status_column != ABSENT) < len(unit):
        status_column[:] = ABSENT
        return False
    scatter(codes_column, unit, row_category)
    return True


def _repeats(
    inside: np.ndarray, unit: np.ndarray, row_status: np.ndarray, row_category: np.ndarray, n_categories: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Rows of ids that appear more than once in a sheet: the same code again is a
    duplicate (the first row is used), different codes are a conflict (no row is used).

    Returns the rows behind cells, the duplicate rows with the row each repeats,
    and the conflicting rows; all as positions, in row order.
    """
    none = np.empty(0, np.int64)
    units_inside = unit if len(inside) == len(unit) else unit[inside]
    counts = np.bincount(units_inside)
    if counts.max(initial=0) <= 1:
        return inside, none, none, none
    repeated = inside[counts[units_inside] > 1]
    order = repeated[np.argsort(unit[repeated], kind="stable")]  # grouped by unit, rows in order
    grouped = unit[order]
    starts = np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]])
    key = row_status[order].astype(np.int64) * (n_categories + 1) + row_category[order] + 1
    differs = np.minimum.reduceat(key, starts) != np.maximum.reduceat(key, starts)
    group = np.cumsum(np.r_[True, grouped[1:] != grouped[:-1]]) - 1
    first = order[starts][group]  # for every repeated row, the first row of its id
    in_conflict = differs[group]
    conflicts = np.sort(order[in_conflict])
    duplicate_rows = order[~in_conflict & (order != first)]
    duplicate_of = first[~in_conflict & (order != first)]
    arrange = np.argsort(duplicate_rows)
    singles = inside[counts[units_inside] == 1]
    kept = np.sort(np.concatenate([singles, order[starts][~differs]]))
    return kept, duplicate_rows[arrange], duplicate_of[arrange], conflicts


def check_sheets(sheets: list[Sheet] | tuple[Sheet, ...], rule: Rule) -> None:
    """Usage errors that make a join meaningless: fewer than two sheets, one file given
    for two coders, one coder twice, a sheet coded under another version of the rule."""
    check_sheet_count(len(sheets))
    check_distinct_files(sheets)
    seen: dict[str, str] = {}
    for sheet in sheets:
        if sheet.coder in seen:
            raise UsageError(
                f"sheets {seen[sheet.coder]} and {sheet.name} both belong to coder {sheet.coder!r}.",
                hint="each coder codes independently in one sheet; name sheets after their coder "
                "or fill the coder column.",
                code="usage-same-coder",
            )
        if sheet.coder in RESERVED_COLUMNS:
            raise UsageError(
                f"sheet {sheet.name} has the coder name {sheet.coder!r}, a reserved column name.",
                hint="rename the sheet file or fill its coder column.",
                code="usage-reserved-coder",
            )
        seen[sheet.coder] = sheet.name
        _check_rule_version(sheet, rule)


def check_distinct_files(sheets: list[Sheet] | tuple[Sheet, ...]) -> None:
    """One file given for two coders (the same path twice, ``./x`` and ``x``, a symbolic or a
    hard link, a path through a linked folder) would score one coder's codes as two coders
    agreeing perfectly: refused, whatever the coder names. The file is known by its device
    and inode (io.files.file_identity), not by its path, which a link hides."""
    first_of: dict[tuple[int, int], Sheet] = {}
    for sheet in sheets:
        if sheet.file_key is None:  # a DataFrame, or a bundle's frozen bytes: no file to compare
            continue
        first = first_of.setdefault(sheet.file_key, sheet)
        if first is not sheet:
            raise UsageError(
                f"sheets {shown_name(first.path)} and {shown_name(sheet.path)} are one file (a link, or two "
                "paths to the same file): its codes would be scored as two coders agreeing perfectly.",
                hint="pass each coder's own sheet once; replace the link with the other coder's sheet.",
                code="usage-same-sheet",
            )


def identical_sheet_warnings(sheets: list[Sheet] | tuple[Sheet, ...]) -> list[str]:
    """Two coders' sheets with the very same bytes (a copy, or equal DataFrames): not refused,
    since two coders may enter the same codes on a small pilot, but said wherever the audit is
    shown, since a copied sheet is the likelier cause and makes agreement perfect by itself. A
    sheet naming its coder in a coder column cannot be a copy of another coder's: the same bytes
    would name the same coder, which check_sheets refuses."""
    first_of: dict[str, Sheet] = {}
    warnings = []
    for sheet in sheets:
        first = first_of.setdefault(sheet.sha256, sheet)
        if first is not sheet:
            warnings.append(
                f"sheets {first.name} (coder {first.coder!r}) and {sheet.name} (coder {sheet.coder!r}) hold the "
                "very same bytes: if one is a copy of the other, the agreement between them is that of one "
                "sheet with itself. Check that each is that coder's own sheet (filling each sheet's coder "
                "column with its coder's name makes a copy impossible to miss)."
            )
    return warnings


def look_alike_coder_warnings(sheets: list[Sheet] | tuple[Sheet, ...]) -> list[str]:
    """Two coders whose names differ only in case, width or surrounding spaces (`Alice` from a
    file name, `alice` from another sheet's coder column): two coders to the audit, but likely
    one person, whose sheets would then be scored as two coders agreeing.

    >>> from types import SimpleNamespace as S
    >>> look_alike_coder_warnings([S(coder="Alice", name="a.csv"), S(coder="alice", name="b.csv")])[0][:44]
    "coders 'Alice' (a.csv) and 'alice' (b.csv) d"
    """
    first_of: dict[str, Sheet] = {}
    warnings = []
    for sheet in sheets:
        first = first_of.setdefault(code_key(sheet.coder), sheet)
        if first is not sheet:
            warnings.append(
                f"coders {first.coder!r} ({first.name}) and {sheet.coder!r} ({sheet.name}) differ only in case "
                "or spacing: they are audited as two coders; if they are one person, one of the sheets is not "
                "an independent coding."
            )
    return warnings


def check_sheet_count(count: int) -> None:
    """Agreement needs two sheets; checked before their ids are matched (no sheet has none to match)."""
    if count < 2:
        raise UsageError(
            f"agreement needs two or more coding sheets; got {count}.",
            hint="pass every coder's sheet, e.g. irr-audit join alice.csv bob.csv --rule RULE --out DIR.",
            code="usage-one-sheet",
        )


def _check_rule_version(sheet: Sheet, rule: Rule) -> None:
    if sheet.rule_versions is None:
        return
    versions = pc.utf8_trim_whitespace(sheet.rule_versions).dictionary_encode()  # in order of first appearance
    _, first_at = np.unique(to_numpy(versions.indices), return_index=True)
    for text, at in zip(versions.dictionary.to_pylist(), first_at):
        if not text:
            continue
        row = int(sheet.rows_at(at))
        try:
            version = parse_rule_version(text)
        except ValueError:
            raise SheetError(
                f"sheet {sheet.name} row {row} has rule_version {text!r}, which is not a version.",
                hint="write the version as 1 or v1.",
                code="sheet-rule-version",
            ) from None
        if version != rule.version:
            raise SheetError(
                f"sheet {sheet.name} was coded under {rule.id} version {version} (row {row}), "
                f"but the rule file {rule.source_name} is version {rule.version}.",
                hint="pass the rule file of the version the coders used "
                f"(rules/{rule.id}/v{version}.yaml), or re-code the sheet.",
                code="sheet-rule-version",
            )


# --- the log as text -------------------------------------------------------------------


@dataclass(frozen=True)
class SheetLog:
    """One sheet's rows of the missingness log, column by column: what the log frame shows
    and the join folder's log files are written from. ``rows`` are the rows a spreadsheet
    shows (-1 for an absent cell, which has none); ``reasons`` index ``REASONS``;
    ``details`` index ``detail_texts``."""

    sheet: str
    coder: str
    rows: np.ndarray
    comment_ids: pa.Array
    raw_values: pa.Array
    reasons: np.ndarray
    details: np.ndarray
    detail_texts: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.rows)


def log_parts(join: JoinResult) -> list[SheetLog]:
    """The missingness log, one part per sheet, in sheet order (as :attr:`JoinResult.log` lists it)."""
    return [_sheet_log(join, column) for column in range(len(join.sheets))]


def _log_frame(join: JoinResult) -> pd.DataFrame:
    import pandas as pd  # noqa: PLC0415 (loaded on use: a score builds no frame)

    frames = [_part_frame(part) for part in log_parts(join)]
    return pd.concat(frames, ignore_index=True)[list(LOG_COLUMNS)] if frames else pd.DataFrame(columns=LOG_COLUMNS)


def _part_frame(part: SheetLog) -> pd.DataFrame:
    import pandas as pd  # noqa: PLC0415 (loaded on use: a score builds no frame)

    return pd.DataFrame(
        {
            "sheet": part.sheet,
            "coder": part.coder,
            "row": pd.arrays.IntegerArray(part.rows, part.rows < 0),
            "comment_id": part.comment_ids.to_numpy(zero_copy_only=False),
            "raw_value": part.raw_values.to_numpy(zero_copy_only=False),
            "reason": REASON_VALUES[part.reasons],
            "detail": np.array(part.detail_texts, dtype=object)[part.details],
        },
        columns=list(LOG_COLUMNS),
    )


def _sheet_log(join: JoinResult, column: int) -> SheetLog:
    sheet = join.sheets[column]
    mine = join.entries.sheet == column
    position, unit = join.entries.position[mine], join.entries.unit[mine]
    reason, ref, own_status = join.entries.reason[mine], join.entries.ref[mine], join.entries.status[mine]
    has_row = position >= 0
    at_rows = from_numpy(position[has_row])
    rows = np.full(len(position), -1, dtype=np.int64)
    rows[has_row] = sheet.rows_at(position[has_row])
    absent_units = unit[~has_row]  # an absent cell: the unit it is missing from
    comment_ids = _in_entry_order(has_row, unit_keys(sheet).take(at_rows), join.units.take(from_numpy(absent_units)))
    no_value = pa.repeat(string_array([""])[0], len(absent_units))
    raw = _in_entry_order(has_row, plain_text(sheet.codes.take(at_rows)), no_value)
    details, texts = _details(join, sheet, reason, position, unit, ref, own_status)
    return SheetLog(sheet.name, sheet.coder, rows, comment_ids, raw, reason, details, texts)


def _in_entry_order(has_row: np.ndarray, of_rows: pa.Array, of_cells: pa.Array) -> pa.Array:
    """The values of the entries with a row and of those without, each in entry order,
    merged back into entry order (the usual order, rows before absent cells, needs no gather)."""
    merged = pa.concat_arrays([of_rows, of_cells.cast(of_rows.type)])
    if has_row[: len(of_rows)].all():
        return merged
    order = np.empty(len(has_row), dtype=np.int64)
    order[has_row] = np.arange(len(of_rows))
    order[~has_row] = len(of_rows) + np.arange(len(of_cells))
    return merged.take(from_numpy(order))


def _details(
    join: JoinResult,
    sheet: Sheet,
    reason: np.ndarray,
    position: np.ndarray,
    unit: np.ndarray,
    ref: np.ndarray,
    own_status: np.ndarray,
) -> tuple[np.ndarray, tuple[str, ...]]:
    """Each log row's detail, as an index into the texts returned with it: a fixed text per
    reason, and the rows behind duplicates and conflicts."""
    rule = join.rule
    fixed = {
        Reason.UNKNOWN: f"a missing code of {rule.label}: the coder could not tell",
        Reason.INVALID: rule.describe_codes(),
        Reason.ABSENT: f"no row for this comment id in {sheet.name}",
        Reason.MISSING_ID: "row has no comment id",
        Reason.CONDITION_UNDECIDED: "the variable this one depends on has no valid code from this coder",
        Reason.CODED_WHEN_NOT_APPLICABLE: "coded although this variable does not apply for this coder; not used",
    }
    texts = [fixed.get(kind, "") for kind in REASONS]
    details = reason.astype(np.int64)

    def own(at: np.ndarray, keys: np.ndarray, text: Callable[[int], str]) -> None:
        """Rows ``at`` get the text made of their key: one text per distinct key."""
        distinct, index = np.unique(keys, return_inverse=True)
        details[at] = len(texts) + index.reshape(-1)
        texts.extend(text(key) for key in distinct.tolist())

    duplicates = np.flatnonzero(reason == REASON_INDEX[Reason.DUPLICATE])
    own(
        duplicates,
        sheet.rows_at(ref[duplicates]),
        lambda row: f"repeats row {row} with the same code; that row is used",
    )
    conflicts = np.flatnonzero(reason == REASON_INDEX[Reason.CONFLICT])
    if len(conflicts):
        listed = _rows_by_unit(unit[conflicts], sheet.rows_at(position[conflicts]))
        own(
            conflicts,
            unit[conflicts],
            lambda conflict_unit: f"comment id is in rows {listed[conflict_unit]} of this sheet with different codes",
        )
    outside = np.flatnonzero(reason == REASON_INDEX[Reason.NOT_IN_SAMPLE])
    own(outside, own_status[outside], _outside_detail)
    invalid = np.flatnonzero(reason == REASON_INDEX[Reason.INVALID])
    if len(invalid):
        typed, values = _distinct_codes(sheet.codes.take(from_numpy(position[invalid])))
        notes = [lookalike_note(value, rule) for value in values]
        noted = np.array([bool(note) for note in notes])[typed]
        own(invalid[noted], typed[noted], lambda value: texts[REASON_INDEX[Reason.INVALID]] + notes[value])
    return details, tuple(texts)


def _distinct_codes(codes: pa.Array) -> tuple[np.ndarray, list[str]]:
    """Codes as the index of each into its distinct values, and those values (a few typos)."""
    encoded = codes if isinstance(codes, pa.DictionaryArray) else pc.dictionary_encode(codes)
    return to_numpy(encoded.indices).astype(np.int64), encoded.dictionary.to_pylist()


def _outside_detail(status: int) -> str:
    """The detail of a row outside the sample, whose own code has this status."""
    return NOT_IN_SAMPLE + ("" if STATUSES[status] is CodeStatus.VALID else f" (also {STATUSES[status].value})")


def _rows_by_unit(units: np.ndarray, rows: np.ndarray) -> dict[int, str]:
    """Each unit's rows, ascending and comma-separated (one sort, not a scan per unit)."""
    order = np.lexsort((rows, units))
    grouped, sorted_rows = units[order], rows[order].tolist()
    starts = np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]]).tolist()
    ends = [*starts[1:], len(sorted_rows)]
    return {
        unit: ", ".join(map(str, sorted_rows[start:end]))
        for unit, start, end in zip(grouped[starts].tolist(), starts, ends)
    }
