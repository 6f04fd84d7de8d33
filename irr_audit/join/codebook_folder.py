"""The folder `join --codebook` writes, and reading it back for `score DIR` and `report DIR`
(docs/codebook_audit.md, "The join folder of a codebook").

    summary.json              the run: the codebook (name, version, digest, its rules), the
                              sheets with their sha256, each variable's units and cells, the
                              log's rows by variable and reason, and the run record
    codebook.yaml             the codebook file as used
    rules/<id>/v<N>.yaml      each rule file as used
    joined/<id>.csv           one table per variable: one row per unit, a column per coder
    missingness_log.csv       the one log of every variable, its first column `variable`
    missingness_log.jsonl     the same, every value verbatim
    counts.csv                unit-pattern counts, its first column `variable`

As a single rule's folder, it is written as one run and read back by re-joining the
original sheets, checked unchanged.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from irr_audit.errors import IrrAuditError, UsageError
from irr_audit.io.files import resolved
from irr_audit.io.framecsv import frame_csv_text
from irr_audit.io.limits import DEFAULT_LIMITS, Limits
from irr_audit.io.outputs import refuse_column_collisions, refuse_unsafe_outputs, render_json
from irr_audit.io.records import RecordKind, read_checked_record
from irr_audit.io.runfolder import (
    JOIN_RECORD,
    RUN_KEY,
    Mismatch,
    Replacement,
    files_read,
    read_record,
    record_of,
    recorded_files,
    replace_folder,
    run_mismatches,
)
from irr_audit.io.sheets import ColumnChoice, Sheet, SheetOptions, recorded_columns
from irr_audit.join.counts import variable_counts_csv_text
from irr_audit.join.folder import LOG, LOG_JSONL, SUMMARY, check_join_out, log_jsonl, sheet_location
from irr_audit.join.variables import CodebookJoin
from irr_audit.rules.codebook import Codebook, load_codebook

CODEBOOK_COPY = "codebook.yaml"
RULES_COPY = "rules"
JOINED_FOLDER = "joined"
COUNTS = "counts.csv"
CODEBOOK_KEY = "codebook"


def codebook_record(codebook: Codebook) -> dict[str, Any]:
    """What an output records of a codebook: its name, version, digest and each rule's."""
    return {
        "name": codebook.name,
        "version": codebook.version,
        "digest": codebook.digest,
        "rules": [
            {
                "id": rule.id,
                "version": rule.version,
                "scale": rule.scale.value,
                "digest": rule.digest,
                "applies_when": (
                    {"rule": rule.applies_when.rule, "codes": list(rule.applies_when.codes)}
                    if rule.applies_when is not None
                    else None
                ),
            }
            for rule in codebook.rules
        ],
    }


def rule_copy(rule_id: str, version: int) -> str:
    return f"{RULES_COPY}/{rule_id}/v{version}.yaml"


def write_codebook_join_dir(
    codebook: Codebook,
    joined: CodebookJoin,
    summary_line: str,
    out: Path,
    columns: ColumnChoice,
    *,
    force: bool = False,
    inputs: Sequence[Path] = (),
    sample: Path | None = None,
    sample_ids: Sequence[str] | None = None,
) -> Replacement:
    """Write a codebook's join as the whole of folder ``out`` (one run, as a rule's join folder).
    A join restricted to a sample (`join --codebook --sample`) records the sample's ids."""
    variables = joined.variables
    sheets = next(iter(variables.values())).full.sheets
    refuse_unsafe_outputs(files_read([*inputs, *(sheet.path for sheet in sheets), sample]), folders=[out])
    removed = check_join_out(out, force)
    refuse_column_collisions(
        [
            ("comment_id", "the id column"),
            *((sheet.coder, f"the coder of sheet {sheet.name}") for sheet in sheets),
            ("fully_coded", "the fully_coded column"),
        ],
        "joined/<variable>.csv",
    )
    counts = variable_counts_csv_text({rule_id: variable.join for rule_id, variable in variables.items()})
    summary = {
        CODEBOOK_KEY: codebook_record(codebook),
        "coders": [sheet.coder for sheet in sheets],
        "sheets": [sheet_location(sheet, out) for sheet in sheets],
        "columns": {"id_column": columns.id_column, "worksheet": columns.worksheet, "delimiter": columns.delimiter},
        "variables": {
            rule_id: {
                **variable.join.summary(),
                "summary": variable.join.summary_line(),
                "cells": variable.cell_counts(),
                "log_rows": variable.log_counts(),
            }
            for rule_id, variable in variables.items()
        },
        "summary": summary_line,
        "warnings": list(joined.warnings),
    }
    if sample_ids is not None:
        summary["sample"] = {
            "folder": str(resolved(sample)) if sample else None,
            "ids": list(sample_ids),
            "report": joined.sample or {},
        }

    def files() -> Iterator[tuple[str, bytes]]:
        yield CODEBOOK_COPY, codebook.source
        for rule in codebook.rules:
            yield rule_copy(rule.id, rule.version), rule.source
        for rule_id, variable in variables.items():
            yield f"{JOINED_FOLDER}/{rule_id}.csv", frame_csv_text(variable.join.joined_frame()).encode("utf-8")
        yield LOG, frame_csv_text(joined.log).encode("utf-8")
        yield LOG_JSONL, log_jsonl(joined.log).encode("utf-8")
        yield COUNTS, counts.encode("utf-8")

    def with_run_record(digests: dict[str, str]) -> dict[str, bytes]:
        return {SUMMARY: render_json({**summary, RUN_KEY: record_of(digests)}).encode("utf-8")}

    return Replacement(replace_folder(out, files(), with_run_record), removed)


