"""The sample step (DOMAIN.md, procedure steps 2 to 4): from the collector's items
to a working ledger of usable units, the missingness log of the rest, a
completeness verdict, a reproducible draw and one blank coding sheet per coder.

Everything above "The sample folder" is pure: records in, records and bytes out.
The last section writes the folder and reads its ledger back for `join --sample`.

Every dataset item ends up exactly once: as the ledger row of its unit, or as one
row of the missingness log (duplicate, conflict, missing_id, or why its unit
cannot be coded). An input the collector failed to collect is one more log row.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, NamedTuple

from irr_audit import __version__, runfolder
from irr_audit.collector import Dataset, InputResult, Item, RunRecord, quoted
from irr_audit.errors import IrrAuditError, OutputError, UsageError
from irr_audit.limits import json_lines, load_json, load_json_line
from irr_audit.missingness import LOG_COLUMNS, Reason, count_phrase
from irr_audit.outputs import csv_text, refuse_unsafe_outputs, spreadsheet_safe
from irr_audit.report import render_json
from irr_audit.rules import Rule
from irr_audit.runfolder import (
    files_read,
    listed,
    occupants,
    recorded_files,
    replace_folder,
    run_mismatches,
)

PLATFORM_STATUSES = ("ok", "deleted", "removed")
# What Reddit shows in place of a comment's text once it is gone; "[deleted]" and
# "[removed]" in the API, the longer phrases in the newer web pages.
PLACEHOLDER_BODY = re.compile(
    r"\[\s*(deleted|removed)(\s+by\s+[a-z ]+)?\s*\]"
    r"|(comment\s+)?(deleted\s+by\s+(the\s+)?user|removed\s+by\s+(a\s+)?(moderator|reddit))",
    re.IGNORECASE,
)
INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff"  # zero-width characters that str.strip() keeps
SHEET_COLUMNS = (
    "comment_id",
    "post_id",
    "url",
    "body",
    "code",
    "note",
    "rule",
    "rule_version",
    "allowed_codes",
    "coder",
)
LEDGER_COLUMNS = (
    "comment_id",
    "in_sample",
    "post_id",
    "url",
    "author",
    "status",
    "status_reason",
    "observed_at",
    "item",
    "copies",
    "body",
)
CODER_NAME = re.compile(r"[^\W][\w.-]{0,99}")  # a sheet file name: at most 100 characters and .xlsx
RESERVED_CODERS = ("comment_id", "fully_coded")
# A fixed time for the workbook's metadata: the same sample gives the same bytes.
FIXED_TIMESTAMP = "2000-01-01T00:00:00Z"


class LogRow(NamedTuple):
    """One row of the missingness log, in LOG_COLUMNS order."""

    sheet: str
    coder: str
    row: int | None
    comment_id: str
    raw_value: str
    reason: str
    detail: str


@dataclass(frozen=True)
class LedgerUnit:
    """One usable unit: a unique known comment id with the text the coders see."""

    comment_id: str
    post_id: str
    url: str
    author: str
    status: str
    status_reason: str
    observed_at: str
    body: str
    item: int  # where the copy used is in the dataset (array position, line or CSV row)
    copies: int  # how many items had this id (all with the same body)

    def record(self, in_sample: bool) -> dict[str, Any]:
        values = {name: getattr(self, name) for name in LEDGER_COLUMNS if name != "in_sample"}
        return {**values, "in_sample": in_sample}


@dataclass(frozen=True)
class Ledger:
    units: tuple[LedgerUnit, ...]
    log: tuple[LogRow, ...]
    items: int
    known_ids: int  # unique ids among the items, usable or not

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(unit.comment_id for unit in self.units)


# --- the ledger: de-duplicate, exclude, log -------------------------------------------


def build_ledger(dataset: Dataset, run_record: RunRecord | None = None) -> Ledger:
    """Items -> one ledger row per usable unique id, and a log row for every other item."""
    log: list[LogRow] = []
    groups: dict[str, list[Item]] = {}
    for item in dataset.items:
        comment_id = (item.comment_id or "").strip()
        if comment_id:
            groups.setdefault(comment_id, []).append(item)
        else:
            log.append(_missing_id_row(dataset.name, item))
    urls = _post_urls(run_record)
    units = []
    for comment_id, group in groups.items():
        if _conflicting_fields(group):
            log.extend(_conflict_rows(dataset.name, comment_id, group))
            continue
        first = group[0]
        log.extend(_duplicate_rows(dataset.name, comment_id, group))
        excluded = exclusion(first)
        if excluded is not None:
            reason, raw_value, detail = excluded
            log.append(LogRow(dataset.name, "", first.position, comment_id, raw_value, reason.value, detail))
            continue
        units.append(_unit(comment_id, first, len(group), urls))
    log.sort(key=lambda row: row.row or 0)
    return Ledger(units=tuple(units), log=tuple(log), items=len(dataset.items), known_ids=len(groups))


def exclusion(item: Item) -> tuple[Reason, str, str] | None:
    """Why an item's unit cannot be coded (reason, raw value, detail), or None when it can."""
    status = (item.status or "").strip().casefold()
    raw_status = item.status or ""
    if status not in PLATFORM_STATUSES:
        detail = "status is missing" if not status else f"status {quoted(raw_status)} is not one the collector writes"
        return Reason.INVALID_STATUS, raw_status, detail + "; expected ok, deleted or removed"
    if status == "deleted":
        return Reason.DELETED, raw_status, _status_detail("deleted", item)
    if status == "removed":
        return Reason.REMOVED, raw_status, _status_detail("removed", item)
    body = item.body or ""
    if not re.sub(f"[\\s{INVISIBLE}]", "", body):
        what = "missing" if item.body is None else "empty or only whitespace"
        return Reason.BLANK_BODY, body, f"body is {what}: there is no text to code"
    if PLACEHOLDER_BODY.fullmatch(body.strip()):
        return Reason.PLACEHOLDER_BODY, body, "body is the platform's placeholder for deleted or removed text"
    return None


