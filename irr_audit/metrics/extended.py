"""The sections of the report beside the coefficients: the intraclass correlations (interval
and ratio rules), coder bias (marginal homogeneity per pair of coders), Gwet's benchmarking
of every coefficient with a standard error, and Krippendorff's bootstrap of alpha.

Each is a plain dict under a key of its own (docs/contract.md), computed from the same codes
as :func:`~irr_audit.metrics.summary.summarise`; none changes a number it reports.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from irr_audit.metrics.alpha_bootstrap import DEFAULT_ALPHA_MIN, krippendorff_bootstrap
from irr_audit.metrics.benchmark import benchmarks
from irr_audit.metrics.coder_bias import WHAT_IT_MEANS, marginal_homogeneity
from irr_audit.metrics.icc import intraclass_correlations, mean_squares
from irr_audit.metrics.krippendorff import scale_values
from irr_audit.metrics.patterns import Patterns, compress, pair_tables
from irr_audit.rules.scale import Scale

NOT_BENCHMARKED = frozenset({"po", "pe", "prevalence_index", "bias_index", "max_kappa", "pabak", "kendall_w"})
# A stream of its own for Krippendorff's bootstrap: the percentile bootstrap's draws stay as they were.
KALPHA_STREAM = 19


def extended_sections(
    codes: np.ndarray,
    n_categories: int,
    scale: Scale | str,
    values: object,
    coders: list[str],
    metrics: dict[str, Any],
    *,
    counts: np.ndarray | None = None,
    n_boot: int = 0,
    seed: int | None = None,
    alpha_min: tuple[float, ...] = DEFAULT_ALPHA_MIN,
    patterns: Patterns | None = None,
    level: float = 0.95,
) -> dict[str, Any]:
    """``icc`` (interval and ratio rules), ``coder_bias``, ``benchmarking`` and, with ``n_boot`` > 0,
    ``krippendorff_bootstrap``; ``metrics`` is the report's fully coded coefficients (their JSON form).
    ``patterns``: ``compress(codes, n_categories, counts)`` when the caller has it already; ``level``:
    the level of the ICC intervals and of the bootstrap's (--ci-level), as of every other interval."""
    scale = Scale(scale)
    checked = scale_values(scale, n_categories, values)
    patterns = compress(codes, n_categories, counts) if patterns is None else patterns
    full = patterns.select(patterns.n_valid == patterns.n_coders)
    out: dict[str, Any] = {}
    if scale in (Scale.INTERVAL, Scale.RATIO) and checked is not None:
        out["icc"] = icc_section(full, checked, level)
    out["coder_bias"] = coder_bias_section(full, coders)
    out["benchmarking"] = benchmarking_section(metrics)
    if n_boot > 0:
        out["krippendorff_bootstrap"] = kalpha_section(patterns, full, scale, checked, n_boot, seed, alpha_min, level)
    return out


def icc_section(full: Patterns, values: np.ndarray, level: float = 0.95) -> dict[str, Any]:
    """The six intraclass correlations on the fully coded units (the codes' values)."""
    section: dict[str, Any] = {
        "basis": "fully coded units: the intraclass correlation needs every coder's value on every unit",
        "n": full.n_units,
        "k": full.n_coders,
    }
    if full.n_units == 0:
        forms = intraclass_correlations(np.zeros((0, full.n_coders)))
        return {**section, "forms": {name: metric.to_dict() for name, metric in forms.items()}}
    ratings = values[full.rows]
    forms = intraclass_correlations(ratings, full.counts, level)
    if full.n_units >= 2 and full.n_coders >= 2:
        section["mean_squares"] = mean_squares(ratings, full.counts).to_dict()
    return {**section, "forms": {name: metric.to_dict() for name, metric in forms.items()}}


def coder_bias_section(full: Patterns, coders: list[str]) -> dict[str, Any]:
    """McNemar (two categories), Stuart-Maxwell and Bhapkar for every pair of coders, on the
    fully coded units (the tables of ``pairs``)."""
    pairs = []
    for a in range(full.n_coders):
        for b in range(a + 1, full.n_coders):
            table = pair_tables(full, a, b, full.counts)
            pairs.append(
                {"coders": [coders[a], coders[b]], "n": int(table.sum()), "tests": marginal_homogeneity(table)}
            )
    return {"what_it_means": WHAT_IT_MEANS, "basis": "fully coded units", "pairs": pairs}


def benchmarking_section(metrics: dict[str, Any]) -> dict[str, Any]:
    """Gwet's benchmarking of every chance-corrected coefficient that has a standard error."""
    out: dict[str, Any] = {}
    for name, metric in metrics.items():
        se = metric.get("se") if isinstance(metric, dict) else None
        if name in NOT_BENCHMARKED or not metric.get("defined") or se is None:
            continue
        if not math.isfinite(se) or se <= 0:
            continue  # a zero SE puts all the probability on the estimate: no band is uncertain
        out[name] = {"value": metric["value"], "se": se, **benchmarks(metric["value"], se)}
    return out


def kalpha_section(
    patterns: Patterns,
    full: Patterns,
    scale: Scale,
    values: np.ndarray | None,
    n_boot: int,
    seed: int | None,
    alpha_min: tuple[float, ...],
    level: float = 0.95,
) -> dict[str, Any]:
    """Krippendorff's bootstrap on both bases: fully coded units, and every unit's pairable values.
    Both draw from the same stream, so that bases holding the same units give the same distribution."""
    stream = np.random.SeedSequence(seed, spawn_key=(KALPHA_STREAM,))
    available = patterns.select(patterns.n_valid >= 2)
    return {
        "seed": seed,
        "alpha_min": list(alpha_min),
        "level": level,
        "metrics": krippendorff_bootstrap(full, scale, values, n_boot, np.random.default_rng(stream), alpha_min, level),
        "available_case": krippendorff_bootstrap(
            available, scale, values, n_boot, np.random.default_rng(stream), alpha_min, level
        ),
    }
