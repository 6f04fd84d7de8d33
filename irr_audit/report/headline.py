"""The one coefficient an audit is summed up by (docs/statistics.md, "The headline
coefficient"): Cohen's kappa for two coders on a nominal rule, Krippendorff's alpha at
the rule's level of measurement otherwise. Every place that names one number for an
audit (verify's verdict, a report's headline) takes it from :func:`headline_metric`.

Beside it, what a report leads with, as plain data read from the report dict (pure): the
``headline`` block (:func:`headline_block`), the one coefficient table (:func:`coefficient_rows`)
and the kappa paradox explained for any number of coders (:func:`paradox_explanation`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from irr_audit.metrics.interpret import krippendorff_label, landis_koch_label
from irr_audit.metrics.intervals import zero_to_rounding
from irr_audit.report.format import format_metric, metric_label

KAPPA = "cohen_kappa"
ALPHA = "krippendorff_alpha"


@dataclass(frozen=True)
class Headline:
    """The headline coefficient of a report: its key in ``metrics``, a label for people,
    why it was chosen, and the report's entry for it (None when the report has none)."""

    name: str
    label: str
    why: str
    metric: Mapping[str, Any] | None

    @property
    def shown(self) -> str:
        """Its value for people, 'undefined: <reason>', or 'not in the score'."""
        if not isinstance(self.metric, Mapping):
            return "not in the score"
        return format_metric(dict(self.metric))

    def to_dict(self) -> dict[str, Any]:
        metric = self.metric if isinstance(self.metric, Mapping) else {}
        return {
            "metric": self.name,
            "label": self.label,
            "why": self.why,
            "value": metric.get("value"),
            "defined": bool(metric.get("defined", False)),
            **({"reason": metric["reason"]} if "reason" in metric else {}),
        }


def headline_metric(report: Mapping[str, Any]) -> Headline:
    """The recommended coefficient for the report's design (its coders and the rule's
    scale), read from a report dict as `irr-audit report --format json` writes it or as
    a bundle's manifest froze it. Pure; a report missing parts gets alpha, which is
    defined for any number of coders and every scale.

    >>> headline_metric({"coders": ["a", "b"], "rule": {"scale": "nominal"}, "metrics": {}}).name
    'cohen_kappa'
    >>> headline_metric({"coders": ["a", "b", "c"], "rule": {"scale": "nominal"}, "metrics": {}}).label
    "Krippendorff's alpha (nominal)"
    """
    coders = report.get("coders")
    rule = report.get("rule")
    scale = rule.get("scale") if isinstance(rule, Mapping) else None
    metrics = report.get("metrics")
    metrics = metrics if isinstance(metrics, Mapping) else {}
    two = isinstance(coders, list) and len(coders) == 2
    counts_only = counts_only_report(report)
    if two and scale == "nominal" and not counts_only:
        return Headline(KAPPA, metric_label(KAPPA), "two coders, a nominal rule", metrics.get(KAPPA))
    level = scale if isinstance(scale, str) else "nominal"
    count = f"{len(coders)} coders" if isinstance(coders, list) else "the coders"
    if counts_only:  # Cohen's kappa needs to know which coder gave which code; the counts do not say
        units = report.get("units")
        each = "" if isinstance(units, Mapping) and units.get("fully_coded") == units.get("total") else "up to "
        count = f"{each}{len(coders)} ratings a unit, coders not told apart" if isinstance(coders, list) else "ratings"
    article = "an" if level[:1] in "aeiou" else "a"
    return Headline(ALPHA, f"{metric_label(ALPHA)} ({level})", f"{count}, {article} {level} rule", metrics.get(ALPHA))


def counts_only_report(report: Mapping[str, Any]) -> bool:
    """A report scored from a subjects x categories count matrix, which does not say which coder gave which code.

    >>> counts_only_report({"input": {"kind": "category_counts"}})
    True
    """
    given = report.get("input")
    return isinstance(given, Mapping) and given.get("kind") == "category_counts"


