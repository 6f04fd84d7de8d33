"""Reads what the Reddit Comments collector wrote: its dataset and its run record.

The dataset is a JSON array, JSON Lines or CSV of items with the fields listed in
docs/procedure.md, "The collector's output" (postId, commentId, body, authorName,
status, statusReason, observedAt, url, parent, postTitle; depth and
hiddenBranchesRemaining may be null and are not used). The run record is the
OUTPUT object (commentsSaved, duplicatesSkipped, hiddenBranchesRemaining,
completionReason, status, isComplete, inputResults).

`parse_dataset` and `parse_run_record` are pure (bytes in, records out);
`read_dataset` and `read_run_record` only add the file system. Nothing here
judges an item: a missing id or an odd status is kept as data for
`irr_audit.sample.ledger`, which logs it. Only a file that cannot be read as a
dataset at all is an error.
"""

from __future__ import annotations

import functools
import hashlib
import json
import operator
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from irr_audit.errors import IrrAuditError, UsageError
from irr_audit.io.delimiter import detect_delimiter, shown, suspected
from irr_audit.io.display import CONTROL
from irr_audit.io.encodings import refuse_foreign_mark
from irr_audit.io.files import check_name, read_bounded
from irr_audit.io.limits import (
    DEFAULT_LIMITS,
    JsonHooks,
    Limits,
    RepeatedKey,
    json_lines,
    load_json,
    load_json_line,
    number_check_lines,
    repeated_key_refusal,
)
from irr_audit.io.tables import CsvBroken, csv_records, record_pattern, swallowed_value

DATASET_FORMATS = {".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv"}
MAX_QUOTED_CHARS = 60

# Item fields, each with the spellings accepted (compared without case, "_", "-" or spaces);
# the collector's own spelling comes first and wins when an item has several.
# snake_case and kebab-case spellings match too (comment_id, post-id); README, "The collector's fields".
ITEM_FIELDS = {
    "comment_id": ("commentId",),
    "post_id": ("postId", "linkId", "submissionId"),
    "body": ("body",),
    "author": ("authorName", "author"),
    "status": ("status",),
    "status_reason": ("statusReason",),
    "observed_at": ("observedAt",),
    "url": ("url", "permalink", "commentUrl", "postUrl"),
    "parent_id": ("parent", "parentId"),
    "thread_title": ("postTitle", "threadTitle", "title"),
}
REDDIT_PREFIX = re.compile(r"^t[13]_", re.IGNORECASE)  # a comment (t1_) or a post (t3_)
REQUIRED_CSV_FIELDS = ("comment_id", "body", "status")
TEXT_FIELDS = ("body", "status_reason", "thread_title")  # may hold a line break; the other fields never do
LARGEST_COUNT = 2**53  # counts above this are not exact as JSON numbers in most readers
INPUT_URL_KEYS = ("postUrl", "url", "inputUrl", "input")
REDDIT_POST_ID = re.compile(r"/comments/([A-Za-z0-9]+)")


class JsonNumber(str):
    """A JSON number kept as the text it was written as: an id 007e1 stays "007e1"."""


@dataclass(frozen=True, slots=True)  # a dataset may hold millions: no dict per item
class Item:
    """One dataset item, its fields as text (None when absent or null).

    ``position`` is where a person finds it: the 1-based position in a JSON
    array, the line of a JSON Lines file, or the spreadsheet row of a CSV file
    (header = row 1). ``not_an_object`` names the JSON type of an item that is
    not an object (its text is then in ``raw``); ``id_problem`` says why a
    commentId that is present cannot be an id; ``field_problem`` why another
    field is not text (a JSON object, array or boolean, kept as JSON text, the
    first such value in ``raw`` when the id is fine).
    """

    position: int
    comment_id: str | None = None
    post_id: str | None = None
    body: str | None = None
    author: str | None = None
    status: str | None = None
    status_reason: str | None = None
    observed_at: str | None = None
    url: str | None = None
    parent_id: str | None = None  # the comment or post replied to: a comment id, or a Reddit fullname
    thread_title: str | None = None
    id_problem: str | None = None
    field_problem: str | None = None
    not_an_object: str | None = None
    raw: str = ""


