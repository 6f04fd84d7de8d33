"""The audit for the terminal: rich tables that stay readable at 80 columns."""

from __future__ import annotations

import io
from typing import Any

from rich import box
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from irr_audit.io.display import visible
from irr_audit.report.comparison import extra_sections
from irr_audit.report.sections import Section, adjudication_section, metric_sections


def section_table(section: Section) -> Group:
    """One section as a table; every text from the sheets with its control characters shown as escapes
    (rich passes ESC sequences through to the terminal)."""
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for position, column in enumerate(section.columns):
        table.add_column(Text(visible(column)), justify="left" if position == 0 else "right", overflow="fold")
    for row in section.rows:
        styled = [Text(visible(cell), style="yellow" if cell.startswith("undefined") else "") for cell in row]
        table.add_row(*styled)
    notes = [Text(visible(note), style="dim") for note in section.notes]
    return Group(Text(visible(section.title), style="bold"), table, *notes, Text(""))


def render_console(report: dict[str, Any]) -> Group:
    rule = report["rule"]
    units = report["units"]
    parts: list[Any] = [
        Text(visible(f"problem: {problem['message']}\n  fix: {problem['fix']}"), style="bold red")
        for problem in report.get("problems", [])
    ]
    parts += [
        Text.assemble(
            (f"{visible(rule['id'])} v{rule['version']}", "bold"),
            visible(f" ({rule['scale']}), coders: {', '.join(report['coders'])}"),
        ),
        Text(
            f"{units['total']} units: {units['fully_coded']} fully coded, "
            f"{units['missing']} in the missingness log (not counted as disagreements)"
        ),
    ]
    by_reason = report["missingness"]["by_reason"]
    if by_reason:
        parts.append(Text(visible("log rows: " + ", ".join(f"{n} {r}" for r, n in by_reason.items())), style="dim"))
    for warning in report.get("warnings", []):
        if not warning.startswith("kappa paradox"):
            parts.append(Text("warning: " + visible(warning), style="yellow"))
    parts.append(Text(""))
    parts += [section_table(section) for section in [*metric_sections(report), *extra_sections(report)]]
    adjudication = adjudication_section(report)
    if adjudication is not None:
        parts.append(section_table(adjudication))
    return Group(*parts)


def print_report(report: dict[str, Any], console: Console) -> None:
    console.print(render_console(report))


# No line is wrapped: wider than any report's line (a comment's text is one line of the report).
UNWRAPPED = 1_000_000


def render_text(report: dict[str, Any], width: int | None = 80) -> str:
    """The console report as plain text of ``width`` columns, or with no line wrapped (None:
    `report --format text` into a file or a pipe, where a reader or a script sees whole lines)."""
    console = Console(width=UNWRAPPED if width is None else width, record=True, file=io.StringIO())
    console.print(render_console(report))
    return console.export_text()
