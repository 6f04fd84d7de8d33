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
