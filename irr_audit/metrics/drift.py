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
anywhere is then about 5% (Bonferroni; measured in docs/statistics.md). With two coders
a fall belongs to the pair: both are named. Pure: numpy arrays in, plain data out.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from irr_audit.metrics import multi_coder as mc
from irr_audit.metrics import two_coder as tc
from irr_audit.metrics.bootstrap import CELLS_PER_PIECE
from irr_audit.metrics.estimates import metric_from
from irr_audit.metrics.patterns import compress, pair_tables

LEVEL = 0.95
FAMILY_LEVEL = 0.05  # the chance of naming any coder whose agreement did not fall
Batch = tuple[np.ndarray, np.ndarray]
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


Scored = dict[object, tuple[Batch, Batch]]  # quantity -> (point, replicates) in one window
Combine = Callable[[Scored], tuple[Batch, Batch]]


class _Windows:
    """Every pair's Cohen's kappa (and Fleiss' kappa, with three or more coders) in a window of
    units, at the observed counts and in each replicate, scored once per distinct window. A
    window's replicates are drawn from a generator keyed by the seed and the window's units, so
    the same window gets the same replicates for the group and for every coder."""

    def __init__(self, codes: np.ndarray, n_categories: int, n_boot: int, seed: int) -> None:
        self.codes, self.n_categories, self.n_boot, self.seed = codes, n_categories, n_boot, seed
        self.pairs = [(a, b) for a in range(codes.shape[1]) for b in range(a + 1, codes.shape[1])]
        self._scored: dict[bytes, Scored] = {}

    def scored(self, window: np.ndarray) -> Scored:
        key = np.sort(np.asarray(window, dtype=np.int64)).tobytes()  # the units, in whatever order
        if key not in self._scored:
            self._scored[key] = self._score(window, key)
        return self._scored[key]

    def _score(self, window: np.ndarray, key: bytes) -> Scored:
        """Drawn and scored in pieces of at most CELLS_PER_PIECE cells (patterns or K x K tables)
        per array, so memory does not grow with the replicates or the codes."""
        patterns = compress(self.codes[window], self.n_categories)
        n = patterns.n_units
        generator = np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=(zlib.crc32(key),)))
        piece = max(1, CELLS_PER_PIECE // max(self.n_categories**2, len(patterns.counts), 1))
        counts = mc.RatingCounts.of(patterns) if patterns.n_coders > 2 else None

        def scored(weights: np.ndarray) -> dict[object, Batch]:
            out: dict[object, Batch] = {
                pair: tc.kappa_batch(pair_tables(patterns, *pair, weights)) for pair in self.pairs
            }
            if counts is not None:
                out["fleiss"] = mc.fleiss_batch(counts, weights)
            return out

        observed = scored(np.atleast_2d(patterns.counts).astype(np.float64))
        parts: list[dict[object, Batch]] = []
        for start in range(0, self.n_boot, piece):
            size = min(piece, self.n_boot - start)
            drawn = (
                generator.multinomial(n, patterns.counts / n, size=size).astype(np.float64)
                if n
                else np.zeros((size, 0))
            )
            parts.append(scored(drawn))
        return {
            name: (
                observed[name],
                (np.concatenate([part[name][0] for part in parts]), np.concatenate([part[name][1] for part in parts])),
            )
            for name in observed
        }


def _mean(batches: list[Batch]) -> Batch:
    """The mean of several quantities; undefined where any one is."""
    codes = np.max(np.stack([code for _, code in batches]), axis=0)
    return np.where(codes == 0, np.mean(np.stack([value for value, _ in batches]), axis=0), np.nan), codes


def _mean_kappa(pairs: list[tuple[int, int]]) -> Combine:
    def combine(scored: Scored) -> tuple[Batch, Batch]:
        return _mean([scored[pair][0] for pair in pairs]), _mean([scored[pair][1] for pair in pairs])

    return combine


def _with_others(coder: int, n_coders: int) -> list[tuple[int, int]]:
    return [(min(coder, other), max(coder, other)) for other in range(n_coders) if other != coder]


def _gap(coder: int, n_coders: int) -> Combine:
    """The coder's mean kappa with the others minus the others' mean kappa among themselves
    (with two coders, the pair's kappa)."""
    with_others = _mean_kappa(_with_others(coder, n_coders))
    others = [(a, b) for a in range(n_coders) for b in range(a + 1, n_coders) if coder not in (a, b)]
    if not others:
        return with_others
    among_others = _mean_kappa(others)

    def difference(first: Batch, second: Batch) -> Batch:
        codes = np.maximum(first[1], second[1])
        return np.where(codes == 0, first[0] - second[0], np.nan), codes

    def combine(scored: Scored) -> tuple[Batch, Batch]:
        (point, reps), (rest_point, rest_reps) = with_others(scored), among_others(scored)
        return difference(point, rest_point), difference(reps, rest_reps)

    return combine


def _group(n_coders: int) -> Combine:
    return _mean_kappa([(0, 1)]) if n_coders == 2 else (lambda scored: scored["fleiss"])


def _series(windows: tuple[np.ndarray, ...], scorer: _Windows, combine: Combine) -> Series:
    combined = [combine(scorer.scored(window)) for window in windows]
    return Series(windows, tuple(point for point, _ in combined), tuple(reps for _, reps in combined))


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
    scorer = _Windows(codes, n_categories, n_boot, seed)
    show: Labels = labels or (lambda rows: (None, None))
    group_windows = windows_of(mean_rank, n_windows, window_size)
    later = max(len(group_windows) - 1, 1)
    n_tests = r * later
    adjusted = 1 - FAMILY_LEVEL / n_tests
    group = _series(group_windows, scorer, _group(r))
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
        agreement = _series(windows, scorer, _mean_kappa(_with_others(coder, r)))
        gap = _series(windows, scorer, _gap(coder, r))
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
        "a chance of about 5% in all"
    )
    return out
