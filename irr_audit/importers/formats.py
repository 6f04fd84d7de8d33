"""The export formats irr-audit imports: name -> the parser (bytes -> ParsedExport) and what it reads."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from irr_audit.errors import UsageError
from irr_audit.importers import argilla, doccano, label_studio, model_output, prodigy
from irr_audit.importers.model import ImportOptions, ParsedExport
from irr_audit.io.limits import Limits

Parser = Callable[[bytes, str, ImportOptions, Limits], ParsedExport]


@dataclass(frozen=True)
class Format:
    name: str
    parse: Parser
    reads: str
    # For a format whose files are each one user's (doccano), the user a file's name gives:
    # two files naming one user would merge two coders' codes into one sheet.
    annotator_of_file: Callable[[str], str] | None = None


FORMATS = {
    entry.name: entry
    for entry in (
        Format("label-studio", label_studio.parse_json, "Label Studio's JSON export (tasks with annotations)"),
        Format("label-studio-min", label_studio.parse_json_min, "Label Studio's JSON-MIN export"),
        Format("label-studio-csv", label_studio.parse_csv, "Label Studio's CSV export"),
        Format("prodigy", prodigy.parse, "Prodigy's annotations as prodigy db-out writes them (JSONL)"),
        Format(
            "doccano",
            doccano.parse,
            "doccano's text-classification export, one JSONL file per user",
            annotator_of_file=doccano.annotator_of,
        ),
        Format("argilla", argilla.parse, "Argilla records with their responses (JSON or JSONL)"),
        Format("model", model_output.parse, "a model's labels: JSONL of comment_id, model, label, confidence"),
    )
}


def format_named(name: str) -> Format:
    # the Python API passes the format as given: anything but text is no format's name
    found = FORMATS.get(name.strip().lower().replace("_", "-")) if isinstance(name, str) else None
    if found is None:
        raise UsageError(
            f"{name!r} is not an export format irr-audit imports.",
            hint=f"the formats are {', '.join(FORMATS)}.",
            code="usage-import-format",
        )
    return found
