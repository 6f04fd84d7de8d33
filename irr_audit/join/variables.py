"""A codebook's variables joined in one run (docs/codebook_audit.md).

A codebook is several rules coded together. Each coder's sheet holds every variable,
either wide (one column per variable, named after its rule id) or long (the columns
comment_id, variable and code: one row per unit and variable). Each variable is a
view of the sheets (the same rows, that variable's codes) joined by
:func:`irr_audit.join.join.join_sheets` exactly as a single rule is.

A conditional variable (``applies_when: {rule: PARENT, codes: [...]}``) applies to a
coder's unit only when that coder's parent code is one of ``codes``:

- where it does not apply for a coder, that coder's cell is *not applicable*: neither
  missing nor a disagreement; a code written there anyway is logged
  (``coded_not_applicable``) and not used;
- where the coders disagree on the parent (it applies for one, not for another), the
  unit is not comparable on the child: each cell is logged (``not_comparable``) and
  the unit is left out of the child's table;
- where a coder's parent code is missing (no valid code, or no row), whether the
  child applies for that coder is unknown: the child's cell is missing for that coder
  and logged (``parent_missing``); the unit stays in the child's table when the child
  applies for every other coder, else it leaves it.

Every input cell ends up once: used (a valid code of a unit in the child's table),
logged, or not applicable.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from irr_audit._threads import thread_count
from irr_audit.errors import SheetError, UsageError
from irr_audit.io.arrowtext import from_numpy
from irr_audit.io.display import printable
from irr_audit.io.sheets import ColumnChoice, Sheet, SheetOptions, sheet_from_parsed
from irr_audit.io.tables import ParsedFile, read_and_parse
from irr_audit.join.join import (
    ABSENT,
    CONFLICT,
    REASON_INDEX,
    STATUS_INDEX,
    VALID,
    JoinResult,
    LogEntries,
    join_sheets,
)
from irr_audit.join.missingness import LOG_COLUMNS, Reason
from irr_audit.rules.model import CodeStatus, Rule

VARIABLE = "variable"
CODEBOOK_LOG_COLUMNS = (VARIABLE, *LOG_COLUMNS)
WIDE = "wide"
LONG = "long"
# a cell's applicability of a conditional variable, for one coder
APPLIES, DOES_NOT_APPLY, UNKNOWN = 1, 0, -1
BLANK = STATUS_INDEX[CodeStatus.BLANK]
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


def variable_views(
    parsed: ParsedFile, path: Path, rules: Sequence[Rule], options: ColumnChoice
) -> tuple[dict[str, Sheet], LongRest | None]:
    """One sheet per variable, read from one parsed file (each a view of the same rows), and
    for a long sheet the rows of variables the codebook does not have. Pure."""
    shape = sheet_shape(parsed.table.header, rules, path.name)
    if shape == WIDE:
        keys = {column.strip().casefold() for column in parsed.table.header}
        views = {}
        for rule in rules:
            column = rule.id if rule.id in keys else "code"
            sheet = sheet_from_parsed(parsed, path, dataclasses.replace(options, code_column=column))
            views[rule.id] = dataclasses.replace(sheet, rule_versions=None)  # one column of versions cannot fit all
        return views, None
    base = sheet_from_parsed(parsed, path, dataclasses.replace(options, code_column="code"))
    table = parsed.table
    at = next(index for index, column in enumerate(table.header) if column.strip().casefold() == VARIABLE)
    records = from_numpy(np.searchsorted(table.rows, base.rows))
    variables = pc.utf8_trim_whitespace(table.cells[at].take(records))
    views = {rule.id: _take(base, pc.equal(variables, rule.id)) for rule in rules}
    known = pc.is_in(variables, value_set=pa.array([rule.id for rule in rules], type=pa.string()))
    unknown = pc.invert(known)
    if not pc.any(unknown).as_py():
        return views, None
    return views, LongRest(_take(base, unknown), table.cells[at].take(records).filter(unknown))


def _take(sheet: Sheet, mask: pa.Array) -> Sheet:
    at = from_numpy(np.flatnonzero(mask.to_numpy(zero_copy_only=False)))

    def take(values: pa.Array | None) -> pa.Array | None:
        return None if values is None else values.take(at)

    return dataclasses.replace(
        sheet,
        rows=sheet.rows[at.to_numpy()],
        comment_ids=sheet.comment_ids.take(at),
        codes=sheet.codes.take(at),
        rule_versions=take(sheet.rule_versions),
        texts=take(sheet.texts),
        unit_keys=take(sheet.unit_keys),
    )


def read_variable_sheets(
    paths: Sequence[Path], rules: Sequence[Rule], options: SheetOptions
) -> tuple[dict[str, list[Sheet]], list[LongRest]]:
    """Every sheet read once (one per core at a time), then split into its variables' views."""
    with ThreadPoolExecutor(max_workers=thread_count()) as pool:
        parsed = list(
            pool.map(lambda path: read_and_parse(path, options.worksheet, options.limits, options.delimiter), paths)
        )
    by_variable: dict[str, list[Sheet]] = {rule.id: [] for rule in rules}
    rests = []
    for path, found in zip(paths, parsed):
        views, rest = variable_views(found, path, rules, options)
        for rule_id, sheet in views.items():
            by_variable[rule_id].append(sheet)
        if rest is not None:
            rests.append(rest)
    return by_variable, rests


