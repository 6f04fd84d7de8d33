"""What every run of the CLI is checked for, shared by the corpus (tests/test_hostile.py)
and the fuzz test (tests/test_fuzz_hostile.py): run it in a folder, snapshot the
folder's files before and after, and check that units were conserved."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
import stat
import traceback
from pathlib import Path

import kit

from irr_audit.io.csvfields import long_fields

SHEET_SUFFIXES = (".csv", ".tsv", ".tab", ".jsonl", ".ndjson", ".xlsx", ".xlsm")


def run_here(argv: list[str], folder: Path) -> kit.Outcome:
    """The command run in this process, in ``folder`` (a bug's exception is reported as exit 70)."""
    from typer.testing import CliRunner

    from irr_audit.cli import app

    here = Path.cwd()
    os.chdir(folder)
    try:  # color: what a terminal gets (click strips escape sequences from output that is no terminal)
        result = CliRunner().invoke(app, argv, catch_exceptions=False, color=True)
    except Exception:  # noqa: BLE001 - what the console command would print with exit 70
        return kit.Outcome(70, "", traceback.format_exc(), folder)
    finally:
        os.chdir(here)
    return kit.Outcome(result.exit_code, result.stdout, result.stderr, folder)


def no_crash(outcome: kit.Outcome, allowed: tuple[int, ...] = (0, 1, 2)) -> None:
    shown = f"exit {outcome.exit}\n--- stdout\n{outcome.stdout[-3000:]}\n--- stderr\n{outcome.stderr[-3000:]}"
    assert "Traceback (most recent call last)" not in outcome.stdout + outcome.stderr, shown
    assert outcome.exit in allowed, shown
    if outcome.exit == 2:  # one message: ours ("Error [code]: ..."), or the option parser's
        messages = len(re.findall(r"^(?:Error \[|Error: )|\u2500 Error \u2500", outcome.stderr, re.MULTILINE))
        assert messages == 1, f"exit 2 must give one message\n{shown}"


def snapshot(folder: Path) -> dict[str, tuple[str, str]]:
    """Every file and symlink under ``folder``: (kind, sha256 of the bytes it reads as / link target)."""
    found: dict[str, tuple[str, str]] = {}
    for root, folders, names in os.walk(folder):
        for name in [*names, *(entry for entry in folders if os.path.islink(os.path.join(root, entry)))]:
            path = os.path.join(root, name)
            relative = os.path.relpath(path, folder)
            if os.path.islink(path):
                found[relative] = ("link", os.readlink(path) + "|" + _digest(path))
            elif stat.S_ISREG(os.lstat(path).st_mode):
                found[relative] = ("file", _digest(path))
    return found


def _digest(path: str) -> str:
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return "not a file"
        with open(path, "rb") as stream:
            return hashlib.file_digest(stream, "sha256").hexdigest()
    except OSError:
        return "unreadable"


def unchanged(before: dict[str, tuple[str, str]], folder: Path, allowed=lambda relative: False) -> None:
    after = snapshot(folder)
    for relative, state in before.items():
        if not allowed(relative):
            assert after.get(relative) == state, f"{relative} was modified, replaced or deleted"


def option(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv and argv.index(name) + 1 < len(argv) else None


def units_conserved(argv: list[str], outcome: kit.Outcome) -> None:
    """Every non-empty input row is a unit cell or a row of the missingness log (join), and the
    rows a sheet was read with are the rows it has (score, report --format json)."""
    if outcome.exit == 2:  # refused; exit 1 of join, score or report (nothing to score) has written its output
        return
    worksheet = option(argv, "--worksheet")
    if argv[0] == "join":
        out = outcome.folder / option(argv, "--out")
        summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        with open(out / "joined.csv", newline="", encoding="utf-8") as stream, long_fields():  # a 1 MB id
            joined = list(csv.reader(stream))[1:]
        log_lines = (out / "missingness_log.jsonl").read_text(encoding="utf-8").split("\n")
        log = [json.loads(line) for line in log_lines if line]
        for column, record in enumerate(summary["sheets"], start=1):
            rows = oracle_rows(Path(record["path"]), worksheet)
            mine = [entry for entry in log if entry["coder"] == record["coder"] and entry["row"] is not None]
            if rows is None:
                assert any("quote" in f"{entry['reason']} {entry['detail']}" for entry in mine), (
                    f"{record['name']} is not well-formed, yet nothing about it was refused or logged"
                )
                continue
            valid = sum(1 for unit in joined if unit[column])
            assert record["rows"] == rows, f"{record['name']}: read {record['rows']} rows of {rows}"
            assert valid + len(mine) == rows, f"{record['name']}: {valid} valid + {len(mine)} logged != {rows} rows"
            assert len({entry["row"] for entry in mine}) == len(mine), "a row is logged twice"
    elif argv[0] in ("score", "report") and option(argv, "--format") == "json" and "--output" not in argv:
        document = json.loads(outcome.stdout)
        given = {
            Path(word).name: outcome.folder / word
            for word in argv[1:]
            if word.lower().endswith(SHEET_SUFFIXES) and (outcome.folder / word).is_file()
        }
        for record in document.get("sheets", []):
            path = given.get(record["name"])
            if path is None or record.get("coder") is None:
                continue  # a bundle's or a join folder's sheets, or counts files
            rows = oracle_rows(path, worksheet)
            if rows is None:
                assert any("quote" in reason for reason in document["missingness"]["by_reason"]), (
                    f"{record['name']} is not well-formed, yet nothing about it was refused or logged"
                )
            else:
                assert record["rows"] == rows, f"{record['name']}: read {record['rows']} rows of {rows}"


# --- the independent row count behind the conservation check ----------------------------


def oracle_rows(path: Path, worksheet: str | None = None) -> int | None:
    """The non-empty rows of a sheet, counted without irr-audit's reader; None when the
    file is not well-formed (an unclosed quote, a broken JSON line): then the tool must
    refuse it, or log what it could not read."""
    data = path.read_bytes()
    suffix = path.suffix.lower()
    if suffix in (".xlsx", ".xlsm"):
        return _xlsx_rows(data, worksheet)
    if b"\x00" in data and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None
    try:
        text = data.decode("utf-16") if data.startswith((b"\xff\xfe", b"\xfe\xff")) else data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    text = text.lstrip("\ufeff")
    if suffix in (".jsonl", ".ndjson"):
        lines = [line for line in text.split("\n") if line.strip()]
        return len(lines)  # every such line is one row: an object, or refused
    delimiter = "\t" if suffix in (".tsv", ".tab") else ","
    with long_fields():  # a hostile cell may be longer than the csv module's default limit
        try:
            records = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True))
        except csv.Error as error:
            if "unexpected end of data" in str(error):  # a quote left open: the rest of the file is one cell
                return None
            records = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    return sum(1 for record in records[1:] if any(cell.strip() for cell in record))


def _xlsx_rows(data: bytes, worksheet: str | None) -> int | None:
    from openpyxl import load_workbook

    try:
        book = load_workbook(io.BytesIO(data), data_only=True)  # not read_only: it trusts the declared size
        sheet = book[worksheet] if worksheet else book.worksheets[0]
        rows = list(sheet.iter_rows(values_only=True))
    except Exception:  # noqa: BLE001 - the oracle only needs to know that it cannot tell
        return None
    return sum(1 for row in rows[1:] if any(cell is not None and str(cell).strip() for cell in row))