def _status_detail(status: str, item: Item) -> str:
    detail = f"the collector marked the comment {status}"
    return detail + (f": {item.status_reason}" if item.status_reason else "")


def _missing_id_row(sheet: str, item: Item) -> LogRow:
    if item.not_an_object:
        detail = f"item is a JSON {item.not_an_object}, not an object, so it has no commentId"
        return LogRow(sheet, "", item.position, "", item.raw, Reason.MISSING_ID.value, detail)
    if item.id_problem:
        return LogRow(sheet, "", item.position, "", item.raw, Reason.MISSING_ID.value, item.id_problem)
    detail = "commentId is missing or null" if item.comment_id is None else "commentId is blank"
    return LogRow(sheet, "", item.position, "", item.comment_id or "", Reason.MISSING_ID.value, detail)


def _conflicting_fields(group: list[Item]) -> list[str]:
    """The fields on which copies of one id disagree: body, status or postId."""
    differing = []
    for name, label in (("body", "body"), ("status", "status"), ("post_id", "postId")):
        if len({_comparable(name, getattr(item, name)) for item in group}) > 1:
            differing.append(label)
    return differing


def _comparable(name: str, value: str | None) -> str:
    text = value or ""
    return text.strip().casefold() if name == "status" else text


def _conflict_rows(sheet: str, comment_id: str, group: list[Item]) -> list[LogRow]:
    positions = ", ".join(str(item.position) for item in group)
    fields = " and ".join(_conflicting_fields(group))
    detail = (
        f"comment id is in items {positions} with a different {fields}; "
        "none is used: check the collection, then keep the right copy"
    )
    return [
        LogRow(sheet, "", item.position, comment_id, item.body or "", Reason.CONFLICT.value, detail) for item in group
    ]


def _duplicate_rows(sheet: str, comment_id: str, group: list[Item]) -> list[LogRow]:
    first = group[0].position
    detail = f"repeats item {first} with the same body; item {first} is the unit"
    return [
        LogRow(sheet, "", item.position, comment_id, item.body or "", Reason.DUPLICATE.value, detail)
        for item in group[1:]
    ]


def _post_urls(run_record: RunRecord | None) -> dict[str, str]:
    """Post id -> the post URL the collector was given, where the URL names the post."""
    if run_record is None or not run_record.inputs:
        return {}
    return {entry.post_id: entry.url for entry in run_record.inputs if entry.post_id and entry.url}


def _unit(comment_id: str, item: Item, copies: int, post_urls: dict[str, str]) -> LedgerUnit:
    post_id = (item.post_id or "").strip()
    return LedgerUnit(
        comment_id=comment_id,
        post_id=post_id,
        url=item.url or post_urls.get(post_id, ""),
        author=item.author or "",
        status=item.status or "",
        status_reason=item.status_reason or "",
        observed_at=item.observed_at or "",
        body=item.body or "",
        item=item.position,
        copies=copies,
    )


def collection_failures(run_record: RunRecord | None) -> list[LogRow]:
    """One log row per input the collector failed to collect (it has no items to log)."""
    if run_record is None or not run_record.inputs:
        return []
    rows = []
    for entry in run_record.inputs:
        if input_state(entry) is InputState.FAILED:
            detail = f"{entry.label} failed to collect: status {quoted(entry.status or '')}"
            detail += f", reason {quoted(entry.reason)}" if entry.reason else ""
            rows.append(
                LogRow(run_record.name, "", entry.position, "", entry.url or "", Reason.COLLECTION_FAILED.value, detail)
            )
    return rows


# --- completeness: is this the whole thread? --------------------------------------------


class Verdict(str, Enum):
    COMPLETE = "complete"
    PARTIAL = "partial"
    UNKNOWN = "unknown"

    @property
    def statement(self) -> str:
        return {
            Verdict.COMPLETE: "complete",
            Verdict.PARTIAL: "a trial sample, not the whole thread",
            Verdict.UNKNOWN: "completeness unknown",
        }[self]


class InputState(str, Enum):
    COMPLETE = "complete"
    PARTIAL = "partial"
    FAILED = "failed"
    UNKNOWN = "unknown"


COMPLETE_STATUSES = ("complete", "completed", "ok", "success", "succeeded", "done", "finished", "full")
FAILED_WORDS = re.compile(r"fail|error|abort|timed?[\s_-]?out", re.IGNORECASE)
PARTIAL_WORDS = re.compile(r"partial|limit|truncat|incomplete|max", re.IGNORECASE)


