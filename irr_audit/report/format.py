"""How the renderers write numbers and names: a metric's value or why it is undefined,
intervals, and the labels of the coefficients."""

from __future__ import annotations

from collections.abc import Mapping
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


def unlisted_disagreements(report: Mapping[str, Any]) -> str | None:
    """What a report from counts or a table says of its disagreements: how many there are (the
    counts tell) and that the list is not available (they hold no unit ids), never "none".
    None when the report lists them, or counts them without being asked to list them.

    >>> unlisted_disagreements({"disagreement_count": 3, "disagreements_unlisted": "not available from counts"})
    '3 fully coded units have differing codes; the list of units is not available from counts.'
    """
    reason = report.get("disagreements_unlisted")
    if not reason:
        return None
    count = report.get("disagreement_count")
    units = "1 fully coded unit has" if count == 1 else f"{count} fully coded units have"
    return f"{units} differing codes; the list of units is {reason}."


TABLE_MISSING = "not determined by a table (it holds the coded units only)"


def missing_units(report: Mapping[str, Any]) -> tuple[str, str]:
    """How a report names and counts its units not fully coded: from sheets, the units in the
    missingness log; from counts, the units the counts show not fully coded (there is no log);
    from a K x K table, not determined: it holds the fully coded units only, so 0 would be a guess.

    >>> missing_units({"units": {"missing": None}, "input": {"kind": "table"}})[1]
    'not determined by a table (it holds the coded units only)'
    """
    missing = (report.get("units") or {}).get("missing")
    given = report.get("input")
    if isinstance(given, Mapping) and given.get("kind") == "table" or missing is None:
        return "not fully coded", TABLE_MISSING
    if (report.get("missingness") or {}).get("log_rows") is None:
        return "not fully coded (scored from counts: no missingness log)", str(missing)
    return "not fully coded (in the missingness log)", str(missing)


NO_CODER = "no coder: a table of counts"


def sheet_coder(sheet: Mapping[str, Any]) -> str:
    """The coder an input file names, for the provenance: a counts file or table names none.

    >>> sheet_coder({"coder": None})
    'no coder: a table of counts'
    """
    coder = sheet.get("coder")
    return NO_CODER if coder is None else str(coder)


def level_label(report: Mapping[str, Any]) -> str:
    """The level of a report's intervals as a label ("95%"), from its ``intervals`` key: every
    interval is made at --ci-level, so every label of one says that level, never a fixed 95%.

    >>> level_label({"intervals": {"level": 0.5}}), level_label({})
    ('50%', '95%')
    """
    intervals = report.get("intervals")
    level = intervals.get("level") if isinstance(intervals, Mapping) else None
    number = float(level) if isinstance(level, (int, float)) and not isinstance(level, bool) else 0.95
    return f"{100 * number:g}%"


def metric_label(name: str) -> str:
    return METRIC_LABELS.get(name, name.replace("_", " "))


def readable(warning: str) -> str:
    """A statistics warning for people: a coefficient's key at its start ("cohen_kappa: ...") as its label."""
    name, colon, rest = warning.partition(": ")
    return f"{metric_label(name)}: {rest}" if colon and name in METRIC_LABELS else warning


def bundle_lines(document: Mapping[str, Any]) -> list[str]:
    """The lines that name the audit bundle a report was made from (a rule's bundle's text report,
    and every report of a codebook bundle): its name, when and with which version it was frozen,
    and its digest (what freeze printed and verify --expect takes), one wording for both kinds.
    Nothing for sheets or a join folder. Plain text, each value as the manifest has it."""
    bundle = document.get("bundle")
    if not isinstance(bundle, Mapping):
        return []
    lines = [
        f"Audit bundle: {bundle['name']}, frozen {bundle['created']} with irr-audit {bundle['tool_version']}",
        f"Bundle digest: {bundle['digest']} (the sha256 of its manifest.json)",
    ]
    recodes = bundle.get("recodes")
    if isinstance(recodes, Mapping):
        lines.append(f"Re-coded sample: the units of bundle {recodes.get('bundle')}, coded again")
    return lines
