"""The record files irr-audit writes into its folders (join's summary.json, sample's
sample.json), checked for structure when they are read. Pure.

A record is irr-audit's own file, but anyone can edit it: every value a command
takes from one is checked here once, as the manifest of a bundle is, so that a
hand-edited record is refused naming its key, never a crash deep inside a reader
or a renderer, and never a value read as another (an id list written as "c1" is no
list of two ids "c" and "1"). Keys irr-audit does not read are not checked, and a
key an older irr-audit did not write may be absent where the readers have a default.
Each function returns the problems as short phrases ("columns.id_column is 5, not
text or null"); the reader names the file and the fix.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from irr_audit.errors import UsageError
from irr_audit.io.delimiter import CANDIDATES as DELIMITERS
from irr_audit.io.display import visible
from irr_audit.io.encodings import not_utf8
from irr_audit.io.files import read_bounded
from irr_audit.io.limits import DEFAULT_LIMITS, Limits, load_json

Check = Callable[[Any, str], list[str]]

SHEET_RECORD_KEYS = ("name", "path", "relative_path", "sha256")  # what a join folder's reader uses of a sheet


# --- the values ----------------------------------------------------------------------------


def _shown(value: Any) -> str:
    text = visible(repr(value))
    return text if len(text) <= 40 else text[:37] + "..."


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def text(value: Any, where: str) -> list[str]:
    return [] if isinstance(value, str) else [f"{where} is {_shown(value)}, not text"]


def text_or_null(value: Any, where: str) -> list[str]:
    return [] if value is None or isinstance(value, str) else [f"{where} is {_shown(value)}, not text or null"]


def count(value: Any, where: str) -> list[str]:
    return [] if _is_count(value) else [f"{where} is {_shown(value)}, not a count (a whole number from 0 up)"]


def whole_or_null(value: Any, where: str) -> list[str]:
    return [] if value is None or _is_whole(value) else [f"{where} is {_shown(value)}, not a whole number or null"]


def count_or_null(value: Any, where: str) -> list[str]:
    return [] if value is None else count(value, where)


def flag(value: Any, where: str) -> list[str]:
    return [] if isinstance(value, bool) else [f"{where} is {_shown(value)}, not true or false"]


def texts(value: Any, where: str) -> list[str]:
    """A list of text values (ids, reasons): the first that is not text is named by its index."""
    if not isinstance(value, list):
        return [f"{where} is {_shown(value)}, not a list"]
    return next(
        ([f"{where}[{at}] is {_shown(item)}, not text"] for at, item in enumerate(value) if not isinstance(item, str)),
        [],
    )


def texts_or_null(value: Any, where: str) -> list[str]:
    return [] if value is None else texts(value, where)


def mapping(
    value: Any, where: str, required: dict[str, Check] | None = None, optional: dict[str, Check] | None = None
) -> list[str]:
    """An object with ``required`` keys and, when present, ``optional`` ones, each of its kind.
    Other keys are left alone (a newer irr-audit may add some)."""
    if not isinstance(value, dict):
        return [f"{where} is {_shown(value)}, not an object"]
    problems: list[str] = []
    for key, check in (required or {}).items():
        problems += check(value[key], _at(where, key)) if key in value else [f"{_at(where, key)} is missing"]
    for key, check in (optional or {}).items():
        if key in value:
            problems += check(value[key], _at(where, key))
    return problems


def _at(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _each(check: Check) -> Check:
    """A list whose every item passes ``check``."""

    def checked(value: Any, where: str) -> list[str]:
        if not isinstance(value, list):
            return [f"{where} is {_shown(value)}, not a list"]
        return [problem for at, item in enumerate(value) for problem in check(item, f"{where}[{at}]")]

    return checked


def _counts_by_text(value: Any, where: str) -> list[str]:
    if not isinstance(value, dict):
        return [f"{where} is {_shown(value)}, not an object"]
    return [problem for key, item in value.items() for problem in count(item, _at(where, key))]


def _sha256(value: Any, where: str) -> list[str]:
    good = isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)
    return [] if good else [f"{where} is {_shown(value)}, not a sha256 (64 hex digits)"]


# --- what a sample tells a report (sample.json, and its copy in a join's summary.json) -----------


def _sample_counts(value: Any, where: str) -> list[str]:
    if value == {}:  # no counts: the report shows none
        return []
    return mapping(
        value,
        where,
        required={"items": count, "usable_units": count, "sampled_units": count},
        optional={"unique_ids": count, "log_rows": _counts_by_text, "duplicates_skipped_by_collector": count_or_null},
    )


def _completeness(value: Any, where: str) -> list[str]:
    return mapping(
        value, where, optional={"verdict": text_or_null, "statement": text_or_null, "reasons": texts_or_null}
    )


def _count_check(value: Any, where: str) -> list[str]:
    return mapping(
        value, where, required={"check": text, "record": whole_or_null, "tool": _whole}, optional={"agrees": flag}
    )


def _whole(value: Any, where: str) -> list[str]:
    return [] if _is_whole(value) else [f"{where} is {_shown(value)}, not a whole number"]


def _draw(value: Any, where: str) -> list[str]:
    return mapping(
        value,
        where,
        optional={
            "seed": whole_or_null,
            "size": count,
            "population": count,
            "size_requested": count_or_null,
            "method": text,
            "note": text,
            "order": text,
        },
    )


SAMPLE_PARTS: dict[str, Check] = {
    "counts": _sample_counts,
    "completeness": _completeness,
    "count_mismatches": _each(_count_check),
    "draw": _draw,
}


def sample_report_problems(section: Any, where: str) -> list[str]:
    """The part of sample.json a report shows (irr_audit.sample.folder.sample_report_section),
    as a join's summary.json keeps it: ``{}`` when there is none."""
    return mapping(section, where, optional={"dataset": text_or_null, **SAMPLE_PARTS})


