"""Why a typed code that looks like one of the rule's is not one: the missingness log's
``invalid`` detail says so, since the raw value shown beside it looks the same as the code.

Two causes are named: an invisible character (a zero-width space, a byte-order mark, a
direction mark: Unicode's format characters, which survive NFKC) and a letter of another
script in place of a Latin one (Cyrillic ``о`` for ``o``), the usual ways a code pasted from
a web page or a chat differs from what the coder sees."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from irr_audit.rules.model import CodeStatus, Rule


def lookalike_note(raw: str, rule: Rule) -> str:
    """The note to add to an invalid code's detail ('' when it looks like no code of the rule)."""
    invisible = sorted({character for character in raw if unicodedata.category(character) == "Cf"})
    if invisible:
        visible = "".join(character for character in raw if character not in invisible)
        reads = f"; without {'it' if len(invisible) == 1 else 'them'}, it reads {visible.strip()!r}"
        return f"; it holds an invisible character: {_names(invisible)}{reads if _accepted(visible, rule) else ''}"
    as_latin = raw.translate(AS_LATIN)
    if as_latin != raw and _accepted(as_latin, rule):
        return f"; it looks like {as_latin.strip()!r}, but holds {_names(c for c in raw if c in LOOKALIKE_LETTERS)}"
    return ""


def _accepted(typed: str, rule: Rule) -> bool:
    """Whether the rule takes ``typed``: a code, an alias of one or a missing code."""
    return rule.classify(typed)[0] in (CodeStatus.VALID, CodeStatus.UNKNOWN)


# Cyrillic and Greek letters drawn like Latin ones, each with the Latin letter it passes for:
# the common ones, not Unicode's whole confusables table.
LOOKALIKE_LETTERS = {
    **dict(zip("аеорсухіјѕԁһԛԝ", "aeopcyxijsdhqw")),  # Cyrillic small
    **dict(zip("АВЕКМНОРСТУХІЈЅ", "ABEKMHOPCTYXIJS")),  # Cyrillic capital
    **dict(zip("οινκρτ", "oivkpt")),  # Greek small
    **dict(zip("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧ", "ABEZHIKMNOPTYX")),  # Greek capital
}
AS_LATIN = str.maketrans(LOOKALIKE_LETTERS)


def _names(characters: Iterable[str]) -> str:
    return ", ".join(f"U+{ord(c):04X} {unicodedata.name(c, 'unnamed')}" for c in sorted(set(characters)))
