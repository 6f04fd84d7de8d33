"""A codebook's variables joined in one run (docs/codebook_audit.md).

A codebook is several rules coded together. Each coder's sheet holds every variable,
either wide (one column per variable, named after its rule id) or long (the columns
comment_id, variable and code: one row per unit and variable). Each variable is a
view of the sheets (a wide sheet's rows with that variable's column as the code, or a
long sheet's rows of that variable) joined by :func:`irr_audit.join.join.join_sheets`
exactly as a single rule is, on the units of every sheet.

A conditional variable (``applies_when: {rule: PARENT, codes: [...]}``) follows the
convention of docs/statistics.md, "Conditional variables". For one coder on one unit its
condition holds (the parent cell is a valid code in ``codes``), fails (a valid code not in
``codes``, or the parent is itself not applicable to that coder) or is undecided (the
parent is blank, a missing code, invalid, in conflict or absent). A coder with no row for
the unit on either variable is absent, and decides nothing. Per unit:

- the condition holds for no coder: the unit is not the child's (not applicable); a child
  code written there anyway is logged (``coded_when_not_applicable``, or
  ``condition_undecided`` where that coder's condition was undecided) and not used;
- it holds for one coder and fails for another: the unit is not comparable on the child,
  logged once (``condition_disagreement``) and left out of the child's every basis;
- otherwise the unit is the child's: an undecided coder's cell is missing
  (``condition_undecided``), never a code.

Every (unit, coder) cell ends up once: used, logged, not applicable, or in a unit not
comparable; every sheet row, behind a used cell or in the log.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from irr_audit.errors import SheetError, UsageError
from irr_audit.io.arrowtext import from_numpy, plain_text
from irr_audit.io.display import printable
from irr_audit.io.sheets import ColumnChoice, Sheet, SheetOptions, on_shares, sheet_from_parsed
from irr_audit.io.tables import ParsedFile, read_and_parse, refuse_options_no_sheet_reads
from irr_audit.join.join import (
    ABSENT,
    CONFLICT,
    REASON_INDEX,
    REASONS,
    STATUS_INDEX,
    VALID,
    JoinResult,
    LogEntries,
    UnitMatch,
    check_sheet_count,
    join_sheets,
    match_units,
)
from irr_audit.join.missingness import LOG_COLUMNS, Reason, rows_word
from irr_audit.rules.model import CodeStatus, Rule

VARIABLE = "variable"
CODEBOOK_LOG_COLUMNS = (VARIABLE, *LOG_COLUMNS)
WIDE = "wide"
LONG = "long"
# a conditional variable's condition in one cell: for that coder on that unit
HOLDS, FAILS, UNDECIDED, NONE = 1, 0, -1, -2
WRITTEN = [STATUS_INDEX[status] for status in (CodeStatus.VALID, CodeStatus.UNKNOWN, CodeStatus.INVALID)]
CELL_REASONS = np.array(
    [REASON_INDEX[reason] for reason in (Reason.UNKNOWN, Reason.BLANK, Reason.INVALID, Reason.ABSENT)], dtype=np.int8
)


@dataclass(frozen=True)
class Condition:
    """When a variable applies: its parent's code is one of ``codes``."""

    parent: str
    codes: tuple[str, ...]

    @property
    def shown(self) -> str:
        return f"{self.parent} in ({', '.join(self.codes)})"


def condition_of(rule: Rule) -> Condition | None:
    """The rule's ``applies_when`` as a Condition; None for a variable that always applies."""
    found = rule.applies_when
    return None if found is None else Condition(found.rule, tuple(found.codes))


# --- sheets -----------------------------------------------------------------------------


