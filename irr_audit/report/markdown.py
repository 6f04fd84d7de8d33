"""The audit as Markdown, for a pull request or a lab notebook. Byte-stable."""

from __future__ import annotations

import re
from typing import Any

from irr_audit.io.display import shortened, visible
from irr_audit.report.comparison import extra_sections
from irr_audit.report.format import (
    LISTED_DISAGREEMENTS,
    format_metric,
    missing_units,
    readable,
    sheet_coder,
    unlisted_disagreements,
)
from irr_audit.report.methods import methods_paragraph
from irr_audit.report.sections import (
    Section,
    answer_sections,
    code_split,
    glossary_section,
    headline_facts,
    metric_sections,
    numeric_column,
    without_empty_columns,
)

# Every ASCII character that starts Markdown (CommonMark and GitHub's extensions) inside a line:
# code spans, emphasis and strikethrough, links and images, autolinks and raw HTML,
# entities, table cells, headings, math.
MARKUP = "\\`*_[]<>#|&~$"
_MARKUP = re.compile("([" + re.escape(MARKUP) + "])")
# GitHub's extended autolinks: a scheme before "//" and "www." (an escaped ":" or "." is not one).
_AUTOLINK = re.compile(r"(:)(?=//)|(?<=www)(\.)", re.IGNORECASE)
# The white space that Markdown itself folds; any other is shown as an escape or kept as it is.
_SPACING = re.compile(r"[ \t\r\n]+")
# What would open a list or a thematic break at the start of the text (inside "- ..." it would nest).
_BLOCK_START = re.compile(r"^([-+])(?= |-|$)|^(\d{1,9})([.)])(?= |$)")


def md_text(text: object) -> str:
    """User text inside Markdown: one line, no markup, no HTML, no link, no control character.

    Every character that could start Markdown is backslash-escaped, so the text shows
    exactly as written; spaces, tabs and line breaks become single spaces, and every
    other control character or separator its visible escape (display.visible).

    >>> md_text("[x](javascript:alert(1)) <b>|*em*|")
    '\\\\[x\\\\](javascript:alert(1)) \\\\<b\\\\>\\\\|\\\\*em\\\\*\\\\|'
    """
    flat = visible(_SPACING.sub(" ", str(text)).strip(" "))
    escaped = _MARKUP.sub(r"\\\1", flat)
    escaped = _AUTOLINK.sub(lambda match: "\\" + match.group(), escaped)
    escaped = _BLOCK_START.sub(
        lambda match: f"\\{match.group(1)}" if match.group(1) else f"{match.group(2)}\\{match.group(3)}", escaped
    )
    return escaped or " "


def md_digest(text: object) -> str:
    """A digest in a code span; anything that is not a plain digest is written as user text."""
    value = str(text)
    return f"`{value}`" if re.fullmatch(r"(sha256:)?[0-9a-f]{1,128}", value) else md_text(value)


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table; every column of numbers after the first is right-aligned."""
    aligned = [at > 0 and numeric_column([row[at] for row in rows if at < len(row)]) for at in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---:" if right else "---" for right in aligned) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def agreement_table_lines(table: list[list[int]], categories: list[str], row_coder: str, col_coder: str) -> list[str]:
    header = [f"{md_text(row_coder)} \\\\ {md_text(col_coder)}", *map(md_text, categories), "total"]
    rows = [[md_text(category), *map(str, counts), str(sum(counts))] for category, counts in zip(categories, table)]
    column_totals = [sum(column) for column in zip(*table)] if table else []
    rows.append(["total", *map(str, column_totals), str(sum(column_totals))])
    return _table(header, rows)


def section_lines(section: Section) -> list[str]:
    """A section: its title, any running text, the table (only with rows) and the notes."""
    section = without_empty_columns(section)
    blocks = [[f"## {md_text(section.title)}"], *([md_text(paragraph)] for paragraph in section.paragraphs)]
    if section.rows:
        blocks.append(
            _table(
                [md_text(column) if column else " " for column in section.columns],
                [[md_text(cell) for cell in row] for row in section.rows],
            )
        )
    if section.notes:
        blocks.append([f"- {md_text(note)}" for note in section.notes])
    # one blank line before each block, whichever of them the section has
    return [line for block in blocks for line in ("", *block)]


def problem_box(report: dict[str, Any]) -> list[str]:
    """The report's problems as a quoted box under the title (none: no lines)."""
    lines = []
    for problem in report.get("problems", []):
        lines += ["", f"> **Problem:** {md_text(problem['message'])}", ">", f"> **Fix:** {md_text(problem['fix'])}"]
    return lines


