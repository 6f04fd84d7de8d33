"""Adjudication of a codebook bundle (freeze --codebook): each unit x variable disagreement is
decided as a rule's bundle's are, in the same record files, each decision naming its variable and
checked against that variable's rule; verify checks the records, labels shows them per variable."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import stat
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from irr_audit.bundle.adjudication import RECORD_FORMAT
from irr_audit.bundle.manifest import canonical_sha256
from irr_audit.bundle.workflow import (
    CodebookAdjudication,
    bundle_adjudication,
    codebook_adjudication,
    record_decisions,
)
from irr_audit.errors import UsageError
from irr_audit.io.outputs import render_json
from tests.conftest import run

ROOT = Path(__file__).resolve().parents[1]
CODEBOOK = ROOT / "codebooks" / "comment_study" / "v1.yaml"
EXAMPLE_SHEETS = sorted((ROOT / "examples" / "codebook" / "sheets").glob("*.csv"))
VARIABLES = ["explicit_current_failure", "product_area", "severity", "sarcasm"]
DIGEST_LINE = "sha256:{}  {}"


def freeze_example(audits: Path, *extra: object) -> Path:
    result = run("freeze", *EXAMPLE_SHEETS, "--codebook", CODEBOOK, "--into", audits, *extra)
    assert result.exit_code == 0, result.output
    (bundle,) = [path for path in audits.iterdir() if path.is_dir()]
    return bundle


def rows_of(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def template(bundle: Path) -> list[dict[str, str]]:
    result = run("adjudicate", bundle, "--quiet")
    assert result.exit_code == 0, result.output
    return rows_of(result.stdout)


def disagreement(rows: list[dict[str, str]], variable: str, at: int = 0) -> dict[str, str]:
    return [row for row in rows if row["variable"] == variable][at]


def decisions_file(tmp_path: Path, rows: list[list[str]], name: str = "decisions.csv") -> Path:
    path = tmp_path / name
    with path.open("w", encoding="utf-8", newline="") as stream:
        csv.writer(stream).writerows([["variable", "comment_id", "code", "note"], *rows])
    return path


def labels(bundle: Path) -> list[dict[str, str]]:
    result = run("labels", bundle, "--quiet")
    assert result.exit_code == 0, result.output
    return rows_of(result.stdout)


def label(rows: list[dict[str, str]], variable: str, unit: str) -> dict[str, str]:
    (found,) = [row for row in rows if row["variable"] == variable and row["comment_id"] == unit]
    return found


def digest_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def writable(path: Path) -> None:
    for folder in (path.parent, path):
        os.chmod(folder, folder.stat().st_mode | stat.S_IWUSR)


def rewrite_record(record: Path, change: Any) -> None:
    """Edit a record as a careful forger would: its record_sha256 recomputed."""
    content = json.loads(record.read_text(encoding="utf-8"))
    change(content)
    content["record_sha256"] = canonical_sha256(content, "record_sha256")
    writable(record)
    record.write_text(render_json(content), encoding="utf-8")


# --- the CLI, end to end ---------------------------------------------------------------------


def test_a_codebook_bundle_is_adjudicated_end_to_end(tmp_path: Path) -> None:
    digests = tmp_path / "audits" / "DIGESTS"
    bundle = freeze_example(tmp_path / "audits", "--digests", digests)
    rows = template(bundle)
    assert list(rows[0]) == ["variable", "comment_id", "coder:alice", "coder:bob", "coder:carol", "code", "note"]
    counts = {variable: sum(row["variable"] == variable for row in rows) for variable in VARIABLES}
    assert counts == {"explicit_current_failure": 2, "product_area": 7, "severity": 7, "sarcasm": 2}
    for row in rows:  # each row is a disagreement of its own variable
        assert len({row[f"coder:{coder}"] for coder in ("alice", "bob", "carol")}) > 1, row
    severity, sarcasm = disagreement(rows, "severity"), disagreement(rows, "sarcasm")
    decisions = decisions_file(
        tmp_path,
        [
            ["severity", severity["comment_id"], "MAJOR", "decided on a call"],  # case folded as join folds it
            ["sarcasm", sarcasm["comment_id"], "Y", ""],  # the rule's alias y -> yes
            ["product_area", disagreement(rows, "product_area")["comment_id"], "", ""],  # left undecided
        ],
    )

    recorded = run("adjudicate", bundle, "--decisions", decisions, "--by", "alice and bob", "--digests", digests)

    assert recorded.exit_code == 0, recorded.output
    record = Path(recorded.stdout.split("  ", 1)[1].strip())
    assert record.parent == bundle / "adjudication"
    assert f"recorded 2 decisions by alice and bob; 2 of {len(rows)} disagreements decided" in recorded.stderr
    content = json.loads(record.read_text(encoding="utf-8"))
    assert content["format"] == RECORD_FORMAT
    assert [(item["variable"], item["comment_id"], item["final_code"]) for item in content["decisions"]] == [
        ("severity", severity["comment_id"], "major"),
        ("sarcasm", sarcasm["comment_id"], "yes"),
    ]
    assert content["decisions"][0]["codes"] == {
        coder: severity[f"coder:{coder}"] for coder in ("alice", "bob", "carol")
    }
    listed = digests.read_text(encoding="utf-8").splitlines()
    assert listed[-1] == DIGEST_LINE.format(digest_of(record), f"{bundle.name}/adjudication/{record.name}")

    verified = run("verify", bundle, "--digests", digests)
    assert verified.exit_code == 0, verified.output
    assert (
        "1 adjudication record checked" in verified.stdout and "its 1 adjudication record is listed" in verified.stdout
    )

    shown = labels(bundle)
    decided = label(shown, "severity", severity["comment_id"])
    assert (decided["adjudicated_code"], decided["final_code"], decided["final"]) == ("major", "major", "adjudicated")
    assert decided["why"].startswith("the coders disagreed; decided by alice and bob on ")
    assert label(shown, "sarcasm", sarcasm["comment_id"])["final_code"] == "yes"
    # the same unit on another variable keeps its own label
    other = label(shown, "sarcasm", severity["comment_id"])
    assert other["final"] != "adjudicated"
    assert label(shown, "product_area", disagreement(rows, "product_area")["comment_id"])["final"] == "undecided"

    again = template(bundle)  # the template shows the decisions on record
    assert disagreement(again, "severity")["code"] == "major"
    assert disagreement(again, "severity")["note"] == "decided on a call"
    same = run("adjudicate", bundle, "--decisions", decisions, "--by", "alice and bob")
    assert same.exit_code == 0 and "nothing new to record: the 2 decisions" in same.stderr
    assert len(list((bundle / "adjudication").glob("*.json"))) == 1


def test_a_later_decision_on_a_codebook_bundle_supersedes_an_earlier_one(tmp_path: Path) -> None:
    bundle = freeze_example(tmp_path / "audits")
    unit = disagreement(template(bundle), "severity")["comment_id"]
    first = decisions_file(tmp_path, [["severity", unit, "minor", ""]], "first.csv")
    second = decisions_file(tmp_path, [["severity", unit, "critical", "on reflection"]], "second.csv")
    assert run("adjudicate", bundle, "--decisions", first, "--by", "alice").exit_code == 0
    assert run("adjudicate", bundle, "--decisions", second, "--by", "bob").exit_code == 0

    assert label(labels(bundle), "severity", unit)["final_code"] == "critical"
    assert len(list((bundle / "adjudication").glob("*.json"))) == 2
    assert run("verify", bundle).exit_code == 0


# --- the library -------------------------------------------------------------------------------


def test_a_codebook_bundle_is_adjudicated_through_the_library(tmp_path: Path) -> None:
    bundle = freeze_example(tmp_path / "audits")
    state = bundle_adjudication(bundle)
    assert isinstance(state, CodebookAdjudication)
    assert list(state.variables) == VARIABLES and state.decided == 0
    variable, unit = next(item for item in state.disagreements if item[0] == "product_area")
    part = state.variables[variable]
    assert part.joined.rule.id == "product_area" and unit in part.disagreements
    decisions = decisions_file(tmp_path, [[variable, unit, "sync", "from the library"]])
    now = datetime(2030, 1, 2, 3, 4, 5, tzinfo=timezone.utc)

    recorded = record_decisions(state, decisions, "carol", now=now)

    assert (recorded.found, recorded.new, recorded.decided) == (1, 1, 1)
    assert recorded.path == bundle / "adjudication" / "20300102T030405Z.json"
    assert recorded.listed_as == f"{bundle.name}/adjudication/20300102T030405Z.json"
    assert recorded.digest == "sha256:" + digest_of(recorded.path)
    after = codebook_adjudication(bundle)
    assert after.decided == 1 and after.variables[variable].current[unit]["final_code"] == "sync"
    assert after.variables[variable].current[unit]["decided_by"] == "carol"
    assert record_decisions(after, decisions, "carol").path is None  # already on record


# --- verify checks the records as a rule's bundle's ------------------------------------------


@pytest.fixture
def adjudicated(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A codebook bundle with one record, listed in a digest list: (bundle, record, digest list)."""
    digests = tmp_path / "audits" / "DIGESTS"
    bundle = freeze_example(tmp_path / "audits", "--digests", digests)
    unit = disagreement(template(bundle), "severity")["comment_id"]
    decisions = decisions_file(tmp_path, [["severity", unit, "major", ""]])
    recorded = run("adjudicate", bundle, "--decisions", decisions, "--by", "alice", "--digests", digests)
    assert recorded.exit_code == 0, recorded.output
    (record,) = (bundle / "adjudication").glob("*.json")
    assert run("verify", bundle, "--digests", digests).exit_code == 0
    return bundle, record, digests


