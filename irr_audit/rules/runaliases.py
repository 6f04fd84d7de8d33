"""Aliases for one run (`--alias RAW=CODE`): raw values a coder typed, mapped to codes of
the rule for this audit only. The rule file and its digest stay as they are; the run's
aliases are recorded beside them (summary.json, every report) so the audit can be repeated.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

from irr_audit.errors import UsageError
from irr_audit.rules.model import AliasPair, Rule, alias_clash, code_key


def parse_alias_options(values: Iterable[str] | None) -> dict[str, str]:
    """--alias RAW=CODE options -> {raw: code}; the last = splits, so a raw value may hold one.
    Two options that give one raw value two codes are refused, not settled by their order."""
    pairs: list[AliasPair] = []
    for value in values or ():
        raw, equals, code = value.rpartition("=")
        if not equals or not raw.strip() or not code.strip():
            raise UsageError(
                f"--alias {value!r} is not RAW=CODE.",
                hint="for example --alias 1=yes --alias 0=no (repeat the option for each value).",
                code="usage-alias",
            )
        pairs.append((raw, code))
    refuse_clash(pairs)
    return dict(pairs)


def refuse_clash(aliases: Iterable[AliasPair]) -> None:
    """Refuse two run aliases whose raw values are one typed value (as the rule loader refuses
    two such aliases in a rule file) but whose codes differ: whichever came last would win,
    and the run's record would show both."""
    clash = alias_clash(aliases)
    if clash is None:
        return
    (first, first_code), (second, second_code) = clash
    same = (
        ""
        if first == second
        else f"{second!r} and {first!r} are one value once case, spacing and Unicode width are ignored "
        "(as typed values are compared), and "
    )
    raise UsageError(
        f"--alias {second}={second_code} contradicts --alias {first}={first_code}: {same}one value cannot "
        "mean two codes.",
        hint="keep the one of the two --alias options you mean.",
        code="usage-alias",
    )


def with_run_aliases(rule: Rule, aliases: Mapping[str, str] | None) -> Rule:
    """``rule`` with ``aliases`` for this run, each checked: the code must be a code or missing
    code of the rule, and the raw value must not already mean something else."""
    if not aliases:
        return rule
    if not isinstance(aliases, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in aliases.items()
    ):
        raise UsageError(
            f"aliases is a mapping of raw values to codes, not {aliases!r}.",
            hint="for example aliases={'1': 'yes', '0': 'no'}.",
            code="usage-alias",
        )
    refuse_clash(aliases.items())
    targets = {code_key(code): code for code in (*rule.categories, *rule.missing_codes)}
    for raw, code in aliases.items():
        if code_key(code) not in targets:
            raise UsageError(
                f"--alias {raw}={code}: {code!r} is not a code of {rule.label} "
                f"({', '.join((*rule.categories, *rule.missing_codes))}).",
                hint="map each raw value to one of the rule's codes, e.g. --alias 1=" + rule.categories[0] + ".",
                code="usage-alias",
            )
        if not code_key(raw):
            raise UsageError(
                f"--alias {raw!r}={code}: an empty value is a blank cell, never a code.",
                hint="leave blank cells blank: they go into the missingness log.",
                code="usage-alias",
            )
        status, meant = rule.classify(raw)
        wanted, wanted_code = rule.classify(targets[code_key(code)])
        if status.value != "invalid" and (status, meant) != (wanted, wanted_code):
            raise UsageError(
                f"--alias {raw}={code}: {raw!r} already means {meant or status.value} under {rule.label}.",
                hint="an alias maps values the rule does not know; change the rule to change what a code means.",
                code="usage-alias",
            )
    merged = {**rule.run_aliases, **{raw: targets[code_key(code)] for raw, code in aliases.items()}}
    merged = dict(sorted(merged.items()))  # one order, however given: the report shows the same text
    return dataclasses.replace(rule, run_aliases=merged)
