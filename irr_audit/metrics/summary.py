"""The one entry point the tool calls: codes in, an AgreementSummary out.

Two bases, side by side (docs/contract.md, docs/statistics.md):

- ``metrics``: units every coder coded with a valid code (fully coded);
- ``available_case``: units with at least two valid codes (every coefficient
  on these units; Krippendorff's pairable values are exactly these units' codes);
- ``gwet_missing``: Gwet's (2014) missing-data convention as irrCAC computes it,
  for Fleiss, Conger, AC1/AC2 and Brennan-Prediger: every unit with at least one
  valid code, a unit coded once informing the chance term (pi_k) and n.

With no missing code the two bases hold the same units and give the same numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from irr_audit.metrics.bootstrap import CELLS_PER_PIECE, attach_bootstraps, replicate_counts
from irr_audit.metrics.disagreement import disagreement_profile
from irr_audit.metrics.estimates import metric_from
from irr_audit.metrics.interpret import kappa_paradox, krippendorff_label, landis_koch_label
from irr_audit.metrics.intervals import IntervalSpec, restated
from irr_audit.metrics.krippendorff import coincidence_matrix, scale_values
from irr_audit.metrics.patterns import Grouping, Patterns, compress, merge_coders, pair_tables
from irr_audit.metrics.plan import (
    Coefficient,
    PerCategory,
    Weighting,
    gwet_missing_plan,
    multi_coder_plan,
    per_category_plan,
    resolve_weights,
    two_coder_plan,
)
from irr_audit.metrics.reasons import REASON_TEXT, Undefined
from irr_audit.metrics.result import Metric
from irr_audit.rules.scale import Scale

MetricMap = dict[str, Metric | PerCategory]
PlanBuilder = Callable[[Patterns], list[Coefficient]]


@dataclass(frozen=True)
class PairSummary:
    """One coder pair: its table and coefficients on both bases."""

    coders: tuple[int, int]
    n: int
    table: np.ndarray
    metrics: MetricMap
    available_case: MetricMap
    n_available: int


@dataclass(frozen=True)
class LeaveOneOut:
    """The overall coefficients with one coder left out, on the same fully coded units."""

    coder: int
    metrics: dict[str, Metric]
    change: dict[str, float | None]


@dataclass(frozen=True)
class AgreementSummary:
    n_coders: int
    n_categories: int
    scale: Scale
    n_units: int
    n_fully_coded: int
    n_available: int
    table: np.ndarray
    metrics: MetricMap
    available_case: MetricMap
    pairs: tuple[PairSummary, ...]
    per_category: dict[int, dict[str, Metric]]
    disagreement: dict[str, Any]
    leave_one_out: tuple[LeaveOneOut, ...]
    interpretation: dict[str, Any]
    warnings: tuple[str, ...]
    bootstrap: dict[str, Any] = field(default_factory=dict)
    gwet_missing: MetricMap = field(default_factory=dict)
    n_rated: int = 0  # units with at least one valid code: the gwet_missing basis
    intervals: IntervalSpec = field(default_factory=IntervalSpec)
    weights: str | None = None

    def to_dict(self, categories: list[str], coders: list[str]) -> dict[str, Any]:
        """JSON-ready form with category and coder names (the keys of docs/contract.md)."""
        if len(categories) != self.n_categories or len(coders) != self.n_coders:
            raise ValueError("to_dict needs one name per category and one per coder")
        return {
            "scale": self.scale.value,
            "units": {
                "total": self.n_units,
                "fully_coded": self.n_fully_coded,
                "available_case": self.n_available,
                "gwet_missing": self.n_rated,
            },
            "table": _matrix(self.table),
            "table_kind": "pair" if self.n_coders == 2 else "coincidence",
            "metrics": _metric_map(self.metrics, categories),
            "available_case": _metric_map(self.available_case, categories),
            "gwet_missing": _metric_map(self.gwet_missing, categories),
            "intervals": {
                "level": self.intervals.level,
                "kind": self.intervals.kind,
                "test_against": self.intervals.test_against,
                "weights": self.weights,
            },
            "pairs": [
                {
                    "coders": [coders[a], coders[b]],
                    "n": p.n,
                    "n_available": p.n_available,
                    "table": _matrix(p.table),
                    "metrics": _metric_map(p.metrics, categories),
                    "available_case": _metric_map(p.available_case, categories),
                }
                for p in self.pairs
                for a, b in [p.coders]
            ],
            "per_category": {
                categories[k]: {name: m.to_dict() for name, m in entry.items()}
                for k, entry in self.per_category.items()
            },
            "disagreement": _name_disagreement(self.disagreement, categories),
            "leave_one_out": [
                {
                    "left_out": coders[e.coder],
                    "metrics": {name: m.to_dict() for name, m in e.metrics.items()},
                    "change": e.change,
                }
                for e in self.leave_one_out
            ],
            "interpretation": self.interpretation,
            "warnings": list(self.warnings),
            "bootstrap": self.bootstrap,
        }


# --- JSON helpers -----------------------------------------------------------------


def _matrix(table: np.ndarray) -> list[list[float | int]]:
    if np.issubdtype(table.dtype, np.integer):
        return [[int(x) for x in row] for row in table]
    return [[float(x) for x in row] for row in table]


def _metric_map(metrics: MetricMap, categories: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, metric in metrics.items():
        if isinstance(metric, Metric):
            out[name] = metric.to_dict()
        else:
            out[name] = {categories[k]: m.to_dict() for k, m in metric.items()}
    return out


def _name_disagreement(profile: dict[str, Any], categories: list[str]) -> dict[str, Any]:
    def name_cells(cells: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{**c, "categories": [categories[i] for i in c["cells"]]} for c in cells]

    out = dict(profile)
    for key in ("far_corners", "confusions"):
        if key in out:
            out[key] = name_cells(out[key])
    return out


# --- computation ------------------------------------------------------------------


def _plan(
    patterns: Patterns, scale: Scale, values: np.ndarray | None, weights: Weighting | None = None
) -> list[Coefficient]:
    if patterns.n_coders == 2:
        return two_coder_plan(patterns, scale, values, weights)
    return multi_coder_plan(patterns, scale, values, weights)


# Raw shares and indices stay reported for a single unit; chance-corrected ones do not.
NOT_CHANCE_CORRECTED = frozenset({"po", "pe", "specific_agreement", "prevalence_index", "bias_index"})


def _evaluate(plan: list[Coefficient], patterns: Patterns, intervals: IntervalSpec | None = None) -> MetricMap:
    """Point Metrics (their bootstrap intervals are added by :func:`_bootstrap`), their analytic
    intervals and tests made as ``intervals`` asks, with n the units of this basis.

    With a single unit the formulas still produce numbers (0 for one disagreeing
    unit), but no coefficient can separate agreement from chance on one unit, so
    the chance-corrected ones are reported undefined.
    """
    points = _points(plan, patterns)
    if intervals is None:
        return points
    n = patterns.n_units
    out: MetricMap = {}
    for c in plan:
        point = points[c.name]
        if isinstance(point, Metric):
            out[c.name] = restated(point, n, intervals, c.bounds)
        else:
            out[c.name] = {k: restated(m, n, intervals, c.bounds) for k, m in point.items()}
    return out


def _points(plan: list[Coefficient], patterns: Patterns) -> MetricMap:
    if patterns.n_units == 1:
        one_unit = Metric.undefined(REASON_TEXT[Undefined.ONE_UNIT])
        out: MetricMap = {}
        for c in plan:
            point = c.point()
            if c.name not in NOT_CHANCE_CORRECTED:
                point = one_unit if isinstance(point, Metric) else dict.fromkeys(point, one_unit)
            out[c.name] = point
        return out
    return {c.name: c.point() for c in plan}


class Replicates:
    """Every coefficient of one plan, in every bootstrap replicate: the replicates come in chunks
    (b, P) of resampled counts, column j for row j of ``patterns`` (which may list the units'
    patterns in another order than the point estimates); ``plan`` builds the coefficients for them.
    Each chunk is scored in pieces small enough that no coefficient's temporaries (K x K tables,
    per-pattern sums) exceed CELLS_PER_PIECE cells per piece, so memory does not grow with the
    number of categories or replicates; only the values themselves are kept."""

    def __init__(self, patterns: Patterns, plan: PlanBuilder, level: float = 0.95) -> None:
        self.level = level
        self.plan = plan(patterns)
        self._batches = _batches(self.plan, patterns, plan)
        self._rows = _rows_per_piece(patterns)
        self._parts: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {c.name: [] for c in self.plan}

    def add(self, units: np.ndarray) -> None:
        for start in range(0, len(units), self._rows):
            for name, batch in self._batches(units[start : start + self._rows]).items():
                self._parts[name].append(batch)

    def values(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Each coefficient's values and undefined codes in the replicates added, in their order."""
        return {
            name: (np.concatenate([v for v, _ in parts]), np.concatenate([k for _, k in parts]))
            for name, parts in self._parts.items()
        }

    def with_intervals(self, metrics: MetricMap) -> MetricMap:
        return _with_intervals(self.plan, metrics, self.values(), self.level)


