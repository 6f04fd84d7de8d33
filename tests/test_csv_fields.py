"""The csv module's field limit: raised only while irr-audit reads, never left changed.

The limit is one setting for the whole process; a notebook that imports irr-audit keeps
its own (irr_audit.io.csvfields)."""

from __future__ import annotations

import csv
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from irr_audit.io.collector import parse_dataset
from irr_audit.io.csvfields import FIELD_SIZE, csv_rows, first_csv_row, long_fields
from irr_audit.io.framecsv import frame_csv_text
from irr_audit.io.sheets import parse_sheet

LONG = 300_000  # characters: beyond the csv module's default limit of 128 KiB
A_USERS_LIMIT = 1_000


@pytest.fixture
def users_limit() -> Iterator[int]:
    """A limit of the user's own, lower than any long comment, put back after the test."""
    previous = csv.field_size_limit(A_USERS_LIMIT)
    try:
        yield A_USERS_LIMIT
    finally:
        csv.field_size_limit(previous)


def test_importing_irr_audit_leaves_the_limit_as_it_was() -> None:
    script = (
        "import csv; before = csv.field_size_limit(); "
        "import irr_audit.cli, irr_audit.api, irr_audit.io.tables, irr_audit.io.collector, irr_audit.io.framecsv; "
        "print(before, csv.field_size_limit())"
    )
    before, after = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout.split()
    assert before == after == str(128 * 1024)


def test_a_sheet_read_by_the_csv_module_takes_a_long_comment_and_puts_the_limit_back(users_limit: int) -> None:
    body = "x" * LONG
    data = f"comment_id,code,body\r\nc1,yes,{body}\r\nc2,no,short\r".encode()  # a lone CR: the csv module reads it
    sheet = parse_sheet(data, Path("alice.csv"))
    assert sheet.texts is not None and sheet.texts.to_pylist() == [body, "short"]
    assert sheet.comment_ids.to_pylist() == ["c1", "c2"]
    assert csv.field_size_limit() == users_limit


def test_a_long_header_cell_is_read_whole(users_limit: int) -> None:
    name = "n" * LONG
    data = f"comment_id,code,{name}\nc1,yes,z\n".encode()
    assert parse_sheet(data, Path("alice.csv")).columns == ("comment_id", "code", name)
    assert csv.field_size_limit() == users_limit


def test_a_collector_csv_with_a_long_body_is_read(users_limit: int) -> None:
    body = "y" * LONG
    data = f'commentId,body,status\nabc,"{body}",ok\n'.encode()
    (item,) = parse_dataset(data, "dataset.csv").items
    assert (item.comment_id, item.body, item.status) == ("abc", body, "ok")
    assert csv.field_size_limit() == users_limit


def test_a_frame_written_through_pandas_keeps_a_long_cell(users_limit: int) -> None:
    long_text = "z" * LONG
    frame = pd.DataFrame({"text": [long_text, "b"], "score": [0.5, 1.25]})  # floats: the pandas writer
    assert frame_csv_text(frame) == f"text,score\n{long_text},0.5\nb,1.25\n"
    assert csv.field_size_limit() == users_limit


def test_the_helpers_raise_the_limit_only_inside_and_nest(users_limit: int) -> None:
    text = f"a,{'w' * LONG}\nb,c\n"
    assert csv_rows(text) == [["a", "w" * LONG], ["b", "c"]]
    assert first_csv_row(text) == ["a", "w" * LONG]
    with long_fields():
        assert csv.field_size_limit() == FIELD_SIZE
        with long_fields():
            assert csv.field_size_limit() == FIELD_SIZE
        assert csv.field_size_limit() == FIELD_SIZE
    assert csv.field_size_limit() == users_limit
    with pytest.raises(csv.Error):  # outside, the user's own limit holds
        list(csv.reader([text.splitlines()[0]]))


def test_a_limit_set_by_another_thread_during_a_read_is_the_one_left(users_limit: int) -> None:
    """The lines' iterator sets a limit halfway through the read, as a caller's thread may at
    any moment: putting back the limit from before the read would undo the caller's."""
    callers_new_limit = 5_000

    def lines() -> Iterator[str]:
        yield "a,b\n"
        csv.field_size_limit(callers_new_limit)
        yield "c,d\n"

    assert csv_rows(lines()) == [["a", "b"], ["c", "d"]]
    assert csv.field_size_limit() == callers_new_limit
