"""The report dict grouped for a reader: the same sections in the console, Markdown and HTML.

Order (issue: a reader sees) raw agreement, chance-corrected coefficients,
paradox diagnostics, uncertainty, and where the disagreement is. Every section
is plain data (a title, column names, rows of text, notes), so each renderer
only draws tables.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from irr_audit.metrics.intervals import zero_to_rounding
from irr_audit.report.format import (
    LISTED_DISAGREEMENTS,
    format_interval,
    format_metric,
    format_number,
    level_label,
    metric_label,
)
from irr_audit.report.headline import (
    band_of,
    bootstrap_reason,
    coefficient_rows,
    headline_block,
    paradox_explanation,
    zero_se_cause,
)
from irr_audit.report.more_sections import more_sections

RAW = ("po", "pe")
CHANCE_CORRECTED = (
    "cohen_kappa",
    "scott_pi",
    "fleiss_kappa",
    "conger_kappa",
    "weighted_kappa_linear",
    "weighted_kappa_quadratic",
    "krippendorff_alpha",
    "gwet_ac1",
    "gwet_ac2",
    "brennan_prediger",
    "weighted_kappa",
    "fleiss_kappa_weighted",
    "conger_kappa_weighted",
    "brennan_prediger_weighted",
    "krippendorff_alpha_weighted",
    "light_kappa",
    "kendall_w",
)
GWET_MISSING = (
    "po",
    "fleiss_kappa",
    "conger_kappa",
    "gwet_ac1",
    "gwet_ac2",
    "brennan_prediger",
    "fleiss_kappa_weighted",
    "conger_kappa_weighted",
    "brennan_prediger_weighted",
)
PARADOX = ("prevalence_index", "bias_index", "pabak", "max_kappa")  # diagnostics with intervals


# A cell that holds a number: digits with signs, decimals, exponents, percent, an interval's brackets,
# a change in parentheses, a clipping star, or a dash for the diagonal of a matrix.
_NUMBER = re.compile(r"[-+]?\(?\[?[-+]?\d[\d,.]*(e[-+]?\d+)?%?(, [-+]?\d[\d.]*)?\]?\*?( \([-+]\d[\d.]*\))?\)?|-")


def numeric_column(column: list[str]) -> bool:
    """A column of numbers (any empty or undefined cell aside): right-aligned, so digits line up."""
    cells = [cell for cell in column if cell.strip() and not cell.startswith("undefined")]
    return bool(cells) and all(_NUMBER.fullmatch(cell.replace("\\", "")) for cell in cells)


@dataclass(frozen=True)
class Section:
    key: str
    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    notes: tuple[str, ...] = ()
    # the numbers behind a heat map (agreement tables); None for other sections
    matrix: tuple[tuple[float, ...], ...] | None = field(default=None)
    # running text shown before the table (the paradox explained, the methods paragraph)
    paragraphs: tuple[str, ...] = ()


def metric_sections(report: dict[str, Any]) -> list[Section]:
    metrics = report.get("metrics") or {}
    available = report.get("available_case") or {}
    sections = [
        sample_section(report),
        missingness_section(report),
        _table_section(report),
        _raw_section(report, metrics, available),
        _specific_section(report),
        _chance_section(report, metrics, available),
        paradox_section(report),
        _uncertainty_section(report, metrics),
        _gwet_missing_section(report),
        *(Section(*parts) for parts in more_sections(report)),
        *_where_sections(report),
    ]
    if report.get("group_comparison"):
        sections += _group_sections(report["group_comparison"], report["categories"])
    return [without_empty_columns(section) for section in sections if section is not None and shows(section)]


def shows(section: Section) -> bool:
    """A section with something to show: rows, notes or text (a table with headers and no rows is none)."""
    return bool(section.rows or section.notes or section.paragraphs)


def without_empty_columns(section: Section) -> Section:
    """The section without the columns (after the first) that are empty in every row, such as a
    bootstrap column when no bootstrap ran. A heat map's columns stay: its numbers are drawn."""
    if not section.rows or section.matrix is not None:
        return section
    keep = [0, *(at for at in range(1, len(section.columns)) if any(row[at] for row in section.rows))]
    if len(keep) == len(section.columns):
        return section
    return replace(
        section,
        columns=tuple(section.columns[at] for at in keep),
        rows=tuple(tuple(row[at] for at in keep) for row in section.rows),
    )


