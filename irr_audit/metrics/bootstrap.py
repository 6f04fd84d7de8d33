"""A seeded, vectorised bootstrap over units.

Resampling n units with replacement is the same as drawing multinomial counts
over the distinct unit patterns with probabilities count_p / n; every batched
estimator then takes the (B, P) count matrix at once. Percentile intervals
(Efron & Tibshirani 1993, An Introduction to the Bootstrap, ch. 13,
doi:10.1201/9780429246593). Replicates where the coefficient is undefined are
counted and reported, never silently dropped from the count.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import replace

import numpy as np

from irr_audit._threads import Workers, thread_count
from irr_audit.metrics.result import Metric

# Cap on replicate-by-pattern cells drawn at once (a chunk; one per thread is drawn ahead of the one scored).
CELLS_PER_CHUNK = 4_000_000
# The replicates come in this many chunks at least, whatever the machine: the chunks decide the draws.
MIN_CHUNKS = 2
# Cap on the cells of one array a coefficient makes for the replicates it scores at once (a piece of
# a chunk): K x K tables, or a value per pattern and code. A coefficient holds a few such arrays.
CELLS_PER_PIECE = 1_000_000


def replicate_counts(counts: np.ndarray, n_boot: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """Yield (b, P) matrices of resampled pattern counts, n_boot rows in all: integers,
    held as float64 once here (exact, see patterns.unit_weights) rather than in every
    estimator. numpy draws a fifth faster when the largest counts come first.

    The replicates come in at least two chunks, drawn on one thread per core (numpy's
    multinomial releases the GIL), each chunk from its own generator spawned from
    ``rng``: the chunks depend only on n_boot and P, never on the threads, so a seed
    gives the same replicates on any machine."""
    counts = np.asarray(counts, dtype=np.int64)
    n = int(counts.sum())
    n_chunks = min(n_boot, max(MIN_CHUNKS, -(-n_boot * len(counts) // CELLS_PER_CHUNK)))
    sizes = [n_boot // n_chunks + (chunk < n_boot % n_chunks) for chunk in range(n_chunks)]

    def draw(generator: np.random.Generator, size: int) -> np.ndarray:
        return generator.multinomial(n, counts / n, size=size).astype(np.float64)

    # One chunk per thread is drawn ahead at most: memory is a few chunks, whatever n_boot is.
    threads = thread_count()
    with Workers(max_workers=threads) as pool:
        ahead: deque[Future[np.ndarray]] = deque()
        for generator, size in zip(rng.spawn(len(sizes)), sizes):
            ahead.append(pool.submit(draw, generator, size))
            if len(ahead) == threads:
                yield ahead.popleft().result()
        while ahead:
            yield ahead.popleft().result()


Replicated = tuple[Metric, np.ndarray, np.ndarray, tuple[float, float]]


def percentiles(level: float) -> list[float]:
    """The percentiles of a two-sided ``level`` interval: [2.5, 97.5] at 0.95 (rounded so that
    1 - 0.95 in binary does not move them)."""
    return [round(50 * (1 - level), 10), round(50 * (1 + level), 10)]


def attach_bootstraps(items: list[Replicated], level: float = 0.95) -> list[Metric]:
    """Each metric with the percentile interval of its replicates in ``extra["bootstrap"]``.
    Replicates whose code is not 0 are undefined: counted, and left out of the interval.
    Metrics defined in every replicate share one percentile pass (row by row, the same
    numbers as one call each)."""
    done: dict[int, Metric] = {}
    whole = [
        at for at, (metric, _, codes, _) in enumerate(items) if metric.defined and len(codes) >= 2 and not codes.any()
    ]
    if whole:
        stacked = np.stack([items[at][1] for at in whole])
        lows, highs = np.percentile(stacked, percentiles(level), axis=1)
        spreads = np.std(stacked, axis=1, ddof=1)
        for row, at in enumerate(whole):
            metric, _, codes, bounds = items[at]
            done[at] = _with_interval(metric, len(codes), 0, (lows[row], highs[row], spreads[row]), bounds, level)
    out = []
    for at, (metric, replicates, codes, bounds) in enumerate(items):
        if at in done:
            out.append(done[at])
            continue
        defined = codes == 0
        n_boot, n_undefined = int(len(codes)), int(len(codes) - defined.sum())
        if not metric.defined or defined.sum() < 2:
            out.append(_with_interval(metric, n_boot, n_undefined, None, bounds, level))
        else:
            kept = replicates[defined]
            low, high = np.percentile(kept, percentiles(level))
            out.append(_with_interval(metric, n_boot, n_undefined, (low, high, np.std(kept, ddof=1)), bounds, level))
    return out


def _with_interval(
    metric: Metric,
    n_boot: int,
    n_undefined: int,
    interval: tuple[float, float, float] | None,
    bounds: tuple[float, float],
    level: float = 0.95,
) -> Metric:
    """The metric with its bootstrap summary: the interval (low, high, SE), or why there is none."""
    summary: dict[str, object] = {"n_boot": n_boot, "n_undefined": n_undefined}
    if interval is None or metric.value is None:
        summary["defined"] = False
        summary["reason"] = metric.reason if not metric.defined else "fewer than two bootstrap replicates were defined"
    else:
        low, high, se = interval
        with_ci = Metric.of(metric.value).with_ci(
            float(low),
            float(high),
            f"percentile bootstrap over units, {n_boot} replicates" + ("" if level == 0.95 else f", {100 * level:g}%"),
            se=float(se),
            bounds=bounds,
        )
        summary.update({k: v for k, v in with_ci.to_dict().items() if k != "value"})
    return replace(metric, extra={**metric.extra, "bootstrap": summary})
