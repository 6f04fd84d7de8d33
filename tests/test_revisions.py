"""`irr-audit rules check | lock | diff`: the pure check, and the CLI in real git repositories."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from irr_audit.cli import app
from irr_audit.errors import IrrAuditError
from irr_audit.io.fingerprints import units_sketch
from irr_audit.rules.diff import render_rule_diff
from irr_audit.rules.load import parse_rule
from irr_audit.rules.lock import lock_entries, parse_lock, render_lock
from irr_audit.rules.revisions import Baseline, Gates, check_rules

RULE = "explicit_current_failure"
PROJECT_RULES = Path(__file__).resolve().parents[1] / "rules"
FIRST = "First version."
SECOND = {"summary": "Past failures that are fixed are 'no'.", "why": "Coders split on fixed crashes."}


# --- building rule files ---------------------------------------------------------


def rule_text(
    version: int = 1,
    codes: tuple[str, ...] = ("yes", "no"),
    changelog: Any = FIRST,
    definition: str = "The comment says the product fails now.",
    rule_id: str = RULE,
) -> bytes:
    document: dict[str, Any] = {
        "rule": rule_id,
        "version": version,
        "question": "Does the comment explicitly state a current product failure?",
        "scale": "nominal",
        "codes": [{"code": code, "label": code.title(), "definition": f"{definition} ({code})"} for code in codes],
        "missing_codes": ["unknown"],
        "examples": {"positive": ["It crashes on start."], "negative": ["Love it."]},
    }
    if changelog is not None:
        document["changelog"] = changelog
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True).encode("utf-8")


def key(version: int, rule_id: str = RULE) -> str:
    return f"{rule_id}/v{version}.yaml"


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def codes_of(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [problem.code for problem in result.problems]


def manifest(
    name: str,
    rule_bytes: bytes,
    version: int,
    units: str = "units-a",
    recodes: dict[str, Any] | None = None,
    created: str = "2024-05-01T10:00:00Z",
    metrics: dict[str, Any] | None = None,
    sketches: dict[str, list[str]] | None = None,
) -> bytes:
    metrics = (
        metrics
        if metrics is not None
        else {
            "cohen_kappa": {"value": 0.7, "defined": True, "ci": [0.41, 0.99]},
            "krippendorff_alpha": {"value": 0.71, "defined": True, "ci": [0.45, 0.95]},
        }
    )
    return json.dumps(
        {
            "format": "irr-audit-bundle/1",
            "name": name,
            "created": created,
            "rule": {"id": RULE, "version": version, "digest": digest(rule_bytes), "file": "rule.yaml"},
            "units": {"count": 20, "ids_sha256": units, **(sketches or {})},
            "recodes": recodes,
            "score": {"metrics": metrics},
        }
    ).encode("utf-8")


UNDEFINED_KAPPA = {
    "cohen_kappa": {"value": None, "defined": False, "reason": "pe = 1: every coder used one category"},
}


# --- the pure check ---------------------------------------------------------------


def test_a_first_version_is_clean():
    result = check_rules({key(1): rule_text()})
    assert result.clean and result.files_checked == 1


def test_a_revision_with_changelog_is_clean():
    result = check_rules({key(1): rule_text(), key(2): rule_text(2, changelog=SECOND, definition="Now.")})
    assert result.clean


def test_a_rule_that_does_not_validate_names_the_key():
    broken = rule_text().replace(b"scale: nominal", b"scale: cardinal")
    result = check_rules({key(1): broken}, rules_label="rules")
    assert codes_of(result) == ["rule-invalid"]
    line = result.problems[0].render()
    assert line.startswith(f"rules/{key(1)}: [rule-invalid] key scale has unknown scale 'cardinal'.")
    assert "Fix: use one of nominal, ordinal, interval, ratio." in line


def test_malformed_yaml_is_a_problem_not_a_crash():
    result = check_rules({key(1): b"rule: [unclosed\n", key(2): b"\xff\xfe"})
    assert codes_of(result) == ["rule-yaml", "rule-encoding"]


def test_a_file_whose_version_disagrees_with_its_name_fails():
    result = check_rules({key(1): rule_text(), key(2): rule_text(3, changelog=SECOND)})
    assert "version-mismatch" in codes_of(result)
    assert "says version: 3 but its file name says 2" in result.problems[0].what


def test_a_file_outside_the_layout_fails():
    result = check_rules({f"{RULE}/draft.yaml": rule_text(), f"other/{key(1).split('/')[1]}": rule_text()})
    assert codes_of(result) == ["rule-file-name", "rule-folder-mismatch"]


def test_a_skipped_version_fails():
    result = check_rules({key(1): rule_text(), key(3): rule_text(3, changelog=SECOND)})
    assert codes_of(result) == ["version-skipped"]
    assert "v2 does not exist" in result.problems[0].what


def test_versions_must_start_at_one():
    result = check_rules({key(2): rule_text(2, changelog=SECOND)})
    assert codes_of(result) == ["version-skipped"]
    assert "v1 does not exist" in result.problems[0].what


def test_a_repeated_version_fails():
    result = check_rules({key(1): rule_text(), key(2): rule_text(1)})
    assert sorted(codes_of(result)) == ["version-mismatch", "version-repeated"]


def test_a_new_version_without_changelog_fails():
    result = check_rules({key(1): rule_text(), key(2): rule_text(2, changelog=None)})
    assert codes_of(result) == ["changelog-missing"]
    assert result.problems[0].file == f"rules/{key(2)}"


@pytest.mark.parametrize("changelog", ["", "   ", {}])
def test_an_empty_changelog_is_missing(changelog):
    result = check_rules({key(1): rule_text(), key(2): rule_text(2, changelog=changelog)})
    assert codes_of(result) == ["changelog-missing"]


def test_a_changelog_mapping_says_what_and_why():
    result = check_rules({key(1): rule_text(), key(2): rule_text(2, changelog={"summary": "Sharper."})})
    assert codes_of(result) == ["changelog-incomplete"]
    assert "why (why it changed)" in result.problems[0].what


def test_a_first_version_needs_no_changelog():
    assert check_rules({key(1): rule_text(changelog=None)}).clean


@pytest.mark.parametrize(
    ("new_codes", "change"),
    [
        (("yes", "no", "past"), "added past"),
        (("yes",), None),  # a rule has at least two codes: the schema problem comes first
        (("yes", "nope"), "added nope; removed no"),
        (("no", "yes"), "reordered yes, no -> no, yes"),
    ],
)
def test_a_codes_change_without_code_map_fails(new_codes, change):
    result = check_rules({key(1): rule_text(), key(2): rule_text(2, new_codes, changelog=SECOND)})
    if change is None:
        assert codes_of(result) == ["rule-invalid"]
        return
    assert codes_of(result) == ["code-map-missing"]
    assert change in result.problems[0].what
    assert 'changelog.code_map: {"yes": ..., "no": ...}' in result.problems[0].fix


def test_a_code_map_that_maps_every_old_code_passes():
    changelog = {**SECOND, "code_map": {"yes": "yes", "no": "nope"}}
    assert check_rules({key(1): rule_text(), key(2): rule_text(2, ("yes", "nope"), changelog)}).clean


def test_a_code_may_map_to_null():
    changelog = {**SECOND, "code_map": {"yes": "yes", "no": "no", "maybe": None}}
    files = {key(1): rule_text(codes=("yes", "no", "maybe")), key(2): rule_text(2, changelog=changelog)}
    assert check_rules(files).clean


def test_an_incomplete_code_map_fails():
    changelog = {**SECOND, "code_map": {"yes": "yes"}}
    result = check_rules({key(1): rule_text(), key(2): rule_text(2, ("yes", "nope"), changelog)})
    assert codes_of(result) == ["code-map-incomplete"]
    assert "'no'" in result.problems[0].what


def test_a_code_map_naming_codes_that_do_not_exist_fails():
    changelog = {**SECOND, "code_map": {"yes": "si", "no": "no", "perhaps": "no"}}
    result = check_rules({key(1): rule_text(), key(2): rule_text(2, ("yes", "no", "x"), changelog)})
    assert codes_of(result) == ["code-map-invalid", "code-map-invalid"]


def test_a_skipped_version_is_compared_with_the_version_below_it():
    result = check_rules({key(1): rule_text(), key(3): rule_text(3, ("a", "b"), changelog=SECOND)})
    assert codes_of(result) == ["version-skipped", "code-map-missing"]
    assert "(v1 -> v3:" in result.problems[1].what


def test_an_edited_released_version_fails():
    released = Baseline("git ref main", {key(1): digest(rule_text())})
    result = check_rules({key(1): rule_text(definition="Edited.")}, [released])
    assert codes_of(result) == ["released-edited"]
    assert "differs from git ref main" in result.problems[0].what
    assert f"{RULE}/v2.yaml" in result.problems[0].fix


def test_a_removed_released_version_fails():
    released = Baseline("the lock file rules/rules.lock", {key(1): "sha256:" + "0" * 64})
    result = check_rules({key(2): rule_text(2, changelog=SECOND)}, [released])
    assert "released-removed" in codes_of(result)


def test_released_versions_are_not_asked_for_a_changelog_again():
    old = rule_text(2, changelog=None)
    released = Baseline("git ref main", {key(1): digest(rule_text()), key(2): digest(old)})
    assert check_rules({key(1): rule_text(), key(2): old}, [released]).clean


# --- audit bundles --------------------------------------------------------------------


def test_a_new_version_on_the_same_units_needs_the_recoding_mark():
    v1, v2 = rule_text(), rule_text(2, changelog=SECOND, definition="Now.")
    manifests = {
        "audits/a1/manifest.json": manifest("a1", v1, 1),
        "audits/a2/manifest.json": manifest("a2", v2, 2),
    }
    result = check_rules({key(1): v1, key(2): v2}, manifests=manifests)
    assert codes_of(result) == ["same-units-not-recoded"]
    assert result.problems[0].file == "audits/a2/manifest.json"
    assert "same units as bundle 'a1' (v1)" in result.problems[0].what
    assert result.problems[0].fix.endswith("--recodes audits/a1.")

    manifests["audits/a2/manifest.json"] = manifest("a2", v2, 2, recodes={"bundle": "a1", "ids_sha256": "x"})
    assert check_rules({key(1): v1, key(2): v2}, manifests=manifests).clean


def test_a_new_version_on_a_new_sample_passes():
    v1, v2 = rule_text(), rule_text(2, changelog=SECOND, definition="Now.")
    manifests = {"a1": manifest("a1", v1, 1), "a2": manifest("a2", v2, 2, units="units-b")}
    assert check_rules({key(1): v1, key(2): v2}, manifests=manifests).clean


def sketch(*ids: str) -> list[str]:
    return units_sketch(list(ids))


@pytest.mark.parametrize(
    ("first", "second", "same"),
    [
        # every id of the sheets differs, the scored units do not: the same units
        ({"sketch": sketch("a", "b"), "scored_sketch": sketch("a", "b")},
         {"sketch": sketch("a", "b", "x", "y", "z"), "scored_sketch": sketch("a", "b")}, True),
        # the other way round: the old ids are listed, but other units are scored
        ({"sketch": sketch("a", "b"), "scored_sketch": sketch("a", "b")},
         {"sketch": sketch("a", "b", "c", "d"), "scored_sketch": sketch("c", "d")}, False),
        # an older bundle, without a scored sketch: its sketch of every unit stands in
        ({"sketch": sketch("a", "b")}, {"sketch": sketch("a", "b", "x"), "scored_sketch": sketch("a", "b")}, True),
        ({"sketch": sketch("a", "b")}, {"sketch": sketch("c", "d")}, False),
        ({}, {"sketch": sketch("a", "b"), "scored_sketch": sketch("a", "b")}, False),  # older still: not known
    ],
)  # fmt: skip
def test_the_overlap_is_of_the_scored_units_and_older_manifests_still_read(first, second, same):  # type: ignore[no-untyped-def]
    v1, v2 = rule_text(), rule_text(2, changelog=SECOND, definition="Now.")
    manifests = {
        "a1": manifest("a1", v1, 1, sketches=first),
        "a2": manifest("a2", v2, 2, units="units-b", sketches=second),
    }
    result = check_rules({key(1): v1, key(2): v2}, manifests=manifests)
    assert codes_of(result) == (["same-units-not-recoded"] if same else [])


def test_a_version_frozen_in_a_bundle_is_released():
    frozen = rule_text()
    result = check_rules({key(1): rule_text(definition="Edited.")}, manifests={"a1": manifest("a1", frozen, 1)})
    assert codes_of(result) == ["bundle-rule-edited"]


def test_bundles_of_other_rules_are_ignored_and_broken_manifests_reported():
    other = json.loads(manifest("o", b"", 7))
    other["rule"]["id"] = "another_rule"
    manifests = {"o": json.dumps(other).encode(), "broken": b"{not json", "old": b'{"format": "x/0"}'}
    result = check_rules({key(1): rule_text()}, manifests=manifests)
    assert codes_of(result) == ["bundle-manifest-invalid", "bundle-manifest-invalid"]


# --- score gates ------------------------------------------------------------------------


def gated(metrics: dict[str, Any] | None, gates: Gates, *more: bytes):  # type: ignore[no-untyped-def]
    v1 = rule_text()
    manifests = {"audits/a1/manifest.json": manifest("a1", v1, 1, metrics=metrics)}
    for position, extra in enumerate(more):
        manifests[f"audits/z{position}/manifest.json"] = extra
    return check_rules({key(1): v1}, manifests=manifests, gates=gates)


def test_a_gate_that_is_met_passes():
    assert gated(None, Gates(min_kappa=0.6, min_alpha=0.667)).clean


def test_a_score_below_the_gate_fails():
    result = gated(None, Gates(min_kappa=0.8))
    assert codes_of(result) == ["gate-below"]
    assert "cohen_kappa = 0.7000 is below --min-kappa 0.8" in result.problems[0].what


def test_a_score_just_below_the_gate_is_shown_with_the_digits_that_tell_them_apart():
    kappa = {"cohen_kappa": {"value": 0.69996, "defined": True, "ci": [0.5, 0.9]}}
    result = gated(kappa, Gates(min_kappa=0.69997))
    assert "cohen_kappa = 0.69996 is below --min-kappa 0.69997" in result.problems[0].what  # not 0.7000


def test_the_gate_uses_the_lower_end_of_the_interval_when_asked():
    result = gated(None, Gates(min_alpha=0.667, use_ci_lower=True))
    assert codes_of(result) == ["gate-below"]
    assert "lower end of the krippendorff_alpha interval = 0.4500" in result.problems[0].what


def test_an_undefined_kappa_fails_the_gate_with_its_reason():
    result = gated(UNDEFINED_KAPPA, Gates(min_kappa=0.0))
    assert codes_of(result) == ["gate-undefined"]
    assert "pe = 1: every coder used one category" in result.problems[0].what


def test_a_missing_coefficient_or_interval_never_passes():
    assert codes_of(gated({}, Gates(min_alpha=0.5))) == ["gate-no-metric"]
    no_ci = {"cohen_kappa": {"value": 0.9, "defined": True}}
    assert codes_of(gated(no_ci, Gates(min_kappa=0.5, use_ci_lower=True))) == ["gate-no-ci"]


def gated_score(score: dict[str, Any], gates: Gates):  # type: ignore[no-untyped-def]
    """A bundle whose frozen score is ``score`` (its metrics and, say, its headline), gated."""
    v1 = rule_text()
    document = json.loads(manifest("a1", v1, 1))
    document["score"] = score
    return check_rules({key(1): v1}, manifests={"audits/a1/manifest.json": json.dumps(document).encode()}, gates=gates)


ORDINAL_ALPHA = {"krippendorff_alpha": {"value": 0.72, "defined": True, "level": "ordinal"}}
KRIPPENDORFF_BOOTSTRAP = {
    "metric": "krippendorff_alpha",
    "interval": {"low": 0.5922, "high": 0.8434, "kind": "bootstrap"},
}


def test_the_lower_end_is_that_of_the_interval_the_report_shows_an_ordinal_alpha():
    # ordinal alpha has no formula for its SE: the report's headline gives it Krippendorff's bootstrap
    # interval, and the gate reads that one, not "no interval"
    score = {"metrics": ORDINAL_ALPHA, "headline": KRIPPENDORFF_BOOTSTRAP}
    assert gated_score(score, Gates(min_alpha=0.55, use_ci_lower=True)).clean
    result = gated_score(score, Gates(min_alpha=0.6, use_ci_lower=True))
    assert codes_of(result) == ["gate-below"]
    assert "lower end of the krippendorff_alpha interval = 0.5922" in result.problems[0].what


def test_the_percentile_bootstrap_over_units_gives_the_interval_when_nothing_else_does():
    alpha = {"value": 0.72, "defined": True, "bootstrap": {"defined": True, "ci": [0.31, 0.9], "n_boot": 500}}
    result = gated_score({"metrics": {"krippendorff_alpha": alpha}}, Gates(min_alpha=0.4, use_ci_lower=True))
    assert "lower end of the krippendorff_alpha interval = 0.3100" in result.problems[0].what
    undefined = {**alpha, "bootstrap": {"defined": False, "reason": "too few replicates defined"}}
    no_ci = gated_score({"metrics": {"krippendorff_alpha": undefined}}, Gates(min_alpha=0.4, use_ci_lower=True))
    assert codes_of(no_ci) == ["gate-no-ci"]
    assert "score --bootstrap N" in no_ci.problems[0].fix


def test_an_analytic_interval_comes_first_and_another_coefficients_headline_is_not_read():
    analytic = {"krippendorff_alpha": {"value": 0.72, "defined": True, "ci": [0.45, 0.95]}}
    result = gated_score(
        {"metrics": analytic, "headline": KRIPPENDORFF_BOOTSTRAP}, Gates(min_alpha=0.5, use_ci_lower=True)
    )
    assert "lower end of the krippendorff_alpha interval = 0.4500" in result.problems[0].what
    kappa_headline = {"metric": "cohen_kappa", "interval": {"low": 0.9, "high": 1.0}}
    other = gated_score({"metrics": ORDINAL_ALPHA, "headline": kappa_headline}, Gates(min_alpha=0.5, use_ci_lower=True))
    assert codes_of(other) == ["gate-no-ci"]


def test_fleiss_kappa_is_gated_when_there_is_no_cohen_kappa():
    three_coders = {"fleiss_kappa": {"value": 0.44, "defined": True}}
    assert "fleiss_kappa = 0.4400" in gated(three_coders, Gates(min_kappa=0.6)).problems[0].what


def test_the_newest_validation_audit_is_gated():
    newer = manifest(
        "a0", rule_text(), 1, units="units-b", created="2025-01-01T00:00:00+00:00", metrics=UNDEFINED_KAPPA
    )
    assert codes_of(gated(None, Gates(min_kappa=0.5), newer)) == ["gate-undefined"]
    older = manifest("a0", rule_text(), 1, units="units-b", created="2020-01-01T00:00:00", metrics=UNDEFINED_KAPPA)
    assert gated(None, Gates(min_kappa=0.5), older).clean


def test_only_the_newest_version_is_gated_and_a_version_without_audit_is_noted():
    v1, v2 = rule_text(), rule_text(2, changelog=SECOND, definition="Now.")
    manifests = {"a1": manifest("a1", v1, 1, metrics=UNDEFINED_KAPPA)}
    result = check_rules({key(1): v1, key(2): v2}, manifests=manifests, gates=Gates(min_kappa=0.6))
    assert result.clean
    assert result.notes == (f"{RULE} v2 has no validation audit yet; the score gates were not applied to it.",)


def test_with_audits_and_no_gate_a_new_version_without_audit_is_noted():
    v1, v2 = rule_text(), rule_text(2, changelog=SECOND, definition="Now.")
    released = Baseline("the lock file", {key(1): digest(v1)})
    audited = {"a1": manifest("a1", v1, 1)}
    result = check_rules({key(1): v1, key(2): v2}, [released], manifests=audited)
    assert result.clean
    assert result.notes == (
        f"{RULE} v2 is new and has no validation audit yet: validate it on a new sample, or on an earlier "
        "sample coded again under it (join --sample, or freeze --recodes), before it is used.",
    )
    validated = {**audited, "a2": manifest("a2", v2, 2, units="units-b")}
    assert check_rules({key(1): v1, key(2): v2}, [released], manifests=validated).notes == ()
    assert check_rules({key(1): v1, key(2): v2}, [released]).notes == ()  # no --audits: no audit was asked about


# --- lock file and diff --------------------------------------------------------------------


def test_the_lock_file_round_trips():
    files = {key(1): rule_text(), key(2): rule_text(2, changelog=SECOND)}
    text = render_lock(lock_entries(files))
    assert json.loads(text)["rules"][1] == {
        "file": key(2),
        "rule": RULE,
        "version": 2,
        "sha256": hashlib.sha256(files[key(2)]).hexdigest(),
    }
    baseline = parse_lock(text.encode(), "rules/rules.lock")
    assert baseline.digests == {name: digest(data) for name, data in files.items()}
    assert baseline.source == "the lock file rules/rules.lock"
    assert render_lock(lock_entries(files)) == text


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"[]",
        b'{"format": "irr-audit-rules-lock/1"}',
        b'{"format": "irr-audit-rules-lock/1", "rules": [{"file": 1}]}',
        b"\xff",
    ],
)
def test_a_damaged_lock_file_is_a_usage_error(data):
    with pytest.raises(IrrAuditError) as caught:
        parse_lock(data, "rules/rules.lock")
    assert caught.value.code == "lock-invalid"


def test_the_diff_shows_codes_definitions_examples_and_changelog():
    old = parse_rule(rule_text(), "v1.yaml")
    changelog = {**SECOND, "code_map": {"yes": "yes", "no": "nope"}}
    new_document = yaml.safe_load(rule_text(2, ("yes", "nope", "past"), changelog, definition="Fails today."))
    new_document["examples"]["negative"] = ["Love it.", "It crashed last year; fixed now."]
    new_document["scale"] = "ordinal"
    new = parse_rule(yaml.safe_dump(new_document, sort_keys=False).encode(), "v2.yaml")
    text = render_rule_diff(old, new)
    assert text.startswith(f"{RULE} v1 -> v2\n  old: v1.yaml  sha256:")
    assert "@@ scale @@\n- nominal\n+ ordinal\n" in text
    assert "@@ codes @@\n  yes\n- no    (renamed to nope, per code_map)\n+ nope\n+ past\n" in text
    assert (
        "@@ code yes @@\n  definition\n- The comment says the product fails now. (yes)\n+ Fails today. (yes)\n"
    ) in text
    assert "@@ code no -> nope @@\n  label\n- No\n+ Nope\n" in text
    assert "@@ examples: negative @@\n+ It crashed last year; fixed now.\n" in text
    assert "  code_map: yes -> yes, no -> nope\n" in text


SEVERITY = Path(__file__).resolve().parents[1] / "rules" / "severity" / "v1.yaml"


def test_the_diff_shows_a_changed_applies_when():
    """A conditional rule's condition is part of its meaning (which cells are not_applicable):
    the diff left it out and called the files different "only in formatting"."""
    text = SEVERITY.read_text(encoding="utf-8")
    old = parse_rule(text.encode(), "v1.yaml")
    changed = text.replace("version: 1", "version: 2").replace('codes: ["yes"]}', 'codes: ["yes", "no"]}')
    dropped = "\n".join(line for line in changed.splitlines() if not line.startswith("applies_when")) + "\n"

    shown = render_rule_diff(old, parse_rule(changed.encode(), "v2.yaml"))
    gone = render_rule_diff(old, parse_rule(dropped.encode(), "v2.yaml"))

    assert "@@ applies_when @@\n- explicit_current_failure is one of yes\n" in shown
    assert "+ explicit_current_failure is one of yes, no\n" in shown
    assert "no change" not in shown and "only in formatting" not in shown
    assert "@@ applies_when @@\n- explicit_current_failure is one of yes\n+ (none)\n" in gone


def test_an_applies_when_edited_in_a_released_version_fails() -> None:
    text = SEVERITY.read_text(encoding="utf-8")
    name = "severity/v1.yaml"
    released = Baseline("git ref main", {name: digest(text.encode())})
    edited = text.replace('codes: ["yes"]}', 'codes: ["yes", "no"]}').encode()
    assert codes_of(check_rules({name: edited}, [released])) == ["released-edited"]


def test_the_diff_of_identical_content_says_so():
    rule = parse_rule(rule_text(), "v1.yaml")
    assert "no change to codes, definitions, examples" in render_rule_diff(rule, rule)


# --- the CLI in real git repositories ---------------------------------------------------------


def clean_environment() -> dict[str, str]:
    # A git hook's GIT_DIR would send these commands to the project's own repository.
    return {name: value for name, value in os.environ.items() if not name.startswith("GIT_")}


def git(repo: Path, *arguments: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", "-C", str(repo), *arguments],
        capture_output=True,
        text=True,
        check=True,
        env=clean_environment(),
    )
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository on branch main whose first commit releases v1."""
    for name in [name for name in os.environ if name.startswith("GIT_")]:
        monkeypatch.delenv(name)
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, 1, rule_text())
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "v1")
    return root