def code_split(codes: dict[str, str], categories: list[str]) -> str:
    """How the coders split on a unit, the most given code first: '4 yes - 1 no' (ties in the rule's order).

    >>> code_split({"a": "no", "b": "yes", "c": "yes"}, ["yes", "no"])
    '2 yes - 1 no'
    """
    order = {category: at for at, category in enumerate(categories)}
    counts: dict[str, int] = {}
    for code in codes.values():
        counts[code] = counts.get(code, 0) + 1
    ranked = sorted(counts.items(), key=lambda item: (-item[1], order.get(item[0], len(order)), item[0]))
    return " - ".join(f"{n} {code}" for code, n in ranked)


def headline_facts(report: dict[str, Any]) -> tuple[str, list[tuple[str, str]]]:
    """The answer first: one line with the recommended coefficient, its estimate and interval, and
    the facts beside it as (what, text) pairs, for every renderer's headline block."""
    headline = report.get("headline") or headline_block(report)
    interval = headline.get("interval")
    if headline.get("defined"):
        answer = f"{headline['label']} = {format_number(headline['value'])}"
        if interval:
            answer += f", {100 * interval['level']:g}% CI {_interval_text(interval)}"
    else:
        answer = f"{headline['label']} is undefined: {headline.get('reason', 'no reason given')}"
    facts = [("why this coefficient", f"{headline['why']} (docs/statistics.md, The headline coefficient)")]
    if interval:
        facts.append(("interval", f"{interval['kind']}: {interval['method']}"))
    elif headline.get("interval_note"):
        facts.append(("interval", f"none: {headline['interval_note']}"))
    units = headline.get("units") or {}
    facts.append(("units", f"{units.get('fully_coded')} fully coded of {units.get('total')}"))
    raw = headline.get("raw_agreement")
    if raw is not None:
        facts.append(("raw agreement", f"{100 * raw:.1f}% of codes agree (no allowance for chance)"))
    band = headline.get("band")
    if band:
        facts.append(("convention band", f"{band['label']}, by the {band['convention']}"))
    if headline.get("warning"):
        facts.append(("warning", headline["warning"]))
    return answer, facts


def _interval_text(interval: dict[str, Any]) -> str:
    text = f"[{format_number(interval['low'])}, {format_number(interval['high'])}]"
    return text + ("*" if interval.get("clipped") else "")


def answer_sections(report: dict[str, Any]) -> list[Section]:
    """What a reader needs first, after the headline: the one coefficient table and the kappa
    paradox explained. The details follow in :func:`metric_sections`."""
    return [coefficients_section(report), paradox_section(report)]


def coefficients_section(report: dict[str, Any]) -> Section:
    """The one coefficient table: estimate, interval, convention band and what each is for, the
    headline first; notes say how each interval was obtained, why one is missing or has no width."""
    table = report.get("coefficients")
    if table is None:
        table = coefficient_rows(report)
    level = _level(report)
    rows = []
    methods: dict[str, list[str]] = {}
    missing: dict[str, list[str]] = {}
    conventions: dict[str, None] = {}
    for entry in table:
        label = entry["label"] + (" (headline)" if entry["headline"] else "")
        interval = entry.get("interval")
        if interval:
            methods.setdefault(interval["method"], []).append(entry["label"])
        note = entry.get("interval_note")
        if note:
            missing.setdefault(note, []).append(entry["label"])
        band = entry.get("band")
        if band:
            conventions[band["convention"]] = None
        value = format_number(entry["value"]) if entry["defined"] else f"undefined: {entry.get('reason', '')}"
        rows.append(
            (
                label,
                value,
                _interval_text(interval) if interval else "",
                band["label"] if band else "",
                entry["what_it_is_for"],
            )
        )
    notes = [f"Interval by {method}: {', '.join(labels)}." for method, labels in methods.items()]
    notes += [f"{', '.join(labels)}: {note}." for note, labels in missing.items()]
    if any(entry.get("interval") and entry["interval"].get("clipped") for entry in table):
        notes.append("* an interval clipped to [-1, 1].")
    notes += [f"Band: {convention}." for convention in conventions]
    notes.append("On the fully coded units; the terms are explained under 'Words used' at the end.")
    columns = ("coefficient", "estimate", f"{level} CI", "convention band", "what it is for")
    return without_empty_columns(Section("coefficients", "Coefficients", columns, tuple(rows), tuple(notes)))


