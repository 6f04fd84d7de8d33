"""Published tables as input: a K x K agreement table, or a subjects x categories count matrix.

- ``--table FILE``: the first row names the rule's categories (the second coder's codes, the
  columns); every next row starts with a category (the first coder's code) and gives the units
  in each cell. The corner cell is free text. A category the table leaves out counts zero.

      first \\ second,yes,no
      yes,20,5
      no,10,15

- ``--category-counts FILE``: one row per subject (unit), one column per category of the rule,
  each cell the number of coders who put that subject in that category (the layout of Fleiss
  1971, Table 1). An optional first column named ``unit`` holds the subjects' ids.

      unit,depression,personality disorder,schizophrenia,neurosis,other
      1,0,0,0,6,0

Each becomes unit-pattern counts (counts.py): a table cell (i, j) is n units coded i by the
first coder and j by the second; a subject with counts n_c is one unit whose codes are its
categories, n_c times each, in the rule's order. The second form does not say which coder gave
which code, so coefficients that need it are reported undefined (report/table_report.py).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from irr_audit.errors import SheetError
from irr_audit.io.outputs import spreadsheet_original
from irr_audit.io.sheets import read_table
from irr_audit.io.tables import refuse_unsaved_formulas
from irr_audit.join.counts import MAX_PATTERN_UNITS, WHOLE_NUMBER, _check_total
from irr_audit.rules.model import CodeStatus, Rule

UNIT_COLUMN = "unit"
MAX_RATINGS_PER_SUBJECT = 1000  # a subject's codes become one row of that many cells


@dataclass(frozen=True)
class TableInput:
    """A table read as unit-pattern counts: ``kind`` is "table" or "category_counts"."""

    kind: str
    coders: tuple[str, ...]
    patterns: np.ndarray
    units: np.ndarray
    sources: tuple[dict[str, Any], ...]


def _source(path: Path, rows: int) -> dict[str, Any]:
    data = path.read_bytes()
    return {
        "name": path.name,
        "coder": None,
        "sha256": hashlib.sha256(data).hexdigest(),
        "size": len(data),
        "rows": rows,
        "empty_rows": 0,
    }


def _category(label: str, rule: Rule, path: Path, where: str, code: str) -> int:
    """The rule's category index of a label, or an error naming the file, the place and the fix."""
    status, canonical = rule.classify(spreadsheet_original(label.strip()))
    if status is CodeStatus.VALID and canonical is not None and canonical in rule.categories:
        return rule.categories.index(canonical)
    raise SheetError(
        f"{path.name}: {where} {label!r} is not a category of {rule.label}.",
        hint=f"label the rows and columns with the rule's categories: {', '.join(rule.categories)}.",
        code=code,
    )


def _counts(values: pd.Series, path: Path, rows: np.ndarray, column: str, code: str) -> np.ndarray:
    """Cells as whole numbers (digits, from 0 to 2^53 - 1); an empty cell is refused, not read as 0."""
    text = values.fillna("").astype(str).str.strip()
    digits = text.str.replace(r"\.0*$", "", regex=True).str.lstrip("0")
    fits = (text.str.fullmatch(WHOLE_NUMBER) & (digits.str.len() <= len(str(MAX_PATTERN_UNITS)))).to_numpy(bool)
    out = np.zeros(len(values), dtype=np.int64)
    out[fits] = [int(value or 0) for value in digits[fits]]
    bad = ~fits | (out > MAX_PATTERN_UNITS)
    if bad.any():
        at = int(np.flatnonzero(bad)[0])
        raise SheetError(
            f"{path.name} row {rows[at]}, column {column!r}: {values.iloc[at]!r} is not a whole number of units "
            f"from 0 to {MAX_PATTERN_UNITS:,}.",
            hint="write every cell as 0 or a positive integer in digits.",
            code=code,
        )
    return out