def input_state(entry: InputResult) -> InputState:
    """An input's own status, read from its status and reason words."""
    status = (entry.status or "").strip().casefold()
    words = f"{entry.status or ''} {entry.reason or ''}"
    if FAILED_WORDS.search(words):
        return InputState.FAILED
    if PARTIAL_WORDS.search(words):
        return InputState.PARTIAL
    if status in COMPLETE_STATUSES:
        return InputState.COMPLETE
    return InputState.UNKNOWN


@dataclass(frozen=True)
class Completeness:
    verdict: Verdict
    reasons: tuple[str, ...]
    run: dict[str, Any] | None
    inputs: tuple[dict[str, Any], ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict.value,
            "statement": self.verdict.statement,
            "reasons": list(self.reasons),
            "run": self.run,
            "inputs": list(self.inputs),
        }


def assess_completeness(run_record: RunRecord | None) -> Completeness:
    """Thread completeness, kept apart from run completion (DOMAIN.md): any sign
    that a thread was cut makes a trial sample; no evidence is never "complete"."""
    if run_record is None:
        return Completeness(Verdict.UNKNOWN, ("no run record was given (--run-record)",), None, ())
    inputs = run_record.inputs or ()
    states = [input_state(entry) for entry in inputs]
    cut, unknown = [], []
    for entry, state in zip(inputs, states):
        said = f"status {quoted(entry.status or '')}" + (f", reason {quoted(entry.reason)}" if entry.reason else "")
        if state is InputState.FAILED:
            cut.append(f"{entry.label} failed to collect ({said})")
        elif state is InputState.PARTIAL:
            run_says = "the run reports isComplete: true, but " if run_record.is_complete else ""
            cut.append(f"{run_says}{entry.label} says {said}")
        elif state is InputState.UNKNOWN:
            unknown.append(f"{entry.label} has {said}, which does not say whether its thread is complete")
    if run_record.hidden_branches_remaining:
        cut.append(
            f"hiddenBranchesRemaining is {run_record.hidden_branches_remaining}: "
            "branches of the thread were never loaded"
        )
    if run_record.is_complete is False:
        cut.append(
            "the run reports isComplete: false"
            + (f" (completionReason {quoted(run_record.completion_reason)})" if run_record.completion_reason else "")
        )
    if run_record.is_complete is None:
        unknown.append("the run record has no isComplete")
    if not inputs:
        unknown.append("the run record has no inputResults, so no input's status is known")
    if cut:
        verdict, reasons = Verdict.PARTIAL, cut
    elif unknown:
        verdict, reasons = Verdict.UNKNOWN, unknown
    else:
        verdict, reasons = Verdict.COMPLETE, ["the run and every input report a complete collection"]
    run = {
        "isComplete": run_record.is_complete,
        "status": run_record.status,
        "completionReason": run_record.completion_reason,
        "commentsSaved": run_record.comments_saved,
        "duplicatesSkipped": run_record.duplicates_skipped,
        "hiddenBranchesRemaining": run_record.hidden_branches_remaining,
    }
    per_input = tuple(
        {
            "input": entry.position,
            "url": entry.url,
            "commentsFound": entry.comments_found,
            "commentsSaved": entry.comments_saved,
            "status": entry.status,
            "reason": entry.reason,
            "completeness": state.value,
        }
        for entry, state in zip(inputs, states)
    )
    return Completeness(verdict, tuple(reasons), run, per_input)


def count_checks(dataset: Dataset, run_record: RunRecord | None) -> list[dict[str, Any]]:
    """The run record's counts against what the tool counted itself; each says whether they agree."""
    if run_record is None:
        return []
    checks = []

    def check(name: str, recorded: int | None, counted: int) -> None:
        if recorded is not None:
            checks.append({"check": name, "record": recorded, "tool": counted, "agrees": recorded == counted})

    check("commentsSaved vs items in the dataset", run_record.comments_saved, len(dataset.items))
    inputs = run_record.inputs or ()
    saved = [entry.comments_saved for entry in inputs]
    if inputs and None not in saved and run_record.comments_saved is not None:
        checks.append(
            {
                "check": "commentsSaved vs the sum of inputResults[].commentsSaved",
                "record": run_record.comments_saved,
                "tool": sum(saved),  # type: ignore[arg-type]
                "agrees": run_record.comments_saved == sum(saved),  # type: ignore[arg-type]
            }
        )
    per_post: dict[str, int] = {}
    for item in dataset.items:
        post_id = (item.post_id or "").strip()
        per_post[post_id] = per_post.get(post_id, 0) + 1
    for entry in inputs:
        if entry.post_id:
            check(
                f"{entry.label} commentsSaved vs items with postId {entry.post_id}",
                entry.comments_saved,
                per_post.get(entry.post_id, 0),
            )
    return checks


# --- the draw --------------------------------------------------------------------------


def _rank(*parts: object) -> str:
    # SHA-256 of the seed and the id: the same on every machine and Python version,
    # unlike random.sample or numpy's streams, which may change between releases.
    return hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Draw:
    ids: tuple[str, ...]  # the sampled ids, in ledger (dataset) order
    record: dict[str, Any] = field(default_factory=dict)


