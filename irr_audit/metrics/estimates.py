"""Glue between batched estimators (arrays) and Metric records.

A batched estimator maps unit weights of shape (B, P) to ``values`` (B, ...)
and ``codes`` (B, ...) of :class:`~irr_audit.metrics.reasons.Undefined`; the
point estimate is the batch of one with the observed counts.
"""

from __future__ import annotations

import math
from typing import SupportsFloat, SupportsInt

import numpy as np

from irr_audit.metrics.reasons import Undefined, reason_text
from irr_audit.metrics.result import Metric

# The 0.975 quantile of the standard normal distribution.
Z_95 = 1.959963984540054

ANALYTIC_CI = "normal approximation, estimate +/- 1.96 SE"


def metric_from(value: SupportsFloat, code: SupportsInt, **extra: object) -> Metric:
    """One Metric from one (value, code) pair, numbers or one-element arrays; ``extra`` lands in Metric.extra."""
    if int(code) != Undefined.DEFINED:
        return Metric.undefined(reason_text(int(code)), extra=dict(extra))
    return Metric.of(float(value), extra=dict(extra))


def with_normal_ci(metric: Metric, se: float | None, bounds: tuple[float, float] = (-1.0, 1.0)) -> Metric:
    """Attach estimate +/- 1.96 SE, clipped to ``bounds``; no-op when undefined."""
    if not metric.defined or se is None or not math.isfinite(se) or metric.value is None:
        return metric
    half = Z_95 * se
    return metric.with_ci(metric.value - half, metric.value + half, ANALYTIC_CI, se=se, bounds=bounds)


def safe_divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, NaN where the denominator is 0 (callers mark those undefined)."""
    numerator = np.asarray(numerator, dtype=float)
    denominator = np.asarray(denominator, dtype=float)
    out = np.full(np.broadcast(numerator, denominator).shape, np.nan)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def first_code(*conditions: tuple[np.ndarray, Undefined]) -> np.ndarray:
    """The first reason whose condition holds, elementwise; DEFINED where none does."""
    shape = np.broadcast_shapes(*(np.shape(c) for c, _ in conditions))
    code = np.zeros(shape, dtype=np.int8)
    for condition, reason in reversed(conditions):
        code = np.where(condition, np.int8(reason), code)
    return code
