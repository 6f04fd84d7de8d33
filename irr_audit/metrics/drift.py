"""Drift within an audit: agreement in consecutive windows of the coding order.

The fully coded units are put in order (each coder's own order for that coder, the
mean of the coders' ranks for the group) and cut into consecutive windows. In every
window: the group's kappa (Cohen's for two coders, Fleiss' for more) and, for each
coder, the mean of that coder's Cohen's kappa with each other coder (Light 1971's
average, kept to the pairs with that coder), each with a 95% percentile bootstrap
interval over the window's units.

Whether a coder drifted is tested on the coder's gap to the others: that mean minus the
others' mean kappa among themselves (with two coders, the pair's kappa). A coder who
drifts pulls down every kappa with them, so the others' means fall too; the gap falls
only for the coder who drifted. Each later window is compared with the first: the
difference (later - first) with a percentile interval of the windows' independent
replicates (their units are disjoint). A coder is named when, for some later window, the
upper bound of that interval at the Bonferroni-adjusted level 1 - 0.05 / m is below 0,
m = coders x (later windows): the chance that a coder whose gap did not fall is named
anywhere is then about 5% at most. With two coders a fall belongs to the pair: both
are named. Pure: numpy arrays in, plain data out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from irr_audit.metrics import multi_coder as mc
from irr_audit.metrics import two_coder as tc
from irr_audit.metrics.estimates import metric_from
from irr_audit.metrics.patterns import Patterns, compress, pair_tables

LEVEL = 0.95
FAMILY_LEVEL = 0.05  # the chance of naming any coder whose agreement did not fall
Batch = tuple[np.ndarray, np.ndarray]
BatchOf = Callable[[Patterns, np.ndarray], Batch]
Labels = Callable[[np.ndarray], tuple[Any, Any]]


@dataclass(frozen=True)
class Series:
    """One quantity over the windows: each window's units (row indices), value and replicates."""

    windows: tuple[np.ndarray, ...]
    points: tuple[Batch, ...]
    replicates: tuple[Batch, ...]


def windows_of(order: np.ndarray, n_windows: int | None, window_size: int | None) -> tuple[np.ndarray, ...]:
    """Row indices of consecutive windows in ``order`` (a rank per unit; ties keep row order):
    ``n_windows`` windows whose sizes differ by one at most, or windows of ``window_size`` units
    (the last holds the rest)."""
    ordered = np.argsort(order, kind="stable")
    if window_size is not None:
        return tuple(ordered[start : start + window_size] for start in range(0, len(ordered), window_size))
    return tuple(np.array_split(ordered, n_windows or 1))


def ranks(order: np.ndarray) -> np.ndarray:
    """Each coder's rank of each unit (0 first; ties share their mean rank), column by column."""
    out = np.empty(order.shape, dtype=np.float64)
    for column in range(order.shape[1]):
        _, inverse, counts = np.unique(order[:, column], return_inverse=True, return_counts=True)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        out[:, column] = (starts + (counts - 1) / 2)[inverse.reshape(-1)]
    return out


def _group_batch(patterns: Patterns, weights: np.ndarray) -> Batch:
    if patterns.n_coders == 2:
        return tc.kappa_batch(pair_tables(patterns, 0, 1, weights))
    return mc.fleiss_batch(mc.RatingCounts.of(patterns), weights)


def _mean_kappa(pairs: list[tuple[int, int]]) -> BatchOf:
    """The mean Cohen's kappa over these coder pairs; undefined where any one is."""

    def batch(patterns: Patterns, weights: np.ndarray) -> Batch:
        found = [tc.kappa_batch(pair_tables(patterns, a, b, weights)) for a, b in pairs]
        codes = np.max(np.stack([code for _, code in found]), axis=0)
        return np.where(codes == 0, np.mean(np.stack([value for value, _ in found]), axis=0), np.nan), codes

    return batch


def _with_others(coder: int, n_coders: int) -> list[tuple[int, int]]:
    return [(coder, other) for other in range(n_coders) if other != coder]


def _gap(coder: int, n_coders: int) -> BatchOf:
    """The coder's mean kappa with the others minus the others' mean kappa among themselves
    (with two coders, the pair's kappa)."""
    with_others = _mean_kappa(_with_others(coder, n_coders))
    others = [(a, b) for a in range(n_coders) for b in range(a + 1, n_coders) if coder not in (a, b)]
    if not others:
        return with_others
    among_others = _mean_kappa(others)

    def batch(patterns: Patterns, weights: np.ndarray) -> Batch:
        (value, code), (rest, rest_code) = with_others(patterns, weights), among_others(patterns, weights)
        codes = np.maximum(code, rest_code)
        return np.where(codes == 0, value - rest, np.nan), codes

    return batch


def _series(
    codes: np.ndarray,
    n_categories: int,
    windows: tuple[np.ndarray, ...],
    batch: BatchOf,
    n_boot: int,
    seed: np.random.SeedSequence,
) -> Series:
    """Each window's value and replicates; window i is drawn from the i-th child of ``seed``."""
    points, replicates = [], []
    for window, child in zip(windows, seed.spawn(len(windows))):
        patterns = compress(codes[window], n_categories)
        points.append(batch(patterns, np.atleast_2d(patterns.counts).astype(np.float64)))
        n = patterns.n_units
        generator = np.random.default_rng(child)
        drawn = (
            generator.multinomial(n, patterns.counts / n, size=n_boot).astype(np.float64)
            if n
            else np.zeros((n_boot, 0))
        )
        replicates.append(batch(patterns, drawn))
    return Series(windows, tuple(points), tuple(replicates))


