"""The whole sample as files: dataset + run record + rule -> the ledger, the
missingness log, sample.json and one blank sheet per coder, as bytes. Pure.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from irr_audit._version import __version__
from irr_audit.errors import IrrAuditError, UsageError
from irr_audit.io import runfolder
from irr_audit.io.collector import Dataset, RunRecord
from irr_audit.io.csvtables import table_csv_columns, table_csv_text
from irr_audit.io.outputs import jsonl_text, render_json
from irr_audit.join.missingness import LOG_COLUMNS, Reason, count_phrase, rows_word
from irr_audit.rules.codebook import Codebook, rule_file_key
from irr_audit.rules.model import Rule
from irr_audit.sample.draw import Draw, coder_order, draw_sample
from irr_audit.sample.ledger import (
    IN_SAMPLE_AT,
    LEDGER_COLUMNS,
    UNIT_COLUMNS,
    Completeness,
    Ledger,
    LedgerUnit,
    LogRow,
    Verdict,
    assess_completeness,
    build_ledger,
    collection_failures,
    count_checks,
)
from irr_audit.sample.sheets import (
    SheetFormat,
    allowed_codes,
    check_csv_ids,
    check_xlsx_ids,
    codebook_sheet_columns,
    codebook_sheet_data,
    codebook_sheet_rows,
    render_codebook_xlsx_sheet,
    render_csv_sheet,
    render_xlsx_sheet,
    sheet_data,
    sheet_rows,
)

LEDGER_CSV = "ledger.csv"
LEDGER_JSONL = "ledger.jsonl"
LOG_CSV = "missingness_log.csv"
LOG_JSONL = "missingness_log.jsonl"
RECORD = runfolder.SAMPLE_RECORD
RULE_COPY = "rule.yaml"
CODEBOOK_COPY = "codebook.yaml"
RULES_COPY = "rules"
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

    def render(units: Sequence[LedgerUnit], coder: str) -> tuple[bytes, list[str]]:
        if request.sheet_format is SheetFormat.XLSX:
            return render_xlsx_sheet(sheet_rows(units, rule, coder), rule)
        return render_csv_sheet(sheet_data(units, rule, coder), len(units)), []

    return _build(dataset, run_record, request, {RULE_COPY: rule_bytes}, {"rule": _rule_record(rule)}, render)


def build_codebook_sample(
    dataset: Dataset, run_record: RunRecord | None, codebook: Codebook, request: SampleRequest
) -> Sample:
    """Dataset + run record + codebook -> every file of the sample folder, with one column per
    variable in every sheet, and the codebook and its rule files copied byte for byte
    (``codebook.yaml``, ``rules/<rule>/v<N>.yaml``). Pure."""

    def render(units: Sequence[LedgerUnit], coder: str) -> tuple[bytes, list[str]]:
        if request.sheet_format is SheetFormat.XLSX:
            return render_codebook_xlsx_sheet(codebook_sheet_rows(units, codebook, coder), codebook)
        columns = codebook_sheet_data(units, codebook, coder)
        return render_csv_sheet(columns, len(units), codebook_sheet_columns(codebook)), []

    copies = {CODEBOOK_COPY: codebook.source}
    copies |= {f"{RULES_COPY}/{rule_file_key(rule.id, rule.version)}": rule.source for rule in codebook.rules}
    section = {
        "name": codebook.name,
        "version": codebook.version,
        "digest": codebook.digest,
        "file": CODEBOOK_COPY,
        "rules": [
            {
                **_rule_record(rule),
                "file": f"{RULES_COPY}/{rule_file_key(rule.id, rule.version)}",
                "applies_when": None
                if rule.applies_when is None
                else {"rule": rule.applies_when.rule, "codes": list(rule.applies_when.codes)},
            }
            for rule in codebook.rules
        ],
    }
    return _build(dataset, run_record, request, copies, {"codebook": section}, render)


def _rule_record(rule: Rule) -> dict[str, Any]:
    return {
        "id": rule.id,
        "version": rule.version,
        "scale": rule.scale.value,
        "digest": rule.digest,
        "allowed_codes": list(allowed_codes(rule)),
    }


SheetRenderer = Callable[[Sequence[LedgerUnit], str], tuple[bytes, list[str]]]


def _build(
    dataset: Dataset,
    run_record: RunRecord | None,
    request: SampleRequest,
    copies: dict[str, bytes],
    instrument: dict[str, Any],
    render: SheetRenderer,
) -> Sample:
    """The sample's files: ``copies`` (the rule or codebook files), ``instrument`` (what sample.json
    says of them) and one sheet per coder from ``render(units, coder)``."""
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
        LEDGER_JSONL: jsonl_text(unit.record(unit.comment_id in sampled) for unit in ledger.units).encode("utf-8"),
        LEDGER_CSV: table_csv_columns(
            LEDGER_COLUMNS, _ledger_csv_columns(ledger.units, sampled), len(ledger.units)
        ).encode("utf-8"),
        LOG_JSONL: jsonl_text(row._asdict() for row in log).encode("utf-8"),
        LOG_CSV: table_csv_text(LOG_COLUMNS, log).encode("utf-8"),
        **copies,
    }
    sheets = []
    for coder in request.coders:
        units = [by_id[comment_id] for comment_id in coder_order(draw.ids, coder, request.seed, request.shuffle)]
        path = f"{SHEETS}/{coder}.{request.sheet_format.value}"
        files[path], replaced = render(units, coder)
        sheet: dict[str, Any] = {"coder": coder, "file": path, "sha256": ""}  # filled below, with every file's
        if replaced:
            sheet["bodies_with_characters_xlsx_cannot_hold"] = {
                "replaced_by": "U+FFFD",
                "comment_ids": replaced,
                "note": "the exact text is in ledger.jsonl",
            }
        sheets.append(sheet)
    completeness = assess_completeness(run_record)
    digests = {name: hashlib.sha256(data).hexdigest() for name, data in files.items()}  # each file hashed once
    for sheet in sheets:
        sheet["sha256"] = digests[sheet["file"]]
    record = _sample_record(dataset, run_record, instrument, request, ledger, log, draw, completeness, sheets, digests)
    record["run"] = runfolder.record_of(digests)  # a reader refuses a folder mixing two runs
    files[RECORD] = render_json(record).encode("utf-8")
    return Sample(files=files, record=record, ledger=ledger, draw=draw, completeness=completeness, log=log)


def _sample_record(
    dataset: Dataset,
    run_record: RunRecord | None,
    instrument: dict[str, Any],
    request: SampleRequest,
    ledger: Ledger,
    log: Sequence[LogRow],
    draw: Draw,
    completeness: Completeness,
    sheets: list[dict[str, Any]],
    digests: dict[str, str],
) -> dict[str, Any]:
    checks = count_checks(dataset, run_record)
    return {
        "tool": {"name": "irr-audit", "version": __version__},
        **instrument,
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
            "sha256": digests[LEDGER_JSONL],
            "sample_ids": list(draw.ids),
        },
        "missingness_log": {"file": LOG_JSONL, "rows": len(log)},
    }


def _ledger_csv_columns(units: Sequence[LedgerUnit], sampled: set[str]) -> list[Sequence[object]]:
    """The ledger's CSV columns (LEDGER_COLUMNS): each unit's fields, and whether it was drawn."""
    columns: list[Sequence[object]] = [[getattr(unit, name) for unit in units] for name in UNIT_COLUMNS]
    columns.insert(IN_SAMPLE_AT, ["true" if unit.comment_id in sampled else "false" for unit in units])
    return columns


def _order_text(request: SampleRequest) -> str:
    if request.shuffle:
        return f"shuffled per coder: units ranked by sha256(seed, coder, comment_id), seed {request.seed}"
    return "dataset order, the same for every coder"


def _reason_counts(log: Iterable[LogRow]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in log:
        counts[row.reason] = counts.get(row.reason, 0) + 1
    return {reason.value: counts[reason.value] for reason in Reason if reason.value in counts}


def summary_lines(sample: Sample) -> list[str]:
    """A few lines for stderr: counts by reason, the draw, completeness, count mismatches."""
    record = sample.record
    counts = record["counts"]
    reasons = count_phrase(counts["log_rows"])
    logged = sum(counts["log_rows"].values())
    lines = [
        f"{counts['items']} items, {counts['unique_ids']} unique comment ids: {counts['usable_units']} usable units, "
        f"{logged} {rows_word(logged)} in the missingness log" + (f" ({reasons})." if reasons else "."),
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
