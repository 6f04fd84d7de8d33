"""The reliability table of a codebook audit: one row per variable, first in every report
(Lombard, Snyder-Duch & Bracken 2002: reliability per variable, each with its sample size and
coefficient), and the codebook's reports built around it (docs/codebook_audit.md).

Each row is read from that variable's single-rule report: the coders, the units and the fully
coded ones, raw agreement (po), the recommended coefficient (:func:`headline_metric`) with its
interval and its band, and whether it meets its gate.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterator, Mapping
from typing import Any

from irr_audit.io.display import visible
from irr_audit.report.console import plain_text, render_console, section_table
from irr_audit.report.format import (
    bundle_lines,
    format_interval,
    format_metric,
    format_number,
    level_label,
    readable,
)
from irr_audit.report.headline import headline_metric
from irr_audit.report.html import render_html
from irr_audit.report.markdown import md_text, render_markdown, section_lines
from irr_audit.report.richimport import Group, Text
from irr_audit.report.sections import Section

RELIABILITY_COLUMNS = (
    "variable",
    "scale",
    "coders",
    "units fully coded",
    "raw agreement",
    "coefficient",
    "value",
    "95% interval",  # at the default level: reliability_columns names the level the audit used
    "band",
    "gate",
)


def reliability_columns(document: Mapping[str, Any]) -> tuple[str, ...]:
    """The table's columns, the interval's naming the level of the variables' intervals (--ci-level;
    one audit gives every variable the same one, but each report carries its own)."""
    levels = sorted({level_label(report) for report in (document.get("variables") or {}).values()})
    interval = f"{levels[0]} interval" if len(levels) == 1 else "interval (at each variable's level)"
    return tuple(interval if column == "95% interval" else column for column in RELIABILITY_COLUMNS)


def gate_verdict(metric: Mapping[str, Any] | None, threshold: float | None) -> dict[str, Any] | None:
    """A gate on the recommended coefficient: met when it is defined and at least ``threshold``.
    An undefined coefficient never meets a gate. None when the variable has no gate."""
    if threshold is None:
        return None
    value = metric.get("value") if isinstance(metric, Mapping) else None
    defined = isinstance(metric, Mapping) and metric.get("defined") is True and _finite(value)
    passed = bool(defined and float(value) >= threshold)  # type: ignore[arg-type]
    verdict: dict[str, Any] = {"threshold": threshold, "passed": passed}
    if not defined:
        verdict["reason"] = "the coefficient is undefined" if isinstance(metric, Mapping) else "no coefficient"
    return verdict


def _level(report: Mapping[str, Any]) -> float:
    """The level of the report's intervals (--ci-level), stated beside the interval in the JSON row."""
    intervals = report.get("intervals")
    level = intervals.get("level") if isinstance(intervals, Mapping) else None
    return float(level) if isinstance(level, (int, float)) and _finite(level) else 0.95


def _interval(report: Mapping[str, Any], metric: Mapping[str, Any] | None) -> dict[str, Any]:
    """The row's interval: the one the variable's own report gives its headline (analytic, or
    Krippendorff's bootstrap for ordinal alpha, which has no SE formula), so that the table and the
    report agree; the metric's analytic interval when the report has no headline block."""
    interval = (report.get("headline") or {}).get("interval")
    if isinstance(interval, Mapping):
        return {
            "ci": [interval["low"], interval["high"]],
            "ci_level": float(interval.get("level", _level(report))),
            "ci_method": interval.get("method"),
            "ci_clipped": bool(interval.get("clipped")),
        }
    return {"ci": (metric or {}).get("ci"), "ci_level": _level(report)}


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def reliability_row(variable: str, report: Mapping[str, Any], threshold: float | None) -> dict[str, Any]:
    """The reliability table's row of one variable, from its single-rule report dict."""
    headline = headline_metric(report)
    metric = dict(headline.metric) if isinstance(headline.metric, Mapping) else None
    units = report.get("units") or {}
    po = (report.get("metrics") or {}).get("po") or {}
    band = (report.get("interpretation") or {}).get(headline.name) or {}
    return {
        "variable": variable,
        "rule": {"id": report["rule"]["id"], "version": report["rule"]["version"]},
        "scale": report["rule"]["scale"],
        "coders": len(report.get("coders") or ()),
        "units": units.get("total"),
        "fully_coded": units.get("fully_coded"),
        "raw_agreement": {"value": po.get("value"), "defined": bool(po.get("defined", False))},
        "coefficient": headline.to_dict() | _interval(report, metric),
        "band": band.get("label"),
        "gate": gate_verdict(metric, threshold),
    }


