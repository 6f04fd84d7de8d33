"""The coding rule file: load it safely, validate it, and classify what coders typed.

A rule is YAML (docs/contract.md, "Rule files"). It is read with a safe loader that
also refuses what a rule never needs and an attacker might send: aliases (the
"billion laughs"), duplicate keys (which YAML would resolve as last-one-wins),
and the YAML 1.1 booleans, so that a code written `yes` stays the string "yes".
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from yaml.constructor import SafeConstructor
from yaml.representer import SafeRepresenter
from yaml.resolver import Resolver

from irr_audit.errors import RuleError, UsageError
from irr_audit.io.display import CONTROL, shortened, visible
from irr_audit.io.encodings import refuse_foreign_mark
from irr_audit.io.files import check_name, read_bounded
from irr_audit.io.limits import DEFAULT_LIMITS, Limits, limit_error
from irr_audit.rules.model import AppliesWhen, Code, Rule, alias_clash, code_key
from irr_audit.rules.scale import Scale, value_problem
from irr_audit.rules.weights import WEIGHT_NAMES, named_weights_problem, weights_problem

MAX_RULE_BYTES = DEFAULT_LIMITS.rule_bytes
NUMBER_TAGS = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")
RULE_ID_PATTERN = re.compile(r"[a-z0-9_]+")
# A rule id and version name folders and files (rules/<rule>/v<version>.yaml, bundles named
# <time>_<rule>_v<version>), which file systems cap at 255 bytes a name.
MAX_RULE_ID = 100
MAX_VERSION = 999_999
KNOWN_KEYS = (
    "rule",
    "version",
    "question",
    "scale",
    "codes",
    "missing_codes",
    "aliases",
    "examples",
    "changelog",
    "weights",
    "applies_when",
)
EXAMPLE_KINDS = ("positive", "negative", "ambiguous")


# --- safe YAML ------------------------------------------------------------


class _Exceeded(Exception):
    """A limit reached while composing, before any object is built."""

    def __init__(self, name: str, found: str):
        super().__init__(name)
        self.name, self.found = name, found


class _RuleLoader(yaml.SafeLoader):
    """SafeLoader without aliases, duplicate keys or YAML 1.1 booleans (yes/no/on/off),
    within the limits of nesting depth and digits of a number.

    The composer builds the node tree depth-first from the event stream, one call per
    level; counting the levels there stops a deep document at the limit, long before
    Python's recursion limit, and before anything is constructed from it."""

    limits: Limits = DEFAULT_LIMITS
    _depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.constructor.ConstructorError(
                None, None, "aliases (*name) are not allowed in rule files", event.start_mark
            )
        if self._depth >= self.limits.depth:
            raise _Exceeded("depth", f"nests deeper than {self.limits.depth} levels at {_mark(self.peek_event())}")
        self._depth += 1
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        if node is not None and node.tag in NUMBER_TAGS:
            digits = sum(character.isdigit() for character in node.value)
            if digits > self.limits.number_digits:
                raise _Exceeded("number_digits", f"has a number of {digits:,} digits at {_mark(node)}")
        return node

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, (str, int, float, bool, type(None))):
                raise yaml.constructor.ConstructorError(
                    None, None, "a mapping key must be plain text or a number", key_node.start_mark
                )
            if key in seen:
                raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


# pyyaml's own safe registries, not yaml.SafeLoader's: other code in the process may add to those
# (yaml.add_constructor(..., Loader=yaml.SafeLoader)), and a rule must read the same in any process.
_RuleLoader.yaml_constructors = dict(SafeConstructor.yaml_constructors)
_RuleLoader.yaml_multi_constructors = dict(SafeConstructor.yaml_multi_constructors)
_RuleLoader.yaml_path_resolvers = {}
_RuleLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in Resolver.yaml_implicit_resolvers.items()
}
_RuleLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool",
    re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    list("tTfF"),
)


def _construct_mapping(loader: _RuleLoader, node: yaml.MappingNode) -> dict[Hashable, Any]:
    return loader.construct_mapping(node)