@dataclass(frozen=True)
class Dataset:
    name: str
    format: str
    sha256: str
    items: tuple[Item, ...]


@dataclass(frozen=True)
class InputResult:
    """One entry of the run record's inputResults (``position`` is 1-based)."""

    position: int
    url: str | None
    comments_found: int | None
    comments_saved: int | None
    status: str | None
    reason: str | None

    @property
    def post_id(self) -> str | None:
        match = REDDIT_POST_ID.search(self.url or "")
        return match.group(1) if match else None

    @property
    def label(self) -> str:
        return f"input {self.position}" + (f" ({self.url})" if self.url else "")


@dataclass(frozen=True)
class RunRecord:
    name: str
    sha256: str
    comments_saved: int | None
    duplicates_skipped: int | None
    hidden_branches_remaining: int | None
    completion_reason: str | None
    status: str | None
    is_complete: bool | None
    inputs: tuple[InputResult, ...] | None  # None when the record has no inputResults


# --- reading ------------------------------------------------------------------


def read_dataset(
    path: Path,
    limits: Limits = DEFAULT_LIMITS,
    fields: Mapping[str, str] | None = None,
    delimiter: str | None = None,
) -> Dataset:
    """The collector's dataset; ``fields`` maps item fields to the export's names (``--field``),
    ``delimiter`` forces a CSV dataset's (None: detected)."""
    return parse_dataset(_read_bytes(path, "dataset", limits), path.name, limits, fields, delimiter)


def read_run_record(path: Path, limits: Limits = DEFAULT_LIMITS) -> RunRecord:
    return parse_run_record(_read_bytes(path, "run record", limits), path.name, limits)


def _read_bytes(path: Path, what: str, limits: Limits) -> bytes:
    check_name(path, what)
    return read_bounded(path, f"{what} {path}", limits, code="collector")


# --- the dataset ----------------------------------------------------------------


def parse_dataset(
    data: bytes,
    name: str,
    limits: Limits = DEFAULT_LIMITS,
    fields: Mapping[str, str] | None = None,
    delimiter: str | None = None,
) -> Dataset:
    """Dataset bytes -> items. Pure: ``name`` picks the format by its suffix and names the file.
    ``fields`` ({item field: the export's name}) reads exports whose names differ; ``delimiter``
    is a CSV dataset's (None: detected among , ; tab |)."""
    spellings = field_spellings(fields)
    suffix = Path(name).suffix.lower()
    if suffix not in DATASET_FORMATS:
        raise IrrAuditError(
            f"dataset {name} has an unsupported file type {suffix or '(none)'!r}.",
            hint="the collector's dataset is .json (an array of items), .jsonl (one item per line) or .csv.",
            code="collector-unsupported-type",
        )
    data_format = DATASET_FORMATS[suffix]
    text = _decode(data, f"dataset {name}")
    if not text.strip():
        raise IrrAuditError(
            f"dataset {name} is empty.",
            hint="export the collector's dataset again.",
            code="collector-empty",
        )
    if data_format == "json":
        items = _json_array_items(text, name, limits, spellings)
    elif data_format == "jsonl":
        items = _json_lines_items(text, name, limits, spellings)
    else:
        items = _csv_items(text, name, spellings, delimiter or detect_delimiter(text, f"dataset {name}"))
    return Dataset(name=name, format=data_format, sha256=hashlib.sha256(data).hexdigest(), items=tuple(items))


def _decode(data: bytes, what: str) -> str:
    refuse_foreign_mark(data, what, code="collector-encoding")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise IrrAuditError(
            f"{what} is not UTF-8 text: byte {exc.start} (line {line}) cannot be decoded.",
            hint="export it again as UTF-8.",
            code="collector-encoding",
        ) from None


# Numbers stay the text they were written as, so an id is never re-formatted.
AS_WRITTEN: JsonHooks = {"parse_int": JsonNumber, "parse_float": JsonNumber, "parse_constant": JsonNumber}


