"""`freeze --codebook --recodes OLD`: a codebook audit that codes again the units of an earlier
bundle (a codebook's of the same codebook, or a rule's of one of its variables) under revised
rules records the re-coding per revised variable, and `rules check --audits` accepts the same
units for those variables' new versions; what cannot be a re-coding is refused by name."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from irr_audit.cli import app
from tests.test_manifest_values import manifest_of, rewrite_manifest

ROOT = Path(__file__).resolve().parents[1]
SHEETS = sorted((ROOT / "examples" / "codebook" / "sheets").glob("*.csv"))
REVISED = {
    "definition: A task is slowed or needs a workaround.": "definition: A task is slowed, or needs a named workaround.",
    "version: 1": "version: 2",
    "changelog: First version.": "changelog: {summary: moderate needs a named workaround, why: coders split on it}",
}


def run(*args: object):
    return CliRunner().invoke(app, [str(arg) for arg in args], catch_exceptions=False)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The project's rules and codebook, with severity revised (v2) and a codebook v2 pinning it."""
    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    shutil.copytree(ROOT / "codebooks", tmp_path / "codebooks")
    (tmp_path / "rules" / "rules.lock").unlink()
    text = (tmp_path / "rules" / "severity" / "v1.yaml").read_text()
    for old, new in REVISED.items():
        text = text.replace(old, new, 1)
    (tmp_path / "rules" / "severity" / "v2.yaml").write_text(text)
    book = (tmp_path / "codebooks" / "comment_study" / "v1.yaml").read_text()
    book = book.replace("version: 1\n", "version: 2\n", 1).replace(
        "{rule: severity, version: 1}", "{rule: severity, version: 2}"
    )
    book = book.replace("changelog: First version.", "changelog: {summary: severity v2, why: coders split on moderate}")
    (tmp_path / "codebooks" / "comment_study" / "v2.yaml").write_text(book)
    return tmp_path


def codebook(project: Path, version: int) -> Path:
    return project / "codebooks" / "comment_study" / f"v{version}.yaml"


def recoded_sheets(project: Path, rows: int | None = None) -> list[Path]:
    """The example's sheets coded again (bob changes his mind once), of the first ``rows`` units."""
    folder = project / "recoded"
    folder.mkdir(exist_ok=True)
    for sheet in SHEETS:
        lines = sheet.read_text(encoding="utf-8").splitlines(keepends=True)
        text = "".join(lines[: rows + 1] if rows else lines)
        if sheet.stem == "bob":
            text = text.replace(",moderate,", ",minor,", 1)
        (folder / sheet.name).write_text(text, encoding="utf-8")
    return sorted(folder.glob("*.csv"))


def freeze(*args: object) -> Path:
    frozen = run("freeze", *args, "--quiet")
    assert frozen.exit_code == 0, frozen.output
    return Path(frozen.stdout.strip().split("  ", 1)[1])


def v1_bundle(project: Path) -> Path:
    return freeze(*SHEETS, "--codebook", codebook(project, 1), "--into", project / "audits")


def test_a_codebook_recoding_is_recorded_per_revised_variable_and_rules_check_accepts_it(project: Path) -> None:
    old = v1_bundle(project)
    freeze(*recoded_sheets(project), "--codebook", codebook(project, 2), "--into", project / "other")
    shutil.copytree(old, project / "other" / old.name)
    checked = run("rules", "check", project / "rules", "--audits", project / "other")
    assert checked.exit_code == 1 and "[same-units-not-recoded]" in checked.stdout  # without the mark
    assert f"--codebook ... --recodes {project / 'other' / old.name}" in " ".join(checked.stdout.split())
    shutil.rmtree(project / "recoded")

    new = freeze(*recoded_sheets(project), "--codebook", codebook(project, 2), "--into", project / "audits",
                 "--recodes", old)  # fmt: skip

    recodes = manifest_of(new)["recodes"]
    assert recodes == {
        "bundle": old.name,
        "ids_sha256": manifest_of(old)["units"]["ids_sha256"],
        "codebook": {"name": "comment_study", "version": 1},
        "variables": {"severity": {"from": 1, "to": 2}},  # the variables whose rule was not revised are not listed
    }
    assert run("verify", new).exit_code == 0
    checked = run("rules", "check", project / "rules", "--audits", project / "audits")
    assert checked.exit_code == 0, checked.output