def paradox_section(report: dict[str, Any]) -> Section:
    """The kappa paradox explained for any number of coders: a sentence, and its numbers as rows."""
    facts = report.get("paradox") or paradox_explanation(report)
    metrics = report.get("metrics") or {}
    available = report.get("available_case") or {}
    kappa = metric_label(facts["coefficient"])
    rows: list[tuple[str, ...]] = [
        (f"share of the code '{code}'", f"{100 * share:.1f}%", "") for code, share in facts["prevalence"].items()
    ]
    numbers = (
        ("observed agreement (po)", facts["observed_agreement"]),
        ("chance agreement (pe)", facts["chance_agreement"]),
        (kappa, facts["kappa"]),
        (f"the largest {kappa} these rates allow", facts["max_kappa"]["value"]),
        *((metric_label(name), value) for name, value in facts["stay_high"].items()),
    )
    rows += [(label, format_number(value), "") for label, value in numbers if value is not None]
    rows += [
        (metric_label(name), format_metric(metrics[name]), format_metric(available[name]) if name in available else "")
        for name in ("prevalence_index", "bias_index")
        if name in metrics and metrics[name].get("defined")  # two codes only: with more, By category
    ]
    notes = [f"The largest {kappa}: {facts['max_kappa']['method']}."] if facts["max_kappa"]["value"] is not None else []
    if any(metrics.get(name, {}).get("defined") for name in ("prevalence_index", "bias_index")):
        notes.append(
            "Prevalence index: how much more one code is used than the other by both coders; bias index: how "
            "differently the two coders use the codes (Byrt, Bishop & Carlin 1993). The last column: available case."
        )
    title = "The kappa paradox explained" + ("" if facts["applies"] else " (it does not apply here)")
    return without_empty_columns(
        Section(
            "paradox",
            title,
            ("what", "value", "available case"),
            tuple(rows),
            tuple(notes),
            paragraphs=(facts["sentence"],),
        )
    )


def recoding_sentence(recoding: dict[str, Any]) -> str:
    """'Re-coding: the units of the sample drawn under rule_x v1, coded again under v2.'"""
    drawn, coded = recoding["drawn_under"], recoding["coded_under"]
    return (
        f"Re-coding: the units of the sample drawn under {drawn['id']} v{drawn['version']}, "
        f"coded again under v{coded['version']}."
    )


def sample_section(report: dict[str, Any]) -> Section | None:
    """Where the units came from (irr-audit sample): collected, unusable by reason, usable, sampled,
    and whether the threads are complete."""
    sample = report.get("sample")
    if not sample:
        return None
    counts = sample.get("counts", {})
    rows = [("items collected", str(counts.get("items", "")))]
    rows += [(f"unusable: {reason}", str(n)) for reason, n in (counts.get("log_rows") or {}).items()]
    rows += [
        ("unique usable units", str(counts.get("usable_units", ""))),
        ("units in the sample", str(counts.get("sampled_units", ""))),
    ]
    completeness = sample.get("completeness") or {}
    notes = [f"Thread completeness: {completeness.get('statement', 'completeness unknown')}."]
    notes += [f"- {reason}" for reason in completeness.get("reasons") or []]
    notes += [
        f"Count mismatch: {item['check']}: the run record says {item['record']}, the tool counted {item['tool']}."
        for item in sample.get("count_mismatches", [])
        if not item.get("agrees", False)
    ]
    recoding = sample.get("recoding")
    if recoding:
        notes.append(recoding_sentence(recoding))
    draw = sample.get("draw") or {}
    if draw.get("seed") is not None:
        notes.append(f"Draw: {draw.get('size')} of {draw.get('population')} usable units, seed {draw['seed']}.")
    title = f"Sample: from the collector's output{' (' + sample['dataset'] + ')' if sample.get('dataset') else ''}"
    return Section("sample", title, ("stage", "count"), tuple(rows), tuple(notes))