def field_spellings(fields: Mapping[str, str] | None) -> dict[str, tuple[str, ...]]:
    """ITEM_FIELDS with a field map (``--field comment_id=id``): a mapped field is read from the
    export's name alone; every field name and every export name is checked."""
    if not fields:
        return dict(ITEM_FIELDS)
    unknown = [field for field in fields if field not in ITEM_FIELDS]
    if unknown:
        raise UsageError(
            f"--field {unknown[0]}=...: {unknown[0]!r} is not a field irr-audit reads.",
            hint=f"the fields are {', '.join(ITEM_FIELDS)}; e.g. --field comment_id=id --field body=text.",
            code="usage-field",
        )
    names = list(fields.values())
    if any(not name.strip() for name in names) or len(set(map(_key, names))) < len(names):
        raise UsageError(
            f"--field maps {', '.join(f'{k}={v}' for k, v in fields.items())}: each field needs a name of its own.",
            hint="map each field to a different column or key of the export.",
            code="usage-field",
        )
    return {field: (fields[field],) if field in fields else spellings for field, spellings in ITEM_FIELDS.items()}


def parse_field_options(values: Iterable[str] | None) -> dict[str, str]:
    """--field FIELD=NAME options -> {field: the export's name}."""
    found: dict[str, str] = {}
    for value in values or ():
        field, equals, name = value.partition("=")
        if not equals or not field.strip() or not name.strip():
            raise UsageError(
                f"--field {value!r} is not FIELD=NAME.",
                hint="for example --field comment_id=id --field body=text.",
                code="usage-field",
            )
        found[field.strip()] = name.strip()
    return found


def reddit_key(text: str | None) -> str:
    """An id as compared: trimmed, without a Reddit fullname's type prefix (t1_abc and abc are
    the same comment, t3_abc and abc the same post). The id itself stays as written."""
    trimmed = (text or "").strip()
    return REDDIT_PREFIX.sub("", trimmed) if trimmed[2:3] == "_" else trimmed  # the prefix is "t1_" or "t3_"


def _json_array_items(text: str, name: str, limits: Limits, spellings: dict[str, tuple[str, ...]]) -> list[Item]:
    try:
        document = load_json(text, f"dataset {name}", limits, **AS_WRITTEN)
    except RepeatedKey as repeated:
        raise _repeated_key_error(f"dataset {name}", text, repeated, "item") from None
    except json.JSONDecodeError as exc:
        hint = "export the collector's dataset again as JSON."
        if exc.msg == "Extra data":
            hint = "it looks like JSON Lines (one item per line): name the file .jsonl."
        raise IrrAuditError(
            f"dataset {name} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}.",
            hint=hint,
            code="collector-not-json",
        ) from None
    if not isinstance(document, list):
        raise IrrAuditError(
            f"dataset {name} is a JSON {_json_type(document)}; the dataset is a JSON array of items.",
            hint=_not_an_array_hint(document),
            code="collector-not-an-array",
        )
    item = _item_reader(spellings)
    return [item(position, value) for position, value in enumerate(document, start=1)]


def _repeated_key_error(subject: str, text: str, repeated: RepeatedKey, entries: str = "") -> IrrAuditError:
    """An item (or an object in it) that gives a key twice: refused, not logged as an unusable
    unit, because which of the two values is the item's cannot be known; keys that spell one
    field differently (commentId, comment_id) are read as before (``_field_plan``)."""
    return repeated_key_refusal(
        subject,
        text,
        repeated,
        code="collector-duplicate-key",
        fix="export the collector's dataset again.",
        entries=entries,
    )


def _not_an_array_hint(document: Any) -> str:
    if isinstance(document, dict) and {"commentsSaved", "inputResults", "isComplete"} & set(document):
        return "this looks like the run record (OUTPUT): pass it with --run-record, and the dataset as DATASET."
    if isinstance(document, dict) and "commentId" in document:
        return "a file with one item per line is JSON Lines: name it .jsonl, or wrap the items in [ ]."
    return 'pass the collector\'s dataset file: [ {"commentId": ..., "body": ...}, ... ].'


