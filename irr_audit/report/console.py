"""The audit for the terminal: rich tables that stay readable at 80 columns."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console, Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from irr_audit.report.sections import Section, adjudication_section, metric_sections


def section_table(section: Section) -> Group:
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for position, column in enumerate(section.columns):
        table.add_column(escape(column), justify="left" if position == 0 else "right", overflow="fold")
    for row in section.rows:
        styled = [Text(cell, style="yellow" if cell.startswith("undefined") else "") for cell in row]
        table.add_row(*styled)
    notes = [Text(note, style="dim") for note in section.notes]
    return Group(Text(section.title, style="bold"), table, *notes, Text(""))


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
        if not warning.startswith("kappa paradox"):
            parts.append(Text("warning: " + warning, style="yellow"))
    parts.append(Text(""))
    parts += [section_table(section) for section in metric_sections(report)]
    adjudication = adjudication_section(report)
    if adjudication is not None:
        parts.append(section_table(adjudication))
    return Group(*parts)


def print_report(report: dict[str, Any], console: Console) -> None:
    console.print(render_console(report))
