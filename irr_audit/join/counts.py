"""Unit-pattern counts: the mergeable sufficient statistics of every coefficient.

Every coefficient irr-audit reports is a sum over units of a per-unit quantity,
so units with the same codes can be counted once. A counts file has one column
per coder (the code as text, empty where the coder gave no valid code) and a
last column `units`, the number of units with that pattern:

    alice,bob,carol,units
    yes,yes,yes,1520
    yes,no,,12

Counts from shards of a corpus are merged by adding `units` over equal patterns
(the files can simply be concatenated), so the numbers for a corpus too large
for one machine come from counts made where the data lives (README: DuckDB, Spark).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from irr_audit.errors import SheetError, UsageError
from irr_audit.io.framecsv import frame_csv_text
from irr_audit.io.limits import DEFAULT_LIMITS, Limits
from irr_audit.io.outputs import refuse_column_collisions, spreadsheet_original
from irr_audit.io.sheets import SheetOptions, read_table_file
from irr_audit.io.tables import ParsedFile, refuse_unsaved_formulas
from irr_audit.join.join import JoinResult
from irr_audit.join.variables import variable_key
from irr_audit.join.writers import UNITS as UNITS  # counts.csv's last column, named where join writes it
from irr_audit.metrics.patterns import MAX_UNITS, compress
from irr_audit.rules.model import CodeStatus, Rule

VARIABLE = "variable"  # a codebook's counts: the first column names the variable of each row
MAX_PATTERN_UNITS = 2**53 - 1  # every count stays exact in a float64 (the coefficients' sums run in BLAS)
WHOLE_NUMBER = r"[0-9]+(\.0*)?"  # digits, and at most a fraction of zeros ("12.0" from a spreadsheet)


def pattern_counts(join: JoinResult) -> pd.DataFrame:
    """The join's units as distinct patterns of codes with their counts."""
    categories = np.array([*join.rule.categories, ""], dtype=object)
    patterns = compress(join.codes, len(join.rule.categories))
    frame = pd.DataFrame({coder: categories[patterns.rows[:, column]] for column, coder in enumerate(join.coders)})
    frame[UNITS] = patterns.counts
    return frame


def variable_counts_csv_text(joins: Mapping[str, JoinResult]) -> str:
    """A codebook's counts.csv: a first column `variable`, then each variable's pattern counts."""
    first = next(iter(joins.values()))
    refuse_column_collisions(
        [
            (VARIABLE, "the variable column"),
            *((sheet.coder, f"the coder of sheet {sheet.name}") for sheet in first.sheets),
            (UNITS, "the units column"),
        ],
        "counts.csv",
    )
    frames = [pattern_counts(join) for join in joins.values()]
    for variable, frame in zip(joins, frames):
        frame.insert(0, VARIABLE, variable)
    return frame_csv_text(pd.concat(frames, ignore_index=True))


@dataclass(frozen=True)
class Counts:
    """Merged counts: pattern rows (category index, -1 missing), their units, and the files read."""

    coders: tuple[str, ...]
    patterns: np.ndarray
    units: np.ndarray
    sources: tuple[dict[str, Any], ...]


def read_counts(paths: list[Path], rule: Rule, limits: Limits = DEFAULT_LIMITS) -> Counts:
    """Read and merge counts files (shards add up), each read once within ``limits``."""
    read = [_read_one(path, limits) for path in paths]
    _refuse_repeated_files(paths, [parsed.sha256 for _, parsed in read])
    return _merged(paths, [frame for frame, _ in read], [parsed for _, parsed in read], rule)


def read_variable_counts(
    paths: list[Path], rules: Sequence[Rule], limits: Limits = DEFAULT_LIMITS
) -> dict[str, Counts]:
    """Read and merge a codebook's counts files (a first column `variable`, then one column per
    coder, then units): each variable's rows merged as :func:`read_counts` merges a rule's."""
    read = [_read_one(path, limits) for path in paths]
    _refuse_repeated_files(paths, [parsed.sha256 for _, parsed in read])
    known = [rule.id for rule in rules]
    by_key = {variable_key(rule_id): rule_id for rule_id in known}
    frames = []
    for path, (frame, parsed) in zip(paths, read):
        if frame.columns[0] != VARIABLE:
            raise SheetError(
                f"counts file {path.name} has no first column `{VARIABLE}`: it holds the counts of one rule.",
                hint="score it with --rule RULE, or write the codebook's counts with a first column variable "
                "(join --codebook writes them so).",
                code="counts-columns",
            )
        written = frame[VARIABLE].map(lambda text: spreadsheet_original(str(text)))
        variables = written.map(lambda text: by_key.get(variable_key(text)))  # matched as a sheet's are
        unknown = np.flatnonzero(variables.isna().to_numpy())
        if len(unknown):
            at = int(unknown[0])
            raise SheetError(
                f"counts file {path.name} row {parsed.table.rows[at]} is of variable {written.iloc[at].strip()!r}, "
                f"which is not in the codebook ({', '.join(known)}).",
                hint="score counts with the codebook they were made under.",
                code="counts-variable",
            )
        frames.append(frame.assign(**{VARIABLE: variables}))
    parsed_files = [parsed for _, parsed in read]
    return {
        rule.id: _merged(
            paths,
            [frame[frame[VARIABLE] == rule.id].drop(columns=VARIABLE).reset_index(drop=True) for frame in frames],
            parsed_files,
            rule,
        )
        for rule in rules
    }


