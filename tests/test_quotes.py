"""No row vanishes into a quote left open.

A CSV value may run over several lines only inside quotes. A quote left open
swallows the rows after it into one cell; every reader (the pyarrow fast path, the
csv module path, the collector's CSV) refuses that with exit 2, naming the line
where the quote opened and the lines it swallowed, while comments over several
lines in a text column keep working with their spreadsheet rows.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from irr_audit.cli import app
from irr_audit.errors import IrrAuditError
from irr_audit.io.collector import parse_dataset
from irr_audit.io.sheets import parse_sheet
from irr_audit.io.tables import _arrow_table, parse_table
from irr_audit.join.join import join_sheets
from irr_audit.rules.load import parse_rule

HERE = Path(__file__).parent
RULE_PATH = HERE.parent / "rules" / "explicit_current_failure" / "v1.yaml"
RULE = parse_rule(b"rule: r\nversion: 1\nscale: nominal\ncodes: [yes, no]\nmissing_codes: [unknown]\n", "r.yaml")
ISSUE = b'comment_id,code,body\nc1,yes,fine\nc2,no,"he said\nc3,yes,ok\nc4,no,bad"\nc5,yes,closing\n'
PARTNER = b"comment_id,code\nc1,yes\nc2,no\nc3,yes\nc4,no\nc5,yes\n"


def refusal(data: bytes, name: str = "a.csv") -> IrrAuditError:
    with pytest.raises(IrrAuditError) as caught:
        parse_sheet(data, Path(name))
    return caught.value


def test_the_issue_is_refused_through_the_cli(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_bytes(ISSUE)
    (tmp_path / "b.csv").write_bytes(PARTNER)
    result = CliRunner().invoke(
        app,
        [
            "join",
            str(tmp_path / "a.csv"),
            str(tmp_path / "b.csv"),
            "--rule",
            str(RULE_PATH),
            "--out",
            str(tmp_path / "out"),
        ],
    )
    assert result.exit_code == 2
    assert result.stderr.startswith(
        "Error [sheet-unclosed-quote]: sheet a.csv: the 'body' value of row 3 starts with a quote on line 3 that "
        "is not closed until line 5, so lines 4-5 would be read as part of that value, not as rows; line 4, "
        "'c3,yes,ok', is a row of this sheet.\n  Hint: close the quote at the end of the value on line 3"
    )
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"], ids=["lf (pyarrow)", "crlf (csv module)", "cr"])
def test_both_readers_refuse_the_same_way(newline: bytes) -> None:
    error = refusal(ISSUE.replace(b"\n", newline))
    assert error.code == "sheet-unclosed-quote"
    assert "quote on line 3 that is not closed until line 5" in error.message
    tsv = ISSUE.replace(b",", b"\t").replace(b"\n", newline)
    assert "line 4" in refusal(tsv, "a.tsv").message


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (b'comment_id,code\nc1,"yes\nc2,no\nc3,yes"\n', "the 'code' value of row 2 starts with a quote on line 2"),
        (b'comment_id,code\n"c1,yes\nc2",no\n', "the 'comment_id' value of row 2"),
        (b'comment_id,code,coder\nc1,yes,"ann\nc2,no,ann"\n', "the 'coder' value"),
        (b'comment_id,code,rule_version\nc1,yes,"1\nc2,no,1"\n', "the 'rule_version' value"),
        # one line swallowed into an id is never a comment, whatever its shape
        (b'comment_id,code,body\n"c1\nx",yes,b\n', "so line 3 would be read"),
    ],
    ids=["code", "id", "coder", "rule_version", "any shape"],
)
def test_a_line_break_in_a_key_column_is_refused(data: bytes, fragment: str) -> None:
    for variant in (data, data.replace(b"\n", b"\r\n")):
        error = refusal(variant)
        assert error.code == "sheet-unclosed-quote" and fragment in error.message


@pytest.mark.parametrize(
    ("data", "line"),
    [
        (b'comment_id,code,body\nc1,yes,fine\nc2,no,"open\nc3,yes,ok\n', 3),
        (b'comment_id,code,body\nc1,yes,fine\nc2,no,"open', 3),
        (b'comment_id,code,body\nc1,yes,"a\nb"\nc2,no,"x""y\n', 4),
        (b'comment_id,code,body\nc1,yes,"', 2),
        (b'comment_id,code,body\nc1,yes,"""', 2),
        (b'comment_id,body,code\nc1,"open,yes\nc2,x,no\n', 2),
    ],
)
def test_a_quote_open_to_the_end_names_its_line(data: bytes, line: int) -> None:
    for variant in (data, data.replace(b"\n", b"\r\n")):
        error = refusal(variant)
        assert error.code == "sheet-unclosed-quote"
        assert f"the quote opened on line {line} is never closed" in error.message


