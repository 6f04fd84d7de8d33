"""A report from unit-pattern counts, a K x K table or a subjects x categories count matrix knows
how many fully coded units disagree (the counts say so) but not which (they hold no unit ids):
it gives the true count and says the list is not available, never "0" or "no unit has differing
codes"; and a K x K table, which holds the fully coded units only, does not claim that no code was
missing."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import irr_audit
from irr_audit.cli import app
from irr_audit.report.model import disagreeing_count

ROOT = Path(__file__).resolve().parents[1]
SHEETS = [ROOT / "examples" / "sheets" / name for name in ("alice.csv", "bob.csv")]
RULE = ROOT / "rules" / "explicit_current_failure" / "v1.yaml"
CODEBOOK = ROOT / "codebooks" / "comment_study" / "v1.yaml"
CODEBOOK_SHEETS = [ROOT / "examples" / "codebook" / "sheets" / f"{coder}.csv" for coder in ("alice", "bob", "carol")]
TABLES = ROOT / "tests" / "fixtures" / "tables"
NONE_SAID = "No fully coded unit has differing codes"
FORMS = ("to_markdown", "to_html", "to_text", "to_methods")


def run(*args: str | Path):
    return CliRunner().invoke(app, [str(arg) for arg in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def joined(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("counts") / "joined"
    assert run("join", *SHEETS, "--rule", RULE, "--out", out, "--quiet").exit_code == 0
    return out


def test_disagreeing_count_counts_fully_coded_differing_patterns() -> None:
    patterns = np.array([[0, 0, 0], [0, 1, 0], [1, -1, 0], [2, 2, 1], [-1, -1, -1]])
    assert disagreeing_count(patterns, np.array([7, 3, 5, 2, 4])) == 5  # 3 + 2: the partly coded 5 are not
    assert disagreeing_count(np.zeros((0, 2), dtype=np.int64), np.zeros(0, dtype=np.int64)) == 0


def _assert_counted_not_listed(audit: irr_audit.Audit, count: int, reason: str) -> None:
    document = audit.to_dict()
    assert document["disagreement_count"] == count
    assert "disagreements" not in document  # no list: not an empty one
    assert reason in document["disagreements_unlisted"]
    assert json.loads(audit.to_json())["disagreement_count"] == count
    markdown = audit.to_markdown()
    assert f"## Disagreements for post-hoc review ({count})" in markdown
    assert f"Disagreements for post-hoc review ({count})" in audit.to_html()
    for form in FORMS:
        assert NONE_SAID not in getattr(audit, form)(), form
        # a count file names no coder and has no log: no Python None shown for either
        assert not re.search(r"\bNone\b", getattr(audit, form)()), form
    assert "no coder: a table of counts" in audit.to_markdown()
    for form in ("to_html", "to_markdown", "to_text"):
        assert "units in the missingness log are left out" not in getattr(audit, form)(), form


def test_counts_report_gives_the_count_the_sheets_give(joined: Path) -> None:
    sheets = irr_audit.audit([str(s) for s in SHEETS], str(RULE))
    assert sheets.to_dict()["disagreement_count"] == 3
    counted = irr_audit.audit_counts(joined / "counts.csv", str(RULE))
    _assert_counted_not_listed(counted, 3, "not available from unit-pattern counts")
    assert "the list of units is not available" in counted.to_markdown()


def test_counts_report_through_the_cli(joined: Path) -> None:
    md = run("report", "--counts", joined / "counts.csv", "--rule", RULE, "--format", "md").output
    assert "## Disagreements for post-hoc review (3)" in md and NONE_SAID not in md
    js = json.loads(run("report", "--counts", joined / "counts.csv", "--rule", RULE, "--format", "json").stdout)
    assert js["disagreement_count"] == 3
    scored = json.loads(run("score", "--counts", joined / "counts.csv", "--rule", RULE, "--format", "json").stdout)
    assert scored["disagreement_count"] == 3


def test_table_report_gives_the_off_diagonal_count(tmp_path: Path) -> None:
    table = tmp_path / "table.csv"
    table.write_text(",yes,no\nyes,8,2\nno,1,9\n", encoding="utf-8")
    audit = irr_audit.audit_table(table, str(RULE))
    _assert_counted_not_listed(audit, 3, "not available from a table")
    # a table holds the fully coded units only: how many others there were is not known, not 0
    assert audit.to_dict()["units"]["missing"] is None
    for form in FORMS:
        text = getattr(audit, form)()
        assert "no code was missing" not in text and "0 in the missingness log" not in text, form
    assert "| not fully coded | not determined by a table" in audit.to_markdown()


def test_category_counts_report_counts_subjects_with_more_than_one_category() -> None:
    path = TABLES / "fleiss1971_category_counts.csv"
    with path.open(encoding="utf-8") as handle:
        rows = [[int(x) for x in row[1:]] for row in list(csv.reader(handle))[1:]]
    most = max(sum(row) for row in rows)
    expected = sum(1 for row in rows if sum(row) == most and sum(1 for x in row if x) > 1)
    audit = irr_audit.audit_table(path, str(TABLES / "fleiss1971_rule.yaml"), kind="category_counts")
    assert expected > 0
    _assert_counted_not_listed(audit, expected, "not available from a table")


def test_codebook_counts_give_each_variables_count(tmp_path: Path) -> None:
    out = tmp_path / "joined"
    assert run("join", *CODEBOOK_SHEETS, "--codebook", CODEBOOK, "--out", out, "--quiet").exit_code == 0
    sheets = irr_audit.audit_codebook([str(s) for s in CODEBOOK_SHEETS], str(CODEBOOK)).to_dict()
    counted = irr_audit.audit_codebook_counts(out / "counts.csv", str(CODEBOOK))
    document = counted.to_dict()
    for variable, report in document["variables"].items():
        assert report["disagreement_count"] == sheets["variables"][variable]["disagreement_count"], variable
        assert "disagreements_unlisted" in report
    assert any(report["disagreement_count"] for report in document["variables"].values())
    assert NONE_SAID not in counted.to_markdown()