def is_codebook_join_dir(path: Path) -> bool:
    """A folder `join --codebook` wrote: its summary.json names a codebook. A path the system
    cannot look up is none: the command that reads it names it (irr_audit.io.files.check_exist)."""
    try:
        if not (path.is_dir() and (path / SUMMARY).is_file()):
            return False
    except OSError:
        return False
    summary = read_record(path / SUMMARY)
    return isinstance(summary, dict) and CODEBOOK_KEY in summary


def _summary_problems(summary: Any) -> list[str]:
    if not isinstance(summary, dict):
        return ["it is not a JSON object"]
    problems = []
    codebook = summary.get(CODEBOOK_KEY)
    if not (isinstance(codebook, dict) and isinstance(codebook.get("digest"), str)):
        problems.append("`codebook` is not an object with a digest")
    sheets = summary.get("sheets")
    if not (isinstance(sheets, list) and len(sheets) >= 2):
        problems.append("`sheets` is not a list of two or more sheets")
    else:
        for at, sheet in enumerate(sheets):
            keys = ("name", "sha256", "path", "relative_path")
            if not (isinstance(sheet, dict) and all(isinstance(sheet.get(key), str) for key in keys)):
                problems.append(f"`sheets[{at}]` lacks one of {', '.join(keys)}")
    if not isinstance(summary.get("columns"), dict):
        problems.append("`columns` is not an object")
    if recorded_files(summary) is None:
        problems.append(f"`{RUN_KEY}` is not a run record")
    return problems


CODEBOOK_SUMMARY = RecordKind(
    "a codebook join summary as irr-audit join --codebook writes it",
    "join summary",
    "joindir",
    "run irr-audit join --codebook again to recreate the folder.",
    _summary_problems,
)


@dataclass(frozen=True)
class CodebookJoinDir:
    """A codebook's join folder read back: the codebook it kept, the sheets' paths (to be read
    again and checked against ``sha256``), and how they were read."""

    folder: Path
    codebook: Codebook
    sheet_paths: tuple[Path, ...]
    sha256: tuple[str, ...]
    columns: ColumnChoice
    sample_ids: list[str] | None = None
    sample_folder: Path | None = None  # where the sample was when it was joined
    sample_report: dict[str, Any] | None = None


def read_codebook_join_dir(folder: Path, limits: Limits = DEFAULT_LIMITS) -> CodebookJoinDir:
    """The summary checked, then that the folder is one run, then the codebook it kept."""
    summary = read_checked_record(folder / SUMMARY, CODEBOOK_SUMMARY, limits)
    files = recorded_files(summary) or {}
    wanted = [SUMMARY, CODEBOOK_COPY, LOG, LOG_JSONL, COUNTS]
    mismatches = [Mismatch(name, "is not in the run record") for name in wanted[1:] if name not in files]
    mismatches += run_mismatches(folder, files)
    if mismatches:
        first, more = mismatches[0], len(mismatches) - 1
        raise UsageError(
            f"{folder} does not hold one join run: {first.file} {first.detail}"
            + (f" (and {more} more)" if more else "")
            + f"; {JOIN_RECORD} records run {summary[RUN_KEY]['id'][:12]}.",
            hint=f"run irr-audit join --codebook again with --out {folder} to write the folder as one run.",
            code="joindir-not-one-run",
        )
    codebook = load_codebook(folder / CODEBOOK_COPY, rules_dir=folder / RULES_COPY, limits=limits)
    paths = []
    for record in summary["sheets"]:
        candidates = [folder / record["relative_path"], Path(record["path"])]
        found = next((path for path in candidates if path.is_file()), None)
        if found is None:
            raise IrrAuditError(
                f"sheet {record['name']} of the join in {folder} is no longer at {record['path']}.",
                hint="put the sheet back, or run irr-audit join --codebook again with the sheets' new paths.",
                code="joindir-sheet-missing",
            )
        paths.append(found)
    columns = recorded_columns(summary["columns"])
    kept = CodebookJoinDir(
        folder, codebook, tuple(paths), tuple(record["sha256"] for record in summary["sheets"]), columns
    )
    sample = summary.get("sample")
    if not (isinstance(sample, dict) and isinstance(sample.get("ids"), list)):
        return kept
    where = sample.get("folder")
    return dataclasses.replace(
        kept,
        sample_ids=[str(unit) for unit in sample["ids"]],
        sample_folder=Path(where) if isinstance(where, str) else None,
        sample_report=sample.get("report") or None,
    )


def check_unchanged(joined: CodebookJoinDir, sheets: Sequence[Sheet]) -> None:
    """Each sheet read again has the bytes it was joined with."""
    for path, sha256, sheet in zip(joined.sheet_paths, joined.sha256, sheets):
        check_sheet_sha256(joined, path, sheet.sha256, sha256)


def check_sheet_sha256(joined: CodebookJoinDir, path: Path, now: str, then: str) -> None:
    """A sheet of the join whose bytes now (sha256 ``now``) are not those it was joined with (``then``) is refused."""
    if now != then:
        raise IrrAuditError(
            f"sheet {path} changed since it was joined into {joined.folder} "
            f"(sha256 {now[:12]}..., was {then[:12]}...).",
            hint="run irr-audit join --codebook again to audit the sheet as it is now.",
            code="joindir-sheet-changed",
        )


def sheet_options(joined: CodebookJoinDir, limits: Limits) -> SheetOptions:
    columns = joined.columns
    return SheetOptions(columns.id_column, None, columns.worksheet, columns.delimiter, limits=limits)