def test_comments_over_several_lines_keep_their_rows() -> None:
    text = (
        b"comment_id,code,body\n"
        b'a,yes,"Well, honestly, no.\nI agree, but, still\n\nYes, no, maybe"\n'
        b'b,no,"one line ""quoted"" and\na second, and, a third"\n'
        b"c,yes,plain\n"
    )
    for variant in (text, text.replace(b"\n", b"\r\n"), text.replace(b",", b"\t")):
        sheet = parse_sheet(variant, Path("s.tsv" if b"\t" in variant else "s.csv"))
        assert sheet.comment_ids.to_pylist() == ["a", "b", "c"]
        assert sheet.rows.tolist() == [2, 3, 4]
    corpus = HERE / "corpus" / "files" / "quoted_newlines.csv"
    assert parse_sheet(corpus.read_bytes(), corpus).rows.tolist() == [2, 3, 4]


def test_a_counts_file_refuses_any_value_over_lines(tmp_path: Path) -> None:
    from irr_audit.io.sheets import read_table

    counts = tmp_path / "counts.csv"
    counts.write_bytes(b'alice,bob,units\nyes,"no\nno,yes,3\nyes",2\n')
    with pytest.raises(IrrAuditError) as caught:
        read_table(counts)
    assert caught.value.code == "sheet-unclosed-quote"


def test_collector_csv_refuses_a_quote_left_open() -> None:
    header = b"postId,commentId,body,authorName,status\n"
    swallowed = header + b'p,c1,"he said,ann,ok\np,c2,fine,bob,ok\np,c3,end",cy,ok\n'
    with pytest.raises(IrrAuditError) as caught:
        parse_dataset(swallowed, "items.csv")
    assert caught.value.code == "collector-unclosed-quote" and "line 3" in caught.value.message
    with pytest.raises(IrrAuditError) as caught:
        parse_dataset(header + b'p,c1,"open,ann,ok\n', "items.csv")
    assert "the quote opened on line 2 is never closed" in caught.value.message
    with pytest.raises(IrrAuditError):
        parse_dataset(header + b'p,"c1\nc2",body,ann,ok\n', "items.csv")
    prose = header + b'p,c1,"Well, honestly, no.\nsecond line",ann,ok\np,c2,x,bob,ok\n'
    assert [item.comment_id for item in parse_dataset(prose, "items.csv").items] == ["c1", "c2"]


def test_control_characters_in_ids_are_refused() -> None:
    for data, name, shown in (
        (b"comment_id,code\nc\x1b[2J1,yes\n", "a.csv", "sheet a.csv row 2: comment id 'c\\x1b[2J1'"),
        (b'{"comment_id": "c\\u0007", "code": "yes"}\n', "a.jsonl", "sheet a.jsonl row 1: comment id 'c\\x07'"),
        ("comment_id,code\nc\u00851,yes\n".encode(), "a.csv", "comment id 'c\\x851'"),
    ):
        error = refusal(data, name)
        assert error.code == "sheet-control-character" and shown in error.message
    assert parse_sheet(b"comment_id,code\n\tc1 ,yes\n", Path("a.csv")).unit_keys.to_pylist() == ["c1"]


# --- the fast path and the csv module agree on what spans lines ------------------------------

CELL = st.text(alphabet=st.sampled_from(list('ab ,"\n')), max_size=8)


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.lists(st.tuples(CELL, CELL, CELL), min_size=1, max_size=12))
def test_spanning_values_are_the_same_on_both_paths(rows: list[tuple[str, str, str]]) -> None:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows([("x", "y", "z"), *rows])
    data = buffer.getvalue().encode()
    fast = _arrow_table(data, ",")
    slow = parse_table(data.decode().encode("utf-16"), Path("s.csv"))  # UTF-16 is read by the csv module
    assert fast is not None
    assert (fast.spanning is None) == (slow.spanning is None)
    if fast.spanning is not None:
        for field in ("records", "columns", "first_lines", "last_lines"):
            assert getattr(fast.spanning, field).tolist() == getattr(slow.spanning, field).tolist(), field


