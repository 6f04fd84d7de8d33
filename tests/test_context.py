"""The comment's text and context travel: the blank sheets carry the thread title, the parent
comment and a link; a sampled join or bundle lists the ledger's text beside each
disagreement (the ledger wins over a sheet's copy), in Markdown, HTML, JSON and the
adjudication template, which the decisions parser reads back without them."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest
from openpyxl import load_workbook
from typer.testing import CliRunner

import irr_audit
from irr_audit.cli import app
from irr_audit.sample.ledger import parent_body, unit_link
from irr_audit.sample.sheets import SHEET_COLUMNS

ROOT = Path(__file__).resolve().parent.parent
DATASET = ROOT / "examples/collector/dataset.jsonl"
RUN = ROOT / "examples/collector/run.json"
RULE = ROOT / "rules/explicit_current_failure/v1.yaml"
SHEETS = ROOT / "examples/sheets"
TITLE = "Version 5.2 megathread: bugs and feedback"


def run(*args: object):
    return CliRunner().invoke(app, [str(arg) for arg in args], catch_exceptions=False)


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    folder = tmp_path / "sample"
    result = run("sample", DATASET, "--run-record", RUN, "--rule", RULE, "--coders", "alice,bob", "--out", folder)
    assert result.exit_code == 0, result.output
    return folder


def filled(sample: Path, edit: dict[str, str] | None = None) -> list[Path]:
    """The example's filled sheets in the sample folder; ``edit`` changes bodies in alice's copy."""
    paths = []
    for coder in ("alice", "bob"):
        rows = list(csv.DictReader((SHEETS / f"{coder}.csv").open(encoding="utf-8")))
        for row in rows:
            if coder == "alice" and edit and row["comment_id"] in edit:
                row["body"] = edit[row["comment_id"]]
        path = sample / "sheets" / f"{coder}.csv"
        with path.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        paths.append(path)
    return paths


def test_blank_csv_sheets_carry_the_thread_title_the_parent_comment_and_a_link(sample: Path) -> None:
    rows = list(csv.DictReader((sample / "sheets/bob.csv").open(encoding="utf-8-sig")))
    assert tuple(rows[0]) == SHEET_COLUMNS
    by_id = {row["comment_id"]: row for row in rows}
    reply = by_id["kq3q1f4"]  # parent t1_kq3m1x0
    assert reply["parent_body"] == by_id["kq3m1x0"]["body"]
    assert reply["thread_title"] == TITLE
    assert reply["url"] == "https://www.reddit.com/comments/1gx7ka9/_/kq3q1f4/"
    assert by_id["kq3m1x0"]["parent_body"] == ""  # a top-level comment replies to the post (t3_)
    assert {row["code"] for row in rows} == {""} and {row["note"] for row in rows} == {""}


def test_blank_xlsx_sheets_carry_the_same_context(tmp_path: Path) -> None:
    folder = tmp_path / "sample"
    result = run(
        *("sample", DATASET, "--rule", RULE, "--coders", "alice,bob", "--out", folder, "--sheet-format", "xlsx")
    )
    assert result.exit_code == 0, result.output
    rows = list(load_workbook(folder / "sheets/alice.xlsx").worksheets[0].iter_rows(values_only=True))
    assert rows[0] == SHEET_COLUMNS
    reply = dict(zip(SHEET_COLUMNS, next(row for row in rows if row[0] == "kq41s6t")))
    assert reply["parent_body"] == "Pretty sure this thing is broken lol"
    assert reply["thread_title"] == TITLE


def test_the_link_is_the_datasets_url_else_built_for_reddit_ids() -> None:
    assert unit_link("https://example.org/c/1", "1gx7ka9", "kq3m1x0") == "https://example.org/c/1"
    assert unit_link(None, "t3_1gx7ka9", "t1_kq3m1x0") == "https://www.reddit.com/comments/1gx7ka9/_/kq3m1x0/"
    assert unit_link(None, "", "kq3m1x0") == ""  # no post: no permalink
    assert unit_link(None, "thread 7", "kq3m1x0") == ""  # not a Reddit id


def test_the_parent_is_found_by_its_id_or_fullname() -> None:
    bodies = {"a1": "first", "t1_b2": "second"}
    assert parent_body("t1_a1", bodies) == "first"
    assert parent_body("a1", bodies) == "first"
    assert parent_body("t1_b2", bodies) == "second"
    assert parent_body("t3_a1", bodies) == ""  # the post
    assert parent_body("t1_zz", bodies) == ""  # not in the dataset


def test_filled_blank_sheets_join_on_code_alone(sample: Path, tmp_path: Path) -> None:
    """The context columns are read by coders, not by join: a filled blank sheet joins."""
    for coder, code in (("alice", "yes"), ("bob", "no")):
        path = sample / "sheets" / f"{coder}.csv"
        rows = list(csv.DictReader(path.open(encoding="utf-8-sig")))
        for row in rows:
            row["code"] = code
        with path.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=SHEET_COLUMNS)
            writer.writeheader()
            writer.writerows(rows)
    paths = [sample / "sheets/alice.csv", sample / "sheets/bob.csv"]
    result = irr_audit.audit(paths, RULE, sample=sample)
    assert result.units["fully_coded"] == 22
    assert len(result.to_dict()["disagreements"]) == 22


def test_the_ledgers_text_wins_over_an_edited_sheet_and_travels_with_its_link(sample: Path) -> None:
    sheets = filled(sample, edit={"kq41s6t": "EDITED BY ALICE"})
    result = irr_audit.audit(sheets, RULE, sample=sample)
    listed = {item["comment_id"]: item for item in result.to_dict()["disagreements"]}
    reply = listed["kq41s6t"]
    assert reply["text"] == "Doesn't work for me."  # the ledger's, not the sheet's edit
    assert reply["link"] == "https://www.reddit.com/comments/1gx7ka9/_/kq41s6t/"
    assert reply["parent_text"] == "Pretty sure this thing is broken lol"
    assert reply["thread_title"] == TITLE
    markdown = result.to_markdown()
    assert "| comment_id | alice | bob | text | link |" in markdown and "EDITED" not in markdown
    html = result.to_html()
    assert "replying to: Pretty sure this thing is broken lol" in html and "EDITED" not in html


def test_without_a_sample_the_report_is_as_before(sample: Path) -> None:
    result = irr_audit.audit([SHEETS / "alice.csv", SHEETS / "bob.csv"], RULE)
    item = result.to_dict()["disagreements"][0]
    assert set(item) == {"comment_id", "codes", "text"}
    assert "| comment_id | alice | bob | text |\n" in result.to_markdown()


def test_join_folder_and_bundle_read_the_ledger(sample: Path, tmp_path: Path) -> None:
    sheets = filled(sample, edit={"kq3z1q7": "EDITED"})
    joined = tmp_path / "joined"
    irr_audit.join_folder(sheets, RULE, joined, sample=sample)
    report = run("report", joined, "--format", "md")
    assert report.exit_code == 0, report.output
    assert "Pretty sure this thing is broken lol" in report.stdout and "EDITED" not in report.stdout
    frozen = run("freeze", joined, "--rule", RULE, "--sample", sample, "--into", tmp_path / "audits")
    assert frozen.exit_code == 0, frozen.output
    bundle = next((tmp_path / "audits").glob("*_v1"))
    template = run("adjudicate", bundle)
    rows = list(csv.DictReader(io.StringIO(template.stdout)))
    assert [(row["comment_id"], row["text"], row["link"]) for row in rows][0] == (
        "kq3z1q7",
        "Pretty sure this thing is broken lol",
        "https://www.reddit.com/comments/1gx7ka9/_/kq3z1q7/",
    )
    # the template, filled in, is read back: text and link are ignored
    decisions = tmp_path / "decisions.csv"
    rows[0]["code"] = "no"
    with decisions.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    recorded = run("adjudicate", bundle, "--decisions", decisions, "--by", "carol")
    assert recorded.exit_code == 0, recorded.output
    assert "1 of 3 disagreements decided" in recorded.stderr
    html = run("report", bundle, "--format", "html")
    assert "https://www.reddit.com/comments/1gx7ka9/_/kq3z1q7/" in html.stdout


def test_a_join_folder_whose_sample_is_gone_shows_the_sheets_text_and_says_why(sample: Path, tmp_path: Path) -> None:
    sheets_copy = tmp_path / "sheets"
    sheets_copy.mkdir()
    sheets = [Path(shutil.copy(path, sheets_copy)) for path in filled(sample, edit={"kq3z1q7": "SHEET TEXT"})]
    joined = tmp_path / "joined"
    irr_audit.join_folder(sheets, RULE, joined, sample=sample)
    shutil.rmtree(sample)
    result = irr_audit.audit(joined)
    assert any("is no longer there" in warning and "sheets' text" in warning for warning in result.warnings)
    listed = {item["comment_id"]: item for item in result.to_dict()["disagreements"]}
    assert listed["kq3z1q7"]["text"] == "SHEET TEXT"
    assert json.loads(result.to_json())["units"]["fully_coded"] == 20


def test_a_join_folder_whose_ledger_was_altered_shows_the_sheets_text(sample: Path, tmp_path: Path) -> None:
    sheets = filled(sample, edit={"kq3z1q7": "SHEET TEXT"})
    joined = tmp_path / "joined"
    irr_audit.join_folder(sheets, RULE, joined, sample=sample)
    ledger = sample / "ledger.jsonl"
    ledger.write_text(ledger.read_text(encoding="utf-8").replace("broken lol", "FORGED"), encoding="utf-8")
    result = irr_audit.audit(joined)
    assert any("cannot be read (the ledger in" in warning for warning in result.warnings)
    listed = {item["comment_id"]: item for item in result.to_dict()["disagreements"]}
    assert listed["kq3z1q7"]["text"] == "SHEET TEXT"  # never the altered ledger's
