"""`rules check`: a new version's changelog says what changed and why, apart."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from irr_audit.cli import app
from irr_audit.rules.revisions import check_rules

RULE = "explicit_current_failure"
V1 = (Path(__file__).resolve().parents[1] / "rules" / RULE / "v1.yaml").read_bytes()


def revised(changelog: object) -> bytes:
    document = yaml.safe_load(V1)
    document.update(version=2, changelog=changelog)
    return yaml.safe_dump(document, sort_keys=False).encode("utf-8")


def problems(changelog: object) -> list[tuple[str, str, str]]:
    result = check_rules({f"{RULE}/v1.yaml": V1, f"{RULE}/v2.yaml": revised(changelog)})
    return [(problem.code, problem.what, problem.fix) for problem in result.problems]


def test_a_one_line_changelog_is_a_problem_whose_fix_keeps_the_line():
    [(code, what, fix)] = problems("Sharper definition of yes.")
    assert code == "changelog-incomplete"
    assert "one piece of text" in what and "what changed and why" in what
    assert fix == 'write it as `changelog: {summary: "Sharper definition of yes.", why: the disagreement it resolves}`.'


def test_a_long_text_changelog_is_shortened_in_the_fix():
    [(_, _, fix)] = problems("word " * 60)
    assert "..." in fix and len(fix) < 200


@pytest.mark.parametrize("why", ["TBD", "n/a", "-", "...", "  todo  ", None, ""])
def test_a_changelog_without_a_reason_is_a_problem(why):
    [(code, what, fix)] = problems({"summary": "Fixed crashes are no.", "why": why})
    assert code == "changelog-incomplete"
    assert "why (why it changed)" in what and fix == "add changelog.why as text."


def test_a_reason_that_repeats_the_summary_is_a_problem():
    [(code, what, _)] = problems({"summary": "Fixed crashes are no.", "why": "fixed crashes are no"})
    assert code == "changelog-incomplete" and "repeats its summary" in what


def test_what_and_why_pass():
    assert problems({"summary": "Fixed crashes are no.", "why": "Coders split on fixed crashes (9 of 12)."}) == []


def test_a_first_version_may_keep_one_line():
    assert check_rules({f"{RULE}/v1.yaml": V1}).clean


def test_cli_names_the_file_and_the_fix(tmp_path: Path):
    folder = tmp_path / "rules" / RULE
    folder.mkdir(parents=True)
    (folder / "v1.yaml").write_bytes(V1)
    (folder / "v2.yaml").write_bytes(revised("Sharper."))
    result = CliRunner().invoke(app, ["rules", "check", str(tmp_path / "rules")], catch_exceptions=False)
    assert result.exit_code == 1
    assert f"{folder / 'v2.yaml'}: [changelog-incomplete]" in result.stdout
    assert 'Fix: write it as `changelog: {summary: "Sharper.", why:' in result.stdout
