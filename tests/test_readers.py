"""Readers: every input file is read once, through the one bounded reader, then hashed
and parsed from the same bytes; a file replaced by a huge one is refused unread."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import tracemalloc
from pathlib import Path

import pytest
from typer.testing import CliRunner

from irr_audit.bundle.adjudication import parse_decisions
from irr_audit.bundle.verify import verify_bundle
from irr_audit.cli import app
from irr_audit.errors import IrrAuditError, SheetError, UsageError
from irr_audit.io.collector import parse_dataset
from irr_audit.io.files import read_bounded
from irr_audit.io.limits import Limits
from irr_audit.io.runfolder import read_record
from irr_audit.io.sheets import parse_sheet
from irr_audit.rules.load import load_rule

ROOT = Path(__file__).resolve().parents[1]
RULE = ROOT / "rules" / "explicit_current_failure" / "v1.yaml"
EXAMPLES = ROOT / "examples" / "sheets"
HUGE = 400 * 1024 * 1024  # sparse: it takes no disk, but reading it would take 400 MB


def run(*args: object):
    return CliRunner().invoke(app, [str(arg) for arg in args], catch_exceptions=False)


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    folder = tmp_path / "coding sheets"
    folder.mkdir()
    sheets = [shutil.copy(EXAMPLES / name, folder / name) for name in ("alice.csv", "bob.csv")]
    result = run("freeze", *sheets, "--rule", RULE, "--into", tmp_path / "audits")
    assert result.exit_code == 0, result.stderr
    return Path(result.stdout.rstrip("\n").split("  ", 1)[1])


def replace_with_huge(path: Path) -> None:
    os.chmod(path, stat.S_IRUSR | stat.S_IWUSR)
    with open(path, "wb") as stream:
        stream.truncate(HUGE)


def test_read_bounded_refuses_beyond_its_cap_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "DIGESTS"
    path.touch()
    replace_with_huge(path)
    tracemalloc.start()
    try:
        with pytest.raises(IrrAuditError) as caught:
            read_bounded(path, f"digest list {path}", code="digests", max_bytes=1000, max_hint="pass the list.")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert caught.value.code == "digests-too-large"
    assert caught.value.message == f"digest list {path} is {HUGE:,} bytes, more than the 1,000 it may hold."
    assert peak < 1024 * 1024


def test_verify_refuses_a_sheet_replaced_by_a_huge_file_without_reading_it(bundle: Path) -> None:
    replace_with_huge(bundle / "sheets" / "alice.csv")
    tracemalloc.start()
    try:
        verification = verify_bundle(bundle, limits=Limits(file_bytes=3000))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    lines = [problem.line() for problem in verification.problems]
    assert not verification.ok
    assert lines[0].startswith("changed: sheets/alice.csv: is larger than the ")
    assert lines[0].endswith(" bytes frozen (not read)")
    assert peak < 50 * 1024 * 1024


@pytest.mark.parametrize("command", ["score", "report"])
def test_score_and_report_of_a_bundle_refuse_a_huge_sheet_unread(bundle: Path, command: str) -> None:
    replace_with_huge(bundle / "sheets" / "alice.csv")
    result = run(command, bundle, "--limit", "file_bytes=3000")
    assert result.exit_code == 2
    assert result.stderr.startswith(
        f"Error [bundle-altered]: bundle {bundle} was altered: sheets/alice.csv is larger than the "
    )
    assert "Hint: run irr-audit verify" in result.stderr


def test_verify_names_the_limit_a_frozen_file_exceeds(bundle: Path) -> None:
    result = run("verify", bundle, "--limit", "file_bytes=100")
    assert result.exit_code == 2
    assert result.stderr.startswith("Error [limit-file-bytes]: ")
    assert "--limit file_bytes=N" in result.stderr


@pytest.fixture
def counts(tmp_path: Path) -> Path:
    sheets = [EXAMPLES / "alice.csv", EXAMPLES / "bob.csv"]
    result = run("join", *sheets, "--rule", RULE, "--out", tmp_path / "j")
    assert result.exit_code == 0, result.stderr
    return tmp_path / "j" / "counts.csv"


@pytest.mark.parametrize(
    ("limit", "says"),
    [
        ("file_bytes=10", "is 65 bytes; the limit file_bytes is 10."),
        ("columns=1", "has 3 columns in its first line; the limit columns is 1."),
    ],
)
def test_score_counts_applies_the_limits(counts: Path, limit: str, says: str) -> None:
    result = run("score", "--counts", counts, "--rule", RULE, "--limit", limit)
    name = limit.split("=")[0]
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error [limit-{name.replace('_', '-')}]: sheet ")
    assert says in result.stderr
    assert f"--limit {name}=N" in result.stderr


def test_score_counts_records_the_bytes_it_parsed(counts: Path) -> None:
    result = run("score", "--counts", counts, "--rule", RULE, "--format", "json")
    assert result.exit_code == 0, result.stderr
    (source,) = json.loads(result.stdout)["sheets"]
    assert source["sha256"] == hashlib.sha256(counts.read_bytes()).hexdigest()
    assert source["size"] == counts.stat().st_size


def test_a_rule_beyond_rule_bytes_names_the_one_limit(tmp_path: Path) -> None:
    rule = tmp_path / "v1.yaml"
    rule.write_bytes(RULE.read_bytes())
    result = run("score", EXAMPLES / "alice.csv", EXAMPLES / "bob.csv", "--rule", rule, "--limit", "rule_bytes=100")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error [limit-rule-bytes]: rule file {rule} is {rule.stat().st_size:,} bytes")
    assert "--limit rule_bytes=N" in result.stderr


@pytest.mark.parametrize("text", ['{"run": NaN}', "[" * 5000 + "]" * 5000, '{"a": ' + "9" * 5000 + "}", "{}x"])
def test_a_run_record_is_read_with_the_one_json_loader(tmp_path: Path, text: str) -> None:
    record = tmp_path / "summary.json"
    record.write_text(text)
    assert read_record(record) is None
    record.write_text('{"run": {"id": "x"}}')
    assert read_record(record) == {"run": {"id": "x"}}


# --- a quote left open: one finder for every CSV read with the csv module ------------------

DECISIONS_HEADER = "comment_id,code,note\n"


def decisions_error(text: str) -> str:
    with pytest.raises(UsageError) as caught:
        parse_decisions(text, "d.csv", load_rule(RULE), {"u1": {}, "u2": {}, "u3": {}})
    assert caught.value.code == "adjudication-decisions"
    return caught.value.message


def test_a_decisions_note_that_swallows_rows_names_the_line_its_quote_opened() -> None:
    text = DECISIONS_HEADER + 'u1,yes,"first\nu2,no,second\nu3,yes,third"\n'
    assert decisions_error(text) == (
        "decisions file d.csv: the 'note' value of row 2 starts with a quote on line 2 that is not closed until "
        "line 4, so lines 3-4 would be read as part of that value, not as rows; line 3, 'u2,no,second', is a row "
        "of this file."
    )


def test_a_decisions_id_over_two_lines_is_refused_with_its_lines() -> None:
    text = DECISIONS_HEADER + 'u1,yes,ok\n"u2\nu3",no,x\n'
    assert decisions_error(text).startswith(
        "decisions file d.csv: the 'comment_id' value of row 3 starts with a quote on line 3 that is not closed "
        "until line 4, so line 4 would be read"
    )


def test_a_decisions_quote_never_closed_names_its_line() -> None:
    assert decisions_error(DECISIONS_HEADER + 'u1,yes,ok\nu2,no,"open\nu3,yes,x\n') == (
        "decisions file d.csv has a quote opened on line 3 that is never closed."
    )


@pytest.mark.parametrize("separator", ["\u2028", "\x1c", "\x85"])
def test_a_note_with_a_separator_that_is_no_line_break_is_kept(separator: str) -> None:
    """str.splitlines() splits at these; a CSV line does not end there."""
    text = DECISIONS_HEADER + f'u1,yes,"a{separator}u2,no,b"\nu2,no,c\n'
    decisions = parse_decisions(text, "d.csv", load_rule(RULE), {"u1": {}, "u2": {}})
    assert [(decision.comment_id, decision.note) for decision in decisions] == [
        ("u1", f"a{separator}u2,no,b"),
        ("u2", "c"),
    ]


def test_the_collector_names_the_line_and_the_item_a_quote_swallowed() -> None:
    header = b"postId,commentId,body,authorName,status\n"
    data = header + b'p,c1,"he said,ann,ok\np,c2,fine,bob,ok\np,c3,end",cy,ok\n'
    with pytest.raises(IrrAuditError) as caught:
        parse_dataset(data, "items.csv")
    assert caught.value.message == (
        "dataset items.csv: the 'body' value of row 2 starts with a quote on line 2 that is not closed until "
        "line 4, so lines 3-4 would be read as part of that value, not as items; line 3, 'p,c2,fine,bob,ok', "
        "has the shape of an item."
    )


# --- every refusal has its hint --------------------------------------------------------------


def test_an_empty_csv_and_an_empty_worksheet_say_how_to_fix_them() -> None:
    from io import BytesIO

    from openpyxl import Workbook

    workbook = Workbook()
    workbook.active.title = "Codes"
    stream = BytesIO()
    workbook.save(stream)
    for data, name, says in (
        (b"\xef\xbb\xbf", "s.csv", "sheet s.csv is empty."),
        (stream.getvalue(), "s.xlsx", "sheet s.xlsx has an empty worksheet 'Codes'."),
    ):
        with pytest.raises(SheetError) as caught:
            parse_sheet(data, Path(name))
        assert caught.value.code == "sheet-empty"
        assert caught.value.message == says
        assert caught.value.hint