def test_a_rules_bundle_of_one_variable_can_be_recoded_within_the_codebook(project: Path) -> None:
    rule = project / "rules" / "severity" / "v1.yaml"
    old = freeze(*SHEETS, "--rule", rule, "--code-column", "severity", "--into", project / "audits")

    new = freeze(*recoded_sheets(project), "--codebook", codebook(project, 2), "--into", project / "audits",
                 "--recodes", old)  # fmt: skip

    recodes = manifest_of(new)["recodes"]
    assert recodes["bundle"] == old.name and recodes["codebook"] is None
    assert recodes["variables"] == {"severity": {"from": 1, "to": 2}}
    checked = run("rules", "check", project / "rules", "--audits", project / "audits")
    assert checked.exit_code == 0, checked.output


def refused(project: Path, sheets: list[Path], book: Path, old: Path, code: str) -> str:
    result = run("freeze", *sheets, "--codebook", book, "--into", project / "refused", "--recodes", old)
    assert result.exit_code == 2, result.output
    assert f"Error [{code}]: --recodes {old}" in result.stderr
    assert not (project / "refused").exists()
    return " ".join(result.stderr.split())


def test_no_rule_revised_is_no_recoding(project: Path) -> None:
    old = v1_bundle(project)
    said = refused(project, recoded_sheets(project), codebook(project, 1), old, "usage-recodes-codebook")
    assert "comment_study v1 revises no rule that bundle audited" in said and "leave out --recodes" in said


def test_other_units_are_no_recoding(project: Path) -> None:
    old = v1_bundle(project)
    said = refused(project, recoded_sheets(project, rows=5), codebook(project, 2), old, "usage-recodes-units")
    assert "audited other units than these sheets (26 units there, 5 here; Jaccard index" in said


def test_another_codebook_is_no_recoding(project: Path) -> None:
    old = v1_bundle(project)
    other = project / "codebooks" / "other" / "v1.yaml"
    other.parent.mkdir()
    other.write_text("codebook: other\nversion: 1\nrules:\n  - {rule: sarcasm, version: 1}\n")
    said = refused(project, recoded_sheets(project), other, old, "usage-recodes-codebook")
    assert "is an audit of the codebook comment_study, not other" in said


def test_a_rule_that_is_no_variable_is_no_recoding(project: Path) -> None:
    rule = project / "rules" / "explicit_current_failure" / "v1.yaml"
    sheets = [ROOT / "examples" / "sheets" / "alice.csv", ROOT / "examples" / "sheets" / "bob.csv"]
    other = project / "codebooks" / "other" / "v1.yaml"
    other.parent.mkdir()
    other.write_text("codebook: other\nversion: 1\nrules:\n  - {rule: sarcasm, version: 1}\n")
    old = freeze(*sheets, "--rule", rule, "--into", project / "audits")
    said = refused(project, recoded_sheets(project), other, old, "usage-recodes-rule")
    assert "is an audit of rule explicit_current_failure, which is no variable of other v1" in said


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (lambda recodes: recodes["variables"].update(severity={"from": 2, "to": 2}), "recodes.variables.severity must"),
        (lambda recodes: recodes["variables"].update(sarcasm={"from": 1, "to": 2}), "recodes.variables.sarcasm must"),
        (lambda recodes: recodes.update(variables={}), "recodes must be null or name a bundle"),
        (lambda recodes: recodes.update(bundle="../elsewhere"), "recodes must be null or name a bundle"),
    ],
)
def test_a_tampered_recodes_entry_fails_verify(project: Path, edit, problem: str) -> None:
    old = v1_bundle(project)
    new = freeze(*recoded_sheets(project), "--codebook", codebook(project, 2), "--into", project / "audits",
                 "--recodes", old)  # fmt: skip
    manifest = manifest_of(new)
    edit(manifest["recodes"])
    rewrite_manifest(new, manifest)

    verified = run("verify", new)

    assert verified.exit_code == 1 and f"manifest: manifest.json: {problem}" in verified.stdout, verified.stdout
    assert run("labels", new).exit_code == 2


def test_rules_check_reads_the_recodes_of_each_variable(project: Path) -> None:
    """A re-coding marked for one variable does not mark another variable revised in the same bundle."""
    old = v1_bundle(project)
    new = freeze(*recoded_sheets(project), "--codebook", codebook(project, 2), "--into", project / "audits",
                 "--recodes", old)  # fmt: skip
    manifest = manifest_of(new)
    assert json.dumps(manifest["recodes"]["variables"]) == '{"severity": {"from": 1, "to": 2}}'
    manifest["recodes"] = None
    rewrite_manifest(new, manifest)  # as if it had been frozen without --recodes

    checked = run("rules", "check", project / "rules", "--audits", project / "audits")

    assert checked.exit_code == 1 and "variable severity v2 of comment_study v2" in checked.stdout