def sheet_shape(header: Sequence[str], rules: Sequence[Rule], name: str) -> str:
    """WIDE (a column per variable) or LONG (comment_id, variable, code); anything else is refused."""
    keys = {column.strip().casefold() for column in header}
    named = [rule.id for rule in rules if rule.id in keys]
    ids = ", ".join(rule.id for rule in rules)
    if VARIABLE in keys and named:
        raise SheetError(
            f"sheet {name} is both long (it has a `{VARIABLE}` column) and wide (it has a column for "
            f"{', '.join(named)}): which codes to read cannot be known.",
            hint=f"give each sheet one shape: comment_id, {VARIABLE}, code (one row per unit and variable), "
            f"or comment_id and one column per variable ({ids}).",
            code="sheet-codebook-shape",
        )
    if VARIABLE in keys:
        return LONG
    if named:
        missing = [rule.id for rule in rules if rule.id not in keys]
        if missing:
            raise SheetError(
                f"sheet {name} has a column for {', '.join(named)} but none for {', '.join(missing)}.",
                hint="a wide sheet has one column per variable of the codebook, named after the rule id "
                "(leave a cell blank where the coder did not code it).",
                code="sheet-missing-column",
            )
        return WIDE
    if len(rules) == 1 and "code" in keys:  # a one-variable codebook reads a single rule's sheet
        return WIDE
    raise SheetError(
        f"sheet {name} has neither a `{VARIABLE}` column (a long sheet) nor a column for any variable "
        f"of the codebook ({ids}).",
        hint=f"name one column per variable after its rule id, or give the columns comment_id, {VARIABLE}, code.",
        code="sheet-codebook-shape",
    )


@dataclass(frozen=True)
class LongRest:
    """The rows of a long sheet whose variable is not in the codebook: logged, never used."""

    sheet: Sheet
    variables: pa.Array  # the variable as written, of each row of ``sheet``


@dataclass(frozen=True)
class SheetViews:
    """The coders' sheets split into their variables: ``by_variable`` maps a rule id to one view per
    sheet; ``bases`` are the sheets' rows of every variable; ``rows_of`` maps a rule id to, per sheet,
    the positions of its view's rows in the base (None: every row, as in a wide sheet); ``rests``
    are the rows of long sheets naming no variable of the codebook."""

    by_variable: dict[str, list[Sheet]]
    bases: list[Sheet]
    rows_of: dict[str, list[np.ndarray | None]]
    rests: list[LongRest]


def variable_views(
    parsed: ParsedFile, path: Path, rules: Sequence[Rule], options: ColumnChoice
) -> tuple[dict[str, Sheet], dict[str, np.ndarray | None], Sheet, LongRest | None]:
    """One sheet per variable, read from one parsed file, each a view of the base (the rows of
    every variable), the positions of each view's rows in the base (None: all of them), the base,
    and for a long sheet the rows of variables the codebook does not have. Pure."""
    shape = sheet_shape(parsed.table.header, rules, path.name)
    if shape == WIDE:
        keys = {column.strip().casefold() for column in parsed.table.header}
        views: dict[str, Sheet] = {}
        for rule in rules:
            column = rule.id if rule.id in keys else "code"
            sheet = sheet_from_parsed(parsed, path, dataclasses.replace(options, code_column=column))
            first = next(iter(views.values()), sheet)
            # the same rows and ids for every variable (empty rows are those with every cell empty): one
            # copy of them; one column of versions cannot fit every rule
            views[rule.id] = dataclasses.replace(
                sheet,
                row_numbers=first.row_numbers,
                comment_ids=first.comment_ids,
                unit_keys=first.unit_keys,
                rule_versions=None,
            )
        return views, dict.fromkeys(views), next(iter(views.values())), None
    whole = sheet_from_parsed(parsed, path, dataclasses.replace(options, code_column="code"))
    table = parsed.table
    at = next(index for index, column in enumerate(table.header) if column.strip().casefold() == VARIABLE)
    records = from_numpy(np.searchsorted(table.rows, whole.rows))
    written = table.cells[at].take(records)
    variables = matched_variables(written, rules)
    known = pc.is_valid(variables)
    rest = None
    if not pc.all(known).as_py():
        unknown = pc.invert(known)
        rest = LongRest(_take(whole, unknown), written.filter(unknown))
    base = _take(whole, known)
    named = variables.filter(known)
    positions = {rule.id: np.flatnonzero(pc.equal(named, rule.id).to_numpy(zero_copy_only=False)) for rule in rules}
    views = {rule_id: _take(base, at_rows) for rule_id, at_rows in positions.items()}
    return views, dict(positions), base, rest


