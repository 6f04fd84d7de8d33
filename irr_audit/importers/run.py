"""`irr-audit import` as one library call: read the exports within the limits, build the
sheets and the log under the rule, write the folder as one run."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from irr_audit.errors import UsageError
from irr_audit.importers.build import ImportResult, build_import
from irr_audit.importers.folder import ExportFile, check_import_out, write_import_dir
from irr_audit.importers.formats import format_named
from irr_audit.importers.model import ImportOptions, ParsedExport
from irr_audit.io.collector import quoted
from irr_audit.io.files import check_exist, check_name, read_bounded, same_file_key, shown_name
from irr_audit.io.limits import DEFAULT_LIMITS, Limits
from irr_audit.io.outputs import refuse_unsafe_outputs
from irr_audit.io.runfolder import files_read
from irr_audit.rules.model import Rule


@dataclass(frozen=True)
class ImportRun:
    """What an import wrote: the result (sheets, log, counts), the files read and written,
    and the files of the old folder that ``force`` deleted."""

    result: ImportResult
    exports: tuple[ExportFile, ...]
    written: tuple[Path, ...]
    replaced: tuple[str, ...]

    def __repr__(self) -> str:
        # one line, as JoinFolder's: the generated repr printed every sheet row and log entry where a notebook shows it
        coders = ", ".join(self.result.sheets) or "no sheets"
        return (
            f"<ImportRun {self.result.rule.label}: {coders}; {self.result.records} records, "
            f"{len(self.written)} files written>"
        )


def read_exports(
    format_name: str, paths: Sequence[Path], options: ImportOptions, limits: Limits = DEFAULT_LIMITS
) -> tuple[list[ParsedExport], list[ExportFile]]:
    """Each export file read once within the limits and parsed by the format's importer."""
    chosen = format_named(format_name)
    if not paths:
        raise UsageError("nothing to import.", hint="pass the export file.", code="usage-no-input")
    seen: dict[object, Path] = {}
    for path in paths:
        first = seen.setdefault(same_file_key(path), path)
        if first is not path:
            raise UsageError(
                f"the export {shown_name(path)} is given twice (also as {shown_name(first)}): its annotations "
                "would all be counted twice.",
                hint="pass each export file once.",
                code="usage-import-twice",
            )
    if chosen.annotator_of_file is not None:
        check_one_file_per_user(paths, chosen.annotator_of_file)
    parsed, files = [], []
    for path in paths:
        check_name(path, "export")
        subject = f"export {shown_name(path)}"
        data = read_bounded(path, subject, limits, code="import", missing_hint="check the path of the export.")
        parsed.append(chosen.parse(data, shown_name(path), options, limits))
        files.append(ExportFile(path, hashlib.sha256(data).hexdigest(), len(data)))
    return parsed, files


def check_one_file_per_user(paths: Sequence[Path], annotator_of: Callable[[str], str]) -> None:
    """Files that name one user (ann/all.jsonl and ben/all.jsonl, alice.jsonl and alice.v2.jsonl)
    would put two files' codes in one coder's sheet, their disagreements logged as one coder's
    conflicts: refused before anything is read."""
    first_of: dict[str, Path] = {}
    for path in paths:
        user = annotator_of(path.name)
        first = first_of.setdefault(user.casefold(), path)
        if first is not path:
            raise UsageError(
                f"the exports {shown_name(first)} and {shown_name(path)} both name the annotator "
                f"{quoted(annotator_of(first.name))} (an export's annotator is its file name up to the first dot): "
                "their codes would be one coder's.",
                hint="name each user's export file after its user (alice.jsonl, bob.jsonl), then import again.",
                code="import-annotator-names",
            )


def import_exports(
    format_name: str,
    paths: Sequence[Path],
    rule: Rule,
    out: Path,
    options: ImportOptions | None = None,
    *,
    inputs: Sequence[Path] = (),
    force: bool = False,
    limits: Limits = DEFAULT_LIMITS,
) -> ImportRun:
    """Import ``paths`` (exports of one format) under ``rule`` into folder ``out``. The
    output is checked before anything is read; ``inputs`` are the other files read (the rule)."""
    options = options or ImportOptions()
    format_named(format_name)
    check_exist([*((path, "export") for path in paths), *((path, "rule") for path in inputs)])
    refuse_unsafe_outputs(files_read([*inputs, *paths]), folders=[out])
    replaced = check_import_out(out, force)
    parsed, files = read_exports(format_name, paths, options, limits)
    result = build_import(parsed, rule, options, limits)
    written = write_import_dir(result, files, options, out, inputs, force=force)
    return ImportRun(result, tuple(files), tuple(written), tuple(replaced))