_RuleLoader.add_constructor("tag:yaml.org,2002:map", _construct_mapping)


def _mark(event_or_node: Any) -> str:
    mark = event_or_node.start_mark
    return f"line {mark.line + 1}, column {mark.column + 1}"


def parse_yaml(data: bytes, name: str, limits: Limits = DEFAULT_LIMITS, kind: str = "rule") -> Any:
    """The YAML document of a rule (or, ``kind="codebook"``, a codebook) file, within the limits."""
    loader = None
    try:
        loader = _RuleLoader(data)  # (the reader checks the characters here already)
        loader.limits = limits
        return loader.get_single_data()
    except _Exceeded as exceeded:
        why = f"A {kind} file nests a few levels." if exceeded.name == "depth" else ""
        raise limit_error(exceeded.name, limits, name, exceeded.found, why=why) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise RuleError(
            f"{name} is not a valid {kind} file: malformed YAML{where}: {problem}.",
            hint="fix the YAML at that line (a YAML linter shows it too).",
            code=f"{kind}-yaml",
        ) from None
    finally:
        if loader is not None:
            loader.dispose()


# --- validation -------------------------------------------------------------


def rule_of(source: object, limits: Limits = DEFAULT_LIMITS) -> Rule:
    """The rule every function of the library takes: a Rule as it is, a mapping with the keys of
    a rule file (validated as the file would be), or a rule file's path; anything else refused by name."""
    if isinstance(source, Rule):
        return source
    if isinstance(source, Mapping):
        return rule_from_mapping(source, limits)
    if isinstance(source, (str, os.PathLike)):
        return load_rule(Path(source), limits)
    raise UsageError(
        f"a rule is a path to a rule file, a mapping or a Rule, not a {type(source).__name__}.",
        hint="pass rules/<rule>/v<version>.yaml, a dict with the keys rule, version, scale and codes, "
        "or irr_audit.load_rule(...).",
        code="data-form",
    )


def load_rule(path: str | Path, limits: Limits = DEFAULT_LIMITS) -> Rule:
    """Read and validate a rule file."""
    rule_path = Path(path)
    check_name(rule_path, "rule file")
    data = read_bounded(
        rule_path,
        f"rule file {rule_path}",
        limits,
        "rule_bytes",
        code="rule",
        missing_hint="pass --rule rules/<rule>/v<version>.yaml.",
    )
    return parse_rule(data, str(rule_path), limits)


def parse_rule(data: bytes, name: str, limits: Limits = DEFAULT_LIMITS) -> Rule:
    """Validate rule-file bytes. Pure: ``name`` is only used in messages."""
    refuse_foreign_mark(data, name, code="rule-encoding", error=RuleError)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RuleError(
            f"{name} is not UTF-8 (byte {exc.start} cannot be decoded).",
            hint="save the rule file as UTF-8.",
            code="rule-encoding",
        ) from None
    document = parse_yaml(data, name, limits)
    if not isinstance(document, dict):
        raise _invalid(
            name,
            "(top level)",
            "must be a mapping of keys such as rule, version, codes",
            hint="check that this is a rule file (rules/<rule>/v<version>.yaml), with the keys rule, version, "
            'scale and codes (README, "Rule files").',
        )
    _check_keys(document, name)
    rule_id = _rule_id(document, name)
    version = _version(document, name)
    scale = _scale(document, name)
    _check_counts(document, name, limits)
    codes = _codes(document, name, scale)
    missing_codes = _missing_codes(document, name, codes)
    aliases = _aliases(document, name, codes, missing_codes)
    return Rule(
        id=rule_id,
        version=version,
        scale=scale,
        codes=codes,
        question=_optional_text(document, "question", name),
        missing_codes=missing_codes,
        aliases=aliases,
        examples=_examples(document, name),
        changelog=_changelog(document, name),
        weights=_weights(document, name, scale, codes),
        applies_when=_applies_when(document, name, rule_id),
        digest="sha256:" + hashlib.sha256(data).hexdigest(),
        source_name=name,
        source=bytes(data),
    )


