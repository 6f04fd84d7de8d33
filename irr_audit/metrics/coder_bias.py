"""Coder bias: do two coders use the categories at different rates? (marginal homogeneity)

Disagreement and bias are different things: two coders can disagree on many units yet use
each category equally often (their errors cancel in the margins), or agree often while one
of them leans towards one category. These tests compare the margins of a K x K table (rows
the first coder): a small p-value says the coders' category rates differ, whatever their
agreement. Statistics are computed exactly on the integer counts (fractions); only the
p-value is a floating-point number.

- McNemar, Q. (1947). Note on the sampling error of the difference between correlated
  proportions or percentages. Psychometrika 12(2), 153-157. doi:10.1007/BF02295996
- Stuart, A. (1955). A test for homogeneity of the marginal distributions in a two-way
  classification. Biometrika 42(3/4), 412-416. doi:10.2307/2333387
- Maxwell, A. E. (1970). Comparing the classification of subjects by two independent judges.
  British Journal of Psychiatry 116, 651-655. doi:10.1192/bjp.116.535.651
- Bhapkar, V. P. (1966). A note on the equivalence of two test criteria for hypotheses in
  categorical data. Journal of the American Statistical Association 61, 228-235.
  doi:10.1080/01621459.1966.10502021
- Kendall, M. G. & Babington Smith, B. (1939). The problem of m rankings. Annals of
  Mathematical Statistics 10(3), 275-287. doi:10.1214/aoms/1177732186 (W with the
  correction for ties of Kendall 1948, Rank Correlation Methods, ch. 6).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from irr_audit.metrics.distributions import beta_inc, chi2_sf

WHAT_IT_MEANS = (
    "Marginal homogeneity tests ask whether the coders use the categories at the same rates (coder bias), "
    "not whether they agree on each unit: a small p-value says one coder leans towards some categories; "
    "a large one says nothing about agreement, which the coefficients above measure."
)


MAX_EXACT_CATEGORIES = 60  # exact elimination is cubic in the categories: (K - 1)^3 fraction operations
SINGULAR = "the covariance of the margins is singular: no disagreement off the diagonal to test"


def _test(name: str, statistic: Fraction | None, df: int, reason: str | None = None, **extra: Any) -> dict[str, Any]:
    if statistic is None:
        return {"test": name, "defined": False, "reason": reason, "statistic": None, "df": df, "p_value": None}
    value = float(statistic)
    return {
        "test": name,
        "defined": True,
        "statistic": value,
        "df": df,
        "p_value": float(chi2_sf(value, df)),
        **extra,
    }


def mcnemar(table: np.ndarray) -> dict[str, Any]:
    """McNemar's test on a 2 x 2 table: (b - c)^2 / (b + c) with 1 df (no continuity
    correction), and the exact two-sided binomial p-value beside it.

    >>> result = mcnemar(np.array([[794, 86], [150, 570]]))  # Agresti (2013), Table 11.1
    >>> round(result["statistic"], 2), result["df"]
    (17.36, 1)
    """
    t = np.asarray(table, dtype=np.int64)
    if t.shape != (2, 2):
        return _test("McNemar", None, 1, "defined for two categories only; see Stuart-Maxwell and Bhapkar")
    b, c = int(t[0, 1]), int(t[1, 0])
    if b + c == 0:
        return _test("McNemar", None, 1, "no discordant units: b + c = 0, nothing to compare")
    exact = min(1.0, 2 * binomial_half_cdf(min(b, c), b + c))
    return _test("McNemar", Fraction((b - c) ** 2, b + c), 1, exact_p_value=exact)


def binomial_half_cdf(k: int, n: int) -> float:
    """P(X <= k) for X binomial (n, 1/2): exactly from the integers up to n = 1000, beyond by the
    regularized incomplete beta function I_{1/2}(n - k, k + 1) (a sum of millions of binomial
    coefficients would take minutes).

    >>> binomial_half_cdf(2, 10), round(binomial_half_cdf(3_000_000, 9_000_000), 6)
    (0.0546875, 0.0)
    """
    if k >= n:
        return 1.0
    if n <= 1000:
        return float(Fraction(sum(math.comb(n, i) for i in range(k + 1)), 2**n))
    return beta_inc(n - k, k + 1, 0.5)


def _used(table: np.ndarray) -> np.ndarray:
    """Categories either coder used: an unused one adds a zero row and column that make the
    covariance singular without saying anything about bias."""
    return np.flatnonzero(table.sum(axis=0) + table.sum(axis=1) > 0)


def _solve(matrix: list[list[Fraction]], vector: list[Fraction]) -> list[Fraction] | None:
    """matrix^-1 vector by exact Gaussian elimination; None when the matrix is singular."""
    size = len(vector)
    rows = [[*matrix[i], vector[i]] for i in range(size)]
    for col in range(size):
        pivot = next((r for r in range(col, size) if rows[r][col] != 0), None)
        if pivot is None:
            return None
        rows[col], rows[pivot] = rows[pivot], rows[col]
        for r in range(size):
            if r != col and rows[r][col] != 0:
                factor = rows[r][col] / rows[col][col]
                rows[r] = [a - factor * b for a, b in zip(rows[r], rows[col])]
    return [rows[i][size] / rows[i][i] for i in range(size)]


def _stuart_maxwell_exact(table: np.ndarray) -> tuple[Fraction | None, int, str | None]:
    t = np.asarray(table, dtype=np.int64)
    used = _used(t)
    t = t[np.ix_(used, used)]
    k = len(used)
    if k < 2:
        return None, 0, "fewer than two categories used: the margins cannot differ"
    rows, cols = t.sum(axis=1), t.sum(axis=0)
    if k - 1 > MAX_EXACT_CATEGORIES:
        return _stuart_maxwell_float(t, rows, cols)
    d = [Fraction(int(rows[i] - cols[i])) for i in range(k - 1)]
    s = [
        [
            Fraction(int(rows[i] + cols[i] - 2 * t[i, i])) if i == j else Fraction(-int(t[i, j] + t[j, i]))
            for j in range(k - 1)
        ]
        for i in range(k - 1)
    ]
    solved = _solve(s, d)
    if solved is None:
        return None, k - 1, SINGULAR
    return sum((a * b for a, b in zip(d, solved)), Fraction(0)), k - 1, None


def _stuart_maxwell_float(t: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> tuple[Fraction | None, int, str | None]:
    """Beyond MAX_EXACT_CATEGORIES used categories, in floating point; singular by the matrix's rank."""
    k = len(t)
    d = (rows - cols)[: k - 1].astype(float)
    s = -(t + t.T)[: k - 1, : k - 1].astype(float)
    np.fill_diagonal(s, (rows + cols - 2 * np.diag(t))[: k - 1])
    if np.linalg.matrix_rank(s) < k - 1:
        return None, k - 1, SINGULAR
    return Fraction(float(d @ np.linalg.solve(s, d))), k - 1, None


