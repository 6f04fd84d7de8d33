"""Robustness as properties: conservation of every row and cell, only clean errors
on arbitrary bytes (a bounded fuzz run), atomic writes, and the internal-error exit code."""

from __future__ import annotations

import csv
import io
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from irr_audit.errors import IrrAuditError
from irr_audit.io.sheets import parse_sheet
from irr_audit.join.join import STATUSES, join_sheets
from irr_audit.report.model import build_report
from irr_audit.rules.load import parse_rule

RULE = parse_rule(
    b"rule: demo\nversion: 1\nscale: ordinal\ncodes: [low, mid, high]\nmissing_codes: [unknown]\n"
    b"aliases: {l: low, h: high}\n",
    "demo.yaml",
)
# Bounded in CI; the `fuzz` profile (tests/fuzz/README.md) raises it for the long run.
FUZZ = settings(max_examples=max(300, settings().max_examples))
CELL_REASONS = {"unknown", "blank", "invalid", "absent", "conflict"}
IDS = st.sampled_from(["a", "b", "c", "007", "7", " a ", "d", "e", "", "f\u200b"])
CODES = st.sampled_from(["low", "mid", "high", "LOW ", "h", "unknown", "", "  ", "maybe", "=1+1", "Mid"])
SHEET_ROWS = st.lists(st.tuples(IDS, CODES), min_size=1, max_size=25)


def csv_bytes(rows: list[tuple[str, str]]) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["comment_id", "code"])
    writer.writerows(rows)
    return buffer.getvalue().encode()


@given(st.lists(SHEET_ROWS, min_size=2, max_size=6))
def test_every_row_and_cell_is_accounted_for_once(sheets_rows: list[list[tuple[str, str]]]) -> None:
    try:
        sheets = [parse_sheet(csv_bytes(rows), Path(f"coder{i}.csv")) for i, rows in enumerate(sheets_rows)]
        result = join_sheets(sheets, RULE)
    except IrrAuditError:
        return  # e.g. a sheet whose every row is empty: refused cleanly
    log = result.log
    for column, sheet in enumerate(sheets):
        mine = log[log["coder"] == sheet.coder]
        row_entries = mine.dropna(subset=["row"])
        valid_cells = int((result.codes[:, column] >= 0).sum())
        # every non-empty input row: the row behind a valid cell, or one log row
        assert valid_cells + len(row_entries) == sheet.row_count
        assert row_entries["row"].is_unique
        # every (unit, coder) cell: valid, or in the log under a cell reason
        not_valid = {result.unit_ids[u] for u in np.flatnonzero(result.codes[:, column] < 0)}
        logged = set(mine.loc[mine["reason"].isin(CELL_REASONS), "comment_id"])
        assert not_valid == logged
        assert sum((result.status[:, column] == index).sum() for index in range(len(STATUSES))) == len(result.unit_ids)
    report = build_report(result).to_dict()
    fully = int(result.fully_coded.sum())
    assert report["units"]["fully_coded"] == fully
    for pair in report["pairs"]:
        assert int(np.sum(pair["table"])) == fully


@FUZZ
@given(st.binary(max_size=400), st.sampled_from([".csv", ".tsv", ".jsonl", ".xlsx"]))
def test_fuzz_sheet_reader_raises_only_clean_errors(data: bytes, suffix: str) -> None:
    try:
        parse_sheet(data, Path("fuzz" + suffix))
    except IrrAuditError:
        pass


@FUZZ
@given(st.text(max_size=300))
@example("rule: x\nversion: 1\nscale: nominal\ncodes: [a, b]\nx_a: {[a]: b}\n")  # an unhashable key crashed
def test_fuzz_rule_loader_raises_only_clean_errors(text: str) -> None:
    try:
        parse_rule(text.encode("utf-8", "surrogatepass"), "fuzz.yaml")
    except IrrAuditError:
        pass


YAMLISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)


@FUZZ
@given(
    st.fixed_dictionaries(
        {},
        optional={
            "rule": YAMLISH,
            "version": YAMLISH,
            "scale": YAMLISH,
            "codes": YAMLISH,
            "missing_codes": YAMLISH,
            "aliases": YAMLISH,
            "examples": YAMLISH,
            "changelog": YAMLISH,
            "question": YAMLISH,
        },
    )
)
def test_fuzz_rule_structures_raise_only_clean_errors(document: dict) -> None:
    import json

    try:
        parse_rule(json.dumps(document).encode(), "fuzz.yaml")  # JSON is YAML
    except IrrAuditError:
        pass