def reliability_rows(reports: Mapping[str, Mapping[str, Any]], gates: Mapping[str, float]) -> list[dict[str, Any]]:
    """One row per variable, in the codebook's order."""
    return [reliability_row(variable, report, gates.get(variable)) for variable, report in reports.items()]


def failed_gates(rows: list[dict[str, Any]]) -> list[str]:
    """The variables whose gate is not met, in order."""
    return [row["variable"] for row in rows if row["gate"] is not None and not row["gate"]["passed"]]


def _gate_text(gate: Mapping[str, Any] | None) -> str:
    if gate is None:
        return "no gate"
    mark = "pass" if gate["passed"] else "FAIL"
    why = f": {gate['reason']}" if "reason" in gate else ""
    return f"{mark} (>= {gate['threshold']:g}{why})"


def reliability_section(document: Mapping[str, Any]) -> Section:
    """The reliability table as a Section, which every renderer draws as it draws the others."""
    rows = []
    for row in document["reliability"]:
        coefficient = row["coefficient"]
        keys = ("value", "defined", "reason", "ci", "ci_clipped")
        metric = {key: coefficient.get(key) for key in keys if key in coefficient}
        raw = row["raw_agreement"]
        rows.append(
            (
                row["variable"],
                row["scale"],
                str(row["coders"]),
                f"{row['fully_coded']} of {row['units']}",
                format_number(raw["value"]) if raw["defined"] else "undefined",
                coefficient["label"],
                format_metric(metric),
                format_interval(metric),
                row["band"] or "",
                _gate_text(row["gate"]),
            )
        )
    notes = [
        "One row per variable, each on its own fully coded units; the coefficient is the one recommended for its "
        "coders and scale (Cohen's kappa for two coders on a nominal rule, else Krippendorff's alpha). Bands are "
        "conventions, not tests; a gate is this study's threshold on the coefficient (undefined never passes).",
    ]
    failed = failed_gates(list(document["reliability"]))
    if failed:
        notes.append(f"Failed gates: {', '.join(failed)}.")
    columns = reliability_columns(document)
    return Section("reliability", "Reliability by variable", columns, tuple(rows), tuple(notes))


PARADOX = "kappa paradox"  # a warning about one variable's own table, never common to the variables
COMMON_TITLE = "Warnings (every variable)"


def common_warnings(document: Mapping[str, Any]) -> list[str]:
    """The warnings every variable's report gives (the sheets' own: a copied sheet, two coders
    alike), which a codebook's report shows once, before the variables. Pure."""
    reports = list(document["variables"].values())
    if len(reports) < 2:
        return []
    others = [set(report.get("warnings") or ()) for report in reports[1:]]
    first = reports[0].get("warnings") or ()
    return [warning for warning in first if not warning.startswith(PARADOX) and all(warning in rest for rest in others)]


def variable_reports(document: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Each variable's report as its section shows it: with its own warnings only (those common
    to every variable are shown once, above). Pure: the document is not changed."""
    common = set(common_warnings(document))
    return {
        variable: {**report, "warnings": [w for w in report.get("warnings") or () if w not in common]}
        if common
        else dict(report)
        for variable, report in document["variables"].items()
    }


def _heading(document: Mapping[str, Any]) -> str:
    codebook = document["codebook"]
    return f"Codebook {codebook['name']} v{codebook['version']} ({codebook['digest']})"


def codebook_markdown(document: Mapping[str, Any]) -> str:
    """The reliability table, then each variable's own report (its headings one level down)."""
    # section_lines opens with the blank line under the title
    lines = [f"# {md_text(_heading(document))}"]
    frozen = bundle_lines(document)
    if frozen:
        lines += ["", *(f"- {md_text(line)}" for line in frozen)]
    lines += [*section_lines(reliability_section(document)), ""]
    common = common_warnings(document)
    if common:
        lines += [f"## {COMMON_TITLE}", "", *(f"- {md_text(readable(warning))}" for warning in common), ""]
    for variable, report in variable_reports(document).items():
        lines += [f"# Variable {md_text(variable)}", ""]
        lines += [f"#{line}" if line.startswith("#") else line for line in render_markdown(report).splitlines()]
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def natural_width(section: Section) -> int:
    """The columns a table of ``section`` needs to show every cell whole and no header word
    broken: each column as wide as its longest cell or header word, one space either side."""
    widths = [
        max([len(word) for word in column.split()] + [len(row[at]) for row in section.rows])
        for at, column in enumerate(section.columns)
    ]
    return sum(widths) + 2 * len(widths)