def write(root: Path, version: int, data: bytes) -> Path:
    path = root / "rules" / RULE / f"v{version}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def rules(*arguments: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, ["rules", *arguments], catch_exceptions=False)


def test_cli_a_clean_revision_passes(repo: Path):
    write(repo, 2, rule_text(2, changelog=SECOND, definition="Now."))
    result = rules("check", str(repo / "rules"), "--base", "main")
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert "is clean (2 rule files; released versions compared with git ref main (" in result.stderr


def test_cli_editing_a_released_version_fails(repo: Path):
    write(repo, 1, rule_text(definition="Sharper wording."))
    result = rules("check", str(repo / "rules"), "--base", "main")
    assert result.exit_code == 1
    [line] = result.stdout.splitlines()
    assert line.startswith(
        f"{repo / 'rules' / RULE / 'v1.yaml'}: [released-edited] is a released version and differs from git ref main ("
    )
    assert f"Fix: restore it as released and put the change in a new version, {RULE}/v2.yaml" in line
    assert "1 problem in" in result.stderr


def test_cli_a_skipped_version_fails(repo: Path):
    write(repo, 3, rule_text(3, changelog=SECOND))
    result = rules("check", str(repo / "rules"), "--base", "main")
    assert result.exit_code == 1
    assert "[version-skipped]" in result.stdout and "v2 does not exist" in result.stdout


