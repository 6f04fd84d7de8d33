"""The rule's level of measurement, shared by the rule file and the numeric core."""

from __future__ import annotations

from enum import Enum


class Scale(str, Enum):
    """The rule's ``scale`` (docs/contract.md, "Rule files"): how codes relate, which
    decides the distances and weights."""

    NOMINAL = "nominal"
    ORDINAL = "ordinal"
    INTERVAL = "interval"
    RATIO = "ratio"

    @property
    def is_ordered(self) -> bool:
        return self is not Scale.NOMINAL

    @property
    def needs_values(self) -> bool:
        """Interval and ratio distances use each code's numeric value."""
        return self in (Scale.INTERVAL, Scale.RATIO)


# A code's value is a point on the scale, and the statistics square differences of values and sum
# them over every unit (alpha's distances, ICC's mean squares, the weights). Far outside 1e-12 to
# 1e12 (1e200, 1e-320) those overflow or underflow double precision (a variance of 0, a weight of
# NaN, exit 70): values outside it are refused, with room to spare, rather than turned into wrong
# numbers. Only the unit of the values is at stake: a coefficient does not change with it.
VALUE_LIMIT = 1e12


def value_problem(value: float) -> str | None:
    """Why ``value`` cannot be a code's value, or None.

    >>> value_problem(2.5) is None, value_problem(0.0) is None
    (True, True)
    >>> value_problem(1e300)[:43]
    'its size is outside 1e-12 to 1e+12 (or 0): '
    """
    if value != 0 and not (1 / VALUE_LIMIT <= abs(value) <= VALUE_LIMIT):
        return (
            f"its size is outside {1 / VALUE_LIMIT:g} to {VALUE_LIMIT:g} (or 0): the statistics square and sum "
            "differences of values, which overflow or underflow far outside it"
        )
    return None
