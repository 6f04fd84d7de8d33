"""Labels a model (or any script) wrote, as JSON Lines (or a JSON array), one line per label:
``{"comment_id": ..., "model": "gpt-x" (or "annotator": ...), "label": "yes",
"confidence": 0.93, "text": ...}``; confidence and text are optional. A model is then one
more coder: audit it against people with ``--group humans=ann,ben --against gpt-x``.
Pure: bytes in, a ParsedExport out.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from irr_audit.importers.common import comment_text, json_records, labels_of, unit_id
from irr_audit.importers.model import Annotation, ImportOptions, ParsedExport, Reason, export_error
from irr_audit.io.limits import DEFAULT_LIMITS, Limits

ANNOTATOR_KEYS = ("model", "annotator")


def parse(data: bytes, subject: str, options: ImportOptions, limits: Limits = DEFAULT_LIMITS) -> ParsedExport:
    records = json_records(data, subject, limits)
    annotations = tuple(_annotation(record, place, options, subject) for place, record in records)
    return ParsedExport("model", annotations, len(records))


def _annotation(record: dict[str, Any], place: str, options: ImportOptions, subject: str) -> Annotation:
    who = next((str(record[key]).strip() for key in ANNOTATOR_KEYS if isinstance(record.get(key), str)), None)
    base = Annotation(
        record=place,
        unit_id=unit_id([record], options),
        text=comment_text([record], options),
        annotator=who or None,
        confidence=_confidence(record.get("confidence"), place, subject),
        source=subject,
    )
    value = record.get(options.question or "label")
    if value is None or value == []:
        return replace(base, outcome=Reason.NO_LABEL)
    labels, problem = labels_of(value)
    return replace(base, labels=labels, outcome=Reason.UNKNOWN_LABEL if problem else None, detail=problem)


def _confidence(value: Any, place: str, subject: str) -> float | None:
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or not 0 <= value <= 1
    ):
        raise export_error(
            subject,
            place,
            f"has the confidence {value!r}; a confidence is a number from 0 to 1.",
            "write the model's confidence as a probability, or leave the key out.",
        )
    return float(value)
