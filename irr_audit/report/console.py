"""The audit for the terminal: rich tables that stay readable at 80 columns."""

from __future__ import annotations

import io
from typing import Any

from irr_audit.report.plaintext import (
    Block,
    Grid,
    Line,
    clean_line_ends,
    console_blocks,
    headline_lines,
    provenance_lines,
    section_blocks,
)
from irr_audit.report.richimport import Console, Group, Table, Text, box
from irr_audit.report.sections import Section


def _drawn(block: Block) -> Text | Table:
    """One block as rich draws it: a line of styled text, or a table that stays readable at 80 columns."""
    if isinstance(block, Line):
        if len(block.spans) == 1:
            text, style = block.spans[0]
            return Text(text, style=style)
        return Text.assemble(*block.spans)
    return _table(block)


def _table(grid: Grid) -> Table:
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for header, right in zip(grid.headers, grid.right, strict=True):
        # numbers and intervals stay whole; text wraps between words (a word longer than its column folds)
        table.add_column(Text(header), justify="right" if right else "left", overflow="fold", no_wrap=right)
    for row in grid.rows:
        table.add_row(*(Text(text, style=style) for text, style in row))
    return table


def section_table(section: Section) -> Group:
    """One section as a table (rich passes ESC sequences through to the terminal: the texts are escaped)."""
    return Group(*(_drawn(block) for block in section_blocks(section)))


def headline_block(report: dict[str, Any]) -> Group:
    """The answer first: the recommended coefficient with its interval, then the facts beside it."""
    return Group(*(_drawn(block) for block in headline_lines(report)))


def provenance_block(report: dict[str, Any]) -> Group:
    """Where the numbers come from, at the end: the tool, the rule and its digest, every sheet's sha256."""
    return Group(*(_drawn(block) for block in provenance_lines(report)))


def render_console(report: dict[str, Any]) -> Group:
    return Group(*(Group(*(_drawn(block) for block in part)) for part in console_blocks(report)))


def print_report(report: dict[str, Any], console: Console) -> None:
    console.print(render_console(report))


# No line is wrapped: wider than any report's line (a comment's text is one line of the report).
UNWRAPPED = 1_000_000


def render_text(report: dict[str, Any], width: int | None = 80) -> str:
    """The console report as plain text of ``width`` columns, or with no line wrapped (None:
    `report --format text` into a file or a pipe, where a reader or a script sees whole lines)."""
    return plain_text(render_console(report), width)


def plain_text(renderable: Any, width: int | None) -> str:
    """What rich draws of ``renderable`` in ``width`` columns (None: no line wrapped), as plain text
    with clean line ends (plaintext.clean_line_ends): every text report the library makes ends so."""
    console = Console(width=UNWRAPPED if width is None else width, record=True, file=io.StringIO())
    console.print(renderable)
    return clean_line_ends(console.export_text())
