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
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from irr_audit._threads import Workers, thread_count
from irr_audit.errors import IrrAuditError, UsageError
from irr_audit.io.files import resolved
from irr_audit.io.limits import DEFAULT_LIMITS, Limits
from irr_audit.io.outputs import jsonl_text, refuse_column_collisions, refuse_unsafe_outputs, render_json
from irr_audit.io.records import RecordKind, join_record_problems, read_checked_record
from irr_audit.io.runfolder import (
    JOIN_RECORD,
    RUN_KEY,
    FileData,
    Mismatch,
    Replacement,
    files_read,
    occupants,
    read_record,
    record_of,
    recorded_files,
    refuse_strays,
    replace_folder,
    run_mismatches,
)
from irr_audit.io.sheets import ColumnChoice, Sheet, SheetOptions, read_sheet, recorded_columns
from irr_audit.join.join import JoinResult
from irr_audit.join.writers import LogLines, counts_csv_text, joined_csv_chunks, json_lines
from irr_audit.rules.load import load_rule
from irr_audit.rules.model import Rule
from irr_audit.rules.runaliases import with_run_aliases

if TYPE_CHECKING:
    import pandas as pd

SUMMARY = JOIN_RECORD
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
    sample_ledger_sha256: str | None = None,
    *,
    force: bool = False,
    inputs: Sequence[Path] = (),
) -> Replacement:
    """Write the join's outputs as the whole of folder ``out``; returns the paths written and
    the files of the old folder deleted (with ``force``). A join restricted to a sample
    (`join --sample`) records the sample's ids, so `score DIR` joins the same units.
    ``inputs`` are the other files the command read (the rule); the sheets and the sample
    folder are known from the result."""
    refuse_unsafe_outputs(files_read([*inputs, *(sheet.path for sheet in result.sheets), sample]), folders=[out])
    removed = check_join_out(out, force)
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
        if sample_ledger_sha256:  # which sample this was: freeze refuses another one drawn into the folder
            summary["sample"]["ledger_sha256"] = sample_ledger_sha256

    def with_run_record(digests: dict[str, str]) -> dict[str, bytes]:
        return {SUMMARY: render_json({**summary, RUN_KEY: record_of(digests)}).encode("utf-8")}

    # the large files in chunks (ten million units' joined.csv is 300 MB), written side by side,
    # their chunks made on one pool
    with Workers(max_workers=thread_count()) as makers:

        def files() -> Iterator[tuple[str, FileData]]:
            yield JOINED, joined_csv_chunks(result, makers=makers)
            log = LogLines(result, makers)
            yield LOG, log.csv_chunks()
            yield LOG_JSONL, log.jsonl_chunks()
            yield RULE_COPY, rule_bytes
            yield COUNTS, counts.encode("utf-8")

        return Replacement(replace_folder(out, files(), with_run_record), removed)


def check_join_out(out: Path, force: bool) -> list[str]:
    """Refuse an --out folder holding what no join wrote (unless ``force``: those files
    are then deleted with the folder, and listed in the return value). A folder is
    never deleted: join writes none."""
    found = occupants(out, previous_join_files(out))
    return refuse_strays(out, found, "join", force)


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
    """The missingness log for machines: one JSON object per row, every value verbatim (a
    codebook's log; a rule's is written from the join, :class:`LogLines`). Made column-wise
    when every column is text or whole numbers, else row by row."""
    columns = {name: _arrow_column(log[name]) for name in log.columns}
    known = {name: column for name, column in columns.items() if column is not None}
    if len(known) < len(columns) or "row" not in known or not pa.types.is_integer(known["row"].type):
        return log_jsonl_rows(log)
    return b"".join(json_lines(known)).decode("utf-8")


def log_jsonl_rows(log: pd.DataFrame) -> str:
    """:func:`log_jsonl`, row by row."""
    columns = {name: log[name].tolist() for name in log.columns}
    columns["row"] = [int(row) if isinstance(row, int) else None for row in columns["row"]]  # pd.NA: null
    return jsonl_text((dict(zip(columns, values)) for values in zip(*columns.values())), compact=True)


def _arrow_column(values: pd.Series) -> pa.Array | None:
    """A log column as pyarrow whole numbers or text (a missing value, None or NaN, as null), or
    None for anything else (which json writes otherwise, or refuses)."""
    try:
        if values.dtype.kind in "iu":  # numpy's integers and pandas' Int64
            return pa.array(values, type=pa.int64())
        if values.dtype.kind == "O":  # objects and pandas' strings
            return pa.array(values.to_numpy(dtype=object), type=pa.string(), from_pandas=True)  # NaN: null
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    return None


def join_summary(result: JoinResult, out: Path, columns: ColumnChoice) -> dict[str, Any]:
    rule = result.rule
    return {
        "rule": {"id": rule.id, "version": rule.version, "scale": rule.scale.value, "digest": rule.digest},
        "coders": list(result.coders),
        "sheets": [_sheet_record(sheet, out) for sheet in result.sheets],
        "columns": {
            "id_column": columns.id_column,
            "code_column": columns.code_column,
            "worksheet": columns.worksheet,
            **({"delimiter": columns.delimiter} if columns.delimiter is not None else {}),
        },
        **result.summary(),
        "summary": result.summary_line(),
        "warnings": list(result.warnings),
        **({"run_aliases": dict(rule.run_aliases)} if rule.run_aliases else {}),
    }