def draw_sample(population: Sequence[str], size: int | None, seed: int | None) -> Draw:
    """A simple random sample without replacement, reproducible from ``seed``.

    Units are ranked by sha256(seed, comment id) and the first ``size`` taken.
    Without ``size`` every unit is taken (no draw).
    """
    if size is None:
        record = {
            "method": "all usable units (no draw)",
            "seed": seed,
            "size_requested": None,
            "size": len(population),
            "population": len(population),
        }
        return Draw(tuple(population), record)
    if seed is None:
        raise UsageError(
            "--size draws a random sample, which needs --seed to be reproducible.",
            hint="add --seed with any whole number, e.g. --seed 20240601, and keep it with the audit.",
            code="usage-size-needs-seed",
        )
    if size < 1:
        raise UsageError(
            f"--size must be at least 1 (got {size}).", hint="pass --size N with N >= 1.", code="usage-size"
        )
    chosen = set(sorted(population, key=lambda comment_id: _rank(seed, comment_id))[:size])
    record = {
        "method": "simple random sample without replacement: units ranked by sha256(seed, comment_id), "
        "the first `size` taken, listed in dataset order",
        "seed": seed,
        "size_requested": size,
        "size": len(chosen),
        "population": len(population),
    }
    if size > len(population):
        record["note"] = f"--size {size} is more than the {len(population)} usable units: every unit is in the sample"
    return Draw(tuple(comment_id for comment_id in population if comment_id in chosen), record)


def coder_order(ids: Sequence[str], coder: str, seed: int | None, shuffle: bool) -> list[str]:
    """The order of units in one coder's sheet: the ledger's, or shuffled per coder from the seed."""
    if not shuffle:
        return list(ids)
    return sorted(ids, key=lambda comment_id: _rank(seed, coder, comment_id))


# --- coders and sheets --------------------------------------------------------------------


class SheetFormat(str, Enum):
    CSV = "csv"
    XLSX = "xlsx"


def parse_coders(text: str) -> list[str]:
    """`alice,bob` -> ["alice", "bob"]; names become file names, so they are checked."""
    names = [name.strip() for name in text.split(",")]
    if any(not name for name in names) or len(names) < 2:
        raise UsageError(
            f"--coders needs two or more names separated by commas (got {quoted(text)}).",
            hint="for example --coders alice,bob.",
            code="usage-coders",
        )
    seen: dict[str, str] = {}
    for name in names:
        if not CODER_NAME.fullmatch(name) or name.casefold() in RESERVED_CODERS:
            raise UsageError(
                f"coder name {quoted(name)} cannot name a sheet file.",
                hint="use at most 100 letters, digits, '_', '-' and '.', starting with a letter or digit "
                "(and not comment_id or fully_coded).",
                code="usage-coders",
            )
        if name.casefold() in seen:
            raise UsageError(
                f"--coders names {seen[name.casefold()]!r} and {name!r}, the same coder on a "
                "case-insensitive file system.",
                hint="give every coder a distinct name.",
                code="usage-coders",
            )
        seen[name.casefold()] = name
    return names


def allowed_codes(rule: Rule) -> tuple[str, ...]:
    return (*rule.categories, *rule.missing_codes)


def sheet_rows(units: Sequence[LedgerUnit], rule: Rule, coder: str) -> list[tuple[str, ...]]:
    """One row per unit: the same text and context for every coder, an empty code
    and note, the rule and the allowed codes. Nothing from any other coder."""
    allowed = " | ".join(allowed_codes(rule))
    return [
        (unit.comment_id, unit.post_id, unit.url, unit.body, "", "", rule.id, f"v{rule.version}", allowed, coder)
        for unit in units
    ]


def check_csv_ids(ids: Iterable[str]) -> None:
    """A CSV cell that looks like a formula gets a leading quote, so such an id
    would not come back from a filled CSV sheet as it is in the ledger."""
    altered = [comment_id for comment_id in ids if spreadsheet_safe(comment_id) != comment_id]
    if altered:
        raise UsageError(
            f"comment id {quoted(altered[0])} starts like a spreadsheet formula; in a CSV sheet it would "
            f"be written with a leading quote and no longer match the ledger ({len(altered)} such ids).",
            hint="pass --sheet-format xlsx, which keeps every id as text exactly.",
            code="usage-csv-formula-id",
        )


# What an XLSX cell cannot keep exactly: C0 controls but tab and line feed (XML cannot hold
# them; openpyxl refuses them), a carriage return (XML reads it back as a line feed), and
# text like "_x001B_", which Excel shows as the character it escapes.
XLSX_ALTERS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\r\ufffe\uffff]|_x[0-9A-Fa-f]{4}_")


def check_xlsx_ids(ids: Iterable[str]) -> None:
    """An id an XLSX sheet would not give back exactly could not be matched to the ledger."""
    altered = [comment_id for comment_id in ids if XLSX_ALTERS.search(comment_id)]
    if altered:
        found = XLSX_ALTERS.search(altered[0]).group()  # type: ignore[union-attr]
        what = f"the character U+{ord(found):04X}" if len(found) == 1 else f"the text {found!r} (an XLSX escape)"
        raise UsageError(
            f"comment id {quoted(altered[0])} holds {what}, which an XLSX sheet does not keep exactly, so the "
            f"filled sheet would no longer match the ledger ({len(altered)} such ids).",
            hint="pass --sheet-format csv, which keeps every character of an id.",
            code="usage-xlsx-id",
        )


def render_csv_sheet(rows: Sequence[Sequence[str]]) -> bytes:
    # The byte-order mark makes Excel read UTF-8 (emoji, right-to-left text); read_sheet skips it.
    return ("\ufeff" + csv_text(SHEET_COLUMNS, rows)).encode("utf-8")