def headline_lines(report: dict[str, Any]) -> list[str]:
    """The answer first: the recommended coefficient with its interval, and the facts beside it."""
    answer, facts = headline_facts(report)
    lines = ["", "## Headline", "", f"### {md_text(answer)}", ""]
    lines += [f"- {md_text(what.capitalize())}: {md_text(text)}" for what, text in facts]
    return lines


def render_markdown(report: dict[str, Any]) -> str:
    """The answer first (headline, coefficient table, the paradox explained, the methods paragraph),
    then the units and the details, the disagreements and adjudication, and the provenance last."""
    rule = report["rule"]
    lines = [
        f"# Inter-coder reliability audit: {md_text(rule['id'])} v{md_text(rule['version'])}",
        *problem_box(report),
        *headline_lines(report),
    ]
    for section in answer_sections(report):
        lines += section_lines(section)
    lines += ["", "## Methods paragraph (to paste)", "", md_text(methods_paragraph(report))]
    other_warnings = [readable(w) for w in report.get("warnings", []) if not w.startswith("kappa paradox")]
    if other_warnings:
        lines += ["", "## Warnings", "", *(f"- {md_text(warning)}" for warning in other_warnings)]
    lines += _unit_lines(report)
    details = [section for section in metric_sections(report) if section.key != "paradox"]
    for section in [*details, *extra_sections(report)]:
        lines += section_lines(section)
    lines += _pair_lines(report)
    lines += _disagreement_section(report)
    lines += adjudication_lines(report)  # after, and apart from, the independent statistics
    lines += section_lines(glossary_section())
    lines += provenance_lines(report)
    return "\n".join(lines) + "\n"


def provenance_lines(report: dict[str, Any]) -> list[str]:
    """Where the numbers come from: the tool, the rule and its digest, every sheet and its sha256."""
    rule = report["rule"]
    lines = [
        "",
        "## Provenance",
        "",
        f"- Tool: irr-audit {md_text(report['tool']['version'])}",
        f"- Rule: {md_text(rule['id'])} version {md_text(rule['version'])} ({md_text(rule['scale'])} scale)",
        f"- Rule digest: {md_digest(rule['digest'])}",
    ]
    if rule.get("question"):
        lines.append(f"- Question: {md_text(rule['question'])}")
    if rule.get("run_aliases"):
        aliases = ", ".join(f"{raw}={code}" for raw, code in rule["run_aliases"].items())
        lines.append(f"- Aliases of this run (--alias): {md_text(aliases)}")
    if report["sheets"]:
        lines += [
            "",
            *_table(
                ["sheet", "coder", "rows", "sha256"],
                [
                    [md_text(s["name"]), md_text(sheet_coder(s)), md_text(s["rows"]), md_digest(s["sha256"])]
                    for s in report["sheets"]
                ],
            ),
        ]
    return lines


def _unit_lines(report: dict[str, Any]) -> list[str]:
    units = report["units"]
    lines = [
        "",
        "## Units",
        "",
        *_table(
            ["units", "count"],
            [
                ["total", str(units["total"])],
                ["fully coded (in the agreement table)", str(units["fully_coded"])],
                list(missing_units(report)),
            ],
        ),
    ]
    if report["missingness"].get("log_rows") is not None:
        lines += ["", "Missing codes are not disagreements: units in the missingness log are left out of the table."]
    by_reason = report["missingness"]["by_reason"]
    if by_reason:
        lines += ["", *_table(["log reason", "rows"], [[md_text(r), str(n)] for r, n in by_reason.items()])]
    return lines