# --- the join of every variable -----------------------------------------------------------


@dataclass(frozen=True)
class VariableJoin:
    """One variable of a codebook joined: ``join`` is what is scored (for a conditional
    variable, the units it applies to), ``full`` every unit of its sheets, ``not_applicable``
    the cells of ``full`` where it does not apply, and ``outside`` the log entries of the
    cells of ``full``'s units that left ``join`` (indexing ``full``'s units)."""

    rule: Rule
    join: JoinResult
    full: JoinResult
    not_applicable: np.ndarray
    outside: LogEntries
    condition: Condition | None = None

    @cached_property
    def log(self) -> pd.DataFrame:
        """This variable's rows of the codebook's log: the scored join's, then those of the units that left it."""
        parts = [self.join.log]
        if len(self.outside):
            parts.append(dataclasses.replace(self.full, entries=self.outside).log)
        log = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0].copy()
        if self.condition is not None:
            log["detail"] = _condition_details(log, self.condition)
        log.insert(0, VARIABLE, self.rule.id)
        return log

    def cell_counts(self) -> dict[str, int]:
        """The (unit, coder) cells of every unit of the sheets: used, not applicable, and logged."""
        cells = self.full.status.size
        used = int(np.count_nonzero(self.join.status == VALID))
        not_applicable = int(np.count_nonzero(self.not_applicable))
        return {"cells": cells, "used": used, "not_applicable": not_applicable, "logged": cells - used - not_applicable}


def _condition_details(log: pd.DataFrame, condition: Condition) -> pd.Series:
    said = {
        Reason.PARENT_MISSING.value: f"no valid code of {condition.parent} from this coder, so whether this "
        f"variable applies ({condition.shown}) is unknown",
        Reason.NOT_COMPARABLE.value: f"the coders disagree on whether it applies ({condition.shown}): the unit "
        "is not comparable on this variable",
        Reason.CODED_NOT_APPLICABLE.value: f"coded although it does not apply for this coder ({condition.shown} "
        "does not hold); the code is not used",
    }
    detail = log["detail"].copy()
    for reason, text in said.items():
        detail[log["reason"] == reason] = text
    return detail


def join_variables(
    sheets: Mapping[str, Sequence[Sheet]],
    rules: Sequence[Rule],
    sample_ids: list[str] | None = None,
    conditions: Mapping[str, Condition] | None = None,
) -> dict[str, VariableJoin]:
    """Join each variable's sheets under its rule, then apply the conditions (``conditions``:
    rule id -> Condition; default each rule's ``applies_when``), parents before children. Pure."""
    found = {rule.id: condition_of(rule) for rule in rules} if conditions is None else dict(conditions)
    by_id = {rule.id: rule for rule in rules}
    check_conditions(by_id, found)
    done: dict[str, VariableJoin] = {}

    def variable(rule_id: str) -> VariableJoin:
        if rule_id not in done:
            rule = by_id[rule_id]
            joined = join_sheets(list(sheets[rule_id]), rule, sample_ids=sample_ids)
            condition = found.get(rule_id)
            if condition is None:
                none = np.zeros(joined.status.shape, dtype=bool)
                done[rule_id] = VariableJoin(rule, joined, joined, none, _no_entries(), None)
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


