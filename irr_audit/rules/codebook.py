"""A codebook: the rules (variables) coded together, each at a pinned version (docs/codebooks.md).

A codebook file is YAML read by the same bounded parser as rule files::

    codebook: comment_study
    version: 1
    rules:
      - {rule: explicit_current_failure, version: 1}
      - {rule: severity, version: 1}

Each rule is the file ``<rules folder>/<rule>/v<version>.yaml``. The rules folder is
``--rules DIR`` when given; else, for a codebook kept as ``<root>/codebooks/<name>/v<N>.yaml``,
``<root>/rules``; else the folder ``rules`` beside the codebook file.

A conditional rule (``applies_when``) must name an earlier variable of the codebook and
codes of that variable's rule, so the variables' order is an order in which every
condition can be decided, and no condition can form a cycle.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from irr_audit.errors import CodebookError, IrrAuditError
from irr_audit.io.display import shortened
from irr_audit.io.encodings import refuse_foreign_mark
from irr_audit.io.files import check_name, read_bounded
from irr_audit.io.limits import DEFAULT_LIMITS, Limits, limit_error
from irr_audit.rules.load import MAX_RULE_ID, MAX_VERSION, RULE_ID_PATTERN, load_rule, parse_yaml
from irr_audit.rules.model import Rule, code_key

CODEBOOK_KEYS = ("codebook", "version", "rules", "description", "changelog")
CODEBOOKS_FOLDER = "codebooks"
RULES_FOLDER = "rules"
# Columns a coding sheet (or the joined table) already has: a variable cannot be named so.
RESERVED_COLUMNS = frozenset(
    {
        "comment_id",
        "post_id",
        "url",
        "thread_title",
        "parent_body",
        "body",
        "text",
        "code",
        "note",
        "rule",
        "rule_version",
        "allowed_codes",
        "coder",
        "variable",
        "codebook",
        "codebook_version",
        "fully_coded",
    }
)

RuleReader = Callable[[str, int], Rule]


@dataclass(frozen=True)
class Codebook:
    """A loaded codebook: its rules in the file's order, and the digests that pin them."""

    name: str
    version: int
    rules: tuple[Rule, ...]
    digest: str  # "sha256:<hex>" of the codebook file's bytes
    source_name: str  # the codebook file as named (messages, reports)
    rules_label: str = ""  # the rules folder the rules were read from, as named
    source: bytes = field(default=b"", repr=False, compare=False)
    description: str | None = None
    changelog: Any = None

    @property
    def label(self) -> str:
        return f"{self.name} v{self.version}"

    @property
    def rule_ids(self) -> tuple[str, ...]:
        return tuple(rule.id for rule in self.rules)

    @property
    def rule_digests(self) -> dict[str, str]:
        """rule id -> "sha256:<hex>" of that rule file's bytes."""
        return {rule.id: rule.digest for rule in self.rules}

    def rule(self, rule_id: str) -> Rule:
        for rule in self.rules:
            if rule.id == rule_id:
                return rule
        raise KeyError(rule_id)


def rule_file_key(rule_id: str, version: int) -> str:
    """Where a rule version sits under the rules folder."""
    return f"{rule_id}/v{version}.yaml"


def default_rules_dir(codebook_path: Path) -> Path:
    """``<root>/rules`` for ``<root>/codebooks/<name>/<file>``, else ``rules`` beside the file."""
    folder = codebook_path.parent
    if folder.parent.name == CODEBOOKS_FOLDER:
        return folder.parent.parent / RULES_FOLDER
    return folder / RULES_FOLDER


def load_codebook(path: str | Path, rules_dir: str | Path | None = None, limits: Limits = DEFAULT_LIMITS) -> Codebook:
    """Read and validate a codebook file and every rule it pins."""
    codebook_path = Path(path)
    check_name(codebook_path, "codebook file")
    data = read_bounded(
        codebook_path,
        f"codebook file {codebook_path}",
        limits,
        "rule_bytes",
        code="codebook",
        missing_hint="pass --codebook codebooks/<name>/v<version>.yaml.",
    )
    folder = Path(rules_dir) if rules_dir is not None else default_rules_dir(codebook_path)

    def read_rule(rule_id: str, version: int) -> Rule:
        rule_path = folder / rule_file_key(rule_id, version)
        try:
            return load_rule(rule_path, limits)
        except IrrAuditError as error:
            if error.code != "rule-not-found":
                raise  # a rule file that is there but unreadable or invalid names itself
            raise CodebookError(
                f"{codebook_path}: rule {rule_id} version {version} is not in the rules folder: "
                f"{rule_path} does not exist.",
                hint="add that rule file, correct the entry's version, or pass --rules DIR with the folder "
                "that holds <rule>/v<version>.yaml.",
                code="codebook-rule-not-found",
            ) from None

    return parse_codebook(data, str(codebook_path), read_rule, limits, rules_label=str(folder))


