"""`irr-audit counts`: a long table counted by DuckDB gives join's counts.csv byte for byte, and
`score --counts` on it gives what `score` gives on the same rows as sheets."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from irr_audit.cli import app

pytest.importorskip("duckdb", reason="the warehouse extra (DuckDB) is not installed")

NOMINAL = """rule: failure
version: 1
scale: nominal
codes: ["yes", "no", "maybe"]
missing_codes: [unknown, "n/a"]
aliases: {y: "yes", n: "no", "?": unknown}
"""
ORDINAL = """rule: level
version: 1
scale: ordinal
codes: ["0", "1", "2", "3"]
missing_codes: [unknown]
aliases: {none: "0", severe: "3"}
"""
RAW = {
    "nominal": [
        "yes",
        "YES",
        " Yes ",
        "y",
        "Y",
        "no",
        "No",
        "n",
        "maybe",
        "unknown",
        "Unknown",
        "n/a",
        "?",
        "",
        "  ",
        "\u3000",
        "perhaps",
        "ｙｅｓ",
        "=1",
        "'no",
    ],
    "ordinal": ["0", "1", "2", "3", " 2", "none", "NONE", "severe", "unknown", "", " ", "4", "x", "-1", "１"],
}
COMPARED = ("metrics", "available_case", "gwet_missing", "table", "categories", "coders", "pairs")
NAMES = ["ann", "ben", "cat", "dan", "eve"]


def run(*args: str):
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def long_rows(seed: int, scale: str) -> tuple[list[str], list[tuple[str, str, str]]]:
    """Random long rows with aliases, case and width variants, blanks, missing and invalid codes,
    repeats (the same code again, another spelling of it, or another code), absent cells,
    ids with surrounding whitespace, rows without an id, and rows of no coder."""
    rng = random.Random(seed)
    coders = NAMES[: rng.randint(2, 5)]
    raw = RAW[scale]
    valid = raw[:9] if scale == "nominal" else raw[:8]
    rows: list[tuple[str, str, str]] = []
    for unit in range(rng.randint(20, 120)):
        unit_id = f"t1_{unit:04x}"
        truth = rng.choice(valid)
        for coder in coders:
            if rng.random() < 0.1:
                continue  # absent
            code = truth if rng.random() < 0.6 else rng.choice(raw)
            spelled = rng.choice([unit_id, unit_id, unit_id, f" {unit_id}", f"{unit_id}\u3000", f"\t{unit_id} "])
            rows.append((spelled, rng.choice([coder, coder, f" {coder} "]), code))
            if rng.random() < 0.15:  # a repeat: the same text, another spelling of the code, or any code
                rows.append((unit_id, coder, rng.choice([code, code.upper(), rng.choice(raw)])))
    for _ in range(rng.randint(0, 4)):
        rows.append((rng.choice(["", " "]), rng.choice(coders), rng.choice(raw)))  # no id (or an empty row)
    for _ in range(rng.randint(0, 2)):
        rows.append((f"t1_{rng.randint(0, 200):04x}", rng.choice(["", "  "]), rng.choice(raw)))  # no coder
    rng.shuffle(rows)
    return coders, rows


def write_long_csv(path: Path, rows: list[tuple[str, str, str]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream, lineterminator="\n")
        writer.writerow(["comment_id", "coder", "code"])
        writer.writerows(rows)


def write_sheets(folder: Path, coders: list[str], rows: list[tuple[str, str, str]]) -> list[str]:
    """The same rows as one sheet per coder (its name the file's), in the table's order."""
    folder.mkdir()
    paths = []
    for coder in coders:
        path = folder / f"{coder}.csv"
        with open(path, "w", newline="", encoding="utf-8") as stream:
            writer = csv.writer(stream, lineterminator="\n")
            writer.writerow(["comment_id", "code"])
            writer.writerows((unit, code) for unit, name, code in rows if name.strip() == coder)
        paths.append(str(path))
    return paths


def score_json(*args: str) -> dict:
    result = run("score", *args, "--format", "json", "-q")
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("scale", ["nominal", "ordinal"])
@pytest.mark.parametrize("seed", range(6))
def test_counts_of_a_long_table_are_joins_counts(tmp_path: Path, seed: int, scale: str) -> None:
    coders, rows = long_rows(seed, scale)
    rule = tmp_path / "rule.yaml"
    rule.write_text(NOMINAL if scale == "nominal" else ORDINAL)
    write_long_csv(tmp_path / "long.csv", rows)
    pq.write_table(
        pa.table({name: [row[at] for row in rows] for at, name in enumerate(["comment_id", "coder", "code"])}),
        tmp_path / "long.parquet",
    )
    sheets = write_sheets(tmp_path / "sheets", sorted(coders), rows)
    assert run("join", *sheets, "--rule", str(rule), "--out", str(tmp_path / "joined"), "-q").exit_code == 0
    joined = (tmp_path / "joined" / "counts.csv").read_bytes()
    join_summary = json.loads((tmp_path / "joined" / "summary.json").read_text())
    for table in ("long.csv", "long.parquet"):
        out, summary = tmp_path / f"{table}.counts.csv", tmp_path / f"{table}.summary.json"
        result = run(
            "counts", str(tmp_path / table), "--rule", str(rule), "--out", str(out), "--summary", str(summary), "-q"
        )
        assert result.exit_code == 0, result.output
        assert out.read_bytes() == joined
        account = json.loads(summary.read_text())
        assert account["units"] == join_summary["units"]
        assert account["cells"] == join_summary["cells"]
        logged = {reason: count for reason, count in account["log_rows"].items() if reason != "no_coder"}
        assert logged == join_summary["log_rows"]
        no_coder = sum(1 for unit, coder, _ in rows if unit.strip() and not coder.strip())
        assert account["log_rows"].get("no_coder", 0) == no_coder
        assert account["rows"] == len(rows)
    whole = score_json(*sheets, "--rule", str(rule))
    counted = score_json("--counts", str(tmp_path / "long.csv.counts.csv"), "--rule", str(rule))
    assert {key: counted[key] for key in COMPARED} == {key: whole[key] for key in COMPARED}