def _weights(
    document: dict[str, Any], name: str, scale: Scale, codes: tuple[Code, ...]
) -> str | tuple[tuple[float, ...], ...] | None:
    """The optional ``weights``: a name (on the codes' values for interval and ratio scales, on
    their positions 1..K otherwise) or a K x K matrix of agreement weights, one row per code in
    the rule's order, symmetric, 1 on the diagonal and in [0, 1) off it."""
    weights = document.get("weights")
    if weights is None:
        return None
    hint = f"write one of {', '.join(WEIGHT_NAMES)}, or a matrix such as [[1, 0.5], [0.5, 1]] (one row per code)."
    if isinstance(weights, str):
        numbers = [code.value for code in codes] if scale.needs_values else list(range(1, len(codes) + 1))
        problem = named_weights_problem(weights, np.array(numbers, dtype=float))
        if problem:
            raise _invalid(name, "weights", problem, hint=hint)
        return weights
    rows = weights if isinstance(weights, list) else None
    if rows is None or not all(isinstance(row, list) for row in rows):
        raise _invalid(name, "weights", "must be a weighting's name or a list of rows of numbers", hint=hint)
    cells = [cell for row in rows for cell in row]
    if any(isinstance(cell, bool) or not isinstance(cell, (int, float)) for cell in cells):
        raise _invalid(name, "weights", "holds a cell that is not a number", hint=hint)
    if any(len(row) != len(rows) for row in rows):
        raise _invalid(name, "weights", "is not square (every row needs as many numbers as there are rows)", hint=hint)
    matrix = tuple(tuple(float(cell) for cell in row) for row in rows)
    problem = weights_problem(np.array(matrix, dtype=float).reshape(len(rows), len(rows)), len(codes))
    if problem:
        raise _invalid(name, "weights", problem, hint=hint)
    return matrix


def _applies_when(document: dict[str, Any], name: str, rule_id: str) -> AppliesWhen | None:
    """The optional ``applies_when: {rule: ID, codes: [...]}``. Alone a rule only records it;
    a codebook checks that ID is an earlier variable and the codes are codes of its rule."""
    condition = document.get("applies_when")
    if condition is None:
        return None
    hint = 'for example applies_when: {rule: explicit_current_failure, codes: ["yes"]}.'
    if not isinstance(condition, dict) or set(condition) != {"rule", "codes"}:
        raise _invalid(name, "applies_when", "must be a mapping with exactly the keys rule and codes", hint=hint)
    parent = condition["rule"]
    if not isinstance(parent, str) or not RULE_ID_PATTERN.fullmatch(parent) or len(parent) > MAX_RULE_ID:
        raise _invalid(name, "applies_when.rule", f"must be a rule id (got {shortened(repr(parent))})", hint=hint)
    if parent == rule_id:
        raise _invalid(
            name,
            "applies_when.rule",
            f"names this rule itself ({rule_id!r}); a rule cannot depend on its own code",
            hint="name the earlier variable whose answer decides whether this one is asked.",
        )
    entries = condition["codes"]
    if not isinstance(entries, list) or not entries:
        raise _invalid(name, "applies_when.codes", "must be a non-empty list of the parent's codes", hint=hint)
    codes: list[str] = []
    seen: set[str] = set()
    for position, entry in enumerate(entries):
        text = _code_text(entry, name, f"applies_when.codes[{position}]")
        if code_key(text) in seen:
            raise _invalid(name, "applies_when.codes", f"lists {text!r} twice", hint="list each code once.")
        seen.add(code_key(text))
        codes.append(text)
    return AppliesWhen(rule=parent, codes=tuple(codes))