def test_cli_a_missing_changelog_fails(repo: Path):
    write(repo, 2, rule_text(2, changelog=None))
    result = rules("check", str(repo / "rules"), "--base", "main")
    assert result.exit_code == 1
    assert "[changelog-missing] is new version 2" in result.stdout


def test_cli_a_codes_change_without_mapping_fails_and_with_one_passes(repo: Path):
    write(repo, 2, rule_text(2, ("yes", "no", "past"), changelog=SECOND))
    result = rules("check", str(repo / "rules"), "--base", "main")
    assert result.exit_code == 1
    assert "[code-map-missing]" in result.stdout and "added past" in result.stdout
    write(repo, 2, rule_text(2, ("yes", "no", "past"), {**SECOND, "code_map": {"yes": "yes", "no": "no"}}))
    assert rules("check", str(repo / "rules"), "--base", "main").exit_code == 0


def test_cli_same_units_without_the_recoding_mark_fails_and_with_it_passes(repo: Path):
    v2 = rule_text(2, changelog=SECOND, definition="Now.")
    write(repo, 2, v2)
    audits = repo / "audits"
    for name, data in (("pilot", manifest("pilot", rule_text(), 1)), ("v2-check", manifest("v2-check", v2, 2))):
        (audits / name).mkdir(parents=True)
        (audits / name / "manifest.json").write_bytes(data)
    result = rules("check", str(repo / "rules"), "--base", "main", "--audits", str(audits))
    assert result.exit_code == 1
    assert result.stdout.startswith(f"{audits / 'v2-check' / 'manifest.json'}: [same-units-not-recoded]")
    recoded = manifest("v2-check", v2, 2, recodes={"bundle": "pilot", "ids_sha256": "units-a"})
    (audits / "v2-check" / "manifest.json").write_bytes(recoded)
    result = rules("check", str(repo / "rules"), "--base", "main", "--audits", str(audits))
    assert result.exit_code == 0, result.output


