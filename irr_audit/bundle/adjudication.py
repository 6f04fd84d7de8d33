"""Adjudication: post-hoc consensus codes for a bundle's disagreements, kept apart.

Step 7 of the procedure (docs/procedure.md): only after independent coding do the coders
read the disagreements and decide together. Each `irr-audit adjudicate` run adds
one record file, BUNDLE/adjudication/<time>.json, saying who decided, when, and
each final code with its note. The frozen sheets, the manifest and the first
statistics are never touched. A later record supersedes an earlier decision on
the same unit, and the earlier one stays on file as history.
"""

from __future__ import annotations

import json
import os
import re
import stat
import tempfile
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from irr_audit.bundle.manifest import (
    ADJUDICATION_DIR,
    UNLISTABLE,
    BundleError,
    Manifest,
    Problem,
    canonical_sha256,
    shell_path,
    unreadable_bundle,
    utc_stamp,
    utc_text,
)
from irr_audit.errors import IrrAuditError, OutputError, UsageError
from irr_audit.io.csvtables import table_csv_columns
from irr_audit.io.display import visible
from irr_audit.io.encodings import not_utf8
from irr_audit.io.files import read_bounded
from irr_audit.io.limits import load_json
from irr_audit.io.outputs import Same, render_json, spreadsheet_original
from irr_audit.io.tables import CsvBroken, csv_records, record_pattern, swallowed_value
from irr_audit.join.join import JoinResult
from irr_audit.report.model import Disagreements, disagreement_units
from irr_audit.rules.model import CodeStatus, Rule

RECORD_FORMAT = "irr-audit-adjudication/1"
RECORD_NAME = re.compile(r"\d{8}T\d{6}Z(?:_\d+)?\.json")
# adjudicate writes a record to .record.<random>.tmp first (tempfile.mkstemp's names), then links it
# under its name; a run killed in between can leave that file, which is never read as a record
TEMPORARY_PREFIX, TEMPORARY_SUFFIX = ".record.", ".tmp"
LEFTOVER_NAME = re.compile(r"\.record\.[a-z0-9_]+\.tmp")
LEFTOVER = "the temporary file of an adjudicate that was stopped before it finished: it holds no record"
SIGNATURE_SUFFIX = ".sig"  # <record>.json.sig: an SSH signature of the record beside it (adjudicate --sign)
SECTION_TITLE = "Adjudicated labels (post-hoc consensus, not independent codes)"
SECTION_STATEMENT = (
    "The agreement statistics above come from the independent codes only. The final codes below were "
    "decided jointly after independent coding, while reviewing the disagreements; they change no coefficient."
)
CODER_COLUMN_PREFIX = "coder:"


@dataclass(frozen=True)
class Decision:
    """One row of a decisions file: the final code for one disagreement."""

    comment_id: str
    final_code: str
    note: str
    row: int
    variable: str = ""  # the variable decided, in a codebook bundle's decisions; "" for one rule's


# --- decisions files (pure) ------------------------------------------------------


DisagreementCodes = Mapping[str, dict[str, str]]  # comment id -> {coder: independent code} of each disagreement


def disagreement_codes(disagreements: Iterable[dict[str, Any]]) -> DisagreementCodes:
    """comment id -> {coder: independent code}, from the report's disagreements (for its lazy
    list, a mapping that makes a unit's codes only when they are looked up: ``ListedCodes``)."""
    if isinstance(disagreements, Disagreements):
        return ListedCodes(disagreements)
    return {item["comment_id"]: dict(item["codes"]) for item in disagreements}


class ListedCodes(Mapping[str, dict[str, str]]):
    """The codes of a report's lazily listed disagreements: their ids listed at once, a unit's
    codes made when asked for. A bundle's report and verify check the few units that records
    name; a dict of every unit's codes took seconds at millions of disagreements."""

    def __init__(self, listed: Disagreements) -> None:
        self._listed = listed
        self._ids = listed.comment_ids()
        self._positions: dict[str, int] | None = None

    def __len__(self) -> int:
        return len(self._ids)

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __contains__(self, unit: object) -> bool:
        return unit in self._position()

    def __getitem__(self, unit: str) -> dict[str, str]:
        return self._listed.codes_at(self._position()[unit])

    def coder_codes(self) -> dict[str, list[str]]:
        """Each coder's codes of every unit, in the order of iteration (no dict made per unit)."""
        return self._listed.coder_codes()

    def _position(self) -> dict[str, int]:
        if self._positions is None:
            self._positions = {unit: at for at, unit in enumerate(self._ids)}
        return self._positions