def sheet_location(sheet: Sheet, out: Path) -> dict[str, Any]:
    """A joined sheet as a run record keeps it: name, coder, sha256, and its path, absolute and
    relative to the output folder (so that a moved pair of folders still finds it)."""
    absolute = resolved(sheet.path)
    return {
        "name": sheet.name,
        "coder": sheet.coder,
        "sha256": sheet.sha256,
        "path": str(absolute),
        "relative_path": os.path.relpath(absolute, resolved(out)),
    }


def _sheet_record(sheet: Sheet, out: Path) -> dict[str, Any]:
    return {**sheet_location(sheet, out), "rows": sheet.row_count, "empty_rows": sheet.empty_rows}


def is_join_dir(path: Path) -> bool:
    return path.is_dir() and (path / SUMMARY).is_file()


def refuse_sheet_options(folder: Path, options: dict[str, str | None]) -> None:
    """A join folder or a bundle records how its sheets were read: an option that reads sheets
    (given as {"--id-column": value, ...}) is refused, not silently passed over."""
    for option, value in options.items():
        if value is not None:
            raise UsageError(
                f"{option} reads sheets; {folder} keeps how its sheets were read (the options of its join).",
                hint=f"leave out {option}, or run join again with it and use that folder.",
                code="usage-join-dir-option",
            )


@dataclass(frozen=True)
class JoinDir:
    """A join folder read back: the rule it kept, the original sheets (checked unchanged),
    how they were read, and the sample the join was restricted to (`join --sample`)."""

    folder: Path
    rule: Rule
    sheets: list[Sheet]
    columns: ColumnChoice
    sample_ids: list[str] | None = None
    sample_folder: Path | None = None  # where the sample was when it was joined
    sample_report: dict[str, Any] | None = None  # what a report shows of the sample
    sample_ledger_sha256: str | None = None  # its ledger's digest (None: a join written before it was recorded)


def read_join_dir(folder: Path, limits: Limits = DEFAULT_LIMITS) -> JoinDir:
    """The join in ``folder``: its summary read once and checked (its structure, then that the
    folder holds one run), then the rule and the original sheets, checked unchanged."""
    summary = read_join_summary(folder, limits)
    if "codebook" in summary:  # join --codebook wrote it (irr_audit.join.codebook_folder)
        raise UsageError(
            f"{folder} is the join of a codebook, with one table per variable, not of one rule.",
            hint="irr-audit score DIR, report DIR and freeze DIR (without --rule) take it as a whole, every variable.",
            code="usage-codebook-folder",
        )
    rule_path = folder / RULE_COPY
    # The rule is read once: parsed here, and its bytes' digest checked with the run record.
    rule = load_rule(rule_path, limits) if rule_path.is_file() and not rule_path.is_symlink() else None
    check_one_run(folder, summary, {RULE_COPY: rule.digest.removeprefix("sha256:")} if rule else None)
    rule = with_run_aliases(rule or load_rule(rule_path, limits), summary.get("run_aliases"))
    columns = recorded_columns(summary.get("columns"))
    options = SheetOptions(columns.id_column, columns.code_column, columns.worksheet, columns.delimiter, limits=limits)
    with Workers(max_workers=thread_count()) as pool:  # as read_sheets: one sheet per core at a time
        sheets = list(pool.map(lambda record: _reread(folder, record, options), summary["sheets"]))
    sample = summary.get("sample")
    if not sample:
        return JoinDir(folder, rule, sheets, columns)
    return JoinDir(
        folder,
        rule,
        sheets,
        columns,
        sample_ids=list(sample["ids"]),
        sample_folder=Path(sample["folder"]) if sample.get("folder") else None,
        sample_report=sample.get("report") or None,
        sample_ledger_sha256=sample.get("ledger_sha256"),
    )


JOIN_SUMMARY = RecordKind(
    "a join summary as irr-audit join writes it",
    "join summary",
    "joindir",
    "run irr-audit join again to recreate the folder.",
    join_record_problems,
)


def read_join_summary(folder: Path, limits: Limits = DEFAULT_LIMITS) -> dict[str, Any]:
    """A join folder's summary.json, read within the limits and checked for structure."""
    return read_checked_record(folder / SUMMARY, JOIN_SUMMARY, limits)


def check_one_run(folder: Path, summary: Any, read: dict[str, str] | None = None) -> None:
    """Refuse a join folder whose files are not all those of the run its summary records
    (``read``: the sha256 of files already read)."""
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
    mismatches = unlisted + run_mismatches(folder, files, read)
    if mismatches:
        first, more = mismatches[0], len(mismatches) - 1
        others = f" (and {more} more file{'s' if more != 1 else ''})" if more else ""
        raise UsageError(
            f"{folder} does not hold one join run: {first.file} {first.detail}{others}; {SUMMARY} records "
            f"run {summary[RUN_KEY]['id'][:12]}.",
            hint=f"run irr-audit join again with --out {folder} to write the folder as one run.",
            code="joindir-not-one-run",
        )


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