def missingness_section(report: dict[str, Any]) -> Section | None:
    """The missingness log by coder and reason: rows of the log, not units (a unit can have several)."""
    missingness = report.get("missingness") or {}
    if not missingness.get("log_rows"):
        return None
    reasons = list(missingness["by_reason"])
    rows = tuple(
        (coder, *(str(counts.get(reason, 0)) for reason in reasons), str(sum(counts.values())))
        for coder, counts in missingness["by_coder"].items()
    )
    return Section(
        "missingness",
        "Missingness log by coder",
        ("coder", *reasons, "total"),
        rows,
        ("Rows of the log; these units are left out of the agreement table, never counted as disagreements.",),
    )


def _basis_note(report: dict[str, Any]) -> str:
    units = report["units"]
    return (
        f"fully coded: the {units['fully_coded']} units every coder coded validly (the audit's basis); "
        f"available case: the {units.get('available_case', '?')} units with at least two valid codes, "
        "by each coefficient's published missing-data convention."
    )


def _table_section(report: dict[str, Any]) -> Section | None:
    table = report.get("table")
    if table is None:
        return None
    categories = report["categories"]
    coders = report["coders"]
    if len(coders) == 2:
        title = f"Agreement table: {coders[0]} (rows) x {coders[1]} (columns), fully coded units"
        notes: tuple[str, ...] = ()
    else:
        title = "Coincidence matrix (all coders, fully coded units)"
        notes = (
            "Within a unit coded by m coders, each ordered pair of codes counts 1/(m - 1) (Krippendorff), "
            "so a cell can hold a fraction (a half with three coders).",
        )
    rows = [(category, *map(_count, counts), _count(sum(counts))) for category, counts in zip(categories, table)]
    totals = [sum(column) for column in zip(*table)]
    rows.append(("total", *map(_count, totals), _count(sum(totals))))
    return Section(
        "table",
        title,
        ("", *categories, "total"),
        tuple(rows),
        notes,
        matrix=tuple(tuple(float(v) for v in row) for row in table),
    )


def _count(value: float) -> str:
    """A count: whole numbers as such (coincidence sums of halves can land a hair off), else 2 decimals."""
    return str(round(value)) if abs(value - round(value)) < 1e-9 else f"{value:.2f}"


def _raw_section(report: dict[str, Any], metrics: dict[str, Any], available: dict[str, Any]) -> Section:
    notes = [_basis_note(report)]
    if len(report["coders"]) > 2:
        notes.append("With three or more coders po is Fleiss' P-bar: the mean share of agreeing coder pairs per unit.")
    rows = tuple(
        (metric_label(name), format_metric(metrics[name]), format_metric(available[name]) if name in available else "")
        for name in RAW
        if name in metrics
    )
    return Section("raw", "Raw agreement", ("coefficient", "fully coded", "available case"), rows, tuple(notes))


def _specific_section(report: dict[str, Any]) -> Section | None:
    per_category = report.get("per_category") or {}
    if not per_category:
        return None
    rows = []
    for category, entry in per_category.items():
        rows.append(
            (
                category,
                format_metric(entry["specific_agreement"]) if "specific_agreement" in entry else "",
                format_metric(entry["kappa"]) if "kappa" in entry else "",
                format_interval(entry["kappa"]) if "kappa" in entry else "",
            )
        )
    return Section(
        "per_category",
        "By category",
        ("category", "specific agreement", "kappa vs rest", f"{_level(report)} CI"),
        tuple(rows),
        (
            "Specific agreement: of the times either coder used this code, the share the other coder matched "
            "(twice the units both put in it, over the two coders' totals for it).",
        ),
    )