def variable_key(text: str) -> str:
    """A variable's name as it is matched to a rule id: trimmed and case-folded, as a wide sheet's
    columns are matched to them (and a sheet's column names to comment_id and code). Rule ids are
    lower case ([a-z0-9_]), so no two of them share a key: `Sarcasm` can only mean `sarcasm`."""
    return text.strip().casefold()


def matched_variables(written: pa.Array, rules: Sequence[Rule]) -> pa.Array:
    """Each row's variable as the rule id it names (see ``variable_key``), or null when it names
    none (the row is logged as unknown_variable, its variable as written). The few distinct
    names are matched once each, not row by row."""
    by_key = {variable_key(rule.id): rule.id for rule in rules}
    encoded = pc.dictionary_encode(written)
    names = [by_key.get(variable_key(name)) for name in encoded.dictionary.to_pylist()]
    return pa.array(names, type=pa.string()).take(encoded.indices)


def _take(sheet: Sheet, which: pa.Array | np.ndarray) -> Sheet:
    """The sheet's rows where a mask is true, or at these positions."""
    positions = which if isinstance(which, np.ndarray) else np.flatnonzero(which.to_numpy(zero_copy_only=False))
    at = from_numpy(positions)

    def take(values: pa.Array | None) -> pa.Array | None:
        return None if values is None else values.take(at)

    return dataclasses.replace(
        sheet,
        row_numbers=sheet.rows_at(positions),
        comment_ids=sheet.comment_ids.take(at),
        codes=sheet.codes.take(at),
        rule_versions=take(sheet.rule_versions),
        texts=take(sheet.texts),
        unit_keys=take(sheet.unit_keys),
    )


def read_variable_sheets(paths: Sequence[Path], rules: Sequence[Rule], options: SheetOptions) -> SheetViews:
    """Every sheet read once (one per core at a time, the last round's on the cores left), then
    split into its variables' views."""
    refuse_options_no_sheet_reads(paths, options.worksheet, options.delimiter)
    parsed = on_shares(
        lambda path, threads: read_and_parse(
            path, options.worksheet, options.limits, options.delimiter, threads=threads
        ),
        list(paths),
    )
    return views_of_tables(list(zip(parsed, paths)), rules, options)


def views_of_tables(
    tables: Sequence[tuple[ParsedFile, Path]], rules: Sequence[Rule], options: ColumnChoice
) -> SheetViews:
    """Parsed sheets (files, or DataFrames as irr_audit.io.dataframes gives them) split into their
    variables' views. Pure."""
    found = SheetViews({rule.id: [] for rule in rules}, [], {rule.id: [] for rule in rules}, [])
    for table, path in tables:
        views, rows_of, base, rest = variable_views(table, path, rules, options)
        for rule in rules:
            found.by_variable[rule.id].append(views[rule.id])
            found.rows_of[rule.id].append(rows_of[rule.id])
        found.bases.append(base)
        if rest is not None:
            found.rests.append(rest)
    return found


# --- the join of every variable -----------------------------------------------------------


