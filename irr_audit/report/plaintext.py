"""The console report's content as lines and grids, and as plain text without rich.

:func:`console_blocks` is what the console report shows, in order; irr_audit/report/console.py
draws it with rich on a terminal, :func:`render_plain` writes it as the text rich writes for a
table of unlimited width (``report --format text`` or ``score`` into a pipe or a file), without
loading rich's console (a third of a small `score`'s start-up). The two agree byte for byte
(tests/test_startup.py compares them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.cells import cell_len

from irr_audit.io.display import visible
from irr_audit.report.comparison import extra_sections
from irr_audit.report.format import bundle_lines, missing_units, readable, sheet_coder
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

# (text, rich style): one piece of a line; the style is for the terminal only
Span = tuple[str, str]


@dataclass(frozen=True)
class Line:
    spans: tuple[Span, ...]

    @property
    def text(self) -> str:
        return "".join(text for text, _ in self.spans)


@dataclass(frozen=True)
class Grid:
    """A table: its headers, which columns are right-aligned, and its cells (text, style)."""

    headers: tuple[str, ...]
    right: tuple[bool, ...]
    rows: tuple[tuple[Span, ...], ...]


Block = Line | Grid


def line(text: str, style: str = "") -> Line:
    return Line(((text, style),))


def section_blocks(section: Section) -> list[Block]:
    """One section: its title, paragraphs, table and notes; every text from the sheets with its
    control characters shown as escapes. A section without rows draws no table."""
    section = without_empty_columns(section)
    paragraphs = [line(visible(paragraph)) for paragraph in section.paragraphs]
    notes = [line(visible(note), "dim") for note in section.notes]
    title = line(visible(section.title), "bold")
    if not section.rows:
        return [title, *paragraphs, *notes, line("")]
    right = tuple(
        position > 0 and numeric_column([row[position] for row in section.rows])
        for position in range(len(section.columns))
    )
    rows = tuple(
        tuple((visible(cell), "yellow" if cell.startswith("undefined") else "") for cell in row) for row in section.rows
    )
    grid = Grid(tuple(visible(column) for column in section.columns), right, rows)
    return [title, *paragraphs, grid, *notes, line("")]


def headline_lines(report: dict[str, Any]) -> list[Block]:
    """The answer first: the recommended coefficient with its interval, then the facts beside it."""
    answer, facts = headline_facts(report)
    lines: list[Block] = [line(visible(answer), "bold")]
    lines += [line(visible(f"{what}: {text}"), "yellow" if what == "warning" else "") for what, text in facts]
    return [*lines, line("")]


def provenance_lines(report: dict[str, Any]) -> list[Block]:
    """Where the numbers come from, at the end: the tool, the rule and its digest, every sheet's sha256."""
    rule = report["rule"]
    lines: list[Block] = [
        line("Provenance", "bold"),
        line(f"tool: irr-audit {visible(report['tool']['version'])}"),
        line(visible(f"rule: {rule['id']} version {rule['version']} ({rule['scale']} scale), digest {rule['digest']}")),
    ]
    lines += [
        line(visible(f"sheet {sheet['name']} ({sheet_coder(sheet)}, {sheet['rows']} rows): sha256 {sheet['sha256']}"))
        for sheet in report.get("sheets") or []
        if sheet.get("sha256")
    ]
    return [*lines, line("")]


