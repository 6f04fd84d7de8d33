"""One coder's sheet given for two coders: the same file under two paths (a symbolic or a hard
link, ``./x`` and ``x``, a path through a linked folder) is refused by every command and by the
library, since it would score one coder's codes as two coders agreeing perfectly; a byte-identical
copy (or two equal DataFrames) is audited with a warning in every output; the same DataFrame
object for two coders is refused."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import irr_audit
from irr_audit.cli import app

ROOT = Path(__file__).resolve().parents[1]
RULE = ROOT / "rules" / "explicit_current_failure" / "v1.yaml"
CODEBOOK = ROOT / "codebooks" / "comment_study" / "v1.yaml"
EXAMPLE = ROOT / "examples" / "sheets" / "alice.csv"
CODEBOOK_EXAMPLE = ROOT / "examples" / "codebook" / "sheets" / "alice.csv"


def run(*args: object):
    return CliRunner().invoke(app, [str(arg) for arg in args], catch_exceptions=False)


def symlink(first: Path) -> Path:
    other = first.with_name(f"bob{first.suffix}")
    other.symlink_to(first.name)
    return other


def hard_link(first: Path) -> Path:
    other = first.with_name(f"bob{first.suffix}")
    os.link(first, other)
    return other


def dotted(first: Path) -> Path:
    return Path(os.path.relpath(first.parent)) / "." / first.name  # the same file, its path spelled apart


def through_linked_folder(first: Path) -> Path:
    folder = first.parent / "linked"
    folder.symlink_to(first.parent, target_is_directory=True)
    return folder / first.name


LINKS: dict[str, Callable[[Path], Path]] = {
    "symbolic link": symlink,
    "hard link": hard_link,
    "./x and x": dotted,
    "a linked folder": through_linked_folder,
}


@pytest.fixture
def inside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def refused(result, first: Path, second: Path) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.stderr.startswith(
        f"Error [usage-same-sheet]: sheets {first} and {Path(second)} are one file (a link, or two paths to the "
        "same file): its codes would be scored as two coders agreeing perfectly."
    ), result.stderr
    assert "Hint: pass each coder's own sheet once" in result.stderr


@pytest.mark.parametrize("link", LINKS.values(), ids=LINKS.keys())
@pytest.mark.parametrize(
    "command",
    [
        ("score", "--rule", RULE),
        ("report", "--rule", RULE),
        ("join", "--rule", RULE, "--out", "joined"),
        ("freeze", "--rule", RULE, "--into", "audits"),
    ],
    ids=["score", "report", "join", "freeze"],
)
def test_one_file_for_two_coders_is_refused_by_every_command(
    inside: Path, link: Callable[[Path], Path], command: tuple[object, ...]
) -> None:
    first = Path("alice.csv")
    shutil.copy(EXAMPLE, inside / first)
    second = link(first)
    refused(run(command[0], first, second, *command[1:]), first, second)
    assert not (inside / "joined").exists() and not (inside / "audits").exists()


@pytest.mark.parametrize("link", LINKS.values(), ids=LINKS.keys())
def test_one_file_for_two_coders_is_refused_in_a_codebook_audit(inside: Path, link: Callable[[Path], Path]) -> None:
    first = Path("alice.csv")
    shutil.copy(CODEBOOK_EXAMPLE, inside / first)
    second = link(first)
    refused(run("score", first, second, "--codebook", CODEBOOK), first, second)


@pytest.mark.parametrize("link", LINKS.values(), ids=LINKS.keys())
def test_the_library_refuses_one_file_for_two_coders(inside: Path, link: Callable[[Path], Path]) -> None:
    first = Path("alice.csv")
    shutil.copy(EXAMPLE, inside / first)
    second = link(first)
    with pytest.raises(irr_audit.UsageError) as audit_error:
        irr_audit.audit([first, second], RULE)
    assert audit_error.value.code == "usage-same-sheet"
    with pytest.raises(irr_audit.UsageError) as join_error:
        irr_audit.join_folder([str(first), str(second)], RULE, inside / "joined")
    assert join_error.value.code == "usage-same-sheet"
    assert not (inside / "joined").exists()


def test_the_same_path_twice_is_one_file_too(inside: Path) -> None:
    shutil.copy(EXAMPLE, inside / "alice.csv")
    refused(run("score", "alice.csv", "alice.csv", "--rule", RULE), Path("alice.csv"), Path("alice.csv"))


def test_two_copies_of_one_sheet_are_audited_with_a_warning_everywhere(inside: Path) -> None:
    """A copy cannot be told from two coders who entered the very same rows; but it is the likelier
    cause, and it makes agreement perfect by itself: every output says so."""
    shutil.copy(EXAMPLE, inside / "alice.csv")
    shutil.copy(EXAMPLE, inside / "dave.csv")
    warning = "sheets alice.csv (coder 'alice') and dave.csv (coder 'dave') hold the very same bytes"
    result = run("score", "alice.csv", "dave.csv", "--rule", RULE, "--format", "json")
    assert result.exit_code == 0, result.output
    assert warning in result.stderr
    assert any(text.startswith(warning) for text in json.loads(result.stdout)["warnings"])
    audited = irr_audit.audit(["alice.csv", "dave.csv"], RULE)
    assert any(text.startswith(warning) for text in audited.warnings)
    assert warning in audited.to_markdown()


def test_different_sheets_carry_no_such_warning(inside: Path) -> None:
    audited = irr_audit.audit([ROOT / "examples" / "sheets" / name for name in ("alice.csv", "bob.csv")], RULE)
    assert not any("very same bytes" in text for text in audited.warnings)


def test_one_dataframe_for_two_coders_is_refused() -> None:
    frame = pd.DataFrame({"comment_id": ["a", "b", "c"], "code": ["yes", "no", "yes"]})
    with pytest.raises(irr_audit.UsageError) as error:
        irr_audit.audit({"ann": frame, "ben": frame}, RULE)
    assert error.value.code == "usage-same-sheet"
    assert "the DataFrames of coders 'ann' and 'ben' are one DataFrame" in error.value.message


def test_equal_dataframes_warn_as_equal_files_do() -> None:
    frame = pd.DataFrame({"comment_id": ["a", "b", "c"], "code": ["yes", "no", "yes"]})
    audited = irr_audit.audit({"ann": frame, "ben": frame.copy()}, RULE)
    warning = "ann.csv (coder 'ann') and ben.csv (coder 'ben') hold the very same bytes"
    assert any(warning in text for text in audited.warnings)


def test_a_hard_link_to_an_export_is_the_export_given_twice(inside: Path) -> None:
    export = inside / "labels.jsonl"
    shutil.copy(ROOT / "tests" / "fixtures" / "importers" / "model" / "labels.jsonl", export)
    os.link(export, inside / "again.jsonl")
    result = run("import", "model", export, inside / "again.jsonl", "--rule", RULE, "--out", inside / "imported")
    assert result.exit_code == 2, result.output
    assert "Error [usage-import-twice]" in result.stderr


def test_one_dataframe_for_two_coders_is_refused_in_a_codebook_audit() -> None:
    frame = pd.read_csv(CODEBOOK_EXAMPLE, dtype=str, keep_default_na=False)
    with pytest.raises(irr_audit.UsageError) as error:
        irr_audit.audit_codebook({"ann": frame, "ben": frame}, CODEBOOK)
    assert error.value.code == "usage-same-sheet"


def test_coders_named_alike_but_for_case_are_audited_with_a_warning() -> None:
    """`Alice` (a file's name) and `alice` (another sheet's coder column) are two coders to the
    audit, as their names say; that they may be one person is said, not decided."""
    ann = pd.DataFrame({"comment_id": ["a", "b", "c"], "code": ["yes", "no", "yes"]})
    ben = pd.DataFrame({"comment_id": ["a", "b", "c"], "code": ["yes", "yes", "yes"]})
    audited = irr_audit.audit({"Alice": ann, "ALİCE": ben, "alice": ann.copy()}, RULE)  # İ folds to i̇, not i
    warning = "coders 'Alice' (Alice.csv) and 'alice' (alice.csv) differ only in case or spacing"
    assert sum(text.startswith("coders ") for text in audited.warnings) == 1
    assert any(text.startswith(warning) for text in audited.warnings)