@dataclass(frozen=True)
class VariableJoin:
    """One variable of a codebook joined: ``join`` is what is scored (for a conditional
    variable, its units), ``full`` every unit of its sheets, ``decided`` each cell of ``full``
    as the next condition reads it (a category index; NOT_APPLICABLE; or -1, no code),
    ``outside`` the log entries of the cells of ``full``'s units that are not the variable's,
    ``not_applicable`` and ``not_comparable`` those units."""

    rule: Rule
    join: JoinResult
    full: JoinResult
    decided: np.ndarray
    outside: LogEntries
    not_applicable: np.ndarray
    not_comparable: np.ndarray
    condition: Condition | None = None
    parent_codes: pa.Array | None = None  # per not-comparable unit: each coder's parent code, for the log

    @cached_property
    def log(self) -> pd.DataFrame:
        """This variable's rows of the codebook's log: the scored join's, then those of the units
        that are not the variable's, then one row per unit not comparable."""
        parts = [self.join.log]
        if len(self.outside):
            parts.append(dataclasses.replace(self.full, entries=self.outside).log)
        if self.not_comparable.any():
            parts.append(self._disagreement_log())
        log = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0].copy()
        if self.condition is not None:
            log["detail"] = _condition_details(log, self.condition)
        log.insert(0, VARIABLE, self.rule.id)
        return log

    def _disagreement_log(self) -> pd.DataFrame:
        units = np.flatnonzero(self.not_comparable)
        said = self.parent_codes.to_pylist() if self.parent_codes is not None else [""] * len(units)
        return pd.DataFrame(
            {
                "sheet": "",
                "coder": "",
                "row": pd.array([pd.NA] * len(units), dtype="Int64"),
                "comment_id": self.full.unit_ids[units],
                "raw_value": said,
                "reason": Reason.CONDITION_DISAGREEMENT.value,
                "detail": "",
            },
            columns=list(LOG_COLUMNS),
        )

    def log_counts(self) -> dict[str, int]:
        """The rows of :attr:`log` by reason, counted without making the log's text."""
        reasons = np.concatenate([self.join.entries.reason, self.outside.reason])
        counts = np.bincount(reasons, minlength=len(REASONS))
        found = {reason.value: int(counts[at]) for at, reason in enumerate(REASONS) if counts[at]}
        if self.not_comparable.any():
            found[Reason.CONDITION_DISAGREEMENT.value] = int(np.count_nonzero(self.not_comparable))
        return found

    def cell_counts(self) -> dict[str, int]:
        """The (unit, coder) cells of every unit of the sheets: used (a valid code of one of the
        variable's units), logged (another cell of its units), not applicable, not comparable."""
        coders = self.full.status.shape[1]
        used = int(np.count_nonzero(self.join.status == VALID))
        not_applicable = int(np.count_nonzero(self.not_applicable)) * coders
        not_comparable = int(np.count_nonzero(self.not_comparable)) * coders
        return {
            "cells": self.full.status.size,
            "used": used,
            "logged": self.join.status.size - used,
            "not_applicable": not_applicable,
            "not_comparable": not_comparable,
        }


NOT_APPLICABLE = -2  # in ``VariableJoin.decided``: the variable does not apply to that coder's unit


def _condition_details(log: pd.DataFrame, condition: Condition) -> pd.Series:
    said = {
        Reason.CONDITION_UNDECIDED.value: f"no valid code of {condition.parent} from this coder, so whether this "
        f"variable applies ({condition.shown}) cannot be told; missing, never a code",
        Reason.CONDITION_DISAGREEMENT.value: f"the coders disagree on whether it applies ({condition.shown}; "
        f"their {condition.parent} codes in raw_value): the unit is not comparable on this variable",
        Reason.CODED_WHEN_NOT_APPLICABLE.value: f"coded although it does not apply for this coder "
        f"({condition.shown} does not hold); the code is not used",
    }
    detail = log["detail"].copy()
    for reason, text in said.items():
        detail[log["reason"] == reason] = text
    return detail


