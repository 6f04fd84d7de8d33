"""Standard output that cannot be written (redirected to a full disk: /dev/full) is the
output's problem, said as such: exit 2 and one message, never a traceback or a bug report."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHEETS = [str(ROOT / "examples" / "sheets" / name) for name in ("alice.csv", "bob.csv")]
RULE = str(ROOT / "rules" / "explicit_current_failure" / "v1.yaml")
FULL = Path("/dev/full")  # every write fails with ENOSPC (Linux)

COMMANDS = [
    ["score", *SHEETS, "--rule", RULE],
    ["score", *SHEETS, "--rule", RULE, "--format", "json"],
    *(["report", *SHEETS, "--rule", RULE, "--format", form] for form in ("text", "md", "json", "html", "methods")),
    ["compare", "{join}", "{join}", "--bootstrap", "100", "--seed", "1"],
    ["verify", "{bundle}"],
    ["verify", "{bundle}", "--format", "json"],
    ["labels", "{bundle}"],
    ["adjudicate", "{bundle}"],
    ["rules", "diff", RULE, RULE],
    ["rules", "check", "{rules}"],  # its problems go to stdout
    ["plan", "alpha", "--min", "0.8", "--codes", "2"],
    ["plan", "alpha", "--min", "0.8", "--codes", "2", "--format", "json"],
]


def irr_audit(args: list[str], stdout: int | object = subprocess.PIPE) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "irr_audit", *args], stdout=stdout, stderr=subprocess.PIPE, text=True)


@pytest.fixture(scope="module")
def audits(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    home = tmp_path_factory.mktemp("stdout")
    assert irr_audit(["join", *SHEETS, "--rule", RULE, "--out", str(home / "J"), "-q"]).returncode == 0
    assert irr_audit(["freeze", str(home / "J"), "--into", str(home / "audits"), "-q"]).returncode == 0
    (bundle,) = [path for path in (home / "audits").iterdir() if path.is_dir()]
    skipped = home / "rules" / "explicit_current_failure"
    skipped.mkdir(parents=True)
    (skipped / "v3.yaml").write_bytes(Path(RULE).read_bytes())  # says version 1, and v1 and v2 are missing
    return {"join": str(home / "J"), "bundle": str(bundle), "rules": str(home / "rules")}


@pytest.mark.skipif(not FULL.exists(), reason="no /dev/full on this system (it is Linux's)")
@pytest.mark.parametrize("command", COMMANDS, ids=[f"{at}-{command[0]}" for at, command in enumerate(COMMANDS)])
def test_standard_output_on_a_full_disk_is_exit_2_and_one_message(command: list[str], audits: dict[str, str]) -> None:
    args = [word.format(**audits) for word in command]
    shown = irr_audit(args)
    assert shown.returncode in (0, 1) and shown.stdout, shown.stderr  # the command writes to stdout
    with FULL.open("w") as full:
        refused = irr_audit(args, stdout=full)
    assert refused.returncode == 2, refused.stderr
    assert "Traceback" not in refused.stderr and "bug" not in refused.stderr
    assert refused.stderr.count("Error [") == 1
    assert "Error [output-unwritable]: cannot write to standard output: No space left on device" in refused.stderr
    assert os.strerror(28) == "No space left on device"
