"""Text reports into a pipe or a file wrap no line (a reader or a script sees whole lines and
intact headers); on a terminal they fit its width, and the API takes the width asked for."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

import irr_audit
from irr_audit.cli import app

ROOT = Path(__file__).resolve().parent.parent
SHEETS = [ROOT / "examples/sheets/alice.csv", ROOT / "examples/sheets/bob.csv"]
RULE = ROOT / "rules/explicit_current_failure/v1.yaml"
UNITS_LINE = "22 units: 20 fully coded, 2 in the missingness log (not counted as disagreements)"


def run(*args: object):
    return CliRunner().invoke(app, [str(arg) for arg in args], catch_exceptions=False)


def test_score_and_report_text_into_a_pipe_wrap_no_line(tmp_path: Path) -> None:
    for command in (("score", *SHEETS, "--rule", RULE), ("report", *SHEETS, "--rule", RULE, "--format", "text")):
        result = run(*command)
        assert result.exit_code == 0, result.output
        lines = result.stdout.splitlines()
        assert UNITS_LINE in lines  # 82 characters, on one line
        assert any(
            line.startswith("fully coded: the 20 units every coder coded validly") and len(line) > 120 for line in lines
        )
    written = tmp_path / "report.txt"
    assert run("report", *SHEETS, "--rule", RULE, "--format", "text", "--output", written).exit_code == 0
    assert UNITS_LINE in written.read_text(encoding="utf-8").splitlines()


def test_the_api_wraps_at_the_width_asked_for_or_not_at_all() -> None:
    result = irr_audit.audit(SHEETS, RULE)
    assert max(len(line.rstrip()) for line in result.to_text(width=60).splitlines()) <= 60
    assert UNITS_LINE not in result.to_text(width=60).splitlines()
    assert UNITS_LINE in result.to_text(width=None).splitlines()
    assert result.to_text() == result.to_text(width=80)  # the default is unchanged


def test_compare_text_into_a_pipe_wraps_no_line(tmp_path: Path) -> None:
    joined = tmp_path / "joined"
    irr_audit.join_folder(SHEETS, RULE, joined)
    result = run("compare", joined, joined, "--bootstrap", "100", "--seed", "1")
    assert result.exit_code == 0, result.output
    compared = irr_audit.compare(joined, joined, bootstrap=100, seed=1)
    assert result.stdout == compared.to_text(width=None)
    assert max(map(len, compared.to_text(width=None).splitlines())) > 80  # a line the old 80 columns would wrap
    assert max(map(len, compared.to_text(width=80).splitlines())) <= 80
