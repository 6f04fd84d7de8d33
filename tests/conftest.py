"""Shared test set-up: a derandomized hypothesis profile so CI failures reproduce; the
CLI runner and the example sheets the bundle tests freeze."""

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from typer.testing import CliRunner

from irr_audit.cli import app

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "sheets"

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    max_examples=100,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, max_examples=100)
# The long fuzz run (tests/fuzz/README.md): many more examples, still reproducible by seed.
settings.register_profile("fuzz", deadline=None, max_examples=20_000, suppress_health_check=list(HealthCheck))
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))


def run(*args: object):
    """The CLI, called in-process with every argument as text; exceptions are not caught."""
    return CliRunner().invoke(app, [str(arg) for arg in args], catch_exceptions=False)


@pytest.fixture
def sheets(tmp_path: Path) -> list[Path]:
    """The example audit (kappa 0.70 on 20 fully coded units), copied where freeze may read it."""
    folder = tmp_path / "coding sheets"
    folder.mkdir()
    return [Path(shutil.copy(EXAMPLES / name, folder / name)) for name in ("alice.csv", "bob.csv")]