def parse_codebook(
    data: bytes,
    name: str,
    read_rule: RuleReader | Mapping[tuple[str, int], Rule],
    limits: Limits = DEFAULT_LIMITS,
    rules_label: str = "",
) -> Codebook:
    """Validate codebook bytes; ``read_rule(id, version)`` (or a mapping of them) gives each rule.
    Pure apart from what ``read_rule`` does: ``name`` is only used in messages."""
    refuse_foreign_mark(data, name, code="codebook-encoding", error=CodebookError)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CodebookError(
            f"{name} is not UTF-8 (byte {exc.start} cannot be decoded).",
            hint="save the codebook file as UTF-8.",
            code="codebook-encoding",
        ) from None
    document = parse_yaml(data, name, limits, kind="codebook")
    if not isinstance(document, dict):
        raise _invalid(
            name,
            "(top level)",
            "must be a mapping with the keys codebook, version and rules",
            hint="start the file with `codebook: NAME`, `version: 1` and `rules:` (docs/codebooks.md).",
        )
    _check_keys(document, name)
    codebook_name = _codebook_name(document, name)
    version = _version(document["version"], name, "version")
    entries = _entries(document, name, limits)
    reader = read_rule if callable(read_rule) else _from_mapping(read_rule, name)
    rules = tuple(_pinned_rule(reader, rule_id, rule_version, name, at) for at, (rule_id, rule_version) in entries)
    _check_conditions(rules, name)
    description = document.get("description")
    if description is not None and not isinstance(description, str):
        raise _invalid(name, "description", "must be text", hint="write the description as one text.")
    return Codebook(
        name=codebook_name,
        version=version,
        rules=rules,
        digest="sha256:" + hashlib.sha256(data).hexdigest(),
        source_name=name,
        rules_label=rules_label,
        source=bytes(data),
        description=description,
        changelog=document.get("changelog"),
    )


def _invalid(
    name: str, key: str, problem: str, hint: str | None = None, code: str = "codebook-invalid"
) -> CodebookError:
    return CodebookError(f"{name}: key {key} {problem}.", hint=hint, code=code)


def _check_keys(document: dict[Any, Any], name: str) -> None:
    for key in document:
        if not isinstance(key, str) or (key not in CODEBOOK_KEYS and not key.startswith("x_")):
            raise _invalid(
                name,
                shortened(repr(key)),
                "is not a codebook key",
                hint=f"use one of {', '.join(CODEBOOK_KEYS)}, or prefix your own keys with x_.",
            )
    for required in ("codebook", "version", "rules"):
        if required not in document:
            raise _invalid(name, required, "is missing", hint=f"add `{required}:` to the codebook file.")


def _codebook_name(document: dict[str, Any], name: str) -> str:
    value = document["codebook"]
    if not isinstance(value, str) or not RULE_ID_PATTERN.fullmatch(value) or len(value) > MAX_RULE_ID:
        raise _invalid(
            name,
            "codebook",
            f"must be a name of at most {MAX_RULE_ID} lower-case letters, digits and _ (got {shortened(repr(value))})",
            hint="for example `codebook: comment_study`; it names the codebook's folder.",
        )
    return value