# Krippendorff's bootstrap for a headline alpha without a formula for its SE (ordinal alpha):
# it runs by default, with this many replicates and this seed unless --bootstrap and --seed say
# otherwise. Its cost grows with the codes (K x K cells), not the units: bounded on large data.
HEADLINE_BOOTSTRAP = 2000
HEADLINE_SEED = 1

# The coefficients read against Landis & Koch's (1977) bands: kappa and its relatives, whose
# scale (0 chance, 1 perfect) the bands were drawn for. Alpha has Krippendorff's own guideline.
KAPPA_LIKE = frozenset(
    {
        "cohen_kappa",
        "scott_pi",
        "fleiss_kappa",
        "conger_kappa",
        "weighted_kappa_linear",
        "weighted_kappa_quadratic",
        "weighted_kappa",
        "fleiss_kappa_weighted",
        "conger_kappa_weighted",
        "gwet_ac1",
        "gwet_ac2",
        "brennan_prediger",
        "brennan_prediger_weighted",
        "light_kappa",
        "pabak",
    }
)
ALPHA_LIKE = frozenset({"krippendorff_alpha", "krippendorff_alpha_weighted"})

# The coefficient table's rows, in order after the headline: raw agreement, then the coefficients.
TABLE_ORDER = (
    "po",
    "cohen_kappa",
    "scott_pi",
    "fleiss_kappa",
    "conger_kappa",
    "krippendorff_alpha",
    "weighted_kappa_linear",
    "weighted_kappa_quadratic",
    "weighted_kappa",
    "fleiss_kappa_weighted",
    "conger_kappa_weighted",
    "krippendorff_alpha_weighted",
    "gwet_ac1",
    "gwet_ac2",
    "brennan_prediger",
    "brennan_prediger_weighted",
    "pabak",
    "light_kappa",
    "kendall_w",
)

WHAT_IT_IS_FOR = {
    "po": "the share of codes that agree, with no allowance for chance",
    "cohen_kappa": "two coders: agreement beyond the chance that each coder's own code rates give",
    "scott_pi": "two coders: agreement beyond the chance that the pooled code rates give",
    "fleiss_kappa": "any number of coders: Scott's pi for more coders (pooled code rates)",
    "conger_kappa": "any number of coders: Cohen's kappa for more coders (each coder's own rates)",
    "krippendorff_alpha": "any number of coders, missing codes and every scale: the content-analysis standard",
    "weighted_kappa_linear": "ordered codes: a near miss counts as partial agreement (linear weights)",
    "weighted_kappa_quadratic": "ordered codes: a near miss counts as partial agreement (quadratic weights)",
    "weighted_kappa": "Cohen's kappa with the weights chosen for this audit",
    "fleiss_kappa_weighted": "Fleiss' kappa with the weights chosen for this audit",
    "conger_kappa_weighted": "Conger's kappa with the weights chosen for this audit",
    "krippendorff_alpha_weighted": "Krippendorff's alpha with the weights chosen for this audit",
    "gwet_ac1": "chance agreement that stays small when one code dominates (resists the kappa paradox)",
    "gwet_ac2": "Gwet's AC1 for ordered codes, near misses weighted",
    "brennan_prediger": "chance taken as every code used equally often (1 / number of codes)",
    "brennan_prediger_weighted": "Brennan-Prediger with the weights chosen for this audit",
    "pabak": "kappa with the code rates evened out: 2 x observed agreement - 1 for two codes",
    "light_kappa": "the mean of every pair of coders' Cohen's kappa",
    "kendall_w": "ordered codes: how alike the coders rank the units",
}


def band_of(name: str, value: float | None) -> dict[str, str] | None:
    """The convention band of a coefficient's value, named with its convention; None for
    raw agreement, Kendall's W and an undefined value.

    >>> band_of("scott_pi", 0.7)["label"]
    'substantial'
    >>> band_of("krippendorff_alpha", 0.7)["label"]
    'tentative conclusions only (>= 0.667)'
    """
    if value is None:
        return None
    if name in ALPHA_LIKE:
        return krippendorff_label(value).to_dict()
    if name in KAPPA_LIKE:
        return landis_koch_label(value).to_dict()
    return None


