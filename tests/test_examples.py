"""Golden worked examples through the CLI: one folder per case under tests/examples/.

Each folder holds the sheets, the rule, expected.json (the numbers) and SOURCE.md
(where the numbers come from). Adding a case is adding a folder.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from irr_audit.cli import app

CASES = sorted(path for path in (Path(__file__).parent / "examples").iterdir() if path.is_dir())


def score_json(case: Path, *extra: str) -> dict:
    sheets = sorted(str(path) for path in (case / "sheets").iterdir())
    result = CliRunner().invoke(
        app,
        ["score", *sheets, "--rule", str(case / "rule.yaml"), "--format", "json", *extra],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def assert_metric(actual: dict, expected: dict, precision: float, name: str) -> None:
    assert actual["defined"] is expected["defined"], name
    if expected["defined"]:
        assert actual["value"] == pytest.approx(expected["value"], abs=precision), name
    else:
        assert actual["value"] is None, name
        assert actual["reason"], name


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_worked_example(case: Path) -> None:
    expected = json.loads((case / "expected.json").read_text())
    assert (case / "SOURCE.md").read_text().strip(), "every golden case names its source"
    actual = score_json(case)
    precision = expected.get("precision", 1e-12)
    assert {key: actual["units"][key] for key in expected["units"]} == expected["units"]
    if "table" in expected:
        assert actual["table"] == expected["table"]
    for name, metric in expected.get("metrics", {}).items():
        assert_metric(actual["metrics"][name], metric, precision, name)
    for key, value in expected.get("missingness", {}).items():
        assert actual["missingness"][key] == value
    for pair_expected in expected.get("pairs", []):
        pair = next(p for p in actual["pairs"] if p["coders"] == pair_expected["coders"])
        for name, metric in pair_expected["metrics"].items():
            assert_metric(pair["metrics"][name], metric, precision, f"{pair['coders']} {name}")


def test_undefined_kappa_is_never_shown_as_a_number() -> None:
    case = next(case for case in CASES if case.name.startswith("C_"))
    sheets = sorted(str(path) for path in (case / "sheets").iterdir())
    for output_format in ("text", "json"):
        result = CliRunner().invoke(
            app,
            ["score", *sheets, "--rule", str(case / "rule.yaml"), "--format", output_format],
            catch_exceptions=False,
        )
        assert result.exit_code == 0
        assert "pe = 1" in result.stdout
        assert not re.search(r"\bnan\b", result.stdout, re.IGNORECASE)
    kappa = json.loads(result.stdout)["metrics"]["cohen_kappa"]
    assert kappa["value"] is None and kappa["defined"] is False and kappa["reason"]
    assert "ci" not in kappa and "se" not in kappa
