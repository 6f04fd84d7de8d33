"""`score --counts`: unit-pattern counts give exactly the numbers of the sheets, and shards add up."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from irr_audit.cli import app

RULE = """rule: level
version: 1
scale: ordinal
codes: ["0", "1", "2", "3"]
missing_codes: [unknown]
"""
NOT_FROM_COUNTS = ("sheets", "missingness", "warnings", "disagreement_count", "units")


def run(*args: str):
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return result


def write_sheets(folder: Path, ids: list[str], codes: np.ndarray) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for column, coder in enumerate(["ann", "ben", "cat"]):
        lines = ["comment_id,code"]
        for comment_id, code in zip(ids, codes[:, column]):
            if code == -2:
                continue  # absent row
            lines.append(f"{comment_id},{'' if code == -1 else code}")
        path = folder / f"{coder}.csv"
        path.write_text("\n".join(lines) + "\n")
        paths.append(str(path))
    return paths


@pytest.fixture()
def data(tmp_path: Path):
    rng = np.random.default_rng(11)
    truth = rng.integers(0, 4, size=300)
    codes = np.clip(truth[:, None] + rng.integers(-1, 2, size=(300, 3)), 0, 3)
    codes[rng.random((300, 3)) < 0.06] = -1
    codes[rng.random((300, 3)) < 0.03] = -2
    ids = [f"t1_{number:05x}" for number in range(300)]
    (tmp_path / "rule.yaml").write_text(RULE)
    return tmp_path, ids, codes


def comparable(document: dict) -> dict:
    return {key: value for key, value in document.items() if key not in NOT_FROM_COUNTS}


def score_json(*args: str) -> dict:
    result = run("score", *args, "--format", "json", "-q")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("extra", [(), ("--bootstrap", "300", "--seed", "5")])
def test_counts_give_the_numbers_of_the_sheets(data, extra) -> None:
    folder, ids, codes = data
    sheets = write_sheets(folder / "sheets", ids, codes)
    rule = str(folder / "rule.yaml")
    assert run("join", *sheets, "--rule", rule, "--out", str(folder / "out"), "-q").exit_code == 0
    whole = score_json(str(folder / "out"), *extra)
    from_counts = score_json("--counts", str(folder / "out" / "counts.csv"), "--rule", rule, *extra)
    assert comparable(from_counts) == comparable(whole)
    for key in ("total", "fully_coded", "missing", "available_case"):
        assert from_counts["units"][key] == whole["units"][key]


def test_counts_of_shards_add_up_to_the_whole(data) -> None:
    folder, ids, codes = data
    rule = str(folder / "rule.yaml")
    counts = []
    for shard in range(3):
        rows = np.arange(len(ids)) % 3 == shard
        sheets = write_sheets(folder / f"shard{shard}", [i for i, keep in zip(ids, rows) if keep], codes[rows])
        out = folder / f"shard{shard}" / "out"
        assert run("join", *sheets, "--rule", rule, "--out", str(out), "-q").exit_code == 0
        counts += ["--counts", str(out / "counts.csv")]
    sheets = write_sheets(folder / "whole", ids, codes)
    whole = score_json(*sheets, "--rule", rule)
    merged = score_json(*counts, "--rule", rule)
    assert comparable(merged) == comparable(whole)
    assert merged["units"]["total"] == whole["units"]["total"]


def test_counts_codes_go_through_the_rule(tmp_path: Path) -> None:
    (tmp_path / "rule.yaml").write_text(RULE)
    (tmp_path / "counts.csv").write_text("a,b,units\n0,0,5\n 1 ,1,5\n2,unknown,3\n,3,1\n")
    document = score_json("--counts", str(tmp_path / "counts.csv"), "--rule", str(tmp_path / "rule.yaml"))
    assert document["units"] == {"total": 14, "fully_coded": 10, "missing": 4, "available_case": 10, "gwet_missing": 14}
    assert document["metrics"]["cohen_kappa"]["value"] == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("content", "code"),
    [
        ("a,b\n0,0\n", "counts-columns"),
        ("a,b,units\n0,0,-3\n", "counts-units"),
        ("a,b,units\n0,0,2.5\n", "counts-units"),
        ("a,a,units\n0,0,1\n", "counts-columns"),
    ],
)
def test_bad_counts_files(tmp_path: Path, content: str, code: str) -> None:
    (tmp_path / "rule.yaml").write_text(RULE)
    (tmp_path / "counts.csv").write_text(content)
    result = run("score", "--counts", str(tmp_path / "counts.csv"), "--rule", str(tmp_path / "rule.yaml"))
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error [{code}]: counts file counts.csv")


def test_counts_of_different_coders_do_not_merge(tmp_path: Path) -> None:
    (tmp_path / "rule.yaml").write_text(RULE)
    (tmp_path / "one.csv").write_text("a,b,units\n0,0,1\n")
    (tmp_path / "two.csv").write_text("a,c,units\n0,0,1\n")
    result = run(
        "score",
        "--counts",
        str(tmp_path / "one.csv"),
        "--counts",
        str(tmp_path / "two.csv"),
        "--rule",
        str(tmp_path / "rule.yaml"),
    )
    assert result.exit_code == 2
    assert "Error [counts-coders]" in result.stderr


def test_counts_and_sheets_together_is_a_usage_error(data) -> None:
    folder, ids, codes = data
    sheets = write_sheets(folder / "sheets", ids, codes)
    result = run("score", *sheets, "--counts", sheets[0], "--rule", str(folder / "rule.yaml"))
    assert result.exit_code == 2
    assert "Error [usage-counts]" in result.stderr
