"""Each command's --help says what the option does in that command, not in another one."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from irr_audit.cli import app


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