def _frame(path: Path) -> tuple[list[str], pd.DataFrame, np.ndarray]:
    table = read_table(path)
    refuse_unsaved_formulas(table, path.name)  # every cell of a table of counts is read
    columns = [column.strip() for column in table.header]
    frame = pd.DataFrame({at: column.to_numpy(zero_copy_only=False) for at, column in enumerate(table.cells)})
    return columns, frame, table.rows


def _once(indices: list[int], labels: list[str], path: Path, what: str, code: str) -> None:
    seen: dict[int, str] = {}
    for index, label in zip(indices, labels):
        if index in seen:
            raise SheetError(
                f"{path.name}: the {what} {label!r} names a category already named ({seen[index]!r}).",
                hint="name each category once.",
                code=code,
            )
        seen[index] = label


def read_agreement_table(path: Path, rule: Rule) -> TableInput:
    """A K x K table (rows the first coder, columns the second) as unit-pattern counts."""
    columns, frame, rows = _frame(path)
    if len(columns) < 2 or frame.empty:
        raise SheetError(
            f"{path.name} is not a K x K table: it needs a header of categories and one row per category.",
            hint="first row: a corner cell, then the categories; each next row: a category, then its counts.",
            code="table-shape",
        )
    column_codes = [_category(label, rule, path, "column", "table-label") for label in columns[1:]]
    _once(column_codes, columns[1:], path, "column", "table-label")
    row_labels = [str(label) for label in frame[0].fillna("")]
    row_codes = [_category(label, rule, path, f"row {rows[at]}", "table-label") for at, label in enumerate(row_labels)]
    _once(row_codes, row_labels, path, "row", "table-label")
    cells = np.column_stack(
        [_counts(frame[at], path, rows, columns[at], "table-count") for at in range(1, len(columns))]
    )
    first, second = np.meshgrid(row_codes, column_codes, indexing="ij")
    patterns = np.column_stack([first.ravel(), second.ravel()]).astype(np.int64)
    units = cells.ravel().astype(np.int64)
    _check_total(units, [path])
    return TableInput("table", ("rows", "columns"), patterns, units, (_source(path, len(frame)),))


def read_category_counts(path: Path, rule: Rule) -> TableInput:
    """Subjects x categories counts (Fleiss 1971) as unit-pattern counts of pseudo-coders."""
    columns, frame, rows = _frame(path)
    ids = bool(columns) and spreadsheet_original(columns[0]) == UNIT_COLUMN
    category_columns = list(range(1 if ids else 0, len(columns)))
    if not category_columns or frame.empty:
        raise SheetError(
            f"{path.name} has no category columns or no subjects.",
            hint="one column per category of the rule (a first column `unit` may hold ids), one row per subject.",
            code="category-counts-shape",
        )
    labels = [columns[at] for at in category_columns]
    codes = [_category(label, rule, path, "column", "category-counts-label") for label in labels]
    _once(codes, labels, path, "column", "category-counts-label")
    counts = np.column_stack(
        [_counts(frame[at], path, rows, columns[at], "category-counts-count") for at in category_columns]
    )
    per_subject = counts.sum(axis=1)
    too_many = np.flatnonzero(per_subject > MAX_RATINGS_PER_SUBJECT)
    if len(too_many):
        at = int(too_many[0])
        raise SheetError(
            f"{path.name} row {rows[at]} counts {int(per_subject[at]):,} codes for one subject; irr-audit takes at "
            f"most {MAX_RATINGS_PER_SUBJECT:,} per subject.",
            hint="each cell is the number of coders who gave the subject that category.",
            code="category-counts-count",
        )
    width = max(int(per_subject.max()), 1)
    patterns = np.full((len(counts), width), -1, dtype=np.int64)
    order = np.argsort(codes)
    for subject, row in enumerate(counts):
        expanded = np.repeat(np.asarray(codes)[order], row[order])
        patterns[subject, : len(expanded)] = expanded
    units = np.ones(len(counts), dtype=np.int64)
    _check_total(units, [path])
    coders = tuple(f"rating {at + 1}" for at in range(width))
    return TableInput("category_counts", coders, patterns, units, (_source(path, len(frame)),))