def _check_counts(document: dict[str, Any], name: str, limits: Limits) -> None:
    """Codes, missing codes and aliases within the limit rule_codes, before each is validated."""
    condition = document.get("applies_when")
    conditional = {"applies_when.codes": condition.get("codes")} if isinstance(condition, dict) else {}
    for key, entries in (
        {key: document.get(key) for key in ("codes", "missing_codes", "aliases")} | conditional
    ).items():
        if isinstance(entries, (list, dict)) and len(entries) > limits.rule_codes:
            raise limit_error(
                "rule_codes",
                limits,
                f"{name}: key {key}",
                f"has {len(entries):,} entries",
                why="Every code is a row and a column of the agreement table.",
            )


def _invalid(name: str, key: str, problem: str, hint: str | None = None) -> RuleError:
    return RuleError(f"{name}: key {key} {problem}.", hint=hint, code="rule-invalid")


def _check_keys(document: dict[Any, Any], name: str) -> None:
    for key in document:
        if not isinstance(key, str) or (key not in KNOWN_KEYS and not key.startswith("x_")):
            raise _invalid(
                name,
                repr(key),
                "is not a rule key",
                hint=f"use one of {', '.join(KNOWN_KEYS)}, or prefix your own keys with x_.",
            )
    for required in ("rule", "version", "scale", "codes"):
        if required not in document:
            raise _invalid(name, required, "is missing", hint=f"add `{required}:` to the rule file.")


def _rule_id(document: dict[str, Any], name: str) -> str:
    rule_id = document["rule"]
    if not isinstance(rule_id, str) or not RULE_ID_PATTERN.fullmatch(rule_id):
        raise _invalid(
            name,
            "rule",
            f"must be an id of lower-case letters, digits and _ (got {shortened(repr(rule_id))})",
            hint="for example `rule: explicit_current_failure`.",
        )
    if len(rule_id) > MAX_RULE_ID:
        raise _invalid(
            name,
            "rule",
            f"is {len(rule_id)} characters long; a rule id has at most {MAX_RULE_ID}",
            hint="choose a shorter id: it names the rule's folder and every audit bundle.",
        )
    return rule_id


def _version(document: dict[str, Any], name: str) -> int:
    version = document["version"]
    if isinstance(version, bool) or not isinstance(version, int) or not 1 <= version <= MAX_VERSION:
        raise _invalid(
            name,
            "version",
            f"must be a whole number from 1 to {MAX_VERSION:,} (got {shortened(repr(version))})",
            hint="write `version: 1` and bump it by one for every revision.",
        )
    return version


def _scale(document: dict[str, Any], name: str) -> Scale:
    scale = document["scale"]
    try:
        return Scale(scale)
    except ValueError:
        raise _invalid(
            name,
            "scale",
            f"has unknown scale {scale!r}",
            hint="use one of nominal, ordinal, interval, ratio.",
        ) from None


def _code_text(value: Any, name: str, where: str) -> str:
    # An integer code (an ordinal level 0-3) is kept as its text; anything else must be text.
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str) or code_key(value) == "":
        raise _invalid(
            name,
            where,
            f"must be a non-empty text code (got {value!r})",
            hint='quote codes that YAML would read otherwise, e.g. code: "yes".',
        )
    control = CONTROL.search(value.strip())
    if control is not None:  # a code is typed in sheets and shown in reports: it must print as written
        raise _invalid(
            name,
            where,
            f"holds the control character U+{ord(control.group()):04X} ('{visible(value.strip())}')",
            hint="write the code with printable characters only (no line break, tab or escape).",
        )
    return value.strip()


