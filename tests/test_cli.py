"""Bad input through the CLI: exit 2, one clean message naming the file and the fix."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from irr_audit.cli import app

ROOT = Path(__file__).resolve().parents[1]
RULE = str(ROOT / "rules" / "explicit_current_failure" / "v1.yaml")
GOOD = "comment_id,code\na,yes\nb,no\n"


def run(*args: str):
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def sheet(tmp_path: Path, name: str, content: str | bytes) -> str:
    path = tmp_path / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return str(path)


# (file name, content, exact first line of the message on stderr)
BAD_SHEETS = {
    "missing id column": (
        "alice.csv",
        "id,code,note\na,yes,\n",
        'Error [sheet-missing-column]: sheet alice.csv has no column "comment_id".',
    ),
    "missing code column": (
        "alice.csv",
        "comment_id,label\na,yes\n",
        'Error [sheet-missing-column]: sheet alice.csv has no column "code".',
    ),
    "empty file": ("alice.csv", "", "Error [sheet-empty]: sheet alice.csv is empty."),
    "header only": (
        "alice.csv",
        "comment_id,code\n",
        "Error [sheet-empty]: sheet alice.csv has a header but no coded rows.",
    ),
    "unsupported type": (
        "alice.ods",
        "whatever",
        "Error [sheet-unsupported-type]: sheet alice.ods has an unsupported file type '.ods'.",
    ),
    "not utf-8": (
        "alice.csv",
        "comment_id,code\nr\u00e9sum\u00e9,yes\n".encode("cp1252"),
        "Error [sheet-encoding]: sheet alice.csv is not UTF-8 text: byte 17 (line 2) is not UTF-8; "
        "it looks like Windows-1252 (Latin-1), as Excel writes 'CSV' on Windows.",
    ),
    "binary named csv": (
        "alice.csv",
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
        "Error [sheet-binary]: sheet alice.csv contains NUL bytes (first at byte 8); it is a binary file "
        "or UTF-16 without a byte-order mark, not a text sheet.",
    ),
    "ragged row": (
        "alice.csv",
        "comment_id,code\na,yes,extra\n",
        "Error [sheet-ragged]: sheet alice.csv row 2 has 3 cells but the header has 2.",
    ),
    "two coders in one sheet": (
        "alice.csv",
        "comment_id,code,coder\na,yes,alice\nb,no,bob\n",
        "Error [sheet-several-coders]: sheet alice.csv names more than one coder in its coder column: "
        "'alice' (row 2) and 'bob' (row 3).",
    ),
    "broken xlsx": (
        "alice.xlsx",
        "not a zip",
        "Error [sheet-malformed]: sheet alice.xlsx is not a readable XLSX workbook "
        "(BadZipFile: File is not a zip file).",
    ),
    "jsonl not an object": (
        "alice.jsonl",
        '["a", "yes"]\n',
        "Error [sheet-malformed]: sheet alice.jsonl line 1 is a JSON list, not an object.",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_SHEETS), ids=sorted(BAD_SHEETS))
def test_bad_sheet_exits_2_with_a_message(case: str, tmp_path: Path) -> None:
    name, content, message = BAD_SHEETS[case]
    bad = sheet(tmp_path, name, content)
    before = Path(bad).read_bytes()
    result = run("score", bad, sheet(tmp_path, "bob.csv", GOOD), "--rule", RULE)
    assert result.exit_code == 2
    assert result.stderr.splitlines()[0] == message
    assert "Hint:" in result.stderr or "Columns found" in result.stderr or "Hint" not in message
    assert result.stdout == ""
    assert Path(bad).read_bytes() == before


def test_missing_column_lists_the_columns_found(tmp_path: Path) -> None:
    result = run(
        "score",
        sheet(tmp_path, "alice.csv", "id,code,note\na,yes,\n"),
        sheet(tmp_path, "bob.csv", GOOD),
        "--rule",
        RULE,
    )
    assert result.stderr.splitlines()[1:] == [
        "  Columns found: id, code, note",
        "  Hint: pass --id-column NAME, or rename the column (if the first row is data, add a header row "
        "comment_id,code).",
    ]


def test_id_column_option(tmp_path: Path) -> None:
    result = run(
        "score",
        sheet(tmp_path, "alice.csv", "ID ,Label\na,yes\nb,no\n"),
        sheet(tmp_path, "bob.csv", "id,label\na,yes\nb,no\n"),
        "--rule",
        RULE,
        "--id-column",
        "id",
        "--code-column",
        "label",
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.output
    assert '"fully_coded": 2' in result.stdout


def test_missing_file(tmp_path: Path) -> None:
    result = run("score", str(tmp_path / "nope.csv"), sheet(tmp_path, "bob.csv", GOOD), "--rule", RULE)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error [sheet-not-found]: sheet {tmp_path / 'nope.csv'} does not exist.")


def test_one_sheet_only(tmp_path: Path) -> None:
    result = run("score", sheet(tmp_path, "alice.csv", GOOD), "--rule", RULE)
    assert result.exit_code == 2
    assert result.stderr.startswith("Error [usage-one-sheet]: agreement needs two or more coding sheets; got 1.")


def test_same_coder_twice(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    result = run("score", sheet(tmp_path, "alice.csv", GOOD), sheet(tmp_path, "x/alice.csv", GOOD), "--rule", RULE)
    assert result.exit_code == 2
    assert "both belong to coder 'alice'" in result.stderr


def test_sheets_without_rule(tmp_path: Path) -> None:
    result = run("score", sheet(tmp_path, "alice.csv", GOOD), sheet(tmp_path, "bob.csv", GOOD))
    assert result.exit_code == 2
    assert "Error [usage-missing-rule]" in result.stderr


def test_folder_that_is_not_a_join(tmp_path: Path) -> None:
    result = run("score", str(tmp_path))
    assert result.exit_code == 2
    assert "not one written by irr-audit join" in result.stderr


def test_join_folder_detects_a_changed_sheet(tmp_path: Path) -> None:
    alice, bob = sheet(tmp_path, "alice.csv", GOOD), sheet(tmp_path, "bob.csv", GOOD)
    assert run("join", alice, bob, "--rule", RULE, "--out", str(tmp_path / "out")).exit_code == 0
    Path(bob).write_text(GOOD.replace("b,no", "b,yes"))
    result = run("score", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert "changed since it was joined" in result.stderr


def test_user_text_is_not_read_as_markup(tmp_path: Path) -> None:
    text = "comment_id,code\n[bold]x[/bold],yes\n[red],no\n"
    marked = sheet(tmp_path, "[bold]ann.csv", text)
    result = run("score", marked, sheet(tmp_path, "bob.csv", text), "--rule", RULE)
    assert result.exit_code == 0
    assert "[bold]ann" in result.stdout
    result = run(
        "report", marked, sheet(tmp_path, "bob.csv", text.replace(",no", ",yes")), "--rule", RULE, "--format", "md"
    )
    assert "| \\[red\\] | no | yes |" in result.stdout


def test_report_json_and_markdown_are_byte_stable(tmp_path: Path) -> None:
    sheets = [str(ROOT / "examples" / "sheets" / n) for n in ("alice.csv", "bob.csv")]
    for fmt in ("json", "md"):
        first = run("report", *sheets, "--rule", RULE, "--format", fmt).stdout
        second = run("report", *sheets, "--rule", RULE, "--format", fmt, "--output", str(tmp_path / f"r.{fmt}"))
        assert second.exit_code == 0
        assert (tmp_path / f"r.{fmt}").read_text() == first
        assert (
            hashlib.sha256(first.encode()).hexdigest()
            == hashlib.sha256(run("report", *sheets, "--rule", RULE, "--format", fmt).stdout.encode()).hexdigest()
        )


def test_python_dash_m_works() -> None:
    result = subprocess.run([sys.executable, "-m", "irr_audit", "--version"], capture_output=True, text=True)
    assert result.returncode == 0
    assert result.stdout.startswith("irr-audit ")


def test_unknown_option_is_a_usage_error() -> None:
    result = run("score", "--no-such-option")
    assert result.exit_code == 2


def test_progress_goes_to_stderr_never_into_json(monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    import irr_audit.cli.progress

    monkeypatch.setattr(irr_audit.cli.progress, "wanted", lambda quiet: not quiet)  # as if stderr were a terminal
    sheets = [str(ROOT / "examples" / "sheets" / n) for n in ("alice.csv", "bob.csv")]
    result = run("score", *sheets, "--rule", RULE, "--format", "json", "--bootstrap", "50", "--seed", "1")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["units"]["fully_coded"] == 20


def test_progress_is_silent_when_stderr_is_not_a_terminal() -> None:
    from irr_audit.cli.progress import Steps, steps, wanted

    assert wanted(quiet=True) is False
    with steps(False) as progress:
        assert type(progress) is Steps
        progress.step("nothing is shown")


def test_a_rule_given_with_a_join_folder_must_be_its_rule(tmp_path: Path) -> None:
    alice, bob = sheet(tmp_path, "alice.csv", GOOD), sheet(tmp_path, "bob.csv", GOOD)
    assert run("join", alice, bob, "--rule", RULE, "--out", str(tmp_path / "out")).exit_code == 0
    assert run("score", str(tmp_path / "out"), "--rule", RULE).exit_code == 0  # the same rule: fine
    other = tmp_path / "v1.yaml"
    other.write_text(Path(RULE).read_text().replace("First version.", "First version, reworded."))
    result = run("score", str(tmp_path / "out"), "--rule", str(other))
    assert result.exit_code == 2
    assert "Error [usage-rule-mismatch]" in result.stderr and "leave --rule out" in result.stderr
