"""Unit-pattern counts of a long table, whatever engine runs the scan (DuckDB, Spark).

A long table has one row per code a coder gave a unit: (comment_id, coder, code). The
engine only groups and counts; every decision about a value is join's, taken here in
Python on the few distinct values the engine returns:

- a code is classified by the rule (aliases, case folding, missing codes, blanks,
  invalid codes) through ``Rule.classify``, as join classifies a sheet's codes;
- a coder name and an id are trimmed of the whitespace pyarrow's ``utf8_trim_whitespace``
  trims (the characters are listed here, so that the engine trims exactly those);
- repeated rows of one coder for one unit are join's: the same (status, category) again is a
  duplicate (one row is the cell), anything else a conflict (the cell is not valid);
- a row whose id and code are blank is an empty row (counted, as a sheet's empty rows are);
  a blank id with a code is ``missing_id``; a row without a coder ``no_coder``, and with a
  coder not asked for (``coders=``) ``other_coder``.

The engine returns, per unit pattern, its units and the tallies of its cells; here they become
the counts (the very rows and order join's counts.csv has) and a summary that accounts for
every row of the table.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from irr_audit.errors import SheetError, UsageError
from irr_audit.io.display import CONTROL, printable
from irr_audit.io.framecsv import frame_csv_text
from irr_audit.io.outputs import refuse_column_collisions
from irr_audit.join.counts import UNITS
from irr_audit.join.join import RESERVED_COLUMNS, STATUS_INDEX
from irr_audit.join.missingness import Reason, count_phrase, rows_word
from irr_audit.metrics.patterns import MAX_UNITS, Patterns, compress
from irr_audit.rules.model import CodeStatus, Rule

NO_CODER = "no_coder"  # a row whose coder cell is blank
OTHER_CODER = "other_coder"  # a row of a coder not among those asked for
MAX_CODERS = 1000  # as many coders as a sheet may have columns (limits.columns)
MAX_DISTINCT = 1_000_000  # distinct (coder, code) values returned by the engine's first scan
MAX_KEY_BITS = 126  # a pattern's key, (K + 1)^coders, is summed in 128-bit integers (DuckDB HUGEINT, DECIMAL(38))
CONTROL_PATTERN = CONTROL.pattern  # written with escapes: RE2 (DuckDB) and Java (Spark) read it as Python does


@dataclass(frozen=True)
class LongTableColumns:
    """The columns of a long table holding the id, the coder and the code (names compared
    trimmed and without case, as a sheet's)."""

    id_column: str = "comment_id"
    coder_column: str = "coder"
    code_column: str = "code"


@cache
def trimmed_whitespace() -> str:
    """The characters pyarrow's utf8_trim_whitespace trims (join trims ids and coder names with
    it): the engine trims ids with exactly these. Found by asking pyarrow about every character
    that could be whitespace (Python's, and the controls), so it follows the pyarrow installed."""
    candidates = [
        chr(point)
        for point in range(0x110000)
        if not 0xD800 <= point <= 0xDFFF
        and (chr(point).isspace() or unicodedata.category(chr(point)) in ("Zs", "Zl", "Zp", "Cc", "Cf"))
    ]
    trimmed = pc.utf8_trim_whitespace(pa.array(candidates, type=pa.string())).to_pylist()
    return "".join(character for character, rest in zip(candidates, trimmed) if rest == "")


def trim(values: Iterable[str]) -> list[str]:
    """Values trimmed as join trims ids and coder names."""
    return pc.utf8_trim_whitespace(pa.array(list(values), type=pa.string())).to_pylist()


# A unit's cells that are not valid, counted in one integer: 12 bits per kind (a unit has at
# most MAX_CODERS < 4096 cells), so the engine sums one column per unit instead of four.
PACKED_BITS = 12
PACKED = (CodeStatus.UNKNOWN, CodeStatus.BLANK, CodeStatus.INVALID, CodeStatus.CONFLICT)
CONFLICT_BIT = 1 << (PACKED_BITS * PACKED.index(CodeStatus.CONFLICT))


@dataclass(frozen=True)
class CodeMap:
    """Each distinct raw code (None read as "") with its key (status x (K + 1) + category + 1: equal
    keys are a duplicate, different ones a conflict, as in join; a valid code's key is 1..K), its
    bit in a unit's packed count of cells that are not valid (0 for a valid code), and whether the
    cell is filled (a character other than whitespace: a row with a blank id and a filled code is a row)."""

    raw: tuple[str, ...]
    key: tuple[int, ...]
    bit: tuple[int, ...]
    filled: tuple[bool, ...]

    @classmethod
    def of(cls, raw_codes: Iterable[str | None], rule: Rule) -> CodeMap:
        raw = tuple(dict.fromkeys("" if code is None else code for code in raw_codes))
        width = len(rule.categories) + 1
        category_of = {code: index for index, code in enumerate(rule.categories)}
        keys, bits = [], []
        for text in raw:
            status, code = rule.classify(text)
            keys.append(STATUS_INDEX[status] * width + (category_of[code] if code is not None else -1) + 1)
            bits.append(0 if status is CodeStatus.VALID else 1 << (PACKED_BITS * PACKED.index(status)))
        array = pa.array(raw, type=pa.string())
        filled = (pc.binary_length(array).to_numpy() > 0) & ~pc.utf8_is_space(array).to_numpy(zero_copy_only=False)
        return cls(raw, tuple(keys), tuple(bits), tuple(bool(value) for value in filled))

    def rows(self) -> list[tuple[str, int, int, bool]]:
        return list(zip(self.raw, self.key, self.bit, self.filled))


@dataclass(frozen=True)
class CoderMap:
    """Each distinct raw coder cell (None read as "") with its coder's index in ``coders``, -1 for a
    blank cell and -2 for a coder not asked for; and each coder's place in a pattern's key."""

    coders: tuple[str, ...]
    raw: tuple[str, ...]
    index: tuple[int, ...]
    base: int

    def place(self, index: int) -> int:
        return self.base**index if index >= 0 else 0

    def rows(self) -> list[tuple[str, int, int]]:
        """(raw, index, place)."""
        return [(raw, index, self.place(index)) for raw, index in zip(self.raw, self.index)]


def refuse_coders_not_names(wanted: object) -> None:
    """The Python API takes ``coders`` as given: a text ("ann,ben") would be read character by
    character, a coder "," with no row absent from every unit, and nothing fully coded."""
    if isinstance(wanted, str) or not isinstance(wanted, Sequence) or not all(isinstance(c, str) for c in wanted):
        raise UsageError(
            f"coders={wanted!r} is not a list of coders' names.",
            hint="pass a list, e.g. coders=['ann', 'ben'] (--coders ann,ben on the command line).",
            code="usage-coders",
        )


def coder_map(raw_coders: Iterable[str | None], rule: Rule, source: str, wanted: Sequence[str] | None) -> CoderMap:
    """The coders of the table: ``wanted`` in its order, else every coder named, sorted. Refused as
    join refuses sheets: fewer than two coders, a reserved or control-character name."""
    raw = tuple(dict.fromkeys("" if name is None else name for name in raw_coders))
    names = trim(raw)
    for name in names:
        if CONTROL.search(name):
            raise SheetError(
                f"{source} names a coder '{printable(name, 80)}', which holds a control character.",
                hint="name the coders with printable characters.",
                code="table-control-character",
            )
    if wanted is not None:
        refuse_coders_not_names(wanted)
        coders = tuple(wanted)
        if not all(coder.strip() for coder in coders):  # "" would be the rows of no coder, counted as a coder
            raise UsageError(
                f"--coders names a blank coder: {','.join(coders)!r} (two commas, or one at an end).",
                hint="name each coder once, separated by single commas.",
                code="usage-coders",
            )
        if len(set(coders)) != len(coders):
            raise UsageError(
                f"--coders names a coder twice: {', '.join(coders)}.", hint="name each coder once.", code="usage-coders"
            )
        unknown = [coder for coder in coders if coder not in names]
        others = sorted({name for name in names if name and name not in coders})
        if unknown and others:  # a typo: a coder absent from every unit, and their rows left out
            raise UsageError(
                f"--coders names {', '.join(map(repr, unknown))}, who has no row in {source}, "
                f"and leaves out {', '.join(map(repr, others))}, who has.",
                hint=f"the table's coders are {', '.join(sorted(name for name in set(names) if name))}.",
                code="usage-coders",
            )
        # A coder named with no row, every row's coder named: a shard of units that coder did not
        # code (absent from each of them), counted with the corpus's coders so that shards add up.
    else:
        coders = tuple(sorted({name for name in names if name}))
    if len(coders) < 2:
        found = ", ".join(repr(name) for name in coders) or "none"
        raise UsageError(
            f"{source} has {len(coders)} coder{'' if len(coders) == 1 else 's'} ({found}); "
            "agreement needs two or more.",
            hint="check --coder-column, or that every coder's rows are in the table.",
            code="table-one-coder",
        )
    if len(coders) > MAX_CODERS:
        raise UsageError(
            f"{source} has {len(coders):,} coders; irr-audit counts at most {MAX_CODERS:,}.",
            hint="check --coder-column: it should name who coded each row.",
            code="table-too-many-coders",
        )
    for coder in coders:
        if coder in RESERVED_COLUMNS:
            raise UsageError(
                f"{source} has the coder name {coder!r}, a reserved column name.",
                hint="rename the coder in the table.",
                code="table-reserved-coder",
            )
    refuse_column_collisions(
        [*((coder, "a coder of the table") for coder in coders), (UNITS, "the units column")], source
    )
    base = len(rule.categories) + 1
    if len(coders) * np.log2(base) >= MAX_KEY_BITS:
        raise UsageError(
            f"{source} has {len(coders)} coders of {len(rule.categories)} categories: a unit's pattern of codes does "
            "not fit the 128-bit key the engine groups units by.",
            hint="count the units of fewer coders at a time (--coders), or of a rule with fewer codes.",
            code="table-too-many-coders",
        )
    position = {coder: at for at, coder in enumerate(coders)}
    index = tuple(position.get(name, -1 if not name else -2) for name in names)
    return CoderMap(coders, raw, index, base)


@dataclass(frozen=True)
class RowTally:
    """The first scan: rows per distinct (raw coder, raw code), and how many had a blank id."""

    coder: str | None
    code: str | None
    rows: int
    blank_id: int


def row_tallies(found: Sequence[Sequence[Any]], source: str) -> list[RowTally]:
    """The first scan's rows (coder, code, rows, blank ids, the smallest id holding a control
    character) as tallies, refused when the code or coder column is free text (more than
    MAX_DISTINCT values) or an id holds a control character. DuckDB and Spark alike."""
    if len(found) > MAX_DISTINCT:
        raise SheetError(
            f"{source} has more than {MAX_DISTINCT:,} distinct (coder, code) values.",
            hint="check --code-column and --coder-column: they should name the code and the coder, not free text.",
            code="table-too-many-values",
        )
    control = sorted(row[4] for row in found if row[4] is not None)
    if control:
        raise SheetError(
            f"{source}: comment id '{printable(control[0], 80)}' holds a control character.",
            hint="remove it from the id (ids are matched as text and written to CSV, XLSX and reports, "
            "where a control character is lost or altered).",
            code="table-control-character",
        )
    return [RowTally(row[0], row[1], int(row[2]), int(row[3])) for row in found]


@dataclass(frozen=True)
class PatternTally:
    """The second scan, per (pattern key, packed count of the cells not valid): the units, the rows
    behind their cells, and the rows of cells in conflict."""

    key: int
    packed: int
    units: int
    rows: int
    conflict_rows: int

    def not_valid(self, status: CodeStatus) -> int:
        """The cells of this status (UNKNOWN, BLANK, INVALID or CONFLICT) in all these units."""
        mask = (1 << PACKED_BITS) - 1
        return self.units * ((self.packed >> (PACKED_BITS * PACKED.index(status))) & mask)


@dataclass(frozen=True)
class LongTableCounts:
    """Unit-pattern counts of a long table and the account of its rows."""

    rule: Rule
    coders: tuple[str, ...]
    patterns: Patterns
    summary: dict[str, Any] = field(default_factory=dict)

    def frame(self) -> pd.DataFrame:
        """The counts as join's pattern_counts frame: one column per coder (the code, "" when not
        valid), then units, in compress's order."""
        categories = np.array([*self.rule.categories, ""], dtype=object)
        frame = pd.DataFrame(
            {coder: categories[self.patterns.rows[:, column]] for column, coder in enumerate(self.coders)}
        )
        frame[UNITS] = self.patterns.counts
        return frame

    def csv_text(self) -> str:
        """counts.csv, byte for byte what join writes for the same units."""
        return frame_csv_text(self.frame())

    def summary_line(self) -> str:
        units = self.summary["units"]
        rows = sum(self.summary["log_rows"].values())
        reasons = count_phrase(self.summary["log_rows"])
        return (
            f"{self.summary['rows']:,} rows, {units['total']:,} units from {len(self.coders)} coders: "
            f"{units['fully_coded']:,} fully coded; {rows:,} {rows_word(rows)} in the missingness log"
            + (f" ({reasons})" if reasons else "")
            + (f"; {self.summary['empty_rows']:,} empty rows" if self.summary["empty_rows"] else "")
            + "."
        )


# Rows -> cells (unit, coder): the lowest and highest key of its rows (equal: one code, maybe
# repeated; different: a conflict) and its rows -> units: the pattern key (a valid cell's key,
# 1..K, is its category + 1, placed at its coder's digit), the packed count of cells not valid,
# the rows and the rows in conflict -> a few hundred rows, by pattern key and packed count.
# The same text runs in DuckDB and in Spark SQL, over a view `src(id, coder, code)` (the id
# trimmed) and the tables `coder_map(raw, coder, place)` and `code_map(raw, k, bit, filled)`.
PATTERNS = """
    WITH cells AS (
        SELECT src.id, m.place, min(k.k) AS lo, max(k.k) AS hi, min(k.bit) AS bit, count(*) AS n
        FROM src
        JOIN coder_map AS m ON coalesce(src.coder, '') = m.raw
        JOIN code_map AS k ON coalesce(src.code, '') = k.raw
        WHERE m.coder >= 0 AND src.id <> ''
        GROUP BY src.id, m.place
    ),
    units AS (
        SELECT sum(CASE WHEN lo = hi AND lo <= {categories} THEN lo * place ELSE 0 END) AS key,
               sum(CASE WHEN lo = hi THEN bit ELSE {conflict} END) AS packed,
               sum(n) AS n_rows,
               sum(CASE WHEN lo = hi THEN 0 ELSE n END) AS conflict_rows
        FROM cells GROUP BY id
    )
    SELECT key, packed, count(*) AS units, sum(n_rows) AS n_rows, sum(conflict_rows) AS conflict_rows
    FROM units GROUP BY key, packed
"""


def patterns_sql(n_categories: int) -> str:
    """The pattern query for a rule of ``n_categories`` codes (two integers written into it)."""
    return PATTERNS.format(categories=int(n_categories), conflict=CONFLICT_BIT)


def pattern_tallies(rows: Iterable[Sequence[Any]]) -> list[PatternTally]:
    """The pattern query's rows (key, packed, units, rows, conflict rows) as tallies."""
    return [PatternTally(*(int(value) for value in row)) for row in rows]


def decode_key(key: int, n_coders: int, base: int) -> list[int]:
    """A pattern key (sum of (category + 1) x base^coder) as each coder's category, -1 where none."""
    digits = []
    for _ in range(n_coders):
        key, digit = divmod(key, base)
        digits.append(digit - 1)
    return digits


def assemble(
    rule: Rule, coders: CoderMap, codes: CodeMap, rows: Sequence[RowTally], patterns: Sequence[PatternTally]
) -> LongTableCounts:
    """The counts and the account of every row, from the two scans. Every row of the table is
    an empty row, a log row or the row behind a valid cell; a difference is a bug, refused loudly."""
    n_coders = len(coders.coders)
    filled = dict(zip(codes.raw, codes.filled))
    coder_index = dict(zip(coders.raw, coders.index))
    empty = missing_id = no_coder = other_coder = 0
    for tally in rows:
        code, coder = "" if tally.code is None else tally.code, "" if tally.coder is None else tally.coder
        blank_and_empty = 0 if filled[code] else tally.blank_id
        empty += blank_and_empty
        missing_id += tally.blank_id - blank_and_empty
        placed = tally.rows - tally.blank_id
        if coder_index[coder] == -1:
            no_coder += placed
        elif coder_index[coder] == -2:
            other_coder += placed
    total_rows = sum(tally.rows for tally in rows)
    rows_of_pattern = np.array([decode_key(tally.key, n_coders, coders.base) for tally in patterns], dtype=np.int64)
    units = np.array([tally.units for tally in patterns], dtype=np.int64)
    total_units = int(units.sum())
    if total_units > MAX_UNITS:
        raise UsageError(
            f"the table has {total_units:,} units; irr-audit scores at most {MAX_UNITS:,}.",
            hint="count shards of the units apart, each under that number.",
            code="counts-too-many-units",
        )
    compressed = compress(rows_of_pattern.reshape(-1, n_coders), len(rule.categories), units)
    cells = {status: sum(tally.not_valid(status) for tally in patterns) for status in PACKED}
    cells[CodeStatus.VALID] = int((units * (rows_of_pattern >= 0).sum(axis=1)).sum()) if len(units) else 0
    rows_in_cells = sum(tally.rows for tally in patterns)
    conflict_rows = sum(tally.conflict_rows for tally in patterns)
    single = sum(count for status, count in cells.items() if status is not CodeStatus.CONFLICT)
    absent = total_units * n_coders - single - cells[CodeStatus.CONFLICT]
    log = {
        Reason.UNKNOWN.value: cells[CodeStatus.UNKNOWN],
        Reason.BLANK.value: cells[CodeStatus.BLANK],
        Reason.INVALID.value: cells[CodeStatus.INVALID],
        Reason.ABSENT.value: absent,
        Reason.CONFLICT.value: conflict_rows,
        Reason.DUPLICATE.value: rows_in_cells - conflict_rows - single,
        Reason.MISSING_ID.value: missing_id,
        NO_CODER: no_coder,
        OTHER_CODER: other_coder,
    }
    valid = cells[CodeStatus.VALID]
    accounted = empty + valid + sum(count for reason, count in log.items() if reason != Reason.ABSENT.value)
    if accounted != total_rows:  # pragma: no cover - a bug of the scans, never of the input
        raise AssertionError(f"the scans account for {accounted:,} of {total_rows:,} rows")
    fully = int(units[(rows_of_pattern >= 0).all(axis=1)].sum()) if len(units) else 0
    summary = {
        "rows": total_rows,
        "empty_rows": empty,
        "units": {"total": total_units, "fully_coded": fully, "missing": total_units - fully},
        "log_rows": {reason: count for reason, count in log.items() if count},
        "cells": {
            CodeStatus.VALID.value: valid,
            CodeStatus.UNKNOWN.value: log[Reason.UNKNOWN.value],
            CodeStatus.BLANK.value: log[Reason.BLANK.value],
            CodeStatus.INVALID.value: log[Reason.INVALID.value],
            CodeStatus.ABSENT.value: absent,
            CodeStatus.CONFLICT.value: cells[CodeStatus.CONFLICT],
        },
        # the run's aliases change what a code is: kept as join's summary.json keeps them
        **({"run_aliases": dict(rule.run_aliases)} if rule.run_aliases else {}),
    }
    return LongTableCounts(rule, coders.coders, compressed, summary)


def find_column(header: Sequence[str], wanted: str, option: str, source: str) -> int:
    """The position of a column named ``wanted`` (trimmed, without case), refused when absent or repeated."""
    matches = [at for at, name in enumerate(header) if name.strip().casefold() == wanted.strip().casefold()]
    if len(matches) != 1:
        found = ", ".join(printable(name, 40) for name in header if name.strip()) or "(none)"
        raise SheetError(
            f'{source} has {"no" if not matches else len(matches)} column{"s" if matches else ""} named "{wanted}".'
            f"\n  Columns found: {found}",
            hint=f"pass {option} NAME naming one column of the table.",
            code="table-missing-column" if not matches else "table-duplicate-column",
        )
    return matches[0]


def column_places(header: Sequence[str], columns: LongTableColumns, source: str) -> tuple[int, int, int]:
    """The positions of the id, coder and code columns in ``header``, each named once, all three apart."""
    places = (
        find_column(header, columns.id_column, "--id-column", source),
        find_column(header, columns.coder_column, "--coder-column", source),
        find_column(header, columns.code_column, "--code-column", source),
    )
    if len(set(places)) < 3:
        raise SheetError(
            f"{source}: the id, coder and code columns must be three different columns.",
            hint="name them with --id-column, --coder-column and --code-column.",
            code="table-same-column",
        )
    return places