def _chance_section(report: dict[str, Any], metrics: dict[str, Any], available: dict[str, Any]) -> Section:
    rows: list[tuple[str, ...]] = []
    conventions: dict[str, None] = {}  # a set that keeps the order the conventions are first used in
    for name in CHANCE_CORRECTED:
        if name not in metrics:
            continue
        metric = metrics[name]
        band = band_of(name, metric.get("value")) if metric.get("defined") else None
        if band:
            conventions[band["convention"]] = None
        rows.append(
            (
                _label_with_detail(name, metric),
                format_metric(metric),
                format_metric(available[name]) if name in available else "",
                band["label"] if band else "",
            )
        )
    notes = tuple(f"Bands: {convention}." for convention in conventions)
    return Section(
        "chance_corrected",
        "Chance-corrected coefficients",
        ("coefficient", "fully coded", "available case", "convention band"),
        tuple(rows),
        notes,
    )


def _label_with_detail(name: str, metric: dict[str, Any]) -> str:
    label = metric_label(name)
    if metric.get("level"):
        label += f" ({metric['level']})"
    return label


def _uncertainty_section(report: dict[str, Any], metrics: dict[str, Any]) -> Section:
    rows: list[tuple[str, ...]] = []
    methods: dict[str, None] = {}  # a set that keeps the order the methods are first used in
    boot = report.get("bootstrap") or {}
    for name in (*CHANCE_CORRECTED, *RAW, *PARADOX):
        metric = metrics.get(name)
        if not metric or not metric.get("defined"):
            continue
        bootstrap = metric.get("bootstrap") or {}
        if "ci" not in metric and not bootstrap:
            continue
        if metric.get("ci_method"):
            methods[metric["ci_method"]] = None
        rows.append(
            (
                metric_label(name),
                format_number(metric.get("se")) if metric.get("se") is not None else "",
                format_interval(metric),
                format_interval(bootstrap) if bootstrap.get("defined") else _undefined_boot(bootstrap),
                _p_value(metric),
            )
        )
    notes = [f"Analytic interval: {method}." for method in methods]
    flat = [metric_label(name) for name in (*CHANCE_CORRECTED, *RAW, *PARADOX) if _no_width(metrics.get(name))]
    if flat:
        notes.append(
            f"{', '.join(flat)}: the standard error is 0 ({zero_se_cause(report)}), so the formula sees no "
            "variation between units; an interval of no width is not certainty."
        )
    if boot.get("n_boot"):
        notes.append(f"Bootstrap: {boot['n_boot']} resamples of units, seed {boot.get('seed')}, percentile interval.")
    else:
        notes.append("No bootstrap was run; add --bootstrap N --seed S for intervals on every coefficient.")
    notes.append("Intervals are clipped to [-1, 1]; * marks those that were.")
    notes.append("p: two-sided test of H0: coefficient = 0 on its SE (docs/statistics.md, Uncertainty).")
    level = _level(report)
    columns = ("coefficient", "SE", f"{level} CI", f"bootstrap {level} CI", "p (H0: 0)")
    return Section("uncertainty", "Uncertainty (fully coded units)", columns, tuple(rows), tuple(notes))


def _no_width(metric: dict[str, Any] | None) -> bool:
    """A defined coefficient whose analytic interval has no width because its SE is 0 (to rounding)."""
    if not metric or not metric.get("defined") or metric.get("se") is None or "ci" not in metric:
        return False
    return zero_to_rounding(metric["se"], metric["value"])


def _level(report: dict[str, Any]) -> str:
    return level_label(report)


def _p_value(metric: dict[str, Any]) -> str:
    if "p_value" not in metric:
        return ""
    return "undefined" if metric["p_value"] is None else f"{metric['p_value']:.4g}"


def _gwet_missing_section(report: dict[str, Any]) -> Section | None:
    """Gwet's missing-data convention (the gwet_missing basis), shown when it holds other units
    than the available-case basis: with no unit coded once the two agree."""
    gwet = report.get("gwet_missing") or {}
    units = report.get("units") or {}
    if not gwet or units.get("gwet_missing") == units.get("available_case"):
        return None
    rows = tuple(
        (
            _label_with_detail(name, gwet[name]),
            format_metric(gwet[name]),
            format_number(gwet[name].get("se")) if gwet[name].get("se") is not None else "",
            format_interval(gwet[name]),
            _p_value(gwet[name]),
        )
        for name in GWET_MISSING
        if name in gwet
    )
    against = [
        f"{metric_label(name)}: p = {_p_value(test)} for H0: coefficient <= {test['value']}"
        for name in GWET_MISSING
        if name in gwet
        for test in [gwet[name].get("test_against")]
        if test
    ]
    notes = (
        f"The {units.get('gwet_missing', '?')} units with at least one valid code (Gwet 2014, as irrCAC): "
        "a unit coded once adds nothing to agreement but informs chance agreement and n.",
        *against,
    )
    columns = ("coefficient", "value", "SE", f"{_level(report)} CI", "p (H0: 0)")
    return Section("gwet_missing", "Gwet's missing-data convention", columns, rows, notes)


