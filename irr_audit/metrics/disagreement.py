"""Where coders disagree: distance profile and far corners (ordered scales), confusions.

On an ordinal scale, mass next to the diagonal points at a category boundary
to sharpen in the rule; mass in the far corners means coders read the task
differently (docs/statistics.md, "Ordered scales"). The matrix is the two coders'
table (counts of units) or, for three or more coders, the coincidence matrix
(counts of pairable values).
"""

from __future__ import annotations

from typing import Any

import numpy as np


def _count(x: float) -> float | int:
    return int(x) if float(x).is_integer() else float(x)


def disagreement_profile(matrix: np.ndarray, ordered: bool, unit: str) -> dict[str, Any]:
    """Off-diagonal mass by distance, far-corner cells, and the most frequent confusions.

    >>> p = disagreement_profile(np.array([[5, 1, 2], [0, 4, 1], [0, 0, 3]]), True, "units")
    >>> [(d["distance"], d["count"]) for d in p["by_distance"]]
    [(1, 2), (2, 2)]
    >>> p["far_corners"]
    [{'cells': [0, 2], 'count': 2}, {'cells': [2, 0], 'count': 0}]
    """
    m = np.asarray(matrix, dtype=float)
    k = m.shape[0]
    total = m.sum()
    off_diagonal = total - np.trace(m)
    i, j = np.indices((k, k))
    distance = np.abs(i - j)
    out: dict[str, Any] = {"unit": unit, "total": _count(total), "disagreements": _count(off_diagonal)}
    confusions = [
        {"cells": [int(a), int(b)], "count": _count(m[a, b])}
        for a, b in zip(*np.nonzero((distance > 0) & (m > 0)), strict=True)
    ]
    out["confusions"] = sorted(confusions, key=lambda c: (-c["count"], c["cells"]))
    if not ordered or k < 2:
        return out
    at_distance = np.bincount(distance.ravel(), weights=m.ravel(), minlength=k)  # one pass, not one per distance
    out["by_distance"] = [
        {
            "distance": d,
            "count": _count(at_distance[d]),
            "share_of_all": float(at_distance[d] / total) if total else None,
            "share_of_disagreements": (float(at_distance[d] / off_diagonal) if off_diagonal else None),
        }
        for d in range(1, k)
    ]
    out["far_corners"] = [
        {"cells": [0, k - 1], "count": _count(m[0, k - 1])},
        {"cells": [k - 1, 0], "count": _count(m[k - 1, 0])},
    ]
    observed = distance[m > 0]
    out["max_distance_observed"] = int(observed.max()) if observed.size else None
    return out
