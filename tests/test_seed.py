"""A bootstrap without --seed draws one, records it, and passing it back repeats the run."""

from __future__ import annotations

import json
import re
from pathlib import Path

import irr_audit
from tests.conftest import run

ROOT = Path(__file__).resolve().parents[1]
RULE = ROOT / "rules" / "explicit_current_failure" / "v1.yaml"
SHEETS = [ROOT / "examples" / "sheets" / name for name in ("alice.csv", "bob.csv")]
DRAWN = re.compile(r"Bootstrap seed (\d+) was drawn; --seed \1 repeats it\.")


def test_the_library_draws_records_and_repeats_the_seed():
    drawn = irr_audit.audit(SHEETS, RULE, bootstrap=50)
    seed = drawn.to_dict()["bootstrap"]["seed"]
    assert isinstance(seed, int) and 0 <= seed < 2**32
    assert DRAWN.search(drawn.summary_line).group(1) == str(seed)
    again = irr_audit.audit(SHEETS, RULE, bootstrap=50, seed=seed)
    assert again.to_json() == drawn.to_json()
    assert "drawn" not in again.summary_line


def test_counts_draw_a_seed_too(tmp_path: Path):
    assert run("join", *SHEETS, "--rule", RULE, "--out", tmp_path / "j").exit_code == 0
    drawn = irr_audit.audit_counts(tmp_path / "j" / "counts.csv", RULE, bootstrap=50)
    seed = drawn.to_dict()["bootstrap"]["seed"]
    assert DRAWN.search(drawn.summary_line).group(1) == str(seed)
    assert irr_audit.audit_counts(tmp_path / "j" / "counts.csv", RULE, bootstrap=50, seed=seed).to_json() == (
        drawn.to_json()
    )


def test_no_bootstrap_draws_nothing():
    plain = irr_audit.audit(SHEETS, RULE)
    assert plain.to_dict()["bootstrap"] == {} and "seed" not in plain.summary_line


def test_the_cli_shows_the_seed_in_the_summary_json_and_report():
    first = run("report", *SHEETS, "--rule", RULE, "--format", "json", "--bootstrap", 50)
    assert first.exit_code == 0, first.stderr
    seed = json.loads(first.stdout)["bootstrap"]["seed"]
    assert DRAWN.search(first.stderr).group(1) == str(seed)
    repeated = run("report", *SHEETS, "--rule", RULE, "--format", "json", "--bootstrap", 50, "--seed", seed)
    assert repeated.stdout == first.stdout and "drawn" not in repeated.stderr
    markdown = run("report", *SHEETS, "--rule", RULE, "--format", "md", "--bootstrap", 50, "--seed", seed)
    assert f"seed {seed}" in markdown.stdout and "seed None" not in markdown.stdout
