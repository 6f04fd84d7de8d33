"""Label Studio's exports (https://labelstud.io/guide/export.html): JSON (every task
with its ``annotations``), JSON-MIN (one flat object per annotation) and CSV (JSON-MIN
as a table). Only ``choices`` results are read, those of one question (a ``from_name``
of the labelling config); ``predictions`` are a model's pre-annotations and are not
imported. Pure: bytes in, a ParsedExport out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from irr_audit.importers.common import (
    comment_text,
    json_document,
    json_records,
    labels_of,
    repeated_key_error,
    timestamp,
    unit_id,
)
from irr_audit.importers.model import Annotation, ImportOptions, ParsedExport, Reason, export_error
from irr_audit.io.limits import DEFAULT_LIMITS, Limits, RepeatedKey, load_json
from irr_audit.io.tables import parse_file

# Keys of a JSON-MIN or CSV row that are not a question: the annotation's own fields.
MIN_FIELDS = ("id", "annotator", "annotation_id", "created_at", "updated_at", "lead_time")


def parse_json(data: bytes, subject: str, options: ImportOptions, limits: Limits = DEFAULT_LIMITS) -> ParsedExport:
    tasks = json_document(data, subject, limits)
    if not isinstance(tasks, list):
        raise export_error(
            subject,
            "",
            f"is a JSON {type(tasks).__name__}, not the list of tasks of a Label Studio JSON export.",
            "export the project with Export > JSON (a list of tasks).",
        )
    checked = [_task(task, f"record {number}", subject) for number, task in enumerate(tasks, start=1)]
    question = _question(checked, subject, options)
    annotations: list[Annotation] = []
    for place, task in checked:
        annotations += _task_annotations(task, place, question, options, subject)
    return ParsedExport("label-studio", tuple(annotations), len(tasks), question)


def _task(task: Any, place: str, subject: str) -> tuple[str, dict[str, Any]]:
    if not isinstance(task, dict) or not isinstance(task.get("data"), dict):
        raise export_error(
            subject,
            place,
            "is not a Label Studio task (an object with a data object).",
            "pass the project's JSON export (Export > JSON), not JSON-MIN or another tool's file.",
        )
    found = task.get("annotations", [])
    if not isinstance(found, list) or not all(isinstance(item, dict) for item in found):
        raise export_error(
            subject, place, "has annotations that are not a list of objects.", "export the project again as JSON."
        )
    for item in found:
        result = item.get("result", [])
        if not isinstance(result, list) or not all(isinstance(region, dict) for region in result):
            raise export_error(
                subject,
                place,
                "has an annotation whose result is not a list of objects.",
                "export the project again as JSON.",
            )
    return place, task


def _question(tasks: list[tuple[str, dict[str, Any]]], subject: str, options: ImportOptions) -> str:
    """The from_name to read: --question, or the only one of type choices in the export."""
    kinds: dict[str, set[str]] = {}
    for _, task in tasks:
        for item in task.get("annotations", []):
            for region in item.get("result", []):
                name, kind = region.get("from_name"), region.get("type")
                if isinstance(name, str):
                    kinds.setdefault(name, set()).add(str(kind))
    choices = sorted(name for name, found in kinds.items() if "choices" in found)
    if options.question is not None:
        wrong = kinds.get(options.question, set()) - {"choices"}
        if wrong:
            raise export_error(
                subject,
                "",
                f"--question {options.question!r} holds {', '.join(sorted(wrong))} results, not choices.",
                f"choose a question of type choices: {', '.join(choices) or 'the export has none'}.",
                code="import-question",
            )
        return options.question
    if len(choices) == 1:
        return choices[0]
    if not choices:
        raise export_error(
            subject,
            "",
            "holds no choices results (no annotation of a Choices question).",
            "check that the project classifies with Choices and has annotations; name the question with --question.",
            code="import-question",
        )
    raise export_error(
        subject,
        "",
        f"holds choices for several questions ({', '.join(choices)}); one rule codes one of them.",
        "name the question the rule codes with --question (the from_name of its Choices tag).",
        code="import-question",
    )


def _task_annotations(
    task: dict[str, Any], place: str, question: str, options: ImportOptions, subject: str
) -> list[Annotation]:
    data = task["data"]
    places = [data, task] if options.id_field else [data]
    base = Annotation(
        record=place, unit_id=unit_id(places, options), text=comment_text([data], options), source=subject
    )
    if not task.get("annotations"):
        return [replace(base, outcome=Reason.NOT_ANNOTATED)]
    found = []
    for item in task["annotations"]:
        here = replace(base, record=_place(place, task, item))
        who = _annotator(item.get("completed_by"))
        when = timestamp(item.get("updated_at")) or timestamp(item.get("created_at"))
        if item.get("was_cancelled") is True:
            found.append(replace(here, annotator=who, outcome=Reason.SKIPPED, detail="skipped in Label Studio"))
            continue
        labels: list[str] = []
        problem = ""
        for region in item.get("result", []):
            if region.get("from_name") != question:
                continue
            value = region.get("value")
            chosen = value.get("choices") if isinstance(value, dict) else None
            if not isinstance(chosen, list):
                problem = "a choices result without a list of choices"
                continue
            more, why = labels_of(chosen)
            labels += more
            problem = problem or why
        found.append(
            replace(
                here,
                annotator=who,
                labels=tuple(labels),
                outcome=Reason.UNKNOWN_LABEL if problem else None,
                detail=problem,
                when=when,
            )
        )
    return found


def _place(place: str, task: dict[str, Any], item: dict[str, Any]) -> str:
    """Where an annotation is, for people: the record, and the task's and annotation's ids."""
    ids = [
        f"{name} {value}" for name, value in (("task", task.get("id")), ("annotation", item.get("id"))) if _plain(value)
    ]
    return f"{place} ({', '.join(ids)})" if ids else place


def _plain(value: Any) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or (isinstance(value, str) and 0 < len(value) <= 40)


def _annotator(value: Any) -> str | None:
    """completed_by: a user id (a number), or the user as an object (its email, else its id)."""
    if isinstance(value, Mapping):
        email = value.get("email")
        if isinstance(email, str) and email.strip():
            return email.strip()
        value = value.get("id")
    if isinstance(value, int) and not isinstance(value, bool):
        return f"user-{value}"
    if isinstance(value, str) and value.strip():
        return f"user-{value.strip()}" if value.strip().isdigit() else value.strip()
    return None


# --- JSON-MIN and CSV: one flat row per annotation -------------------------------------------


def parse_json_min(data: bytes, subject: str, options: ImportOptions, limits: Limits = DEFAULT_LIMITS) -> ParsedExport:
    rows = json_records(data, subject, limits)
    question = _min_question(rows, subject, options)
    annotations = tuple(_min_annotation(row, place, question, options, subject) for place, row in rows)
    return ParsedExport("label-studio-min", annotations, len(rows), question)


def parse_csv(data: bytes, subject: str, options: ImportOptions, limits: Limits = DEFAULT_LIMITS) -> ParsedExport:
    table = parse_file(data, Path(subject).with_suffix(".csv"), None, limits).table
    columns = [column.to_pylist() for column in table.cells]
    rows = [
        (f"row {int(table.rows[index])}", {name: columns[at][index] for at, name in enumerate(table.header)})
        for index in range(len(table.rows))
    ]
    question = _min_question(rows, subject, options)
    annotations = tuple(
        _min_annotation(_csv_values(row, question, f"{subject} {place}", limits), place, question, options, subject)
        for place, row in rows
    )
    return ParsedExport("label-studio-csv", annotations, len(rows), question)


def _csv_values(row: dict[str, Any], question: str, where: str, limits: Limits) -> dict[str, Any]:
    """A CSV row as JSON-MIN has it: empty cells absent, a multiple choice (written as the
    JSON {"choices": [...]}) decoded within the limits."""
    values = {key: value for key, value in row.items() if value not in (None, "")}
    cell = values.get(question)
    if isinstance(cell, str) and cell.lstrip().startswith("{"):
        try:
            values[question] = load_json(cell, where, limits)
        except RepeatedKey as repeated:
            raise repeated_key_error(f"export {where} (column {question})", cell, repeated) from None
        except ValueError:
            pass  # text that only looks like JSON: a label the rule will judge
    return values


def _min_question(rows: list[tuple[str, dict[str, Any]]], subject: str, options: ImportOptions) -> str:
    """A JSON-MIN or CSV export does not say which keys are questions: --question names it."""
    keys = sorted({key for _, row in rows for key in row} - set(MIN_FIELDS))
    if options.question is None:
        raise export_error(
            subject,
            "",
            "is a JSON-MIN or CSV export, which does not say which column holds the answers.",
            f"name it with --question (the from_name of the Choices tag); the columns are {', '.join(keys) or 'none'}.",
            code="import-question",
        )
    if rows and not any(options.question in row for _, row in rows):
        raise export_error(
            subject,
            "",
            f"has no column {options.question!r} (--question).",
            f"the columns are {', '.join(keys) or 'none'}.",
            code="import-question",
        )
    return options.question


def _min_annotation(
    row: Mapping[str, Any], place: str, question: str, options: ImportOptions, subject: str
) -> Annotation:
    who = _annotator(row.get("annotator"))
    base = Annotation(
        record=place,
        unit_id=unit_id([row], options),
        text=comment_text([row], options),
        annotator=who,
        source=subject,
    )
    value = row.get(question)
    if value is None:
        return replace(base, outcome=Reason.NOT_ANNOTATED if who is None else Reason.NO_LABEL)
    if isinstance(value, Mapping):
        value = value.get("choices")
    labels, problem = labels_of(value)
    when = timestamp(row.get("updated_at")) or timestamp(row.get("created_at"))
    return replace(base, labels=labels, outcome=Reason.UNKNOWN_LABEL if problem else None, detail=problem, when=when)
