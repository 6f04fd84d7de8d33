"""The final labels of an audit bundle (`irr-audit labels`): one row per unit with each
coder's independent code, the code they all agreed on, the code adjudicated after
independent coding (docs/procedure.md, step 7), and which of them the study goes on to
use, and why. A unit with no final label says why it has none; it is never given one.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from irr_audit.bundle.codebook import is_codebook_bundle
from irr_audit.bundle.workflow import Adjudication, adjudication, codebook_adjudication
from irr_audit.io.csvtables import table_csv_columns
from irr_audit.io.limits import DEFAULT_LIMITS, Limits
from irr_audit.io.outputs import csv_text
from irr_audit.join.join import STATUSES, VALID, JoinResult
from irr_audit.join.variables import VariableJoin
from irr_audit.metrics.patterns import unique_rows
from irr_audit.report.model import disagreement_units

CODER_PREFIX = "coder:"  # the coder columns, as in the adjudication template
AGREED, ADJUDICATED, UNDECIDED = "agreed", "adjudicated", "undecided"
NOT_APPLICABLE = "not_applicable"  # a codebook's conditional variable, asked of no coder on the unit
TAIL_COLUMNS = ("agreed_code", "adjudicated_code", "final_code", "final", "why")


def bundle_labels(bundle: Path, limits: Limits = DEFAULT_LIMITS) -> pd.DataFrame:
    """The labels of a bundle, read and checked as `adjudicate` reads it (a doubtful
    adjudication record stops it). Columns: comment_id, coder:<name> per coder (the
    valid code, else empty), agreed_code, adjudicated_code, final_code, final
    (agreed, adjudicated or undecided) and why; one row per unit, in the bundle's order.
    A codebook's bundle gives :func:`codebook_labels`."""
    if is_codebook_bundle(bundle):
        return codebook_labels(bundle, limits)
    return labels_frame(adjudication(bundle, limits))


def labels_frame(state: Adjudication) -> pd.DataFrame:
    """The labels of an adjudication state. Pure."""
    # the columns are this frame's own (copy=False keeps pandas from stacking eleven columns
    # of ten million objects into one block, a copy of each)
    return pd.DataFrame(label_columns(state.join, state.current), dtype=object, copy=False)


def label_columns(join: JoinResult, current: Mapping[str, dict[str, Any]]) -> dict[str, np.ndarray]:
    """The labels of ``join``'s units, a column at a time (ten million units' rows as lists
    took 9.6 GB): comment_id, coder:<name> per coder (the valid code, else empty), then
    TAIL_COLUMNS, with the decisions on record (``current``: comment id -> decision). Pure."""
    categories = np.array(join.rule.categories, dtype=object)
    coders = list(join.coders)
    valid = join.status == VALID
    unit_ids = join.unit_ids
    disagreeing = np.zeros(len(unit_ids), dtype=bool)
    disagreeing[disagreement_units(join)] = True
    agreed = join.fully_coded & ~disagreeing
    columns = {"comment_id": np.array(unit_ids, dtype=object)}  # a copy: the join's own ids stay the join's
    for at, coder in enumerate(coders):
        columns[CODER_PREFIX + coder] = np.where(valid[:, at], categories[np.clip(join.codes[:, at], 0, None)], "")
    # object columns filled with one shared text each, not a text object per unit
    agreed_code = np.full(len(unit_ids), "", dtype=object)
    agreed_code[agreed] = columns[CODER_PREFIX + coders[0]][agreed]
    adjudicated_code = np.full(len(unit_ids), "", dtype=object)
    final = np.full(len(unit_ids), UNDECIDED, dtype=object)
    final[agreed] = AGREED
    why = np.full(len(unit_ids), "", dtype=object)
    why[agreed] = "every coder gave this code"
    why[disagreeing] = "the coders disagreed and it is not adjudicated yet (irr-audit adjudicate)"
    for at, decision in _decisions(unit_ids, disagreeing, current):
        adjudicated_code[at] = decision["final_code"]
        final[at] = ADJUDICATED
        why[at] = f"the coders disagreed; decided by {decision['decided_by']} on {decision['decided_at']}"
    missing = ~agreed & ~disagreeing
    why[missing] = _missing_reasons(coders, join.status[missing])
    columns.update(
        agreed_code=agreed_code,
        adjudicated_code=adjudicated_code,
        final_code=np.where(agreed, agreed_code, adjudicated_code),
        final=final,
        why=why,
    )
    return columns


def label_rows(join: JoinResult, current: Mapping[str, dict[str, Any]]) -> list[list[Any]]:
    """The rows of :func:`label_columns`. Pure."""
    return [list(row) for row in zip(*label_columns(join, current).values())]


def _decisions(
    unit_ids: np.ndarray, disagreeing: np.ndarray, current: Mapping[str, dict[str, Any]]
) -> list[tuple[int, dict[str, Any]]]:
    """(index, decision) of each disagreeing unit with a decision on record."""
    if not current:
        return []
    at = np.flatnonzero(disagreeing)
    return [(index, current[unit]) for index, unit in zip(at.tolist(), unit_ids[at].tolist()) if unit in current]


