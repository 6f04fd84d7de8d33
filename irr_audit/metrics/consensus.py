"""A group's consensus code per unit, scored against a reference coder.

Majority (the modal code) for nominal rules, the median for ordered ones. A
unit the group cannot decide (a tie, or fewer valid codes than ``min_codes``)
stays undecided (-1) with its reason: logged, never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from irr_audit.metrics.krippendorff import Scale
from irr_audit.metrics.patterns import MISSING, validate_codes
from irr_audit.metrics.summary import AgreementSummary, summarise

TOO_FEW = "too_few_codes"
TIE = "tie"


@dataclass(frozen=True)
class Consensus:
    """``codes`` (n_units,), -1 where undecided; ``reasons`` None where decided."""

    codes: np.ndarray
    reasons: tuple[str | None, ...]
    method: str

    def reason_counts(self) -> dict[str, int]:
        values, counts = np.unique([r for r in self.reasons if r], return_counts=True)
        return {str(v): int(c) for v, c in zip(values, counts, strict=True)}


def consensus_codes(codes: np.ndarray, n_categories: int, scale: Scale | str,
                    group: list[int] | tuple[int, ...], *, min_codes: int = 2) -> Consensus:
    """One code per unit from the ``group`` columns.

    >>> c = consensus_codes(np.array([[0, 0, 1], [0, 1, -1], [2, 2, 2]]), 3, "nominal", [0, 1, 2])
    >>> c.codes.tolist(), c.reasons
    ([0, -1, 2], (None, 'tie', None))
    """
    scale = Scale(scale)
    array = validate_codes(codes, n_categories)[:, list(group)]
    counts = (array[:, :, None] == np.arange(n_categories)).sum(axis=1)  # (n, K)
    m = counts.sum(axis=1)
    if scale is Scale.NOMINAL:
        top = counts.max(axis=1, initial=0)
        winners = (counts == top[:, None]).sum(axis=1)
        decided_code = counts.argmax(axis=1) if n_categories else np.zeros(len(m), int)
        tie = winners > 1
        method = "majority (modal code; a tie for the top is undecided)"
    else:
        cumulative = np.cumsum(counts, axis=1)
        # The lower and upper middle codes; they differ only for an even count split across two.
        lower = (cumulative < ((m + 1) // 2)[:, None]).sum(axis=1)
        upper = (cumulative < (m // 2 + 1)[:, None]).sum(axis=1)
        decided_code = lower
        tie = lower != upper
        method = "median (an even split between two codes is undecided)"
    too_few = m < max(min_codes, 1)
    result = np.where(too_few | tie, MISSING, decided_code).astype(np.int64)
    reasons = tuple(TOO_FEW if f else TIE if t else None for f, t in zip(too_few, tie, strict=True))
    return Consensus(result, reasons, method)


@dataclass(frozen=True)
class GroupComparison:
    consensus: Consensus
    against_reference: AgreementSummary
    group_agreement: AgreementSummary

    def to_dict(self, categories: list[str], group: list[str], reference: str) -> dict[str, Any]:
        return {
            "group": group,
            "reference": reference,
            "consensus_method": self.consensus.method,
            "undecided": self.consensus.reason_counts(),
            "against_reference": self.against_reference.to_dict(categories,
                                                                ["consensus", reference]),
            "group_agreement": self.group_agreement.to_dict(categories, group),
        }


def group_vs_reference(codes: np.ndarray, n_categories: int, scale: Scale | str,
                       group: list[int] | tuple[int, ...], reference: int, values: object = None,
                       *, min_codes: int = 2, n_boot: int = 0,
                       seed: int | None = None) -> GroupComparison:
    """The group's consensus scored against ``reference``, and the group's own agreement."""
    array = validate_codes(codes, n_categories)
    consensus = consensus_codes(array, n_categories, scale, group, min_codes=min_codes)
    paired = np.column_stack([consensus.codes, array[:, reference]])
    return GroupComparison(
        consensus,
        summarise(paired, n_categories, scale, values, n_boot=n_boot, seed=seed),
        summarise(array[:, list(group)], n_categories, scale, values, n_boot=n_boot, seed=seed),
    )
