"""Krippendorff's bootstrap of alpha (Hayes & Krippendorff 2007, the KALPHA macro's algorithm).

Distinct from the percentile bootstrap over units (metrics/bootstrap.py): it resamples
pairs of pairable values, not units, and keeps the expected disagreement of the data.

1. From the coincidence matrix o_ck (n.. pairable values), a pair of values (c, k), c < k,
   is drawn with probability 2 o_ck / n.., a pair (c, c) with probability o_cc / n...
2. Each replicate draws M = min(25 q, (m - 1) n.. / 2) pairs, q the number of nonzero cells
   of the coincidence matrix and m the largest number of values in a unit, and gives
   alpha* = 1 - (sum of the drawn pairs' delta^2) / (M D_e), D_e the data's expected
   disagreement (per pairable value). An alpha* below -1 is set to -1.
3. Where variation may be absent by chance, the replicates of alpha* = 1 are corrected as
   KALPHA does: round(B sum_c (o_cc / n..)^M) of them at most become 0, the expected number
   of samples that drew one single value only (alpha is then 0/0, not 1).
4. q(alpha < alpha_min) is the share of replicates below alpha_min; the interval is that of
   the sorted replicates at positions trunc(0.025 B) and trunc(0.975 B) + 1, as KALPHA gives it
   at 95%; at another level L (--ci-level), trunc((1 - L) / 2 B) and trunc((1 + L) / 2 B) + 1.

- Hayes, A. F. & Krippendorff, K. (2007). Answering the call for a standard reliability
  measure for coding data. Communication Methods and Measures 1(1), 77-89.
  doi:10.1080/19312450709336664
- Krippendorff, K. (2016). Bootstrapping distributions for Krippendorff's alpha (the algorithm
  of the KALPHA macro; also transcribed in R's ``icr::krippalpha`` and ``kripp.boot``).

No published closed-form standard error exists for ordinal alpha (its metric depends on the
data's own marginals, so Gwet's linearised SE, which holds the weights fixed, does not
apply): for ordinal alpha this bootstrap gives the interval.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from irr_audit.metrics.krippendorff import coincidence_matrix, difference_batch
from irr_audit.metrics.patterns import Patterns
from irr_audit.rules.scale import Scale

DEFAULT_ALPHA_MIN = (0.667, 0.800)
CELLS_PER_CHUNK = (
    1_000_000  # replicates x drawn cells held at once  # Krippendorff's (2004) tentative and reliable thresholds
)
METHOD = "Krippendorff's bootstrap of pairable values (Hayes & Krippendorff 2007)"


def krippendorff_bootstrap(
    patterns: Patterns,
    scale: Scale,
    values: np.ndarray | None,
    n_boot: int,
    rng: np.random.Generator,
    alpha_min: tuple[float, ...] = DEFAULT_ALPHA_MIN,
    level: float = 0.95,
) -> dict[str, Any]:
    """The bootstrap distribution of alpha, summarised: the ``level`` interval, and q(alpha < alpha_min)
    per minimum."""
    base: dict[str, Any] = {"method": METHOD, "n_boot": n_boot}
    if n_boot < 2:  # one replicate is no distribution: its "interval" [x, x] and q of 0 or 1 say nothing
        return {**base, "defined": False, "reason": f"{n_boot} replicate(s): an interval needs at least two"}
    coincidences = coincidence_matrix(patterns)
    n_c = coincidences.sum(axis=1)
    n_total = float(n_c.sum())
    if n_total == 0:
        return {**base, "defined": False, "reason": "no pairable values: no unit has two or more valid codes"}
    delta = np.asarray(difference_batch(scale, n_c.astype(float), values))
    used = n_c > 0
    if len(np.unique(values[used] if scale.needs_values and values is not None else np.flatnonzero(used))) <= 1:
        return {**base, "defined": False, "reason": "expected disagreement = 0: every pairable value is the same"}
    expected = float(n_c @ delta @ n_c) / (n_total * (n_total - 1))
    k = len(n_c)
    upper = np.triu_indices(k)
    cell = coincidences[upper]
    used_cells = np.flatnonzero(cell)  # only the pairs the data hold can be drawn
    probabilities = np.where(upper[0] == upper[1], cell, 2 * cell)[used_cells] / n_total
    deltas = delta[upper][used_cells]
    q = int(np.count_nonzero(coincidences))
    m = int(patterns.n_valid.max())
    draws = int(min(25 * q, (m - 1) * n_total / 2))
    # each replicate's counts over the cells: a multinomial draw of M pairs, in chunks of bounded memory
    rows = max(1, CELLS_PER_CHUNK // len(used_cells))
    alphas = np.concatenate(
        [
            1
            - (rng.multinomial(draws, probabilities / probabilities.sum(), size=min(rows, n_boot - start)) @ deltas)
            / (draws * expected)
            for start in range(0, n_boot, rows)
        ]
    )
    alphas = np.maximum(alphas, -1.0)
    diagonal = np.diag(coincidences) / n_total
    if np.count_nonzero(np.diag(coincidences)) == 1:
        alphas[alphas == 1] = 0.0
    else:
        ones = np.flatnonzero(alphas == 1)
        expected_single = round(n_boot * float(np.sum(diagonal**draws)))
        alphas[ones[: min(expected_single, len(ones))]] = 0.0
    ordered = np.sort(alphas)
    tail = (1 - level) / 2  # rounded before truncation: 0.975 * 1000 must stay 975
    low_at = max(int(round(tail * n_boot, 9)), 1) - 1
    high_at = min(int(round((1 - tail) * n_boot, 9)) + 1, n_boot) - 1
    return {
        **base,
        "defined": True,
        "pairs_per_replicate": draws,
        "ci": [float(ordered[low_at]), float(ordered[high_at])],
        "mean": float(alphas.mean()),
        "q_below": [{"alpha_min": float(a), "q": float(np.mean(alphas < a))} for a in alpha_min],
    }
