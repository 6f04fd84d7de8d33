"""The command line's prefetch (irr_audit.prefetch): a sheet parsed in the background
is used only while it is the same, unchanged file; otherwise it is read as usual."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from irr_audit import prefetch
from irr_audit.errors import SheetError
from irr_audit.sheets import read_sheet, read_table


@pytest.fixture(autouse=True)
def no_leftovers():
    prefetch._pending.clear()
    yield
    prefetch._pending.clear()


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def settle() -> None:
    """Wait for every background parse to finish."""
    for future in prefetch._pending.values():
        future.exception()


def test_a_prefetched_sheet_is_taken_once(tmp_path: Path) -> None:
    sheet = write(tmp_path / "ann.csv", "comment_id,code\nc1,yes\nc2,no\n")
    prefetch.start(["score", str(sheet), "--rule", "rule.yaml"])
    settle()
    assert prefetch.take(sheet) is not None
    assert prefetch.take(sheet) is None  # handed over once; a second read reads the file
    assert read_sheet(sheet).comment_ids.to_pylist() == ["c1", "c2"]


def test_only_sheets_of_the_commands_that_read_them_are_prefetched(tmp_path: Path) -> None:
    sheet = write(tmp_path / "ann.csv", "comment_id,code\nc1,yes\n")
    for arguments in (["sample", str(sheet)], ["score", str(tmp_path / "absent.csv")], ["score", "a\0.csv"],
                      ["score", str(tmp_path)], []):
        prefetch.start(arguments)
    assert not prefetch._pending


def test_a_sheet_changed_after_its_prefetch_is_read_again(tmp_path: Path) -> None:
    sheet = write(tmp_path / "ann.csv", "comment_id,code\nc1,yes\n")
    prefetch.start(["report", str(sheet)])
    settle()
    write(sheet, "comment_id,code\nc1,no\nc2,yes\n")
    os.utime(sheet, ns=(1, 2))  # a different modification time, whatever the clock's resolution
    read = read_sheet(sheet)
    assert read.codes.to_pylist() == ["no", "yes"]


def test_a_sheet_whose_prefetch_failed_is_reported_as_always(tmp_path: Path) -> None:
    sheet = write(tmp_path / "ann.csv", "")
    prefetch.start(["score", str(sheet)])
    settle()
    with pytest.raises(SheetError, match="is empty"):
        read_sheet(sheet)


def test_a_counts_file_takes_its_prefetch_too(tmp_path: Path) -> None:
    counts = write(tmp_path / "counts.csv", "ann,ben,units\nyes,yes,3\n")
    prefetch.start(["score", "--counts", str(counts)])
    settle()
    assert read_table(counts).header == ["ann", "ben", "units"]
    assert not prefetch._pending