def _undefined_boot(bootstrap: dict[str, Any]) -> str:
    if not bootstrap:
        return ""
    return bootstrap_reason(bootstrap)


def _where_sections(report: dict[str, Any]) -> list[Section]:
    sections = []
    profile = report.get("disagreement") or {}
    if profile.get("confusions"):
        listed = profile["confusions"][:LISTED_DISAGREEMENTS]  # the most frequent first
        rows: tuple[tuple[str, ...], ...] = tuple(
            (f"{first} / {second}", _count(item["count"])) for item in listed for first, second in [item["categories"]]
        )
        notes = [f"{_count(profile['disagreements'])} of {_count(profile['total'])} {profile['unit']} disagree."]
        if profile["unit"] == "pairable values":
            notes.append("Pairable values: the codes of a unit that can be paired with another coder's code on it.")
        if len(listed) < len(profile["confusions"]):
            notes.append(
                f"The {len(listed)} most frequent of {len(profile['confusions'])} code pairs are listed; "
                "the JSON report (--format json) lists all."
            )
        sections.append(
            Section(
                "confusions",
                "Where the disagreement is: code pairs",
                ("codes (rows / columns)", "count"),
                rows,
                tuple(notes),
            )
        )
    if profile.get("by_distance"):
        rows = tuple(
            (
                f"{item['distance']} step{'s' if item['distance'] > 1 else ''}",
                _count(item["count"]),
                format_number(item["share_of_disagreements"]),
            )
            for item in profile["by_distance"]
        )
        far = profile.get("far_corners", [])
        corners = ", ".join(
            f"{a} / {b} ({_count(item['count'])})" for item in far if item["count"] for a, b in [item["categories"]]
        )
        if far and not corners:
            corners = "none used (" + ", ".join(" / ".join(item["categories"]) for item in far) + ")"
        notes = [
            "Mass next to the diagonal points to a boundary to sharpen in the rule; mass in the far corners "
            "means coders read the task differently."
        ]
        if corners:
            notes.append(f"Far corners: {corners}.")
        sections.append(
            Section(
                "by_distance",
                "Where the disagreement is: distance on the scale",
                ("distance", "count", "share of disagreements"),
                rows,
                tuple(notes),
            )
        )
    if report.get("leave_one_out"):
        names = [
            name
            for name in ("krippendorff_alpha", "fleiss_kappa", "gwet_ac1", "po")
            if name in report["leave_one_out"][0]["metrics"]
        ]
        rows = tuple(
            (entry["left_out"], *(_change(entry, name) for name in names)) for entry in report["leave_one_out"]
        )
        sections.append(
            Section(
                "leave_one_out",
                "Which coder moves the result: each coder left out",
                ("left out", *(metric_label(name) for name in names)),
                rows,
                ("Each cell: the coefficient without that coder (change from all coders).",),
            )
        )
    if len(report["coders"]) > 2 and report.get("pairs"):
        sections.append(_pairwise_matrix(report))
    return sections


def _change(entry: dict[str, Any], name: str) -> str:
    metric = entry["metrics"][name]
    change = entry["change"].get(name)
    if not metric.get("defined") or change is None:
        return format_metric(metric)
    return f"{format_number(metric['value'])} ({change:+.4f})"