def test_verify_fails_when_a_codebook_record_is_edited(adjudicated: tuple[Path, Path, Path]) -> None:
    bundle, record, _ = adjudicated
    writable(record)
    record.write_text(record.read_text(encoding="utf-8").replace('"major"', '"minor"'), encoding="utf-8")

    result = run("verify", bundle)

    assert result.exit_code == 1
    assert f"adjudication: adjudication/{record.name}: was edited after it was recorded" in result.stdout
    refused = run("labels", bundle)
    assert refused.exit_code == 2 and "[bundle-adjudication]" in refused.output


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda record: record["decisions"][0].update(final_code="unknown"), "not a code of the rule"),
        (lambda record: record["decisions"][0].update(variable="sarcasm"), "which is not a disagreement of this audit"),
        (lambda record: record["decisions"][0].pop("variable"), "names the variable None, which is not a variable"),
        (lambda record: record["decisions"][0].update(variable="mood"), "names the variable 'mood', which is not a"),
        (lambda record: record["decisions"][0]["codes"].update(alice="critical"), "quotes other independent codes"),
    ],
)
def test_a_re_hashed_codebook_record_is_checked_against_its_variable(
    adjudicated: tuple[Path, Path, Path], change: Any, expected: str
) -> None:
    bundle, record, digests = adjudicated
    rewrite_record(record, change)

    result = run("verify", bundle)

    assert result.exit_code == 1, result.stdout
    assert f"adjudication: adjudication/{record.name}: decisions[0] " in result.stdout
    assert expected in result.stdout
    anchored = run("verify", bundle, "--digests", digests)  # and the digest list no longer matches
    assert anchored.exit_code == 1 and f"anchor: adjudication/{record.name}" in anchored.stdout
    refused = run("adjudicate", bundle)
    assert refused.exit_code == 2 and "[bundle-adjudication]" in refused.output


