"""From an export's annotations to coding sheets and an import log, under one rule. Pure.

Every annotation ends in exactly one row of the import log, with its outcome: ``coded``
(it is a row of its annotator's sheet) or the reason it is not (irr_audit.importers.model.Reason).
A record nobody annotated is a row too, so every record of the export is in the log.

An annotator who annotated one unit more than once (Label Studio keeps every annotation
a user submits; a Prodigy dataset may hold a task twice) has one code on the unit:
- the same code every time: the latest is kept (by the time the tool stamped; without
  times, the first in the file), the others are logged as ``duplicate``;
- different codes: the latest is kept when every one has a time and one is the latest,
  since an annotator's last word is their answer; the others are logged as ``superseded``;
- different codes and no time to order them: none is kept, all are logged as ``conflict``
  (as join does with two codes for one unit in one sheet): guessing would invent a code.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from irr_audit.errors import UsageError
from irr_audit.importers.model import DEFAULT_ID_FIELD, Annotation, ImportOptions, ParsedExport, Reason
from irr_audit.io.collector import quoted
from irr_audit.io.limits import DEFAULT_LIMITS, Limits, limit_error
from irr_audit.io.outputs import spreadsheet_safe
from irr_audit.rules.lookalikes import lookalike_note
from irr_audit.rules.model import CodeStatus, Rule
from irr_audit.sample.sheets import CODER_NAME, RESERVED_CODERS

LOG_COLUMNS = ("source", "record", "unit_id", "annotator", "coder", "labels", "code", "confidence", "outcome", "detail")


@dataclass(frozen=True)
class SheetRow:
    comment_id: str
    code: str
    text: str | None
    note: str
    confidence: float | None


@dataclass(frozen=True)
class ImportResult:
    """The sheets (coder -> rows, in the order the units first appear in the export), the
    import log (one dict per row, LOG_COLUMNS), the annotator -> coder names, and counts."""

    rule: Rule
    exports: tuple[ParsedExport, ...]
    sheets: dict[str, list[SheetRow]]
    log: list[dict[str, Any]]
    coders: dict[str, str]
    outcomes: dict[str, int] = field(default_factory=dict)

    @property
    def records(self) -> int:
        return sum(export.records for export in self.exports)

    def units(self) -> dict[str, int]:
        """Units (distinct ids) in the export, in some sheet, and only in the log; records without an id."""
        in_export = {row["unit_id"] for row in self.log if row["unit_id"] is not None}
        in_sheets = {row.comment_id for rows in self.sheets.values() for row in rows}
        return {
            "in_export": len(in_export),
            "in_sheets": len(in_sheets),
            "only_in_log": len(in_export - in_sheets),
            "records_without_id": sum(1 for row in self.log if row["unit_id"] is None),
        }

    def summary_line(self) -> str:
        units = self.units()
        coded = self.outcomes.get(Reason.CODED.value, 0)
        others = ", ".join(f"{count} {name}" for name, count in self.outcomes.items() if name != Reason.CODED.value)
        return (
            f"{self.records} records, {units['in_export']} units: {coded} codes in {len(self.sheets)} "
            f"sheet{'s' if len(self.sheets) != 1 else ''}"
            + (f"; in the import log only: {others}" if others else "")
            + "."
        )


def build_import(
    exports: Sequence[ParsedExport],
    rule: Rule,
    options: ImportOptions | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> ImportResult:
    annotations = [annotation for export in exports for annotation in export.annotations]
    coders = coder_names([a.annotator for a in annotations if a.annotator is not None], limits)
    judged = [_judge(annotation, rule, options or ImportOptions()) for annotation in annotations]
    kept = _resolve_repeats(judged, coders)
    texts: dict[str, str] = {}
    for annotation in annotations:
        if annotation.unit_id is not None and annotation.text is not None:
            texts.setdefault(annotation.unit_id, annotation.text)
    sheets: dict[str, list[SheetRow]] = {}
    log: list[dict[str, Any]] = []
    outcomes: dict[str, int] = {}
    for annotation, code, reason, detail in kept:
        coder = coders.get(annotation.annotator) if annotation.annotator is not None else None
        if reason is Reason.CODED and coder is not None and annotation.unit_id is not None and code is not None:
            sheets.setdefault(coder, []).append(
                SheetRow(annotation.unit_id, code, texts.get(annotation.unit_id), detail, annotation.confidence)
            )
        outcomes[reason.value] = outcomes.get(reason.value, 0) + 1
        log.append(
            {
                "source": annotation.source,
                "record": annotation.record,
                "unit_id": annotation.unit_id,
                "annotator": annotation.annotator,
                "coder": coder,
                "labels": list(annotation.labels),
                "code": code,
                "confidence": annotation.confidence,
                "outcome": reason.value,
                "detail": detail,
            }
        )
    check_csv_safe_ids(sheets)
    return ImportResult(rule, tuple(exports), dict(sorted(sheets.items())), log, coders, outcomes)


Judged = tuple[Annotation, str | None, Reason, str]


def _judge(annotation: Annotation, rule: Rule, options: ImportOptions) -> Judged:
    """An annotation -> (annotation, code or None, outcome, detail) before repeats are resolved."""
    if annotation.outcome is not None:
        return annotation, None, annotation.outcome, annotation.detail
    if annotation.unit_id is None:
        key = options.id_field or DEFAULT_ID_FIELD
        hint = "" if options.id_field else "; choose the id's key with --id-field"
        return annotation, None, Reason.MISSING_ID, f"no usable {key}{hint}"
    if annotation.annotator is None:
        return annotation, None, Reason.MISSING_ANNOTATOR, "the annotation names no annotator"
    codes: list[str] = []
    for label in annotation.labels:
        status, code = rule.classify(label)
        if status is CodeStatus.INVALID:
            why = f"label {quoted(label)} is {rule.describe_codes()}{lookalike_note(label, rule)}"
            return annotation, None, Reason.UNKNOWN_LABEL, why
        if status is CodeStatus.VALID and code is not None:
            codes.append(code)
        elif status is CodeStatus.UNKNOWN:
            codes.append(_missing_code(rule, label))
    distinct = list(dict.fromkeys(codes))
    if not distinct:
        return annotation, None, Reason.NO_LABEL, "no label for the rule's question"
    if len(distinct) > 1:
        return (
            annotation,
            None,
            Reason.SEVERAL_LABELS,
            f"{len(distinct)} codes ({', '.join(distinct)}); {rule.label} takes one",
        )
    return annotation, distinct[0], Reason.CODED, ""


def _missing_code(rule: Rule, label: str) -> str:
    """A missing code of the rule (unknown, say) as the rule spells it: join logs it as unknown."""
    return next(
        (missing for missing in rule.missing_codes if rule.classify(missing) == rule.classify(label)), label.strip()
    )


def _resolve_repeats(judged: list[Judged], coders: dict[str, str]) -> list[Judged]:
    """One code per (coder, unit): see the module's docstring for which annotation is kept."""
    groups: dict[tuple[str, str], list[int]] = {}
    for index, (annotation, _, reason, _) in enumerate(judged):
        if reason is Reason.CODED and annotation.annotator is not None and annotation.unit_id is not None:
            # join matches ids with surrounding spaces trimmed: so are repeats here
            groups.setdefault((coders[annotation.annotator], annotation.unit_id.strip()), []).append(index)
    result = list(judged)
    for indexes in groups.values():
        if len(indexes) < 2:
            continue
        entries = [judged[index] for index in indexes]
        codes = {code for _, code, _, _ in entries}
        times = [annotation.when for annotation, _, _, _ in entries]
        timed = all(time is not None for time in times)
        latest = max(time for time in times if time is not None) if timed else None
        if timed and sum(time == latest for time in times) == 1:
            keep = indexes[times.index(latest)]
            why = f"the latest of {len(indexes)} annotations by this annotator ({latest})"
        elif len(codes) == 1:
            keep = indexes[0]
            why = f"the first of {len(indexes)} annotations by this annotator, all with this code"
        else:
            for index in indexes:
                annotation, code, _, _ = judged[index]
                result[index] = (
                    annotation,
                    None,
                    Reason.CONFLICT,
                    f"{len(indexes)} annotations by this annotator with the codes "
                    f"{', '.join(sorted(c for c in codes if c))} and no time to tell which is the latest: none is kept",
                )
            continue
        kept_record = judged[keep][0].record
        for index in indexes:
            annotation, code, _, _ = judged[index]
            if index == keep:
                result[index] = (annotation, code, Reason.CODED, f"kept: {why}")
            else:
                reason = Reason.DUPLICATE if len(codes) == 1 else Reason.SUPERSEDED
                result[index] = (annotation, None, reason, f"{reason.value} by {kept_record}, {why}")
    return result


