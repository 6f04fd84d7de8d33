"""A group's consensus code per unit, scored against a reference coder.

Majority (the modal code) for nominal rules, the median for ordered ones. A
unit the group cannot decide (a tie, or fewer valid codes than ``min_codes``)
stays undecided (-1) with its reason: logged, never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from irr_audit.metrics.intervals import IntervalSpec
from irr_audit.metrics.patterns import MISSING, validate_codes
from irr_audit.metrics.summary import AgreementSummary, summarise
from irr_audit.rules.scale import Scale

TOO_FEW = "too_few_codes"
TIE = "tie"
REASONS = (None, TOO_FEW, TIE)  # a unit's reason, by its index in ``Consensus.undecided``


@dataclass(frozen=True)
class Consensus:
    """``codes`` (n_units,), -1 where undecided; ``undecided`` (n_units,) the index of each
    unit's reason in REASONS, 0 where decided (an array: a reason object per unit of millions
    would cost more than the consensus)."""

    codes: np.ndarray
    undecided: np.ndarray
    method: str

    @property
    def reasons(self) -> tuple[str | None, ...]:
        """Each unit's reason, None where decided."""
        return tuple(REASONS[index] for index in self.undecided.tolist())

    def reason_counts(self) -> dict[str, int]:
        counts = np.bincount(self.undecided, minlength=len(REASONS))
        named = sorted((REASONS[index], int(counts[index])) for index in range(1, len(REASONS)) if counts[index])
        return {str(reason): count for reason, count in named}


def consensus_codes(
    codes: np.ndarray, n_categories: int, scale: Scale | str, group: list[int] | tuple[int, ...], *, min_codes: int = 2
) -> Consensus:
    """One code per unit from the ``group`` columns.

    >>> c = consensus_codes(np.array([[0, 0, 1], [0, 1, -1], [2, 2, 2]]), 3, "nominal", [0, 1, 2])
    >>> c.codes.tolist(), c.reasons
    ([0, -1, 2], (None, 'tie', None))
    """
    scale = Scale(scale)
    # Each unit's codes sorted (missing, -1, first): memory of the codes alone, whatever K is.
    ordered = np.sort(validate_codes(codes, n_categories)[:, list(group)].astype(np.int64), axis=1)
    n, size = ordered.shape
    m = (ordered >= 0).sum(axis=1)
    if scale is Scale.NOMINAL:
        decided_code, tie = _mode(ordered)
        method = "majority (modal code; a tie for the top is undecided)"
    else:
        rows = np.arange(n)
        valid_from = size - m  # the valid codes are the last m, in order
        # The lower and upper middle codes; they differ only for an even count split across two.
        lower = ordered[rows, np.minimum(valid_from + np.maximum((m + 1) // 2 - 1, 0), size - 1)] if size else m
        upper = ordered[rows, np.minimum(valid_from + m // 2, size - 1)] if size else m
        decided_code = lower
        tie = lower != upper
        method = "median (an even split between two codes is undecided)"
    too_few = m < max(min_codes, 1)
    result = np.where(too_few | tie, MISSING, decided_code).astype(np.int64)
    undecided = np.where(too_few, REASONS.index(TOO_FEW), np.where(tie, REASONS.index(TIE), 0)).astype(np.int8)
    return Consensus(result, undecided, method)


def _mode(ordered: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The most frequent valid code of each row of sorted codes, and whether another code is as
    frequent (a tie), from the lengths of the runs of equal codes."""
    n, size = ordered.shape
    if size == 0:
        return np.full(n, MISSING, dtype=np.int64), np.zeros(n, dtype=bool)
    positions = np.arange(size)
    starts = np.ones(ordered.shape, dtype=bool)
    starts[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    run_start = np.maximum.accumulate(np.where(starts, positions, 0), axis=1)
    run_length = positions - run_start + 1  # at the run's last position: its whole length
    ends = np.ones(ordered.shape, dtype=bool)
    ends[:, :-1] = starts[:, 1:]
    length = np.where(ends & (ordered >= 0), run_length, 0)
    top = length.max(axis=1)
    winners = ((length == top[:, None]) & (top[:, None] > 0)).sum(axis=1)
    code = ordered[np.arange(n), length.argmax(axis=1)]
    return np.where(top > 0, code, MISSING), winners > 1


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
            "against_reference": self.against_reference.to_dict(categories, ["consensus", reference]),
            "group_agreement": self.group_agreement.to_dict(categories, group),
        }


def group_vs_reference(
    codes: np.ndarray,
    n_categories: int,
    scale: Scale | str,
    group: list[int] | tuple[int, ...],
    reference: int,
    values: object = None,
    *,
    min_codes: int = 2,
    n_boot: int = 0,
    seed: int | None = None,
    intervals: IntervalSpec | None = None,
    weights: object = None,
) -> GroupComparison:
    """The group's consensus scored against ``reference``, and the group's own agreement
    (``intervals`` and ``weights`` as :func:`~irr_audit.metrics.summary.summarise` takes them)."""
    array = validate_codes(codes, n_categories)
    consensus = consensus_codes(array, n_categories, scale, group, min_codes=min_codes)
    paired = np.column_stack([consensus.codes, array[:, reference]])
    return GroupComparison(
        consensus,
        summarise(paired, n_categories, scale, values, n_boot=n_boot, seed=seed, intervals=intervals, weights=weights),
        summarise(
            array[:, list(group)],
            n_categories,
            scale,
            values,
            n_boot=n_boot,
            seed=seed,
            intervals=intervals,
            weights=weights,
        ),
    )