def _codes(document: dict[str, Any], name: str, scale: Scale) -> tuple[Code, ...]:
    entries = document["codes"]
    if not isinstance(entries, list) or len(entries) < 2:
        raise _invalid(
            name, "codes", "must be a list of at least two codes", hint="for example codes: [{code: yes}, {code: no}]."
        )
    codes: list[Code] = []
    for position, entry in enumerate(entries):
        where = f"codes[{position}]"
        codes.append(_code(entry, name, where))
    seen: dict[str, str] = {}
    for code in codes:
        key = code_key(code.code)
        if key in seen:
            raise _invalid(
                name,
                "codes",
                f"has duplicate code {code.code!r} (same as {seen[key]!r} once case and spacing are ignored)",
                hint="every code must be distinct; merge or rename one of them.",
            )
        seen[key] = code.code
    if scale.needs_values:
        for code in codes:
            if code.value is None:
                raise _invalid(
                    name,
                    f"codes ({code.code!r})",
                    f"has no numeric value, which the {scale.value} scale needs",
                    hint=f"give every code a number, e.g. {{code: {code.code!r}, value: 1}}, or use scale: ordinal.",
                )
    if scale is Scale.RATIO:
        for code in codes:
            if code.value is not None and code.value < 0:
                raise _invalid(
                    name,
                    f"codes ({code.code!r})",
                    f"has value {code.value:g}; a ratio scale has no negative values",
                    hint="use scale: interval for values that can be negative.",
                )
    return tuple(codes)


def _number_hint(value: Any) -> str | None:
    """How to write ``value`` so that YAML reads a number, when it is text Python reads as a finite
    number: YAML 1.1 reads an exponent as a number only after a dot and with its sign (1.0e+3), so
    1e3 is text; a quoted number is text too."""
    try:
        number = float(value) if isinstance(value, str) else math.nan
    except ValueError:
        return None
    if not math.isfinite(number):
        return None
    whole = str(int(number)) if number.is_integer() and abs(number) < 1e15 else None
    mantissa, exponent_mark, exponent = value.strip().partition("e" if "e" in value else "E")
    dotted = mantissa if "." in mantissa else mantissa + ".0"
    signed = exponent if exponent[:1] in ("+", "-") else "+" + exponent
    if not exponent_mark or (dotted, signed) == (mantissa, exponent):  # a number YAML reads, in quotes
        return f"a quoted number is text: write it without quotes, as {whole or value.strip()}."
    forms = [form for form in (whole, f"{dotted}{exponent_mark}{signed}") if form]
    return (
        f"YAML reads {value.strip()!r} as text: it reads an exponent as a number only after a dot and with "
        f"its sign; write {' or '.join(forms)}."
    )


def _code(entry: Any, name: str, where: str) -> Code:
    if not isinstance(entry, dict):
        return Code(code=_code_text(entry, name, where))
    unknown = set(entry) - {"code", "label", "definition", "value"}
    if unknown:
        raise _invalid(
            name,
            f"{where}.{sorted(map(str, unknown))[0]}",
            "is not a code field",
            hint="a code has the fields code, label, definition, value.",
        )
    if "code" not in entry:
        raise _invalid(name, f"{where}.code", "is missing", hint="give each entry of codes its code, e.g. - code: yes.")
    value = entry.get("value")
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise _invalid(name, f"{where}.value", f"must be a number (got {value!r})", hint=_number_hint(value))
    if isinstance(value, float) and not math.isfinite(value):
        raise _invalid(
            name,
            f"{where}.value",
            f"must be a finite number (got {value})",
            hint="write a number such as 1 or 2.5; .inf and .nan are no values of a code.",
        )
    problem = None if value is None else value_problem(float(value))
    if problem:
        raise _invalid(
            name,
            f"{where}.value",
            f"{value!r}: {problem}",
            hint="multiply every value by one power of ten (a change of unit): 1, 2, 3 for 1.0e+15, 2.0e+15, 3.0e+15.",
        )
    return Code(
        code=_code_text(entry["code"], name, f"{where}.code"),
        label=_text_or_none(entry.get("label"), name, f"{where}.label"),
        definition=_text_or_none(entry.get("definition"), name, f"{where}.definition"),
        value=None if value is None else float(value),
    )


