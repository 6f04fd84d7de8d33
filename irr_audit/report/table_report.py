"""The report of a published table (`score --table` / `--category-counts`): the structure of every
report, with each coefficient the table does not determine reported undefined, saying why.

A K x K table holds two coders' fully coded units: it determines every coefficient of two
coders, but no unit, no missing code and no disagreement list. A subjects x categories count
matrix (Fleiss 1971) says how many coders gave each category to each subject, not who: it
determines what depends only on each unit's codes (Fleiss' kappa, with two ratings per subject as
with more, percent agreement, Gwet's AC1/AC2 and Brennan-Prediger with pooled chance, Krippendorff's
alpha, each weighted with the chosen weights, specific agreement,
the coincidence matrix, the one-way ICC), not what needs the coders apart (Cohen's and Conger's
kappa, Scott's pi aside, pairs, leave-one-out, coder bias, Light's kappa, Kendall's W, the
two-way ICC).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from irr_audit.join.table_input import TableInput
from irr_audit.metrics.disagreement import disagreement_profile
from irr_audit.metrics.krippendorff import coincidence_matrix
from irr_audit.metrics.patterns import compress
from irr_audit.report.model import AuditOptions, AuditReport, build_counts_report
from irr_audit.rules.model import Rule

NOT_DETERMINED = "not determined by a table"
WHO_CODED = f"{NOT_DETERMINED}: subjects x categories counts do not say which coder gave which code, which this needs"
# Determined by each unit's codes alone (pooled over coders): kept from category counts, with the
# weighted forms of the chosen weights. Fleiss' kappa (and its SE) is a function of the counts per
# subject for any number of ratings per subject, two included. With three or more coders pe is
# Fleiss' (pooled shares); with two it is Cohen's (each coder's own), so it goes.
SHARED = frozenset(
    {
        "po",
        "fleiss_kappa",
        "fleiss_kappa_weighted",
        "gwet_ac1",
        "gwet_ac2",
        "brennan_prediger",
        "brennan_prediger_weighted",
        "krippendorff_alpha",
        "krippendorff_alpha_weighted",
        "specific_agreement",
    }
)
POOLED = SHARED | {"pe"}
POOLED_TWO_CODERS = SHARED | {"scott_pi", "pabak", "prevalence_index"}  # Scott's pi: chance from pooled shares
ONE_WAY_ICC = frozenset({"icc_1", "icc_k"})


def _undefined(reason: str) -> dict[str, Any]:
    return {"value": None, "defined": False, "reason": reason}


def _keep_pooled(metrics: dict[str, Any], kept: frozenset[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, metric in metrics.items():
        if name in kept:
            out[name] = metric
        elif "defined" in metric:
            out[name] = _undefined(WHO_CODED)
        else:  # per category
            out[name] = {category: _undefined(WHO_CODED) for category in metric}
    return out


def build_table_report(rule: Rule, table: TableInput, options: AuditOptions) -> AuditReport:
    """The report of a table, every key of a report present, with what the table does not determine
    undefined (value null) and named in ``not_determined``."""
    report = build_counts_report(rule, table.coders, table.patterns, table.units, table.sources, options)
    agreement = dict(report.agreement)
    not_determined = {
        "missingness": f"{NOT_DETERMINED}: a table holds the coded units only",
        "disagreements": f"{NOT_DETERMINED}: a table has no unit ids",
    }
    warnings = [f"scored from a {_kind_label(table.kind)}: no missingness log and no list of disagreeing units"]
    if table.kind == "category_counts":
        agreement, more = _pooled_only(agreement, rule, table)
        not_determined.update(more)
    agreement["input"] = {"kind": table.kind, "not_determined": not_determined}
    units: dict[str, int | None] = dict(report.units)
    if table.kind == "table":  # its units are the fully coded ones: how many others there were is unknown
        units["missing"] = None
    unlisted = "not available from a table, which has no unit ids"
    return dataclasses.replace(
        report, agreement=agreement, units=units, warnings=tuple(warnings), disagreements_unlisted=unlisted
    )


def _kind_label(kind: str) -> str:
    return "K x K agreement table" if kind == "table" else "subjects x categories count matrix"


def _pooled_only(agreement: dict[str, Any], rule: Rule, table: TableInput) -> tuple[dict[str, Any], dict[str, str]]:
    """Category counts: the coefficients that need the coders apart become undefined."""
    out = dict(agreement)
    two = len(table.coders) == 2
    kept = POOLED_TWO_CODERS if two else POOLED
    out["metrics"] = _keep_pooled(agreement["metrics"], kept)
    out["available_case"] = _keep_pooled(agreement["available_case"], kept)
    # Gwet's missing-data basis too: its Conger's kappa would be of coders the columns made up
    out["gwet_missing"] = _keep_pooled(agreement["gwet_missing"], kept)
    patterns = compress(table.patterns, len(rule.categories), table.units)
    full = patterns.select(patterns.n_valid == patterns.n_coders)
    coincidences = coincidence_matrix(full)
    out["table"] = [[float(x) for x in row] for row in coincidences]
    out["table_kind"] = "coincidence"
    profile = disagreement_profile(coincidences, rule.scale.is_ordered, "pairable values")
    out["disagreement"] = _named_profile(profile, list(rule.categories))
    if two:  # per category: Cohen's kappa of each category against the rest needs the coders apart
        out["per_category"] = {
            category: {
                name: (metric if name == "specific_agreement" else _undefined(WHO_CODED))
                for name, metric in entry.items()
            }
            for category, entry in agreement["per_category"].items()
        }
    out["pairs"] = []
    out["leave_one_out"] = []
    out["coder_bias"] = {**agreement["coder_bias"], "pairs": [], "reason": WHO_CODED}
    if "icc" in agreement:
        forms = agreement["icc"]["forms"]
        icc = {
            **agreement["icc"],
            "forms": {n: m if n in ONE_WAY_ICC else _undefined(WHO_CODED) for n, m in forms.items()},
        }
        icc.pop("mean_squares", None)  # the two-way mean squares split the coders
        out["icc"] = icc
    out["benchmarking"] = {name: entry for name, entry in agreement["benchmarking"].items() if name in kept}
    out["interpretation"] = {
        name: label
        for name, label in agreement["interpretation"].items()
        if out["metrics"].get(name, {}).get("defined")
    }
    out["warnings"] = [w for w in agreement["warnings"] if _still_true(w, kept, two)]
    more = {
        "pairs": WHO_CODED,
        "leave_one_out": WHO_CODED,
        "coder_bias": WHO_CODED,
        "coders": f"{NOT_DETERMINED}: the columns `rating 1` ... are the codes of each subject in the rule's order",
    }
    return out, more


def _still_true(warning: str, kept: frozenset[str], two: bool) -> bool:
    """A warning about a coefficient the counts do not determine goes with it (two coders' kappa
    paradox cites Cohen's kappa; a bootstrap note names its coefficient first)."""
    if warning.startswith("kappa paradox"):
        return not two
    name = warning.split(":", 1)[0]
    return " " in name or name in kept


def _named_profile(profile: dict[str, Any], categories: list[str]) -> dict[str, Any]:
    out = dict(profile)
    for key in ("far_corners", "confusions"):
        if key in out:
            out[key] = [{**c, "categories": [categories[i] for i in c["cells"]]} for c in out[key]]
    return out