# --- random damage: a reader refuses, or every intact record is read -------------------------

IDS = [f"u{number}" for number in range(12)]
CODES = st.sampled_from(["yes", "no", "unknown", "", "maybe", "YES "])
BODIES = st.sampled_from(
    ["fine", "", "a, b", 'he said "no"', "two\nlines", "x\r\ny", "Well, honestly, no.", "tab\there", "end,", '"']
)
DAMAGE = st.tuples(
    # anywhere: insert, delete a byte, cut the file; aimed: open a quote at a field's start, drop a quote
    st.sampled_from(["insert", "delete", "truncate", "open quote", "drop quote"]),
    st.floats(0, 1, allow_nan=False),
    st.sampled_from([b'"', b",", b"\r", b"\n", b"\r\n", b"\xef\xbb\xbf", b"\x00", b'""', b',"']),
)


def planted_sheet(codes: list[str], bodies: list[str], terminator: str) -> tuple[bytes, list[tuple[bytes, str, str]]]:
    """A valid sheet, and each record's bytes (with its terminator), id and code."""
    records = []
    for identifier, code, body in zip(IDS, codes, bodies):
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator=terminator).writerow([identifier, code, body])
        records.append((buffer.getvalue().encode(), identifier, code))
    header = f"comment_id,code,body{terminator}".encode()
    return header + b"".join(record for record, _, _ in records), records


def damaged(data: bytes, operations: list[tuple[str, float, bytes]]) -> bytes:
    for operation, where, text in operations:
        at = int(where * len(data))
        if operation in ("open quote", "drop quote"):
            places = (
                [at + 1 for at, byte in enumerate(data) if byte in b",\n"]
                if operation == "open quote"
                else [at for at, byte in enumerate(data) if byte == ord('"')]
            )
            if not places:
                continue
            at = places[min(int(where * len(places)), len(places) - 1)]
            data = data[:at] + b'"' + data[at:] if operation == "open quote" else data[:at] + data[at + 1 :]
        elif operation == "insert":
            data = data[:at] + text + data[at:]
        elif operation == "delete":
            data = data[:at] + data[at + 1 :]
        else:
            data = data[:at]
    return data


def intact(data: bytes, header: bytes, record: bytes) -> bool:
    """The record's bytes are in the file as a line of their own, and the header is unchanged."""
    starts = data.startswith(header) or data.startswith(b"\xef\xbb\xbf" + header)
    return starts and (b"\n" + record) in data


@settings(derandomize=True, max_examples=500, deadline=None)
@given(
    st.lists(CODES, min_size=3, max_size=12),
    st.lists(BODIES, min_size=12, max_size=12),
    st.sampled_from(["\n", "\r\n"]),
    st.lists(DAMAGE, min_size=1, max_size=3),
)
def test_random_damage_never_loses_an_intact_record(codes, bodies, terminator, operations) -> None:
    original, records = planted_sheet(codes, bodies, terminator)
    data = damaged(original, operations)
    try:
        sheet = parse_sheet(data, Path("coder.csv"))
        result = join_sheets([sheet, parse_sheet(PARTNER, Path("partner.csv"))], RULE)
    except IrrAuditError:
        return  # refused with a message: exit 2 through the CLI
    header = f"comment_id,code,body{terminator}".encode()
    read = dict(zip(sheet.unit_keys.to_pylist(), sheet.codes.to_pylist()))
    units = set(result.unit_ids)
    logged = set(result.log["comment_id"])
    for record, identifier, code in records:
        if intact(data, header, record):
            assert read.get(identifier) == code, (identifier, data)  # read as written: no row lost or altered
            assert identifier in units or identifier in logged  # a unit cell, or a log row
    kept = np.asarray(sheet.rows)
    assert len(set(kept.tolist())) == len(kept)  # one spreadsheet row per record
