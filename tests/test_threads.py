"""Thread counts come from the machine's cores, and no result depends on them."""

from __future__ import annotations

import os
import re
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from irr_audit import _threads
from irr_audit.cli import app
from irr_audit.io import sheets
from irr_audit.io.outputs import render_json
from irr_audit.join import join
from irr_audit.metrics import bootstrap
from irr_audit.report.model import AuditOptions, build_report
from irr_audit.rules.load import load_rule

EXAMPLE = Path(__file__).parent / "examples" / "E_three_raters"


@pytest.mark.parametrize(("cores", "threads"), [(None, 1), (1, 1), (2, 2), (3, 3), (64, _threads.MAX_THREADS)])
def test_one_thread_per_core_within_the_cap(monkeypatch: pytest.MonkeyPatch, cores: int | None, threads: int) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    assert _threads.thread_count() == threads


def test_the_bootstrap_draws_the_same_replicates_on_any_number_of_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    counts = np.array([700, 200, 90, 9, 1])
    drawn = {}
    for threads in (1, 2, 4):
        monkeypatch.setattr(bootstrap, "thread_count", lambda threads=threads: threads)
        drawn[threads] = np.concatenate(list(bootstrap.replicate_counts(counts, 2001, np.random.default_rng(7))))
    assert drawn[1].shape == (2001, 5)
    assert np.array_equal(drawn[1], drawn[2]) and np.array_equal(drawn[1], drawn[4])


def test_sheets_are_read_joined_and_scored_the_same_on_any_number_of_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    rule = load_rule(EXAMPLE / "rule.yaml")
    paths = sorted((EXAMPLE / "sheets").iterdir())
    reports = {}
    for threads in (1, 4):
        for module in (sheets, join, bootstrap):
            monkeypatch.setattr(module, "thread_count", lambda threads=threads: threads)
        joined = join.join_sheets(sheets.read_sheets(paths), rule)
        reports[threads] = render_json(build_report(joined, AuditOptions(n_boot=200, seed=3)).to_dict())
    assert len(paths) == 3 and '"n_boot": 200' in reports[1]
    assert reports[1] == reports[4]


# --- a system that refuses threads (an address-space limit, a container's process limit) ---------


def refuse_threads(monkeypatch: pytest.MonkeyPatch, allowed: int = 0) -> list[int]:
    """Threads start as the system allows: the first ``allowed``, then none (Python's own error).
    Returns the count of threads refused so far (one item)."""
    started, refused = [0], [0]
    start = threading.Thread.start

    def limited(thread: threading.Thread) -> None:
        if started[0] >= allowed:
            refused[0] += 1
            raise RuntimeError("can't start new thread")
        started[0] += 1
        start(thread)

    monkeypatch.setattr(threading.Thread, "start", limited)
    return refused


def test_a_pool_refused_every_thread_runs_each_task_on_the_submitting_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    refuse_threads(monkeypatch)
    here = threading.get_ident()
    with _threads.Workers(max_workers=4) as pool:
        results = list(pool.map(lambda n: (n * n, threading.get_ident()), range(10)))
        failed = pool.submit(lambda: 1 / 0)
    assert [square for square, _ in results] == [n * n for n in range(10)]
    assert {thread for _, thread in results} == {here}
    with pytest.raises(ZeroDivisionError):
        failed.result()


@pytest.mark.parametrize("allowed", [1, 2])
def test_a_pool_refused_some_threads_runs_each_task_exactly_once(monkeypatch: pytest.MonkeyPatch, allowed: int) -> None:
    refuse_threads(monkeypatch, allowed)
    runs: list[int] = []
    lock = threading.Lock()
    release = threading.Event()

    def task(n: int) -> int:
        release.wait()  # the first tasks hold their threads, so the pool asks for more
        with lock:
            runs.append(n)
        return n + 1

    with _threads.Workers(max_workers=4) as pool:
        futures = [pool.submit(task, n) for n in range(allowed)]
        release.set()  # from here a task the pool cannot give a thread runs at once, here
        futures += [pool.submit(task, n) for n in range(allowed, 40)]
        assert [future.result() for future in futures] == list(range(1, 41))
    assert sorted(runs) == list(range(40))


def test_other_refusals_of_a_pool_are_raised_as_they_are() -> None:
    pool = _threads.Workers(max_workers=2)
    pool.shutdown()
    with pytest.raises(RuntimeError, match="after shutdown"):
        pool.submit(int)
    assert not _threads.thread_refused(RuntimeError("cannot schedule new futures after shutdown"))


@pytest.mark.parametrize(
    "command",
    [
        ["score", "--format", "json", "--bootstrap", "200", "--seed", "3"],
        ["report", "--format", "md"],
        ["join", "--out", "joined"],
        ["freeze", "--into", "audits"],
    ],
)
def test_every_command_gives_the_same_output_when_no_thread_can_be_started(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, command: list[str]
) -> None:
    sheets_and_rule = [
        *(str(path) for path in sorted((EXAMPLE / "sheets").iterdir())),
        "--rule",
        str(EXAMPLE / "rule.yaml"),
    ]
    outputs, refused_threads = [], [0]
    for refused in (False, True):
        if refused:
            refused_threads = refuse_threads(monkeypatch)
        folder = tmp_path / str(refused)
        folder.mkdir()
        monkeypatch.chdir(folder)
        result = CliRunner().invoke(app, [command[0], *sheets_and_rule, *command[1:]], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        files = {
            re.sub(r"\d{8}T\d{6}Z", "TIME", str(path.relative_to(folder))): path.read_bytes()
            for path in sorted(folder.rglob("*"))
            if path.is_file() and path.name not in ("manifest.json", "summary.json")  # they carry the time
        }
        outputs.append((result.stdout if command[0] in ("score", "report") else "", files))
    assert outputs[0] == outputs[1]
    assert outputs[0][0] or outputs[0][1]
    assert refused_threads[0] > 0  # the command asked for threads and ran without them


@pytest.mark.parametrize(
    ("error", "says"),
    [
        (MemoryError(), "ran out of memory:"),
        (MemoryError("Unable to allocate 7.45 GiB for an array"), "ran out of memory (Unable to allocate 7.45 GiB"),
        (RuntimeError("can't start new thread"), "could not start a thread"),
    ],
)
def test_memory_or_a_thread_the_system_refuses_is_no_bug_but_exit_71(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], error: Exception, says: str
) -> None:
    import irr_audit.api
    from irr_audit import cli

    def refused(*args, **kwargs):
        raise error

    monkeypatch.setattr(irr_audit.api, "build_report", refused)
    root = Path(__file__).resolve().parents[1]
    sheets_and_rule = [str(root / "examples/sheets/alice.csv"), str(root / "examples/sheets/bob.csv")]
    monkeypatch.setattr(
        sys,
        "argv",
        ["irr-audit", "score", *sheets_and_rule, "--rule", str(root / "rules/explicit_current_failure/v1.yaml")],
    )
    with pytest.raises(SystemExit) as caught:
        cli.main()
    assert caught.value.code == cli.SYSTEM_REFUSED == 71
    err = capsys.readouterr().err
    assert err.startswith(f"Error [system-refused]: irr-audit {says}")
    assert "Traceback" not in err and "bug" not in err and "ulimit -v" in err
