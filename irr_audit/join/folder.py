"""The folder `join` writes, and reading it back for `score DIR` and `report DIR`.

The folder holds views for people (joined.csv, missingness_log.csv, with text that
a spreadsheet would execute neutralised) and summary.json, which records where
the original sheets are and their sha256. Reading the folder back re-joins the
original sheets after checking they are unchanged, so nothing is lost to a
lossy round trip through CSV.

The folder is written as one run (irr_audit.io.runfolder): built beside its place and
swapped in whole, with a run record in summary.json (every other file's sha256 and
a run id) that reading it back checks first.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pandas as pd

from irr_audit._threads import thread_count
from irr_audit.errors import IrrAuditError, OutputError, UsageError
from irr_audit.io.display import listed
from irr_audit.io.files import resolved
from irr_audit.io.framecsv import frame_csv_text
from irr_audit.io.limits import DEFAULT_LIMITS, Limits, load_json
from irr_audit.io.outputs import jsonl_text, refuse_column_collisions, refuse_unsafe_outputs, render_json
from irr_audit.io.runfolder import (
    RUN_KEY,
    Mismatch,
    files_read,
    occupants,
    read_record,
    record_of,
    recorded_files,
    replace_folder,
    run_mismatches,
)
from irr_audit.io.sheets import ColumnChoice, Sheet, SheetOptions, read_sheet
from irr_audit.join.counts import counts_csv_text
from irr_audit.join.join import JoinResult
from irr_audit.rules.load import load_rule
from irr_audit.rules.model import Rule

SUMMARY = "summary.json"
JOINED = "joined.csv"
LOG = "missingness_log.csv"
LOG_JSONL = "missingness_log.jsonl"
COUNTS = "counts.csv"
RULE_COPY = "rule.yaml"


JOIN_FILES = (JOINED, LOG, LOG_JSONL, COUNTS, RULE_COPY, SUMMARY)


def write_join_dir(
    result: JoinResult,
    rule_bytes: bytes,
    out: Path,
    columns: ColumnChoice,
    sample: Path | None = None,
    sample_ids: list[str] | None = None,
    sample_report: dict[str, Any] | None = None,
    *,
    force: bool = False,
    inputs: Sequence[Path] = (),
) -> list[Path]:
    """Write the join's outputs as the whole of folder ``out``; returns the paths written.
    A join restricted to a sample (`join --sample`) records the sample's ids, so `score DIR`
    joins the same units. ``inputs`` are the other files the command read (the rule);
    the sheets and the sample folder are known from the result."""
    refuse_unsafe_outputs(files_read([*inputs, *(sheet.path for sheet in result.sheets), sample]), folders=[out])
    check_join_out(out, force)
    refuse_column_collisions(
        [
            ("comment_id", "the id column"),
            *((sheet.coder, f"the coder of sheet {sheet.name}") for sheet in result.sheets),
            ("fully_coded", "the fully_coded column"),
        ],
        JOINED,
    )
    counts = counts_csv_text(result)  # checks its columns too: before any file is written
    summary = join_summary(result, out, columns)
    if sample_ids is not None:
        summary["sample"] = {
            "folder": str(resolved(sample)) if sample else None,
            "ids": list(sample_ids),
            "report": sample_report or {},
        }

    def files() -> Iterator[tuple[str, bytes]]:  # one at a time: a million units' joined.csv is large
        yield JOINED, frame_csv_text(result.joined_frame()).encode("utf-8")
        yield LOG, frame_csv_text(result.log).encode("utf-8")
        yield LOG_JSONL, log_jsonl(result.log).encode("utf-8")
        yield RULE_COPY, rule_bytes
        yield COUNTS, counts.encode("utf-8")

    def with_run_record(digests: dict[str, str]) -> dict[str, bytes]:
        return {SUMMARY: render_json({**summary, RUN_KEY: record_of(digests)}).encode("utf-8")}

    return replace_folder(out, files(), with_run_record)


def check_join_out(out: Path, force: bool) -> list[str]:
    """Refuse an --out folder holding what no join wrote (unless ``force``: those files
    are then deleted with the folder, and listed in the return value). A folder is
    never deleted: join writes none."""
    found = occupants(out, previous_join_files(out))
    if found.folders:
        raise OutputError(
            f"--out {out} holds the folder {listed(found.folders)}, which join did not write; join replaces "
            "its output folder as a whole and never deletes a folder it did not write.",
            hint="move the folder out, or choose another --out folder.",
            code="output-folder-not-ours",
        )
    strays = [f"{name} (changed since join wrote it)" for name in found.changed] + found.foreign
    if strays and not force:
        raise OutputError(
            f"--out {out} holds {len(strays)} file{'s' if len(strays) != 1 else ''} join did not write: "
            f"{listed(strays)}.",
            hint="move the files out or choose another --out folder; --force replaces the folder and deletes them.",
            code="output-folder-not-ours",
        )
    return found.files


def previous_join_files(out: Path) -> dict[str, str | None]:
    """The files a previous join wrote into ``out``: name -> sha256 from its run record;
    for a summary written before run records, join's file names (whatever their bytes)."""
    summary = read_record(out / SUMMARY)
    files = recorded_files(summary)
    if files is not None:
        return {**files, SUMMARY: None}
    if isinstance(summary, dict) and "sheets" in summary and "rule" in summary:
        return dict.fromkeys(JOIN_FILES)
    return {}


