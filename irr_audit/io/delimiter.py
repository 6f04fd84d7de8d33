"""Which delimiter a `.csv` file uses: `,` `;` tab or `|` (Excel writes `;` where the decimal
separator is a comma, much of Europe).

The rule (README, "Messy sheets"): the header line, split as CSV (quotes respected), must
give two or more fields with the delimiter. One candidate that does: it. None: `,` (a file
of one column). Several: those whose split of each of the next lines (up to SAMPLE_LINES,
quotes respected) gives no more fields than the header's; one left: it; still several:
the file is refused, naming them, and `--delimiter` chooses.
"""

from __future__ import annotations

import csv
import io

from irr_audit.errors import SheetError, UsageError
from irr_audit.io.csvfields import first_csv_row

CANDIDATES = (",", ";", "\t", "|")
ALIASES = {
    ",": ",",
    "comma": ",",
    ";": ";",
    "semicolon": ";",
    "\t": "\t",
    "\\t": "\t",
    "tab": "\t",
    "|": "|",
    "pipe": "|",
}
SAMPLE_LINES = 20
SAMPLE_BYTES = 1 << 20  # the header and first lines are looked for in the first MiB


def parse_delimiter(value: str | None) -> str | None:
    """--delimiter as given (`,` `;` `|` `tab` or `\\t`, or a name) -> the character, or None (detect)."""
    if value is None:
        return None
    if not isinstance(value, str):  # the Python API takes it as given
        raise UsageError(
            f"--delimiter {value!r} is a {type(value).__name__}, not one of , ; tab |.",
            hint="pass --delimiter ';' (delimiter=';' in Python; or comma, semicolon, tab, pipe).",
            code="usage-delimiter",
        )
    found = ALIASES.get(value.strip().lower() if value.strip() else value)
    if found is None:
        raise UsageError(
            f"--delimiter {value!r} is not one of , ; tab |.",
            hint="pass --delimiter ';' (or comma, semicolon, tab, pipe).",
            code="usage-delimiter",
        )
    return found


def shown(delimiter: str) -> str:
    """A delimiter as people name it: ``;`` (semicolon), ``tab``."""
    return "tab" if delimiter == "\t" else delimiter


def detect_delimiter(data: bytes | str, subject: str) -> str:
    """The delimiter of a `.csv` file's text (module docstring). Pure."""
    text = data[:SAMPLE_BYTES].decode("utf-8", errors="replace") if isinstance(data, bytes) else data[:SAMPLE_BYTES]
    lines = _first_lines(text.lstrip("\ufeff"), SAMPLE_LINES + 1)
    if not lines:
        return ","
    header, body = lines[0], lines[1:-1] if len(lines) > SAMPLE_LINES else lines[1:]  # the last may be cut
    widths = {candidate: _fields(header, candidate) for candidate in CANDIDATES}
    splitting = [candidate for candidate in CANDIDATES if widths[candidate] >= 2]
    if len(splitting) <= 1:
        return splitting[0] if splitting else ","
    fitting = [c for c in splitting if all(_fields(line, c) <= widths[c] for line in body)]
    if len(fitting) == 1:
        return fitting[0]
    named = " and ".join(f"{shown(c)!r} ({widths[c]} columns)" for c in fitting or splitting)
    raise SheetError(
        f"{subject}: its header splits into columns on {named}, so its delimiter is not clear.",
        hint="pass --delimiter with the one it uses, e.g. --delimiter ';'.",
        code="sheet-delimiter-unclear",
    )


def _first_lines(text: str, count: int) -> list[str]:
    """The first ``count`` non-blank lines of ``text`` (as ``str.splitlines`` splits it), from
    a growing head of it: a MiB of short lines is not split whole to find twenty-one. A line
    followed by another in the head is whole; only the head's last line may be cut."""
    head = 1 << 12
    while True:
        lines = [line for line in text[:head].splitlines() if line.strip()]
        if len(lines) > count or head >= len(text):
            return lines[:count]
        head *= 8


def suspected(header: str, line: str, used: str) -> str | None:
    """Another candidate that splits both the header and this line into the same number (two or
    more) of fields, when ``used`` does not: the delimiter the file more likely uses."""
    for candidate in CANDIDATES:
        if (
            candidate != used
            and _fields(header, candidate) >= 2
            and _fields(header, candidate) == _fields(line, candidate)
        ):
            return candidate
    return None


def _fields(line: str, delimiter: str) -> int:
    try:
        return len(first_csv_row(io.StringIO(line), delimiter=delimiter) or [])
    except csv.Error:
        return 0
