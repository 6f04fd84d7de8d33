"""Thread counts come from the machine's cores, and no result depends on them."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from irr_audit import _threads
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
