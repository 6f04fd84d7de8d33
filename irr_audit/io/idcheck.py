"""Comment ids that look damaged. They are never merged: a warning names them.

IDs are compared as text after trimming surrounding whitespace, and nothing
else: `007` and `7`, or an id in NFC and the same id in NFD, are different
units. When such near-twins appear, or an id looks like a number a spreadsheet
rewrote (`1.23457E+11`), the audit says so, so a person can decide.
"""

from __future__ import annotations

import unicodedata
from collections import defaultdict
from collections.abc import Callable

import pyarrow as pa
import pyarrow.compute as pc

from irr_audit.io.arrowtext import starts_with_any_byte

SCIENTIFIC = r"^[0-9](?:\.[0-9]+)?[eE][+-]?[0-9]+$"
INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"))
SHOWN = 5


def suspicious_id_warnings(unit_ids: pa.Array) -> list[str]:
    """Warnings for the (distinct) unit ids; the scans run in pyarrow, the rare hits in Python."""
    ids = pa.array(unit_ids, type=pa.string()) if not isinstance(unit_ids, pa.Array) else unit_ids
    warnings = []
    numeric = starts_with_any_byte(ids, b"0123456789")  # both number patterns start with a digit
    scientific = ids.filter(pc.match_substring_regex(ids, SCIENTIFIC)).to_pylist() if numeric else []
    if scientific:
        warnings.append(
            f"{len(scientific)} comment ids look like numbers a spreadsheet rewrote in scientific notation "
            f"({_listing(scientific)}); the real ids are lost. Re-export the sheet with the id column as text."
        )
    digits = ids.filter(pc.match_substring_regex(ids, r"^[0-9]+$")).to_pylist() if numeric else []
    warnings += _twins(digits, lambda text: text.lstrip("0"), "differ only by leading zeros, which a spreadsheet drops")
    non_ascii = ids.filter(pc.invert(pc.string_is_ascii(ids))).to_pylist()
    if non_ascii:
        normalised = {_plain(text) for text in non_ascii}
        candidates = non_ascii + ids.filter(pc.is_in(ids, value_set=pa.array(sorted(normalised)))).to_pylist()
        warnings += _twins(candidates, _plain, "differ only by Unicode normalisation or invisible characters")
    return warnings


def _plain(text: str) -> str:
    return unicodedata.normalize("NFKC", text).translate(INVISIBLE)


def _twins(ids: list[str], key: Callable[[str], str], why: str) -> list[str]:
    groups: dict[str, list[str]] = defaultdict(list)
    for text in dict.fromkeys(ids):
        groups[key(text)].append(text)
    twins = [" / ".join(map(repr, group)) for group in groups.values() if len(group) > 1]
    if not twins:
        return []
    shown = "; ".join(twins[:SHOWN]) + ("; ..." if len(twins) > SHOWN else "")
    return [f"{len(twins)} groups of comment ids {why}: {shown}. They are kept as different units."]


def _listing(ids: list[str]) -> str:
    return ", ".join(map(repr, ids[:SHOWN])) + (", ..." if len(ids) > SHOWN else "")