def test_a_kill_mid_write_leaves_the_old_file_or_the_new_one(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    target.write_text("old")
    child = textwrap.dedent(
        f"""
        from pathlib import Path
        from irr_audit.io.outputs import write_text_atomic
        print("ready", flush=True)
        while True:
            write_text_atomic(Path({str(target)!r}), "new" * 20_000_000)
        """
    )
    process = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE)
    assert process.stdout.readline().strip() == b"ready"
    time.sleep(0.4)
    process.send_signal(signal.SIGKILL)
    process.wait()
    content = target.read_text()
    assert content == "old" or content == "new" * 20_000_000
    leftovers = [path.name for path in tmp_path.iterdir() if path.name != "report.json"]
    assert all(name.startswith(".report.json.") and name.endswith(".tmp") for name in leftovers)


def test_internal_error_exits_70_and_asks_for_a_report(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    import irr_audit.api
    from irr_audit import cli

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(irr_audit.api, "build_report", broken)
    root = Path(__file__).resolve().parents[1]
    monkeypatch.setattr(
        sys,
        "argv",
        [
            "irr-audit",
            "score",
            str(root / "examples/sheets/alice.csv"),
            str(root / "examples/sheets/bob.csv"),
            "--rule",
            str(root / "rules/explicit_current_failure/v1.yaml"),
        ],
    )
    with pytest.raises(SystemExit) as caught:
        cli.main()
    assert caught.value.code == cli.INTERNAL_ERROR == 70
    err = capsys.readouterr().err
    assert "RuntimeError: boom" in err
    assert "this is a bug in irr-audit" in err and "Please report it" in err


@pytest.mark.parametrize(
    ("arguments", "status", "stdout_part", "stderr_part"),
    [
        (
            ["score", "{sheets}/alice.csv", "{sheets}/bob.csv", "--rule", "{rule}", "--format", "json"],
            0,
            '"cohen_kappa"',
            "22 units",
        ),
        (["score", "{sheets}/missing.csv", "{sheets}/bob.csv", "--rule", "{rule}"], 2, "", "sheet-not-found"),
        (["score", "--no-such-option"], 2, "", "No such option"),
        (["--version"], 0, "irr-audit", ""),
    ],
)
def test_the_console_command_ends_with_the_status_and_output_of_the_command(
    arguments: list[str], status: int, stdout_part: str, stderr_part: str
) -> None:
    """`python -m irr_audit` exits with the command's status, all its output written."""
    root = Path(__file__).resolve().parents[1]
    filled = [
        argument.format(
            sheets=root / "examples" / "sheets", rule=root / "rules" / "explicit_current_failure" / "v1.yaml"
        )
        for argument in arguments
    ]
    done = subprocess.run([sys.executable, "-m", "irr_audit", *filled], capture_output=True, text=True, timeout=120)
    assert done.returncode == status, done.stderr
    assert stdout_part in done.stdout and stderr_part in done.stderr
    if stdout_part.startswith('"'):
        assert done.stdout.rstrip().endswith("}")  # the whole JSON document, not a cut-off buffer


def test_no_input_reaches_a_shell_or_eval() -> None:
    package = Path(__file__).resolve().parents[1] / "irr_audit"
    source = "\n".join(path.read_text() for path in package.rglob("*.py"))
    for forbidden in ("eval(", "exec(", "shell=True", "os.system(", "pickle"):
        assert forbidden not in source, forbidden


CELL_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00\r"), max_size=12)


@given(st.lists(st.none() | st.tuples(CELL_TEXT, CELL_TEXT, CELL_TEXT), min_size=1, max_size=30))
@example([("", "", "\n")])  # a closing quote after a quoted line break looked like a quote left open
def test_fast_csv_reader_equals_the_csv_module(rows: list[tuple[str, str, str] | None]) -> None:
    """The pyarrow fast path must read exactly what Python's csv module reads (None: a blank line)."""
    from irr_audit.io.tables import _arrow_table, _padded_table

    body = "comment_id,code,body\n" + "".join(
        ",".join('"' + cell.replace('"', '""') + '"' if any(c in cell for c in ',"\n') else cell for cell in row or ())
        + "\n"
        for row in rows
    )
    data = body.encode("utf-8")
    fast = _arrow_table(data, ",")
    assert _arrow_table(b"comment_id,code\na,yes\n", ",") is not None  # plain files do take the fast path
    assert _arrow_table(b"comment_id,code\na,yes\n\nb,no\n", ",") is not None  # and so do blank lines
    parsed = list(csv.reader(io.StringIO(body, newline="")))
    slow = _padded_table(parsed[0], parsed[1:], np.arange(2, len(parsed) + 1), "fuzz.csv")
    if fast is None:  # short rows and the like: the csv module reads the file instead
        return
    assert fast.header == slow.header
    assert [column.to_pylist() for column in fast.cells] == [column.to_pylist() for column in slow.cells]
    assert fast.rows.tolist() == slow.rows.tolist()
