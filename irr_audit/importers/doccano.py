"""doccano's text-classification export (JSONL; https://doccano.github.io/doccano/tutorial/):
one line per example, ``{"id", "text", "label": [...], ...}``, the example's metadata at
the top level. With collaborative annotation off, doccano exports one file per user,
named after the user: the annotator is the file's name (``alice.jsonl`` -> alice), so a
project's files are imported together. An example with no label is logged as not
annotated. Pure: bytes in, a ParsedExport out.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from irr_audit.importers.common import comment_text, json_records, labels_of, mapping, unit_id
from irr_audit.importers.model import Annotation, ImportOptions, ParsedExport, Reason, export_error
from irr_audit.io.limits import DEFAULT_LIMITS, Limits


def annotator_of(subject: str) -> str:
    """The user a file is the export of: its name up to the first dot (alice.jsonl -> alice)."""
    return Path(subject).name.split(".")[0]


def parse(data: bytes, subject: str, options: ImportOptions, limits: Limits = DEFAULT_LIMITS) -> ParsedExport:
    annotator = annotator_of(subject) or None
    records = json_records(data, subject, limits)
    annotations = tuple(_annotation(record, place, annotator, options, subject) for place, record in records)
    return ParsedExport("doccano", annotations, len(records))


def _annotation(
    record: dict[str, Any], place: str, annotator: str | None, options: ImportOptions, subject: str
) -> Annotation:
    meta = mapping(record.get("meta"))
    base = Annotation(
        record=place,
        unit_id=unit_id([record, meta], options),
        text=comment_text([record], options),
        annotator=annotator,
        source=subject,
    )
    value = record.get("label", record.get("labels"))
    if isinstance(value, list) and any(isinstance(item, list) for item in value):
        raise export_error(
            subject,
            place,
            "has span labels ([start, end, label]): a sequence-labelling export, not text classification.",
            "export a text-classification project; irr-audit codes whole comments.",
        )
    if value is None or value == []:
        return replace(base, outcome=Reason.NOT_ANNOTATED, detail="no label in doccano")
    labels, problem = labels_of(value)
    return replace(base, labels=labels, outcome=Reason.UNKNOWN_LABEL if problem else None, detail=problem)