def test_cli_base_against_a_branch(repo: Path):
    git(repo, "checkout", "-q", "-b", "revise")
    write(repo, 2, rule_text(2, changelog=SECOND, definition="Now."))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "v2")
    # Against main, v2 is new; against the branch that released it, editing it is caught.
    assert rules("check", str(repo / "rules"), "--base", "main").exit_code == 0
    git(repo, "checkout", "-q", "main")
    git(repo, "checkout", "-q", "-b", "later")
    write(repo, 2, rule_text(2, changelog=SECOND, definition="Changed after release."))
    result = rules("check", str(repo / "rules"), "--base", "revise")
    assert result.exit_code == 1
    assert "[released-edited]" in result.stdout and "differs from git ref revise (" in result.stdout


def test_cli_an_unknown_base_is_a_usage_error(repo: Path):
    result = rules("check", str(repo / "rules"), "--base", "no-such-branch")
    assert result.exit_code == 2
    assert result.stderr.startswith("Error [usage-base]: --base no-such-branch is no commit in the repository")
    assert "fetch-depth: 0" in result.stderr
    assert rules("check", str(repo / "rules"), "--base", "--output=x").exit_code == 2


def test_cli_a_repository_with_no_history_falls_back_and_says_so(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    root = tmp_path / "fresh"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, 1, rule_text())
    result = rules("check", str(root / "rules"), "--base", "HEAD")
    assert result.exit_code == 0, result.output
    assert (
        "note: the repository has no commits yet, so --base HEAD cannot be read, and there is no lock "
        "file" in result.stderr
    )
    assert rules("lock", str(root / "rules")).exit_code == 0
    write(root, 1, rule_text(definition="Edited."))
    result = rules("check", str(root / "rules"), "--base", "HEAD")
    assert result.exit_code == 1
    assert "comparing released versions with the lock file" in result.stderr
    assert "[released-edited]" in result.stdout