def console_blocks(report: dict[str, Any]) -> list[list[Block]]:
    """The console report, part by part (each part a list of blocks)."""
    rule = report["rule"]
    units = report["units"]
    parts: list[list[Block]] = [
        [line(visible(f"problem: {problem['message']}"), "bold red"), line(visible(f"  fix: {problem['fix']}"), "red")]
        for problem in report.get("problems", [])
    ]
    parts.append(
        [
            Line(
                (
                    (f"{visible(rule['id'])} v{rule['version']}", "bold"),
                    (visible(f" ({rule['scale']}), coders: {', '.join(report['coders'])}"), ""),
                )
            )
        ]
    )
    frozen = bundle_lines(report)  # a bundle's report names it under the heading, as a codebook bundle's does
    if frozen:
        parts.append([line(visible(text)) for text in frozen])
    parts.append([line(f"{units['total']} units: {units['fully_coded']} fully coded, " + _missing_text(report))])
    by_reason = report["missingness"]["by_reason"]
    if by_reason:
        parts.append([line(visible("log rows: " + ", ".join(f"{n} {r}" for r, n in by_reason.items())), "dim")])
    for warning in report.get("warnings", []):
        if not warning.startswith("kappa paradox"):
            parts.append([line("warning: " + visible(readable(warning)), "yellow")])
    parts.append([line("")])
    parts.append(headline_lines(report))
    parts += [section_blocks(section) for section in answer_sections(report)]
    methods = Section("methods", "Methods paragraph (to paste)", (), (), paragraphs=(methods_paragraph(report),))
    parts.append(section_blocks(methods))
    details = [section for section in metric_sections(report) if section.key != "paradox"]
    parts += [section_blocks(section) for section in [*details, *extra_sections(report)]]
    adjudication = adjudication_section(report)
    if adjudication is not None:
        parts.append(section_blocks(adjudication))
    parts += [section_blocks(glossary_section()), provenance_lines(report)]
    return parts


def grid_lines(grid: Grid) -> list[str]:
    """The table as rich draws it with the SIMPLE_HEAD box, no padding at the edges and room for
    every cell: a blank top edge, the headers, a rule, the rows and a blank bottom edge."""
    widths = [
        max([cell_len(header)] + [cell_len(row[position][0]) for row in grid.rows])
        for position, header in enumerate(grid.headers)
    ]
    last = len(widths) - 1

    def drawn(cells: list[str]) -> str:
        padded = []
        for position, (text, width) in enumerate(zip(cells, widths, strict=True)):
            if grid.right[position]:  # rich strips a right-aligned cell's trailing spaces first
                text = text.rstrip()
                text = " " * (width - cell_len(text)) + text
            else:
                text += " " * (width - cell_len(text))
            padded.append((" " if position > 0 else "") + text + (" " if position < last else ""))
        return " " + " ".join(padded) + " "

    total = sum(widths) + 3 * last + 2
    rows = [drawn([text for text, _ in row]) for row in grid.rows]
    return [" " * total, drawn(list(grid.headers)), " " + "─" * (total - 2) + " ", *rows, " " * total]


def render_plain(report: dict[str, Any]) -> str:
    """The console report as plain text with no line wrapped: what rich writes at unlimited width,
    with the line ends :func:`clean_line_ends` makes."""
    out: list[str] = []
    for part in console_blocks(report):
        for block in part:
            out += grid_lines(block) if isinstance(block, Grid) else [block.text]
    return clean_line_ends("".join(text + "\n" for text in out))


def clean_line_ends(text: str) -> str:
    """``text`` with no space at the end of a line and one line feed at its end (none when empty).

    rich pads every line of a table (its blank edges too) to the table's width, and a report ends
    with a blank line: noise for whoever diffs the text or commits it (``git diff --check``). Only
    the spaces at a line's very end go, so the columns keep their alignment.

    >>> clean_line_ends(" a   b \\n       \\n c   d \\n\\n")
    ' a   b\\n\\n c   d\\n'
    """
    kept = "\n".join(line.rstrip(" ") for line in text.split("\n")).rstrip("\n")
    return kept + "\n" if kept else ""


def _missing_text(report: dict[str, Any]) -> str:
    """The units not fully coded, as far as the input says (no log from counts, no count from a table)."""
    label, value = missing_units(report)
    if label.endswith("(in the missingness log)"):
        return f"{value} in the missingness log (not counted as disagreements)"
    return f"{label}: {value}"
