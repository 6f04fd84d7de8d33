"""Every JSON and JSON Lines file irr-audit writes is escaped one way (io.outputs.render_json,
json_line): no DEL or C1 control, bidi control, line or paragraph separator or lone surrogate is
written raw, whichever writer wrote it, and every value reads back as it was."""

from __future__ import annotations

import json
import re
from pathlib import Path

from irr_audit.io.outputs import json_line, jsonl_text, render_json
from irr_audit.rules.lock import LockEntry, render_lock
from tests.conftest import run

ROOT = Path(__file__).resolve().parents[1]
RULE = ROOT / "rules" / "explicit_current_failure" / "v1.yaml"
SAMPLE_RULE = ROOT / "tests" / "fixtures" / "collector" / "rule_v1.yaml"
# What JSON would leave raw: DEL, C1 (NEL and CSI among them), bidi controls, LS/PS, lone surrogates.
RAW = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff]")
HOSTILE = "x\u202e\x9b\x7f\u2028\x85\u2029\u200ey"


def written_raw(folder: Path) -> dict[str, list[str]]:
    """The JSON and JSONL files under ``folder`` (each one read back) and what they hold raw."""
    found = {}
    for path in sorted(folder.rglob("*")):
        if path.suffix not in (".json", ".jsonl") or not path.is_file():
            continue
        text = path.read_bytes().decode("utf-8")
        if path.suffix == ".json":
            json.loads(text)
        else:
            assert all(json.loads(line) is not None for line in text.split("\n") if line), path
        found[str(path.relative_to(folder))] = RAW.findall(text)
    return found


def test_no_file_the_tool_writes_holds_a_control_or_separator_raw(tmp_path: Path) -> None:
    sheets = tmp_path / "sheets"
    sheets.mkdir()
    (sheets / "alice.csv").write_text(f"comment_id,code\nc1,yes\nc2,{HOSTILE}\nc3,no\n", encoding="utf-8")
    odd_name = "b\u202eob\u2028.csv"  # a coder named with a bidi override and a line separator
    (sheets / odd_name).write_text(f"comment_id,code\nc1,yes\nc2,no\nc3,{HOSTILE}\n", encoding="utf-8")
    dataset = tmp_path / "dataset.json"
    items = [{"commentId": f"c{n}", "body": f"body {HOSTILE}", "status": "ok"} for n in range(4)]
    items.append({"commentId": "bad\x9bid", "body": HOSTILE, "status": "ok"})
    dataset.write_text(json.dumps(items), encoding="utf-8")

    joined, audits, sample = tmp_path / "J", tmp_path / "audits", tmp_path / "S"
    steps = [
        ("join", sheets / "alice.csv", sheets / odd_name, "--rule", RULE, "--out", joined, "-q"),
        ("freeze", joined, "--into", audits, "-q"),
        ("report", joined, "--format", "json", "--output", tmp_path / "report.json"),
        ("sample", dataset, "--rule", SAMPLE_RULE, "--coders", "ann,ben", "--out", sample, "-q"),
    ]
    for step in steps:
        result = run(*step)
        assert result.exit_code == 0, (step[0], result.stderr)

    logged = [json.loads(line) for line in (joined / "missingness_log.jsonl").read_text("utf-8").splitlines()]
    assert HOSTILE in [row["raw_value"] for row in logged]  # the value is kept, escaped
    assert any(row["sheet"] == odd_name for row in logged)
    assert "\\u202e" in (joined / "missingness_log.jsonl").read_text("utf-8")
    ledger = (sample / "ledger.jsonl").read_text("utf-8")
    assert f"body {HOSTILE}" in [json.loads(line)["body"] for line in ledger.splitlines()]
    everything = written_raw(tmp_path)
    assert {"J/missingness_log.jsonl", "J/summary.json", "S/ledger.jsonl", "report.json"} <= set(everything)
    assert any(name.endswith("manifest.json") for name in everything)
    assert {name: raw for name, raw in everything.items() if raw} == {}


def test_the_rule_lock_is_written_as_every_other_json_file() -> None:
    entries = [LockEntry(file="a\u202e/v1.yaml", rule="a", version=1, sha256="0" * 64)]
    assert render_lock(entries) == render_json(json.loads(render_lock(entries)))
    assert "\u202e" not in render_lock(entries) and "\\u202e" in render_lock(entries)


def test_json_lines_are_one_record_per_line_whatever_the_text() -> None:
    records = [{"id": "\u2028\u2029\x85\n\r", "n": 1}, {"id": "\udcff", "n": None}]
    text = jsonl_text(records)
    assert text.count("\n") == len(text.splitlines()) == 2
    assert [json.loads(line) for line in text.splitlines()] == records
    assert text.encode("utf-8")  # a lone surrogate is escaped, not left to fail the encoding
    assert json_line(records[0], compact=True) == '{"id":"\\u2028\\u2029\\u0085\\n\\r","n":1}\n'