def _version(value: Any, name: str, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_VERSION:
        raise _invalid(
            name,
            key,
            f"must be a whole number from 1 to {MAX_VERSION:,} (got {shortened(repr(value))})",
            hint="write the version as a number, e.g. `version: 1`.",
        )
    return value


def _entries(document: dict[str, Any], name: str, limits: Limits) -> list[tuple[int, tuple[str, int]]]:
    """(position, (rule id, version)) of each entry of ``rules``, checked one by one."""
    entries = document["rules"]
    hint = "list the variables, e.g. rules: [{rule: explicit_current_failure, version: 1}]."
    if not isinstance(entries, list) or not entries:
        raise _invalid(name, "rules", "must be a non-empty list of {rule: ID, version: N}", hint=hint)
    if len(entries) > limits.codebook_rules:
        raise limit_error(
            "codebook_rules",
            limits,
            f"{name}: key rules",
            f"has {len(entries):,} entries",
            why="Every variable is a column of every coding sheet.",
        )
    pinned: list[tuple[int, tuple[str, int]]] = []
    seen: dict[str, int] = {}
    for at, entry in enumerate(entries):
        where = f"rules[{at}]"
        if not isinstance(entry, dict) or set(entry) != {"rule", "version"}:
            raise _invalid(name, where, "must be a mapping with exactly the keys rule and version", hint=hint)
        rule_id = entry["rule"]
        if not isinstance(rule_id, str) or not RULE_ID_PATTERN.fullmatch(rule_id) or len(rule_id) > MAX_RULE_ID:
            raise _invalid(
                name,
                f"{where}.rule",
                f"must be a rule id of at most {MAX_RULE_ID} lower-case letters, digits and _ "
                f"(got {shortened(repr(rule_id))})",
                hint="a rule id names the variable's column in every sheet, e.g. `rule: severity`.",
            )
        if rule_id in RESERVED_COLUMNS:
            raise _invalid(
                name,
                f"{where}.rule",
                f"is {rule_id!r}, a column every coding sheet already has, so it cannot name a variable's column",
                hint="rename the rule (a new rule id and folder).",
            )
        if rule_id in seen:
            raise _invalid(
                name,
                f"{where}.rule",
                f"lists rule {rule_id!r} again (first at rules[{seen[rule_id]}])",
                hint="list each variable once: one codebook version pins one version of each rule.",
                code="codebook-duplicate-rule",
            )
        seen[rule_id] = at
        pinned.append((at, (rule_id, _version(entry["version"], name, f"{where}.version"))))
    return pinned


def _from_mapping(rules: Mapping[tuple[str, int], Rule], name: str) -> RuleReader:
    def read(rule_id: str, version: int) -> Rule:
        if (rule_id, version) not in rules:
            raise CodebookError(
                f"{name}: rule {rule_id} version {version} was not given.",
                hint="give every rule version the codebook lists.",
                code="codebook-rule-not-found",
            )
        return rules[rule_id, version]

    return read


def _pinned_rule(read_rule: RuleReader, rule_id: str, version: int, name: str, at: int) -> Rule:
    rule = read_rule(rule_id, version)
    if rule.id != rule_id:
        raise _invalid(
            name,
            f"rules[{at}].rule",
            f"names rule {rule_id!r}, but its file {rule.source_name} says `rule: {rule.id}`",
            hint=f"keep each rule in the folder of its id ({rule_file_key(rule.id, rule.version)}).",
            code="codebook-rule-mismatch",
        )
    if rule.version != version:
        raise _invalid(
            name,
            f"rules[{at}].version",
            f"pins version {version} of {rule_id}, but its file {rule.source_name} says `version: {rule.version}`",
            hint=f"name each version's file v<version>.yaml; the file of version {rule.version} is "
            f"{rule_file_key(rule_id, rule.version)}.",
            code="codebook-version-mismatch",
        )
    return rule


def _check_conditions(rules: tuple[Rule, ...], name: str) -> None:
    """Every applies_when names an earlier variable and codes of its rule."""
    position = {rule.id: at for at, rule in enumerate(rules)}
    for at, rule in enumerate(rules):
        condition = rule.applies_when
        if condition is None:
            continue
        where = f"rules[{at}] ({rule.source_name}: applies_when.rule)"
        if condition.rule not in position:
            raise _invalid(
                name,
                where,
                f"makes {rule.id} depend on {condition.rule!r}, which is no variable of this codebook",
                hint=f"add {condition.rule} to the codebook before {rule.id}, or correct applies_when in the rule "
                "(a new rule version).",
                code="codebook-condition-unknown",
            )
        if position[condition.rule] >= at:
            raise _invalid(
                name,
                where,
                f"makes {rule.id} depend on {condition.rule}, which comes after it in the codebook",
                hint=f"list {condition.rule} before {rule.id}: a condition must be decided by an earlier variable "
                "(this also rules out cycles).",
                code="codebook-condition-order",
            )
        parent = rules[position[condition.rule]]
        known = {code_key(code) for code in parent.categories}
        for code in condition.codes:
            if code_key(code) not in known:
                raise _invalid(
                    name,
                    f"rules[{at}] ({rule.source_name}: applies_when.codes)",
                    f"lists {code!r}, which is no code of {parent.label}",
                    hint=f"use codes of {parent.id}: {', '.join(parent.categories)}.",
                    code="codebook-condition-code",
                )