def join_variables(
    sheets: SheetViews | Mapping[str, Sequence[Sheet]],
    rules: Sequence[Rule],
    sample_ids: list[str] | None = None,
    conditions: Mapping[str, Condition] | None = None,
) -> dict[str, VariableJoin]:
    """Join each variable's sheets under its rule, then apply the conditions (``conditions``:
    rule id -> Condition; default each rule's ``applies_when``), parents before children. Pure.

    With :class:`SheetViews` every variable's units are the units of the sheets (a unit no one
    coded on a variable of a long sheet is absent there, as a missing row is), matched once."""
    found = {rule.id: condition_of(rule) for rule in rules} if conditions is None else dict(conditions)
    by_id = {rule.id: rule for rule in rules}
    check_conditions(by_id, found)
    views = sheets.by_variable if isinstance(sheets, SheetViews) else sheets
    if isinstance(sheets, SheetViews):
        check_sheet_count(len(sheets.bases))  # before matching: no sheet has no ids to match
    base = match_units(sheets.bases, sample_ids) if isinstance(sheets, SheetViews) else None
    done: dict[str, VariableJoin] = {}
    shared_warnings: list[tuple[str, ...]] = []  # wide sheets: every variable has the rows, ids and warnings

    def matched(rule_id: str) -> UnitMatch | None:
        if base is None or not isinstance(sheets, SheetViews):
            return None
        rows_of = sheets.rows_of[rule_id]
        units_of = tuple(of if rows is None else of[rows] for of, rows in zip(base.units_of, rows_of))
        every_row = all(rows is None for rows in rows_of)
        return dataclasses.replace(
            base, units_of=units_of, warnings=shared_warnings[0] if every_row and shared_warnings else None
        )

    def variable(rule_id: str) -> VariableJoin:
        if rule_id not in done:
            rule = by_id[rule_id]
            joined = join_sheets(list(views[rule_id]), rule, sample_ids=sample_ids, matched=matched(rule_id))
            if not shared_warnings:
                shared_warnings.append(joined.warnings)
            condition = found.get(rule_id)
            if condition is None:
                decided = np.where(joined.status == VALID, joined.codes, -1)
                no_unit = np.zeros(len(joined.units), dtype=bool)
                done[rule_id] = VariableJoin(rule, joined, joined, decided, _no_entries(), no_unit, no_unit)
            else:
                done[rule_id] = apply_condition(joined, condition, variable(condition.parent))
        return done[rule_id]

    return {rule.id: variable(rule.id) for rule in rules}


def check_conditions(rules: Mapping[str, Rule], conditions: Mapping[str, Condition | None]) -> None:
    """A condition names a rule of the codebook and codes of that rule, and conditions form no cycle."""
    for rule_id, condition in conditions.items():
        if condition is None:
            continue
        parent = rules.get(condition.parent)
        if parent is None or condition.parent == rule_id:
            raise UsageError(
                f"{rule_id} applies when {condition.parent} has a code, but the codebook has no variable "
                f"{condition.parent}" + (" other than itself." if condition.parent == rule_id else "."),
                hint="name another rule of the codebook in applies_when.rule.",
                code="codebook-condition",
            )
        unknown = [code for code in condition.codes if code not in parent.categories]
        if unknown or not condition.codes:
            raise UsageError(
                f"{rule_id} applies when {condition.parent} is {', '.join(unknown) or '(no code)'}, "
                f"which {'is' if len(unknown) == 1 else 'are'} not codes of {parent.label}.",
                hint=f"use codes of {condition.parent}: {', '.join(parent.categories)}.",
                code="codebook-condition",
            )
    for start in conditions:
        seen, at = [start], conditions.get(start)
        while at is not None:
            if at.parent in seen:
                raise UsageError(
                    f"the conditions of {' -> '.join([*seen, at.parent])} form a cycle.",
                    hint="a variable's condition names a variable coded before it.",
                    code="codebook-condition",
                )
            seen.append(at.parent)
            at = conditions.get(at.parent)