def _text_or_none(value: Any, name: str, where: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise _invalid(name, where, f"must be text (got {value!r})", hint='quote it, e.g. label: "Yes, it fails".')


def _optional_text(document: dict[str, Any], key: str, name: str) -> str | None:
    return _text_or_none(document.get(key), name, key)


def _missing_codes(document: dict[str, Any], name: str, codes: tuple[Code, ...]) -> tuple[str, ...]:
    entries = document.get("missing_codes") or []
    if not isinstance(entries, list):
        raise _invalid(name, "missing_codes", "must be a list, e.g. [unknown]", hint="write missing_codes: [unknown].")
    valid = {code_key(code.code): code.code for code in codes}
    missing: list[str] = []
    for position, entry in enumerate(entries):
        text = _code_text(entry, name, f"missing_codes[{position}]")
        if code_key(text) in valid:
            raise _invalid(
                name,
                "missing_codes",
                f"lists {text!r}, which is also a valid code",
                hint="a missing code means 'cannot tell'; it cannot also be a category. Rename one of them.",
            )
        if code_key(text) in map(code_key, missing):
            raise _invalid(name, "missing_codes", f"lists {text!r} twice", hint="list each missing code once.")
        missing.append(text)
    return tuple(missing)


def _aliases(document: dict[str, Any], name: str, codes: tuple[Code, ...], missing: tuple[str, ...]) -> dict[str, str]:
    entries = document.get("aliases") or {}
    if not isinstance(entries, dict):
        raise _invalid(
            name, "aliases", "must be a mapping of alias to code, e.g. {y: 'yes'}", hint="write aliases: {y: 'yes'}."
        )
    targets = {code_key(code): code for code in (*(c.code for c in codes), *missing)}
    pairs: list[tuple[str, str]] = []  # as given: keys 1 and "1" are one alias as text
    for alias, target in entries.items():
        alias_text = _code_text(alias, name, f"aliases ({alias!r})")
        target_text = _code_text(target, name, f"aliases.{alias_text}")
        if code_key(target_text) not in targets:
            raise _invalid(
                name,
                f"aliases.{alias_text}",
                f"points at {target_text!r}, which is no code of this rule",
                hint=f"point it at one of: {', '.join(targets.values())}.",
            )
        key = code_key(alias_text)
        if key in targets:
            same = (
                ""
                if alias_text == targets[key]
                else (f" ({targets[key]!r} once case, spacing and Unicode width are ignored, as codes are compared)")
            )
            raise _invalid(
                name,
                f"aliases.{alias_text}",
                f"is already a code of this rule{same}",
                hint="remove the alias; the code itself is matched case-insensitively.",
            )
        pairs.append((alias_text, targets[code_key(target_text)]))
    clash = alias_clash(pairs)
    if clash:
        (earlier, earlier_code), (alias_text, resolved) = clash
        raise _invalid(
            name,
            f"aliases.{alias_text}",
            f"points at {resolved!r}, but alias {earlier!r}, the same once case, spacing and Unicode width "
            f"are ignored, points at {earlier_code!r}",
            hint="typed codes are compared that way, so one alias cannot mean two codes: remove one of them.",
        )
    return dict(pairs)


def _examples(document: dict[str, Any], name: str) -> dict[str, tuple[str, ...]]:
    entries = document.get("examples") or {}
    if not isinstance(entries, dict):
        raise _invalid(
            name,
            "examples",
            "must be a mapping with positive, negative, ambiguous",
            hint="write examples: with positive:, negative: and ambiguous: lists of texts beneath it.",
        )
    examples: dict[str, tuple[str, ...]] = {}
    for kind, texts in entries.items():
        if kind not in EXAMPLE_KINDS:
            raise _invalid(
                name, f"examples.{kind}", "is not an example kind", hint="use positive, negative, ambiguous."
            )
        if not isinstance(texts, list) or not all(isinstance(text, str) for text in texts):
            raise _invalid(
                name,
                f"examples.{kind}",
                "must be a list of example texts",
                hint=f'write examples.{kind} as a list, e.g. {kind}: ["It crashes on start."]',
            )
        examples[kind] = tuple(texts)
    return examples


def _changelog(document: dict[str, Any], name: str) -> Any:
    changelog = document.get("changelog")
    if changelog is None or isinstance(changelog, str):
        return changelog
    if isinstance(changelog, dict):
        unknown = set(changelog) - {"summary", "why", "code_map"}
        if unknown:
            raise _invalid(
                name,
                f"changelog.{sorted(map(str, unknown))[0]}",
                "is not a changelog field",
                hint="a changelog is text, or a mapping with summary, why and code_map.",
            )
        return changelog
    raise _invalid(
        name,
        "changelog",
        "must be text, or a mapping with summary, why and code_map",
        hint="write changelog: as one line of text, or as summary:, why: and code_map: beneath it.",
    )


# --- a rule given as a mapping (the Python API) ----------------------------------------

MAPPING_NAME = "rule mapping"
PLAIN_SCALARS = (str, int, float, bool, type(None))


def rule_yaml(document: Mapping[str, Any], limits: Limits = DEFAULT_LIMITS) -> bytes:
    """A rule given as a mapping, as the bytes of a rule file: YAML with sorted keys and
    text as UTF-8 (its canonical dump, so the same mapping always gives the same bytes)."""
    plain = _plain(document, "(top level)", limits.depth, limits)
    dumped = yaml.dump(plain, Dumper=_CanonicalDumper, sort_keys=True, allow_unicode=True, default_flow_style=False)
    return dumped.encode("utf-8")


class _CanonicalDumper(yaml.SafeDumper):
    """yaml.safe_dump's dumper with pyyaml's own representers and resolvers: what other code in
    the process adds to yaml.SafeDumper (a block style for long text, say) must not change a
    rule mapping's canonical bytes, and so its digest."""


_CanonicalDumper.yaml_representers = dict(SafeRepresenter.yaml_representers)
_CanonicalDumper.yaml_multi_representers = dict(SafeRepresenter.yaml_multi_representers)
_CanonicalDumper.yaml_path_resolvers = {}
_CanonicalDumper.yaml_implicit_resolvers = {
    first: list(resolvers) for first, resolvers in Resolver.yaml_implicit_resolvers.items()
}


def rule_from_mapping(document: Mapping[str, Any], limits: Limits = DEFAULT_LIMITS) -> Rule:
    """A rule given as a mapping, validated exactly as a rule file: its canonical YAML
    (rule_yaml) is parsed as a file's bytes are, and its digest is their sha256."""
    return parse_rule(rule_yaml(document, limits), MAPPING_NAME, limits)


def _plain(value: Any, where: str, depth: int, limits: Limits) -> Any:
    """The mapping as plain dicts, lists and scalars; anything a YAML file cannot hold is
    refused, by key. A mapping that contains itself is refused by the depth limit."""
    if depth < 0:
        found = f"nests deeper than {limits.depth} levels at {shortened(repr(where))}"
        raise limit_error("depth", limits, MAPPING_NAME, found)
    if isinstance(value, Mapping):
        return {
            _plain_key(key, where): _plain(item, _key_path(where, key), depth - 1, limits)
            for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [_plain(item, f"{where}[{at}]", depth - 1, limits) for at, item in enumerate(value)]
    if _is_plain_scalar(value):
        return value
    raise _not_plain(value, where)


def _key_path(where: str, key: Any) -> str:
    return str(key) if where == "(top level)" else f"{where}.{key}"


def _plain_key(key: Any, where: str) -> Any:
    """A mapping's key, refused (named by itself) when a YAML file cannot hold it."""
    if _is_plain_scalar(key):
        return key
    raise _not_plain(key, _key_path(where, key), "is a key")


def _is_plain_scalar(value: Any) -> bool:
    # the exact types: numpy's float64 and str_ subclass float and str, but YAML's safe dumper
    # represents neither (nor any other subclass), and the API refuses every numpy value alike
    return type(value) in PLAIN_SCALARS


def _not_plain(value: Any, where: str, what: str = "holds a value") -> RuleError:
    kind = type(value)  # named in full: numpy's bool is called "bool" too
    named = kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
    return _invalid(
        MAPPING_NAME,
        where,
        f"{what} of type {named}, which a rule file cannot hold",
        hint="use text, numbers, true/false, lists and mappings (a numpy value: convert it with int(), float(), "
        "bool() or str()).",
    )