def _json_lines_items(text: str, name: str, limits: Limits, spellings: dict[str, tuple[str, ...]]) -> list[Item]:
    items = []
    item = _item_reader(spellings)
    flagged = number_check_lines(text, limits)
    for line_number, line in json_lines(text, f"dataset {name}", limits):
        try:
            subject = f"dataset {name} line {line_number}"
            value = load_json_line(line, subject, limits, numbers_checked=line_number not in flagged, **AS_WRITTEN)
        except RepeatedKey as repeated:
            raise _repeated_key_error(subject, line, repeated) from None
        except json.JSONDecodeError as exc:
            raise IrrAuditError(
                f"dataset {name} line {line_number} is not valid JSON: {exc.msg} (column {exc.colno}).",
                hint=f"repair or remove line {line_number}; JSON Lines has one JSON object per line.",
                code="collector-not-json",
            ) from None
        items.append(item(line_number, value))
    return items


def _csv_items(text: str, name: str, spellings: dict[str, tuple[str, ...]], delimiter: str = ",") -> list[Item]:
    try:
        parsed = csv_records(text, delimiter)
    except CsvBroken as broken:
        if broken.opened is not None:
            raise IrrAuditError(
                f"dataset {name}: the quote opened on line {broken.opened} is never closed, so the rest of the file "
                "would be read as one value.",
                hint=f"close the quote on line {broken.opened}, or export the collector's dataset again.",
                code="collector-unclosed-quote",
            ) from None
        raise IrrAuditError(
            f"dataset {name} is not valid CSV near line {broken.line}: {broken.reason}.",
            hint="export the collector's dataset again as CSV.",
            code="collector-malformed",
        ) from None
    (_, _, header), *records = parsed
    columns = _csv_columns(header, name, spellings)
    plan = _field_plan(tuple(header), spellings)  # as a JSON item's keys: a field's first non-empty column
    items = []
    for index, (first_line, _, record) in enumerate(records):
        row = index + 2  # the row a spreadsheet shows; the header is row 1
        if not any(cell.strip() for cell in record):
            continue
        if len(record) > len(header) and any(cell.strip() for cell in record[len(header) :]):
            other = suspected(delimiter.join(header), delimiter.join(record), delimiter)
            raise IrrAuditError(
                f"dataset {name} row {row} has {len(record)} cells but the header has {len(header)}"
                + (f", split on {shown(delimiter)!r}; the file looks {shown(other)}-delimited." if other else "."),
                hint=f"pass --delimiter {shown(other)!r}."
                if other
                else f"a value probably holds an unquoted {shown(delimiter)!r}; export the dataset again.",
                code="collector-malformed",
            )
        _check_line_breaks(record, first_line, row, header, columns, name, delimiter)
        # CSV cannot tell null from "": an empty cell (or one past a short row's end) is null, so that
        # of two columns spelling one field (commentId, comment_id) the first non-empty one wins, as in JSON
        values = [cell if cell != "" else None for cell in record[: len(header)]]
        values += [None] * (len(header) - len(values))
        items.append(Item(position=row, **_with_id(plan.fields(values))))
    return items


def _check_line_breaks(
    record: list[str],
    first_line: int,
    row: int,
    header: list[str],
    columns: dict[str, int],
    name: str,
    delimiter: str = ",",
) -> None:
    """No item may vanish into another's value through a quote left open: a value over
    several lines is refused in a field that never holds a line break, and in a text
    field (body, statusReason) when a line it swallowed has the shape of an item."""
    text_columns = {at for field, at in columns.items() if field in TEXT_FIELDS}
    shape = re.compile(record_pattern(delimiter, len(header), columns["comment_id"], columns["status"]))
    found = swallowed_value(record, first_line, text_columns, shape)
    if found is not None:
        raise IrrAuditError(
            f"dataset {name}: {found.sentence(header[found.column], row, 'items', 'has the shape of an item')}.",
            hint=f"close the quote on line {found.opened}, or export the collector's dataset again.",
            code="collector-unclosed-quote",
        )