def test_cli_not_a_git_repository_falls_back_to_the_lock_file(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    root = tmp_path / "plain"
    write(root, 1, rule_text())
    lock_result = rules("lock", str(root / "rules"))
    assert lock_result.exit_code == 0
    assert (
        f"wrote {root / 'rules' / 'rules.lock'} (1 version of 1 rule; newly recorded: {RULE} v1)" in lock_result.stderr
    )
    write(root, 1, rule_text(definition="Edited."))
    result = rules("check", str(root / "rules"), "--base", "main")
    assert result.exit_code == 1
    assert (
        f"note: {root / 'rules'} is not in a git repository, so --base main cannot be read: comparing "
        f"released versions with the lock file {root / 'rules' / 'rules.lock'} instead." in result.stderr
    )
    assert "differs from the lock file" in result.stdout
    result = rules("check", str(root / "rules"))
    assert "note: no --base given: comparing released versions with the lock file" in result.stderr


def test_cli_lock_refuses_to_record_an_edit(tmp_path: Path):
    write(tmp_path, 1, rule_text())
    assert rules("lock", str(tmp_path / "rules")).exit_code == 0
    assert "is up to date" in rules("lock", str(tmp_path / "rules")).stderr
    write(tmp_path, 1, rule_text(definition="Edited."))
    result = rules("lock", str(tmp_path / "rules"))
    assert result.exit_code == 1
    assert "[released-edited]" in result.stdout and "not written" in result.stderr
    write(tmp_path, 1, rule_text())
    write(tmp_path, 2, rule_text(2, changelog=SECOND))
    result = rules("lock", str(tmp_path / "rules"))
    assert result.exit_code == 0 and f"newly recorded: {RULE} v2" in result.stderr


def test_cli_a_whole_rule_folder_deleted_is_its_released_versions_removed(repo: Path):
    other = repo / "rules" / "other_rule" / "v1.yaml"  # (a rules folder holds at least one rule)
    other.parent.mkdir()
    other.write_bytes(rule_text(rule_id="other_rule"))
    assert rules("lock", str(repo / "rules")).exit_code == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "lock")
    lock = (repo / "rules" / "rules.lock").read_bytes()
    for path in (repo / "rules" / RULE).iterdir():
        path.unlink()
    (repo / "rules" / RULE).rmdir()
    result = rules("check", str(repo / "rules"), "--base", "main")
    assert result.exit_code == 1
    assert result.stdout.count(f"{RULE}/v1.yaml: [released-removed]") == 2  # git ref main, and the lock file
    assert rules("lock", str(repo / "rules")).exit_code == 1
    assert (repo / "rules" / "rules.lock").read_bytes() == lock