def _no_entries() -> LogEntries:
    empty = np.empty(0, dtype=np.int64)
    return LogEntries(empty.astype(np.int32), empty, empty, empty.astype(np.int8), empty, np.empty(0, dtype=np.int8))


def condition_states(child: JoinResult, condition: Condition, parent: VariableJoin) -> np.ndarray:
    """HOLDS, FAILS, UNDECIDED or NONE (no row for the unit on either variable: absent, deciding
    nothing) for each cell of ``child``, from each coder's own parent cell (matched by comment id)."""
    if parent.full.coders != child.coders:
        raise UsageError(
            f"{child.rule.id} and {condition.parent} were coded by different coders "
            f"({', '.join(child.coders)}; {', '.join(parent.full.coders)}).",
            hint="give every variable of the codebook the same sheets, one per coder.",
            code="codebook-coders",
        )
    at = pc.index_in(child.units, value_set=parent.full.units).fill_null(-1).to_numpy(zero_copy_only=False)
    found = at >= 0
    decided = np.full(child.status.shape, -1, dtype=np.int64)  # a unit the parent lacks: no parent code
    decided[found] = parent.decided[at[found]]
    wanted = np.zeros(len(parent.rule.categories), dtype=bool)
    wanted[[parent.rule.categories.index(code) for code in condition.codes]] = True
    states = np.full(child.status.shape, UNDECIDED, dtype=np.int8)
    is_code = decided >= 0
    states[is_code] = np.where(wanted[decided[is_code]], HOLDS, FAILS)
    states[decided == NOT_APPLICABLE] = FAILS
    parent_absent = np.ones(child.status.shape, dtype=bool)
    parent_absent[found] = parent.full.status[at[found]] == ABSENT
    states[(states == UNDECIDED) & parent_absent & (child.status == ABSENT)] = NONE
    return states


def apply_condition(joined: JoinResult, condition: Condition, parent: VariableJoin) -> VariableJoin:
    """The child variable's join restricted to its units, with every cell the condition changed
    logged as docs/statistics.md, "Conditional variables", says."""
    states = condition_states(joined, condition, parent)
    holds, fails = (states == HOLDS).any(axis=1), (states == FAILS).any(axis=1)
    inside, not_comparable = holds & ~fails, holds & fails
    not_applicable = ~holds
    written = np.isin(joined.status, WRITTEN)  # a code, a missing code or an invalid one: something typed
    # what each cell's log entry becomes: -2 as joined, -1 none, else a reason's index
    becomes = np.full(states.shape, -2, dtype=np.int16)
    becomes[inside[:, None] & (states == UNDECIDED)] = REASON_INDEX[Reason.CONDITION_UNDECIDED]
    outside = ~inside[:, None] & np.ones(states.shape, dtype=bool)
    becomes[outside] = -1
    becomes[not_applicable[:, None] & (states == FAILS) & written] = REASON_INDEX[Reason.CODED_WHEN_NOT_APPLICABLE]
    becomes[not_applicable[:, None] & (states == UNDECIDED) & written] = REASON_INDEX[Reason.CONDITION_UNDECIDED]
    becomes[joined.status == CONFLICT] = -2  # its rows stay logged as a conflict
    entries = _rewritten_entries(joined, becomes)
    scored = _restricted(joined, inside, becomes, entries)
    decided = np.where((states == HOLDS) & (joined.status == VALID), joined.codes, -1)
    decided[states == FAILS] = NOT_APPLICABLE
    return VariableJoin(
        joined.rule,
        scored,
        joined,
        decided,
        _select(entries, (entries.unit >= 0) & ~inside[np.maximum(entries.unit, 0)]),
        not_applicable,
        not_comparable,
        condition,
        _parent_codes(joined, parent, not_comparable),
    )


