"""`irr-audit rules check | lock` on codebooks: a codebook version pins its rules' versions,
a released codebook never changes, nor do the rule versions it pinned."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from irr_audit.cli import app
from irr_audit.rules.codebook_revisions import check_codebooks
from irr_audit.rules.lock import codebook_lock_entries, lock_entries, parse_lock_codebooks, render_lock
from irr_audit.rules.revisions import Baseline, check_rules
from tests.test_revisions import SECOND, key, manifest, rule_text

ROOT = Path(__file__).resolve().parents[1]
PARENT = b'rule: failure\nversion: 1\nscale: nominal\ncodes: ["yes", "no"]\nchangelog: First version.\n'
CHILD = (
    b"rule: severity\nversion: 1\nscale: ordinal\ncodes: [low, high]\n"
    b'applies_when: {rule: failure, codes: ["yes"]}\nchangelog: First version.\n'
)
RULES = {"failure/v1.yaml": PARENT, "severity/v1.yaml": CHILD}
V1 = b"codebook: study\nversion: 1\nrules:\n  - {rule: failure, version: 1}\n  - {rule: severity, version: 1}\n"


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def codes_of(problems: list) -> list[str]:
    return [problem.code for problem in problems]


def run(*args: object):
    return CliRunner().invoke(app, [str(arg) for arg in args], catch_exceptions=False)


def test_a_valid_codebook_is_clean() -> None:
    assert check_codebooks({"study/v1.yaml": V1}, RULES) == []


def test_layout_name_and_version_follow_the_file() -> None:
    problems = check_codebooks({"other/v2.yaml": V1, "study/latest.yaml": V1}, RULES)
    assert [(problem.code, problem.file) for problem in problems] == [
        ("codebook-folder-mismatch", "codebooks/other/v2.yaml"),
        ("codebook-version-mismatch", "codebooks/other/v2.yaml"),
        ("codebook-file-name", "codebooks/study/latest.yaml"),
        ("codebook-version-skipped", "codebooks/other/v2.yaml"),
    ]


def test_a_codebook_that_does_not_validate_is_one_problem_naming_it() -> None:
    broken = V1.replace(b"severity, version: 1", b"severity, version: 4")
    problems = check_codebooks({"study/v1.yaml": broken}, RULES)
    assert codes_of(problems) == ["codebook-rule-not-found"]
    assert problems[0].file == "codebooks/study/v1.yaml" and "rules/severity/v4.yaml" in problems[0].what
    later = b"codebook: study\nversion: 1\nrules:\n  - {rule: severity, version: 1}\n  - {rule: failure, version: 1}\n"
    assert codes_of(check_codebooks({"study/v1.yaml": later}, RULES)) == ["codebook-condition-order"]


def test_a_released_codebook_that_changed_or_went_is_flagged() -> None:
    released = Baseline("the lock file rules.lock", {"study/v1.yaml": digest(V1)})
    edited = V1 + b"x_note: changed\n"
    problems = check_codebooks({"study/v1.yaml": edited}, RULES, [released])
    assert codes_of(problems) == ["codebook-released-edited"]
    assert "study/v2.yaml" in problems[0].fix
    gone = check_codebooks({"other/v1.yaml": V1.replace(b"study", b"other")}, RULES, [released])
    assert codes_of(gone) == ["codebook-released-removed"]


def test_a_released_codebook_whose_pinned_rule_changed_is_flagged() -> None:
    pins = {"study/v1.yaml": {"failure/v1.yaml": digest(PARENT), "severity/v1.yaml": digest(CHILD)}}
    released = Baseline("lock", {"study/v1.yaml": digest(V1)})
    assert check_codebooks({"study/v1.yaml": V1}, RULES, [released], pins) == []
    changed = {**RULES, "severity/v1.yaml": CHILD.replace(b"[low, high]", b"[low, mid, high]")}
    problems = check_codebooks({"study/v1.yaml": V1}, changed, [released], pins)
    assert codes_of(problems) == ["codebook-rule-changed"]
    assert "rules/severity/v1.yaml" in problems[0].what and "new codebook version" in problems[0].fix


def test_a_new_codebook_version_needs_a_changelog() -> None:
    v2 = V1.replace(b"version: 1\nrules", b"version: 2\nrules")
    released = Baseline("lock", {"study/v1.yaml": digest(V1)})
    problems = check_codebooks({"study/v1.yaml": V1, "study/v2.yaml": v2}, RULES, [released])
    assert codes_of(problems) == ["codebook-changelog-missing"]
    documented = v2 + b"changelog: {summary: severity v2, why: coders split on mid}\n"
    assert check_codebooks({"study/v1.yaml": V1, "study/v2.yaml": documented}, RULES, [released]) == []


def test_the_lock_records_codebooks_and_their_pins_and_reads_them_back() -> None:
    text = render_lock(lock_entries(RULES), codebook_lock_entries({"study/v1.yaml": V1}, RULES))
    baseline, pins = parse_lock_codebooks(text.encode(), "rules.lock")
    assert baseline.digests == {"study/v1.yaml": digest(V1)}
    assert pins == {"study/v1.yaml": {"failure/v1.yaml": digest(PARENT), "severity/v1.yaml": digest(CHILD)}}
    assert "codebooks" not in render_lock(lock_entries(RULES))  # a lock of rules alone is unchanged


def test_the_project_rules_and_codebooks_are_clean() -> None:
    result = run("rules", "check", ROOT / "rules")
    assert result.exit_code == 0, result.output
    assert "1 codebook file" in result.output


def test_cli_lock_then_check_flags_an_edited_codebook_and_an_edited_pinned_rule(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    shutil.copytree(ROOT / "codebooks", tmp_path / "codebooks")
    (tmp_path / "rules" / "rules.lock").unlink()
    assert run("rules", "lock", tmp_path / "rules").exit_code == 0
    assert run("rules", "check", tmp_path / "rules").exit_code == 0
    codebook = tmp_path / "codebooks" / "comment_study" / "v1.yaml"
    codebook.write_bytes(codebook.read_bytes() + b"x_reviewed: true\n")
    result = run("rules", "check", tmp_path / "rules")
    assert result.exit_code == 1 and "[codebook-released-edited]" in result.output
    assert run("rules", "lock", tmp_path / "rules").exit_code == 1  # a lock never records an edit


def test_cli_codebooks_option_names_another_folder(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    shutil.copytree(ROOT / "codebooks", tmp_path / "books")
    (tmp_path / "books" / "comment_study" / "v1.yaml").rename(tmp_path / "books" / "comment_study" / "v3.yaml")
    result = run("rules", "check", tmp_path / "rules", "--codebooks", tmp_path / "books")
    assert result.exit_code == 1
    assert "[codebook-version-mismatch]" in result.output and "[codebook-version-skipped]" in result.output
    missing = run("rules", "check", tmp_path / "rules", "--codebooks", tmp_path / "nope")
    assert missing.exit_code == 2 and "usage-codebooks-dir" in missing.output


def test_cli_base_flags_a_released_codebook_edited_since_the_git_ref(tmp_path: Path, monkeypatch) -> None:
    import os
    import subprocess

    for name in [name for name in os.environ if name.startswith("GIT_")]:
        monkeypatch.delenv(name)

    def git(*arguments: str) -> None:
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", "-C", str(tmp_path)]
            + list(arguments),
            capture_output=True,
            check=True,
        )

    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    shutil.copytree(ROOT / "codebooks", tmp_path / "codebooks")
    (tmp_path / "rules" / "rules.lock").unlink()  # git alone says what was released
    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-q", "-m", "release")
    assert run("rules", "check", tmp_path / "rules", "--base", "main").exit_code == 0
    codebook = tmp_path / "codebooks" / "comment_study" / "v1.yaml"
    codebook.write_bytes(codebook.read_bytes().replace(b"  - {rule: sarcasm, version: 1}\n", b""))
    result = run("rules", "check", tmp_path / "rules", "--base", "main")
    assert result.exit_code == 1 and "[codebook-released-edited]" in result.output and "git ref main" in result.output


def test_deleting_the_whole_codebooks_folder_is_removing_its_released_versions(tmp_path: Path) -> None:
    """A missing default codebooks folder is no project without codebooks when the lock names
    released ones: check reports them, and lock refuses rather than writing a lock without them."""
    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    shutil.copytree(ROOT / "codebooks", tmp_path / "codebooks")
    (tmp_path / "rules" / "rules.lock").unlink()
    assert run("rules", "lock", tmp_path / "rules").exit_code == 0
    lock = (tmp_path / "rules" / "rules.lock").read_bytes()
    shutil.rmtree(tmp_path / "codebooks")
    result = run("rules", "check", tmp_path / "rules")
    assert result.exit_code == 1
    assert "codebooks/comment_study/v1.yaml: [codebook-released-removed]" in result.output
    assert run("rules", "lock", tmp_path / "rules").exit_code == 1
    assert (tmp_path / "rules" / "rules.lock").read_bytes() == lock  # the released codebook stays recorded


def test_a_project_of_rules_alone_needs_no_codebooks_folder(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    (tmp_path / "rules" / "rules.lock").unlink()
    assert run("rules", "lock", tmp_path / "rules").exit_code == 0
    assert b'"codebooks"' not in (tmp_path / "rules" / "rules.lock").read_bytes()
    result = run("rules", "check", tmp_path / "rules")
    assert result.exit_code == 0 and "codebook" not in result.output


def test_base_flags_the_codebooks_folder_deleted_since_the_git_ref(tmp_path: Path, monkeypatch) -> None:
    import os
    import subprocess

    for name in [name for name in os.environ if name.startswith("GIT_")]:
        monkeypatch.delenv(name)
    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    shutil.copytree(ROOT / "codebooks", tmp_path / "codebooks")
    (tmp_path / "rules" / "rules.lock").unlink()  # git alone says what was released
    for arguments in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "release"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", "-C", str(tmp_path)]
            + arguments,
            capture_output=True,
            check=True,
        )
    shutil.rmtree(tmp_path / "codebooks")
    result = run("rules", "check", tmp_path / "rules", "--base", "main")
    assert result.exit_code == 1, result.output
    assert "[codebook-released-removed]" in result.output and "git ref main" in result.output


# --- rules check --audits: each variable of a codebook bundle is an audit of its rule ---------------

EXAMPLE_SHEETS = sorted((ROOT / "examples" / "codebook" / "sheets").glob("*.csv"))


def freeze_codebook_example(tmp_path: Path) -> tuple[Path, Path, Path]:
    """The example codebook audit frozen from a copy of the project's rules and codebooks (so a test
    may edit them): (rules folder, audits folder, bundle)."""
    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    shutil.copytree(ROOT / "codebooks", tmp_path / "codebooks")
    audits = tmp_path / "audits"
    codebook = tmp_path / "codebooks" / "comment_study" / "v1.yaml"
    frozen = run("freeze", *EXAMPLE_SHEETS, "--codebook", codebook, "--into", audits, "--quiet")
    assert frozen.exit_code == 0, frozen.output
    (bundle,) = [path for path in audits.iterdir() if path.is_dir()]
    return tmp_path / "rules", audits, bundle


def reported_metric(bundle: Path, variable: str, name: str) -> float:
    """The figure `report BUNDLE` shows for one variable's coefficient."""
    report = run("report", bundle, "--format", "json")
    assert report.exit_code == 0, report.output
    value: float = json.loads(report.stdout)["variables"][variable]["metrics"][name]["value"]
    return value


