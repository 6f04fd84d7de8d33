"""A dependency that fails to import is one message naming the packages, their versions and the
fix (exit 2), never a traceback that reads like a bug; pyproject's lower bounds are the ones
.ci/run installs together."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from irr_audit.cli.dependencies import dependency_message, failed_dependency

ROOT = Path(__file__).resolve().parent.parent
SHEETS = [str(ROOT / "examples/sheets/alice.csv"), str(ROOT / "examples/sheets/bob.csv")]
RULE = str(ROOT / "rules/explicit_current_failure/v1.yaml")


def test_a_pyarrow_that_cannot_import_is_named_with_the_fix(tmp_path: Path) -> None:
    broken = tmp_path / "pyarrow"
    broken.mkdir()
    (broken / "__init__.py").write_text('raise ImportError("numpy.core.multiarray failed to import")\n')
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "irr_audit", "score", *SHEETS, "--rule", RULE],
        env=env,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    first, hint = done.stderr.splitlines()
    assert first.startswith("Error [dependency-import]: irr-audit cannot import pyarrow (numpy.core.multiarray")
    assert re.search(r"installed: numpy \S+, pandas \S+, pyarrow \S+\.$", first)
    assert hint.startswith("  Hint: reinstall them together in this environment: pip install --upgrade")
    assert '"pyarrow>=16"' in hint and '"numpy>=1.25"' in hint


def test_only_a_dependencys_import_failure_is_named() -> None:
    assert failed_dependency(ModuleNotFoundError("No module named 'yaml'", name="yaml")) == "yaml"
    assert failed_dependency(ImportError("x", name="pyarrow.lib")) == "pyarrow"
    abi = ValueError("numpy.dtype size changed, may indicate binary incompatibility. Expected 96, got 88")
    assert failed_dependency(abi) == "numpy"
    assert failed_dependency(ImportError("cannot import name 'x'", name="irr_audit.io.sheets")) is None  # a bug
    assert failed_dependency(ValueError("some other value")) is None
    assert failed_dependency(KeyError("pyarrow")) is None


def test_a_pure_python_dependency_is_reinstalled_alone() -> None:
    message, hint = dependency_message("yaml", ModuleNotFoundError("No module named 'yaml'", name="yaml"))
    assert message.startswith("irr-audit cannot import pyyaml (No module named 'yaml'); installed: pyyaml ")
    assert "reinstall it in this environment" in hint and "numpy" not in hint


def test_the_lowest_versions_ci_installs_are_pyprojects_bounds() -> None:
    done = subprocess.run([sys.executable, str(ROOT / ".ci/lowest_requirements.py")], capture_output=True, text=True)
    pins = dict(pin.split("==") for pin in done.stdout.split())
    assert pins["numpy"] == "1.25" and pins["pandas"] == "2.2.2" and pins["pyarrow"] == "16"
    assert set(pins) == {
        *("typer", "pandas", "numpy", "pyarrow", "rich", "pyyaml", "openpyxl", "defusedxml", "jinja2", "filelock")
    }
