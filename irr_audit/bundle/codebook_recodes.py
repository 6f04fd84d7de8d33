"""`freeze --codebook --recodes OLD`: this codebook audit codes again the units of an earlier
bundle, under a codebook that revises some of its variables' rules (docs/codebooks.md,
"Re-coding"). OLD is a codebook bundle of the same codebook, or a rule's bundle whose rule is one
of the codebook's variables. The manifest's `recodes` names OLD, its units' digest and, per
revised variable, the rule version OLD audited and the one coded now, so that `rules check
--audits` accepts the same units for those variables' new versions (irr_audit.rules.revisions).

What cannot be a re-coding is refused: another codebook, no rule revised (or one taken back to an
earlier version), a rule that is no variable of the codebook, other units.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from irr_audit.bundle.manifest import CODEBOOK_FORMAT, NAME_PATTERN
from irr_audit.errors import UsageError
from irr_audit.io.unitsketch import is_sketch, sketch_jaccard
from irr_audit.rules.codebook import Codebook
from irr_audit.rules.revisions import SAME_UNITS_JACCARD  # what rules check counts as largely the same units


def audited_rules(manifest: Mapping[str, Any]) -> dict[str, int]:
    """rule id -> version of every rule a bundle's manifest audited (a codebook's: every variable). Pure."""
    if manifest.get("format") == CODEBOOK_FORMAT:
        return {rule["id"]: rule["version"] for rule in manifest["rules"]}
    return {manifest["rule"]["id"]: manifest["rule"]["version"]}


def revised_variables(old: Mapping[str, Any], codebook: Codebook, given: Path) -> dict[str, dict[str, int]]:
    """The variables the codebook codes under a later version of the rule ``old`` audited:
    {variable: {"from": old version, "to": new version}}. Refuses what is no re-coding. Pure."""
    before = audited_rules(old)
    is_codebook = old.get("format") == CODEBOOK_FORMAT
    if is_codebook and old["codebook"]["name"] != codebook.name:
        raise UsageError(
            f"--recodes {given} is an audit of the codebook {old['codebook']['name']}, not {codebook.name}.",
            hint=f"pass the bundle of an earlier audit of {codebook.name}; another codebook's units are "
            "validated on a sample of their own.",
            code="usage-recodes-codebook",
        )
    now = {rule.id: rule.version for rule in codebook.rules}
    earlier = sorted(rule for rule in now if rule in before and now[rule] < before[rule])
    if earlier:
        rule = earlier[0]
        raise UsageError(
            f"--recodes {given} audited {rule} v{before[rule]}, and {codebook.label} codes it under the earlier "
            f"v{now[rule]}.",
            hint="a re-coding codes the units again under a revised rule, never an earlier one: pass the codebook "
            f"version that pins {rule} v{before[rule]} or a later version.",
            code="usage-recodes-codebook",
        )
    revised = {
        rule: {"from": before[rule], "to": now[rule]} for rule in now if rule in before and now[rule] > before[rule]
    }
    if revised:
        return revised
    if not is_codebook and next(iter(before)) not in now:
        raise UsageError(
            f"--recodes {given} is an audit of rule {next(iter(before))}, which is no variable of {codebook.label}.",
            hint="pass the bundle of an earlier audit of this codebook, or of one of its variables' rules.",
            code="usage-recodes-rule",
        )
    audited = ", ".join(f"{rule} v{version}" for rule, version in before.items() if rule in now)
    raise UsageError(
        f"--recodes {given}: {codebook.label} revises no rule that bundle audited ({audited}, the same versions).",
        hint="a re-coding codes the units again under a revised rule: freeze under the codebook version that pins "
        "the revised rules, or leave out --recodes (a second audit under the same rules needs no mark).",
        code="usage-recodes-codebook",
    )


def units_overlap(old: Mapping[str, Any], units: Mapping[str, Any]) -> float | None:
    """1.0 for the same units; else the Jaccard index of OLD's units and these, from their sketches
    (None: OLD keeps no sketch). Pure."""
    before = old["units"]
    if before["ids_sha256"] == units["ids_sha256"]:
        return 1.0
    if not is_sketch(before.get("sketch")):
        return None
    return sketch_jaccard(before["sketch"], units["sketch"])


def codebook_recodes(
    old: Mapping[str, Any], codebook: Codebook, units: Mapping[str, Any], given: Path
) -> tuple[dict[str, Any], list[str]]:
    """The manifest's `recodes` entry for a codebook audit of ``units`` (the manifest's `units`)
    that re-codes the bundle whose manifest is ``old``, and the notes to show. Pure."""
    revised = revised_variables(old, codebook, given)
    shared = units_overlap(old, units)
    if shared is None or shared < SAME_UNITS_JACCARD:
        measured = "keeps no sketch of its units to compare" if shared is None else f"Jaccard index {shared:.2f}"
        raise UsageError(
            f"--recodes {given} audited other units than these sheets ({old['units']['count']} units there, "
            f"{units['count']} here; {measured}).",
            hint="a re-coding codes the same units again: pass the sheets coded on that bundle's units, or leave out "
            "--recodes and validate the revision as a new sample.",
            code="usage-recodes-units",
        )
    notes = []
    if shared < 1.0:
        notes.append(
            f"the units differ from those of {old['name']} (Jaccard index {shared:.2f}); a re-coding "
            "normally re-codes the same units"
        )
    entry = {
        "bundle": old["name"],
        "ids_sha256": old["units"]["ids_sha256"],
        "codebook": (
            {"name": old["codebook"]["name"], "version": old["codebook"]["version"]}
            if old.get("format") == CODEBOOK_FORMAT
            else None
        ),
        "variables": revised,
    }
    return entry, notes


def recodes_problems(recodes: Any, rules: Any) -> list[str]:
    """The form of a codebook manifest's `recodes` (null or absent: no re-coding): each revised
    variable a rule of the manifest, coded now under its version there, later than the one re-coded. Pure."""
    if recodes is None:
        return []
    if not (
        isinstance(recodes, dict)
        and isinstance(recodes.get("bundle"), str)
        and NAME_PATTERN.fullmatch(recodes["bundle"])
        and isinstance(recodes.get("ids_sha256"), str)
        and isinstance(recodes.get("variables"), dict)
        and recodes["variables"]
    ):
        return ["recodes must be null or name a bundle, its units' ids_sha256 and the variables re-coded"]
    pinned = (
        {rule.get("id"): rule.get("version") for rule in rules if isinstance(rule, dict)}
        if isinstance(rules, list)
        else {}
    )
    problems = []
    for variable, versions in recodes["variables"].items():
        if not (
            isinstance(versions, dict)
            and _is_version(versions.get("from"))
            and versions.get("to") == pinned.get(variable)
            and _is_version(versions["to"])
            and versions["from"] < versions["to"]
        ):
            problems.append(
                f"recodes.variables.{variable} must be a variable of rules, with the version re-coded (from) "
                "before the one it is coded under now (to)"
            )
    return problems


def _is_version(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1