def stuart_maxwell(table: np.ndarray) -> dict[str, Any]:
    """Stuart-Maxwell test of marginal homogeneity, K - 1 df over the categories used.

    >>> round(stuart_maxwell(np.array([[20, 10], [5, 15]]))["statistic"], 4)  # = McNemar for 2 x 2
    1.6667
    """
    statistic, df, reason = _stuart_maxwell_exact(table)
    return _test("Stuart-Maxwell", statistic, df, reason)


def bhapkar(table: np.ndarray) -> dict[str, Any]:
    """Bhapkar's test: the Wald form, SM / (1 - SM / n), with K - 1 df.

    >>> round(bhapkar(np.array([[20, 10], [5, 15]]))["statistic"], 4)
    1.7241
    """
    statistic, df, reason = _stuart_maxwell_exact(table)
    if statistic is None:
        return _test("Bhapkar", None, df, reason)
    n = int(np.asarray(table).sum())
    if statistic >= n:
        return _test("Bhapkar", None, df, "SM >= n: Bhapkar's sample covariance of the margins is singular")
    return _test("Bhapkar", statistic / (1 - statistic / n), df)


def marginal_homogeneity(table: np.ndarray) -> list[dict[str, Any]]:
    """The tests that apply to one pair's table: McNemar for two categories, then Stuart-Maxwell and Bhapkar."""
    t = np.asarray(table)
    tests = [mcnemar(t)] if t.shape == (2, 2) else []
    return [*tests, stuart_maxwell(t), bhapkar(t)]


def kendall_w(patterns_rows: np.ndarray, counts: np.ndarray) -> dict[str, Any]:
    """Kendall's coefficient of concordance W of m coders over n units (an ordinal rule's codes,
    category positions as ranks, average ranks for ties), with the ties correction, and
    Friedman's chi-square m (n - 1) W with n - 1 df. Rows are unit patterns (every coder's code,
    no missing), ``counts`` how many units show each. Exact rational arithmetic.

    >>> w = kendall_w(np.array([[0, 0, 1], [1, 1, 1], [2, 2, 0]]), np.array([1, 1, 1]))
    >>> round(w["value"], 4)
    0.2121
    """
    rows = np.asarray(patterns_rows, dtype=np.int64)
    weights = [int(c) for c in np.asarray(counts, dtype=np.int64)]
    n = sum(weights)
    m = rows.shape[1] if rows.ndim == 2 else 0
    base = {"name": "kendall_w", "n": n, "m": m}
    if m < 2:
        return {**base, "value": None, "defined": False, "reason": "one coder: concordance needs two or more"}
    if n < 2:
        return {**base, "value": None, "defined": False, "reason": f"n = {n}: ranking needs two or more units"}
    # Ranks are whole or halves: every rank is kept doubled, as an integer (Python's, unbounded),
    # and S = sum of w (R - m (n + 1) / 2)^2 is a quarter of the same sum over doubled ranks.
    doubled_sums = [0] * len(rows)
    ties = 0
    for j in range(m):
        codes = [int(code) for code in rows[:, j]]
        per_code: dict[int, int] = {}
        for code, w in zip(codes, weights):
            per_code[code] = per_code.get(code, 0) + w
        below, doubled_rank = 0, {}
        for code in sorted(per_code):
            t = per_code[code]
            doubled_rank[code] = 2 * below + t + 1  # twice the average of ranks below+1 .. below+t
            below += t
            ties += t**3 - t
        doubled_sums = [total + doubled_rank[code] for total, code in zip(doubled_sums, codes)]
    doubled_mean = m * (n + 1)
    four_s = sum(w * (r - doubled_mean) ** 2 for r, w in zip(doubled_sums, weights))
    denominator = m * m * (n**3 - n) - m * ties
    if denominator == 0:
        return {**base, "value": None, "defined": False, "reason": "every coder gave every unit the same code"}
    w_exact = Fraction(3 * four_s, denominator)  # 12 S / denominator, S = four_s / 4
    chi2 = m * (n - 1) * w_exact
    return {
        **base,
        "value": float(w_exact),
        "defined": True,
        "friedman_chi2": float(chi2),
        "df": n - 1,
        "p_value": float(chi2_sf(float(chi2), n - 1)),
        "ties_corrected": True,
    }