def _rows_per_piece(patterns: Patterns) -> int:
    """Replicates scored at once: a piece holds at most CELLS_PER_PIECE cells of the largest of
    its arrays (a K x K table, or a value per pattern and code)."""
    per_replicate = max(patterns.n_categories**2, len(patterns.counts) * max(patterns.slots[0].shape[1], 1), 1)
    return max(1, CELLS_PER_PIECE // per_replicate)


def _with_intervals(
    plan: list[Coefficient],
    metrics: MetricMap,
    replicated: dict[str, tuple[np.ndarray, np.ndarray]],
    level: float = 0.95,
) -> MetricMap:
    """The metrics with the percentile intervals of their replicates (values, undefined codes)."""
    keys: list[tuple[str, int | None]] = []
    items = []
    for c in plan:
        values, codes = replicated[c.name]
        point = metrics[c.name]
        if isinstance(point, Metric):
            keys.append((c.name, None))
            items.append((point, values, codes, c.bounds))
        else:
            for k, metric in point.items():
                keys.append((c.name, k))
                items.append((metric, values[:, k], codes[:, k], c.bounds))
    bootstrapped = dict(zip(keys, attach_bootstraps(items, level)))
    out: MetricMap = {}
    for name, point in metrics.items():
        if isinstance(point, dict):
            out[name] = {k: bootstrapped.get((name, k), metric) for k, metric in point.items()}
        else:
            out[name] = bootstrapped.get((name, None), point)
    return out


def _batches(
    plan: list[Coefficient], patterns: Patterns, rebuild: PlanBuilder | None
) -> Callable[[np.ndarray], dict[str, tuple[np.ndarray, np.ndarray]]]:
    """Every coefficient's values for a chunk of replicates. With three or more coders,
    those that ignore which coder gave which code run on the patterns merged by their
    codes (a few hundred rows where units show thousands of patterns), each chunk
    summed onto them once; the others run on the patterns themselves."""
    if rebuild is None or patterns.n_coders < 3:
        return lambda units: {c.name: c.batch(units) for c in plan}
    merged, index = merge_coders(patterns)
    if len(merged.counts) == len(patterns.counts):
        return lambda units: {c.name: c.batch(units) for c in plan}
    on_merged = {c.name: c for c in rebuild(merged)}
    onto = Grouping(index, len(merged.counts))

    def evaluate(units: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        merged_units = onto.sums(units)  # exact: sums of integer counts
        return {c.name: c.batch(units) if c.needs_coders else on_merged[c.name].batch(merged_units) for c in plan}

    return evaluate


def _one_coder_metrics(multi: bool) -> MetricMap:
    names = (["po", "pe", "fleiss_kappa", "conger_kappa"] if multi else ["po", "pe", "cohen_kappa"]) + [
        "gwet_ac1",
        "brennan_prediger",
        "krippendorff_alpha",
    ]
    return {name: Metric.undefined(REASON_TEXT[Undefined.ONE_CODER]) for name in names}


def _children(seed: int | None, count: int) -> list[np.random.Generator]:
    return [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(count)]


def _largest_share(patterns: Patterns) -> float | None:
    totals = patterns.category_totals(patterns.counts)
    return None if totals.sum() == 0 else float(totals.max() / totals.sum())


def _interpretation(metrics: MetricMap, multi: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    headline = "fleiss_kappa" if multi else "cohen_kappa"
    for name in (headline, "gwet_ac1", "weighted_kappa_quadratic", "gwet_ac2"):
        metric = metrics.get(name)
        if isinstance(metric, Metric) and metric.defined and metric.value is not None:
            out[name] = landis_koch_label(metric.value).to_dict()
    alpha = metrics.get("krippendorff_alpha")
    if isinstance(alpha, Metric) and alpha.defined and alpha.value is not None:
        out["krippendorff_alpha"] = krippendorff_label(alpha.value).to_dict()
    return out


def _warnings(metrics: MetricMap, patterns: Patterns, multi: bool) -> list[str]:
    warnings = []
    po, kappa = metrics.get("po"), metrics.get("fleiss_kappa" if multi else "cohen_kappa")
    share = _largest_share(patterns)
    po_value = po.value if isinstance(po, Metric) else None
    kappa_value = kappa.value if isinstance(kappa, Metric) else None
    if po_value is not None and kappa_value is not None and share is not None:
        message = kappa_paradox(po_value, kappa_value, share)
        if message:
            warnings.append(message)
    for name, metric in metrics.items():
        boot = metric.extra.get("bootstrap") if isinstance(metric, Metric) else None
        if boot and boot["n_undefined"]:
            warnings.append(
                f"{name}: {boot['n_undefined']} of {boot['n_boot']} bootstrap "
                "replicates were undefined and are left out of the interval"
            )
    return warnings


def _pairs(
    patterns: Patterns,
    plan: PlanBuilder,
    intervals: IntervalSpec,
    n_boot: int,
    rngs: list[np.random.Generator],
) -> tuple[PairSummary, ...]:
    full = patterns.select(patterns.n_valid == patterns.n_coders)
    coder_pairs = [(a, b) for a in range(patterns.n_coders) for b in range(a + 1, patterns.n_coders)]
    bases: list[Patterns] = []  # each pair on the fully coded units, then on the units both coded
    for a, b in coder_pairs:
        on_both = patterns.columns((a, b))
        bases += [full.columns((a, b)), on_both.select(on_both.n_valid == 2)]
    evaluated = [_evaluate(plan(basis), basis, intervals) for basis in bases]
    if n_boot > 0:
        evaluated = _pair_intervals(bases, evaluated, plan, intervals.level, n_boot, rngs)
    return tuple(
        PairSummary(
            (a, b),
            bases[2 * at].n_units,
            pair_tables(bases[2 * at], 0, 1, bases[2 * at].counts),
            evaluated[2 * at],
            evaluated[2 * at + 1],
            bases[2 * at + 1].n_units,
        )
        for at, (a, b) in enumerate(coder_pairs)
    )


def _pair_intervals(
    bases: list[Patterns],
    evaluated: list[MetricMap],
    two_coder: PlanBuilder,
    level: float,
    n_boot: int,
    rngs: list[np.random.Generator],
) -> list[MetricMap]:
    """Bootstrap intervals for every pair on both bases, each basis resampled on its own, as the
    overall coefficients are. With few categories all are scored together: their replicates are
    laid on the same K x K cells, so each two-coder coefficient runs once for many pairs'
    replicates. With more cells than a basis has patterns, each basis is scored on its own patterns."""
    resampled = [at for at, basis in enumerate(bases) if basis.n_units > 1]  # as _evaluate: none for 0 or 1 unit
    if not resampled:
        return evaluated
    k = bases[0].n_categories
    if k * k > max(len(bases[at].counts) for at in resampled):
        out = list(evaluated)
        for at in resampled:
            replicates = Replicates(bases[at], two_coder, level)
            for drawn in replicate_counts(bases[at].counts, n_boot, rngs[at]):
                replicates.add(drawn)
            out[at] = replicates.with_intervals(evaluated[at])
        return out
    cells = np.array([(row, column) for row in range(k) for column in range(k)], dtype=np.int64).reshape(-1, 2)
    replicates = Replicates(Patterns(cells, np.ones(k * k, dtype=np.int64), k), two_coder, level)
    rows = max(1, CELLS_PER_PIECE // (k * k))
    for pooled in _pooled(_on_cells(bases, resampled, n_boot, rngs, rows), rows):
        replicates.add(pooled)
    replicated = replicates.values()
    out = list(evaluated)
    for order, at in enumerate(resampled):  # n_boot rows per basis, in the order they were drawn
        rows_of = slice(order * n_boot, (order + 1) * n_boot)
        mine = {name: (found[rows_of], codes[rows_of]) for name, (found, codes) in replicated.items()}
        out[at] = _with_intervals(replicates.plan, evaluated[at], mine, level)
    return out


def _on_cells(
    bases: list[Patterns], resampled: list[int], n_boot: int, rngs: list[np.random.Generator], rows: int
) -> Iterator[np.ndarray]:
    """Each basis's replicates laid on the K x K cells (at most ``rows`` at a time), basis after basis."""
    k = bases[0].n_categories
    for at in resampled:
        cell_of = bases[at].rows[:, 0] * k + bases[at].rows[:, 1]
        for drawn in replicate_counts(bases[at].counts, n_boot, rngs[at]):
            for start in range(0, len(drawn), rows):
                piece = drawn[start : start + rows]
                on_cells = np.zeros((len(piece), k * k))
                on_cells[:, cell_of] = piece
                yield on_cells


def _pooled(chunks: Iterable[np.ndarray], rows: int) -> Iterator[np.ndarray]:
    """The chunks' rows in order, joined into chunks of at least ``rows`` rows (the last one
    may hold fewer), so that each coefficient runs once for the replicates of many pairs."""
    held: list[np.ndarray] = []
    for chunk in chunks:
        held.append(chunk)
        if sum(len(part) for part in held) >= rows:
            yield np.concatenate(held)
            held = []
    if held:
        yield np.concatenate(held)


def _leave_one_out(
    full: Patterns, scale: Scale, values: np.ndarray | None, overall: MetricMap
) -> tuple[LeaveOneOut, ...]:
    names = ("po", "fleiss_kappa", "krippendorff_alpha", "gwet_ac1")
    out = []
    for coder in range(full.n_coders):
        rest = full.columns(tuple(c for c in range(full.n_coders) if c != coder))
        plan = [c for c in multi_coder_plan(rest, scale, values) if c.name in names]
        metrics: dict[str, Metric] = {}
        change: dict[str, float | None] = {}
        for c in plan:
            value, code = c.batch(rest.counts)
            metrics[c.name] = metric_from(value[0], code[0])
            if rest.n_units == 1 and c.name not in NOT_CHANCE_CORRECTED:  # as _points: not -1, 0 or 1
                metrics[c.name] = Metric.undefined(REASON_TEXT[Undefined.ONE_UNIT])
            before = overall.get(c.name)
            now = metrics[c.name].value
            then = before.value if isinstance(before, Metric) else None
            change[c.name] = now - then if now is not None and then is not None else None
        out.append(LeaveOneOut(coder, metrics, change))
    return tuple(out)


def summarise(
    codes: np.ndarray,
    n_categories: int,
    scale: Scale | str = Scale.NOMINAL,
    values: object = None,
    *,
    n_boot: int = 0,
    seed: int | None = None,
    counts: np.ndarray | None = None,
    intervals: IntervalSpec | None = None,
    weights: str | object = None,
    patterns: Patterns | None = None,
) -> AgreementSummary:
    """Every coefficient that applies, on both bases, with uncertainty and diagnostics.

    ``codes`` is (n_units, n_coders), category index 0..K-1 or -1 for missing.
    ``values`` gives each category's number (required for interval/ratio).
    ``n_boot`` > 0 adds a percentile bootstrap (seeded by ``seed``) to every metric.
    ``counts`` weights the rows: rows may then be distinct unit patterns with the
    number of units showing each (the mergeable form of `score --counts`).
    ``intervals`` sets the analytic intervals and tests (level, normal or t, a value to test
    against; default 95% normal). ``weights`` names Gwet's weights (``WEIGHT_NAMES``) or gives a
    K x K agreement matrix: the weighted coefficients then join the unweighted ones.
    ``patterns``: ``compress(codes, n_categories, counts)`` when the caller has it already.

    Worked example A of docs/statistics.md (20 fully coded units of 22):

    >>> a = np.array([[0, 0]] * 8 + [[0, 1]] * 2 + [[1, 0]] + [[1, 1]] * 9 + [[-1, 0], [1, -1]])
    >>> s = summarise(a, 2, "nominal")
    >>> s.n_fully_coded, s.metrics["po"].value, s.metrics["pe"].value
    (20, 0.85, 0.5)
    >>> round(s.metrics["cohen_kappa"].value, 10)
    0.7
    """
    scale = Scale(scale)
    checked_values = scale_values(scale, n_categories, values)
    spec = IntervalSpec() if intervals is None else intervals
    weighting = resolve_weights(weights, scale, n_categories, checked_values)
    patterns = compress(codes, n_categories, counts) if patterns is None else patterns
    n_coders = patterns.n_coders
    multi = n_coders >= 3
    available = patterns.select(patterns.n_valid >= 2)
    is_full = available.n_valid == n_coders
    full = available.select(is_full)
    n_pairs = n_coders * (n_coders - 1) // 2
    # rngs[0] draws the shared resampling, rngs[1] Gwet's basis (all rated units), rngs[2:]
    # each pair's. No bootstrap, no draws.
    rngs = _children(seed, 2 + 2 * n_pairs) if n_boot > 0 else []

    if n_coders < 2:
        k = n_categories
        return AgreementSummary(
            n_coders,
            k,
            scale,
            patterns.n_units,
            patterns.n_units if n_coders else 0,
            0,
            np.zeros((k, k), dtype=np.int64),
            _one_coder_metrics(False),
            _one_coder_metrics(False),
            (),
            {},
            {},
            (),
            {},
            (REASON_TEXT[Undefined.ONE_CODER],),
        )

    def plan(some: Patterns) -> list[Coefficient]:
        return _plan(some, scale, checked_values, weighting)

    def two_coder(some: Patterns) -> list[Coefficient]:
        return two_coder_plan(some, scale, checked_values, weighting)

    def gwet_plan(some: Patterns) -> list[Coefficient]:
        return gwet_missing_plan(some, scale, checked_values, weighting)

    rated = patterns.select(patterns.n_valid >= 1)
    metrics = _evaluate(plan(full), full, spec)
    available_case = _evaluate(plan(available), available, spec)
    gwet_missing = _evaluate(gwet_plan(rated), rated, spec)
    by_category = _evaluate(per_category_plan(full), full, spec)
    if n_boot > 0 and available.n_units:
        metrics, available_case, by_category = _bootstrap(
            available, is_full, plan, (metrics, available_case, by_category), n_boot, rngs[0], spec.level
        )
    if n_boot > 0 and rated.n_units > 1:
        replicates = Replicates(rated, gwet_plan, spec.level)
        for drawn in replicate_counts(rated.counts, n_boot, rngs[1]):
            replicates.add(drawn)
        gwet_missing = replicates.with_intervals(gwet_missing)
    table = pair_tables(full, 0, 1, full.counts) if not multi else coincidence_matrix(full)
    per_category = _per_category_entries(full, metrics, by_category)
    pairs = _pairs(patterns, two_coder, spec, n_boot, list(rngs[2:]))
    leave_one_out = _leave_one_out(full, scale, checked_values, metrics) if multi else ()
    warnings = _warnings(metrics, full, multi)
    return AgreementSummary(
        n_coders=n_coders,
        n_categories=n_categories,
        scale=scale,
        n_units=patterns.n_units,
        n_fully_coded=full.n_units,
        n_available=available.n_units,
        table=table,
        metrics=metrics,
        available_case=available_case,
        pairs=pairs,
        per_category=per_category,
        disagreement=disagreement_profile(table, scale.is_ordered, "units" if not multi else "pairable values"),
        leave_one_out=leave_one_out,
        interpretation=_interpretation(metrics, multi),
        warnings=tuple(warnings),
        bootstrap={"n_boot": n_boot, "seed": seed} if n_boot > 0 else {},
        gwet_missing=gwet_missing,
        n_rated=rated.n_units,
        intervals=spec,
        weights=None if weighting is None else weighting.name,
    )


def _bootstrap(
    available: Patterns,
    is_full: np.ndarray,
    plan: PlanBuilder,
    evaluated: tuple[MetricMap, MetricMap, MetricMap],
    n_boot: int,
    rng: np.random.Generator,
    level: float = 0.95,
) -> tuple[MetricMap, MetricMap, MetricMap]:
    """The fully coded metrics, the available-case ones and the per-category ones with their
    percentile intervals. One resampling of the units serves both bases, overall and per
    category: each replicate resamples the units with two or more valid codes, and its fully
    coded units are those of the replicate. Drawing is the costly part when units show
    thousands of patterns; the patterns are drawn fully coded first (so those columns are one
    block) and largest first (numpy's multinomial is faster so). Each chunk of replicates is
    scored as it is drawn and dropped: only the replicate values are kept."""
    metrics, available_case, by_category = evaluated
    in_draw_order = available.select(np.lexsort((-available.counts, ~is_full)))
    n_full = int(is_full.sum())
    on_full = in_draw_order.select(slice(0, n_full))
    wanted: dict[str, tuple[Replicates, slice, MetricMap]] = {}
    if available.n_units > 1:
        wanted["available"] = (Replicates(in_draw_order, plan, level), slice(None), available_case)
    if on_full.n_units > 1:
        wanted["full"] = (Replicates(on_full, plan, level), slice(0, n_full), metrics)
        wanted["category"] = (Replicates(on_full, per_category_plan, level), slice(0, n_full), by_category)
    if not wanted:
        return evaluated
    for drawn in replicate_counts(in_draw_order.counts, n_boot, rng):
        for replicates, columns, _ in wanted.values():
            replicates.add(drawn[:, columns])
    done = {name: replicates.with_intervals(point) for name, (replicates, _, point) in wanted.items()}
    return done.get("full", metrics), done.get("available", available_case), done.get("category", by_category)


def _per_category_entries(full: Patterns, metrics: MetricMap, evaluated: MetricMap) -> dict[int, dict[str, Metric]]:
    specific = metrics.get("specific_agreement", {})
    out: dict[int, dict[str, Metric]] = {}
    for k in range(full.n_categories):
        entry: dict[str, Metric] = {}
        for name, per in evaluated.items():
            if isinstance(per, dict):  # per_category_plan's coefficients are all per category
                entry[name] = per[k]
        if isinstance(specific, dict) and k in specific:
            entry["specific_agreement"] = specific[k]
        out[k] = entry
    return out
