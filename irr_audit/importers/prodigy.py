"""Prodigy's annotations as `prodigy db-out` writes them (JSON Lines; https://prodi.gy/docs/api-loaders
and https://prodi.gy/docs/review): one line per annotation, with ``answer`` (accept, reject or
ignore), the annotator in ``_annotator_id`` (else ``_session_id``), and the label in ``label``
(a binary task) or the chosen option ids in ``accept`` (a choice task). The unit id is
the ``meta`` key comment_id (or --id-field); ``_input_hash`` or ``_task_hash`` only when
asked with --id-field. Pure: bytes in, a ParsedExport out.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from irr_audit.importers.common import comment_text, json_records, labels_of, mapping, timestamp, unit_id
from irr_audit.importers.model import Annotation, ImportOptions, ParsedExport, Reason, export_error
from irr_audit.io.limits import DEFAULT_LIMITS, Limits

ANSWERS = {"accept": None, "reject": Reason.REJECTED, "ignore": Reason.IGNORED}


def parse(data: bytes, subject: str, options: ImportOptions, limits: Limits = DEFAULT_LIMITS) -> ParsedExport:
    records = json_records(data, subject, limits)
    annotations = tuple(_annotation(record, place, options, subject) for place, record in records)
    return ParsedExport("prodigy", annotations, len(records))


def _annotation(record: dict[str, Any], place: str, options: ImportOptions, subject: str) -> Annotation:
    meta = mapping(record.get("meta"))
    places = [meta, record] if options.id_field else [meta]
    who = _annotator(record)
    base = Annotation(
        record=place,
        unit_id=unit_id(places, options),
        text=comment_text([record, meta], options),
        annotator=who,
        when=timestamp(record.get("_timestamp")),
        source=subject,
    )
    answer = record.get("answer")
    if answer is None:
        return replace(base, outcome=Reason.NOT_ANNOTATED, detail="no answer: a task, not an annotation")
    if not isinstance(answer, str) or answer not in ANSWERS:  # a list or object is not hashable: refused too
        raise export_error(
            subject,
            place,
            f"has the answer {answer!r}; Prodigy answers accept, reject or ignore.",
            "pass the dataset as prodigy db-out writes it.",
        )
    if ANSWERS[answer] is not None:
        return replace(base, outcome=ANSWERS[answer], detail=f"answer {answer} in Prodigy")
    if "accept" in record:  # a choice task: the ids of the chosen options
        labels, problem = (
            labels_of(record["accept"]) if isinstance(record["accept"], list) else ((), "accept is not a list")
        )
    elif "label" in record:  # a binary task: accepting says the label applies
        labels, problem = labels_of(record["label"])
    else:
        labels, problem = (), ""
    return replace(base, labels=labels, outcome=Reason.UNKNOWN_LABEL if problem else None, detail=problem)


def _annotator(record: dict[str, Any]) -> str | None:
    for key in ("_annotator_id", "_session_id"):
        value = record.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None
