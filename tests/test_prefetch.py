"""The command line's prefetch (irr_audit.prefetch): a sheet parsed in the background
is used only while it is the same, unchanged file; otherwise it is read as usual."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from irr_audit import prefetch
from irr_audit.errors import SheetError
from irr_audit.join import join_sheets
from irr_audit.rules import load_rule
from irr_audit.sheets import SheetOptions, read_sheet, read_sheets, read_table

ROOT = Path(__file__).resolve().parents[1]
RULE = ROOT / "rules" / "explicit_current_failure" / "v1.yaml"


@pytest.fixture(autouse=True)
def no_leftovers():
    forget()
    yield
    forget()


def forget() -> None:
    prefetch.settle()  # lets any background work finish
    prefetch._pending.clear()
    prefetch._early.clear()


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


def sheets_of(tmp_path: Path) -> list[Path]:
    ann = write(tmp_path / "ann.csv", "comment_id,code\nc1,yes\nc2,no\n c3,yes\nc1,yes\n,no\n")
    ben = write(tmp_path / "ben.csv", "comment_id,code\nc3,no\nc2,maybe\nc4,\n")
    return [ann, ben]


def outcome(result) -> dict:
    return {"units": result.units.to_pylist(), "codes": result.codes.tolist(), "status": result.status.tolist(),
            "log": result.log.to_dict("list"), "warnings": result.warnings}


def test_sheets_read_and_matched_early_join_as_when_read_late(tmp_path: Path) -> None:
    """With the default columns, the sheets are read and their ids matched in the
    background; the join takes that work and comes out as it does without it."""
    paths = sheets_of(tmp_path)
    rule = load_rule(RULE)
    late = outcome(join_sheets(read_sheets(paths), rule))
    prefetch.start(["score", *map(str, paths), "--rule", str(RULE)])
    prefetch.settle()
    works = [work for work, _ in prefetch._early]
    assert works.count("match_ids") == 1 and set(works) <= {"match_ids", "distinct_codes"}
    early_sheets = read_sheets(paths)
    assert all(sheet is not None for sheet in early_sheets)
    assert outcome(join_sheets(early_sheets, rule)) == late
    assert not prefetch._early  # every early result was taken


def test_early_results_go_only_to_the_objects_they_were_computed_from(tmp_path: Path) -> None:
    paths = sheets_of(tmp_path)
    prefetch.start(["report", *map(str, paths)])
    prefetch.settle()
    sheets = read_sheets(paths)
    listed = [sheet for sheet in sheets if ("distinct_codes", (id(sheet.codes),)) in prefetch._early]
    assert listed  # the codes of every sheet but the last one parsed are listed early
    codes = listed[0].codes
    assert prefetch.early_result("distinct_codes", codes.slice(0)) is None  # equal values, another object
    assert prefetch.early_result("distinct_codes", codes) is not None
    assert prefetch.early_result("distinct_codes", codes) is None  # handed over once
    assert prefetch.early_result("match_ids", *(sheet.unit_keys for sheet in sheets)) is not None


def test_chosen_columns_are_read_as_asked(tmp_path: Path) -> None:
    """With --id-column (and the like) only the parse is done early: the sheet is read
    with the columns the command asks for."""
    sheet = write(tmp_path / "ann.csv", "id,label,comment_id,code\nx1,yes,c1,no\n")
    prefetch.start(["score", str(sheet), "--id-column", "id", "--code-column", "label"])
    prefetch.settle()
    assert not prefetch._early
    read = read_sheet(sheet, SheetOptions(id_column="id", code_column="label"))
    assert (read.comment_ids.to_pylist(), read.codes.to_pylist()) == (["x1"], ["yes"])


def test_the_default_sheet_is_not_taken_for_other_columns(tmp_path: Path) -> None:
    sheet = write(tmp_path / "ann.csv", "id,label,comment_id,code\nx1,yes,c1,no\n")
    prefetch.start(["score", str(sheet)])
    prefetch.settle()
    read = read_sheet(sheet, SheetOptions(id_column="id", code_column="label"))
    assert (read.comment_ids.to_pylist(), read.codes.to_pylist()) == (["x1"], ["yes"])


def test_no_ids_are_matched_early_when_a_file_is_not_a_sheet(tmp_path: Path) -> None:
    paths = sheets_of(tmp_path)
    counts = write(tmp_path / "counts.csv", "ann,ben,units\nyes,yes,3\n")
    prefetch.start(["score", *map(str, paths), str(counts)])
    prefetch.settle()
    assert "match_ids" not in {work for work, _ in prefetch._early}


def test_reading_tables_does_not_import_pyarrow_compute() -> None:
    """The prefetch starts parsing before pyarrow.compute (30-50 ms) is imported."""
    script = "import sys, irr_audit.tables; print('pyarrow.compute' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