def test_a_codebook_bundle_gates_each_variable_on_the_figure_its_report_shows(tmp_path: Path) -> None:
    rules, audits, bundle = freeze_codebook_example(tmp_path)

    checked = run("rules", "check", rules, "--audits", audits, "--min-alpha", "0.7")

    assert checked.exit_code == 1, checked.output
    lines = [line for line in checked.stdout.splitlines() if "[gate-below]" in line]
    assert len(lines) == 1 and "variable product_area v1 of comment_study v1, the newest validation" in lines[0]
    alpha = reported_metric(bundle, "product_area", "krippendorff_alpha")
    assert f"krippendorff_alpha = {alpha:.4f} is below --min-alpha 0.7" in lines[0]
    assert f"{bundle.name}/manifest.json: [gate-below]" in lines[0]
    kappa = run("rules", "check", rules, "--audits", audits, "--min-kappa", "0.5")
    severity = reported_metric(bundle, "severity", "fleiss_kappa")  # three coders: Fleiss' kappa, as for a rule
    assert kappa.exit_code == 1 and f"fleiss_kappa = {severity:.4f} is below --min-kappa 0.5" in kappa.stdout


def test_a_met_gate_counts_the_codebook_bundle_as_each_rules_validation(tmp_path: Path) -> None:
    rules, audits, _ = freeze_codebook_example(tmp_path)

    checked = run("rules", "check", rules, "--audits", audits, "--min-alpha", "0.6")

    assert checked.exit_code == 0, checked.output
    assert "has no validation audit yet" not in checked.output  # every variable's rule has one


