"""The pairs' bootstrap intervals, scored together on the K x K cells (one Replicates for every
pair), are those of each pair's replicates scored on its own patterns: the pooling changes how
often each coefficient runs, never which replicates it sees."""

from __future__ import annotations

import numpy as np
import pytest

from irr_audit.metrics.bootstrap import replicate_counts
from irr_audit.metrics.patterns import Patterns, compress
from irr_audit.metrics.plan import two_coder_plan
from irr_audit.metrics.result import Metric
from irr_audit.metrics.summary import Replicates, _evaluate, _pair_intervals, _pooled
from irr_audit.rules.scale import Scale


def pair_bases(codes: np.ndarray, k: int) -> list[Patterns]:
    """Each pair on the fully coded units, then on the units both coded (as summary._pairs)."""
    patterns = compress(codes, k, None)
    full = patterns.select(patterns.n_valid == patterns.n_coders)
    bases = []
    for a in range(patterns.n_coders):
        for b in range(a + 1, patterns.n_coders):
            on_both = patterns.columns((a, b))
            bases += [full.columns((a, b)), on_both.select(on_both.n_valid == 2)]
    return bases


def intervals(evaluated: list) -> list[tuple[str, tuple[float, float] | None]]:
    found = []
    for metrics in evaluated:
        for name, metric in sorted(metrics.items()):
            for key, one in sorted(metric.items()) if isinstance(metric, dict) else [(None, metric)]:
                assert isinstance(one, Metric)
                found.append((f"{name}[{key}]", one.ci))
    return found


@pytest.mark.parametrize(
    ("seed", "units", "coders", "k", "scale"), [(1, 120, 3, 2, "nominal"), (2, 90, 4, 3, "ordinal")]
)
def test_pooled_pair_intervals_are_each_pairs_own(seed: int, units: int, coders: int, k: int, scale: str) -> None:
    codes = np.random.default_rng(seed).integers(-1, k, size=(units, coders))
    bases = pair_bases(codes, k)
    assert k * k <= max(len(basis.counts) for basis in bases)  # the pooled path
    evaluated = [_evaluate(two_coder_plan(basis, Scale(scale), None), basis) for basis in bases]
    n_boot = 200
    seeds = np.random.SeedSequence(seed).spawn(len(bases))

    def plan(some: Patterns) -> list:
        return two_coder_plan(some, Scale(scale), None)

    rngs = [np.random.default_rng(s) for s in seeds]
    pooled = _pair_intervals(bases, evaluated, plan, 0.95, n_boot, rngs)
    own = []
    for basis, metrics, child in zip(bases, evaluated, seeds):
        replicates = Replicates(basis, lambda some: two_coder_plan(some, Scale(scale), None))
        for drawn in replicate_counts(basis.counts, n_boot, np.random.default_rng(child)):
            replicates.add(drawn)
        own.append(replicates.with_intervals(metrics))

    expected = intervals(own)
    assert [name for name, _ in intervals(pooled)] == [name for name, _ in expected]
    assert any(ci is not None for _, ci in expected)
    for (name, got), (_, want) in zip(intervals(pooled), expected):
        assert (got is None) == (want is None), name
        if want is not None:
            assert got == pytest.approx(want, abs=1e-12), name


def test_pooling_keeps_every_row_in_order() -> None:
    chunks = [np.full((size, 2), float(n)) for n, size in enumerate([3, 1, 5, 2, 4])]
    pooled = list(_pooled(chunks, 4))
    assert [len(chunk) for chunk in pooled] == [4, 5, 6]  # each at least 4 rows, joined in order
    assert np.array_equal(np.concatenate(pooled), np.concatenate(chunks))
