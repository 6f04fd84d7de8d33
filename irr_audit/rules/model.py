"""A coding rule as the rest of irr-audit sees it: its codes, and how what a coder
typed is classified under it (valid, a missing code, blank or invalid).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from types import MappingProxyType
from typing import Any

from irr_audit.rules.scale import Scale


class CodeStatus(str, Enum):
    """What one (unit, coder) cell holds. All but VALID go to the missingness log."""

    VALID = "valid"
    UNKNOWN = "unknown"
    BLANK = "blank"
    INVALID = "invalid"
    ABSENT = "absent"
    CONFLICT = "conflict"


@dataclass(frozen=True)
class Code:
    code: str
    label: str | None = None
    definition: str | None = None
    value: float | None = None


@dataclass(frozen=True)
class AppliesWhen:
    """When a conditional rule applies: the rule ``rule`` (an earlier variable of the same
    codebook) was given one of ``codes``. Elsewhere its cell is not applicable
    (docs/statistics.md, "Conditional variables")."""

    rule: str
    codes: tuple[str, ...]


READ_ONLY_MAPPINGS = ("aliases", "examples", "run_aliases")


@dataclass(frozen=True)
class Rule:
    id: str
    version: int
    scale: Scale
    codes: tuple[Code, ...]
    question: str | None = None
    missing_codes: tuple[str, ...] = ()
    aliases: Mapping[str, str] = field(default_factory=dict)
    examples: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    changelog: Any = None
    digest: str = ""
    source_name: str = ""
    # The bytes the rule was parsed from (digest is their sha256): what a join folder and a
    # bundle keep, so the rule file is read once and never re-read after it was checked.
    source: bytes = field(default=b"", repr=False, compare=False)
    weights: str | tuple[tuple[float, ...], ...] | None = None  # a name of WEIGHT_NAMES or a K x K matrix
    # Aliases given for one run (--alias RAW=CODE), not in the rule file: recorded apart from it.
    run_aliases: Mapping[str, str] = field(default_factory=dict)
    # A conditional rule (``applies_when`` in its file); checked against its parent in a codebook.
    applies_when: AppliesWhen | None = None

    def __post_init__(self) -> None:
        # Read-only copies: how codes are classified is fixed with the digest, and a mapping the
        # caller passed in (or changes through rule.aliases) cannot change it later.
        for name in READ_ONLY_MAPPINGS:
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))

    def __hash__(self) -> int:
        # the generated hash would hash every field, and the read-only mappings cannot be hashed: a frozen
        # rule is a dict key or a set member. Equal rules have equal id, version and digest, so equal hashes.
        return hash((self.id, self.version, self.digest))

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, **{name: dict(getattr(self, name)) for name in READ_ONLY_MAPPINGS}}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.__post_init__()

    def __copy__(self) -> Rule:
        return self  # nothing in it can change

    def __deepcopy__(self, memo: dict[int, Any]) -> Rule:
        return self

    @property
    def categories(self) -> tuple[str, ...]:
        return tuple(code.code for code in self.codes)

    @property
    def values(self) -> tuple[float, ...] | None:
        values = [code.value for code in self.codes if code.value is not None]
        if len(values) < len(self.codes):
            return None
        return tuple(float(value) for value in values)

    @property
    def label(self) -> str:
        return f"{self.id} v{self.version}"

    def classify(self, raw: str) -> tuple[CodeStatus, str | None]:
        """What a coder typed -> (status, canonical code). Pure and total."""
        key = code_key(raw)
        if key == "":
            return CodeStatus.BLANK, None
        lookup = self._lookup
        if key in lookup:
            return lookup[key]
        return CodeStatus.INVALID, None

    @cached_property
    def _lookup(self) -> dict[str, tuple[CodeStatus, str | None]]:
        table: dict[str, tuple[CodeStatus, str | None]] = {}
        for code in self.codes:
            table[code_key(code.code)] = (CodeStatus.VALID, code.code)
        for missing in self.missing_codes:
            table[code_key(missing)] = (CodeStatus.UNKNOWN, None)
        for alias, target in self.aliases.items():
            table[code_key(alias)] = table[code_key(target)]
        for alias, target in self.run_aliases.items():
            table[code_key(alias)] = table[code_key(target)]
        return table

    def describe_codes(self) -> str:
        allowed = ", ".join(self.categories)
        missing = ", ".join(self.missing_codes)
        text = f"not among the {len(self.codes)} codes of {self.label} ({allowed})"
        return text + (f"; allowed as missing: {missing}" if missing else "")


def code_key(text: str) -> str:
    """The form codes are compared in: NFKC (full-width letters, no-break spaces
    become plain), surrounding whitespace trimmed, case folded."""
    return unicodedata.normalize("NFKC", text).strip().casefold()


AliasPair = tuple[str, str]  # (alias as written, the code it means)


def alias_clash(aliases: Iterable[AliasPair]) -> tuple[AliasPair, AliasPair] | None:
    """The first alias that means another code than an earlier one it equals once compared as
    typed values are (:func:`code_key`), with that earlier one; None when there is none. One
    typed value cannot mean two codes, and an alias given twice for one code is no clash."""
    first: dict[str, AliasPair] = {}
    for alias, code in aliases:
        earlier = first.setdefault(code_key(alias), (alias, code))
        if code_key(earlier[1]) != code_key(code):
            return earlier, (alias, code)
    return None
