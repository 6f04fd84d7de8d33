"""The audit for the terminal: rich tables that stay readable at 80 columns."""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from irr_audit.report import format_interval, format_metric, metric_label


def agreement_table(table: list[list[int]], categories: list[str], row_coder: str, col_coder: str) -> Table:
    view = Table(title=f"{escape(row_coder)} (rows) x {escape(col_coder)} (columns)", title_justify="left")
    view.add_column("", style="bold")
    for category in categories:
        view.add_column(escape(category), justify="right")
    view.add_column("total", justify="right", style="dim")
    for category, counts in zip(categories, table):
        view.add_row(escape(category), *map(str, counts), str(sum(counts)))
    totals = [sum(column) for column in zip(*table)]
    view.add_row("total", *map(str, totals), str(sum(totals)), style="dim")
    return view


def metrics_table(metrics: dict[str, Any], title: str) -> Table:
    view = Table(title=title, title_justify="left")
    view.add_column("coefficient")
    view.add_column("value", justify="right", overflow="fold")
    view.add_column("95% CI", justify="right")
    for name, metric in metrics.items():
        value = format_metric(metric)
        style = None if metric.get("defined") else "yellow"
        view.add_row(metric_label(name), Text(value, style=style or ""), format_interval(metric))
    return view


def render_console(report: dict[str, Any]) -> Group:
    rule = report["rule"]
    units = report["units"]
    parts: list[Any] = [
        Text.from_markup(
            f"[bold]{escape(rule['id'])} v{rule['version']}[/] ({rule['scale']}), "
            f"coders: {escape(', '.join(report['coders']))}"
        ),
        Text(
            f"{units['total']} units: {units['fully_coded']} fully coded, "
            f"{units['missing']} in the missingness log (not counted as disagreements)"
        ),
    ]
    by_reason = report["missingness"]["by_reason"]
    if by_reason:
        parts.append(Text("log rows: " + ", ".join(f"{n} {r}" for r, n in by_reason.items()), style="dim"))
    for warning in report.get("warnings", []):
        parts.append(Text("warning: " + warning, style="yellow"))
    categories = report["categories"]
    if report.get("table") is not None and len(report["coders"]) == 2:
        parts.append(agreement_table(report["table"], categories, *report["coders"]))
    if report.get("metrics"):
        parts.append(metrics_table(report["metrics"], "Agreement on fully coded units"))
    if len(report["coders"]) > 2:
        for pair in report["pairs"]:
            first, second = pair["coders"]
            parts.append(agreement_table(pair["table"], categories, first, second))
            parts.append(metrics_table(pair["metrics"], f"{escape(first)} and {escape(second)} (n = {pair['n']})"))
    return Group(*parts)


def print_report(report: dict[str, Any], console: Console) -> None:
    console.print(render_console(report))