def render_xlsx_sheet(rows: Sequence[Sequence[str]], rule: Rule) -> tuple[bytes, list[str]]:
    """The workbook's bytes, and the ids whose body had characters XLSX cannot hold.

    Every cell is stored as text: a body such as "=1+1" is shown, never run, and
    its text is kept exactly. A header note on the code column lists the allowed
    codes, and data validation offers them in the column.
    """
    from openpyxl import Workbook
    from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
    from openpyxl.comments import Comment
    from openpyxl.styles import Alignment, Font
    from openpyxl.worksheet.datavalidation import DataValidation

    workbook = Workbook()
    sheet = workbook.active
    sheet.title = "coding"
    replaced: list[str] = []
    for column, name in enumerate(SHEET_COLUMNS, start=1):
        sheet.cell(row=1, column=column, value=name).font = Font(bold=True)
    for row_number, row in enumerate(rows, start=2):
        for column, value in enumerate(row, start=1):
            text, count = ILLEGAL_CHARACTERS_RE.subn("\ufffd", value)
            if count and row[0] not in replaced:
                replaced.append(row[0])
            cell = sheet.cell(row=row_number, column=column)
            cell.value = text
            cell.data_type = "s"  # text, even when it starts with "="
    code_column = SHEET_COLUMNS.index("code") + 1
    code_letter = sheet.cell(row=1, column=code_column).column_letter
    codes = allowed_codes(rule)
    sheet.cell(row=1, column=code_column).comment = Comment(_code_note(rule), "irr-audit", width=360, height=160)
    validation = DataValidation(
        type="list",
        formula1=_validation_list(workbook, rule),
        allow_blank=True,
        showErrorMessage=True,
        errorTitle="Not an allowed code",
        error=f"Use one of: {', '.join(codes)}"[:255],
    )
    sheet.add_data_validation(validation)
    validation.add(f"{code_letter}2:{code_letter}{max(len(rows), 1) + 1}")
    sheet.freeze_panes = "B2"
    body_letter = sheet.cell(row=1, column=SHEET_COLUMNS.index("body") + 1).column_letter
    sheet.column_dimensions[body_letter].width = 80
    for cell in sheet[body_letter][1:]:
        cell.alignment = Alignment(wrap_text=True, vertical="top")
    buffer = io.BytesIO()
    workbook.save(buffer)
    return _reproducible_zip(buffer.getvalue()), replaced


def _code_note(rule: Rule) -> str:
    lines = [f"Rule {rule.label}. Allowed codes:"]
    lines += [f"{code.code}" + (f": {code.label}" if code.label else "") for code in rule.codes]
    lines += [f"{missing}: you cannot tell" for missing in rule.missing_codes]
    lines.append("The rule's definitions are in rule.yaml in the sample folder.")
    return "\n".join(lines)


def _validation_list(workbook: Any, rule: Rule) -> str:
    """The codes offered in the code column: listed in the validation itself (Excel
    takes up to 255 characters, without commas or quotes), or else on a second worksheet."""
    codes = allowed_codes(rule)
    inline = ",".join(codes)
    if len(inline) <= 255 and not any("," in code or '"' in code for code in codes):
        return f'"{inline}"'
    codes_sheet = workbook.create_sheet("codes")
    for row, code in enumerate(codes, start=1):
        cell = codes_sheet.cell(row=row, column=1)
        cell.value = code
        cell.data_type = "s"
    return f"codes!$A$1:$A${len(codes)}"


def _reproducible_zip(data: bytes) -> bytes:
    """The same workbook gives the same bytes: fixed entry times and metadata, and
    no compression (zlib builds differ between machines)."""
    source = zipfile.ZipFile(io.BytesIO(data))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as target:
        for info in source.infolist():
            content = source.read(info.filename)
            if info.filename == "docProps/core.xml":
                content = re.sub(
                    rb"(<dcterms:(created|modified)[^>]*>)[^<]*", rb"\g<1>" + FIXED_TIMESTAMP.encode(), content
                )
            fixed = zipfile.ZipInfo(info.filename, date_time=(1980, 1, 1, 0, 0, 0))
            fixed.external_attr = 0o644 << 16
            target.writestr(fixed, content)
    return buffer.getvalue()


# --- the whole sample, as files -----------------------------------------------------------

LEDGER_CSV = "ledger.csv"
LEDGER_JSONL = "ledger.jsonl"
LOG_CSV = "missingness_log.csv"
LOG_JSONL = "missingness_log.jsonl"
RECORD = "sample.json"
RULE_COPY = "rule.yaml"
SHEETS = "sheets"


@dataclass(frozen=True)
class SampleRequest:
    coders: tuple[str, ...]
    size: int | None = None
    seed: int | None = None
    shuffle: bool = False
    sheet_format: SheetFormat = SheetFormat.CSV


@dataclass(frozen=True)
class Sample:
    """What `irr-audit sample` writes: file name (relative to the folder) -> bytes,
    and the record that sample.json holds."""

    files: dict[str, bytes]
    record: dict[str, Any]
    ledger: Ledger
    draw: Draw
    completeness: Completeness
    log: tuple[LogRow, ...]