def test_a_rule_version_a_codebook_bundle_froze_is_released(tmp_path: Path) -> None:
    rules, audits, bundle = freeze_codebook_example(tmp_path)
    severity = rules / "severity" / "v1.yaml"
    severity.write_bytes(severity.read_bytes() + b"x_note: edited after the audit\n")

    checked = run("rules", "check", rules, "--audits", audits)

    assert checked.exit_code == 1
    (line,) = [line for line in checked.stdout.splitlines() if "[bundle-rule-edited]" in line]
    assert f"codebook audit bundle '{bundle.name}' was frozen with" in line and "severity/v2.yaml" in line


def codebook_manifest(rule_id: str, version: int, rule_bytes: bytes, units: str, metrics: dict) -> bytes:
    """The fields of a codebook bundle's manifest that rules check reads."""
    return json.dumps(
        {
            "format": "irr-audit-codebook-bundle/1",
            "name": "20240601T100000Z_study_v2",
            "created": "2024-06-01T10:00:00Z",
            "codebook": {"name": "study", "version": 2, "digest": "sha256:0", "file": "codebook/study/v2.yaml"},
            "rules": [{"id": rule_id, "version": version, "digest": digest(rule_bytes), "file": "rule/x.yaml"}],
            "units": {"count": 3, "ids_sha256": units},
            "score": {"variables": {rule_id: {"score": {"metrics": metrics}, "cells": {}}}},
        }
    ).encode("utf-8")