def test_verify_fails_when_a_listed_codebook_record_is_deleted(adjudicated: tuple[Path, Path, Path]) -> None:
    bundle, record, digests = adjudicated
    writable(record)
    record.unlink()

    result = run("verify", bundle, "--digests", digests)

    assert result.exit_code == 1
    assert f"missing: adjudication/{record.name}: listed for {bundle.name} in {digests}" in result.stdout
    assert label(labels(bundle), "severity", _first_severity(bundle))["final"] == "undecided"  # rolled back


def _first_severity(bundle: Path) -> str:
    return disagreement(template(bundle), "severity")["comment_id"]


def test_whatever_else_the_adjudication_folder_holds_is_extra(tmp_path: Path) -> None:
    """As in a rule's bundle: an empty adjudication folder is no change; a file that is not a
    record, a record that is not one, a folder, are each named."""
    bundle = freeze_example(tmp_path / "audits")
    folder = bundle / "adjudication"
    folder.mkdir()
    assert run("verify", bundle).exit_code == 0
    (folder / "evil.txt").write_text("anything at all\n", encoding="utf-8")
    (folder / "20300101T000000Z.json").write_text('{"not": "a record"}', encoding="utf-8")

    result = run("verify", bundle)

    assert result.exit_code == 1
    assert "extra: adjudication/evil.txt: not an adjudication record" in result.stdout
    assert "adjudication: adjudication/20300101T000000Z.json: is not an adjudication record" in result.stdout