def log_jsonl(log: pd.DataFrame) -> str:
    """The missingness log for machines: one JSON object per row, every value verbatim."""
    columns = {name: log[name].tolist() for name in log.columns}
    columns["row"] = [None if row is pd.NA else int(row) for row in columns["row"]]
    return jsonl_text((dict(zip(columns, values)) for values in zip(*columns.values())), compact=True)


def join_summary(result: JoinResult, out: Path, columns: ColumnChoice) -> dict[str, Any]:
    rule = result.rule
    return {
        "rule": {"id": rule.id, "version": rule.version, "scale": rule.scale.value, "digest": rule.digest},
        "coders": list(result.coders),
        "sheets": [_sheet_record(sheet, out) for sheet in result.sheets],
        "columns": {"id_column": columns.id_column, "code_column": columns.code_column, "worksheet": columns.worksheet},
        **result.summary(),
        "summary": result.summary_line(),
        "warnings": list(result.warnings),
    }


def _sheet_record(sheet: Sheet, out: Path) -> dict[str, Any]:
    absolute = resolved(sheet.path)
    return {
        "name": sheet.name,
        "coder": sheet.coder,
        "sha256": sheet.sha256,
        "path": str(absolute),
        "relative_path": os.path.relpath(absolute, resolved(out)),
        "rows": sheet.row_count,
        "empty_rows": sheet.empty_rows,
    }


def is_join_dir(path: Path) -> bool:
    return path.is_dir() and (path / SUMMARY).is_file()


def read_join_dir(folder: Path, limits: Limits = DEFAULT_LIMITS) -> tuple[Rule, list[Sheet]]:
    """The rule and the original sheets behind a join folder, checked unchanged."""
    try:
        summary = load_json((folder / SUMMARY).read_bytes(), f"{folder / SUMMARY}", own_file=True)
        records = _sheet_records(summary["sheets"])
        columns = SheetOptions(**summary.get("columns", {}), limits=limits)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(
            f"{folder / SUMMARY} is not a join summary ({type(exc).__name__}).",
            hint="run irr-audit join again to recreate the folder.",
            code="joindir-invalid",
        ) from None
    check_one_run(folder, summary)
    rule = load_rule(folder / RULE_COPY, limits)
    with ThreadPoolExecutor(max_workers=thread_count()) as pool:  # as read_sheets: one sheet per core at a time
        return rule, list(pool.map(lambda record: _reread(folder, record, columns), records))


def check_one_run(folder: Path, summary: Any) -> None:
    """Refuse a join folder whose files are not all those of the run its summary records."""
    files = recorded_files(summary)
    if files is None:
        raise UsageError(
            f"{folder / SUMMARY} has no run record: an older irr-audit wrote this folder, so it cannot be "
            "shown to hold the files of one join.",
            hint=f"run irr-audit join again with --out {folder}; it replaces the folder as a whole.",
            code="joindir-no-run-record",
        )
    unlisted = [
        Mismatch(name, "is not in the run record") for name in JOIN_FILES if name != SUMMARY and name not in files
    ]
    mismatches = unlisted + run_mismatches(folder, files)
    if mismatches:
        first, more = mismatches[0], len(mismatches) - 1
        others = f" (and {more} more file{'s' if more != 1 else ''})" if more else ""
        raise UsageError(
            f"{folder} does not hold one join run: {first.file} {first.detail}{others}; {SUMMARY} records "
            f"run {summary[RUN_KEY]['id'][:12]}.",
            hint=f"run irr-audit join again with --out {folder} to write the folder as one run.",
            code="joindir-not-one-run",
        )


def read_join_sample_report(folder: Path) -> dict[str, Any] | None:
    """What the report shows of the sample a join folder was restricted to, or None."""
    sample = load_json((folder / SUMMARY).read_bytes(), f"{folder / SUMMARY}", own_file=True).get("sample")
    return None if not sample else sample.get("report") or None


def read_join_sample_ids(folder: Path) -> list[str] | None:
    """The sample ids a join folder was restricted to (`join --sample`), or None."""
    try:
        sample = load_json((folder / SUMMARY).read_bytes(), f"{folder / SUMMARY}", own_file=True).get("sample")
        return None if sample is None else [str(comment_id) for comment_id in sample["ids"]]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise UsageError(
            f"{folder / SUMMARY} is not a join summary ({type(exc).__name__}).",
            hint="run irr-audit join again to recreate the folder.",
            code="joindir-invalid",
        ) from None


def _sheet_records(records: Any) -> list[dict[str, str]]:
    """The summary's sheet records, each with the text fields _reread uses (TypeError if not)."""
    fields = ("name", "path", "relative_path", "sha256")
    if not isinstance(records, list) or not all(
        isinstance(record, dict) and all(isinstance(record.get(field), str) for field in fields) for record in records
    ):
        raise TypeError("a sheet record lacks its name, paths or sha256")
    return records


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
