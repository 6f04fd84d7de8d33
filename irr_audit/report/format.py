"""How the renderers write numbers and names: a metric's value or why it is undefined,
intervals, and the labels of the coefficients."""

from __future__ import annotations

from typing import Any

METRIC_LABELS = {
    "po": "observed agreement (po)",
    "pe": "chance agreement (pe)",
    "cohen_kappa": "Cohen's kappa",
    "scott_pi": "Scott's pi",
    "fleiss_kappa": "Fleiss' kappa",
    "conger_kappa": "Conger's kappa",
    "krippendorff_alpha": "Krippendorff's alpha",
    "weighted_kappa_linear": "weighted kappa, linear",
    "weighted_kappa_quadratic": "weighted kappa, quadratic",
    "gwet_ac1": "Gwet's AC1",
    "gwet_ac2": "Gwet's AC2",
    "brennan_prediger": "Brennan-Prediger",
    "weighted_kappa": "weighted kappa (chosen weights)",
    "fleiss_kappa_weighted": "Fleiss' kappa, weighted",
    "conger_kappa_weighted": "Conger's kappa, weighted",
    "brennan_prediger_weighted": "Brennan-Prediger, weighted",
    "krippendorff_alpha_weighted": "Krippendorff's alpha, weighted",
    "pabak": "PABAK",
    "prevalence_index": "prevalence index",
    "bias_index": "bias index",
    "max_kappa": "maximum kappa",
    "specific_agreement": "specific agreement",
    "light_kappa": "Light's kappa",
    "kendall_w": "Kendall's W (concordance of rankings)",
}


LISTED_DISAGREEMENTS = 2000  # Markdown and HTML list this many; JSON lists every one


def format_number(value: float | None, digits: int = 4) -> str:
    if value is None:
        return "undefined"
    text = f"{value:.{digits}f}"
    return "0.0000" if text == "-0.0000" else text


def format_metric(metric: dict[str, Any], digits: int = 4) -> str:
    """One metric for people: its value, or 'undefined' and why."""
    if not metric.get("defined"):
        return f"undefined: {metric.get('reason', 'no reason given')}"
    return format_number(metric["value"], digits)


def format_interval(metric: dict[str, Any], digits: int = 4) -> str:
    ci = metric.get("ci")
    if not ci:
        return ""
    text = f"[{format_number(ci[0], digits)}, {format_number(ci[1], digits)}]"
    if metric.get("ci_clipped"):
        text += "*"
    return text


def metric_label(name: str) -> str:
    return METRIC_LABELS.get(name, name.replace("_", " "))


def readable(warning: str) -> str:
    """A statistics warning for people: a coefficient's key at its start ("cohen_kappa: ...") as its label."""
    name, colon, rest = warning.partition(": ")
    return f"{metric_label(name)}: {rest}" if colon and name in METRIC_LABELS else warning
