"""A draw-by-draw transcription of Krippendorff's KALPHA bootstrap, the oracle the tests of
alpha's bootstrap hold irr_audit's vectorised one to; and the worked example it is run on.

KALPHA draws each replicate's pairs one by one, comparing a uniform number with the cumulative
probabilities of the coincidence matrix's cells (upper triangle, off-diagonal cells counted twice).
"""

from __future__ import annotations

import numpy as np

from irr_audit.metrics.krippendorff import coincidence_matrix, difference_batch
from irr_audit.metrics.patterns import compress
from irr_audit.rules.scale import Scale

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 observers x 12 units,
# values 1-5 as categories 0-4, -1 missing; nominal alpha 0.743, ordinal 0.815.
KRIPPENDORFF_2011 = np.array(
    [[0, 0, -1, 0], [1, 1, 2, 1], [2, 2, 2, 2], [2, 2, 2, 2], [1, 1, 1, 1], [0, 1, 2, 3],
     [3, 3, 3, 3], [0, 0, 1, 0], [1, 1, 1, 1], [-1, 4, 4, 4], [-1, -1, 0, 0], [-1, -1, 2, -1]]
)  # fmt: skip


def kalpha_replicates(codes: np.ndarray, n_categories: int, draws: int, n_boot: int, seed: int) -> list[float]:
    """``n_boot`` nominal alpha replicates of ``draws`` pairs each, drawn as KALPHA draws them
    (floored at -1)."""
    o = coincidence_matrix(compress(codes, n_categories))
    n_c = o.sum(axis=1)
    n = n_c.sum()
    delta = np.asarray(difference_batch(Scale.NOMINAL, n_c.astype(float), None))
    d_e = float(n_c @ delta @ n_c) / (n * (n - 1))
    cells = [(c, k) for k in range(n_categories) for c in range(k, n_categories)]
    cumulative = np.cumsum([(o[c, k] if c == k else 2 * o[c, k]) / n for c, k in cells])
    rng = np.random.default_rng(seed)
    replicates = []
    for _ in range(n_boot):
        picked = np.searchsorted(cumulative, rng.random(draws))
        replicates.append(max(1 - sum(delta[cells[i]] for i in picked) / (d_e * draws), -1.0))
    return replicates