def sample_record_problems(record: Any) -> list[str]:
    """What is wrong with a sample.json that `join --sample` and freeze read: the rule the
    sample was drawn for, its ledger and sampled ids, and what a report shows of it."""
    if not isinstance(record, dict):
        return ["is not a JSON object"]
    return mapping(
        record,
        "",
        required={
            "rule": lambda value, where: mapping(value, where, required={"id": text, "version": count, "digest": text}),
            "ledger": lambda value, where: mapping(
                value, where, required={"file": text, "sha256": _sha256, "sample_ids": texts}
            ),
        },
        optional={
            "dataset": lambda value, where: mapping(value, where, optional={"file": text_or_null}),
            "run": lambda value, where: mapping(value, where),
            **SAMPLE_PARTS,
        },
    )


# --- join's summary.json ------------------------------------------------------------------------


def columns(value: Any, where: str) -> list[str]:
    """How the sheets were read (ColumnChoice), as a join summary or a bundle manifest records it:
    each option text or null, whatever its name (a newer irr-audit's is only typed), and the
    delimiter one that a sheet can have (the readers take a single character)."""
    if not isinstance(value, dict):
        return [f"{where} is {_shown(value)}, not an object"]
    problems = [problem for key, item in value.items() for problem in text_or_null(item, _at(where, key))]
    delimiter = value.get("delimiter")
    if isinstance(delimiter, str) and delimiter not in DELIMITERS:
        problems.append(f"{_at(where, 'delimiter')} is {_shown(delimiter)}, not one of , ; tab |")
    return problems


# --- a frozen score's coefficients ---------------------------------------------------------