def _percentiles(values: np.ndarray, level: float) -> list[float]:
    tail = (1 - level) / 2 * 100
    return [float(x) for x in np.percentile(values, [tail, 100 - tail])]


def _window_entries(series: Series, first_last: Labels) -> list[dict[str, Any]]:
    out = []
    for at, (window, (value, code), (reps, rep_codes)) in enumerate(
        zip(series.windows, series.points, series.replicates), start=1
    ):
        first, last = first_last(window)
        entry: dict[str, Any] = {"window": at, "units": int(len(window)), "from": first, "to": last}
        if len(window) < 2:
            entry.update({"value": None, "defined": False, "reason": "fewer than two units in the window", "ci": None})
        else:
            metric = metric_from(value[0], code[0])
            defined = rep_codes == 0
            entry.update(metric.to_dict())
            entry["ci"] = _percentiles(reps[defined], LEVEL) if metric.defined and defined.sum() >= 2 else None
        out.append(entry)
    return out


def _changes(series: Series, adjusted_level: float) -> list[dict[str, Any]]:
    """Each later window against the first: the difference, its 95% interval and the adjusted one."""
    (first, first_code), (first_reps, first_rep_codes) = series.points[0], series.replicates[0]
    out = []
    for at in range(1, len(series.windows)):
        (value, code), (reps, rep_codes) = series.points[at], series.replicates[at]
        entry: dict[str, Any] = {"window": at + 1, "difference": None, "ci": None, "adjusted_ci": None}
        both = (first_rep_codes == 0) & (rep_codes == 0)
        small = min(len(series.windows[0]), len(series.windows[at])) < 2
        if small or first_code[0] != 0 or code[0] != 0 or both.sum() < 2:
            entry["reason"] = "undefined in the first window or in this one"
        else:
            differences = reps[both] - first_reps[both]
            entry["difference"] = float(value[0] - first[0])
            entry["ci"] = _percentiles(differences, LEVEL)
            entry["adjusted_ci"] = _percentiles(differences, adjusted_level)
            entry["n_undefined"] = int((~both).sum())
        out.append(entry)
    return out


def _ordered(rows: np.ndarray, rank: np.ndarray, labels: Labels) -> tuple[Any, Any]:
    return labels(rows[np.argsort(rank[rows], kind="stable")])


def drift(
    codes: np.ndarray,
    order: np.ndarray,
    n_categories: int,
    coders: list[str],
    *,
    n_windows: int | None = None,
    window_size: int | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    labels: Labels | None = None,
) -> dict[str, Any]:
    """Agreement over consecutive windows (module docstring). ``codes`` (n, r) are the fully
    coded units, ``order`` (n, r) each coder's order value of each unit (numbers: a time or a
    row); ``labels(rows)`` names a window's first and last unit (default: none)."""
    r = codes.shape[1]
    coder_ranks = ranks(order)
    mean_rank = coder_ranks.mean(axis=1)
    seeds = np.random.SeedSequence(seed).spawn(1 + r)
    show: Labels = labels or (lambda rows: (None, None))
    group_windows = windows_of(mean_rank, n_windows, window_size)
    later = max(len(group_windows) - 1, 1)
    n_tests = r * later
    adjusted = 1 - FAMILY_LEVEL / n_tests
    group = _series(codes, n_categories, group_windows, _group_batch, n_boot, seeds[0])
    out: dict[str, Any] = {
        "group": {
            "coefficient": "cohen_kappa" if r == 2 else "fleiss_kappa",
            "windows": _window_entries(group, lambda rows: _ordered(rows, mean_rank, show)),
            "changes": _changes(group, adjusted),
        },
        "coders": {},
    }
    named = []
    for coder in range(r):
        own = coder_ranks[:, coder]
        windows = windows_of(own, n_windows, window_size)
        # the same child for both series: the agreement and the gap are scored on the same replicates
        agreement = _series(codes, n_categories, windows, _mean_kappa(_with_others(coder, r)), n_boot, seeds[1 + coder])
        gap = _series(codes, n_categories, windows, _gap(coder, r), n_boot, seeds[1 + coder])
        changes = _changes(gap, adjusted)
        fell = [c["window"] for c in changes if c["adjusted_ci"] is not None and c["adjusted_ci"][1] < 0]
        entry: dict[str, Any] = {
            "coefficient": "mean_pairwise_cohen_kappa",
            "windows": _window_entries(agreement, partial(_ordered, rank=own, labels=show)),
            "tested": "mean_pairwise_cohen_kappa" if r == 2 else "gap_to_others",
            "changes": changes,
            "fell_in_windows": fell,
        }
        if r > 2:
            entry["gap_windows"] = _window_entries(gap, partial(_ordered, rank=own, labels=show))
        out["coders"][coders[coder]] = entry
        if fell:
            named.append(coders[coder])
    tested = (
        "the pair's Cohen's kappa (with two coders a fall belongs to the pair, and both are named)"
        if r == 2
        else "the coder's gap to the others (the coder's mean Cohen's kappa with the other coders minus the "
        "others' mean Cohen's kappa among themselves, which falls when this coder drifts, not when another does)"
    )
    out["named"] = named
    out["adjusted_level"] = adjusted
    out["rule"] = (
        f"a coder is named when, in some later window, the upper bound of the {adjusted:.2%} percentile interval "
        f"of the difference (that window - the first) of {tested} is below 0: the Bonferroni level for {n_tests} "
        f"comparisons ({r} coders x {later} later windows), so a coder whose agreement did not fall is named with "
        "a chance of about 5% at most"
    )
    return out