def build_sample(
    dataset: Dataset, run_record: RunRecord | None, rule: Rule, rule_bytes: bytes, request: SampleRequest
) -> Sample:
    """Dataset + run record + rule -> every file of the sample folder. Pure."""
    ledger = build_ledger(dataset, run_record)
    log = (*ledger.log, *collection_failures(run_record))
    if not dataset.items:
        raise IrrAuditError(
            f"dataset {dataset.name} has no items.",
            hint="check that the collector's run saved comments, and export its dataset again.",
            code="sample-no-units",
        )
    if not ledger.units:
        raise IrrAuditError(
            f"dataset {dataset.name} has no usable unit: all {ledger.items} items are unusable "
            f"({count_phrase(_reason_counts(log)) or 'no items'}).",
            hint="check that DATASET is the collector's dataset and that its items have commentId, body and status ok.",
            code="sample-no-units",
        )
    if request.shuffle and request.seed is None:
        raise UsageError(
            "--shuffle needs --seed so that every coder's order can be reproduced.",
            hint="add --seed with any whole number.",
            code="usage-shuffle-needs-seed",
        )
    draw = draw_sample(ledger.ids, request.size, request.seed)
    if request.sheet_format is SheetFormat.CSV:
        check_csv_ids(draw.ids)
    else:
        check_xlsx_ids(draw.ids)
    by_id = {unit.comment_id: unit for unit in ledger.units}
    sampled = set(draw.ids)
    files: dict[str, bytes] = {
        LEDGER_JSONL: _jsonl(unit.record(unit.comment_id in sampled) for unit in ledger.units),
        LEDGER_CSV: csv_text(
            LEDGER_COLUMNS, (_ledger_csv_row(unit, unit.comment_id in sampled) for unit in ledger.units)
        ).encode("utf-8"),
        LOG_JSONL: _jsonl(row._asdict() for row in log),
        LOG_CSV: csv_text(LOG_COLUMNS, log).encode("utf-8"),
        RULE_COPY: rule_bytes,
    }
    sheets = []
    for coder in request.coders:
        units = [by_id[comment_id] for comment_id in coder_order(draw.ids, coder, request.seed, request.shuffle)]
        rows = sheet_rows(units, rule, coder)
        path = f"{SHEETS}/{coder}.{request.sheet_format.value}"
        replaced: list[str] = []
        if request.sheet_format is SheetFormat.XLSX:
            files[path], replaced = render_xlsx_sheet(rows, rule)
        else:
            files[path] = render_csv_sheet(rows)
        sheet = {"coder": coder, "file": path, "sha256": hashlib.sha256(files[path]).hexdigest()}
        if replaced:
            sheet["bodies_with_characters_xlsx_cannot_hold"] = {
                "replaced_by": "U+FFFD",
                "comment_ids": replaced,
                "note": "the exact text is in ledger.jsonl",
            }
        sheets.append(sheet)
    completeness = assess_completeness(run_record)
    record = _sample_record(dataset, run_record, rule, request, ledger, log, draw, completeness, sheets, files)
    record["run"] = runfolder.run_record(files)  # sha256 of every other file: a reader refuses a folder mixing two runs
    files[RECORD] = render_json(record).encode("utf-8")
    return Sample(files=files, record=record, ledger=ledger, draw=draw, completeness=completeness, log=log)


def _sample_record(
    dataset: Dataset,
    run_record: RunRecord | None,
    rule: Rule,
    request: SampleRequest,
    ledger: Ledger,
    log: Sequence[LogRow],
    draw: Draw,
    completeness: Completeness,
    sheets: list[dict[str, Any]],
    files: dict[str, bytes],
) -> dict[str, Any]:
    checks = count_checks(dataset, run_record)
    return {
        "tool": {"name": "irr-audit", "version": __version__},
        "rule": {
            "id": rule.id,
            "version": rule.version,
            "scale": rule.scale.value,
            "digest": rule.digest,
            "allowed_codes": list(allowed_codes(rule)),
        },
        "dataset": {"file": dataset.name, "format": dataset.format, "sha256": dataset.sha256},
        "run_record": None if run_record is None else {"file": run_record.name, "sha256": run_record.sha256},
        "counts": {
            "items": ledger.items,
            "unique_ids": ledger.known_ids,
            "usable_units": len(ledger.units),
            "sampled_units": len(draw.ids),
            "log_rows": _reason_counts(log),
            "duplicates_skipped_by_collector": None if run_record is None else run_record.duplicates_skipped,
        },
        "count_checks": checks,
        "count_mismatches": [check for check in checks if not check["agrees"]],
        "completeness": completeness.to_dict(),
        "draw": {**draw.record, "order": _order_text(request)},
        "coders": list(request.coders),
        "sheets": sheets,
        "sheet_format": request.sheet_format.value,
        "ledger": {
            "file": LEDGER_JSONL,
            "sha256": hashlib.sha256(files[LEDGER_JSONL]).hexdigest(),
            "sample_ids": list(draw.ids),
        },
        "missingness_log": {"file": LOG_JSONL, "rows": len(log)},
    }


def _ledger_csv_row(unit: LedgerUnit, in_sample: bool) -> list[Any]:
    record = unit.record(in_sample)
    return [("true" if in_sample else "false") if name == "in_sample" else record[name] for name in LEDGER_COLUMNS]