# --- bad decisions are refused, naming the row ------------------------------------------------


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (
            [["mood", "{severity}", "major"]],
            "row 2 names the variable 'mood', which is not a variable of this codebook",
        ),
        ([["severity", "{severity}", "huge"]], "row 2 has the final code 'huge', which is not a code of severity v1"),
        ([["severity", "{severity}", "unknown"]], "row 2 has the final code 'unknown', which is not a code"),
        ([["severity", "{severity}", "yes"]], "row 2 has the final code 'yes', which is not a code of severity v1"),
        ([["sarcasm", "{product_area}", "yes"]], "row 2 names comment '{product_area}', which is not a disagreement"),
        ([["sarcasm", "no-such-unit", ""]], "row 2 names comment 'no-such-unit', which is not a disagreement"),
        (
            [["severity", "{severity}", "major"], ["severity", "{severity}", "minor"]],
            "row 3 decides '{severity}' on severity again (first in row 2)",
        ),
        ([["", "{severity}", "major"]], "row 2 has no variable"),
        ([["severity", "", "major"]], "row 2 has a code but no comment_id"),
    ],
)
def test_bad_codebook_decisions_are_refused_naming_the_row(tmp_path: Path, rows: list[list[str]], message: str) -> None:
    bundle = freeze_example(tmp_path / "audits")
    listed = template(bundle)
    sarcasm = {row["comment_id"] for row in listed if row["variable"] == "sarcasm"}
    units = {
        "severity": disagreement(listed, "severity")["comment_id"],
        # a disagreement on product_area that is none on sarcasm
        "product_area": next(
            row["comment_id"]
            for row in listed
            if row["variable"] == "product_area" and row["comment_id"] not in sarcasm
        ),
    }
    filled = [[cell.format(**units) for cell in row] + [""] for row in rows]
    decisions = decisions_file(tmp_path, filled)

    result = run("adjudicate", bundle, "--decisions", decisions, "--by", "alice")

    assert result.exit_code == 2, result.output
    assert f"Error [adjudication-decisions]: decisions file {decisions} {message.format(**units)}" in " ".join(
        result.output.split()
    )
    assert not (bundle / "adjudication").exists()


def test_a_codebook_decisions_file_needs_its_variable_column(tmp_path: Path) -> None:
    bundle = freeze_example(tmp_path / "audits")
    decisions = tmp_path / "decisions.csv"
    decisions.write_text(f"comment_id,code\n{_first_severity(bundle)},major\n", encoding="utf-8")
    state = codebook_adjudication(bundle)

    with pytest.raises(UsageError, match='has no column "variable"'):
        record_decisions(state, decisions, "alice")
    result = run("adjudicate", bundle, "--decisions", decisions, "--by", "alice")
    assert result.exit_code == 2 and "use the columns variable, comment_id, code and note" in result.output