def _pairwise_matrix(report: dict[str, Any]) -> Section:
    coders = report["coders"]
    kappa = {tuple(pair["coders"]): pair["metrics"].get("cohen_kappa", {}) for pair in report["pairs"]}
    rows, matrix = [], []
    for first in coders:
        cells, numbers = [], []
        for second in coders:
            metric = kappa.get((first, second)) or kappa.get((second, first))
            if first == second:
                cells.append("-")
                numbers.append(float("nan"))
            else:
                cells.append(format_number(metric["value"]) if metric and metric.get("defined") else "undef.")
                numbers.append(metric["value"] if metric and metric.get("defined") else float("nan"))
        rows.append((first, *cells))
        matrix.append(tuple(numbers))
    n = {pair["n"] for pair in report["pairs"]}
    return Section(
        "pairwise",
        "Pairwise Cohen's kappa",
        ("", *coders),
        tuple(rows),
        (f"On the fully coded units (n = {', '.join(map(str, sorted(n)))}).",),
        matrix=tuple(matrix),
    )


def _group_sections(group: dict[str, Any], categories: list[str]) -> list[Section]:
    against = group["against_reference"]
    own = group["group_agreement"]
    undecided = group.get("undecided") or {}
    notes = [f"Consensus of {', '.join(group['group'])}: {group['consensus_method']}."]
    if undecided:
        counts = ", ".join(f"{n} {reason}" for reason, n in undecided.items())
        notes.append(f"Units left undecided (not guessed): {counts}.")
    names = [
        name
        for name in (
            "po",
            "cohen_kappa",
            "weighted_kappa_linear",
            "weighted_kappa_quadratic",
            "krippendorff_alpha",
            "gwet_ac1",
            "fleiss_kappa",
        )
        if name in against["metrics"] or name in own["metrics"]
    ]
    rows = tuple(
        (
            metric_label(name),
            format_metric(against["metrics"][name]) if name in against["metrics"] else "",
            format_metric(own["metrics"][name]) if name in own["metrics"] else "",
        )
        for name in names
    )
    return [
        Section(
            "group",
            f"Group {group['name']} against {group['reference']}",
            ("coefficient", f"consensus vs {group['reference']}", "within the group"),
            rows,
            tuple(notes),
        )
    ]


def adjudication_section(report: dict[str, Any]) -> Section | None:
    """Post-hoc consensus codes of an audit bundle: after, and apart from, the independent statistics."""
    adjudication = report.get("adjudication")
    if not adjudication:
        return None
    coders = report["coders"]
    rows = tuple(
        (
            item["comment_id"],
            *(item["codes"].get(coder, "") for coder in coders),
            item["final_code"],
            item["decided_by"],
            item["note"] or "",
        )
        for item in adjudication["decisions"]
    )
    notes = [
        adjudication["statement"],
        f"{adjudication['decided']} of {adjudication['disagreements']} disagreements decided.",
    ]
    if adjudication["undecided"]:
        notes.append("Not yet decided: " + ", ".join(adjudication["undecided"]) + ".")
    return Section(
        "adjudication",
        adjudication["title"],
        ("comment_id", *coders, "final code", "decided by", "note"),
        rows,
        tuple(notes),
    )


GLOSSARY = (
    (
        "observed agreement (po)",
        "the share of codes that agree: for two coders the units coded alike; for more, the mean share of "
        "agreeing pairs of coders per unit (Fleiss' P-bar)",
    ),
    ("chance agreement (pe)", "the agreement expected if the coders chose codes at random at the rates they used"),
    ("fully coded", "the units every coder gave a valid code: the basis of every number unless a column says"),
    (
        "available case",
        "the units with at least two valid codes, each coefficient using them by its published rule for missing codes",
    ),
    ("pairable values", "the codes of a unit that can be paired with another coder's code on the same unit"),
    (
        "coincidence matrix",
        "every ordered pair of codes within a unit, weighted 1/(m - 1) for m codes: a cell can hold a half count",
    ),
    ("PABAK", "prevalence- and bias-adjusted kappa: 2 x po - 1 with two codes (Brennan-Prediger with more)"),
    ("specific agreement", "for one code, the share of the times either coder used it that the other matched"),
    ("SE, CI", "the standard error, and the confidence interval: the range that holds the value at the stated level"),
    ("convention band", "a named range for reading a value (Landis & Koch, Krippendorff): a convention, not a test"),
)


def glossary_section() -> Section:
    """The jargon of the report in words, once."""
    return Section("glossary", "Words used", ("term", "meaning"), GLOSSARY)