def _order_text(request: SampleRequest) -> str:
    if request.shuffle:
        return f"shuffled per coder: units ranked by sha256(seed, coder, comment_id), seed {request.seed}"
    return "dataset order, the same for every coder"


def _reason_counts(log: Iterable[LogRow]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in log:
        counts[row.reason] = counts.get(row.reason, 0) + 1
    return {reason.value: counts[reason.value] for reason in Reason if reason.value in counts}


def _jsonl(records: Iterable[dict[str, Any]]) -> bytes:
    lines = []
    for record in records:
        line = json.dumps(record, ensure_ascii=False)
        # Characters some readers take as line breaks stay escaped: one record per line.
        for char in ("\x85", "\u2028", "\u2029"):
            line = line.replace(char, f"\\u{ord(char):04x}")
        lines.append(line + "\n")
    return "".join(lines).encode("utf-8")


def summary_lines(sample: Sample) -> list[str]:
    """A few lines for stderr: counts by reason, the draw, completeness, count mismatches."""
    record = sample.record
    counts = record["counts"]
    reasons = count_phrase(counts["log_rows"])
    lines = [
        f"{counts['items']} items, {counts['unique_ids']} unique comment ids: {counts['usable_units']} usable units, "
        f"{sum(counts['log_rows'].values())} rows in the missingness log" + (f" ({reasons})." if reasons else "."),
        f"sample: {counts['sampled_units']} of {counts['usable_units']} units"
        + (f", seed {record['draw']['seed']}" if record["draw"]["seed"] is not None else "")
        + f"; one sheet each for {', '.join(record['coders'])}.",
        _completeness_line(sample.completeness),
    ]
    if "note" in record["draw"]:
        lines.append(f"note: {record['draw']['note']}.")
    for check in record["count_mismatches"]:
        lines.append(
            f"count mismatch: {check['check']}: the run record says {check['record']}, "
            f"the tool counted {check['tool']}."
        )
    return lines


def _completeness_line(completeness: Completeness) -> str:
    statement = completeness.verdict.statement
    prefix = statement if completeness.verdict is Verdict.UNKNOWN else f"thread completeness: {statement}"
    return f"{prefix}: {'; '.join(completeness.reasons)}."


# --- the sample folder (I/O) ----------------------------------------------------------------


def write_sample_dir(sample: Sample, out: Path, inputs: Sequence[Path], force: bool) -> list[Path]:
    """Write the sample's files as the whole of folder ``out``. Without ``force`` the folder
    may hold only what this sample writes, byte for byte: a sheet a coder filled, the
    files of another draw, or files sample did not write are refused."""
    refuse_unsafe_outputs(files_read(inputs), folders=[out])
    check_sample_out(out, sample, force)
    return replace_folder(out, sample.files)


def check_sample_out(out: Path, sample: Sample, force: bool) -> list[str]:
    """Refuse an --out folder holding files this sample would not write identically
    (unless ``force``: they are then replaced or deleted, and listed in the return
    value). A folder is never deleted."""
    found = occupants(out, dict.fromkeys(sample.files))
    if found.folders:
        raise OutputError(
            f"--out {out} holds the folder {listed(found.folders)}, which sample did not write; sample replaces "
            "its output folder as a whole and never deletes a folder it did not write.",
            hint="move the folder out, or choose another --out folder.",
            code="output-folder-not-ours",
        )
    differing = [name for name in sorted(sample.files) if _differs(out / name, sample.files[name])]
    if force:
        return sorted({*differing, *found.foreign})
    if differing:
        name = next((name for name in differing if name.startswith(SHEETS)), differing[0])
        more = len(differing) - 1
        raise OutputError(
            f"{out / name} exists and differs from what this sample would write"
            + (" (a coder may have filled it)" if name.startswith(SHEETS) else "")
            + (f"; {more} more file{'s' if more != 1 else ''} differ too" if more else "")
            + ".",
            hint="choose a new --out folder, or pass --force to replace the whole sample folder.",
            code="output-sample-exists",
        )
    if found.foreign:
        count = len(found.foreign)
        raise OutputError(
            f"--out {out} holds {count} file{'s' if count != 1 else ''} this sample would not "
            f"write: {listed(found.foreign)}.",
            hint="move the files out or choose another --out folder; --force replaces the folder and deletes them.",
            code="output-folder-not-ours",
        )
    return []


def _differs(path: Path, data: bytes) -> bool:
    return (path.is_file() or path.is_symlink()) and (path.is_symlink() or path.read_bytes() != data)


@dataclass(frozen=True)
class SampleRef:
    """What `join --sample` takes from a sample folder."""

    folder: Path
    ids: tuple[str, ...]
    rule_id: str
    rule_version: int
    rule_digest: str
    ledger_sha256: str
    report: dict = field(default_factory=dict)  # what an audit report shows of the sample


def sample_report_section(record: dict) -> dict:
    """The part of sample.json an audit report shows: where the units came from and how complete they are."""
    completeness = record.get("completeness") or {}
    return {
        "dataset": (record.get("dataset") or {}).get("file"),
        "counts": record.get("counts", {}),
        "completeness": {key: completeness.get(key) for key in ("verdict", "statement", "reasons")},
        "count_mismatches": record.get("count_mismatches", []),
        "draw": record.get("draw", {}),
    }


def read_sample(folder: Path) -> SampleRef:
    """The sampled ids of a folder written by `irr-audit sample`, with its ledger checked unchanged."""
    record_path = folder / RECORD
    if not record_path.is_file():
        raise UsageError(
            f"{folder} is not a folder written by irr-audit sample (it has no {RECORD}).",
            hint="pass the folder given to irr-audit sample --out.",
            code="usage-not-a-sample-dir",
        )
    try:
        record = load_json(record_path.read_bytes(), f"{record_path}", own_file=True)
        rule = record["rule"]
        ledger = record["ledger"]
        ref = SampleRef(
            folder,
            tuple(str(i) for i in ledger["sample_ids"]),
            str(rule["id"]),
            int(rule["version"]),
            str(rule["digest"]),
            str(ledger["sha256"]),
            sample_report_section(record),
        )
        ledger_bytes = _ledger_path(folder, ledger["file"]).read_bytes()
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(
            f"{record_path} is not a readable sample record, or its ledger is missing ({type(exc).__name__}).",
            hint="run irr-audit sample again into a new folder.",
            code="sample-dir-invalid",
        ) from None
    if hashlib.sha256(ledger_bytes).hexdigest() != ref.ledger_sha256:
        raise UsageError(
            f"the ledger in {folder} changed since irr-audit sample wrote it.",
            hint="restore the ledger (its sha256 is in sample.json), or draw a new sample.",
            code="sample-ledger-changed",
        )
    ledger_ids = _ledger_ids(ledger_bytes, folder / str(ledger["file"]))
    missing = [comment_id for comment_id in ref.ids if comment_id not in ledger_ids]
    if missing:
        raise UsageError(
            f"{record_path} lists sampled id {quoted(missing[0])}, which is not in its ledger.",
            hint="run irr-audit sample again into a new folder.",
            code="sample-dir-invalid",
        )
    check_one_sample_run(folder, record)
    return ref


def _ledger_path(folder: Path, name: object) -> Path:
    """The ledger a sample record names: a regular file in the sample's folder, never a
    path out of it (a record inside a bundle is not trusted) nor a pipe that would block."""
    if not isinstance(name, str) or name in ("", ".", "..") or "/" in name or "\\" in name:
        raise ValueError("the ledger is not named as a file in the sample's folder")
    path = folder / name
    if path.is_symlink() or not path.is_file():
        raise OSError(f"{path} is not a regular file")
    return path


def _ledger_ids(data: bytes, path: Path) -> set[str]:
    """The comment ids of a sample ledger (one JSON object per line), or a UsageError
    naming the line that is not one."""
    try:
        lines = list(json_lines(data, f"{path}", own_file=True))
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"sample ledger {path} is not UTF-8 (byte {exc.start}).",
            hint="run irr-audit sample again into a new folder.",
            code="sample-dir-invalid",
        ) from None
    ids = set()
    for number, line in lines:
        try:
            entry = load_json_line(line, f"{path} line {number}", own_file=True)
        except ValueError:
            entry = None
        if not isinstance(entry, dict) or not isinstance(entry.get("comment_id"), str):
            raise UsageError(
                f"sample ledger {path}, line {number}, is not a JSON object with a comment_id.",
                hint="run irr-audit sample again into a new folder.",
                code="sample-dir-invalid",
            )
        ids.add(entry["comment_id"])
    return ids


