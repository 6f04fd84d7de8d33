"""The audit as Markdown, for a pull request or a lab notebook. Byte-stable."""

from __future__ import annotations

from typing import Any

from irr_audit.report import format_interval, format_metric, metric_label


def md_text(text: object) -> str:
    """User text inside a Markdown table cell: no markup, no HTML, one line."""
    escaped = str(text).replace("\\", "\\\\")
    for char in "|`*_[]<>#":
        escaped = escaped.replace(char, "\\" + char)
    return " ".join(escaped.split()) or " "


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def agreement_table_lines(table: list[list[int]], categories: list[str], row_coder: str, col_coder: str) -> list[str]:
    header = [f"{md_text(row_coder)} \\\\ {md_text(col_coder)}", *map(md_text, categories), "total"]
    rows = [
        [md_text(category), *map(str, counts), str(sum(counts))]
        for category, counts in zip(categories, table)
    ]
    column_totals = [sum(column) for column in zip(*table)] if table else []
    rows.append(["total", *map(str, column_totals), str(sum(column_totals))])
    return _table(header, rows)


def metric_rows(metrics: dict[str, Any]) -> list[list[str]]:
    return [
        [metric_label(name), format_metric(metric), format_interval(metric)]
        for name, metric in metrics.items()
    ]


def render_markdown(report: dict[str, Any]) -> str:
    rule = report["rule"]
    lines = [
        f"# Inter-coder reliability audit: {md_text(rule['id'])} v{rule['version']}",
        "",
        "## Provenance",
        "",
        f"- Tool: irr-audit {report['tool']['version']}",
        f"- Rule: {md_text(rule['id'])} version {rule['version']} ({rule['scale']} scale)",
        f"- Rule digest: `{rule['digest']}`",
    ]
    if rule.get("question"):
        lines.append(f"- Question: {md_text(rule['question'])}")
    lines += ["", *_table(
        ["sheet", "coder", "rows", "sha256"],
        [[md_text(s["name"]), md_text(s["coder"]), str(s["rows"]), f"`{s['sha256']}`"] for s in report["sheets"]],
    )]
    units = report["units"]
    lines += [
        "",
        "## Units",
        "",
        *_table(
            ["units", "count"],
            [
                ["total", str(units["total"])],
                ["fully coded (in the agreement table)", str(units["fully_coded"])],
                ["not fully coded (in the missingness log)", str(units["missing"])],
            ],
        ),
        "",
        "Missing codes are not disagreements: units in the missingness log are left out of the table.",
    ]
    by_reason = report["missingness"]["by_reason"]
    if by_reason:
        lines += ["", *_table(["log reason", "rows"], [[md_text(r), str(n)] for r, n in by_reason.items()])]
    if report.get("warnings"):
        lines += ["", "## Warnings", "", *(f"- {md_text(warning)}" for warning in report["warnings"])]
    lines += _agreement_sections(report)
    lines += _disagreement_section(report)
    from irr_audit.adjudication import adjudication_lines  # after, and apart from, the independent statistics

    lines += adjudication_lines(report)
    return "\n".join(lines) + "\n"


def _agreement_sections(report: dict[str, Any]) -> list[str]:
    categories = report["categories"]
    lines: list[str] = []
    if report.get("table") is not None and len(report["coders"]) == 2:
        first, second = report["coders"]
        lines += ["", f"## Agreement table ({md_text(first)} rows, {md_text(second)} columns)", ""]
        lines += agreement_table_lines(report["table"], categories, first, second)
    if report.get("metrics"):
        lines += ["", "## Coefficients (fully coded units)", ""]
        lines += _table(["coefficient", "value", "95% CI"], metric_rows(report["metrics"]))
    if len(report["coders"]) > 2:
        lines += ["", "## Coder pairs", ""]
        for pair in report["pairs"]:
            first, second = pair["coders"]
            lines += [f"### {md_text(first)} and {md_text(second)} (n = {pair['n']})", ""]
            lines += agreement_table_lines(pair["table"], categories, first, second)
            lines += ["", *_table(["coefficient", "value", "95% CI"], metric_rows(pair["metrics"])), ""]
    return lines


def _disagreement_section(report: dict[str, Any]) -> list[str]:
    disagreements = report.get("disagreements")
    if disagreements is None:
        return []
    coders = report["coders"]
    lines = ["", f"## Disagreements for post-hoc review ({len(disagreements)})", ""]
    if not disagreements:
        return lines + ["No fully coded unit has differing codes."]
    rows = [[md_text(item["comment_id"]), *(md_text(item["codes"][c]) for c in coders)] for item in disagreements]
    return lines + _table(["comment_id", *map(md_text, coders)], rows)
