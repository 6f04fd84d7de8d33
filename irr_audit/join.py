"""Classify every (unit, coder) cell and join the sheets on comment ID.

Every input row ends up exactly once: as the row behind a cell (valid, or in the
log with its reason), or in the log as a duplicate, a conflict or a row without
an id. Every unit ends up exactly once: fully coded, or with at least one row in
the missingness log. Missing is never a disagreement.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from irr_audit.errors import SheetError, UsageError
from irr_audit.idcheck import suspicious_id_warnings
from irr_audit.missingness import LOG_COLUMNS, Reason, count_phrase
from irr_audit.rules import CodeStatus, Rule
from irr_audit.sheets import Sheet, parse_rule_version

STATUSES = tuple(CodeStatus)  # a cell's status is stored as its index in this tuple
STATUS_INDEX = {status: index for index, status in enumerate(STATUSES)}
VALID = STATUS_INDEX[CodeStatus.VALID]
ABSENT = STATUS_INDEX[CodeStatus.ABSENT]
CONFLICT = STATUS_INDEX[CodeStatus.CONFLICT]
RESERVED_COLUMNS = ("comment_id", "fully_coded")
NOT_IN_SAMPLE = "comment id is not in the sample's ledger"


@dataclass(frozen=True)
class JoinResult:
    """Sheets joined under a rule.

    ``codes[u, c]`` is the category index (into ``rule.categories``) of coder c's
    code for unit u, or -1 when that cell is not valid; ``status[u, c]`` indexes
    ``STATUSES``.
    """

    rule: Rule
    sheets: tuple[Sheet, ...]
    unit_ids: tuple[str, ...]
    codes: np.ndarray
    status: np.ndarray
    log: pd.DataFrame
    warnings: tuple[str, ...] = ()

    @property
    def coders(self) -> tuple[str, ...]:
        return tuple(sheet.coder for sheet in self.sheets)

    @cached_property
    def fully_coded(self) -> np.ndarray:
        return (self.status == VALID).all(axis=1)

    def joined_frame(self) -> pd.DataFrame:
        """One row per unit, one column per coder (the code, or empty), and fully_coded."""
        categories = np.array([*self.rule.categories, ""], dtype=object)
        frame = pd.DataFrame({"comment_id": list(self.unit_ids)})
        for column, coder in enumerate(self.coders):
            frame[coder] = categories[self.codes[:, column]]  # -1 picks the trailing ""
        frame["fully_coded"] = self.fully_coded
        return frame

    def texts_for(self, unit_ids: list[str]) -> dict[str, str]:
        """The comment text of these units, from the first sheet that has it."""
        wanted = set(unit_ids)
        texts: dict[str, str] = {}
        for sheet in self.sheets:
            frame = sheet.frame
            ids = frame["comment_id"].str.strip()
            found = frame[ids.isin(wanted - set(texts)).to_numpy() & frame["text"].str.strip().ne("").to_numpy()]
            for comment_id, text in zip(found["comment_id"].str.strip(), found["text"]):
                texts.setdefault(comment_id, text)
        return texts

    def summary(self) -> dict[str, Any]:
        total = len(self.unit_ids)
        fully = int(self.fully_coded.sum())
        reasons = self.log["reason"].value_counts()
        return {
            "units": {"total": total, "fully_coded": fully, "missing": total - fully},
            "log_rows": {reason.value: int(reasons.get(reason.value, 0)) for reason in Reason
                         if reasons.get(reason.value, 0)},
            "cells": {
                status.value: int((self.status == index).sum()) for index, status in enumerate(STATUSES)
            },
        }

    def summary_line(self) -> str:
        summary = self.summary()
        units = summary["units"]
        line = (
            f"{units['total']} units from {len(self.coders)} coders: "
            f"{units['fully_coded']} fully coded, {units['missing']} in the missingness log"
        )
        reasons = count_phrase(summary["log_rows"])
        return line + (f" ({reasons})." if reasons else ".")


def join_sheets(
    sheets: list[Sheet] | tuple[Sheet, ...], rule: Rule, sample_ids: list[str] | None = None
) -> JoinResult:
    """Join two or more sheets under ``rule``. Pure.

    With ``sample_ids`` (the ledger of `irr-audit sample`) the units are exactly
    those ids: a sheet row for any other id is logged as not_in_sample, and a
    sampled unit that a sheet lacks is absent there.
    """
    check_sheets(sheets, rule)
    per_sheet = [_cells_of_sheet(sheet, rule) for sheet in sheets]
    if sample_ids is None:
        unit_ids = pd.unique(pd.concat([cells["comment_id"] for cells, _ in per_sheet], ignore_index=True))
    else:
        unit_ids = pd.unique(pd.Series([text.strip() for text in sample_ids], dtype=object))
        per_sheet = [_outside_sample(sheet, cells, log, unit_ids) for sheet, (cells, log) in zip(sheets, per_sheet)]
    unit_index = pd.Index(unit_ids)
    codes = np.full((len(unit_ids), len(sheets)), -1, dtype=np.int64)
    status = np.full((len(unit_ids), len(sheets)), ABSENT, dtype=np.int8)
    logs = []
    for column, (sheet, (cells, row_log)) in enumerate(zip(sheets, per_sheet)):
        at = unit_index.get_indexer(cells["comment_id"])
        status[at, column] = cells["status"].to_numpy()
        valid = cells["status"].to_numpy() == VALID
        codes[at[valid], column] = cells["category"].to_numpy()[valid]
        absent_ids = unit_ids[status[:, column] == ABSENT]
        logs.append(row_log)
        logs.append(_absent_log(sheet, absent_ids))
    log = pd.concat(logs, ignore_index=True)[list(LOG_COLUMNS)]
    warnings = [f"sheet {sheet.name}: {warning}" for sheet in sheets for warning in sheet.warnings]
    return JoinResult(
        rule=rule,
        sheets=tuple(sheets),
        unit_ids=tuple(unit_ids),
        codes=codes,
        status=status,
        log=log,
        warnings=(*warnings, *suspicious_id_warnings(pd.Series(unit_ids, dtype=object))),
    )


def check_sheets(sheets: list[Sheet] | tuple[Sheet, ...], rule: Rule) -> None:
    """Usage errors that make a join meaningless: fewer than two sheets, one coder
    twice, a sheet coded under another version of the rule."""
    if len(sheets) < 2:
        raise UsageError(
            f"agreement needs two or more coding sheets; got {len(sheets)}.",
            hint="pass every coder's sheet, e.g. irr-audit join alice.csv bob.csv --rule RULE --out DIR.",
            code="usage-one-sheet",
        )
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


def _check_rule_version(sheet: Sheet, rule: Rule) -> None:
    versions = sheet.frame["rule_version"].str.strip()
    for text, row in _first_rows(sheet.frame["row"][versions != ""], versions[versions != ""]):
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


def _first_rows(rows: pd.Series, values: pd.Series) -> list[tuple[str, int]]:
    """Each distinct value with the first row it is on, in row order."""
    first = rows.groupby(values.to_numpy(), sort=False).min()
    return sorted(zip(first.index, first.to_numpy()), key=lambda item: item[1])


def _cells_of_sheet(sheet: Sheet, rule: Rule) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One row per comment id of the sheet (its status and category) and the log
    of the sheet's rows that are not a valid code."""
    rows = pd.DataFrame(
        {
            "row": sheet.frame["row"].to_numpy(),
            "comment_id": sheet.frame["comment_id"].str.strip(),
            "raw_value": sheet.frame["code"],
        }
    )
    rows["status"], rows["category"] = _classify(rows["raw_value"], rule)
    has_id = rows["comment_id"] != ""
    logs = [_log(sheet, rows[~has_id], Reason.MISSING_ID, "row has no comment id")]
    rows = rows[has_id]

    repeated = rows["comment_id"].duplicated(keep=False)
    kinds_per_id = (
        (rows["status"].astype(np.int64) * (len(rule.categories) + 1) + rows["category"])
        .groupby(rows["comment_id"], sort=False)
        .transform("nunique")
    )
    conflicting = repeated & (kinds_per_id > 1)
    duplicate = repeated & ~conflicting & rows["comment_id"].duplicated(keep="first")
    logs.append(_conflict_log(sheet, rows[conflicting]))
    first_row = rows.groupby("comment_id", sort=False)["row"].transform("first")
    duplicates = rows[duplicate]
    logs.append(
        _log(
            sheet,
            duplicates,
            Reason.DUPLICATE,
            "repeats row " + first_row[duplicate].astype(str) + " with the same code; that row is used",
        )
    )

    cells = rows[~duplicate].drop_duplicates("comment_id", keep="first").copy()
    cells.loc[cells["comment_id"].isin(rows.loc[conflicting, "comment_id"]), "status"] = CONFLICT
    kept = cells[cells["status"] != CONFLICT]
    for status, reason, detail in (
        (CodeStatus.UNKNOWN, Reason.UNKNOWN, f"a missing code of {rule.label}: the coder could not tell"),
        (CodeStatus.BLANK, Reason.BLANK, ""),
        (CodeStatus.INVALID, Reason.INVALID, rule.describe_codes()),
    ):
        logs.append(_log(sheet, kept[kept["status"] == STATUS_INDEX[status]], reason, detail))
    log = pd.concat(logs, ignore_index=True).sort_values("row", kind="stable")
    return cells[["comment_id", "status", "category", "row", "raw_value"]], log