def _mapping(report: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """A part of the report that should be a mapping, or an empty one (a manifest may lack it)."""
    part = report.get(key)
    return part if isinstance(part, Mapping) else {}


def _level(report: Mapping[str, Any]) -> float:
    intervals = report.get("intervals")
    level = intervals.get("level") if isinstance(intervals, Mapping) else None
    return float(level) if isinstance(level, (int, float)) else 0.95


def degenerate_note(se: float | None, low: float, high: float, cause: str) -> str | None:
    """Why an interval of no width (SE 0) is no statement of certainty, with ``cause``
    (``zero_se_cause``); None for any other interval."""
    if se is None or not zero_to_rounding(se, (low + high) / 2):
        return None
    return (
        f"the standard error is 0 ({cause}), so the formula sees no variation between units; "
        "the interval of no width is not certainty"
    )


def zero_se_cause(report: Mapping[str, Any]) -> str:
    """What the report shows of why a coefficient's standard error can be 0: every unit agrees
    alike (raw agreement 0 or 1), or a coder used one code only (two coders: the coefficient is
    the same in every sample of units like these), or neither, which the note then says."""
    po = _mapping(_mapping(report, "metrics"), "po")
    if po.get("defined") and po.get("value") in (0, 1):
        return "every unit shows the same agreement"
    coders, table = report.get("coders"), report.get("table")
    if isinstance(coders, list) and len(coders) == 2 and isinstance(table, list) and table:
        margins = ([sum(row) for row in table], [sum(column) for column in zip(*table)])  # rows: the first coder
        for coder, used in zip(coders, margins):
            if sum(1 for count in used if count) == 1:
                return f"{coder} used one code only"
    return "the terms of its formula cancel for these units"


def bootstrap_reason(bootstrap: Mapping[str, Any]) -> str:
    """Why a percentile bootstrap over units gave no interval: its own reason (too few replicates
    defined, an undefined estimate), else how many replicates were undefined."""
    reason = bootstrap.get("reason")
    if reason:
        return f"{reason} ({bootstrap.get('n_undefined', '?')} of {bootstrap.get('n_boot', '?')} undefined)"
    return f"undefined in {bootstrap.get('n_undefined', '?')} of {bootstrap.get('n_boot', '?')}"


def interval_of(
    name: str,
    metric: Mapping[str, Any],
    level: float,
    bootstrap: Mapping[str, Any] | None = None,
    zero_se: str = "the terms of its formula cancel for these units",
) -> tuple[dict[str, Any] | None, str | None]:
    """A coefficient's interval (analytic where a formula exists, else ``bootstrap``, Krippendorff's
    bootstrap of the headline alpha, else the percentile bootstrap over units of --bootstrap), and a
    note: why there is none, or why one has no width (``zero_se``: why its SE is 0, from
    ``zero_se_cause``). Both None for a coefficient without either."""
    if not metric.get("defined"):
        return None, None
    ci = metric.get("ci")
    if ci:
        interval = {
            "low": ci[0],
            "high": ci[1],
            "level": level,
            "kind": "analytic",
            "method": metric.get("ci_method", "analytic"),
            "clipped": bool(metric.get("ci_clipped")),
        }
        return interval, degenerate_note(metric.get("se"), ci[0], ci[1], zero_se)
    if bootstrap is not None:
        if not bootstrap.get("defined"):
            return None, f"Krippendorff's bootstrap is undefined: {bootstrap.get('reason', 'no reason given')}"
        interval = {
            "low": bootstrap["ci"][0],
            "high": bootstrap["ci"][1],
            "level": level,
            "kind": "bootstrap",
            "method": f"{bootstrap.get('method')}, {bootstrap.get('n_boot')} replicates, seed {bootstrap.get('seed')}",
            "clipped": False,
            "n_boot": bootstrap.get("n_boot"),
            "seed": bootstrap.get("seed"),
        }
        return interval, None
    units = metric.get("bootstrap")
    if isinstance(units, Mapping) and units.get("defined") and units.get("ci"):
        interval = {
            "low": units["ci"][0],
            "high": units["ci"][1],
            "level": level,
            "kind": "bootstrap",
            "method": units.get("ci_method", "percentile bootstrap over units"),
            "clipped": bool(units.get("ci_clipped")),
            "n_boot": units.get("n_boot"),
        }
        return interval, degenerate_note(units.get("se"), units["ci"][0], units["ci"][1], zero_se)
    if isinstance(units, Mapping) and units:
        return None, f"the bootstrap is undefined: {bootstrap_reason(units)}"
    if name in ("po", "pabak", "kendall_w", "light_kappa"):  # descriptive: no analytic SE is computed
        return None, "no interval without --bootstrap N"
    return None, "no formula for its standard error; --bootstrap N gives a percentile interval"


def headline_block(report: Mapping[str, Any], bootstrap: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The answer first (the ``headline`` of a JSON report): the recommended coefficient, its
    estimate and interval and how the interval was obtained, the units it rests on, raw
    agreement, its convention band (named as a convention) and a one-line warning when the
    kappa paradox applies. ``bootstrap`` is Krippendorff's bootstrap of a headline alpha that
    has no formula for its SE. An undefined estimate stays undefined, with its reason."""
    chosen = headline_metric(report)
    metric = chosen.metric if isinstance(chosen.metric, Mapping) else {}
    metrics = _mapping(report, "metrics")
    units = _mapping(report, "units")
    interval, note = interval_of(chosen.name, metric, _level(report), bootstrap, zero_se_cause(report))
    if not metric.get("defined"):
        note = "the estimate is undefined, so it has no interval"
    po = metrics.get("po") if isinstance(metrics, Mapping) else None
    defined = bool(metric.get("defined"))
    return {
        **chosen.to_dict(),
        "interval": interval,
        **({"interval_note": note} if note else {}),
        "units": {"fully_coded": units.get("fully_coded"), "total": units.get("total")},
        "raw_agreement": po.get("value") if isinstance(po, Mapping) and po.get("defined") else None,
        "band": band_of(chosen.name, metric.get("value")) if defined else None,
        "warning": paradox_warning(report),
    }


def coefficient_rows(report: Mapping[str, Any], bootstrap: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """The one coefficient table (the ``coefficients`` of a JSON report): the headline first,
    then raw agreement and every other coefficient the report has, each with its estimate (or why
    it is undefined), interval, convention band and what it is for."""
    metrics = _mapping(report, "metrics")
    chosen = headline_metric(report).name
    names = [chosen, *(name for name in TABLE_ORDER if name != chosen)]
    rows = []
    level, zero_se = _level(report), zero_se_cause(report)
    for name in names:
        metric = metrics.get(name)
        if not isinstance(metric, Mapping):
            continue
        interval, note = interval_of(name, metric, level, bootstrap if name == chosen else None, zero_se)
        defined = bool(metric.get("defined"))
        label = metric_label(name) + (f" ({metric['level']})" if metric.get("level") else "")
        rows.append(
            {
                "metric": name,
                "label": label,
                "headline": name == chosen,
                "value": metric.get("value"),
                "defined": defined,
                **({"reason": metric["reason"]} if not defined and "reason" in metric else {}),
                "interval": interval,
                **({"interval_note": note} if note else {}),
                "band": band_of(name, metric.get("value")) if defined else None,
                "what_it_is_for": WHAT_IT_IS_FOR.get(name, ""),
            }
        )
    return rows


# The paradox's reading (docs/statistics.md, "The kappa paradox explained").
MAX_KAPPA_TWO = (
    "Cohen's (1960) maximum kappa: the largest agreement the two coders' own code rates allow, "
    "sum over codes of the smaller of their two rates"
)
MAX_KAPPA_MANY = (
    "an upper bound of Fleiss' kappa: for each pair of coders the largest agreement their own code rates allow "
    "(Cohen's 1960 maximum, sum over codes of the smaller rate), averaged over the pairs, against Fleiss' "
    "chance agreement; reached exactly with two codes (Umesh, Peterson & Sauber 1989)"
)
LISTED_RATES = 5  # the most used codes named in the sentence; the others are summed


def _value(metrics: Mapping[str, Any], name: str) -> float | None:
    metric = metrics.get(name)
    if isinstance(metric, Mapping) and metric.get("defined") and metric.get("value") is not None:
        return float(metric["value"])
    return None


def prevalence(report: Mapping[str, Any]) -> dict[str, float]:
    """Each code's share of all codes of the fully coded units (the agreement table's margins:
    both coders' for two, the pairable values for more); empty when nothing is coded."""
    table = report.get("table")
    categories = report.get("categories")
    if not isinstance(table, list) or not isinstance(categories, list) or not table:
        return {}
    rows = [sum(row) for row in table]
    columns = [sum(column) for column in zip(*table)]
    totals = [row + column for row, column in zip(rows, columns)]
    whole = sum(totals)
    return {category: total / whole for category, total in zip(categories, totals)} if whole else {}


def max_kappa_many(report: Mapping[str, Any]) -> float | None:
    """The upper bound of Fleiss' kappa that the coders' own code rates allow (MAX_KAPPA_MANY),
    from each pair's table of the fully coded units; None when undefined."""
    pe = _value(report.get("metrics") or {}, "pe")
    pairs = report.get("pairs") or []
    shares = []
    for pair in pairs:
        table = pair.get("table") or []
        n = sum(map(sum, table))
        if not n:
            return None
        rows = [sum(row) / n for row in table]
        columns = [sum(column) / n for column in zip(*table)]
        shares.append(sum(min(row, column) for row, column in zip(rows, columns)))
    if pe is None or not shares or pe >= 1:
        return None
    return (sum(shares) / len(shares) - pe) / (1 - pe)


def _percent(share: float) -> str:
    return f"{100 * share:.1f}%"


def _rates_phrase(rates: dict[str, float]) -> str:
    ordered = sorted(rates.items(), key=lambda item: -item[1])
    shown = ordered if len(ordered) <= LISTED_RATES + 1 else ordered[:LISTED_RATES]
    named = [f"{_percent(share)} '{code}'" for code, share in shown]
    rest = ordered[len(shown) :]
    if rest:
        named.append(f"{_percent(sum(share for _, share in rest))} the other {len(rest)} codes together")
    return "Of all codes, " + (", ".join(named[:-1]) + " and " + named[-1] if len(named) > 1 else named[0]) + "."


def paradox_explanation(report: Mapping[str, Any]) -> dict[str, Any]:
    """The kappa paradox explained for any number of coders (the ``paradox`` of a JSON report):
    each code's share, the chance agreement those shares give, the largest kappa they allow,
    and the coefficients that do not take chance from them (AC1, PABAK or Brennan-Prediger),
    with a sentence a reader without the formulas can follow. Never empty."""
    metrics = _mapping(report, "metrics")
    coders = report.get("coders") or []
    two = len(coders) == 2
    kappa_name = "cohen_kappa" if two else "fleiss_kappa"
    rates = prevalence(report)
    po, pe, kappa = _value(metrics, "po"), _value(metrics, "pe"), _value(metrics, kappa_name)
    highest = _value(metrics, "max_kappa") if two else max_kappa_many(report)
    even = "pabak" if two and "pabak" in metrics else "brennan_prediger"
    stay_high = {name: _value(metrics, name) for name in ("gwet_ac1", even) if _value(metrics, name) is not None}
    applies = any(str(warning).startswith("kappa paradox") for warning in report.get("warnings") or [])
    out: dict[str, Any] = {
        "applies": applies,
        "coefficient": kappa_name,
        "prevalence": rates,
        "observed_agreement": po,
        "chance_agreement": pe,
        "kappa": kappa,
        "max_kappa": {
            "value": highest,
            "method": MAX_KAPPA_TWO if two else MAX_KAPPA_MANY,
            **({"reason": _no_max_reason(report, kappa)} if highest is None else {}),
        },
        "stay_high": stay_high,
    }
    out["sentence"] = _paradox_sentence(out, metrics)
    return out


def _no_max_reason(report: Mapping[str, Any], kappa: float | None) -> str:
    """Why the largest kappa is not given: no coder pairs (a table of counts per unit does not say
    which coder gave which code), or chance agreement of 1 (kappa is undefined)."""
    own = _mapping(report, "metrics").get("max_kappa")
    if isinstance(own, Mapping) and own.get("reason"):  # two coders: the metric says why (a count matrix)
        return str(own["reason"])
    if len(report.get("coders") or []) > 2 and not report.get("pairs"):
        return "it needs each coder's own code rates, which this input does not give"
    if kappa is None:
        return "chance agreement is 1, so kappa and its maximum are undefined"
    return "no unit is fully coded"


def _paradox_sentence(facts: Mapping[str, Any], metrics: Mapping[str, Any]) -> str:
    rates, po, pe, kappa = facts["prevalence"], facts["observed_agreement"], facts["chance_agreement"], facts["kappa"]
    label = metric_label(facts["coefficient"])
    if not rates or po is None:
        return "No unit is fully coded: there are no code rates to explain agreement with."
    parts = [_rates_phrase(rates)]
    if pe is not None:
        parts.append(
            f"Coders choosing at random at these rates would agree on {_percent(pe)} of codes (chance agreement); "
            f"these coders agreed on {_percent(po)}."
        )
    if kappa is None:
        reason = (metrics.get(facts["coefficient"]) or {}).get("reason", "no reason given")
        parts.append(f"{label} is undefined ({reason}): not low, but not a number.")
    elif pe is not None:
        parts.append(
            f"{label} counts only the agreement above chance: ({po:.3f} - {pe:.3f}) / (1 - {pe:.3f}) = {kappa:.2f}."
        )
    highest = facts["max_kappa"]["value"]
    if highest is not None:
        parts.append(f"The rates each coder used allow {label} to reach at most {highest:.2f}, even with no error.")
    else:
        parts.append(f"The largest {label} these rates allow is not given: {facts['max_kappa']['reason']}.")
    if facts["stay_high"]:
        named = " and ".join(f"{metric_label(name)} ({value:.2f})" for name, value in facts["stay_high"].items())
        verb = "stay high" if facts["applies"] else "are"
        parts.append(f"Coefficients that do not take chance agreement from these rates {verb}: {named}.")
    return " ".join(parts)


def paradox_warning(report: Mapping[str, Any]) -> str | None:
    """One plain line for the headline when the kappa paradox applies; None otherwise."""
    facts = paradox_explanation(report)
    chance = facts["chance_agreement"]
    if not facts["applies"] or facts["observed_agreement"] is None or facts["kappa"] is None or chance is None:
        return None
    top, share = max(facts["prevalence"].items(), key=lambda item: item[1])
    chosen = headline_metric(report)  # the number the reader sees first, when it is defined
    shown = chosen.metric if isinstance(chosen.metric, Mapping) and chosen.metric.get("defined") else None
    label, value = (chosen.label, shown["value"]) if shown else (metric_label(facts["coefficient"]), facts["kappa"])
    return (
        f"Kappa paradox: the coders agree on {_percent(facts['observed_agreement'])} of codes, but "
        f"{label} is only {value:.2f}, because '{top}' is {_percent(share)} "
        f"of all codes and chance agreement is already {_percent(chance)}; see the paradox explained."
    )
