"""Agreement between two coders from their K x K table.

Notation follows Cohen (1960), "A coefficient of agreement for nominal scales",
Educational and Psychological Measurement 20(1), 37-46, doi:10.1177/001316446002000104:
p_o is the observed agreement, p_e the agreement expected by chance from each
coder's own marginals. Rows are the first coder, columns the second.
"""

from __future__ import annotations

import numpy as np

from irr_audit.metrics.result import Metric

NO_UNITS = "n = 0: no unit was coded by both coders"
ONE_CATEGORY = "pe = 1: both coders used one and the same category for every unit"


def as_table(table: np.ndarray) -> np.ndarray:
    counts = np.asarray(table, dtype=np.int64)
    if counts.ndim != 2 or counts.shape[0] != counts.shape[1]:
        raise ValueError(f"an agreement table must be square, got shape {counts.shape}")
    return counts


def observed_agreement(table: np.ndarray) -> Metric:
    """p_o = trace / n.

    >>> observed_agreement(np.array([[2, 1], [1, 16]])).value
    0.9
    """
    counts = as_table(table)
    n = int(counts.sum())
    if n == 0:
        return Metric.undefined(NO_UNITS)
    return Metric.of(np.trace(counts) / n)


def chance_agreement(table: np.ndarray) -> Metric:
    """p_e = sum_k (row_k / n)(col_k / n).

    >>> round(chance_agreement(np.array([[2, 1], [1, 16]])).value, 6)
    0.745
    """
    counts = as_table(table)
    n = int(counts.sum())
    if n == 0:
        return Metric.undefined(NO_UNITS)
    rows, cols = counts.sum(axis=1), counts.sum(axis=0)
    return Metric.of(int(rows @ cols) / n**2)


def chance_is_certain(table: np.ndarray) -> bool:
    """p_e = 1 exactly: both coders put every unit in one and the same category.

    Decided from the integer counts (row_k * col_k == n^2 for some k), never
    from a float comparison.
    """
    counts = as_table(table)
    n = int(counts.sum())
    rows, cols = counts.sum(axis=1), counts.sum(axis=0)
    return n > 0 and int(rows @ cols) == n * n


def cohen_kappa(table: np.ndarray) -> Metric:
    """Cohen's kappa = (p_o - p_e) / (1 - p_e), undefined when p_e = 1 or n = 0.

    DOMAIN.md example D: po 0.90, pe 0.745, kappa 0.155 / 0.255.

    >>> round(cohen_kappa(np.array([[2, 1], [1, 16]])).value, 10)
    0.6078431373
    """
    counts = as_table(table)
    n = int(counts.sum())
    if n == 0:
        return Metric.undefined(NO_UNITS)
    if chance_is_certain(counts):
        return Metric.undefined(ONE_CATEGORY)
    rows, cols = counts.sum(axis=1), counts.sum(axis=0)
    # Exact integer arithmetic up to the one division: (n*trace - rows.cols) / (n^2 - rows.cols).
    agreement_above_chance = n * int(np.trace(counts)) - int(rows @ cols)
    possible_above_chance = n * n - int(rows @ cols)
    return Metric.of(agreement_above_chance / possible_above_chance)
