"""The difference (B - A) of every coefficient between two audits, with a bootstrap interval.

The units of the two audits fall into three strata, matched by unit id: the units fully
coded in both (shared), and those fully coded in A only or in B only. Each replicate
resamples every stratum on its own, with replacement and at its own size: a shared
unit drawn counts in both audits, with its codes of each (a paired bootstrap, for a
re-coding of the same units); a unit of one audit only counts in that audit (an
independent bootstrap, for a new sample). So the same units give a paired bootstrap,
disjoint units an independent one, and overlapping units both at once. The interval is
the percentile interval of the replicates' differences (Efron & Tibshirani 1993, ch. 13
and 16.3 for two samples); the point values are each audit's own, as its report gives them.
Pure: numpy arrays in, plain data out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from irr_audit.metrics.bootstrap import CELLS_PER_PIECE
from irr_audit.metrics.patterns import Grouping, Patterns, unique_rows, validate_codes
from irr_audit.metrics.plan import Coefficient, multi_coder_plan, per_category_plan, two_coder_plan
from irr_audit.metrics.result import Metric
from irr_audit.metrics.summary import _evaluate
from irr_audit.rules.scale import Scale

CELLS_PER_DRAW = 2_000_000  # replicates x patterns drawn at once, per stratum
LEVEL = 0.95
Batch = tuple[np.ndarray, np.ndarray]


@dataclass(frozen=True)
class Side:
    """One audit's fully coded units: ``codes`` (n, r) category indices (no -1), ``ids`` (n,)
    the units' ids as text (a numpy array or a pyarrow string array), and its rule's
    categories, scale and code values."""

    codes: np.ndarray
    ids: np.ndarray | pa.Array
    categories: tuple[str, ...]
    scale: Scale
    values: np.ndarray | None = None


@dataclass(frozen=True)
class Strata:
    """Row indices into A's and B's units: shared (paired), and each audit's own."""

    shared_a: np.ndarray
    shared_b: np.ndarray
    only_a: np.ndarray
    only_b: np.ndarray

    @property
    def method(self) -> str:
        n = len(self.shared_a)
        if not len(self.only_a) and not len(self.only_b):
            return f"paired percentile bootstrap over the {n:,} units fully coded in both"
        if not n:
            return "independent percentile bootstrap: the units of A and of B resampled apart"
        return (
            f"stratified percentile bootstrap: the {n:,} units fully coded in both resampled paired, "
            f"the {len(self.only_a):,} of A only and {len(self.only_b):,} of B only apart"
        )


def id_texts(ids_a: np.ndarray | pa.Array, ids_b: np.ndarray | pa.Array) -> tuple[pa.Array, pa.Array]:
    """Two audits' unit ids as pyarrow texts of one type, to be matched by a hash table (ids
    already in pyarrow, as a join holds them, are not converted from Python strings again)."""
    texts = [
        ids if isinstance(ids, pa.Array) else pa.array(np.asarray(ids, dtype=object), type=pa.string())
        for ids in (ids_a, ids_b)
    ]
    if texts[0].type != texts[1].type:
        texts = [text.cast(pa.large_string()) for text in texts]
    return texts[0], texts[1]


def strata(ids_a: np.ndarray | pa.Array, ids_b: np.ndarray | pa.Array) -> Strata:
    """The shared units (by id) and each audit's own; ids are unique within an audit."""
    texts_a, texts_b = id_texts(ids_a, ids_b)
    where_b = pc.index_in(texts_a, value_set=texts_b)  # one hash table of B's ids; null: not in B
    shared_a = np.flatnonzero(where_b.is_valid().to_numpy(zero_copy_only=False)).astype(np.int64)
    shared_b = where_b.drop_null().to_numpy().astype(np.int64)
    only_a = np.setdiff1d(np.arange(len(ids_a)), shared_a)
    only_b = np.setdiff1d(np.arange(len(ids_b)), shared_b)
    return Strata(shared_a, shared_b, only_a, only_b)


def _patterns(codes: np.ndarray, n_categories: int) -> tuple[Patterns, np.ndarray]:
    """The distinct rows of ``codes`` and each unit's row among them."""
    codes = validate_codes(codes, n_categories)
    if not len(codes):
        return Patterns(codes.astype(np.int64), np.zeros(0, dtype=np.int64), n_categories), np.zeros(0, np.int64)
    first, inverse, counts = unique_rows(codes, n_categories)
    return Patterns(codes[first].astype(np.int64), counts.astype(np.int64), n_categories), inverse