class FittedTable:
    """A section as a table where the console's width holds it whole, else stacked: each row a
    heading (its first cell) and one "column: value" line per other cell. Ten columns squeezed
    into 80 would write names and bands a letter or two a line (unreadable, and numbers folded)."""

    def __init__(self, section: Section) -> None:
        self.section = section

    def __rich_console__(self, console: Any, options: Any) -> Iterator[Any]:
        section = self.section
        if natural_width(section) <= options.max_width:
            yield section_table(section)
            return
        yield Text(visible(section.title), style="bold")
        for row in section.rows:
            yield Text(visible(row[0]), style="bold")
            for column, cell in zip(section.columns[1:], row[1:], strict=True):
                yield Text(f"  {visible(column)}: {visible(cell)}")
        for note in section.notes:
            yield Text(visible(note), style="dim")
        yield Text("")


def codebook_console(document: Mapping[str, Any]) -> Group:
    """The console report: the reliability table (stacked when the width cannot hold it), then
    each variable's report."""
    parts: list[Any] = [Text(visible(_heading(document)), style="bold")]
    parts += [Text(visible(line)) for line in bundle_lines(document)]
    parts.append(FittedTable(reliability_section(document)))
    common = common_warnings(document)
    if common:
        parts.append(Text(COMMON_TITLE, style="bold"))
        parts += [Text("warning: " + visible(readable(warning)), style="yellow") for warning in common]
        parts.append(Text(""))
    for variable, report in variable_reports(document).items():
        parts += [Text(f"Variable {variable}", style="bold reverse"), render_console(report)]
    return Group(*parts)


def codebook_text(document: Mapping[str, Any], width: int | None = 80) -> str:
    return plain_text(codebook_console(document), width)


def codebook_html(document: Mapping[str, Any]) -> str:
    """One self-contained page: the reliability table, then each variable's own report page in a
    sandboxed frame of its own (each page keeps its styles, its script and its policy)."""
    section = reliability_section(document)
    head = "".join(f"<th>{html.escape(column)}</th>" for column in section.columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>" for row in section.rows)
    notes = "".join(f"<p>{html.escape(note)}</p>" for note in section.notes)
    common = common_warnings(document)
    if common:
        items = "".join(f"<li>{html.escape(visible(readable(warning)))}</li>" for warning in common)
        notes += f"<h2>{html.escape(COMMON_TITLE)}</h2><ul>{items}</ul>"
    frames = "".join(
        f'<h2 id="variable-{html.escape(variable, quote=True)}">Variable {html.escape(variable)}</h2>'
        f'<iframe title="report of {html.escape(variable, quote=True)}" '
        f'srcdoc="{html.escape(render_html(report), quote=True)}" sandbox="allow-scripts"></iframe>'
        for variable, report in variable_reports(document).items()
    )
    title = html.escape(_heading(document))
    frozen = "".join(f'<p class="bundle">{html.escape(line)}</p>' for line in bundle_lines(document))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "frame-src 'self' about: data:; script-src 'unsafe-inline'\">"
        f"<title>{title}</title><style>body{{font-family:sans-serif;margin:2em}}"
        "table{border-collapse:collapse}td,th{border:1px solid #999;padding:.3em .6em;text-align:left}"
        "iframe{width:100%;height:900px;border:1px solid #ccc}</style></head><body>"
        f"<h1>{title}</h1>{frozen}<h2>{html.escape(section.title)}</h2>"
        f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{notes}{frames}</body></html>\n"
    )