def _outside_sample(
    sheet: Sheet, cells: pd.DataFrame, log: pd.DataFrame, unit_ids: np.ndarray
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every row of an id outside the sample goes to the log as not_in_sample
    (a row already logged for another reason keeps that reason in its detail)."""
    inside = cells["comment_id"].isin(unit_ids)
    valid_outside = cells[~inside & (cells["status"] == VALID)]
    outside_log = log["comment_id"].ne("") & ~log["comment_id"].isin(unit_ids)
    log = log.copy()
    log.loc[outside_log, "detail"] = NOT_IN_SAMPLE + " (also " + log.loc[outside_log, "reason"] + ")"
    log.loc[outside_log, "reason"] = Reason.NOT_IN_SAMPLE.value
    moved = _log(sheet, valid_outside, Reason.NOT_IN_SAMPLE, NOT_IN_SAMPLE)
    return cells[inside], pd.concat([log, moved], ignore_index=True).sort_values("row", kind="stable")


def _classify(raw_values: pd.Series, rule: Rule) -> tuple[np.ndarray, np.ndarray]:
    """Classify each distinct raw value once, then spread the result to the rows."""
    positions, distinct = pd.factorize(raw_values)
    category_of = {code: index for index, code in enumerate(rule.categories)}
    status = np.empty(len(distinct), dtype=np.int8)
    category = np.full(len(distinct), -1, dtype=np.int64)
    for index, raw in enumerate(distinct):
        cell_status, code = rule.classify(raw)
        status[index] = STATUS_INDEX[cell_status]
        if code is not None:
            category[index] = category_of[code]
    return status[positions], category[positions]


def _log(sheet: Sheet, rows: pd.DataFrame, reason: Reason, detail: str | pd.Series) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "sheet": sheet.name,
            "coder": sheet.coder,
            "row": rows["row"].astype("Int64"),
            "comment_id": rows["comment_id"],
            "raw_value": rows["raw_value"],
            "reason": reason.value,
            "detail": detail,
        },
        columns=list(LOG_COLUMNS),
    )


def _conflict_log(sheet: Sheet, rows: pd.DataFrame) -> pd.DataFrame:
    if rows.empty:
        return _log(sheet, rows, Reason.CONFLICT, "")
    by_id = rows.groupby("comment_id", sort=False)
    listing = by_id["row"].transform(lambda numbers: ", ".join(map(str, numbers)))
    detail = "comment id is in rows " + listing + " of this sheet with different codes"
    return _log(sheet, rows, Reason.CONFLICT, detail)


def _absent_log(sheet: Sheet, absent_ids: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "sheet": sheet.name,
            "coder": sheet.coder,
            "row": pd.array([pd.NA] * len(absent_ids), dtype="Int64"),
            "comment_id": absent_ids,
            "raw_value": "",
            "reason": Reason.ABSENT.value,
            "detail": f"no row for this comment id in {sheet.name}",
        },
        columns=list(LOG_COLUMNS),
    )