def coder_names(annotators: Sequence[str], limits: Limits = DEFAULT_LIMITS) -> dict[str, str]:
    """Annotator -> the coder name its sheet is named after: the name itself when it can name a
    file, else with each character a file name cannot hold replaced by "_" (a@b.org -> a_b.org).
    Two annotators whose names would name one file are refused."""
    names: dict[str, str] = {}
    for annotator in dict.fromkeys(annotators):
        names[annotator] = _file_safe(annotator)
    if len(names) > limits.columns:
        raise limit_error(
            "columns",
            limits,
            "the export",
            f"has {len(names):,} annotators",
            why="join writes a column per coder.",
        )
    seen: dict[str, str] = {}
    for annotator, name in names.items():
        other = seen.setdefault(name.casefold(), annotator)
        if other != annotator:
            raise UsageError(
                f"the annotators {quoted(other)} and {quoted(annotator)} would both be the coder {quoted(name)} "
                "(sheet names keep letters, digits, '_', '-' and '.', and ignore case).",
                hint="rename one of them in the tool, or in a copy of the export, so that their sheets differ.",
                code="import-annotator-names",
            )
    return names


def _file_safe(name: str) -> str:
    safe = re.sub(r"[^\w.-]", "_", name.strip())[:100]
    if not safe or not CODER_NAME.fullmatch(safe):
        safe = ("_" + safe)[:100]
    if safe.casefold() in RESERVED_CODERS:
        safe += "_"
    return safe


def check_csv_safe_ids(sheets: dict[str, list[SheetRow]]) -> None:
    """An id a spreadsheet would read as a formula is written with a leading quote in a CSV
    sheet, and would then not match the same id in another tool's sheet: refused."""
    for coder, rows in sheets.items():
        for row in rows:
            if spreadsheet_safe(row.comment_id) != row.comment_id:
                raise UsageError(
                    f"comment id {quoted(row.comment_id)} (a unit of {coder}) starts like a spreadsheet formula; "
                    "a CSV sheet would write it with a leading quote, so it would not match across sheets.",
                    hint="use another id key (--id-field), or ids that do not start with =, +, -, @ or a quote.",
                    code="import-formula-id",
                )