def check_one_sample_run(folder: Path, record: dict[str, Any]) -> None:
    """Refuse a sample folder whose files are not those of the run sample.json records.
    The coding sheets are left out: coders may fill them in place. A sample.json
    written before run records is checked by its ledger's sha256 alone."""
    files = recorded_files(record)
    if files is None:
        return
    mismatches = run_mismatches(
        folder, {name: digest for name, digest in files.items() if not name.startswith(f"{SHEETS}/")}
    )
    if mismatches:
        first = mismatches[0]
        raise UsageError(
            f"{folder} does not hold one sample run: {first.file} {first.detail}; {RECORD} records run "
            f"{record['run']['id'][:12]}.",
            hint="restore the file from the sample that was drawn, or draw the sample again into a new folder.",
            code="sample-dir-not-one-run",
        )


def check_sample_rule(ref: SampleRef, rule: Rule) -> list[str]:
    """The rule given to join must be the one the sample's sheets were made for.
    Returns warnings (a same-version rule file whose bytes changed)."""
    if (ref.rule_id, ref.rule_version) != (rule.id, rule.version):
        raise UsageError(
            f"the sample in {ref.folder} was drawn for rule {ref.rule_id} v{ref.rule_version}, "
            f"but --rule is {rule.label}.",
            hint=f"pass --rule rules/{ref.rule_id}/v{ref.rule_version}.yaml, the rule the sheets were made for.",
            code="usage-sample-rule",
        )
    if ref.rule_digest != rule.digest:
        return [
            f"warning: {rule.source_name} is {rule.label} but its bytes differ from the rule file the "
            f"sample was drawn with ({ref.folder / RULE_COPY}); a released rule version should not change."
        ]
    return []


def sample_ids_for_join(folder: Path, rule_path: Path) -> tuple[SampleRef, list[str]]:
    """For `join --sample`: the sample (its ids and report section), checked against
    the rule given to join, and any warnings to show."""
    from irr_audit.rules import load_rule

    ref = read_sample(folder)
    warnings = check_sample_rule(ref, load_rule(rule_path))
    return ref, warnings
