"""The missingness log: one row per input row or (unit, coder) cell that did not
become a valid code, with a stable reason. One vocabulary from collection to score."""

from __future__ import annotations

from enum import Enum

LOG_COLUMNS = ("sheet", "coder", "row", "comment_id", "raw_value", "reason", "detail")


class Reason(str, Enum):
    # a (unit, coder) cell (docs/contract.md, "Coding sheets")
    UNKNOWN = "unknown"
    BLANK = "blank"
    INVALID = "invalid"
    ABSENT = "absent"
    CONFLICT = "conflict"
    # an input row that is not a unit of its own
    DUPLICATE = "duplicate"
    MISSING_ID = "missing_id"
    NOT_IN_SAMPLE = "not_in_sample"
    # a cell of a codebook's conditional variable, and a long sheet's row of no variable (docs/codebook_audit.md)
    CONDITION_UNDECIDED = "condition_undecided"
    CONDITION_DISAGREEMENT = "condition_disagreement"
    CODED_WHEN_NOT_APPLICABLE = "coded_when_not_applicable"
    UNKNOWN_VARIABLE = "unknown_variable"
    # a collected unit that cannot be coded (irr-audit sample)
    DELETED = "deleted"
    REMOVED = "removed"
    BLANK_BODY = "blank_body"
    PLACEHOLDER_BODY = "placeholder_body"
    INVALID_STATUS = "invalid_status"
    COLLECTION_FAILED = "collection_failed"
    INVALID_FIELD = "invalid_field"  # a field that is text holds a JSON object, array or boolean


def rows_word(count: int) -> str:
    """'row' or 'rows' for a count of the log's rows: a summary line must not say '1 rows'."""
    return "row" if count == 1 else "rows"


def count_phrase(counts: dict[str, int]) -> str:
    """{"unknown": 1, "blank": 1} -> "1 unknown, 1 blank" (in the order given)."""
    return ", ".join(f"{count} {reason}" for reason, count in counts.items() if count)
