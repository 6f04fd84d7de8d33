"""The working ledger (docs/procedure.md, steps 2 and 3): from the collector's items
to one row per usable unit, the missingness log of the rest, the run record's
counts checked against the tool's own, and the thread's completeness. Pure.

Every dataset item ends up exactly once: as the ledger row of its unit, or as one
row of the missingness log (duplicate, conflict, missing_id, or why its unit
cannot be coded). An input the collector failed to collect is one more log row.
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from enum import Enum
from typing import Any, NamedTuple

from irr_audit.io.collector import Dataset, InputResult, Item, RunRecord, quoted, reddit_key
from irr_audit.join.missingness import Reason

PLATFORM_STATUSES = ("ok", "deleted", "removed")
# What Reddit shows in place of a comment's text once it is gone; "[deleted]" and
# "[removed]" in the API, the longer phrases in the newer web pages.
PLACEHOLDER_BODY = re.compile(
    r"\[\s*(deleted|removed)(\s+by\s+[a-z ]+)?\s*\]"
    r"|(comment\s+)?(deleted\s+by\s+(the\s+)?user|removed\s+by\s+(a\s+)?(moderator|reddit))",
    re.IGNORECASE,
)
INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff"  # zero-width characters that str.strip() keeps
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
    "link",
    "parent_id",
    "parent_body",
    "thread_title",
)
UNIT_COLUMNS = tuple(name for name in LEDGER_COLUMNS if name != "in_sample")  # a LedgerUnit's own fields
IN_SAMPLE_AT = LEDGER_COLUMNS.index("in_sample")
_unit_values = operator.attrgetter(*UNIT_COLUMNS)
# A Reddit id: base 36, with its kind prefix (t1_ a comment, t3_ a post) or without.
REDDIT_ID = re.compile(r"(?:t[13]_)?([a-z0-9]{1,13})")
REDDIT_PERMALINK = "https://www.reddit.com/comments/{post}/_/{comment}/"


class LogRow(NamedTuple):
    """One row of the missingness log, in LOG_COLUMNS order."""

    sheet: str
    coder: str
    row: int | None
    comment_id: str
    raw_value: str
    reason: str
    detail: str


@dataclass(frozen=True, slots=True)  # a ledger may hold millions: no dict per unit
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
    link: str = ""  # where a coder reads the comment in its thread (unit_link)
    parent_id: str = ""
    parent_body: str = ""  # the text of the comment replied to, when the dataset holds it
    thread_title: str = ""

    def values(self) -> tuple[Any, ...]:
        """The unit's fields in the order of UNIT_COLUMNS."""
        return tuple(_unit_values(self))

    def record(self, in_sample: bool) -> dict[str, Any]:
        return {**dict(zip(UNIT_COLUMNS, self.values())), "in_sample": in_sample}


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
    groups: dict[str, list[Item]] = {}  # by the id compared (t1_abc and abc are one comment)
    for item in dataset.items:
        key = reddit_key(item.comment_id)
        if key:
            groups.setdefault(key, []).append(item)
        else:
            log.append(_missing_id_row(dataset.name, item))
    urls = _post_urls(run_record)
    # a body that is no text (a JSON object) is not shown to coders as a parent's text either
    bodies = {comment_id: group[0].body or "" for comment_id, group in groups.items() if not group[0].field_problem}
    units = []
    for group in groups.values():
        comment_id = (group[0].comment_id or "").strip()  # the id as its first item writes it
        if len(group) > 1 and _conflicting_fields(group):  # a lone item agrees with itself
            log.extend(_conflict_rows(dataset.name, comment_id, group))
            continue
        first = group[0]
        if len(group) > 1:
            log.extend(_duplicate_rows(dataset.name, comment_id, group))
        excluded = exclusion(first)
        if excluded is not None:
            reason, raw_value, detail = excluded
            log.append(LogRow(dataset.name, "", first.position, comment_id, raw_value, reason.value, detail))
            continue
        units.append(_unit(comment_id, first, len(group), urls, bodies))
    log.sort(key=lambda row: row.row or 0)
    return Ledger(units=tuple(units), log=tuple(log), items=len(dataset.items), known_ids=len(groups))


def exclusion(item: Item) -> tuple[Reason, str, str] | None:
    """Why an item's unit cannot be coded (reason, raw value, detail), or None when it can."""
    if item.field_problem:  # damaged data: said before what its status would say
        return Reason.INVALID_FIELD, item.raw, item.field_problem
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
    if name == "post_id":
        return reddit_key(text)
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
    return {reddit_key(entry.post_id): entry.url for entry in run_record.inputs if entry.post_id and entry.url}


def _unit(comment_id: str, item: Item, copies: int, post_urls: dict[str, str], bodies: dict[str, str]) -> LedgerUnit:
    post_id = (item.post_id or "").strip()
    parent_id = (item.parent_id or "").strip()
    url = item.url or post_urls.get(reddit_key(post_id), "")
    return LedgerUnit(
        comment_id=comment_id,
        post_id=post_id,
        url=url,
        author=item.author or "",
        status=item.status or "",
        status_reason=item.status_reason or "",
        observed_at=item.observed_at or "",
        body=item.body or "",
        item=item.position,
        copies=copies,
        link=unit_link(item.url, post_id, comment_id) or url,
        parent_id=parent_id,
        parent_body=parent_body(parent_id, bodies),
        thread_title=(item.thread_title or "").strip(),
    )


def unit_link(url: str | None, post_id: str, comment_id: str) -> str:
    """The comment's own link: the dataset's url, else a Reddit permalink built from
    postId and commentId when both are Reddit ids (the post's URL would not point at the
    comment); "" when neither is there.

    >>> unit_link(None, "t3_1gx7ka9", "kq3m1x0")
    'https://www.reddit.com/comments/1gx7ka9/_/kq3m1x0/'
    """
    if url:
        return url
    post, comment = REDDIT_ID.fullmatch(post_id), REDDIT_ID.fullmatch(comment_id)
    if post is None or comment is None:
        return ""
    return REDDIT_PERMALINK.format(post=post.group(1), comment=comment.group(1))


def parent_body(parent_id: str, bodies: dict[str, str]) -> str:
    """The text of the comment a unit replies to, looked up in the dataset by its id or
    Reddit fullname (t1_<id>); "" for a top-level comment (its parent is the post, t3_)
    or a parent the dataset does not hold."""
    if not parent_id or parent_id.startswith("t3_"):
        return ""
    if parent_id in bodies:
        return bodies[parent_id]
    return bodies.get(parent_id.removeprefix("t1_"), "")


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
    """Thread completeness, kept apart from run completion (docs/procedure.md, "The
    collector's output"): any sign that a thread was cut makes a trial sample; no
    evidence is never "complete"."""
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
    saved = [entry.comments_saved for entry in inputs if entry.comments_saved is not None]
    if inputs and len(saved) == len(inputs) and run_record.comments_saved is not None:
        checks.append(
            {
                "check": "commentsSaved vs the sum of inputResults[].commentsSaved",
                "record": run_record.comments_saved,
                "tool": sum(saved),
                "agrees": run_record.comments_saved == sum(saved),
            }
        )
    per_post: dict[str, int] = {}
    for item in dataset.items:
        post_id = reddit_key(item.post_id)  # t3_abc and abc are one post
        per_post[post_id] = per_post.get(post_id, 0) + 1
    for entry in inputs:
        if entry.post_id:
            check(
                f"{entry.label} commentsSaved vs items with postId {entry.post_id}",
                entry.comments_saved,
                per_post.get(reddit_key(entry.post_id), 0),
            )
    return checks