def _plans(patterns: Patterns, side: Side) -> tuple[list[Coefficient], list[Coefficient]]:
    overall = (two_coder_plan if patterns.n_coders == 2 else multi_coder_plan)(patterns, side.scale, side.values)
    return overall, per_category_plan(patterns)


class _Stratum:
    """One stratum's units as distinct keys with counts, and each key's pattern in A and in B."""

    def __init__(
        self, keys: np.ndarray, of_a: Callable[[np.ndarray], np.ndarray], of_b: Callable[[np.ndarray], np.ndarray]
    ):
        self.keys: np.ndarray = keys
        self.counts: np.ndarray = np.zeros(0, dtype=np.int64)
        if len(keys):
            self.keys, self.counts = np.unique(keys, return_counts=True)
        self.n = int(self.counts.sum())
        self.to_a, self.to_b = of_a(self.keys), of_b(self.keys)

    def draw(self, rng: np.random.Generator, size: int) -> np.ndarray:
        if not self.n:
            return np.zeros((size, 0))
        return rng.multinomial(self.n, self.counts / self.n, size=size).astype(np.float64)


def replicate_weights(
    a: Side, b: Side, split: Strata, n_boot: int, seed: int
) -> tuple[Patterns, Patterns, Iterator[tuple[np.ndarray, np.ndarray]]]:
    """A's and B's patterns and, chunk by chunk as they are drawn, the unit weights (b, P_A) and
    (b, P_B) of the replicates. Stratum i is drawn from the i-th generator spawned from ``seed``
    (shared, A only, B only). A chunk holds at most CELLS_PER_DRAW patterns x replicates and
    CELLS_PER_PIECE cells of K x K tables, so memory does not grow with the replicates."""
    patterns_a, unit_a = _patterns(a.codes, len(a.categories))
    patterns_b, unit_b = _patterns(b.codes, len(b.categories))
    n_a, n_b = len(patterns_a.counts), len(patterns_b.counts)
    joint = unit_a[split.shared_a] * max(n_b, 1) + unit_b[split.shared_b]
    stratums = [
        _Stratum(joint, lambda keys: keys // max(n_b, 1), lambda keys: keys % max(n_b, 1)),
        _Stratum(unit_a[split.only_a], lambda keys: keys, lambda keys: np.full(len(keys), -1)),
        _Stratum(unit_b[split.only_b], lambda keys: np.full(len(keys), -1), lambda keys: keys),
    ]
    onto_a = [Grouping(s.to_a, n_a) for s in stratums]
    onto_b = [Grouping(s.to_b, n_b) for s in stratums]
    rngs = [np.random.default_rng(child) for child in np.random.SeedSequence(seed).spawn(len(stratums))]
    widest = max([len(s.counts) for s in stratums] + [n_a, n_b, 1])
    cells = max(len(a.categories), len(b.categories), 1) ** 2
    chunk = max(1, min(n_boot, CELLS_PER_DRAW // widest, CELLS_PER_PIECE // cells))

    def chunks() -> Iterator[tuple[np.ndarray, np.ndarray]]:
        for start in range(0, n_boot, chunk):
            size = min(chunk, n_boot - start)
            drawn = [s.draw(rng, size) for s, rng in zip(stratums, rngs)]
            weights_a = sum((g.sums(d) for g, d in zip(onto_a, drawn)), np.zeros((size, n_a)))
            weights_b = sum((g.sums(d) for g, d in zip(onto_b, drawn)), np.zeros((size, n_b)))
            yield weights_a, weights_b

    return patterns_a, patterns_b, chunks()


def _interval(differences: np.ndarray, level: float = LEVEL) -> tuple[float, float]:
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(differences, [tail, 100 - tail])
    return float(low), float(high)


def _difference(
    point_a: Metric,
    point_b: Metric,
    reps_a: tuple[np.ndarray, np.ndarray],
    reps_b: tuple[np.ndarray, np.ndarray],
    method: str,
) -> dict[str, Any]:
    """One coefficient's entry: a, b, difference (b - a) and its interval, or why there is none."""
    entry: dict[str, Any] = {"a": point_a.value, "b": point_b.value, "difference": None, "ci": None, "method": method}
    if not point_a.defined or not point_b.defined or point_a.value is None or point_b.value is None:
        which = "A" if not point_a.defined else "B"
        reason = (point_a if which == "A" else point_b).reason
        entry["reason"] = f"undefined in {which}: {reason}"
        return entry
    entry["difference"] = point_b.value - point_a.value
    values_a, codes_a = reps_a
    values_b, codes_b = reps_b
    defined = (codes_a == 0) & (codes_b == 0)
    entry["n_boot"] = int(len(defined))
    entry["n_undefined"] = int((~defined).sum())
    if defined.sum() < 2:
        entry["reason"] = "fewer than two bootstrap replicates were defined in both audits"
        return entry
    differences = values_b[defined] - values_a[defined]
    entry["ci"] = list(_interval(differences))
    entry["se"] = float(np.std(differences, ddof=1))
    return entry


def compare_sides(a: Side, b: Side, *, n_boot: int, seed: int, names: Sequence[str] | None = None) -> dict[str, Any]:
    """Every coefficient both audits report, and per category every per-category one for the
    categories both rules have: ``{"a", "b", "difference", "ci", "method", ...}``. ``names``
    keeps only those coefficients (a simulation that needs one)."""
    split = strata(a.ids, b.ids)
    patterns_a, patterns_b, chunks = replicate_weights(a, b, split, n_boot, seed)
    plan_a, category_plan_a = _plans(patterns_a, a)
    plan_b, category_plan_b = _plans(patterns_b, b)
    by_name_b = {c.name: c for c in plan_b}
    shared = [c for c in plan_a if c.name in by_name_b and (names is None or c.name in names)]
    point_a, point_b = _evaluate(shared, patterns_a), _evaluate([by_name_b[c.name] for c in shared], patterns_b)
    category_b = {c.name: c for c in category_plan_b}
    shared_category = [c for c in category_plan_a if c.name in category_b and (names is None or c.name in names)]
    category_point_a = _evaluate(shared_category, patterns_a)
    category_point_b = _evaluate([category_b[c.name] for c in shared_category], patterns_b)

    plans = {
        "a": shared,
        "b": [by_name_b[c.name] for c in shared],
        "category_a": shared_category,
        "category_b": [category_b[c.name] for c in shared_category],
    }
    parts: dict[str, dict[str, list[Batch]]] = {key: {c.name: [] for c in plan} for key, plan in plans.items()}
    for weights_a, weights_b in chunks:  # each chunk scored as drawn, then dropped
        for key, plan in plans.items():
            for c in plan:
                parts[key][c.name].append(c.batch(weights_a if key.endswith("a") else weights_b))
    joined = {
        key: {
            name: (np.concatenate([v for v, _ in found]), np.concatenate([k for _, k in found]))
            for name, found in by_name.items()
        }
        for key, by_name in parts.items()
    }
    reps_a, reps_b = joined["a"], joined["b"]
    category_reps_a, category_reps_b = joined["category_a"], joined["category_b"]
    method = split.method + f", {n_boot} replicates"
    differences: dict[str, Any] = {}
    per_category: dict[str, dict[str, Any]] = {}
    both = [name for name in a.categories if name in b.categories]
    for c in shared:
        pa, pb = point_a[c.name], point_b[c.name]
        if isinstance(pa, Metric) and isinstance(pb, Metric):
            differences[c.name] = _difference(pa, pb, reps_a[c.name], reps_b[c.name], method)
        elif isinstance(pa, dict) and isinstance(pb, dict):
            _add_per_category(per_category, c.name, (pa, pb), (reps_a[c.name], reps_b[c.name]), a, b, both, method)
    for c in shared_category:
        pa, pb = category_point_a[c.name], category_point_b[c.name]
        if isinstance(pa, dict) and isinstance(pb, dict):
            replicated = (category_reps_a[c.name], category_reps_b[c.name])
            _add_per_category(per_category, c.name, (pa, pb), replicated, a, b, both, method)
    return {
        "differences": differences,
        "per_category": per_category,
        "units": {
            "a": len(a.ids),
            "b": len(b.ids),
            "shared": len(split.shared_a),
            "a_only": len(split.only_a),
            "b_only": len(split.only_b),
        },
        "method": method,
        "only_in_a": [c.name for c in plan_a if c.name not in by_name_b],
        "only_in_b": [c.name for c in plan_b if c.name not in {c.name for c in plan_a}],
    }


def _add_per_category(
    out: dict[str, dict[str, Any]],
    name: str,
    points: tuple[dict[int, Metric], dict[int, Metric]],
    replicated: tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]],
    a: Side,
    b: Side,
    categories: list[str],
    method: str,
) -> None:
    """One per-category coefficient for each category both rules have (matched by name)."""
    (point_a, point_b), (reps_a, reps_b) = points, replicated
    for category in categories:
        at_a, at_b = a.categories.index(category), b.categories.index(category)
        out.setdefault(category, {})[name] = _difference(
            point_a[at_a],
            point_b[at_b],
            (reps_a[0][:, at_a], reps_a[1][:, at_a]),
            (reps_b[0][:, at_b], reps_b[1][:, at_b]),
            method,
        )