def _merged(paths: list[Path], frames: list[pd.DataFrame], parsed: list[ParsedFile], rule: Rule) -> Counts:
    coders = tuple(frames[0].columns[:-1])
    for path, frame in zip(paths[1:], frames[1:]):
        if tuple(frame.columns[:-1]) != coders:
            raise UsageError(
                f"counts file {path.name} has coders {', '.join(frame.columns[:-1])}, "
                f"but {paths[0].name} has {', '.join(coders)}.",
                hint="merge counts of the same coders, in the same column order.",
                code="counts-coders",
            )
    merged = pd.concat(frames, ignore_index=True)
    units = merged[UNITS].to_numpy(dtype=np.int64)
    _check_total(units, paths)
    codes = np.column_stack([_category_indices(merged[coder], rule) for coder in coders])
    sources = tuple(
        {
            "name": path.name,
            "coder": None,
            "sha256": found.sha256,
            "size": found.size,
            "rows": len(frame),
            "empty_rows": 0,
        }
        for path, frame, found in zip(paths, frames, parsed)
    )
    return Counts(coders, codes, units, sources)


def _refuse_repeated_files(paths: list[Path], digests: list[str]) -> None:
    """The same counts given twice would count every unit twice: a wrong number, so refused.
    Two shards with the very same bytes are taken for one file given twice (the same path,
    a link, or a copy)."""
    first_of: dict[str, Path] = {}
    for path, digest in zip(paths, digests):
        if digest in first_of:
            raise UsageError(
                f"counts file {path} has the same bytes as {first_of[digest]}: its units would be counted twice.",
                hint="give each shard once; if two shards really hold the same patterns, add their units "
                "up in one file.",
                code="counts-repeated",
            )
        first_of[digest] = path


def _check_total(units: np.ndarray, paths: list[Path]) -> None:
    """The units of all files together: at most MAX_UNITS (exact integer arithmetic in the coefficients)."""
    total = int(units.sum()) if len(units) < 1024 else sum(int(value) for value in units)  # < 2^53 each: no overflow
    if total > MAX_UNITS:
        names = ", ".join(path.name for path in paths)
        raise UsageError(
            f"counts file{'s' if len(paths) > 1 else ''} {names} add{'' if len(paths) > 1 else 's'} up to {total:,} "
            f"units; irr-audit scores at most "
            f"{MAX_UNITS:,} (the coefficients decide some cases from exact products of unit counts, "
            "which 64-bit integers hold only that far).",
            hint="score a sample of the units, or shards of at most that many units each.",
            code="counts-too-many-units",
        )


def _read_one(path: Path, limits: Limits) -> tuple[pd.DataFrame, ParsedFile]:
    parsed = read_table_file(path, SheetOptions(limits=limits))
    table = parsed.table
    refuse_unsaved_formulas(table, path.name)  # every column is read: the coders' codes and the units
    columns = [spreadsheet_original(column.strip()) for column in table.header]
    if len(columns) < 3 or columns[-1] != UNITS or len(set(columns)) != len(columns):
        raise SheetError(
            f"counts file {path.name} must have two or more coder columns and then `{UNITS}`; "
            f"found {', '.join(columns)}.",
            hint="write one column per coder (each named once), then units (the units with that pattern).",
            code="counts-columns",
        )
    frame = pd.DataFrame({name: column.to_numpy(zero_copy_only=False) for name, column in zip(columns, table.cells)})
    frame[UNITS] = _unit_counts(frame[UNITS], path, table.rows)
    return frame, parsed


def _unit_counts(column: pd.Series, path: Path, rows: np.ndarray) -> np.ndarray:
    """The units column as integers: each a whole number written in digits, from 0 to 2^53 - 1.
    Anything else (inf, nan, 1e30, -3, 2.5, 2^53) names its file, row and value."""
    text = column.str.strip()
    digits = text.str.replace(r"\.0*$", "", regex=True).str.lstrip("0")
    fits = (text.str.fullmatch(WHOLE_NUMBER) & (digits.str.len() <= len(str(MAX_PATTERN_UNITS)))).fillna(False)
    values = np.zeros(len(column), dtype=np.int64)
    values[fits.to_numpy()] = [int(value or 0) for value in digits[fits]]
    bad = ~fits.to_numpy() | (values > MAX_PATTERN_UNITS)
    if bad.any():
        at = int(np.flatnonzero(bad)[0])
        raise SheetError(
            f"counts file {path.name} row {rows[at]} has units {column.iloc[at]!r}, "
            f"not a whole number of units from 0 to {MAX_PATTERN_UNITS:,}.",
            hint="units must be 0 or a positive integer written in digits, below 2^53.",
            code="counts-units",
        )
    return values


def _category_indices(column: pd.Series, rule: Rule) -> np.ndarray:
    """Each distinct code text through the rule: its category index, or -1 when not valid."""
    positions, written = pd.factorize(column)
    distinct = [spreadsheet_original(code) for code in written]  # as join (writers.counts_csv_text) wrote them
    index_of = {code: index for index, code in enumerate(rule.categories)}
    lookup = np.array(
        [
            index_of[code] if status is CodeStatus.VALID and code is not None else -1
            for status, code in map(rule.classify, distinct)
        ],
        dtype=np.int64,
    )
    return lookup[positions] if len(distinct) else np.full(len(column), -1, dtype=np.int64)
