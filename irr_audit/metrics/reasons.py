"""Why a coefficient is undefined: one stable code per case, one sentence each.

Batched estimators return an integer array of these codes beside their values
(0 = defined), so a bootstrap can count undefined replicates without strings
and the point estimate can still say exactly why.
"""

from __future__ import annotations

from enum import IntEnum


class Undefined(IntEnum):
    DEFINED = 0
    NO_UNITS = 1
    NO_PAIRED_UNITS = 2
    ONE_CATEGORY_USED = 3
    ONE_CATEGORY_DECLARED = 4
    NO_PAIRABLE_VALUES = 5
    NO_VALUE_VARIATION = 6
    NOT_TWO_CATEGORIES = 7
    CATEGORY_UNUSED = 8
    ONE_CODER = 9
    ONE_UNIT = 10
    ONE_WEIGHT_CLASS_USED = 11
    PAIR_UNDEFINED = 20
    INCOMPLETE_RANKS = 21
    ALL_TIED = 22


REASON_TEXT: dict[Undefined, str] = {
    Undefined.NO_UNITS: (
        "n = 0: no unit on this basis (fully coded: none coded validly by every coder; "
        "available case: none coded validly by both coders of the pair)"
    ),
    Undefined.NO_PAIRED_UNITS: "no unit has two or more valid codes",
    Undefined.ONE_CATEGORY_USED: ("pe = 1: every coder used one and the same category for every unit"),
    Undefined.ONE_CATEGORY_DECLARED: ("the rule declares fewer than two categories, so chance agreement is certain"),
    Undefined.NO_PAIRABLE_VALUES: ("no pairable values: no unit has two or more valid codes"),
    Undefined.NO_VALUE_VARIATION: ("expected disagreement = 0: every pairable value is the same"),
    Undefined.NOT_TWO_CATEGORIES: (
        "defined for two categories only (Byrt, Bishop & Carlin 1993); "
        "see per_category for each category against the rest"
    ),
    Undefined.CATEGORY_UNUSED: "no coder used this category",
    Undefined.ONE_CODER: "one coder: agreement needs at least two coders",
    Undefined.ONE_UNIT: "n = 1: a single unit cannot separate agreement from chance",
    Undefined.ONE_WEIGHT_CLASS_USED: (
        "pe = 1: the codes used all have weight 1 with each other (the same value), "
        "so the weights cannot tell them apart"
    ),
    Undefined.PAIR_UNDEFINED: "Cohen's kappa of at least one pair of coders is undefined (see pairs)",
    Undefined.INCOMPLETE_RANKS: "defined on fully coded units only: ranking the units needs every coder's code",
    Undefined.ALL_TIED: "every coder gave every unit the same code: there is no ranking to agree on",
}


def reason_text(code: int) -> str:
    return REASON_TEXT[Undefined(int(code))]