def _pair_lines(report: dict[str, Any]) -> list[str]:
    # a count matrix has three or more coders and no pairs: it does not say who gave which code
    if len(report["coders"]) <= 2 or not report.get("pairs"):
        return []
    categories = report["categories"]
    lines = ["", "## Coder pairs"]
    for pair in report["pairs"]:  # each block opens with its blank line, as every section does
        first, second = pair["coders"]
        kappa = pair["metrics"].get("cohen_kappa", {})
        lines += ["", f"### {md_text(first)} and {md_text(second)} (n = {pair['n']})", ""]
        lines += agreement_table_lines(pair["table"], categories, first, second)
        lines += ["", f"Cohen's kappa: {md_text(format_metric(kappa))}"]
    return lines


def _disagreement_section(report: dict[str, Any]) -> list[str]:
    disagreements = report.get("disagreements")
    unlisted = unlisted_disagreements(report)
    if disagreements is None and unlisted:  # from counts or a table: counted, but no unit to list
        return ["", f"## Disagreements for post-hoc review ({report['disagreement_count']})", "", md_text(unlisted)]
    if disagreements is None:
        return []
    coders = report["coders"]
    lines = ["", f"## Disagreements for post-hoc review ({len(disagreements)})", ""]
    if not disagreements:
        return lines + ["No fully coded unit has differing codes."]
    if len(disagreements) > LISTED_DISAGREEMENTS:
        lines += [
            f"The first {LISTED_DISAGREEMENTS} are listed; the JSON report (--format json) lists all "
            f"{len(disagreements)}.",
            "",
        ]
        disagreements = disagreements[:LISTED_DISAGREEMENTS]
    with_text = any(item.get("text") for item in disagreements)
    with_link = any(item.get("link") for item in disagreements)  # a sampled join: the ledger's links
    split = len(coders) > 2  # with three or more coders, how they split: "4 yes - 1 no"
    rows = [
        [
            md_text(item["comment_id"]),
            *(md_text(item["codes"][c]) for c in coders),
            *([md_text(code_split(item["codes"], report["categories"]))] if split else []),
            *([md_text(shortened(item.get("text") or "", 160, ellipsis="\u2026"))] if with_text else []),
            *([md_text(item.get("link") or "")] if with_link else []),
        ]
        for item in disagreements
    ]
    header = [
        "comment_id",
        *map(md_text, coders),
        *(["split"] if split else []),
        *(["text"] if with_text else []),
        *(["link"] if with_link else []),
    ]
    return lines + _table(header, rows)


def adjudication_lines(report: dict[str, Any]) -> list[str]:
    """Markdown for the bundle and adjudication sections; nothing for other reports. Every value
    comes from files a user can write (the manifest, the records), so every one is escaped."""
    lines: list[str] = []
    bundle = report.get("bundle")
    if bundle:
        lines += [
            "",
            "## Audit bundle",
            "",
            f"- Bundle: {md_text(bundle['name'])}, "
            f"frozen {md_text(bundle['created'])} with irr-audit {md_text(bundle['tool_version'])}",
        ]
        if bundle.get("digest"):
            lines.append(f"- Bundle digest: {md_digest(bundle['digest'])} (the sha256 of its manifest.json)")
        if bundle.get("recodes"):
            recodes = bundle["recodes"]
            lines.append(f"- Re-coded sample: the units of bundle {md_text(recodes['bundle'])}, coded again")
        if bundle.get("sample"):
            lines.append(f"- Sample ledger and missingness log: {len(bundle['sample']['files'])} files under sample/")
    section = report.get("adjudication")
    if section is None:
        return lines
    lines += [
        "",
        f"## {md_text(section['title'])}",
        "",
        md_text(section["statement"]),
        "",
        f"{section['decided']} of {section['disagreements']} disagreements decided.",
    ]
    coders = report["coders"]
    if section["decisions"]:
        header = ["comment_id", *map(md_text, coders), "final code", "decided by", "decided at", "note"]
        lines += ["", "| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        for item in section["decisions"]:
            independent = (md_text(item["codes"].get(coder, "")) for coder in coders)
            cells = [
                md_text(item["comment_id"]),
                *independent,
                md_text(item["final_code"]),
                md_text(item["decided_by"]),
                md_text(item["decided_at"]),
                md_text(item["note"]),
            ]
            lines.append("| " + " | ".join(cells) + " |")
    if section["undecided"]:
        lines += ["", "Not yet decided: " + ", ".join(md_text(unit) for unit in section["undecided"]) + "."]
    return lines
