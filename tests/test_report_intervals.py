"""Intervals the reports show must exist: the codebook's reliability table gives each variable the
interval its own report gives its headline (ordinal alpha's from Krippendorff's bootstrap), and a
bootstrap of one replicate gives no interval (an interval of one value is undefined, not [x, x])."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import irr_audit
from irr_audit.metrics.alpha_bootstrap import krippendorff_bootstrap
from irr_audit.metrics.patterns import compress
from irr_audit.rules.scale import Scale

ROOT = Path(__file__).resolve().parents[1]
CODEBOOK = str(ROOT / "codebooks" / "comment_study" / "v1.yaml")
SHEETS = [str(ROOT / "examples" / "codebook" / "sheets" / f"{coder}.csv") for coder in ("alice", "bob", "carol")]


@pytest.mark.parametrize("level", (0.95, 0.8))
def test_reliability_row_carries_each_headline_interval(level: float) -> None:
    document = irr_audit.audit_codebook(SHEETS, CODEBOOK, ci_level=level).to_dict()
    rows = {row["variable"]: row for row in document["reliability"]}
    assert document["variables"]["severity"]["rule"]["scale"] == "ordinal"
    for variable, report in document["variables"].items():
        interval = report["headline"]["interval"]
        coefficient = rows[variable]["coefficient"]
        assert interval is not None, variable
        assert coefficient["ci"] == [interval["low"], interval["high"]], variable
        assert coefficient["ci_level"] == level == interval["level"]
    assert rows["severity"]["coefficient"]["ci"] is not None  # ordinal alpha: Krippendorff's bootstrap
    markdown = irr_audit.audit_codebook(SHEETS, CODEBOOK, ci_level=level).to_markdown()
    severity = next(line for line in markdown.splitlines() if line.startswith("| severity |"))
    low, high = rows["severity"]["coefficient"]["ci"]
    assert f"\\[{low:.4f}, {high:.4f}\\]" in severity


def _ordinal_audit(n_boot: int) -> dict:
    rule = irr_audit.load_rule(
        {"rule": "o", "version": 1, "scale": "ordinal", "codes": [{"code": f"c{i}"} for i in range(4)]}
    )
    rng = np.random.default_rng(0)
    base = rng.integers(0, 4, 30)
    codes = np.stack([base, base, rng.integers(0, 4, 30)], 1)
    codes[:20, 2] = base[:20]
    rows = [(f"u{i}", f"k{j}", f"c{codes[i, j]}") for j in range(3) for i in range(30)]
    frame = pd.DataFrame(rows, columns=["comment_id", "coder", "code"])
    return irr_audit.audit(frame, rule, bootstrap=n_boot, seed=1)


def test_one_replicate_gives_no_kalpha_interval() -> None:
    patterns = compress(np.array([[0, 0], [1, 1], [0, 1], [2, 2]]), 3)
    for n_boot in (0, 1):
        drawn = krippendorff_bootstrap(patterns, Scale.NOMINAL, None, n_boot, np.random.default_rng(1))
        assert drawn["defined"] is False and "at least two" in drawn["reason"]
        assert "ci" not in drawn and "q_below" not in drawn
    assert krippendorff_bootstrap(patterns, Scale.NOMINAL, None, 2, np.random.default_rng(1))["defined"]


def test_one_replicate_headline_says_undefined_not_a_zero_width_interval() -> None:
    audit = _ordinal_audit(1)
    document = audit.to_dict()
    assert document["headline"]["interval"] is None
    assert document["krippendorff_bootstrap"]["metrics"]["defined"] is False
    assert "at least two" in audit.to_markdown()
    text = audit.to_text(width=None)
    assert "undefined in 0 of 1" not in text  # the percentile bootstrap says why, not "0 undefined"
    assert "fewer than two bootstrap replicates were defined" in text


def test_two_replicates_still_give_an_interval() -> None:
    document = _ordinal_audit(2).to_dict()
    assert document["headline"]["interval"] is not None
