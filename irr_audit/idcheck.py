"""Comment ids that look damaged. They are never merged: a warning names them.

IDs are compared as text after trimming surrounding whitespace, and nothing
else: `007` and `7`, or an id in NFC and the same id in NFD, are different
units. When such near-twins appear, or an id looks like a number a spreadsheet
rewrote (`1.23457E+11`), the audit says so, so a person can decide.
"""

from __future__ import annotations

import unicodedata

import pandas as pd

SCIENTIFIC = r"^[0-9](?:\.[0-9]+)?[eE][+-]?[0-9]+$"
INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"))
SHOWN = 5


def suspicious_id_warnings(unit_ids: pd.Series) -> list[str]:
    ids = pd.Series(unit_ids, dtype=object).astype(str)
    warnings = []
    scientific = ids[ids.str.fullmatch(SCIENTIFIC)]
    if len(scientific):
        warnings.append(
            f"{len(scientific)} comment ids look like numbers a spreadsheet rewrote in scientific notation "
            f"({_listing(scientific)}); the real ids are lost. Re-export the sheet with the id column as text."
        )
    digits = ids[ids.str.fullmatch(r"[0-9]+")]
    warnings += _twins(digits, digits.str.lstrip("0"), "differ only by leading zeros, which a spreadsheet drops")
    non_ascii = ids[~ids.map(str.isascii)] if len(ids) else ids
    if len(non_ascii):
        normalised = non_ascii.map(lambda text: unicodedata.normalize("NFKC", text).translate(INVISIBLE))
        candidates = pd.concat([non_ascii, ids[ids.isin(set(normalised))]])
        keys = candidates.map(lambda text: unicodedata.normalize("NFKC", text).translate(INVISIBLE))
        warnings += _twins(candidates, keys, "differ only by Unicode normalisation or invisible characters")
    return warnings


def _twins(ids: pd.Series, keys: pd.Series, why: str) -> list[str]:
    if ids.empty:
        return []
    frame = pd.DataFrame({"id": ids.to_numpy(), "key": keys.to_numpy()}).drop_duplicates("id")
    counts = frame.groupby("key")["id"].transform("size")
    twins = frame[counts > 1]
    if twins.empty:
        return []
    groups = twins.groupby("key", sort=False)["id"].apply(lambda group: " / ".join(map(repr, group)))
    shown = "; ".join(groups.iloc[:SHOWN]) + ("; ..." if len(groups) > SHOWN else "")
    return [f"{len(groups)} groups of comment ids {why}: {shown}. They are kept as different units."]


def _listing(ids: pd.Series) -> str:
    return ", ".join(map(repr, ids.iloc[:SHOWN])) + (", ..." if len(ids) > SHOWN else "")