def disagreement_texts(disagreements: Iterable[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """comment id -> the comment's text and link as the report lists them (the ledger's, for a
    sampled bundle), for units that have a text."""
    if isinstance(disagreements, Disagreements) and not disagreements.have_texts():
        return {}  # no unit's dict made to find no text
    return {
        item["comment_id"]: {"text": item["text"], "link": item.get("link") or ""}
        for item in disagreements
        if item.get("text")
    }


def template_csv(
    disagreements: DisagreementCodes,
    coders: list[str],
    current: dict[str, dict[str, Any]],
    texts: dict[str, dict[str, str]] | None = None,
) -> str:
    """The disagreements to decide, as a CSV to fill in: one row per unit, the coders'
    independent codes beside it, and code and note (prefilled with the current decision).
    When the comments' text is known, ``text`` and ``link`` columns follow, to read while
    deciding; parse_decisions ignores them. They are printed to a terminal, so their control
    characters are shown as escapes."""
    header, columns, length = template_columns(disagreements, coders, current, texts)
    return table_csv_columns(header, columns, length)


def template_columns(
    disagreements: DisagreementCodes,
    coders: list[str],
    current: Mapping[str, dict[str, Any]],
    texts: dict[str, dict[str, str]] | None = None,
) -> tuple[list[str], list[Sequence[object] | Same], int]:
    """The header, columns and length of :func:`template_csv` (a codebook's template stacks
    each variable's). Pure."""
    texts = {unit: {key: visible(value) for key, value in entry.items()} for unit, entry in (texts or {}).items()}
    with_text = bool(texts)
    header = ["comment_id", *(CODER_COLUMN_PREFIX + coder for coder in coders), "code", "note"]
    header += ["text", "link"] if with_text else []
    units = list(disagreements)
    coded = disagreements.coder_codes() if isinstance(disagreements, ListedCodes) else None
    columns: list[Sequence[object] | Same] = [
        units,
        *(coded[coder] if coded else [disagreements[unit][coder] for unit in units] for coder in coders),
        *(_looked_up(units, current, key) for key in ("final_code", "note")),
        *((_looked_up(units, texts, "text"), _looked_up(units, texts, "link")) if with_text else ()),
    ]
    return header, columns, len(units)


def _looked_up(units: list[str], entries: Mapping[str, Mapping[str, Any]], key: str) -> list[object] | Same:
    """Each unit's ``key`` in ``entries`` ("" when it has none): one empty column when no unit has an entry."""
    if not entries:
        return Same("")
    return [entries.get(unit, {}).get(key, "") for unit in units]


def parse_decisions(text: str, source: str, rule: Rule, disagreements: DisagreementCodes) -> list[Decision]:
    """The filled rows of a decisions file (comment_id, code, optional note). Rows with
    an empty code are left undecided. Raises UsageError naming the file and row."""
    return _parse_decisions(text, source, {"": (rule, disagreements)}, by_variable=False)


Scope = tuple[Rule, DisagreementCodes]  # a variable's rule and its disagreements


def parse_codebook_decisions(text: str, source: str, scopes: Mapping[str, Scope]) -> list[Decision]:
    """The filled rows of a codebook bundle's decisions file (variable, comment_id, code, optional
    note): each code is one of its variable's rule's codes, each unit a disagreement on that
    variable (``scopes``: variable -> its rule and disagreements). Rows with an empty code are
    left undecided. Raises UsageError naming the file and row."""
    return _parse_decisions(text, source, scopes, by_variable=True)


def _parse_decisions(text: str, source: str, scopes: Mapping[str, Scope], *, by_variable: bool) -> list[Decision]:
    try:
        records = csv_records(text)
    except CsvBroken as broken:
        problem = (
            f"has a quote opened on line {broken.opened} that is never closed"
            if broken.opened is not None
            else f"is not valid CSV near line {broken.line}: {broken.reason}"
        )
        raise _bad_file(
            source,
            problem,
            "close the quote (a quote inside a value is written twice), or save the file again as CSV UTF-8.",
        ) from None
    if not records:
        raise _bad_file(source, "is empty", "fill in the CSV that irr-audit adjudicate BUNDLE prints.")
    columns = records[0][2]
    header = [column.strip().casefold() for column in columns]
    _check_header(header, columns, source)
    required = ("variable", "comment_id", "code") if by_variable else ("comment_id", "code")
    for name in required:
        if name not in header:
            found = ", ".join(column for column in columns if column.strip()) or "(none)"
            raise _bad_file(
                source,
                f'has no column "{name}" (columns found: {found})',
                f"use the columns {', '.join(required)} and note.",
            )
    at_id, at_code = header.index("comment_id"), header.index("code")
    at_note = header.index("note") if "note" in header else None
    at_variable = header.index("variable") if by_variable else None
    decisions: dict[tuple[str, str], Decision] = {}
    row_shape = re.compile(record_pattern(",", len(header), at_id, at_code))
    free_text = set(range(len(header))) - {at_id, at_code}  # a note may run over lines; an id or code never
    for row, (first_line, _, record) in enumerate(records[1:], start=2):
        if any(cell.strip() for cell in record[len(header) :]):  # empty trailing cells, as Excel leaves, are no data
            raise _bad_file(
                source,
                f"row {row} has {len(record)} cells, more than the {len(header)} columns of its header",
                "remove the extra cells, or put a value that holds a comma in quotes.",
            )
        cells = record + [""] * (len(header) - len(record))
        swallowed = swallowed_value(cells, first_line, free_text, row_shape)
        if swallowed is not None:
            raise UsageError(
                f"decisions file {source}: {swallowed.sentence(_column_name(columns, swallowed.column), row)}.",
                hint=f"close the quote at the end of the value on line {swallowed.opened} "
                "(a quote inside a value is written twice).",
                code="adjudication-decisions",
            )
        raw_code = cells[at_code].strip()
        variable = (
            _row_variable(cells[at_variable].strip(), bool(raw_code or cells[at_id].strip()), scopes, source, row)
            if at_variable is not None
            else ""
        )
        if variable is None:
            continue  # a blank row
        rule, disagreements = scopes[variable]
        unit = _known_unit(cells[at_id].strip(), disagreements)
        if not raw_code:
            if unit and unit not in disagreements:
                raise _not_a_disagreement(source, row, unit, variable)
            continue
        if not unit:
            raise _bad_file(source, f"row {row} has a code but no comment_id", "fill in the comment_id.")
        if unit not in disagreements:
            raise _not_a_disagreement(source, row, unit, variable)
        if (variable, unit) in decisions:
            again = f"{unit!r} on {variable}" if variable else repr(unit)
            raise _bad_file(
                source,
                f"row {row} decides {again} again (first in row {decisions[variable, unit].row})",
                "keep one row per comment_id" + (" and variable." if variable else "."),
            )
        note = spreadsheet_original(cells[at_note].strip()) if at_note is not None else ""
        decisions[variable, unit] = Decision(unit, _final_code(raw_code, rule, source, row), note, row, variable)
    return list(decisions.values())


def _row_variable(text: str, filled: bool, scopes: Mapping[str, Scope], source: str, row: int) -> str | None:
    """The variable a codebook decisions row decides (as the template writes it, or as a
    spreadsheet saved it), None for a row with nothing in it; else the UsageError naming the row."""
    if not text:
        if not filled:
            return None
        raise _bad_file(source, f"row {row} has no variable", "fill in the variable, as the template lists it.")
    for candidate in dict.fromkeys((text, spreadsheet_original(text))):
        if candidate in scopes:
            return candidate
    raise _bad_file(
        source,
        f"row {row} names the variable {text!r}, which is not a variable of this codebook ({', '.join(scopes)})",
        "keep the variable as the template lists it: irr-audit adjudicate BUNDLE prints it.",
    )


def _check_header(header: list[str], columns: list[str], source: str) -> None:
    """A column read twice would let one of them pass unread; a header of one column holding
    ';' is a file saved with semicolons (Excel where the decimal separator is a comma)."""
    for name in ("variable", "comment_id", "code", "note"):
        if header.count(name) > 1:
            first, second = (at + 1 for at, column in enumerate(header) if column == name)
            raise _bad_file(
                source, f'has the column "{name}" twice (columns {first} and {second})', "keep one column of each name."
            )
    semicolons = [column.strip().casefold() for column in ";".join(columns).split(";")]
    if "comment_id" not in header and ";" in "".join(columns) and "comment_id" in semicolons:
        raise _bad_file(
            source,
            "seems to use ';' between its columns, not ','",
            "save it as CSV with commas (in Excel: CSV UTF-8 (Comma delimited)), or replace each ';' by ','.",
        )


def has_visible_character(text: str) -> bool:
    """A name someone can read: a letter, a digit or a mark, not only spaces and invisible format
    characters (a zero-width space, a soft hyphen, a BOM). Pure."""
    return any(not char.isspace() and unicodedata.category(char)[0] not in "CZ" for char in text)


def _column_name(header: list[str], at: int) -> str:
    return header[at].strip() if at < len(header) else f"column {at + 1}"


def _known_unit(text: str, disagreements: DisagreementCodes) -> str:
    return text if text in disagreements else spreadsheet_original(text)


def _final_code(raw: str, rule: Rule, source: str, row: int) -> str:
    for candidate in dict.fromkeys((raw, spreadsheet_original(raw))):
        status, code = rule.classify(candidate)
        if status is CodeStatus.VALID and code is not None:
            return code
    raise _bad_file(
        source,
        f"row {row} has the final code {raw!r}, which is not a code of {rule.label} ({', '.join(rule.categories)})",
        "a final code is one of the rule's codes; leave the code empty to leave the unit undecided.",
    )


def _not_a_disagreement(source: str, row: int, unit: str, variable: str = "") -> UsageError:
    return _bad_file(
        source,
        f"row {row} names comment {unit!r}, which is not a disagreement of this audit"
        + (f" on {variable}" if variable else ""),
        "only fully coded units on which the coders differ are adjudicated; "
        "run irr-audit adjudicate BUNDLE to list them.",
    )


def _bad_file(source: str, problem: str, hint: str) -> UsageError:
    return UsageError(f"decisions file {source} {problem}.", hint=hint, code="adjudication-decisions")


def changed_decisions(decisions: list[Decision], current: dict[str, dict[str, Any]]) -> list[Decision]:
    """Decisions that differ from the ones already on record: a resubmitted template
    does not record the same decision again under another name and time."""
    return [
        decision
        for decision in decisions
        if (current.get(decision.comment_id, {}).get("final_code"), current.get(decision.comment_id, {}).get("note"))
        != (decision.final_code, decision.note)
    ]


# --- records (pure) -------------------------------------------------------------------


def build_record(
    *,
    bundle_name: str,
    manifest_sha256: str,
    by: str,
    created: datetime,
    source_name: str,
    source_sha256: str,
    decisions: list[dict[str, Any]],
) -> dict[str, Any]:
    """A new record of ``decisions`` (each made by :func:`decision_entry`). Pure."""
    record: dict[str, Any] = {
        "format": RECORD_FORMAT,
        "bundle": {"name": bundle_name, "manifest_sha256": manifest_sha256},
        "by": by,
        "created": utc_text(created),
        "source": {"file": source_name, "sha256": source_sha256},
        "decisions": decisions,
    }
    record["record_sha256"] = canonical_sha256(record, "record_sha256")
    return record


def decision_entry(decision: Decision, codes: dict[str, str]) -> dict[str, Any]:
    """A decision as a record holds it: the unit (and its variable, in a codebook bundle), the
    coders' independent codes (``codes``), the final code and the note. Pure."""
    variable = {"variable": decision.variable} if decision.variable else {}
    return {
        **variable,
        "comment_id": decision.comment_id,
        "codes": codes,
        "final_code": decision.final_code,
        "note": decision.note,
    }


RecordCheck = Callable[[Any], list[str]]  # what makes a record untrustworthy for a bundle, or []
# A decision's scope: its disagreements and the codes it may take, or why it has none
DecisionScope = Callable[[int, dict[str, Any]], "tuple[DisagreementCodes, tuple[str, ...]] | str"]


def record_problems(
    record: Any, manifest_sha256: str, disagreements: DisagreementCodes, categories: tuple[str, ...]
) -> list[str]:
    """What makes an adjudication record untrustworthy for this bundle (one rule's), or []."""
    return _record_problems(record, manifest_sha256, lambda _, __: (disagreements, categories))


def codebook_record_problems(
    record: Any, manifest_sha256: str, scopes: Mapping[str, tuple[DisagreementCodes, tuple[str, ...]]]
) -> list[str]:
    """What makes an adjudication record untrustworthy for a codebook bundle, or []: each decision
    names a variable of the codebook (``scopes``: variable -> its disagreements and rule's codes)
    and is checked against that variable's disagreements and codes."""

    def scope(position: int, decision: dict[str, Any]) -> tuple[DisagreementCodes, tuple[str, ...]] | str:
        variable = decision.get("variable")
        if isinstance(variable, str) and variable in scopes:
            return scopes[variable]
        return f"decisions[{position}] names the variable {variable!r}, which is not a variable of this codebook"

    return _record_problems(record, manifest_sha256, scope)


def _record_problems(record: Any, manifest_sha256: str, scope_of: DecisionScope) -> list[str]:
    if not isinstance(record, dict) or record.get("format") != RECORD_FORMAT:
        return [f"is not an adjudication record (format {RECORD_FORMAT})"]
    if record.get("record_sha256") != canonical_sha256(record, "record_sha256"):
        return ["was edited after it was recorded (its record_sha256 does not match)"]
    problems = []
    bundle = record.get("bundle")
    if not isinstance(bundle, dict) or bundle.get("manifest_sha256") != manifest_sha256:
        problems.append("was recorded for another manifest than this bundle's")
    if not isinstance(record.get("by"), str) or not record["by"].strip() or not isinstance(record.get("created"), str):
        problems.append("does not say who decided and when")
    decisions = record.get("decisions")
    if not isinstance(decisions, list):
        return [*problems, "has no list of decisions"]
    for position, decision in enumerate(decisions):
        unit = decision.get("comment_id") if isinstance(decision, dict) else None
        if not isinstance(decision, dict) or not isinstance(decision.get("note", ""), str):
            problems.append(f"decisions[{position}] is not a decision (comment_id, codes, final_code, note)")
            continue
        scope = scope_of(position, decision)
        if isinstance(scope, str):
            problems.append(scope)
            continue
        disagreements, categories = scope
        if not isinstance(unit, str) or unit not in disagreements:
            problems.append(f"decisions[{position}] names {unit!r}, which is not a disagreement of this audit")
        elif decision.get("final_code") not in categories:
            problems.append(
                f"decisions[{position}] has the final code {decision.get('final_code')!r}, "
                f"not a code of the rule ({', '.join(categories)})"
            )
        elif decision.get("codes") != disagreements[unit]:
            problems.append(f"decisions[{position}] quotes other independent codes for {unit!r} than the sheets hold")
    return problems


def current_by_variable(
    records: list[tuple[str, dict[str, Any]]], variables: Iterable[str]
) -> dict[str, dict[str, dict[str, Any]]]:
    """variable -> comment id -> its latest decision, for a codebook bundle's (checked) records:
    :func:`current_decisions` of each variable's decisions."""
    return {variable: current_decisions(records_of_variable(records, variable)) for variable in variables}


def records_of_variable(records: list[tuple[str, dict[str, Any]]], variable: str) -> list[tuple[str, dict[str, Any]]]:
    """A codebook bundle's (checked) records as one variable's: each record's decisions on that
    variable only, and only the records that decide some of it. Pure."""
    kept = []
    for file, record in records:
        mine = [item for item in record["decisions"] if item["variable"] == variable]
        if mine:
            kept.append((file, {**record, "decisions": mine}))
    return kept


def current_decisions(records: list[tuple[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """comment id -> its latest decision, with who made it, when, and in which record."""
    current: dict[str, dict[str, Any]] = {}
    for file, record in sorted(records, key=lambda item: (item[1]["created"], item[0])):
        for decision in record["decisions"]:
            current[decision["comment_id"]] = {
                **decision,
                "decided_by": record["by"],
                "decided_at": record["created"],
                "record": file,
            }
    return current


def adjudication_section(records: list[tuple[str, dict[str, Any]]], disagreements: DisagreementCodes) -> dict[str, Any]:
    """The report's `adjudication` section: apart from, and after, the independent statistics."""
    current = current_decisions(records)
    return {
        "title": SECTION_TITLE,
        "statement": SECTION_STATEMENT,
        "disagreements": len(disagreements),
        "decided": sum(unit in current for unit in disagreements),
        "undecided": [unit for unit in disagreements if unit not in current],
        "decisions": [current[unit] for unit in disagreements if unit in current],
        "records": [
            {"file": file, "by": record["by"], "created": record["created"], "decisions": len(record["decisions"])}
            for file, record in sorted(records, key=lambda item: (item[1]["created"], item[0]))
        ],
    }


# --- records on disk ------------------------------------------------------------------


def record_files(bundle: Path) -> tuple[list[tuple[str, bytes]], list[Problem]]:
    """The record files of a bundle as (adjudication/<name>, bytes), and what in the
    folder is not a readable record. A record's signature (<record>.sig) belongs to it."""
    folder = bundle / ADJUDICATION_DIR
    try:
        if folder.is_symlink() or not folder.is_dir():
            return [], []  # a symlink or file there is reported by verify's file check
        entries = sorted(folder.iterdir())
    except OSError as error:  # a folder the user may not list: its records are not known
        return [], [Problem("changed", ADJUDICATION_DIR, f"{UNLISTABLE} ({error.strerror})", unreadable=True)]
    files, problems = [], []
    records = {path.name for path in entries if _is_plain_file(path) and RECORD_NAME.fullmatch(path.name)}
    for path in entries:
        name = f"{ADJUDICATION_DIR}/{path.name}"
        if path.name in records:
            try:
                files.append((name, read_bounded(path, "the record", code="record", own_file=True)))
            except IrrAuditError as error:
                unreadable = error.code == "record-unreadable"
                problems.append(Problem("adjudication", name, error.message.rstrip("."), unreadable=unreadable))
        elif LEFTOVER_NAME.fullmatch(path.name) and _is_plain_file(path):
            problems.append(Problem("extra", name, f"{LEFTOVER}; remove it: rm {shell_path(path)}"))
        elif not (
            path.name.endswith(SIGNATURE_SUFFIX)
            and path.name.removesuffix(SIGNATURE_SUFFIX) in records
            and _is_plain_file(path)
        ):
            problems.append(Problem("extra", name, "not an adjudication record"))
    return files, problems


def is_leftover(problem: Problem) -> bool:
    """A leftover temporary file of an interrupted adjudicate (see LEFTOVER)."""
    return problem.kind == "extra" and problem.detail.startswith(LEFTOVER)


def _is_plain_file(path: Path) -> bool:
    return path.is_file() and not path.is_symlink()


def read_records(bundle: Path) -> tuple[list[tuple[str, dict[str, Any]]], list[Problem]]:
    """The parsed record files of a bundle, and what is not a readable record."""
    files, problems = record_files(bundle)
    records = []
    for name, data in files:
        try:
            records.append((name, load_json(data, f"{bundle / name}", own_file=True)))
        except UnicodeDecodeError as exc:
            problems.append(Problem("adjudication", name, f"is not UTF-8 text ({not_utf8(exc, f'byte {exc.start}')})"))
        except ValueError as exc:
            problems.append(Problem("adjudication", name, f"cannot be read as JSON ({_json_error(exc)})"))
        except IrrAuditError as exc:  # a limit exceeded
            problems.append(Problem("adjudication", name, exc.message))
    return records, problems


def _json_error(error: ValueError) -> str:
    if isinstance(error, json.JSONDecodeError):
        return f"{error.msg} at line {error.lineno}, column {error.colno}" if error.doc.strip() else "it is empty"
    text = str(error)
    return text if len(text) <= 120 else text[:117] + "..."


def rule_check(manifest_sha256: str, disagreements: DisagreementCodes, categories: tuple[str, ...]) -> RecordCheck:
    """The check of a record of one rule's bundle (:func:`record_problems`)."""
    return lambda record: record_problems(record, manifest_sha256, disagreements, categories)


def codebook_check(
    manifest_sha256: str, scopes: Mapping[str, tuple[DisagreementCodes, tuple[str, ...]]]
) -> RecordCheck:
    """The check of a record of a codebook bundle (:func:`codebook_record_problems`)."""
    return lambda record: codebook_record_problems(record, manifest_sha256, scopes)


def checked_records(bundle: Path, check: RecordCheck) -> tuple[list[tuple[str, dict[str, Any]]], list[Problem]]:
    records, problems = read_records(bundle)
    good, found = _sound_records(records, check)
    return good, problems + found


def _sound_records(
    records: list[tuple[str, dict[str, Any]]], check: RecordCheck
) -> tuple[list[tuple[str, dict[str, Any]]], list[Problem]]:
    """The records with nothing wrong, and what is wrong with the others."""
    good, problems = [], []
    for name, record in records:
        found = check(record)
        problems += [Problem("adjudication", name, text) for text in found]
        if not found:
            good.append((name, record))
    return good, problems


def check_adjudication(bundle: Path, manifest_sha256: str, join: JoinResult) -> tuple[list[Problem], int]:
    """verify's separate check of the adjudication records against the frozen audit. The
    disagreements are listed (not scored again) only when there are records to check."""
    records, problems = read_records(bundle)
    if not records:
        return problems, 0
    good, found = _sound_records(
        records, rule_check(manifest_sha256, variable_disagreements(join), join.rule.categories)
    )
    return problems + found, len(good)


def check_codebook_adjudication(
    bundle: Path, manifest_sha256: str, joins: Mapping[str, JoinResult]
) -> tuple[list[Problem], int]:
    """verify's check of a codebook bundle's records (``joins``: variable -> its scored join), as
    :func:`check_adjudication` checks a rule's."""
    records, problems = read_records(bundle)
    if not records:
        return problems, 0
    good, found = _sound_records(records, codebook_check(manifest_sha256, variable_scopes(joins)))
    return problems + found, len(good)


def variable_disagreements(join: JoinResult) -> DisagreementCodes:
    """The disagreements of one join (a variable's), listed lazily as a rule's bundle lists them."""
    return disagreement_codes(Disagreements(join, disagreement_units(join)))


def variable_scopes(joins: Mapping[str, JoinResult]) -> dict[str, tuple[DisagreementCodes, tuple[str, ...]]]:
    """variable -> its disagreements and its rule's codes, what a codebook record is checked against."""
    return {variable: (variable_disagreements(join), join.rule.categories) for variable, join in joins.items()}


def trusted_records(bundle: Path, check: RecordCheck) -> list[tuple[str, dict[str, Any]]]:
    """The records, for adjudicate, labels and report; any doubtful record stops the command. A
    leftover temporary file does not: it is never read as a record, so it cannot change what they
    show (verify reports it, with the command that removes it)."""
    records, problems = checked_records(bundle, check)
    problems = [problem for problem in problems if not is_leftover(problem)]
    if problems and problems[0].unreadable:
        raise unreadable_bundle(bundle, f"{problems[0].path}: {problems[0].detail}")
    if problems:
        raise BundleError(
            f"bundle {bundle}: {problems[0].path} {problems[0].detail}.",
            hint=f"run irr-audit verify {shell_path(bundle)} to see every problem; remove or restore that record.",
            code="bundle-adjudication",
        )
    return records


def record_bytes(record: dict[str, Any]) -> bytes:
    """A record's file content: what its digest and signature cover."""
    return render_json(record).encode("utf-8")


def write_record(bundle: Path, data: bytes, created: datetime, signature: bytes | None = None) -> Path:
    """Add a record file without ever replacing one: it is linked into place under a
    name no other record has, then made read-only; its signature, if any, goes beside it."""
    folder = bundle / ADJUDICATION_DIR
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        raise BundleError(
            f"bundle {bundle}: {ADJUDICATION_DIR} is not a folder.",
            hint=f"run irr-audit verify {shell_path(bundle)}.",
            code="bundle-adjudication",
        )
    try:
        folder.mkdir(exist_ok=True)
        target = _link_new_record(folder, data, created)
        try:
            os.chmod(target, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
            if signature is not None:
                _write_signature(target.with_name(target.name + SIGNATURE_SUFFIX), signature)
        except BaseException:
            target.unlink(missing_ok=True)  # all or nothing: no record left without the signature asked for
            raise
    except OSError as exc:
        raise OutputError(
            f"cannot write an adjudication record into {folder}: {exc.strerror or exc}.",
            hint="check the bundle folder's permissions and free space; no record was added and the frozen "
            "files are not changed.",
            code="output-unwritable",
        ) from None
    return target


def _link_new_record(folder: Path, data: bytes, created: datetime) -> Path:
    """Write the record to a temporary file, then link it under the first free record name. The
    temporary file is removed whatever happens (a full disk, a stopped run): left behind, it
    would be an extra file in the bundle."""
    handle, temporary = tempfile.mkstemp(prefix=TEMPORARY_PREFIX, suffix=TEMPORARY_SUFFIX, dir=folder)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        n = 1
        while True:
            target = folder / (utc_stamp(created) + (f"_{n}" if n > 1 else "") + ".json")
            try:
                os.link(temporary, target)
                return target
            except FileExistsError:
                n += 1
    finally:
        Path(temporary).unlink(missing_ok=True)


def _write_signature(path: Path, signature: bytes) -> None:
    with open(path, "xb") as stream:  # a record's name is new, so is its signature's
        try:
            stream.write(signature)
            stream.flush()
            os.fsync(stream.fileno())
            os.chmod(path, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
        except BaseException:
            path.unlink(missing_ok=True)  # ours: "xb" made it
            raise


# --- the report --------------------------------------------------------------------------


def bundle_report_sections(bundle: Path, read: Manifest, document: dict[str, Any]) -> dict[str, Any]:
    """`report BUNDLE`: the bundle's provenance and its adjudication, as report sections,
    from its manifest as the audit read it."""
    disagreements = disagreement_codes(document.get("disagreements", []))
    records = trusted_records(bundle, rule_check(read.sha256, disagreements, tuple(document["categories"])))
    return {"bundle": bundle_provenance(read), "adjudication": adjudication_section(records, disagreements)}


def bundle_provenance(read: Manifest) -> dict[str, Any]:
    """The report's `bundle` section of a rule's or a codebook's bundle: its name, its digest
    (what freeze printed and verify --expect takes), when and with which version it was frozen,
    and what it re-codes and the sample it keeps (null when none; an older codebook bundle's
    manifest may lack the two keys)."""
    manifest = read.content
    return {
        "name": manifest["name"],
        "digest": read.digest,  # what freeze printed; compare it with the anchored one
        "created": manifest["created"],
        "tool_version": manifest["tool_version"],
        "recodes": manifest.get("recodes"),
        "sample": manifest.get("sample"),
    }


def codebook_report_sections(
    bundle: Path, read: Manifest, joins: Mapping[str, JoinResult]
) -> dict[str, dict[str, Any]]:
    """`report BUNDLE` of a codebook bundle: variable -> its report sections, the adjudication of
    that variable exactly as a rule's bundle's report has it (its decisions and the records that
    hold them). A doubtful record stops the report, as it stops a rule's bundle's."""
    scopes = variable_scopes(joins)
    records = trusted_records(bundle, codebook_check(read.sha256, scopes))
    return {
        variable: {"adjudication": adjudication_section(records_of_variable(records, variable), disagreements)}
        for variable, (disagreements, _) in scopes.items()
    }
