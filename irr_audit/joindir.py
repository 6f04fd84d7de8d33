"""The folder `join` writes, and reading it back for `score DIR` and `report DIR`.

The folder holds views for people (joined.csv, missingness_log.csv, with text that
a spreadsheet would execute neutralised) and summary.json, which records where
the original sheets are and their sha256. Reading the folder back re-joins the
original sheets after checking they are unchanged, so nothing is lost to a
lossy round trip through CSV.
"""

from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from irr_audit.counts import counts_csv_text
from irr_audit.errors import IrrAuditError, UsageError
from irr_audit.join import JoinResult
from irr_audit.outputs import (
    frame_csv_text,
    refuse_column_collisions,
    refuse_overwriting_inputs,
    write_bytes_atomic,
    write_text_atomic,
)
from irr_audit.report import render_json
from irr_audit.rules import Rule, load_rule
from irr_audit.sheets import ColumnChoice, Sheet, read_sheet

if TYPE_CHECKING:
    import pandas as pd

SUMMARY = "summary.json"
JOINED = "joined.csv"
LOG = "missingness_log.csv"
LOG_JSONL = "missingness_log.jsonl"
COUNTS = "counts.csv"
RULE_COPY = "rule.yaml"


def write_join_dir(result: JoinResult, rule_bytes: bytes, out: Path, columns: ColumnChoice,
                   sample: Path | None = None, sample_ids: list[str] | None = None,
                   sample_report: dict[str, Any] | None = None) -> list[Path]:
    """Write the join's outputs into ``out``; returns the paths written. A join restricted
    to a sample (`join --sample`) records the sample's ids, so `score DIR` joins the same units."""
    paths = [out / JOINED, out / LOG, out / LOG_JSONL, out / SUMMARY, out / RULE_COPY, out / COUNTS]
    refuse_overwriting_inputs(paths, [sheet.path for sheet in result.sheets])
    refuse_column_collisions([("comment_id", "the id column"),
                              *((sheet.coder, f"the coder of sheet {sheet.name}") for sheet in result.sheets),
                              ("fully_coded", "the fully_coded column")], JOINED)
    counts = counts_csv_text(result)  # checks its columns too: before any file is written
    joined = result.joined_frame()
    write_text_atomic(paths[0], frame_csv_text(joined))
    write_text_atomic(paths[1], frame_csv_text(result.log))
    summary = join_summary(result, out, columns)
    if sample_ids is not None:
        summary["sample"] = {"folder": str(sample.resolve()) if sample else None, "ids": list(sample_ids),
                             "report": sample_report or {}}
    write_text_atomic(paths[2], log_jsonl(result.log))
    write_text_atomic(paths[3], render_json(summary))
    write_bytes_atomic(paths[4], rule_bytes)
    write_text_atomic(paths[5], counts)
    return paths


def log_jsonl(log: pd.DataFrame) -> str:
    """The missingness log for machines: one JSON object per row, every value verbatim."""
    if log.empty:
        return ""
    text = log.to_json(orient="records", lines=True, force_ascii=False)
    return text if text.endswith("\n") else text + "\n"


def join_summary(result: JoinResult, out: Path, columns: ColumnChoice) -> dict[str, Any]:
    rule = result.rule
    return {
        "rule": {"id": rule.id, "version": rule.version, "scale": rule.scale.value, "digest": rule.digest},
        "coders": list(result.coders),
        "sheets": [_sheet_record(sheet, out) for sheet in result.sheets],
        "columns": {"id_column": columns.id_column, "code_column": columns.code_column,
                    "worksheet": columns.worksheet},
        **result.summary(),
        "summary": result.summary_line(),
        "warnings": list(result.warnings),
    }


def _sheet_record(sheet: Sheet, out: Path) -> dict[str, Any]:
    absolute = sheet.path.resolve()
    return {
        "name": sheet.name,
        "coder": sheet.coder,
        "sha256": sheet.sha256,
        "path": str(absolute),
        "relative_path": os.path.relpath(absolute, out.resolve()),
        "rows": sheet.row_count,
        "empty_rows": sheet.empty_rows,
    }


def is_join_dir(path: Path) -> bool:
    return path.is_dir() and (path / SUMMARY).is_file()


def read_join_dir(folder: Path) -> tuple[Rule, list[Sheet]]:
    """The rule and the original sheets behind a join folder, checked unchanged."""
    try:
        summary = json.loads((folder / SUMMARY).read_text(encoding="utf-8"))
        records = summary["sheets"]
        columns = ColumnChoice(**summary.get("columns", {}))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(
            f"{folder / SUMMARY} is not a join summary ({type(exc).__name__}).",
            hint="run irr-audit join again to recreate the folder.",
            code="joindir-invalid",
        ) from None
    rule = load_rule(folder / RULE_COPY)
    with ThreadPoolExecutor(max_workers=2) as pool:  # as read_sheets: two sheets parsed at a time
        return rule, list(pool.map(lambda record: _reread(folder, record, columns), records))


def read_join_sample_report(folder: Path) -> dict[str, Any] | None:
    """What the report shows of the sample a join folder was restricted to, or None."""
    sample = json.loads((folder / SUMMARY).read_text(encoding="utf-8")).get("sample")
    return None if not sample else sample.get("report") or None


def read_join_sample_ids(folder: Path) -> list[str] | None:
    """The sample ids a join folder was restricted to (`join --sample`), or None."""
    try:
        sample = json.loads((folder / SUMMARY).read_text(encoding="utf-8")).get("sample")
        return None if sample is None else [str(comment_id) for comment_id in sample["ids"]]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise UsageError(
            f"{folder / SUMMARY} is not a join summary ({type(exc).__name__}).",
            hint="run irr-audit join again to recreate the folder.",
            code="joindir-invalid",
        ) from None


def _reread(folder: Path, record: dict[str, Any], columns: ColumnChoice) -> Sheet:
    candidates = [folder / record["relative_path"], Path(record["path"])]
    found = next((path for path in candidates if path.is_file()), None)
    if found is None:
        raise IrrAuditError(
            f"sheet {record['name']} of the join in {folder} is no longer at {record['path']}.",
            hint="put the sheet back, or run irr-audit join again with the sheets' new paths.",
            code="joindir-sheet-missing",
        )
    sheet = read_sheet(found, columns)
    if sheet.sha256 != record["sha256"]:
        raise IrrAuditError(
            f"sheet {found} changed since it was joined into {folder} "
            f"(sha256 {sheet.sha256[:12]}..., was {record['sha256'][:12]}...).",
            hint="run irr-audit join again to audit the sheet as it is now.",
            code="joindir-sheet-changed",
        )
    return sheet
