"""`irr-audit rules diff`: what changed between two versions of a rule, for a
reviewer, as unified-diff style sections (codes, definitions, examples, scale,
missing codes, aliases, applies_when) followed by the new version's changelog. Every key
of a rule file that has a meaning (rules.load.KNOWN_KEYS) is compared: a change not shown
would be a change of meaning the reviewer is told is formatting.
"""

from __future__ import annotations

import difflib
import textwrap
from collections.abc import Mapping, Sequence

from irr_audit.rules.model import AppliesWhen, Rule, code_key
from irr_audit.rules.revisions import code_ref, short_digest


def render_rule_diff(old: Rule, new: Rule) -> str:
    """What changed between two versions, for a reviewer: unified-diff style markers
    (paste it into a ```diff block), one section per aspect that changed."""
    lines = [
        f"{old.label} -> {new.label}" if old.id != new.id else f"{new.id} v{old.version} -> v{new.version}",
        f"  old: {old.source_name}  {short_digest(old.digest)}",
        f"  new: {new.source_name}  {short_digest(new.digest)}",
    ]
    sections = [
        _text_section("question", old.question, new.question),
        _text_section("scale", old.scale.value, new.scale.value),
        _text_section("weights", _weights_text(old.weights), _weights_text(new.weights)),
        _codes_section(old, new),
        *_code_detail_sections(old, new),
        _list_section("missing codes", old.missing_codes, new.missing_codes),
        _list_section(
            "aliases", [f"{a} -> {t}" for a, t in old.aliases.items()], [f"{a} -> {t}" for a, t in new.aliases.items()]
        ),
        _text_section("applies_when", _applies_when_text(old.applies_when), _applies_when_text(new.applies_when)),
        *(
            _list_section(f"examples: {kind}", old.examples.get(kind, ()), new.examples.get(kind, ()))
            for kind in sorted(set(old.examples) | set(new.examples))
        ),
    ]
    changed = [section for section in sections if section]
    for section in changed:
        lines += ["", *section]
    if not changed:
        same = (
            "the files are identical"
            if old.digest == new.digest
            else ("the files differ only in formatting, comments or the changelog")
        )
        lines += [
            "",
            "no change to codes, definitions, examples, scale, weights, missing codes, aliases or applies_when "
            f"({same}).",
        ]
    lines += _changelog_section(new)
    return "\n".join(lines) + "\n"


def _codes_section(old: Rule, new: Rule) -> list[str]:
    old_keys = [code_key(code) for code in old.categories]
    new_keys = [code_key(code) for code in new.categories]
    if old_keys == new_keys:
        return []
    renamed = _renames(old, new)
    lines = ["@@ codes @@"]
    matcher = difflib.SequenceMatcher(a=old_keys, b=new_keys, autojunk=False)
    for operation, old_start, old_end, new_start, new_end in matcher.get_opcodes():
        if operation == "equal":
            lines += [f"  {code}" for code in new.categories[new_start:new_end]]
            continue
        for code in old.categories[old_start:old_end]:
            target = renamed.get(code_key(code))
            lines.append(f"- {code}" + (f"    (renamed to {target}, per code_map)" if target else ""))
        lines += [f"+ {code}" for code in new.categories[new_start:new_end]]
    kept_old = [key for key in old_keys if key in new_keys]
    kept_new = [key for key in new_keys if key in old_keys]
    if kept_old != kept_new:
        lines.append(f"  order: {', '.join(old.categories)} -> {', '.join(new.categories)}")
    return lines


def _code_detail_sections(old: Rule, new: Rule) -> list[list[str]]:
    """Label, definition and value of each code that exists in both (or was renamed)."""
    renamed = _renames(old, new)
    new_by_key = {code_key(code.code): code for code in new.codes}
    sections = []
    for before in old.codes:
        after = new_by_key.get(code_key(before.code)) or new_by_key.get(
            code_key(renamed.get(code_key(before.code), ""))
        )
        if after is None:
            continue
        title = before.code if before.code == after.code else f"{before.code} -> {after.code}"
        body = []
        for aspect, was, now in (
            ("label", before.label, after.label),
            ("definition", before.definition, after.definition),
            ("value", _number(before.value), _number(after.value)),
        ):
            if _normalised(was) != _normalised(now):
                body += [f"  {aspect}", *_wrapped("-", was), *_wrapped("+", now)]
        if body:
            sections.append([f"@@ code {title} @@", *body])
    return sections


def _renames(old: Rule, new: Rule) -> dict[str, str]:
    """old code key -> new code, from the new version's code_map, where the name changed."""
    code_map = new.changelog.get("code_map") if isinstance(new.changelog, Mapping) else None
    if not isinstance(code_map, Mapping):
        return {}
    new_codes = {code_key(code): code for code in new.categories}
    renames = {}
    for source, target in code_map.items():
        source_text, target_text = code_ref(source), code_ref(target)
        if source_text and target_text and code_key(source_text) != code_key(target_text):
            if code_key(target_text) in new_codes:
                renames[code_key(source_text)] = new_codes[code_key(target_text)]
    return renames


def _weights_text(weights: str | tuple[tuple[float, ...], ...] | None) -> str | None:
    if weights is None or isinstance(weights, str):
        return weights
    return "; ".join(" ".join(f"{cell:g}" for cell in row) for row in weights)


def _applies_when_text(condition: AppliesWhen | None) -> str | None:
    """A conditional rule's condition as one line (None: the rule always applies)."""
    if condition is None:
        return None
    return f"{condition.rule} is one of {', '.join(condition.codes)}"


def _text_section(title: str, old: str | None, new: str | None) -> list[str]:
    if _normalised(old) == _normalised(new):
        return []
    return [f"@@ {title} @@", *_wrapped("-", old), *_wrapped("+", new)]


def _list_section(title: str, old: Sequence[str], new: Sequence[str]) -> list[str]:
    removed = [item for item in old if item not in new]
    added = [item for item in new if item not in old]
    if not removed and not added:
        return []
    return [f"@@ {title} @@", *(f"- {item}" for item in removed), *(f"+ {item}" for item in added)]


def _changelog_section(rule: Rule) -> list[str]:
    lines = ["", f"@@ changelog of v{rule.version} @@"]
    changelog = rule.changelog
    if changelog is None or isinstance(changelog, str):
        return lines + _wrapped(" ", changelog)
    for key in ("summary", "why"):
        if changelog.get(key) is not None:
            lines += _wrapped(" ", str(changelog[key]), first=f"{key}: ")
    code_map = changelog.get("code_map")
    if isinstance(code_map, Mapping):
        pairs = (f"{code_ref(a)} -> {'(none)' if b is None else code_ref(b)}" for a, b in code_map.items())
        lines += _wrapped(" ", ", ".join(pairs), first="code_map: ")
    return lines


def _wrapped(marker: str, text: str | None, first: str = "") -> list[str]:
    """Text wrapped for reading, every line starting with the diff marker."""
    if text is None:
        return [f"{marker} {first}(none)"]
    body = textwrap.wrap(
        " ".join(text.split()), width=88, initial_indent=first, subsequent_indent=" " * len(first)
    ) or [first]
    return [f"{marker} {line}" for line in body]


def _number(value: float | None) -> str | None:
    return None if value is None else f"{value:g}"


def _normalised(text: str | None) -> str | None:
    return None if text is None else " ".join(text.split())
