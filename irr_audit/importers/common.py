"""What the importers share: reading a JSON array or JSON Lines within the limits, and
reading an id, a text, an annotator or a label out of a record. Pure: bytes in, values out."""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from irr_audit.errors import IrrAuditError
from irr_audit.importers.model import DEFAULT_ID_FIELD, TEXT_FIELDS, ImportOptions, export_error
from irr_audit.io.encodings import SAVE_AS_UTF8, foreign_mark
from irr_audit.io.limits import (
    DEFAULT_LIMITS,
    Limits,
    RepeatedKey,
    json_lines,
    load_json,
    load_json_line,
    number_check_lines,
    repeated_key_refusal,
)


def json_records(data: bytes, subject: str, limits: Limits = DEFAULT_LIMITS) -> list[tuple[str, Any]]:
    """(place, value) of every record of a JSON array or a JSON Lines file, decided by
    the first character ("[": an array). A record that is not an object is refused."""
    text = _text(data, subject)
    if text.lstrip().startswith("["):
        try:
            document = load_json(text, subject, limits)
        except RepeatedKey as repeated:
            raise repeated_key_error(f"export {subject}", text, repeated, "record") from None
        except ValueError as exc:
            raise export_error(
                subject, "", f"is not valid JSON ({getattr(exc, 'msg', exc)}).", "export the file again from the tool."
            ) from None
        values = [(f"record {number}", value) for number, value in enumerate(document, start=1)]
    else:
        values = []
        flagged = number_check_lines(text, limits)
        for number, line in json_lines(text, subject, limits):
            try:
                value = load_json_line(line, f"{subject} line {number}", limits, numbers_checked=number not in flagged)
                values.append((f"line {number}", value))
            except RepeatedKey as repeated:
                raise repeated_key_error(f"export {subject} line {number}", line, repeated) from None
            except ValueError as exc:
                raise export_error(
                    subject,
                    f"line {number}",
                    f"is not valid JSON ({getattr(exc, 'msg', exc)}).",
                    "a JSON Lines export has one JSON object per line; export the file again from the tool.",
                ) from None
    for place, value in values:
        if not isinstance(value, dict):
            raise export_error(
                subject,
                place,
                f"is a JSON {type(value).__name__}, not an object.",
                "pass the tool's export itself: every record is a JSON object.",
            )
    return values


def json_document(data: bytes, subject: str, limits: Limits = DEFAULT_LIMITS) -> Any:
    text = _text(data, subject)
    try:
        return load_json(text, subject, limits)
    except RepeatedKey as repeated:
        raise repeated_key_error(f"export {subject}", text, repeated, "record") from None
    except ValueError as exc:
        raise export_error(
            subject, "", f"is not valid JSON ({getattr(exc, 'msg', exc)}).", "export the file again from the tool."
        ) from None


def repeated_key_error(place: str, text: str, repeated: RepeatedKey, entries: str = "") -> IrrAuditError:
    """A key given twice in an object of an export: refused, never resolved (json.loads would keep
    the last label, and the import log would call it coded), as in every JSON file a person gives."""
    return repeated_key_refusal(
        place, text, repeated, code="import-duplicate-key", fix="export the file again from the tool.", entries=entries
    )


def _text(data: bytes, subject: str) -> str:
    why = foreign_mark(data)
    if why is not None:
        raise export_error(subject, "", f"is not UTF-8 text: {why}.", SAVE_AS_UTF8)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise export_error(
            subject,
            f"byte {exc.start}",
            "is not UTF-8 text.",
            "the tools export UTF-8; export the file again, or convert it to UTF-8.",
        ) from None


def mapping(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (a record's optional meta, fields...)."""
    return value if isinstance(value, dict) else {}


def id_text(value: Any) -> str | None:
    """An id as the team wrote it: text as it is, a whole number in digits; anything else
    (a fraction, true/false, a list, null, blank text) is no id."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value
    return None


def unit_id(places: list[Any], options: ImportOptions) -> str | None:
    """The unit id: the --id-field key (default comment_id) of the first of ``places``
    (the task's data, meta or fields, then the record itself) that has it."""
    key = options.id_field or DEFAULT_ID_FIELD
    for place in places:
        if isinstance(place, Mapping) and key in place:
            return id_text(place[key])
    return None


def comment_text(places: list[Any], options: ImportOptions) -> str | None:
    keys = (options.text_field,) if options.text_field else TEXT_FIELDS
    for place in places:
        if not isinstance(place, Mapping):
            continue  # a task's data that is not an object holds no text
        for key in keys:
            if isinstance(place.get(key), str):
                return str(place[key])
    return None


def label_text(value: Any) -> str | None:
    """A label as text: text as it is, a whole number in digits (Prodigy option ids may be numbers)."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def labels_of(value: Any) -> tuple[tuple[str, ...], str]:
    """A label or a list of labels -> (labels as text, what could not be read, or "")."""
    items = value if isinstance(value, list) else [value]
    labels = [label_text(item) for item in items if item is not None]
    if any(label is None for label in labels):
        return (), f"a label is not text: {_shown(value)}"
    return tuple(label for label in labels if label is not None), ""


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def timestamp(value: Any) -> str | None:
    """A time the tool stamped, as text that sorts in time order: ISO 8601 text (Label
    Studio, Argilla) in UTC with microseconds, a number (Prodigy's _timestamp, seconds
    since 1970) as a UTC time too; anything else (or text that is not a time) None."""
    if isinstance(value, bool):
        return None
    try:
        if isinstance(value, (int, float)) and math.isfinite(value) and 0 <= value < 1e11:
            moment = datetime.fromtimestamp(value, timezone.utc)
        elif isinstance(value, str) and value.strip():
            moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        else:
            return None
    except (ValueError, OverflowError, OSError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)  # the tools write UTC
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
