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
from irr_audit.report.format import readable
from irr_audit.report.methods import methods_paragraph
from irr_audit.report.sections import (
    Section,
    adjudication_section,
    answer_sections,
    glossary_section,
    headline_facts,
    metric_sections,
    numeric_column,
    without_empty_columns,
)


def section_table(section: Section) -> Group:
    """One section as a table; every text from the sheets with its control characters shown as escapes
    (rich passes ESC sequences through to the terminal). A section without rows draws no table."""
    section = without_empty_columns(section)
    paragraphs = [Text(visible(paragraph)) for paragraph in section.paragraphs]
    notes = [Text(visible(note), style="dim") for note in section.notes]
    title = Text(visible(section.title), style="bold")
    if not section.rows:
        return Group(title, *paragraphs, *notes, Text(""))
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for position, column in enumerate(section.columns):
        right = position > 0 and numeric_column([row[position] for row in section.rows])
        # numbers and intervals stay whole; text wraps between words (a word longer than its column folds)
        table.add_column(Text(visible(column)), justify="right" if right else "left", overflow="fold", no_wrap=right)
    for row in section.rows:
        styled = [Text(visible(cell), style="yellow" if cell.startswith("undefined") else "") for cell in row]
        table.add_row(*styled)
    return Group(title, *paragraphs, table, *notes, Text(""))


def headline_block(report: dict[str, Any]) -> Group:
    """The answer first: the recommended coefficient with its interval, then the facts beside it."""
    answer, facts = headline_facts(report)
    lines = [Text(visible(answer), style="bold")]
    lines += [Text(visible(f"{what}: {text}"), style="yellow" if what == "warning" else "") for what, text in facts]
    return Group(*lines, Text(""))


def provenance_block(report: dict[str, Any]) -> Group:
    """Where the numbers come from, at the end: the tool, the rule and its digest, every sheet's sha256."""
    rule = report["rule"]
    lines = [
        Text("Provenance", style="bold"),
        Text(f"tool: irr-audit {visible(report['tool']['version'])}"),
        Text(visible(f"rule: {rule['id']} version {rule['version']} ({rule['scale']} scale), digest {rule['digest']}")),
    ]
    lines += [
        Text(visible(f"sheet {sheet['name']} ({sheet['coder']}, {sheet['rows']} rows): sha256 {sheet['sha256']}"))
        for sheet in report.get("sheets") or []
        if sheet.get("sha256")
    ]
    return Group(*lines, Text(""))


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
            parts.append(Text("warning: " + visible(readable(warning)), style="yellow"))
    parts.append(Text(""))
    parts.append(headline_block(report))
    parts += [section_table(section) for section in answer_sections(report)]
    methods = Section("methods", "Methods paragraph (to paste)", (), (), paragraphs=(methods_paragraph(report),))
    parts.append(section_table(methods))
    details = [section for section in metric_sections(report) if section.key != "paradox"]
    parts += [section_table(section) for section in [*details, *extra_sections(report)]]
    adjudication = adjudication_section(report)
    if adjudication is not None:
        parts.append(section_table(adjudication))
    parts += [section_table(glossary_section()), provenance_block(report)]
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
