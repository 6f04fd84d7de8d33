"""How many units both coders must code, before an audit (docs/statistics.md, "Planning the sample").

Pure functions: each returns a :class:`SampleSize` with the number of units, the method
and its citation, and the figures the method used, so that a reader can redo the
arithmetic. Four questions:

- :func:`alpha_units`: enough units to show alpha >= alpha_min at a significance level
  (Krippendorff 2019, ch. 12, after Bloch & Kraemer 1989);
- :func:`kappa_units`: enough units for a test of kappa = kappa_0 against an expected kappa
  with a given power (Donner & Eliasziw 1992's goodness-of-fit method, equal marginals;
  Cantor 1996 when the two coders' rates of the code differ);
- :func:`half_width_units` and :func:`simulated_half_width_units`: enough units for a
  95% (or other) interval of kappa no wider than +/- a half-width, by the large-sample SE of
  Fleiss, Cohen & Everitt (1969) and by simulation;
- :func:`pilot_units`: given a pilot audit's standard errors, the units to add per coefficient.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

import numpy as np

from irr_audit._readonly import read_only
from irr_audit.errors import UsageError
from irr_audit.metrics import two_coder as tc

KRIPPENDORFF = (
    "Krippendorff, K. (2019). Content Analysis: An Introduction to Its Methodology, 4th ed., ch. 12. Sage; "
    "after Bloch, D. A. & Kraemer, H. C. (1989). 2 x 2 kappa coefficients: measures of agreement or "
    "association. Biometrics 45(1), 269-287, eq. 3.7."
)
DONNER_ELIASZIW = (
    "Donner, A. & Eliasziw, M. (1992). A goodness-of-fit approach to inference procedures for the kappa "
    "statistic: confidence interval construction, significance-testing and sample size estimation. "
    "Statistics in Medicine 11(11), 1511-1519."
)
CANTOR = "Cantor, A. B. (1996). Sample-size calculation for Cohen's kappa. Psychological Methods 1(2), 150-153."
FLEISS_COHEN_EVERITT = (
    "Fleiss, J. L., Cohen, J. & Everitt, B. S. (1969). Large sample standard errors of kappa and weighted "
    "kappa. Psychological Bulletin 72(5), 323-327."
)

MAX_UNITS = 10**9  # an answer beyond this is no plan: the inputs ask for the impossible
MAX_SIMULATIONS = 1_000_000
MAX_CODES = 1000
# A code's share (or a coder's rate of it) nearer 0 or 1 than this is refused: the formulas' cells
# divide by it, and a code seen once in 10^9 units would need more than MAX_UNITS to plan for anyway.
MIN_SHARE = 1e-9

_NORMAL = NormalDist()


class PlanInputError(UsageError):
    """An input outside the range the method is defined on; the message starts with the option."""

    code = "usage-plan"

    def __init__(self, option: str, message: str, hint: str) -> None:
        super().__init__(f"{option} {message}", hint=hint)
        self.option = option


@dataclass(frozen=True)
class SampleSize:
    """The answer: ``units`` (a whole number of units, rounded up), the method and its
    citation, the inputs as given, and the figures the method computed on the way."""

    question: str
    units: int | None
    method: str
    citation: str
    inputs: Mapping[str, Any]
    figures: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # read-only at every depth, as an audit's report: to_dict() and the rendered plan read these,
        # so a figure changed in a notebook would be shown as if the method had computed it
        object.__setattr__(self, "inputs", read_only(dict(self.inputs)))
        object.__setattr__(self, "figures", read_only(dict(self.figures)))

    def __setstate__(self, state: dict[str, Any]) -> None:
        # a deep copy copies the read-only mappings as plain dicts and lists: made read-only again
        self.__dict__.update(state, inputs=read_only(state["inputs"]), figures=read_only(state["figures"]))

    def to_dict(self) -> dict[str, Any]:
        return {
            "plan": self.question,
            "units": self.units,
            "method": self.method,
            "citation": self.citation,
            "inputs": copy.deepcopy(self.inputs),
            "figures": copy.deepcopy(self.figures),
            "notes": list(self.notes),
        }


# --- checks ------------------------------------------------------------------------------


def _finite(option: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise PlanInputError(option, f"is {value!r}, not a number.", "give a decimal number such as 0.8.")
    number = float(value)
    if not math.isfinite(number):
        raise PlanInputError(option, f"is {value!r}, not a finite number.", "give a decimal number such as 0.8.")
    return number


def _listed(option: str, values: object, example: str) -> tuple[Any, ...]:
    """Shares or rates as a tuple, from a list, a tuple or a numpy array (whose truth value is
    ambiguous, so ``values or ()`` cannot be used); text is refused whole, not read as characters."""
    if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)):
        raise PlanInputError(option, f"is {values!r}, not a list of numbers.", f"for example {example}.")
    return tuple(values)


def _open_unit(option: str, value: float, example: str) -> float:
    number = _finite(option, value)
    if not 0.0 < number < 1.0:
        raise PlanInputError(option, f"is {value!r}; it must lie strictly between 0 and 1.", f"for example {example}.")
    return number


def _coefficient(option: str, value: float, low: float = -1.0) -> float:
    number = _finite(option, value)
    if not low < number < 1.0:
        raise PlanInputError(
            option,
            f"is {value!r}; a coefficient here must lie strictly between {low:g} and 1.",
            "a coefficient of 1 needs no sample to refute and none to show; give a value such as 0.8.",
        )
    return number


def _level(value: float) -> float:
    """A significance level: above 0 and at most 0.5 (beyond it the test points the other way),
    and not so small that 1 - level / 2, where a two-sided test takes its normal quantile, rounds
    to 1 (the one-sided 1 - level is then below 1 too)."""
    number = _finite("--level", value)
    if not 0.0 < number <= 0.5:
        raise PlanInputError("--level", f"is {value!r}; a significance level lies in (0, 0.5].", "for example 0.05.")
    if 1.0 - number / 2 == 1.0:
        raise PlanInputError(
            "--level",
            f"is {value!r}: so small that 1 - level / 2 rounds to 1 in floating point, where its normal "
            "quantile has no value.",
            "give a level of 1e-15 or more, for example 0.05 or 0.001.",
        )
    return number


def _whole_units(value: float, option: str) -> int:
    if not math.isfinite(value) or value > MAX_UNITS:
        raise PlanInputError(
            option,
            f"asks for more than {MAX_UNITS:,} units.",
            "the coefficients given are too close together (or the share too small) for any sample.",
        )
    return max(1, math.ceil(value - 1e-9))  # a float a hair above a whole number is that number


def one_sided_z(level: float) -> float:
    """z with P(Z > z) = level."""
    return _NORMAL.inv_cdf(1.0 - level)


# --- Krippendorff's alpha -----------------------------------------------------------------


def alpha_units(
    alpha_min: float, level: float = 0.05, *, codes: int | None = None, smallest_share: float | None = None
) -> SampleSize:
    """Units two coders must code so that alpha >= ``alpha_min`` can be shown at significance
    ``level`` (one-sided), given the number of equally likely codes or the expected share of the
    least frequent code (Krippendorff 2019, ch. 12; Bloch & Kraemer 1989, eq. 3.7):

        N = 2 z^2 [ (1 + a)(3 - a) / (4 (1 - a) p (1 - p)) - a ]

    with a = alpha_min, p the smallest category's share and z the one-sided normal quantile.
    Four equally likely codes (p = 0.25), a = 0.800, level 0.05: N = 139; a = 0.667: N = 81.
    """
    a = _coefficient("--min", alpha_min, low=0.0)
    p_level = _level(level)
    if (codes is None) == (smallest_share is None):
        raise PlanInputError(
            "--codes",
            "and --smallest-share: give exactly one.",
            "--codes K for K equally likely codes, or --smallest-share P for the least frequent code's share.",
        )
    if codes is not None:
        if isinstance(codes, bool) or not isinstance(codes, (int, np.integer)) or codes < 2:
            raise PlanInputError("--codes", f"is {codes!r}; a rule has 2 codes or more.", "for example --codes 4.")
        if codes > MAX_CODES:
            raise PlanInputError("--codes", f"is more than {MAX_CODES}.", "give the number of codes of the rule.")
        share = 1.0 / int(codes)
    else:
        share = _finite("--smallest-share", smallest_share)  # type: ignore[arg-type]
        if not 0.0 < share <= 0.5:
            raise PlanInputError(
                "--smallest-share",
                f"is {smallest_share!r}; the least frequent of two or more codes has a share in (0, 0.5].",
                "for example --smallest-share 0.25.",
            )
    z = one_sided_z(p_level)
    exact = 2 * z * z * ((1 + a) * (3 - a) / (4 * (1 - a) * share * (1 - share)) - a)
    return SampleSize(
        question="alpha",
        units=_whole_units(exact, "--min"),
        method="Krippendorff's minimum sample size for alpha >= alpha_min (Bloch & Kraemer's formula), two coders",
        citation=KRIPPENDORFF,
        inputs={"min": a, "level": p_level, "codes": codes, "smallest_share": share},
        figures={"z": z, "unrounded": exact},
        notes=(
            "N is the number of units both coders code (Bloch & Kraemer's subjects; the ATLAS.ti manual says codings).",
            "The smallest share is the expected share of the least frequent code; equally likely codes give 1/K.",
        ),
    )


def alpha_table(
    minimums: Sequence[float] = (0.667, 0.800, 0.900),
    levels: Sequence[float] = (0.100, 0.050, 0.010, 0.005),
    codes: Sequence[int] = tuple(range(2, 11)),
) -> list[dict[str, Any]]:
    """Krippendorff's table (2019, ch. 12) as rows: codes, smallest share, then the units for each
    (alpha_min, level), keyed ``"0.800@0.050"``."""
    rows = []
    for k in codes:
        row: dict[str, Any] = {"codes": k, "smallest_share": 1.0 / k}
        for a in minimums:
            for level in levels:
                row[f"{a:.3f}@{level:.3f}"] = alpha_units(a, level, codes=k).units
        rows.append(row)
    return rows


# --- Cohen's kappa: a test ---------------------------------------------------------------


def _chi_square_1_noncentrality(level: float, power: float) -> float:
    """lambda with P(chi2_1(lambda) > chi2_1 critical value at ``level``) = ``power``.

    A chi-square with one degree of freedom and noncentrality lambda is (Z + sqrt(lambda))^2,
    so its power is Phi(sqrt(lambda) - c) + Phi(-sqrt(lambda) - c), c = z_{1 - level/2}: solved
    by bisection (the power rises with lambda)."""
    c = _NORMAL.inv_cdf(1.0 - level / 2)

    def power_at(lam: float) -> float:
        root = math.sqrt(lam)
        return _NORMAL.cdf(root - c) + _NORMAL.cdf(-root - c)

    low, high = 0.0, (c + _NORMAL.inv_cdf(power)) ** 2 + 1.0
    for _ in range(200):
        mid = (low + high) / 2
        if power_at(mid) < power:
            low = mid
        else:
            high = mid
    return (low + high) / 2


def _agreement_cells(kappa: float, shares: np.ndarray) -> np.ndarray:
    """Cell probabilities under the common-correlation model of Donner & Eliasziw (both coders
    with the same marginal shares): agreement on code j, p_j^2 + kappa p_j (1 - p_j), for each j,
    and every disagreement pooled in one last cell."""
    agree = shares**2 + kappa * shares * (1 - shares)
    return np.append(agree, 1.0 - agree.sum())


def _shares(prevalence: float | None, shares: Sequence[float] | None) -> np.ndarray:
    if (prevalence is None) == (shares is None):
        raise PlanInputError(
            "--prevalence",
            "and --shares: give exactly one.",
            "--prevalence P for a binary rule (the share of the code of interest), or --shares for K codes.",
        )
    if prevalence is not None:
        p = _share("--prevalence", _open_unit("--prevalence", prevalence, "--prevalence 0.3"))
        return np.array([p, 1.0 - p])
    given = _listed("--shares", shares, "--shares 0.2,0.3,0.5")
    if len(given) > MAX_CODES:
        raise PlanInputError("--shares", f"has more than {MAX_CODES} shares.", "give one share per code of the rule.")
    values = np.array([_finite("--shares", s) for s in given], dtype=float)
    if values.size < 2 or (values <= 0).any() or abs(values.sum() - 1.0) > 1e-6:
        raise PlanInputError(
            "--shares",
            f"is {list(given)!r}; give two or more positive shares that sum to 1.",
            "for example --shares 0.2,0.3,0.5.",
        )
    for value in values / values.sum():
        _share("--shares", float(value))
    return values / values.sum()


def _share(option: str, value: float) -> float:
    """A share that leaves every code seen: not within MIN_SHARE of 0 or 1."""
    if not MIN_SHARE <= value <= 1.0 - MIN_SHARE:
        raise PlanInputError(
            option,
            f"holds a share of {value!r}: a code used by (nearly) no unit or by (nearly) every unit leaves kappa "
            f"undefined; each share must lie between {MIN_SHARE:g} and 1 - {MIN_SHARE:g}.",
            "give the shares the codes are expected to have, for example --shares 0.2,0.3,0.5.",
        )
    return value


def kappa_units(
    expected: float,
    minimum: float,
    *,
    prevalence: float | None = None,
    shares: Sequence[float] | None = None,
    level: float = 0.05,
    power: float = 0.80,
) -> SampleSize:
    """Units for a two-sided test at ``level`` of H0: kappa = ``minimum`` that rejects with
    probability ``power`` when kappa is ``expected``: Donner & Eliasziw's (1992) goodness-of-fit
    method for two coders with the same marginal shares (a binary rule's ``prevalence``, or the
    K ``shares`` of the codes, the K-category form of the same model):

        n = lambda(level, power) / sum_cells (P_cell(expected) - P_cell(min))^2 / P_cell(min)

    lambda the noncentrality of a one-degree-of-freedom chi-square with that power."""
    k1 = _coefficient("--expected", expected)
    k0 = _coefficient("--min", minimum)
    if k0 == k1:
        raise PlanInputError(
            "--min", f"equals --expected ({expected!r}): no sample tells them apart.", "give --min below --expected."
        )
    p_level = _level(level)
    p_power = _open_unit("--power", power, "0.8")
    if p_power <= p_level:
        raise PlanInputError("--power", f"({power!r}) is not above --level ({level!r}).", "for example --power 0.8.")
    p = _shares(prevalence, shares)
    kappa_floor = float(-np.min(p / (1 - p)))  # below it an agreement cell would be negative
    for option, kappa in (("--min", k0), ("--expected", k1)):
        if kappa <= kappa_floor:
            raise PlanInputError(
                option,
                f"is {kappa!r}, below {kappa_floor:.4f}, the least kappa coders with these shares can have.",
                "give a kappa above it.",
            )
    null_cells, alternative_cells = _agreement_cells(k0, p), _agreement_cells(k1, p)
    effect = float((((alternative_cells - null_cells) ** 2) / null_cells).sum())
    lam = _chi_square_1_noncentrality(p_level, p_power)
    exact = lam / effect
    return SampleSize(
        question="kappa",
        units=_whole_units(exact, "--min"),
        method="Donner & Eliasziw's goodness-of-fit test of kappa = kappa_0, two coders with equal marginal shares",
        citation=DONNER_ELIASZIW,
        inputs={"expected": k1, "min": k0, "shares": [float(s) for s in p], "level": p_level, "power": p_power},
        figures={"noncentrality": lam, "effect_per_unit": effect, "unrounded": exact},
        notes=("Two-sided test at the level given; one degree of freedom.",),
    )


def _fleiss_q(kappa: float, rate1: float, rate2: float, option: str = "--expected") -> float:
    """n * Var(kappa-hat) for a 2 x 2 table with the two coders' rates of the code and kappa
    (Fleiss, Cohen & Everitt 1969), the quantity Cantor (1996) calls Q."""
    q1, q2 = 1 - rate1, 1 - rate2
    pe = rate1 * rate2 + q1 * q2
    if pe >= 1.0:  # rates so near 0 or 1 that chance agreement rounds to 1: kappa's variance is unbounded
        return math.inf
    po = kappa * (1 - pe) + pe
    p22 = (po - rate1 + q2) / 2
    p11 = po - p22
    p12, p21 = rate1 - p11, rate2 - p11
    if min(p11, p22, p12, p21) < -1e-12:
        raise PlanInputError(
            option,
            f"({kappa!r}) is not possible with rates {rate1!r} and {rate2!r}.",
            "coders whose rates differ cannot reach every kappa; lower it, or bring the rates closer.",
        )
    return (
        p11 * (1 - pe - (rate2 + rate1) * (1 - po)) ** 2
        + p22 * (1 - pe - (q2 + q1) * (1 - po)) ** 2
        + (1 - po) ** 2 * (p12 * (rate2 + q1) ** 2 + p21 * (q2 + rate1) ** 2)
        - (po * pe - 2 * pe + po) ** 2
    ) / (1 - pe) ** 4


def cantor_kappa_units(
    expected: float,
    minimum: float,
    *,
    rates: Sequence[float],
    level: float = 0.05,
    power: float = 0.80,
    two_sided: bool = False,
) -> SampleSize:
    """Units for a test of H0: kappa = ``minimum`` with ``power`` when kappa is ``expected``, for a
    binary rule whose two coders use the code at different ``rates`` (Cantor 1996):

        n = [ (z_level sqrt(Q(min)) + z_power sqrt(Q(expected))) / (expected - min) ]^2

    Q = n Var(kappa-hat) (Fleiss, Cohen & Everitt 1969); one-sided unless ``two_sided``."""
    k1 = _coefficient("--expected", expected)
    k0 = _coefficient("--min", minimum)
    if k0 == k1:
        raise PlanInputError(
            "--min", f"equals --expected ({expected!r}): no sample tells them apart.", "give --min below --expected."
        )
    given = _listed("--rates", rates, "--rates 0.3,0.4")
    if len(given) != 2:
        raise PlanInputError("--rates", f"is {given!r}, not two rates.", "for example --rates 0.3,0.4.")
    r1 = _share("--rates", _open_unit("--rates", given[0], "--rates 0.3,0.4"))
    r2 = _share("--rates", _open_unit("--rates", given[1], "--rates 0.3,0.4"))
    p_level = _level(level)
    p_power = _open_unit("--power", power, "0.8")
    if p_power <= p_level:
        raise PlanInputError("--power", f"({power!r}) is not above --level ({level!r}).", "for example --power 0.8.")
    z_level = one_sided_z(p_level / 2 if two_sided else p_level)
    z_power = _NORMAL.inv_cdf(p_power)
    q0, q1 = _fleiss_q(k0, r1, r2, "--min"), _fleiss_q(k1, r1, r2)
    exact = ((z_level * math.sqrt(max(q0, 0.0)) + z_power * math.sqrt(max(q1, 0.0))) / (k1 - k0)) ** 2
    return SampleSize(
        question="kappa",
        units=_whole_units(exact, "--min"),
        method="Cantor's test of kappa = kappa_0 for two coders with their own rates of the code (binary rule)",
        citation=f"{CANTOR} Variance: {FLEISS_COHEN_EVERITT}",
        inputs={
            "expected": k1,
            "min": k0,
            "rates": [r1, r2],
            "level": p_level,
            "power": p_power,
            "two_sided": two_sided,
        },
        figures={"q_min": q0, "q_expected": q1, "unrounded": exact},
        notes=("One-sided test unless two_sided.",),
    )


# --- an interval of a given half-width ------------------------------------------------------


def _two_by_two_cells(kappa: float, prevalence: float) -> np.ndarray:
    """Cell probabilities (yes-yes, yes-no, no-yes, no-no) of two coders who both use the code at
    ``prevalence`` and agree with ``kappa``."""
    spread = prevalence * (1 - prevalence)
    return np.array(
        [
            prevalence**2 + kappa * spread,
            (1 - kappa) * spread,
            (1 - kappa) * spread,
            (1 - prevalence) ** 2 + kappa * spread,
        ]
    )


def _check_half_width(expected: float, prevalence: float, half_width: float, level: float) -> tuple[float, ...]:
    kappa = _coefficient("--expected", expected)
    p = _open_unit("--prevalence", prevalence, "--prevalence 0.3")
    floor = -min(p / (1 - p), (1 - p) / p)
    if kappa <= floor:
        raise PlanInputError(
            "--expected",
            f"is {expected!r}, below {floor:.4f}, the least kappa two coders with this prevalence can have.",
            "give a kappa above it.",
        )
    h = _open_unit("--half-width", half_width, "--half-width 0.1")
    return kappa, p, h, _level(level)


def half_width_units(expected: float, prevalence: float, half_width: float, level: float = 0.05) -> SampleSize:
    """Units for a (1 - ``level``) interval of Cohen's kappa of +/- ``half_width`` when kappa is
    ``expected`` and both coders use the code at ``prevalence``: n = z^2 Q / h^2, with Q = n Var(kappa-hat)
    from the large-sample variance of Fleiss, Cohen & Everitt (1969)."""
    kappa, p, h, p_level = _check_half_width(expected, prevalence, half_width, level)
    z = _NORMAL.inv_cdf(1 - p_level / 2)
    q = _fleiss_q(kappa, p, p)
    exact = z * z * q / (h * h) if h * h > 0 else math.inf  # h * h underflows for h below 1e-162
    return SampleSize(
        question="half-width",
        units=_whole_units(exact, "--half-width"),
        method="large-sample SE of Cohen's kappa: n = z^2 Q / h^2, two coders with the same prevalence",
        citation=FLEISS_COHEN_EVERITT,
        inputs={"expected": kappa, "prevalence": p, "half_width": h, "level": p_level},
        figures={"z": z, "q": q, "unrounded": exact},
        notes=("The interval is kappa +/- z SE; an interval clipped at 1 is narrower on that side.",),
    )


def _simulated_variance(
    kappa: float, prevalence: float, n: int, simulations: int, rng: np.random.Generator
) -> tuple[float, float, int]:
    """The variance of kappa-hat over ``simulations`` samples of ``n`` units, its Monte Carlo SE,
    and how many samples had no kappa (both coders used one code only): those are left out."""
    counts = rng.multinomial(n, _two_by_two_cells(kappa, prevalence), size=simulations).reshape(-1, 2, 2)
    values, codes = tc.kappa_batch(counts)
    defined = values[codes == 0]
    if defined.size < 2:
        return math.nan, math.nan, int(simulations - defined.size)
    deviations = (defined - defined.mean()) ** 2
    variance = float(deviations.sum() / (defined.size - 1))
    return variance, float(deviations.std(ddof=1) / math.sqrt(defined.size)), int(simulations - defined.size)


def simulated_half_width_units(
    expected: float,
    prevalence: float,
    half_width: float,
    level: float = 0.05,
    *,
    seed: int,
    simulations: int = 4000,
) -> SampleSize:
    """The same question answered by simulation: samples of n units are drawn from the 2 x 2
    table that ``expected`` and ``prevalence`` imply, and n is set so that z times the standard
    deviation of kappa-hat over the samples is the half-width. The SD shrinks as 1/sqrt(n), so
    n = n_0 z^2 Var_n0 / h^2, found at the formula's n and then again at that answer with new draws.
    The Monte Carlo SE of the answer comes from that of the variance (``units_mc_se``)."""
    kappa, p, h, p_level = _check_half_width(expected, prevalence, half_width, level)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise PlanInputError("--seed", f"is {seed!r}, not a whole number from 0 up.", "for example --seed 1.")
    if isinstance(simulations, bool) or not isinstance(simulations, (int, np.integer)):
        raise PlanInputError("--simulations", f"is {simulations!r}, not a whole number.", "for example 4000.")
    if not 100 <= simulations <= MAX_SIMULATIONS:
        raise PlanInputError(
            "--simulations", f"is {simulations}; use 100 to {MAX_SIMULATIONS:,}.", "for example --simulations 4000."
        )
    z = _NORMAL.inv_cdf(1 - p_level / 2)
    rng = np.random.default_rng(int(seed))
    n = half_width_units(kappa, p, h, p_level).units or 1
    estimate = mc_se = math.nan
    undefined, simulated_at = 0, n
    for _ in range(2):
        simulated_at = n
        variance, variance_se, undefined = _simulated_variance(kappa, p, n, int(simulations), rng)
        if not math.isfinite(variance):
            estimate = math.nan
            break
        scale = n * z * z / (h * h)
        estimate, mc_se = scale * variance, scale * variance_se
        n = _whole_units(estimate, "--half-width")
    units = _whole_units(estimate, "--half-width") if math.isfinite(estimate) else None
    notes = [
        "The answer varies with the seed by about its Monte Carlo SE (units_mc_se); more simulations narrow it.",
    ]
    if units is None:
        notes.append("Too few simulated samples had a kappa to say anything: the code is too rare for this n.")
    elif undefined > simulations // 20:
        notes.append("More than 5% of the samples had no kappa: a sample of this size may well give none at all.")
    if undefined:
        notes.append(
            f"{undefined} of {simulations} simulated samples of {simulated_at} units had no kappa (every unit "
            "coded alike by both coders) and were left out: the answer describes the samples that have one."
        )
    return SampleSize(
        question="half-width",
        units=units,
        method=f"simulation: {simulations} samples of n units from the implied 2 x 2 table, n such that z SD = h",
        citation=f"Monte Carlo check of the SE formula of {FLEISS_COHEN_EVERITT}",
        inputs={
            "expected": kappa,
            "prevalence": p,
            "half_width": h,
            "level": p_level,
            "seed": int(seed),
            "simulations": int(simulations),
        },
        figures={
            "unrounded": estimate if units is not None else None,
            "units_mc_se": mc_se if units is not None else None,
            "simulated_at": simulated_at,
            "undefined_samples": undefined,
        },
        notes=tuple(notes),
    )


# --- a pilot audit ------------------------------------------------------------------------------


@dataclass(frozen=True)
class PilotRow:
    coefficient: str
    value: float | None
    se: float | None
    se_source: str | None
    half_width: float | None
    units_needed: int | None
    units_to_add: int | None
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def pilot_units(
    units: int, standard_errors: Mapping[str, tuple[float | None, float | None, float | None]], half_width: float
) -> list[PilotRow]:
    """Per coefficient of a pilot audit of ``units`` units: the half-width its 95% interval reached
    (1.96 SE, before any clipping at the bounds) and the units needed for ``half_width``, as
    SE ~ 1/sqrt(n): n_needed = ceil(n (achieved / target)^2). ``standard_errors`` maps a name to
    (value, analytic SE, bootstrap SE); the analytic SE is used when there is one."""
    h = _open_unit("--half-width", half_width, "--half-width 0.1")
    z = _NORMAL.inv_cdf(0.975)
    rows = []
    for name, (value, se, bootstrap_se) in standard_errors.items():
        chosen, source = (se, "analytic") if se is not None else (bootstrap_se, "bootstrap")
        if value is None:
            rows.append(PilotRow(name, None, None, None, None, None, None, "the coefficient is undefined"))
            continue
        if chosen is None or not math.isfinite(chosen):
            # the bootstrap is plan pilot's own option: re-running score or report would not help
            reason = "no standard error: add --bootstrap N --seed S to plan pilot (bootstrap= in plan_pilot)"
            rows.append(PilotRow(name, value, None, None, None, None, None, reason))
            continue
        achieved = z * chosen
        if units == 0 or chosen == 0:
            reason = "the pilot's SE is 0 (every unit agreed): it says nothing of the units needed"
            rows.append(PilotRow(name, value, chosen, source, achieved, None, None, reason))
            continue
        ratio = achieved / h
        needed = _whole_units(units * ratio * ratio, "--half-width")  # x * x overflows to inf; x ** 2 raises
        rows.append(PilotRow(name, value, chosen, source, achieved, needed, max(0, needed - units)))
    return rows


PILOT_METHOD = "SE ~ 1/sqrt(n): units needed = ceil(n (1.96 SE / h)^2), per coefficient, from the pilot's own SEs"
NOT_AGREEMENT = frozenset({"pe", "prevalence_index", "bias_index", "max_kappa"})  # descriptions, not agreement


@dataclass(frozen=True)
class PilotPlan:
    """What a pilot audit of ``pilot_units`` units says of the units still to code, per coefficient.
    ``bootstrap`` replicates and their ``seed`` (None without a bootstrap) are kept with the answer:
    a seed drawn for the run (``seed_drawn``) is the only way to repeat it."""

    pilot_units: int
    half_width: float
    rows: tuple[PilotRow, ...]
    source: str = ""
    bootstrap: int = 0
    seed: int | None = None
    seed_drawn: bool = False

    @property
    def units(self) -> dict[str, int | None]:
        """The units to add, per coefficient (None where the pilot cannot say)."""
        return {row.coefficient: row.units_to_add for row in self.rows}

    def to_dict(self) -> dict[str, Any]:
        return {
            "plan": "pilot",
            "units": self.units,
            "method": PILOT_METHOD,
            "citation": "SEs as the audit reports them (docs/statistics.md, Uncertainty)",
            "inputs": {
                "pilot": self.source,
                "half_width": self.half_width,
                "bootstrap": self.bootstrap,
                "seed": self.seed,
            },
            "pilot_units": self.pilot_units,
            "coefficients": [row.to_dict() for row in self.rows],
            "notes": [
                "The pilot's coefficients are taken as the truth; a pilot with few units gives rough SEs.",
                "The half-width is that of the 95% interval, 1.96 SE, before any clipping at the bounds.",
                *drawn_seed_notes(self.seed, self.seed_drawn),
            ],
        }


def drawn_seed_notes(seed: int | None, seed_drawn: bool) -> list[str]:
    """The note that says how to repeat an answer whose bootstrap seed was drawn, not given."""
    if not seed_drawn or seed is None:
        return []
    return [f"Bootstrap seed {seed} was drawn; --seed {seed} (seed={seed} in plan_pilot) repeats this answer."]


def pilot_plan(
    units: int,
    standard_errors: Mapping[str, tuple[float | None, float | None, float | None]],
    half_width: float,
    source: str = "",
    *,
    bootstrap: int = 0,
    seed: int | None = None,
    seed_drawn: bool = False,
) -> PilotPlan:
    """:func:`pilot_units` for the agreement coefficients of a pilot (its descriptive indices left
    out), with the bootstrap its SEs came from: a seed only with replicates (alone it shaped nothing)."""
    kept = {name: ses for name, ses in standard_errors.items() if name not in NOT_AGREEMENT}
    rows = pilot_units(units, kept, half_width)
    if not bootstrap:
        return PilotPlan(units, float(half_width), tuple(rows), source)
    return PilotPlan(units, float(half_width), tuple(rows), source, bootstrap, seed, seed_drawn)
