"""The hostile corpus (tests/hostile/): every case run as a user would run it, and
checked for the promises the README makes. See tests/hostile/README.md."""

from __future__ import annotations

import fnmatch
import hashlib
import resource
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "hostile"))

import checks  # noqa: E402
import kit  # noqa: E402
from catalogue import CASES  # noqa: E402

TIME_CAP = 60


def params() -> list:
    return [
        pytest.param(
            case,
            id=case.name,
            marks=[pytest.mark.xfail(strict=True, reason=f"pending: {case.pending}")] if case.pending else [],
        )
        for case in CASES
    ]


@pytest.fixture(scope="session")
def standard_digest(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The sha256 of the standard bundle's manifest as frozen (the same bytes in every case)."""
    folder = tmp_path_factory.mktemp("digest")
    make_files(folder, kit.BASE)
    bundle = kit.freeze_fixed(folder)
    return hashlib.sha256((bundle / "manifest.json").read_bytes()).hexdigest()


@pytest.mark.parametrize("case", params())
def test_hostile_case(case: kit.Case, tmp_path: Path, standard_digest: str) -> None:
    folder = tmp_path / "case"
    folder.mkdir()
    make_files(folder, {**kit.BASE, **case.files})
    if case.setup is not None:
        case.setup(folder)
    argv = [word.replace("{bundle}", kit.BUNDLE).replace("{digest}", standard_digest) for word in case.argv]
    before = checks.snapshot(folder)
    if case.copies > 1:
        outcomes = run_together(argv, folder, case.copies)
    elif case.process:
        outcomes = [run_child(argv, folder, case.memory_mb, case.seconds)]
    else:
        outcomes = [checks.run_here(argv, folder)]
    if case.copies > 1:
        assert sorted(outcome.exit for outcome in outcomes) == sorted(case.exits)
    for outcome in outcomes:
        check_outcome(case, outcome)
    outcome = outcomes[0]
    check_inputs_unchanged(case, before, folder)
    check_never(case, outcome, before)
    checks.units_conserved(argv, outcome)
    if case.check is not None:
        case.check(outcome)


def test_the_catalogue_is_well_formed() -> None:
    names = Counter(case.name for case in CASES)
    assert [name for name, count in names.items() if count > 1] == []
    for case in CASES:
        assert set(case.exits) <= {0, 1, 2}, case.name
        assert case.pending in (None, *kit.AREAS), case.name
        assert isinstance(case.exit, int) or case.copies == len(case.exit), case.name  # one exit code a case
        assert case.code is None or 2 in case.exits, case.name


# --- running -----------------------------------------------------------------------------


def make_files(folder: Path, files: dict) -> None:
    for name, content in files.items():
        path = folder / name
        if content is None:
            path.unlink(missing_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(kit.materialise(content))


def run_child(argv: list[str], folder: Path, memory_mb: int, seconds: int) -> kit.Outcome:
    """`python -m irr_audit` (the console command) in a child process
    capped in memory and time, for cases that would otherwise take the machine down."""
    cap = memory_mb * 1024**2

    def capped() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    try:
        done = subprocess.run(
            [sys.executable, "-m", "irr_audit", *argv],
            cwd=folder,
            capture_output=True,
            timeout=seconds,
            preexec_fn=capped,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return kit.Outcome(-9, "", f"killed after {seconds} s", folder)
    decode = lambda data: data.decode("utf-8", "backslashreplace")  # noqa: E731
    return kit.Outcome(done.returncode, decode(done.stdout), decode(done.stderr), folder)


START_TOGETHER = """
import os, sys, time
import irr_audit.cli  # imported before the start, with every command's modules
ready, go = sys.argv[1:3]
open(ready, "w").close()
while not os.path.exists(go):
    time.sleep(0.001)
sys.argv = ["irr-audit", *sys.argv[3:]]
irr_audit.cli.main()
"""


def run_together(argv: list[str], folder: Path, copies: int) -> list[kit.Outcome]:
    """``copies`` child processes of one command, each released when all have imported
    irr-audit, so that they race. What is checked afterwards is only the outcome."""
    signals = folder.parent / "start"
    signals.mkdir()
    go = signals / "go"
    children = [
        subprocess.Popen(
            [sys.executable, "-c", START_TOGETHER, str(signals / f"ready{n}"), str(go), *argv],
            cwd=folder,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
        )
        for n in range(copies)
    ]
    try:
        while len(list(signals.glob("ready*"))) < copies and all(child.poll() is None for child in children):
            time.sleep(0.01)
        go.touch()
        results = [child.communicate(timeout=TIME_CAP) for child in children]
    finally:
        for child in children:
            child.kill()
    decode = lambda data: data.decode("utf-8", "backslashreplace")  # noqa: E731
    return [
        kit.Outcome(child.returncode, decode(out), decode(err), folder) for child, (out, err) in zip(children, results)
    ]


# --- the checks ----------------------------------------------------------------------------


def check_outcome(case: kit.Case, outcome: kit.Outcome) -> None:
    shown = f"exit {outcome.exit}\n--- stdout\n{outcome.stdout[-3000:]}\n--- stderr\n{outcome.stderr[-3000:]}"
    checks.no_crash(outcome)
    assert outcome.exit in case.exits, shown
    if outcome.exit == 2:
        if case.code is not None:
            assert f"Error [{case.code}]: " in outcome.stderr, shown
        for text in case.says:
            assert text in outcome.stderr, f"the message must say {text!r}\n{shown}"
    else:
        for text in case.shows:
            assert text in outcome.stdout + outcome.stderr, f"the output must show {text!r}\n{shown}"
    for text in case.stdout:
        assert text in outcome.stdout, f"stdout must say {text!r}\n{shown}"


def check_inputs_unchanged(case: kit.Case, before: dict[str, tuple[str, str]], folder: Path) -> None:
    checks.unchanged(before, folder, lambda relative: any(fnmatch.fnmatch(relative, p) for p in case.changes))


def check_never(case: kit.Case, outcome: kit.Outcome, before: dict[str, tuple[str, str]]) -> None:
    for bad in case.never_shown:
        assert bad not in outcome.stdout + outcome.stderr, f"the terminal is sent {bad!r}"
    if not case.never:
        return
    texts = {"stdout": outcome.stdout, "stderr": outcome.stderr}
    for relative, state in checks.snapshot(outcome.folder).items():
        if before.get(relative) != state and state[0] == "file":
            texts[relative] = (outcome.folder / relative).read_bytes().decode("utf-8", "replace")
    for where, text in texts.items():
        for bad in case.never:
            assert bad not in text, f"{where} holds {bad!r}"


def test_the_oracle_counts_rows_as_documented(tmp_path: Path) -> None:
    sample = tmp_path / "s.csv"
    sample.write_text('comment_id,code\na,"two\nlines"\n\n , \nb,no\n')
    assert checks.oracle_rows(sample) == 2
    sample.write_text('comment_id,code\na,"open\nb,no\n')
    assert checks.oracle_rows(sample) is None
