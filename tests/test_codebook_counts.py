"""A codebook's unit-pattern counts: counts.csv with a first column `variable`, scored per
variable by `score --counts FILE --codebook FILE`, shards adding up."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import irr_audit
from irr_audit.cli import app

ROOT = Path(__file__).resolve().parents[1]
CODEBOOK = ROOT / "codebooks" / "comment_study" / "v1.yaml"
SHEETS = [ROOT / "examples" / "codebook" / "sheets" / f"{coder}.csv" for coder in ("alice", "bob", "carol")]
SCORED = ("po", "fleiss_kappa", "conger_kappa", "krippendorff_alpha", "gwet_ac1", "brennan_prediger")


def run(*args: str | Path):
    return CliRunner().invoke(app, [str(arg) for arg in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def joined(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("counts") / "joined"
    assert run("join", *SHEETS, "--codebook", CODEBOOK, "--out", out, "--quiet").exit_code == 0
    return out


def values(document: dict) -> dict:
    return {
        variable: {
            "units": report["units"]["fully_coded"],
            "table": report["table"],
            **{name: report["metrics"][name]["value"] for name in SCORED},
        }
        for variable, report in document["variables"].items()
    }


def test_counts_have_a_variable_column(joined: Path) -> None:
    lines = (joined / "counts.csv").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "variable,alice,bob,carol,units"
    variables = {line.split(",")[0] for line in lines[1:]}
    assert variables == {"explicit_current_failure", "product_area", "severity", "sarcasm"}
    # each variable's units add up to the units of its table: the conditional one counts only its own
    units: dict[str, int] = {}
    for line in lines[1:]:
        units[line.split(",")[0]] = units.get(line.split(",")[0], 0) + int(line.split(",")[-1])
    assert units == {"explicit_current_failure": 26, "product_area": 26, "severity": 12, "sarcasm": 26}


def test_counts_score_as_the_sheets_do(joined: Path) -> None:
    from_sheets = json.loads(run("score", joined, "--format", "json", "--quiet").stdout)
    result = run("score", "--counts", joined / "counts.csv", "--codebook", CODEBOOK, "--format", "json", "--quiet")
    assert result.exit_code == 0, result.output
    from_counts = json.loads(result.stdout)
    assert values(from_counts) == values(from_sheets)
    assert [row["variable"] for row in from_counts["reliability"]] == [
        row["variable"] for row in from_sheets["reliability"]
    ]


def test_sharded_counts_add_up(joined: Path, tmp_path: Path) -> None:
    lines = (joined / "counts.csv").read_text(encoding="utf-8").splitlines()
    header, rows = lines[0], lines[1:]
    shards = []
    for at in range(3):  # every third row, so each shard holds part of every variable
        shard = tmp_path / f"shard{at}.csv"
        shard.write_text("\n".join([header, *rows[at::3]]) + "\n", encoding="utf-8")
        shards.append(shard)
    whole = irr_audit.audit_codebook_counts(joined / "counts.csv", CODEBOOK)
    split = irr_audit.audit_codebook_counts(shards, CODEBOOK)
    assert values(split.to_dict()) == values(whole.to_dict())


def test_a_variable_in_counts_is_matched_as_in_a_sheet(joined: Path, tmp_path: Path) -> None:
    """`Sarcasm` in a counts file is the variable sarcasm, as in a long sheet (not refused as unknown)."""
    lines = (joined / "counts.csv").read_text(encoding="utf-8").splitlines()
    spelled = tmp_path / "counts.csv"
    spelled.write_text(
        "\n".join([lines[0], *(f" {line.split(',', 1)[0].upper()} ,{line.split(',', 1)[1]}" for line in lines[1:])])
        + "\n",
        encoding="utf-8",
    )
    whole = irr_audit.audit_codebook_counts(joined / "counts.csv", CODEBOOK)
    assert values(irr_audit.audit_codebook_counts(spelled, CODEBOOK).to_dict()) == values(whole.to_dict())


def test_counts_of_one_rule_or_of_another_codebook_are_refused(tmp_path: Path, joined: Path) -> None:
    single = tmp_path / "single.csv"
    single.write_text("alice,bob,units\nyes,yes,3\n", encoding="utf-8")
    result = run("score", "--counts", single, "--codebook", CODEBOOK)
    assert result.exit_code == 2 and "Error [counts-columns]" in result.stderr
    other = tmp_path / "other.csv"
    other.write_text("variable,alice,bob,units\nsarcasm,yes,yes,3\nsarcasms,no,no,1\n", encoding="utf-8")
    result = run("score", "--counts", other, "--codebook", CODEBOOK)
    assert result.exit_code == 2 and "Error [counts-variable]" in result.stderr and "row 3" in result.stderr
    both = run("score", joined, "--counts", joined / "counts.csv", "--codebook", CODEBOOK)
    assert both.exit_code == 2 and "Error [usage-counts]" in both.stderr


def test_a_gate_on_counts(joined: Path) -> None:
    result = run("score", "--counts", joined / "counts.csv", "--codebook", CODEBOOK, "--gate", "sarcasm=0.8")
    assert result.exit_code == 1 and "gate failed: sarcasm" in result.stderr
