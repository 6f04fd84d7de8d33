"""`irr-audit rules check | lock` on codebooks: a codebook version pins its rules' versions,
a released codebook never changes, nor do the rule versions it pinned."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from typer.testing import CliRunner

from irr_audit.cli import app
from irr_audit.rules.codebook_revisions import check_codebooks
from irr_audit.rules.lock import codebook_lock_entries, lock_entries, parse_lock_codebooks, render_lock
from irr_audit.rules.revisions import Baseline

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
