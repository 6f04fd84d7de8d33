"""The order column of a coding sheet (`--order-column NAME`): when each row was coded, as a
number (a row number, a sequence, a Unix time) or an ISO 8601 date and time, for drift."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from irr_audit.errors import SheetError
from irr_audit.io.limits import DEFAULT_LIMITS, Limits
from irr_audit.io.sheets import Sheet
from irr_audit.io.tables import read_and_parse


def order_values(
    sheet: Sheet,
    column: str,
    worksheet: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
    delimiter: str | None = None,
) -> np.ndarray:
    """One float per row of ``sheet`` (its kept rows, in order): the order column's value, a
    number or an ISO 8601 time (as nanoseconds since 1970, UTC when no zone is given); NaN
    where it is blank. The file is read again and must be the bytes the sheet was read from."""
    parsed = read_and_parse(sheet.path, worksheet, limits, delimiter)
    if parsed.sha256 != sheet.sha256:
        raise SheetError(
            f"sheet {sheet.name} changed since it was read for the audit.",
            hint="run the command again once the sheet is saved.",
            code="sheet-changed",
        )
    table = parsed.table
    matches = [at for at, name in enumerate(table.header) if name.strip().casefold() == column.strip().casefold()]
    if not matches:
        raise SheetError(
            f'sheet {sheet.name} has no column "{column}" for --order-column.',
            hint="name a column every sheet has (a time or a sequence number), or leave --order-column out to use "
            "each sheet's row order.",
            code="sheet-order-column",
        )
    at = np.searchsorted(table.rows, sheet.rows)
    texts = [text.strip() if text is not None else "" for text in table.cells[matches[0]].to_pylist()]
    kept = [texts[int(position)] for position in at]
    return _parsed(kept, sheet, column)


def _parsed(texts: list[str], sheet: Sheet, column: str) -> np.ndarray:
    """Numbers, or ISO 8601 times, as the column's first value is; a value of another kind is
    refused by its row."""
    out = np.full(len(texts), np.nan)
    filled = [at for at, text in enumerate(texts) if text]
    if not filled:
        return out
    if _number(texts[filled[0]]) is not None:
        numbers = [_number(texts[at]) for at in filled]
        bad = [at for at, number in zip(filled, numbers) if number is None]
        kind = "a number, as the column's first value is"
    else:
        times = pd.to_datetime(
            pd.Series([texts[at] for at in filled], dtype=object), format="ISO8601", errors="coerce", utc=True
        )
        bad = [at for at, time in zip(filled, times) if pd.isna(time)]
        kind = "an ISO 8601 date and time, as the column's first value is"
    if bad:
        raise SheetError(
            f"sheet {sheet.name} row {int(sheet.rows_at(bad[0]))}: the --order-column {column!r} value "
            f"{texts[bad[0]][:60]!r} is not {kind}.",
            hint="write every value of the column as a number (1, 2, 3 or a Unix time) or every one as a date and "
            "time such as 2026-03-01T14:05:00; leave a row blank if its time is not known.",
            code="sheet-order-column",
        )
    if _number(texts[filled[0]]) is not None:
        out[filled] = numbers
    else:
        out[filled] = times.astype("int64").to_numpy(dtype=np.float64)
    return out


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None
