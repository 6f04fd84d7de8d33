"""Each command's --help says what the option does in that command, not in another one."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from irr_audit.cli import app
from tests.conftest import run


def help_of(*command: str) -> str:
    """The --help text with its line wrapping undone, so a phrase is found across lines."""
    result = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


def test_import_help_names_every_format() -> None:
    text = help_of("import")
    for name in ("label-studio,", "label-studio-min", "label-studio-csv", "prodigy", "doccano", "argilla", "model."):
        assert name in text


def test_adjudicate_digests_appends_the_record_not_the_bundle() -> None:
    text = help_of("adjudicate")
    assert "append the new adjudication record's digest" in text
    assert "append this bundle's digest" not in text
    assert "append this bundle's digest" in help_of("freeze")


def test_counts_alias_promises_no_record_counts_does_not_write() -> None:
    text = help_of("counts")
    alias = "--alias RAW=CODE Read the value RAW as the rule's CODE in this run, e.g. --alias 1=yes (repeatable)."
    assert alias in text
    assert "summary.json" not in text


@pytest.mark.parametrize(("command", "files"), [("sample", "a .csv dataset"), ("counts", "a .csv table")])
def test_delimiter_help_names_the_file_it_splits(command: str, files: str) -> None:
    text = help_of(command)
    assert f"The delimiter of {files}:" in text
    assert ".csv sheets" not in text


# --- every Markdown output: one blank line between blocks, one newline at the end --------------

ROOT = Path(__file__).resolve().parents[1]
RULE = ROOT / "rules" / "explicit_current_failure" / "v1.yaml"
CODEBOOK = ["--codebook", str(ROOT / "codebooks" / "comment_study" / "v1.yaml"), "--rules", str(ROOT / "rules")]
TABLES = ROOT / "tests" / "fixtures" / "tables"


def stdout_of(*args: object) -> str:
    result = run(*args)
    assert result.exit_code == 0, result.output
    return result.stdout


def bundle_of(into: Path, *args: object) -> str:
    """The bundle freeze made (the path on its digest line)."""
    return stdout_of("freeze", *args, "--into", into, "-q").split()[1]


@pytest.fixture(scope="module")
def markdown_outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Every Markdown document the CLI writes: a report of sheets, a join folder, a bundle with an
    adjudication, counts, a table, a count matrix, a codebook (sheets, bundle) and both comparisons."""
    work = tmp_path_factory.mktemp("markdown")
    sheets = sorted((ROOT / "examples" / "sheets").glob("*.csv"))
    book_sheets = sorted((ROOT / "examples" / "codebook" / "sheets").glob("*.csv"))
    stdout_of("join", *sheets, "--rule", RULE, "--out", work / "joined", "-q")
    bundle = bundle_of(work / "audits", *sheets, "--rule", RULE)
    decisions = ROOT / "examples" / "walkthrough" / "decisions.csv"
    stdout_of("adjudicate", bundle, "--decisions", decisions, "--by", "alice and bob", "-q")
    book_bundle = bundle_of(work / "book_audits", *book_sheets, *CODEBOOK)
    report = ("report", "--format", "md", "-q")
    return {
        "sheets": stdout_of(*report, *sheets, "--rule", RULE),
        "join folder, bootstrap, drift, compared": stdout_of(
            *report, work / "joined", "--bootstrap", "100", "--seed", "1", "--windows", "2", "--compare", bundle
        ),
        "bundle": stdout_of(*report, bundle),
        "counts": stdout_of(*report, "--counts", work / "joined" / "counts.csv", "--rule", RULE),
        "table": stdout_of(
            *report, "--table", TABLES / "abstractors_table.csv", "--rule", TABLES / "abstractors_rule.yaml"
        ),
        "count matrix": stdout_of(
            *report,
            "--category-counts",
            TABLES / "fleiss1971_category_counts.csv",
            "--rule",
            TABLES / "fleiss1971_rule.yaml",
        ),
        "codebook": stdout_of(*report, *book_sheets, *CODEBOOK),
        "codebook bundle": stdout_of(*report, book_bundle),
        "compare": stdout_of("compare", work / "joined", bundle, "--format", "md", "--bootstrap", "100", "--seed", "1"),
        "codebook compare": stdout_of(
            "compare", book_bundle, book_bundle, "--format", "md", "--bootstrap", "100", "--seed", "1"
        ),
    }


@pytest.mark.parametrize(
    "name",
    [
        "sheets",
        "join folder, bootstrap, drift, compared",
        "bundle",
        "counts",
        "table",
        "count matrix",
        "codebook",
        "codebook bundle",
        "compare",
        "codebook compare",
    ],
)
def test_markdown_has_single_blank_lines_and_one_final_newline(markdown_outputs: dict[str, str], name: str) -> None:
    text = markdown_outputs[name]
    lines = text.split("\n")
    doubled = [number for number, line in enumerate(lines[:-2], 1) if line == lines[number] == ""]
    assert doubled == [], f"{name}: a doubled blank line after line(s) {doubled[:5]}"
    assert text.endswith("\n") and not text.endswith("\n\n"), f"{name}: not one final newline"
    assert not text.startswith("\n")
    assert [line for line in lines if line != line.rstrip()] == [], f"{name}: trailing spaces"