def _parent_codes(child: JoinResult, parent: VariableJoin, units: np.ndarray) -> pa.Array:
    """Each of these units' coders' parent codes, as `alice=yes; bob=no`."""
    at = pc.index_in(child.units.filter(pa.array(units)), value_set=parent.full.units).to_pylist()
    categories = parent.rule.categories
    shown = []
    for unit in at:
        codes = parent.decided[unit] if unit is not None else np.full(len(child.coders), -1)
        shown.append(
            "; ".join(
                f"{coder}={categories[code] if code >= 0 else 'not applicable' if code == NOT_APPLICABLE else ''}"
                for coder, code in zip(child.coders, codes.tolist())
            )
        )
    return pa.array(shown, type=pa.string())


def _rewritten_entries(joined: JoinResult, becomes: np.ndarray) -> LogEntries:
    """The join's log entries with each changed cell's entry replaced (or removed)."""
    entries = joined.entries
    has_unit = entries.unit >= 0
    unit, sheet = np.maximum(entries.unit, 0), entries.sheet
    cell_entry = has_unit & np.isin(entries.reason, CELL_REASONS)
    changed = cell_entry & (becomes[unit, sheet] != -2)
    kept = _select(entries, ~changed)
    units, columns = np.nonzero(becomes >= 0)
    positions = joined.positions[units, columns].astype(np.int64)
    added = LogEntries(
        sheet=columns.astype(np.int32),
        position=positions,
        unit=units.astype(np.int64),
        reason=becomes[units, columns].astype(np.int8),
        ref=np.full(len(units), -1, dtype=np.int64),
        status=np.where(positions >= 0, joined.status[units, columns], VALID).astype(np.int8),
    )
    merged = LogEntries.concat([kept, added])
    # as the join lists them: by sheet, its rows in order, then the cells without a row by unit
    row_key = np.where(merged.position >= 0, merged.position, np.iinfo(np.int64).max)
    return _select(merged, np.lexsort((merged.unit, row_key, merged.sheet)))


def _select(entries: LogEntries, which: np.ndarray) -> LogEntries:
    return LogEntries(*(getattr(entries, name)[which] for name in LogEntries.__dataclass_fields__))


def _restricted(joined: JoinResult, kept: np.ndarray, becomes: np.ndarray, entries: LogEntries) -> JoinResult:
    """The join of the kept units: a cell whose parent is missing is no longer valid, and has no row behind it."""
    dropped_cell = becomes >= 0
    status = np.where(dropped_cell, ABSENT, joined.status).astype(np.int8)
    codes = np.where(dropped_cell, -1, joined.codes).astype(joined.codes.dtype)
    new_index = np.cumsum(kept) - 1
    cell_rows = []
    for column, (cell_units, rows) in enumerate(joined.cell_rows):
        stays = kept[cell_units] & ~dropped_cell[cell_units, column]
        behind = np.flatnonzero(stays) if rows is None else rows[stays]
        cell_rows.append((new_index[cell_units[stays]], behind))
    inside = (entries.unit < 0) | kept[np.maximum(entries.unit, 0)]
    mine = _select(entries, inside)
    mine = dataclasses.replace(mine, unit=np.where(mine.unit >= 0, new_index[np.maximum(mine.unit, 0)], -1))
    return dataclasses.replace(
        joined,
        units=joined.units.filter(pa.array(kept)),
        codes=np.asfortranarray(codes[kept]),
        status=np.asfortranarray(status[kept]),
        cell_rows=tuple(cell_rows),
        entries=mine,
    )


# --- the one log ---------------------------------------------------------------------------