def is_finite_number(value: Any) -> bool:
    """A JSON number a float can hold: an integer beyond any float (10**400) is none."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def metrics(value: Any, where: str) -> list[str]:
    """A score's coefficients as the commands read them (verify's headline, the gates of rules
    check): each an object whose defined is true or false, value a finite number (null when
    undefined), the ends of ci finite numbers, reason text. Other keys are compared, not read."""
    if not isinstance(value, dict):
        return [f"{where} is {_shown(value)}, not an object"]
    problems = []
    for name, metric in value.items():
        at = _at(where, name)
        if not isinstance(metric, dict):
            problems.append(f"{at} is {_shown(metric)}, not an object")
            continue
        defined, number, interval = metric.get("defined", False), metric.get("value"), metric.get("ci")
        if not isinstance(defined, bool):
            problems.append(f"{at}.defined is {_shown(defined)}, not true or false")
        if not (is_finite_number(number) or (number is None and defined is not True)):
            problems.append(f"{at}.value is {_shown(number)}, not a finite number")
        if not isinstance(metric.get("reason", ""), str):
            problems.append(f"{at}.reason is {_shown(metric['reason'])}, not text")
        if interval is not None and not (
            isinstance(interval, list) and len(interval) == 2 and all(map(is_finite_number, interval))
        ):
            problems.append(f"{at}.ci is {_shown(interval)}, not null or two finite numbers")
    return problems


def _text_map(value: Any, where: str) -> list[str]:
    """An object whose every value is text (its keys are, in JSON)."""
    if not isinstance(value, dict):
        return [f"{where} is {_shown(value)}, not an object"]
    return [problem for key, item in value.items() for problem in text(item, _at(where, key))]


def _sheet_record(value: Any, where: str) -> list[str]:
    return mapping(value, where, required=dict.fromkeys(SHEET_RECORD_KEYS, text))


def _join_sample(value: Any, where: str) -> list[str]:
    if value is None:
        return []
    return mapping(
        value,
        where,
        required={"ids": texts},
        optional={"folder": text_or_null, "report": sample_report_problems, "ledger_sha256": _sha256},
    )


def join_record_problems(summary: Any) -> list[str]:
    """What is wrong with a join's summary.json as `score DIR`, `report DIR` and freeze read it:
    the sheets to read again, how they were read (columns) and the sample it was restricted to."""
    if not isinstance(summary, dict):
        return ["is not a JSON object"]
    return mapping(
        summary,
        "",
        required={"sheets": _each(_sheet_record)},
        optional={"columns": columns, "sample": _join_sample, "run_aliases": _text_map},
    )


# --- reading a record -------------------------------------------------------------------------


@dataclass(frozen=True)
class RecordKind:
    """A record file irr-audit writes: what it is called in messages, its error codes' stem,
    the fix for a broken one, and its structural check."""

    name: str  # "a join summary as irr-audit join writes it"
    subject: str  # "join summary"
    code: str  # "joindir": codes joindir-invalid, joindir-not-found, ...
    hint: str
    problems: Callable[[Any], list[str]]


def read_checked_record(path: Path, kind: RecordKind, limits: Limits = DEFAULT_LIMITS) -> dict[str, Any]:
    """A record read within the limits and checked for structure: a hand edit is refused naming the key."""
    data = read_bounded(path, f"{kind.subject} {path}", limits, code=kind.code)
    try:
        record = load_json(data, f"{path}", limits, own_file=True)
    except UnicodeDecodeError as exc:
        raise invalid_record(path, kind, f"it is not UTF-8 text ({not_utf8(exc, f'byte {exc.start}')})") from None
    except ValueError as exc:  # not JSON
        raise invalid_record(path, kind, f"it is not JSON ({getattr(exc, 'msg', None) or exc})") from None
    problems = kind.problems(record)
    if problems:
        raise invalid_record(path, kind, problems[0])
    return dict(record)


def invalid_record(path: Path, kind: RecordKind, problem: str) -> UsageError:
    return UsageError(f"{path} is not {kind.name}: {problem}.", hint=kind.hint, code=f"{kind.code}-invalid")