def test_a_codebook_variable_on_a_rule_audits_units_is_a_recoding_to_mark() -> None:
    v1, v2 = rule_text(), rule_text(2, changelog=SECOND, definition="Now.")
    metrics = {"cohen_kappa": {"value": 0.9, "defined": True}}
    manifests = {
        "audits/a/manifest.json": manifest("a", v1, 1, units="units-a"),
        "audits/c/manifest.json": codebook_manifest("explicit_current_failure", 2, v2, "units-a", metrics),
    }

    result = check_rules({key(1): v1, key(2): v2}, manifests=manifests)

    assert codes_of(list(result.problems)) == ["same-units-not-recoded"]
    problem = result.problems[0]
    assert (
        problem.file == "audits/c/manifest.json" and "variable explicit_current_failure v2 of study v2" in problem.what
    )
    assert "new sample" in problem.fix and "irr-audit freeze ... --codebook ... --recodes audits/a." in problem.fix


def test_a_codebook_manifest_without_a_variables_score_is_reported() -> None:
    v1 = rule_text()
    broken = json.loads(codebook_manifest("explicit_current_failure", 1, v1, "units-a", {}))
    broken["score"]["variables"] = {}
    manifests = {"audits/c/manifest.json": json.dumps(broken).encode("utf-8")}

    result = check_rules({key(1): v1}, manifests=manifests)

    assert codes_of(list(result.problems)) == ["bundle-manifest-invalid"]
    assert "irr-audit-codebook-bundle/1" in result.problems[0].what
    assert "explicit_current_failure" in result.problems[0].what