def _csv_columns(header: list[str], name: str, spellings: dict[str, tuple[str, ...]]) -> dict[str, int]:
    """Each field's first column (the one a row's shape is checked by); a header naming one
    column twice is refused, as a JSON item giving one key twice is (collector-duplicate-key)."""
    _refuse_repeated_columns(header, name)
    positions = {_key(column): at for at, column in reversed(list(enumerate(header)))}
    columns: dict[str, int] = {}
    for field, names in spellings.items():
        mapped = names is not ITEM_FIELDS[field]  # a field map names the export's column exactly
        found = [positions[_key(spelling)] for spelling in names if _key(spelling) in positions]
        found += [positions[_key(field)]] if _key(field) in positions and not mapped else []
        if found:
            columns[field] = found[0]
    missing = [spellings[field][0] for field in REQUIRED_CSV_FIELDS if field not in columns]
    if missing:
        listed = ", ".join(column for column in header if column.strip()) or "(none)"
        raise IrrAuditError(
            f"dataset {name} has no column {', '.join(missing)}.\n  Columns found: {listed}",
            hint="export the collector's dataset with its item fields as columns "
            "(postId, commentId, body, authorName, status, statusReason, observedAt), or name the "
            'columns that hold them with --field, e.g. --field comment_id=id (README, "The collector\'s fields").',
            code="collector-missing-column",
        )
    return columns


def _refuse_repeated_columns(header: list[str], name: str) -> None:
    """Two columns of one name (``body`` twice): which value is the item's cannot be known.
    Names spelling one field differently (commentId, comment_id) are not one name: the first
    non-empty is read, as in JSON; blank header cells (unnamed columns) are not read at all."""
    seen: dict[str, int] = {}
    for at, column in enumerate(header):
        label = column.strip()
        if not label:
            continue
        if label in seen:
            raise IrrAuditError(
                f"dataset {name} names the column {quoted(label)} twice (columns {seen[label] + 1} and {at + 1}): "
                "which of the two values is an item's cannot be known.",
                hint="export the collector's dataset again, or rename or delete one of the columns.",
                code="collector-duplicate-key",
            )
        seen[label] = at


PLANS_KEPT = 256  # key layouts an export's reader remembers: an export has a handful; beyond, each item is planned anew


@dataclass(frozen=True)
class _Plan:
    """Where each field's value is in an item with one layout of keys: the ``single`` fields
    from one key each (``take`` picks all their values at once), the ``several`` fields from
    the first non-null of their keys' values, the ``absent`` fields from none (null)."""

    single: tuple[str, ...]
    take: Callable[[list[Any]], tuple[Any, ...]]
    several: tuple[tuple[str, tuple[int, ...]], ...]
    absent: tuple[str, ...]

    def fields(self, values: list[Any]) -> dict[str, Any]:
        found = dict.fromkeys(self.absent)
        found.update(zip(self.single, self.take(values)))
        for field, places in self.several:
            found[field] = next((values[at] for at in places if values[at] is not None), None)
        return found


def _item_reader(spellings: dict[str, tuple[str, ...]]) -> Callable[[int, Any], Item]:
    """What makes the Item of each parsed value. An export writes the same keys in the same
    order item after item: which key feeds which field is worked out once per layout of keys."""
    plans: dict[tuple[str, ...], _Plan] = {}

    def item(position: int, value: Any) -> Item:
        if not isinstance(value, dict):
            return Item(position=position, not_an_object=_json_type(value), raw=_json_text(value))
        keys = tuple(value)
        plan = plans.get(keys)
        if plan is None:
            plan = _field_plan(keys, spellings)
            if len(plans) < PLANS_KEPT:
                plans[keys] = plan
        return Item(position=position, **_with_id(plan.fields(list(value.values()))))

    return item


