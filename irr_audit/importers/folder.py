"""The folder `irr-audit import` writes, as one run (irr_audit.io.runfolder): one coding
sheet per annotator in sheets/, the import log (CSV for people, JSON Lines for scripts)
and import.json (the exports' sha256, the rule, the counts, and the run record).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from irr_audit.importers.build import LOG_COLUMNS, ImportResult
from irr_audit.importers.model import ImportOptions
from irr_audit.io.csvtables import table_csv_text
from irr_audit.io.files import resolved
from irr_audit.io.outputs import jsonl_text, refuse_unsafe_outputs, render_json
from irr_audit.io.runfolder import (
    IMPORT_RECORD,
    RUN_KEY,
    files_read,
    occupants,
    read_record,
    record_of,
    recorded_files,
    refuse_strays,
    replace_folder,
)

SHEETS = "sheets"
LOG = "import_log.csv"
LOG_JSONL = "import_log.jsonl"
SHEET_COLUMNS = ("comment_id", "code", "body", "note")


@dataclass(frozen=True)
class ExportFile:
    """One export file read: where, its sha256 and size (a bundle can carry the digest)."""

    path: Path
    sha256: str
    size: int


def sheet_csv(rows: Sequence[Any]) -> str:
    """A coding sheet as join reads it: comment_id, code, body (when the export had the
    text), note, and confidence for a model's labels."""
    with_text = any(row.text is not None for row in rows)
    with_confidence = any(row.confidence is not None for row in rows)
    header = ["comment_id", "code", *(["body"] if with_text else []), "note"]
    header += ["confidence"] if with_confidence else []
    lines = []
    for row in rows:
        cells = [row.comment_id, row.code, *([row.text or ""] if with_text else []), row.note]
        cells += [repr(row.confidence) if row.confidence is not None else ""] if with_confidence else []
        lines.append(cells)
    return table_csv_text(header, lines)


def log_csv(log: list[dict[str, Any]]) -> str:
    return table_csv_text(LOG_COLUMNS, [[_cell(row[column]) for column in LOG_COLUMNS] for row in log])


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return " | ".join(value)
    return str(value)


def log_jsonl(log: list[dict[str, Any]]) -> str:
    return jsonl_text(log)


def import_summary(
    result: ImportResult, exports: Sequence[ExportFile], options: ImportOptions, out: Path
) -> dict[str, Any]:
    rule = result.rule
    parsed = result.exports[0] if result.exports else None
    return {
        "format": parsed.format if parsed else None,
        "question": parsed.question if parsed else options.question,
        "id_field": options.id_field or "comment_id",
        "text_field": options.text_field,
        "rule": {"id": rule.id, "version": rule.version, "digest": rule.digest},
        "exports": [
            {
                "path": str(resolved(export.path)),
                "relative_path": os.path.relpath(resolved(export.path), resolved(out)),
                "sha256": export.sha256,
                "bytes": export.size,
                "records": parsed_export.records,
            }
            for export, parsed_export in zip(exports, result.exports)
        ],
        "coders": dict(result.coders),
        "sheets": {
            coder: {"file": f"{SHEETS}/{coder}.csv", "rows": len(rows)} for coder, rows in result.sheets.items()
        },
        "records": result.records,
        "annotations": len(result.log),
        "outcomes": dict(result.outcomes),
        "units": result.units(),
        "summary": result.summary_line(),
    }


def write_import_dir(
    result: ImportResult,
    exports: Sequence[ExportFile],
    options: ImportOptions,
    out: Path,
    inputs: Sequence[Path] = (),
    *,
    force: bool = False,
) -> list[Path]:
    """Write the import as the whole of folder ``out``; returns the paths written. A folder
    holding files no import wrote is refused unless ``force``; an output over an input, always."""
    refuse_unsafe_outputs(files_read([*inputs, *(export.path for export in exports)]), folders=[out])
    check_import_out(out, force)
    summary = import_summary(result, exports, options, out)

    def files() -> Iterator[tuple[str, bytes]]:
        for coder, rows in result.sheets.items():
            yield f"{SHEETS}/{coder}.csv", sheet_csv(rows).encode("utf-8")
        yield LOG, log_csv(result.log).encode("utf-8")
        yield LOG_JSONL, log_jsonl(result.log).encode("utf-8")

    def with_run_record(digests: dict[str, str]) -> dict[str, bytes]:
        return {IMPORT_RECORD: render_json({**summary, RUN_KEY: record_of(digests)}).encode("utf-8")}

    return replace_folder(out, files(), with_run_record)


def check_import_out(out: Path, force: bool) -> list[str]:
    """Refuse an --out folder holding what no import wrote (unless ``force``: those files are
    then deleted with the folder, and listed in the return value). A folder is never deleted."""
    previous = recorded_files(read_record(out / IMPORT_RECORD))
    claimed: dict[str, str | None] = {**(previous or {}), IMPORT_RECORD: None} if previous is not None else {}
    found = occupants(out, claimed)
    return refuse_strays(out, found, "import", force)
