"""Argilla's records with their responses (https://docs.argilla.io/en/latest/practical_guides/
create_update_dataset/records.html), as a JSON array or JSON Lines of records. A record
has ``fields`` (the text shown), ``metadata`` and ``responses``, one per user: in Argilla
1.x a list of ``{"user_id", "values": {question: {"value": ...}}, "status"}``, in 2.x a
mapping question -> list of ``{"user_id", "value", "status"}``. Only submitted responses
become codes; discarded and draft ones are logged. Pure: bytes in, a ParsedExport out.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from irr_audit.importers.common import comment_text, json_records, labels_of, mapping, timestamp, unit_id
from irr_audit.importers.model import Annotation, ImportOptions, ParsedExport, Reason, export_error
from irr_audit.io.limits import DEFAULT_LIMITS, Limits

STATUSES = {"submitted": None, "discarded": Reason.DISCARDED, "draft": Reason.DRAFT}
_ABSENT = object()


def parse(data: bytes, subject: str, options: ImportOptions, limits: Limits = DEFAULT_LIMITS) -> ParsedExport:
    records = json_records(data, subject, limits)
    responses = [(place, record, list(_responses(record, place, subject))) for place, record in records]
    question = _question(responses, subject, options)
    annotations: list[Annotation] = []
    for place, record, found in responses:
        annotations += _annotations(record, place, found, question, options, subject)
    return ParsedExport("argilla", tuple(annotations), len(records), question)


def _responses(record: dict[str, Any], place: str, subject: str) -> Iterator[dict[str, Any]]:
    """Each response as {"user_id", "status", "values": {question: value}, "when"}, from either shape."""
    found = record.get("responses") or []
    bad = export_error(
        subject,
        place,
        "has responses that are neither a list of responses (Argilla 1.x) nor a mapping of questions (2.x).",
        "export the records again from Argilla.",
    )
    if isinstance(found, list):
        for item in found:
            if not isinstance(item, dict) or not isinstance(item.get("values", {}), dict):
                raise bad
            values = {
                name: value.get("value") if isinstance(value, dict) else _ABSENT
                for name, value in item.get("values", {}).items()
            }
            yield {**item, "values": values}
    elif isinstance(found, dict):
        for name, items in found.items():
            if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
                raise bad
            for item in items:
                yield {**item, "values": {name: item.get("value")}}
    else:
        raise bad


def _question(
    responses: list[tuple[str, dict[str, Any], list[dict[str, Any]]]], subject: str, options: ImportOptions
) -> str:
    names = sorted({name for _, _, found in responses for item in found for name in item["values"]})
    if options.question is not None:
        return options.question
    if len(names) == 1:
        return names[0]
    if not names:
        raise export_error(
            subject,
            "",
            "holds no responses to any question.",
            "export the records with their responses; name the question with --question.",
            code="import-question",
        )
    raise export_error(
        subject,
        "",
        f"holds responses to several questions ({', '.join(names)}); one rule codes one of them.",
        "name the question the rule codes with --question.",
        code="import-question",
    )


def _annotations(
    record: dict[str, Any],
    place: str,
    found: list[dict[str, Any]],
    question: str,
    options: ImportOptions,
    subject: str,
) -> list[Annotation]:
    fields = mapping(record.get("fields"))
    metadata = mapping(record.get("metadata"))
    places = [fields, metadata, record] if options.id_field else [fields, metadata]
    base = Annotation(
        record=place,
        unit_id=unit_id(places, options),
        text=comment_text([fields], options),
        source=subject,
    )
    if not found:
        return [replace(base, annotator=None, outcome=Reason.NOT_ANNOTATED)]
    result = []
    for item in found:
        user = item.get("user_id")
        who = str(user).strip() if isinstance(user, (str, int)) and not isinstance(user, bool) else None
        status = item.get("status", "submitted")
        when = timestamp(item.get("updated_at")) or timestamp(item.get("inserted_at"))
        if not isinstance(status, str) or status not in STATUSES:  # a list or object is not hashable: refused too
            raise export_error(
                subject,
                place,
                f"has a response with status {status!r}; Argilla's are submitted, discarded and draft.",
                "export the records again from Argilla.",
            )
        if STATUSES[status] is not None:
            result.append(replace(base, annotator=who, outcome=STATUSES[status], detail=f"{status} in Argilla"))
            continue
        value = item["values"].get(question)
        if value is None or value is _ABSENT:
            result.append(replace(base, annotator=who, outcome=Reason.NO_LABEL, when=when))
            continue
        labels, problem = labels_of(value)
        result.append(
            replace(
                base,
                annotator=who,
                labels=labels,
                outcome=Reason.UNKNOWN_LABEL if problem else None,
                detail=problem,
                when=when,
            )
        )
    return result
