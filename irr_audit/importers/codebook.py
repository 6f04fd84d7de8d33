"""`irr-audit import --codebook`: one export -> one wide coding sheet per annotator, with a
column per variable of the codebook (docs/codebooks.md, "Importing").

Each variable is the tool's question of the same name as its rule id: Label Studio's
``from_name`` (JSON, JSON-MIN, CSV), Argilla's question name, a model file's key. The export
is imported once per variable exactly as a single rule is (irr_audit.importers.build), and
the per-variable sheets are set side by side; the import log keeps every row of every
variable, with a ``variable`` column. Prodigy and doccano exports hold one unnamed label set
per task, so nothing in them says which variable a label answers: they are refused.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from irr_audit.errors import IrrAuditError, UsageError
from irr_audit.importers.build import LOG_COLUMNS, ImportResult, build_import
from irr_audit.importers.folder import LOG, LOG_JSONL, SHEETS, ExportFile, check_import_out
from irr_audit.importers.formats import format_named
from irr_audit.importers.label_studio import MIN_FIELDS
from irr_audit.importers.model import ImportOptions, ParsedExport
from irr_audit.importers.model_output import ANNOTATOR_KEYS
from irr_audit.io.csvtables import table_csv_text
from irr_audit.io.files import check_exist, check_name, read_bounded, resolved, same_file_key, shown_name
from irr_audit.io.limits import DEFAULT_LIMITS, Limits
from irr_audit.io.outputs import jsonl_text, refuse_unsafe_outputs, render_json
from irr_audit.io.runfolder import IMPORT_RECORD, RUN_KEY, files_read, record_of, replace_folder
from irr_audit.rules.codebook import Codebook

# The formats whose exports name the question a label answers.
NAMED_QUESTION_FORMATS = ("label-studio", "label-studio-min", "label-studio-csv", "argilla", "model")
CODEBOOK_LOG_COLUMNS = ("variable", *LOG_COLUMNS)
# Keys a format reads for itself: a variable of that name would be read from the wrong key.
FORMAT_KEYS = {
    "label-studio-min": MIN_FIELDS,
    "label-studio-csv": MIN_FIELDS,
    "model": (*ANNOTATOR_KEYS, "confidence"),
}


@dataclass(frozen=True)
class CodebookImport:
    """Per variable, the import as a single rule's; the wide sheets (coder -> rows of
    comment_id, one code per variable, text, note) and the log with a variable column."""

    codebook: Codebook
    variables: dict[str, ImportResult]
    sheets: dict[str, list[dict[str, str]]]
    log: list[dict[str, Any]]

    def summary_line(self) -> str:
        coded = sum(result.outcomes.get("coded", 0) for result in self.variables.values())
        units = {row["unit_id"] for row in self.log if row["unit_id"] is not None}
        return (
            f"{len(units)} units, {len(self.variables)} variables of {self.codebook.label}: {coded} codes in "
            f"{len(self.sheets)} sheet{'s' if len(self.sheets) != 1 else ''}; {len(self.log)} rows in the import log."
        )


def check_codebook_format(format_name: str, options: ImportOptions) -> None:
    """Refuse a format whose labels name no question, and --question (a variable's question is its rule id)."""
    chosen = format_named(format_name)
    if chosen.name not in NAMED_QUESTION_FORMATS:
        raise UsageError(
            f"a {chosen.name} export holds one label set per task, with no question name, so nothing says which "
            "variable of the codebook a label answers.",
            hint=f"import each variable's dataset with --rule RULE into its own folder, or export from a tool that "
            f"names its questions ({', '.join(NAMED_QUESTION_FORMATS)}).",
            code="import-codebook-format",
        )
    if options.question is not None:
        raise UsageError(
            "--question names one question; with --codebook each variable is the question named as its rule id.",
            hint="leave out --question, and name the tool's questions (from_name) after the rules' ids.",
            code="import-codebook-question",
        )


def build_codebook_import(
    exports: Sequence[tuple[bytes, str]],
    format_name: str,
    codebook: Codebook,
    options: ImportOptions | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> CodebookImport:
    """``exports`` as (bytes, name shown) -> every variable imported, side by side. Pure."""
    options = options or ImportOptions()
    check_codebook_format(format_name, options)
    chosen = format_named(format_name)
    taken = [rule.id for rule in codebook.rules if rule.id in FORMAT_KEYS.get(chosen.name, ())]
    if taken:
        raise UsageError(
            f"the variable {taken[0]} of {codebook.label} has the name of a key a {chosen.name} export uses for "
            "itself, so its labels cannot be told apart from that key.",
            hint=f"rename the rule (a new rule id); a {chosen.name} export reserves "
            f"{', '.join(FORMAT_KEYS[chosen.name])}.",
            code="import-codebook-question",
        )
    variables: dict[str, ImportResult] = {}
    for rule in codebook.rules:
        asked = replace(options, question=rule.id)
        try:
            parsed: list[ParsedExport] = [chosen.parse(data, subject, asked, limits) for data, subject in exports]
        except IrrAuditError as error:
            if error.code != "import-question":
                raise
            raise UsageError(
                f"variable {rule.id} of {codebook.label}: {error.message}",
                hint=f"with --codebook each variable is the question (from_name, column) named {rule.id}; "
                "name the tool's question so, or leave the variable out of the codebook.",
                code="import-question",
            ) from None
        variables[rule.id] = build_import(parsed, rule, asked, limits)
    log = [{"variable": rule_id, **row} for rule_id, result in variables.items() for row in result.log]
    return CodebookImport(codebook, variables, _wide_sheets(codebook, variables), log)


def _wide_sheets(codebook: Codebook, variables: dict[str, ImportResult]) -> dict[str, list[dict[str, str]]]:
    """coder -> one row per unit the coder coded on any variable, in the order units first appear."""
    rows: dict[str, dict[str, dict[str, str]]] = {}
    for rule_id, result in variables.items():
        for coder, sheet in result.sheets.items():
            for row in sheet:
                wide = rows.setdefault(coder, {}).setdefault(
                    row.comment_id, {"comment_id": row.comment_id, **dict.fromkeys(codebook.rule_ids, ""), "body": ""}
                )
                wide[rule_id] = row.code
                if row.text is not None and not wide["body"]:
                    wide["body"] = row.text
    return {coder: list(units.values()) for coder, units in sorted(rows.items())}


def wide_sheet_csv(codebook: Codebook, rows: Sequence[dict[str, str]]) -> str:
    with_text = any(row["body"] for row in rows)
    header = ["comment_id", *codebook.rule_ids, *(["body"] if with_text else [])]
    return table_csv_text(header, [[row[column] for column in header] for row in rows])


def codebook_import_summary(
    result: CodebookImport, exports: Sequence[ExportFile], format_name: str, options: ImportOptions, out: Path
) -> dict[str, Any]:
    codebook = result.codebook
    first = next(iter(result.variables.values()))
    return {
        "format": format_named(format_name).name,
        "id_field": options.id_field or "comment_id",
        "text_field": options.text_field,
        "codebook": {
            "name": codebook.name,
            "version": codebook.version,
            "digest": codebook.digest,
            "rules": [{"id": rule.id, "version": rule.version, "digest": rule.digest} for rule in codebook.rules],
        },
        "exports": [
            {
                "path": str(resolved(export.path)),
                "relative_path": os.path.relpath(resolved(export.path), resolved(out)),
                "sha256": export.sha256,
                "bytes": export.size,
                "records": parsed.records,
            }
            for export, parsed in zip(exports, first.exports)
        ],
        "sheets": {
            coder: {"file": f"{SHEETS}/{coder}.csv", "rows": len(rows)} for coder, rows in result.sheets.items()
        },
        "variables": {
            rule_id: {
                "question": rule_id,
                "annotations": len(variable.log),
                "outcomes": dict(variable.outcomes),
                "units": variable.units(),
                "coders": dict(variable.coders),
            }
            for rule_id, variable in result.variables.items()
        },
        "annotations": len(result.log),
        "summary": result.summary_line(),
    }


@dataclass(frozen=True)
class CodebookImportRun:
    result: CodebookImport
    exports: tuple[ExportFile, ...]
    written: tuple[Path, ...]
    replaced: tuple[str, ...]


def import_codebook_exports(
    format_name: str,
    paths: Sequence[Path],
    codebook: Codebook,
    out: Path,
    options: ImportOptions | None = None,
    *,
    inputs: Sequence[Path] = (),
    force: bool = False,
    limits: Limits = DEFAULT_LIMITS,
) -> CodebookImportRun:
    """Import ``paths`` under every variable of ``codebook`` into folder ``out``, as one run.
    ``inputs`` are the other files read (the codebook and its rule files): never written."""
    options = options or ImportOptions()
    check_codebook_format(format_name, options)
    if not paths:
        raise UsageError("nothing to import.", hint="pass the export file.", code="usage-no-input")
    check_exist([(path, "export") for path in paths])
    refuse_unsafe_outputs(files_read([*inputs, *paths]), folders=[out])
    replaced = check_import_out(out, force)
    datas: list[tuple[bytes, str]] = []
    files: list[ExportFile] = []
    seen: set[object] = set()
    for path in paths:
        check_name(path, "export")
        if same_file_key(path) in seen:
            raise UsageError(
                f"the export {shown_name(path)} is given twice: its annotations would all be counted twice.",
                hint="pass each export file once.",
                code="usage-import-twice",
            )
        seen.add(same_file_key(path))
        data = read_bounded(
            path, f"export {shown_name(path)}", limits, code="import", missing_hint="check the path of the export."
        )
        datas.append((data, shown_name(path)))
        files.append(ExportFile(path, hashlib.sha256(data).hexdigest(), len(data)))
    result = build_codebook_import(datas, format_name, codebook, options, limits)
    summary = codebook_import_summary(result, files, format_name, options, out)

    def outputs() -> Iterator[tuple[str, bytes]]:
        for coder, rows in result.sheets.items():
            yield f"{SHEETS}/{coder}.csv", wide_sheet_csv(codebook, rows).encode("utf-8")
        yield (
            LOG,
            table_csv_text(
                CODEBOOK_LOG_COLUMNS, [[_cell(row[c]) for c in CODEBOOK_LOG_COLUMNS] for row in result.log]
            ).encode("utf-8"),
        )
        yield LOG_JSONL, jsonl_text(result.log).encode("utf-8")

    def with_run_record(digests: dict[str, str]) -> dict[str, bytes]:
        return {IMPORT_RECORD: render_json({**summary, RUN_KEY: record_of(digests)}).encode("utf-8")}

    written = replace_folder(out, outputs(), with_run_record)
    return CodebookImportRun(result, tuple(files), tuple(written), tuple(replaced))


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return " | ".join(value)
    return str(value)
