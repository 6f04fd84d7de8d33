"""A seeded, vectorised bootstrap over units.

Resampling n units with replacement is the same as drawing multinomial counts
over the distinct unit patterns with probabilities count_p / n; every batched
estimator then takes the (B, P) count matrix at once. Percentile intervals
(Efron & Tibshirani 1993, An Introduction to the Bootstrap, ch. 13,
doi:10.1201/9780429246593). Replicates where the coefficient is undefined are
counted and reported, never silently dropped from the count.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import numpy as np

from irr_audit.metrics.result import Metric

# Cap on replicate-by-pattern cells held in memory at once.
CELLS_PER_CHUNK = 4_000_000


def replicate_counts(counts: np.ndarray, n_boot: int,
                     rng: np.random.Generator) -> Iterator[np.ndarray]:
    """Yield (b, P) matrices of resampled pattern counts, n_boot rows in all: integers,
    held as float64 once here (exact, see patterns.unit_weights) rather than in every estimator."""
    counts = np.asarray(counts, dtype=np.int64)
    n = int(counts.sum())
    largest_first = np.argsort(-counts, kind="stable")  # numpy draws a fifth faster in this order
    chunk = max(1, min(n_boot, CELLS_PER_CHUNK // max(len(counts), 1)))
    done = 0
    while done < n_boot:
        size = min(chunk, n_boot - done)
        replicates = np.empty((size, len(counts)), dtype=np.float64)
        replicates[:, largest_first] = rng.multinomial(n, counts[largest_first] / n, size=size)
        yield replicates
        done += size


def attach_bootstrap(metric: Metric, replicates: np.ndarray, codes: np.ndarray,
                     bounds: tuple[float, float]) -> Metric:
    """Put the percentile interval of ``replicates`` into ``metric.extra["bootstrap"]``."""
    defined = codes == 0
    n_boot = int(len(codes))
    summary: dict[str, object] = {"n_boot": n_boot, "n_undefined": int(n_boot - defined.sum())}
    if not metric.defined or defined.sum() < 2:
        summary["defined"] = False
        summary["reason"] = (metric.reason if not metric.defined
                             else "fewer than two bootstrap replicates were defined")
    else:
        kept = replicates[defined]
        low, high = np.percentile(kept, [2.5, 97.5])
        interval = Metric.of(metric.value).with_ci(
            float(low), float(high), f"percentile bootstrap over units, {n_boot} replicates",
            se=float(np.std(kept, ddof=1)), bounds=bounds)
        summary.update({k: v for k, v in interval.to_dict().items() if k != "value"})
    return replace(metric, extra={**metric.extra, "bootstrap": summary})