def applicability(child: JoinResult, condition: Condition, parent: VariableJoin) -> np.ndarray:
    """APPLIES, DOES_NOT_APPLY or UNKNOWN for each cell of ``child``, from each coder's own
    parent code (matched by comment id, coder by coder)."""
    if parent.full.coders != child.coders:
        raise UsageError(
            f"{child.rule.id} and {condition.parent} were coded by different coders "
            f"({', '.join(child.coders)}; {', '.join(parent.full.coders)}).",
            hint="give every variable of the codebook the same sheets, one per coder.",
            code="codebook-coders",
        )
    at = pc.index_in(child.units, value_set=parent.full.units).fill_null(-1).to_numpy(zero_copy_only=False)
    found = at >= 0
    result = np.full(child.status.shape, UNKNOWN, dtype=np.int8)
    parent_rule = parent.rule
    wanted = np.zeros(len(parent_rule.categories) + 1, dtype=bool)  # the last slot: -1, no valid code
    wanted[[parent_rule.categories.index(code) for code in condition.codes]] = True
    for column in range(len(child.coders)):
        rows = at[found]
        codes = parent.full.codes[rows, column].astype(np.int64)
        valid = parent.full.status[rows, column] == VALID
        state = np.where(valid, np.where(wanted[codes], APPLIES, DOES_NOT_APPLY), UNKNOWN)
        state[parent.not_applicable[rows, column]] = DOES_NOT_APPLY  # its parent does not apply: nor does it
        result[found, column] = state
    return result


def apply_condition(joined: JoinResult, condition: Condition, parent: VariableJoin) -> VariableJoin:
    """The child variable's join restricted to the units it applies to, its not-applicable
    cells, and the log entries of every cell the condition changed."""
    state = applicability(joined, condition, parent)
    applies, not_applies = state == APPLIES, state == DOES_NOT_APPLY
    not_comparable = applies.any(axis=1) & not_applies.any(axis=1)
    kept = ~not_applies.any(axis=1)
    not_applicable = not_applies & ~not_comparable[:, None]
    # what each cell's log entry becomes: -1 none, else a reason's index
    becomes = np.full(state.shape, -2, dtype=np.int16)  # -2: the cell as joined
    written = (joined.status != ABSENT) & (joined.status != CONFLICT)
    coded = written & (joined.status != BLANK)
    becomes[not_applicable] = -1
    becomes[not_applicable & coded] = REASON_INDEX[Reason.CODED_NOT_APPLICABLE]
    becomes[(state == UNKNOWN) & ~not_comparable[:, None]] = REASON_INDEX[Reason.PARENT_MISSING]
    becomes[not_comparable[:, None] & np.ones(state.shape, dtype=bool)] = REASON_INDEX[Reason.NOT_COMPARABLE]
    becomes[joined.status == CONFLICT] = -2  # its rows stay logged as a conflict
    entries = _rewritten_entries(joined, becomes)
    scored = _restricted(joined, kept, becomes, entries)
    outside = _select(entries, (entries.unit >= 0) & ~kept[np.maximum(entries.unit, 0)])
    return VariableJoin(joined.rule, scored, joined, not_applicable, outside, condition)


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
                    "raw_value": sheet.codes.to_numpy(zero_copy_only=False),
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


def log_counts(log: pd.DataFrame) -> dict[str, dict[str, int]]:
    """The log's rows by variable, then by reason (in the order they first appear)."""
    counts: dict[str, dict[str, int]] = {}
    sizes = log.groupby([VARIABLE, "reason"], sort=False).size()
    for (variable, reason), size in zip(sizes.index.tolist(), sizes.tolist()):
        counts.setdefault(str(variable), {})[str(reason)] = int(size)
    return counts


def cell_accounting(variables: Mapping[str, VariableJoin]) -> dict[str, dict[str, Any]]:
    """Per variable, its cells: used, not applicable, logged (docs/codebook_audit.md)."""
    return {rule_id: joined.cell_counts() for rule_id, joined in variables.items()}