def _field_plan(keys: tuple[str, ...], spellings: dict[str, tuple[str, ...]]) -> _Plan:
    """For each field, the places among ``keys`` of its values in the order they are preferred:
    spelling by spelling (the field's own name last, unless a field map names the key), and in
    the item's order for keys spelt alike (keys compare without case, "_", "-" or spaces). The
    field's value is the first of them that is not null."""
    compared = [_key(key) for key in keys]
    places = {}
    for field, names in spellings.items():
        mapped = names is not ITEM_FIELDS[field]  # a field map names the export's key exactly
        wanted = [_key(name) for name in (names if mapped else (*names, field))]
        matches = (at for name in wanted for at, key in enumerate(compared) if key == name)
        places[field] = tuple(dict.fromkeys(matches))  # a key is looked at once (the field's own name may spell it too)
    single = {field: found[0] for field, found in places.items() if len(found) == 1}
    return _Plan(
        single=tuple(single),
        take=_picker(tuple(single.values())),
        several=tuple((field, found) for field, found in places.items() if len(found) > 1),
        absent=tuple(field for field, found in places.items() if not found),
    )


def _picker(places: tuple[int, ...]) -> Callable[[list[Any]], tuple[Any, ...]]:
    """What picks the values at ``places`` out of a list, as a tuple."""
    if len(places) > 1:
        return operator.itemgetter(*places)
    if places:
        return lambda values: (values[places[0]],)
    return lambda values: ()


def _with_id(fields: dict[str, Any]) -> dict[str, Any]:
    """Every field as text; an id that cannot be text, or holds a control character, is
    kept aside with the reason. No platform writes a control character into an id: it is
    damage, and an id that a sheet, a terminal or a spreadsheet would alter cannot be
    matched back to the ledger (the sheet reader refuses such ids too)."""
    raw_id = fields.pop("comment_id")
    text = {field: value for field, value in fields.items() if value is None or isinstance(value, str)}
    if len(text) < len(fields):  # rarely: a field that is no text (a JsonNumber is a str: a number is)
        text = _with_field_problem(fields)
    control = CONTROL.search(raw_id) if isinstance(raw_id, str) else None
    if control is not None:
        problem = f"commentId holds the control character U+{ord(control.group()):04X}"
        return {**text, "comment_id": None, "id_problem": problem, "raw": raw_id}
    if raw_id is None or isinstance(raw_id, str):  # a JsonNumber is a str: a number id becomes its text
        text["comment_id"] = raw_id
        return text
    problem = f"commentId is a JSON {_json_type(raw_id)}, not text or a number"
    return {**text, "comment_id": None, "id_problem": problem, "raw": _json_text(raw_id)}


def _with_field_problem(fields: dict[str, Any]) -> dict[str, Any]:
    """The fields (but the id) as text, and why they are not all text: a JSON object, array or
    boolean where the collector writes text (or a number, read as written, as in commentId).
    Such an item is logged as ``invalid_field`` (irr_audit.sample.ledger), never turned into
    text that a coder would read as the comment."""
    odd = [field for field, value in fields.items() if not (value is None or isinstance(value, str))]
    problem = "; ".join(
        f"{ITEM_FIELDS[field][0]} is a JSON {_json_type(fields[field])}, not text or a number" for field in odd
    )
    text = {field: _field_text(value) for field, value in fields.items()}
    return {**text, "field_problem": problem, "raw": text[odd[0]]}


def _field_text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return _json_text(value)


def _json_text(value: Any) -> str:
    """A parsed JSON value as JSON text again, numbers as they were written."""
    if isinstance(value, JsonNumber):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(map(_json_text, value)) + "]"
    if isinstance(value, dict):
        pairs = (f"{json.dumps(key, ensure_ascii=False)}: {_json_text(item)}" for key, item in value.items())
        return "{" + ", ".join(pairs) + "}"
    return json.dumps(value, ensure_ascii=False)


def _json_type(value: Any) -> str:
    if isinstance(value, JsonNumber):
        return "number"
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), type(value).__name__
    )


@functools.lru_cache(maxsize=4096)  # an export's few keys and their spellings, asked for at every item
def _key(text: str) -> str:
    return re.sub(r"[\s_-]", "", str(text)).casefold()


