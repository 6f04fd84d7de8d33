"""The blank coding sheets, one per coder (docs/procedure.md, step 4): the same text,
context and rule version for every coder, as CSV or as XLSX with the allowed codes
offered in the code column. Coder names become file names, so they are checked.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterable, Sequence
from enum import Enum
from typing import Any

from irr_audit.errors import UsageError
from irr_audit.io.collector import quoted
from irr_audit.io.csvtables import rows_of, table_csv_columns
from irr_audit.io.outputs import Same, spreadsheet_safe
from irr_audit.rules.codebook import Codebook
from irr_audit.rules.model import Rule
from irr_audit.sample.ledger import LedgerUnit

# The context columns (post_id to body) are what every coder reads; join ignores them.
SHEET_COLUMNS = (
    "comment_id",
    "post_id",
    "url",
    "thread_title",
    "parent_body",
    "body",
    "code",
    "note",
    "rule",
    "rule_version",
    "allowed_codes",
    "coder",
)
CONTEXT_COLUMNS = SHEET_COLUMNS[: SHEET_COLUMNS.index("code")]
# A codebook's sheet: one column per variable (named after its rule id) in place of `code`.
CODEBOOK_TRAILING_COLUMNS = ("note", "codebook", "codebook_version", "coder")
CODER_NAME = re.compile(r"[^\W][\w.-]{0,99}")  # a sheet file name: at most 100 characters and .xlsx
RESERVED_CODERS = ("comment_id", "fully_coded")
# A fixed time for the workbook's metadata: the same sample gives the same bytes.
FIXED_TIMESTAMP = "2000-01-01T00:00:00Z"


class SheetFormat(str, Enum):
    CSV = "csv"
    XLSX = "xlsx"


def parse_coders(text: str) -> list[str]:
    """`alice,bob` -> ["alice", "bob"]; names become file names, so they are checked."""
    names = [name.strip() for name in text.split(",")]
    if any(not name for name in names) or len(names) < 2:
        raise UsageError(
            f"--coders needs two or more names separated by commas (got {quoted(text)}).",
            hint="for example --coders alice,bob.",
            code="usage-coders",
        )
    seen: dict[str, str] = {}
    for name in names:
        if not CODER_NAME.fullmatch(name) or name.casefold() in RESERVED_CODERS:
            raise UsageError(
                f"coder name {quoted(name)} cannot name a sheet file.",
                hint="use at most 100 letters, digits, '_', '-' and '.', starting with a letter or digit "
                "(and not comment_id or fully_coded).",
                code="usage-coders",
            )
        if name.casefold() in seen:
            raise UsageError(
                f"--coders names {seen[name.casefold()]!r} and {name!r}, the same coder on a "
                "case-insensitive file system.",
                hint="give every coder a distinct name.",
                code="usage-coders",
            )
        seen[name.casefold()] = name
    return names


def allowed_codes(rule: Rule) -> tuple[str, ...]:
    return (*rule.categories, *rule.missing_codes)


def sheet_data(units: Sequence[LedgerUnit], rule: Rule, coder: str) -> list[Sequence[str] | Same]:
    """A coder's sheet, column by column (SHEET_COLUMNS): one row per unit, the same text and
    context for every coder (the thread's title, the comment replied to, a link to the comment),
    an empty code and note, the rule and the allowed codes. Nothing from any other coder."""
    version = f"v{rule.version}"
    return [
        *_context_columns(units),
        Same(""),
        Same(""),
        Same(rule.id),
        Same(version),
        Same(" | ".join(allowed_codes(rule))),
        Same(coder),
    ]


def sheet_rows(units: Sequence[LedgerUnit], rule: Rule, coder: str) -> list[tuple[str, ...]]:
    """The rows of ``sheet_data`` (for a workbook)."""
    return _rows(sheet_data(units, rule, coder), len(units))


def codebook_sheet_columns(codebook: Codebook) -> tuple[str, ...]:
    return (*CONTEXT_COLUMNS, *codebook.rule_ids, *CODEBOOK_TRAILING_COLUMNS)


def codebook_sheet_data(units: Sequence[LedgerUnit], codebook: Codebook, coder: str) -> list[Sequence[str] | Same]:
    """A coder's codebook sheet, column by column, as ``sheet_data`` with an empty cell for
    every variable of the codebook."""
    version = f"v{codebook.version}"
    blanks = [Same("") for _ in codebook.rules]
    return [*_context_columns(units), *blanks, Same(""), Same(codebook.name), Same(version), Same(coder)]


def codebook_sheet_rows(units: Sequence[LedgerUnit], codebook: Codebook, coder: str) -> list[tuple[str, ...]]:
    """The rows of ``codebook_sheet_data`` (for a workbook)."""
    return _rows(codebook_sheet_data(units, codebook, coder), len(units))


def _context_columns(units: Sequence[LedgerUnit]) -> list[Sequence[str]]:
    """What every coder is shown of each unit: CONTEXT_COLUMNS."""
    fields = ("comment_id", "post_id", "link", "thread_title", "parent_body", "body")  # url: the comment's link
    return [[getattr(unit, field) for unit in units] for field in fields]


def _rows(columns: list[Sequence[str] | Same], length: int) -> list[tuple[str, ...]]:
    return [tuple(map(str, row)) for row in rows_of(columns, length)]


def check_csv_ids(ids: Iterable[str]) -> None:
    """A CSV cell that looks like a formula gets a leading quote, so such an id
    would not come back from a filled CSV sheet as it is in the ledger."""
    altered = [comment_id for comment_id in ids if spreadsheet_safe(comment_id) != comment_id]
    if altered:
        raise UsageError(
            f"comment id {quoted(altered[0])} starts like a spreadsheet formula; in a CSV sheet it would "
            f"be written with a leading quote and no longer match the ledger ({len(altered)} such ids).",
            hint="pass --sheet-format xlsx, which keeps every id as text exactly.",
            code="usage-csv-formula-id",
        )


# What an XLSX cell cannot keep exactly: C0 controls but tab and line feed (XML cannot hold
# them; openpyxl refuses them), a carriage return (XML reads it back as a line feed), and
# text like "_x001B_", which Excel shows as the character it escapes.
XLSX_ALTERS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\r\ufffe\uffff]|_x[0-9A-Fa-f]{4}_")


def check_xlsx_ids(ids: Iterable[str]) -> None:
    """An id an XLSX sheet would not give back exactly could not be matched to the ledger."""
    altered = [(comment_id, match) for comment_id in ids if (match := XLSX_ALTERS.search(comment_id)) is not None]
    if altered:
        first_id, first_match = altered[0]
        found = first_match.group()
        what = f"the character U+{ord(found):04X}" if len(found) == 1 else f"the text {found!r} (an XLSX escape)"
        raise UsageError(
            f"comment id {quoted(first_id)} holds {what}, which an XLSX sheet does not keep exactly, so the "
            f"filled sheet would no longer match the ledger ({len(altered)} such ids).",
            hint="pass --sheet-format csv, which keeps every character of an id.",
            code="usage-xlsx-id",
        )


def render_csv_sheet(columns: list[Sequence[str] | Same], length: int, header: Sequence[str] = SHEET_COLUMNS) -> bytes:
    """A CSV sheet of ``length`` rows from its columns (``sheet_data``, ``codebook_sheet_data``)."""
    # The byte-order mark makes Excel read UTF-8 (emoji, right-to-left text); read_sheet skips it.
    return ("\ufeff" + table_csv_columns(header, columns, length)).encode("utf-8")


def render_xlsx_sheet(rows: Sequence[Sequence[str]], rule: Rule) -> tuple[bytes, list[str]]:
    """The workbook's bytes, and the ids whose body had characters XLSX cannot hold.

    Every cell is stored as text: a body such as "=1+1" is shown, never run, and
    its text is kept exactly. A header note on the code column lists the allowed
    codes, and data validation offers them in the column.
    """
    return _render_xlsx(rows, SHEET_COLUMNS, [("code", rule, "rule.yaml")])


def render_codebook_xlsx_sheet(rows: Sequence[Sequence[str]], codebook: Codebook) -> tuple[bytes, list[str]]:
    """A codebook's sheet as render_xlsx_sheet writes a rule's: every variable's column with its
    own note (its codes, and when it applies) and its own drop-down of codes."""
    columns = [(rule.id, rule, f"rules/{rule.id}/v{rule.version}.yaml") for rule in codebook.rules]
    return _render_xlsx(rows, codebook_sheet_columns(codebook), columns)


def _render_xlsx(
    rows: Sequence[Sequence[str]], columns: Sequence[str], code_columns: Sequence[tuple[str, Rule, str]]
) -> tuple[bytes, list[str]]:
    """The workbook: ``code_columns`` are (column, its rule, the rule file in the sample folder)."""
    # openpyxl adds 0.06 s to every start: imported only when XLSX sheets are written
    from openpyxl import Workbook  # noqa: PLC0415
    from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE  # noqa: PLC0415
    from openpyxl.comments import Comment  # noqa: PLC0415
    from openpyxl.styles import Alignment, Font  # noqa: PLC0415
    from openpyxl.utils import get_column_letter  # noqa: PLC0415
    from openpyxl.worksheet.datavalidation import DataValidation  # noqa: PLC0415

    workbook = Workbook()
    sheet = workbook.worksheets[0]  # a new workbook's one sheet, the active one
    sheet.title = "coding"
    replaced: list[str] = []
    for column, name in enumerate(columns, start=1):
        sheet.cell(row=1, column=column, value=name).font = Font(bold=True)
    for row_number, row in enumerate(rows, start=2):
        for column, value in enumerate(row, start=1):
            text, count = ILLEGAL_CHARACTERS_RE.subn("\ufffd", value)
            if count and row[0] not in replaced:
                replaced.append(row[0])
            cell = sheet.cell(row=row_number, column=column)
            cell.value = text
            cell.data_type = "s"  # text, even when it starts with "="
    for position, (name, rule, rule_file) in enumerate(code_columns):
        code_column = list(columns).index(name) + 1
        code_letter = get_column_letter(code_column)
        codes = allowed_codes(rule)
        sheet.cell(row=1, column=code_column).comment = Comment(
            _code_note(rule, rule_file), "irr-audit", width=360, height=160
        )
        validation = DataValidation(
            type="list",
            formula1=_validation_list(workbook, rule, position + 1),
            allow_blank=True,
            showErrorMessage=True,
            errorTitle="Not an allowed code",
            error=f"Use one of: {', '.join(codes)}"[:255],
        )
        sheet.add_data_validation(validation)
        validation.add(f"{code_letter}2:{code_letter}{max(len(rows), 1) + 1}")
    sheet.freeze_panes = "B2"
    for name, width in (("thread_title", 40), ("parent_body", 60), ("body", 80)):
        letter = get_column_letter(list(columns).index(name) + 1)
        sheet.column_dimensions[letter].width = width
        for cell in sheet[letter][1:]:
            cell.alignment = Alignment(wrap_text=True, vertical="top")
    buffer = io.BytesIO()
    workbook.save(buffer)
    return _reproducible_zip(buffer.getvalue()), replaced


def _code_note(rule: Rule, rule_file: str = "rule.yaml") -> str:
    lines = [f"Rule {rule.label}. Allowed codes:"]
    lines += [f"{code.code}" + (f": {code.label}" if code.label else "") for code in rule.codes]
    lines += [f"{missing}: you cannot tell" for missing in rule.missing_codes]
    if rule.applies_when is not None:
        lines.append(
            f"Asked only when {rule.applies_when.rule} is {' or '.join(rule.applies_when.codes)}; "
            "otherwise leave it blank."
        )
    lines.append(f"The rule's definitions are in {rule_file} in the sample folder.")
    return "\n".join(lines)


def _validation_list(workbook: Any, rule: Rule, column: int = 1) -> str:
    """The codes offered in a code column: listed in the validation itself (Excel
    takes up to 255 characters, without commas or quotes), or else in column ``column``
    of a second worksheet, "codes" (one column per variable that needs it)."""
    # openpyxl adds 0.06 s to every start: imported only when XLSX sheets are written
    from openpyxl.utils import get_column_letter  # noqa: PLC0415

    codes = allowed_codes(rule)
    inline = ",".join(codes)
    if len(inline) <= 255 and not any("," in code or '"' in code for code in codes):
        return f'"{inline}"'
    codes_sheet = workbook["codes"] if "codes" in workbook.sheetnames else workbook.create_sheet("codes")
    for row, code in enumerate(codes, start=1):
        cell = codes_sheet.cell(row=row, column=column)
        cell.value = code
        cell.data_type = "s"
    letter = get_column_letter(column)
    return f"codes!${letter}$1:${letter}${len(codes)}"


def _reproducible_zip(data: bytes) -> bytes:
    """The same workbook gives the same bytes: fixed entry times and metadata, and
    no compression (zlib builds differ between machines)."""
    source = zipfile.ZipFile(io.BytesIO(data))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as target:
        for info in source.infolist():
            content = source.read(info.filename)
            if info.filename == "docProps/core.xml":
                content = re.sub(
                    rb"(<dcterms:(created|modified)[^>]*>)[^<]*", rb"\g<1>" + FIXED_TIMESTAMP.encode(), content
                )
            fixed = zipfile.ZipInfo(info.filename, date_time=(1980, 1, 1, 0, 0, 0))
            fixed.external_attr = 0o644 << 16
            target.writestr(fixed, content)
    return buffer.getvalue()
