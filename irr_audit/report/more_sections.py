"""Sections for the intraclass correlations, coder bias, Gwet's benchmarking and Krippendorff's
bootstrap: plain data every renderer draws (see sections.py)."""

from __future__ import annotations

from typing import Any

from irr_audit.report.format import format_interval, format_metric, format_number, level_label, metric_label

Parts = tuple[tuple[str, ...], list[tuple[str, ...]], list[str]]
SectionParts = tuple[str, str, tuple[str, ...], tuple[tuple[str, ...], ...], tuple[str, ...]]


def build(
    key: str, title: str, columns: tuple[str, ...], rows: list[tuple[str, ...]], notes: list[str]
) -> SectionParts:  # noqa: E501
    return key, title, columns, tuple(rows), tuple(notes)


def more_sections(report: dict[str, Any]) -> list[SectionParts]:
    """The sections (key, title, columns, rows, notes) in the order a reader meets them, those the report has."""
    out = []
    level = level_label(report)  # the ICC and bootstrap intervals are made at --ci-level too
    icc = report.get("icc")
    if icc:
        out.append(build("icc", "Intraclass correlation (interval/ratio codes)", *_icc(icc, level)))
    bias = report.get("coder_bias")
    if bias and bias.get("pairs"):
        out.append(build("coder_bias", "Coder bias (marginal homogeneity)", *_bias(bias)))
    bench = report.get("benchmarking")
    if bench:
        out.append(build("benchmarking", "Benchmarking (Gwet 2014, ch. 6)", *_benchmarking(bench)))
    kalpha = report.get("krippendorff_bootstrap")
    if kalpha:
        out.append(build("krippendorff_bootstrap", "Krippendorff's bootstrap of alpha", *_kalpha(kalpha, level)))
    return out


def _icc(icc: dict[str, Any], level: str) -> Parts:
    rows: list[tuple[str, ...]] = []
    for name, metric in icc.get("forms", {}).items():
        forms = "; ".join(metric.get("mcgraw_wong", []))
        rows.append((metric.get("shrout_fleiss", name), forms, format_metric(metric), format_interval(metric)))
    notes = [f"On {icc.get('n', 0)} fully coded units by {icc.get('k', 0)} coders ({icc.get('basis', '')})."]
    notes.append("Intervals: F-based (McGraw & Wong 1996); two-way random and mixed models share each number.")
    return ("Shrout & Fleiss", "McGraw & Wong", "ICC", f"{level} CI"), rows, notes


def _p(test: dict[str, Any]) -> str:
    if not test.get("defined"):
        return ""
    return f"{test['p_value']:.4g}"


def _bias(bias: dict[str, Any]) -> Parts:
    rows: list[tuple[str, ...]] = []
    for pair in bias["pairs"]:
        coders = " vs ".join(pair["coders"])
        for test in pair["tests"]:
            statistic = format_number(test["statistic"]) if test.get("defined") else f"undefined: {test['reason']}"
            rows.append((coders, test["test"], statistic, str(test["df"]), _p(test)))
    return ("coders", "test", "chi-square", "df", "p-value"), rows, [bias["what_it_means"]]


def _benchmarking(bench: dict[str, Any]) -> Parts:
    rows: list[tuple[str, ...]] = []
    for name, entry in bench.items():
        for scale in ("landis_koch", "fleiss", "altman"):
            bands = entry[scale]["bands"]
            shown = ", ".join(f"{b['label']} {b['cumulative_probability']:.3f}" for b in bands)
            rows.append((metric_label(name), scale.replace("_", "-"), entry[scale]["reached_at_95"] or "none", shown))
    notes = [
        "Each band's probability is that the coefficient lies in it or in a band above (normal with the analytic "
        "SE, truncated to [-1, 1]); the band reached is the highest with a probability of at least 0.95.",
        "The bands are conventions (Landis & Koch 1977, Fleiss 1981, Altman 1991), not tests.",
    ]
    return ("coefficient", "scale", "reached (>= 0.95)", "P(in band or above)"), rows, notes


def _kalpha(kalpha: dict[str, Any], level: str) -> Parts:
    rows: list[tuple[str, ...]] = []
    for basis, label in (("metrics", "fully coded"), ("available_case", "available case")):
        entry = kalpha.get(basis) or {}
        if not entry.get("defined"):
            rows.append((label, f"undefined: {entry.get('reason', '')}", ""))
            continue
        q = ", ".join(f"q(alpha < {item['alpha_min']:g}) = {item['q']:.3f}" for item in entry["q_below"])
        ci = entry["ci"]
        rows.append((label, f"[{format_number(ci[0])}, {format_number(ci[1])}]", q))
    first = kalpha.get("metrics") or {}
    notes = [
        f"{first.get('n_boot', '')} replicates of {first.get('pairs_per_replicate', '')} pairs of pairable values "
        f"(Hayes & Krippendorff 2007), seed {kalpha.get('seed')}; distinct from the bootstrap over units above."
    ]
    return ("basis", f"{level} CI", "probability alpha is below a minimum"), rows, notes