def _missing_reasons(coders: list[str], statuses: np.ndarray) -> np.ndarray:
    """'missing codes: bob unknown, carol absent' for each row of statuses, made once per
    distinct row (a handful of patterns over millions of units)."""
    if not len(statuses):
        return np.empty(0, dtype=object)
    first, which, _ = unique_rows(statuses, len(STATUSES))  # statuses are digits as codes are
    reasons = np.array(["missing codes: " + _missing(coders, pattern) for pattern in statuses[first]], dtype=object)
    return reasons[which]


def codebook_labels(bundle: Path, limits: Limits = DEFAULT_LIMITS) -> pd.DataFrame:
    """The labels of a codebook bundle (freeze --codebook): the columns of :func:`bundle_labels`
    after a first column ``variable``, one row per variable and unit of its sheets, in the
    codebook's order. A unit the variable does not apply to is ``not_applicable``; one whose
    coders disagree on its condition is ``undecided``; a disagreement decided by `adjudicate`
    is ``adjudicated``. The bundle and its adjudication records are checked first."""
    state = codebook_adjudication(bundle, limits)
    variables = {variable: part.joined for variable, part in state.variables.items()}
    return codebook_labels_frame(variables, {variable: part.current for variable, part in state.variables.items()})


def codebook_labels_frame(
    variables: Mapping[str, VariableJoin], current: Mapping[str, Mapping[str, dict[str, Any]]] | None = None
) -> pd.DataFrame:
    """The labels of every variable of a codebook joined, with each variable's decisions on
    record (``current``: variable -> comment id -> decision). Pure."""
    coders = list(next(iter(variables.values())).full.coders)
    rows: list[list[Any]] = []
    blank = [""] * len(coders)
    for rule_id, joined in variables.items():
        scored = {row[0]: row for row in label_rows(joined.join, (current or {}).get(rule_id, {}))}
        condition = joined.condition.shown if joined.condition is not None else ""
        for index, comment_id in enumerate(joined.full.unit_ids.tolist()):
            if joined.not_applicable[index]:
                row = [comment_id, *blank, "", "", "", NOT_APPLICABLE, f"asked only when {condition}: for no coder"]
            elif joined.not_comparable[index]:
                why = f"the coders disagree on whether it is asked ({condition})"
                row = [comment_id, *blank, "", "", "", UNDECIDED, why]
            else:
                row = scored.get(comment_id) or [comment_id, *blank, "", "", "", UNDECIDED, "not one of its units"]
            rows.append([rule_id, *row])
    columns = ["variable", "comment_id", *(CODER_PREFIX + coder for coder in coders), *TAIL_COLUMNS]
    return pd.DataFrame(rows, columns=columns, dtype=object)


def _missing(coders: list[str], statuses: np.ndarray) -> str:
    """'bob unknown, carol absent': each coder without a valid code, and what the cell held."""
    return ", ".join(
        f"{coder} {STATUSES[status].value}" for coder, status in zip(coders, statuses.tolist()) if status != VALID
    )


def labels_summary(frame: pd.DataFrame) -> str:
    """'22 units: 17 agreed, 0 adjudicated, 5 undecided (3 disagreements, 2 with missing codes).'
    For a codebook's labels, one such part per variable."""
    if "variable" in frame.columns:
        parts = []
        for variable, rows in frame.groupby("variable", sort=False):
            applicable = rows[rows["final"] != NOT_APPLICABLE]
            line = labels_summary(applicable.drop(columns="variable")).rstrip(".")
            skipped = len(rows) - len(applicable)
            parts.append(f"{variable}: {line}" + (f", {skipped} not applicable" if skipped else ""))
        return "; ".join(parts) + "."
    final = frame["final"]
    undecided = frame["why"][final == UNDECIDED]  # one column taken, not every column's rows
    missing = int(undecided.str.startswith("missing codes").sum())
    line = (
        f"{len(frame)} units: {int((final == AGREED).sum())} agreed, {int((final == ADJUDICATED).sum())} adjudicated, "
        f"{len(undecided)} undecided"
    )
    if len(undecided):
        line += f" ({len(undecided) - missing} disagreements not adjudicated, {missing} with missing codes)"
    return line + "."


CSV_CHUNK_ROWS = 1 << 20  # labels made into CSV at a time: ten million units' CSV is 800 MB


def labels_csv(frame: pd.DataFrame) -> str:
    """The labels as CSV for people and spreadsheets (every cell text, formulas neutralised)."""
    return b"".join(labels_csv_chunks(frame)).decode("utf-8")


def labels_csv_chunks(frame: pd.DataFrame, rows: int = CSV_CHUNK_ROWS) -> Iterator[bytes]:
    """``labels_csv`` in UTF-8 pieces, ``rows`` labels at a time, each made a column at a time."""
    header = list(frame.columns)
    head = csv_text(header, [])
    yield head.encode("utf-8")
    for start in range(0, len(frame), rows):
        part = frame.iloc[start : start + rows]
        text = table_csv_columns(header, [part[column].tolist() for column in header], len(part))
        yield text[len(head) :].encode("utf-8")