def quoted(text: str) -> str:
    """A value for a message: repr-quoted and shortened."""
    shown = text if len(text) <= MAX_QUOTED_CHARS else text[: MAX_QUOTED_CHARS - 3] + "..."
    return repr(shown)


# --- the run record ---------------------------------------------------------------


def parse_run_record(data: bytes, name: str, limits: Limits = DEFAULT_LIMITS) -> RunRecord:
    """Run record bytes (the OUTPUT object, or {"OUTPUT": {...}}) -> RunRecord. Pure."""
    text = _decode(data, f"run record {name}")
    try:
        document = load_json(text, f"run record {name}", limits)
    except RepeatedKey as repeated:
        raise repeated_key_refusal(
            f"run record {name}",
            text,
            repeated,
            code="run-record-duplicate-key",
            fix="pass the collector's own OUTPUT record unchanged.",
        ) from None
    except json.JSONDecodeError as exc:
        raise IrrAuditError(
            f"run record {name} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}.",
            hint="pass the collector's OUTPUT record (a JSON object), or leave --run-record out.",
            code="run-record-not-json",
        ) from None
    if isinstance(document, dict) and isinstance(document.get("OUTPUT"), dict):
        document = document["OUTPUT"]
    if not isinstance(document, dict):
        raise IrrAuditError(
            f"run record {name} is a JSON {_json_type(document)}; the run record is a JSON object.",
            hint="pass the collector's OUTPUT record with --run-record (the dataset is the DATASET argument).",
            code="run-record-not-an-object",
        )
    inputs = document.get("inputResults")
    if inputs is not None and not isinstance(inputs, list):
        raise _bad_key(name, "inputResults", "a list of objects", inputs)
    return RunRecord(
        name=name,
        sha256=hashlib.sha256(data).hexdigest(),
        comments_saved=_count(document, "commentsSaved", name),
        duplicates_skipped=_count(document, "duplicatesSkipped", name),
        hidden_branches_remaining=_count(document, "hiddenBranchesRemaining", name),
        completion_reason=_text(document, "completionReason", name),
        status=_text(document, "status", name),
        is_complete=_flag(document, "isComplete", name),
        inputs=None if inputs is None else tuple(_input(at, entry, name) for at, entry in enumerate(inputs, 1)),
    )


def _input(position: int, entry: Any, name: str) -> InputResult:
    where = f"inputResults[{position - 1}]"
    if not isinstance(entry, dict):
        raise _bad_key(name, where, "an object", entry)
    url = next((entry[key] for key in INPUT_URL_KEYS if isinstance(entry.get(key), str)), None)
    return InputResult(
        position=position,
        url=url,
        comments_found=_count(entry, "commentsFound", name, where),
        comments_saved=_count(entry, "commentsSaved", name, where),
        status=_text(entry, "status", name, where),
        reason=_text(entry, "reason", name, where),
    )


def _count(document: dict[str, Any], key: str, name: str, where: str = "") -> int | None:
    value = document.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _bad_key(name, f"{where}.{key}" if where else key, "a whole number of at least 0 or null", value)
    if value >= LARGEST_COUNT:
        raise _bad_key(name, f"{where}.{key}" if where else key, "a whole number below 2^53", value)
    return value


def _flag(document: dict[str, Any], key: str, name: str) -> bool | None:
    value = document.get(key)
    if value is None or isinstance(value, bool):
        return value
    raise _bad_key(name, key, "true, false or null", value)


def _text(document: dict[str, Any], key: str, name: str, where: str = "") -> str | None:
    value = document.get(key)
    if value is None or isinstance(value, str):
        return value
    raise _bad_key(name, f"{where}.{key}" if where else key, "text or null", value)


def _bad_key(name: str, key: str, expected: str, value: Any) -> IrrAuditError:
    return IrrAuditError(
        f"run record {name}: key {key} must be {expected} (got {quoted(_json_text(value))}).",
        hint="pass the collector's own OUTPUT record unchanged, or leave --run-record out.",
        code="run-record-invalid",
    )