def test_cli_gates_fail_on_an_undefined_kappa(repo: Path):
    audits = repo / "audits"
    (audits / "pilot").mkdir(parents=True)
    (audits / "pilot" / "manifest.json").write_bytes(manifest("pilot", rule_text(), 1, metrics=UNDEFINED_KAPPA))
    result = rules("check", str(repo / "rules"), "--audits", str(audits), "--min-kappa", "0.6")
    assert result.exit_code == 1
    assert "[gate-undefined]" in result.stdout and "pe = 1: every coder used one category" in result.stdout


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        (["--min-kappa", "0.6"], "Error [usage-gate]: a score gate needs the audit bundles"),
        (["--min-alpha", "2", "--audits", "."], "Error [usage-gate]: --min-alpha 2 is outside -1 to 1"),
        (["--use-ci-lower"], "Error [usage-gate]: --use-ci-lower changes how a gate is applied"),
        (["--audits", "missing"], "Error [usage-audits-dir]: --audits missing is not a folder."),
    ],
)
def test_cli_bad_gate_usage_exits_2(repo: Path, arguments, code):
    result = rules("check", str(repo / "rules"), *arguments)
    assert result.exit_code == 2
    assert result.stderr.startswith(code)


def test_cli_a_missing_rules_folder_exits_2(tmp_path: Path):
    result = rules("check", str(tmp_path / "nowhere"))
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error [usage-rules-dir]: {tmp_path / 'nowhere'} is not a folder.")