def rest_log(rests: Sequence[LongRest], rules: Sequence[Rule]) -> pd.DataFrame:
    """The rows of long sheets whose variable the codebook does not have, one log row each."""
    known = ", ".join(rule.id for rule in rules)
    frames = []
    for rest in rests:
        sheet = rest.sheet
        written = rest.variables.to_numpy(zero_copy_only=False)
        frames.append(
            pd.DataFrame(
                {
                    VARIABLE: written,
                    "sheet": sheet.name,
                    "coder": sheet.coder,
                    "row": pd.array(sheet.rows, dtype="Int64"),
                    "comment_id": sheet.comment_ids.to_numpy(zero_copy_only=False),
                    "raw_value": plain_text(sheet.codes).to_numpy(zero_copy_only=False),
                    "reason": Reason.UNKNOWN_VARIABLE.value,
                    "detail": [
                        f"variable {printable(str(name), 60)!s} is not in the codebook ({known})" for name in written
                    ],
                },
                columns=list(CODEBOOK_LOG_COLUMNS),
            )
        )
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(CODEBOOK_LOG_COLUMNS))


def codebook_log(variables: Mapping[str, VariableJoin], rests: Sequence[LongRest] = ()) -> pd.DataFrame:
    """The one missingness log of a codebook: every variable's rows (in codebook order) with a
    ``variable`` column, then the rows of long sheets naming no variable of the codebook."""
    rules = [joined.rule for joined in variables.values()]
    frames = [joined.log for joined in variables.values()]
    if rests:
        frames.append(rest_log(rests, rules))
    return pd.concat(frames, ignore_index=True)[list(CODEBOOK_LOG_COLUMNS)]


@dataclass(frozen=True, eq=False)
class CodebookJoin:
    """Every variable of a codebook joined, and the rows of long sheets naming no variable of it.
    The one log is made when read; its counts come without it."""

    variables: Mapping[str, VariableJoin]
    rests: tuple[LongRest, ...] = ()
    sample: dict[str, Any] | None = None  # what a report shows of the sample the units are restricted to
    # a codebook bundle's folder and its manifest as read (irr_audit.bundle.manifest.Manifest, a later
    # stage than the join's): report checks its adjudication records against it
    bundle: tuple[Path, Any] | None = None

    @cached_property
    def log(self) -> pd.DataFrame:
        return codebook_log(self.variables, self.rests)

    def log_counts(self) -> dict[str, dict[str, int]]:
        """The log's rows by variable (the codebook's order, then any unknown variable), then by reason."""
        counts = {rule_id: joined.log_counts() for rule_id, joined in self.variables.items()}
        for rest in self.rests:
            for name in rest.variables.to_pylist():
                mine = counts.setdefault(str(name), {})
                mine[Reason.UNKNOWN_VARIABLE.value] = mine.get(Reason.UNKNOWN_VARIABLE.value, 0) + 1
        return {variable: found for variable, found in counts.items() if found}

    @property
    def coders(self) -> tuple[str, ...]:
        return next(iter(self.variables.values())).full.coders

    @property
    def warnings(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(warning for joined in self.variables.values() for warning in joined.join.warnings))

    def cells(self) -> dict[str, dict[str, int]]:
        """Per variable, its cells: used, logged, not applicable, not comparable."""
        return {rule_id: joined.cell_counts() for rule_id, joined in self.variables.items()}

    def summary_line(self, label: str) -> str:
        by_reason: dict[str, int] = {}
        for found in self.log_counts().values():
            for reason, count in found.items():
                by_reason[reason] = by_reason.get(reason, 0) + count
        rows = sum(by_reason.values())
        phrase = ", ".join(f"{count} {reason}" for reason, count in by_reason.items())
        return (
            f"Codebook {label}: {len(self.variables)} variables from {len(self.coders)} coders; "
            f"{rows} {rows_word(rows)} in the missingness log" + (f" ({phrase})." if phrase else ".")
        )


def log_counts(log: pd.DataFrame) -> dict[str, dict[str, int]]:
    """The log's rows by variable, then by reason (in the order they first appear)."""
    counts: dict[str, dict[str, int]] = {}
    sizes = log.groupby([VARIABLE, "reason"], sort=False).size()
    for (variable, reason), size in zip(sizes.index.tolist(), sizes.tolist()):
        counts.setdefault(str(variable), {})[str(reason)] = int(size)
    return counts