def test_cli_diff(repo: Path):
    changelog = {**SECOND, "code_map": {"yes": "yes", "no": "nope"}}
    write(repo, 2, rule_text(2, ("yes", "nope"), changelog))
    result = rules("diff", str(repo / "rules" / RULE / "v1.yaml"), str(repo / "rules" / RULE / "v2.yaml"))
    assert result.exit_code == 0
    assert result.stdout.startswith(f"{RULE} v1 -> v2\n")
    assert "- no    (renamed to nope, per code_map)\n+ nope\n" in result.stdout
    assert "  summary: Past failures that are fixed are 'no'.\n" in result.stdout
    broken = rules("diff", str(repo / "rules" / RULE / "v1.yaml"), str(repo / "missing.yaml"))
    assert broken.exit_code == 2 and broken.stderr.startswith("Error [rule-not-found]")


def test_the_projects_own_rules_pass():
    result = rules("check", str(PROJECT_RULES))
    assert result.exit_code == 0, result.output
    assert "compared with the lock file" in result.stderr


def test_cli_notes_a_new_version_without_audit_only_when_audits_are_given(tmp_path: Path):
    write(tmp_path, 1, rule_text())
    assert rules("lock", str(tmp_path / "rules")).exit_code == 0
    write(tmp_path, 2, rule_text(2, changelog=SECOND, definition="Now."))
    (tmp_path / "audits").mkdir()
    noted = f"note: {RULE} v2 is new and has no validation audit yet"
    with_audits = rules("check", str(tmp_path / "rules"), "--audits", str(tmp_path / "audits"))
    assert with_audits.exit_code == 0 and noted in with_audits.stderr
    without = rules("check", str(tmp_path / "rules"))
    assert without.exit_code == 0 and noted not in without.stderr
