"""`irr-audit sample` through the CLI: the collector's output -> ledger, missingness
log, completeness, a reproducible draw and blank sheets that go straight into join.

Fixtures (tests/fixtures/collector/, described in its README.md) are made up for
these tests; no real data set is used.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from openpyxl import load_workbook
from typer.testing import CliRunner

from irr_audit.cli import app
from irr_audit.join.missingness import LOG_COLUMNS
from irr_audit.sample.ledger import LogRow
from irr_audit.sample.sheets import SHEET_COLUMNS

FIXTURES = Path(__file__).parent / "fixtures" / "collector"
DATASET = FIXTURES / "dataset.json"
RUN_PARTIAL = FIXTURES / "run_partial.json"
THREAD = FIXTURES / "thread.jsonl"
RUN_COMPLETE = FIXTURES / "run_complete.json"
DATASET_CSV = FIXTURES / "dataset.csv"
RULE = FIXTURES / "rule_v1.yaml"
RULE_V2 = FIXTURES / "rule_v2.yaml"
FORMULA_BODIES = {
    "c18": '=HYPERLINK("http://example.invalid","click me")',
    "c19": "+1 same problem here",
    "c20": "-- the export fails with error 5",
    "c21": "@support the login page is down",
}
ODD_BODIES = {
    "c22": "Line one\nLine two\twith a tab",
    "c23": "Crashes again \U0001f621\U0001f525",
    "c24": "\u0627\u0644\u062a\u0637\u0628\u064a\u0642 \u0644\u0627 \u064a\u0639\u0645\u0644",
    "c25": "\u05e9\u05d2\u05d9\u05d0\u05d4 error 500 \u05d1\u05db\u05dc \u05e4\u05e2\u05dd",
}


def run(*args: object):
    return CliRunner().invoke(app, [str(arg) for arg in args], catch_exceptions=False)


def sample(tmp_path: Path, dataset: Path, *extra: object, out: str = "sample", coders: str = "alice,bob"):
    folder = tmp_path / out
    result = run("sample", dataset, "--rule", RULE, "--coders", coders, "--out", folder, *extra)
    return result, folder


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line]


def test_fields_that_are_not_text_are_logged_as_invalid_field_not_turned_into_text(tmp_path):
    """A JSON object, array or boolean where the collector writes text: the unit is logged, as a
    commentId of those types is (missing_id); a number is text as written, as in commentId."""
    items = [
        {"commentId": "a", "body": {"t": 1}, "postId": "p", "status": "ok"},
        {"commentId": "b", "body": "fine", "postId": ["p"], "authorName": True, "status": "ok"},
        {"commentId": "c", "body": "reply", "postId": "p", "parent": "a", "status": "ok"},
        {"commentId": "d", "body": "number post", "postId": 7, "status": "ok"},
        {"commentId": {"x": 1}, "body": {"t": 1}, "status": "ok"},
    ]
    result, folder = sample(tmp_path, write_file(tmp_path, "dataset.json", json.dumps(items)))
    assert result.exit_code == 0, result.output
    ledger = jsonl(folder / "ledger.jsonl")
    assert [(unit["comment_id"], unit["post_id"], unit["parent_body"]) for unit in ledger] == [
        ("c", "p", ""),  # its parent's body is no text: not shown as the comment replied to
        ("d", "7", ""),
    ]
    log = [
        (row["row"], row["reason"], row["raw_value"], row["detail"]) for row in jsonl(folder / "missingness_log.jsonl")
    ]
    assert log == [
        (1, "invalid_field", '{"t": 1}', "body is a JSON object, not text or a number"),
        (
            2,
            "invalid_field",
            '["p"]',
            "postId is a JSON array, not text or a number; authorName is a JSON boolean, not text or a number",
        ),
        (5, "missing_id", '{"x": 1}', "commentId is a JSON object, not text or a number"),
    ]


def test_keys_that_spell_one_field_twice_are_read_as_before_not_refused(tmp_path):
    """commentId and comment_id are two keys (no key repeats): the collector's spelling wins, as
    README "The collector's fields" says; only a key given twice is refused."""
    lines = [
        '{"commentId": "a", "comment_id": "z", "body": "x", "status": "ok"}',
        '{"comment_id": "b", "commentId": null, "Body": "y", "body": "w", "status": "ok"}',
    ]
    result, folder = sample(tmp_path, write_file(tmp_path, "dataset.jsonl", "\n".join(lines)))
    assert result.exit_code == 0, result.output
    assert [(unit["comment_id"], unit["body"]) for unit in jsonl(folder / "ledger.jsonl")] == [("a", "x"), ("b", "y")]


def csv_rows(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8-sig"), newline="")))


def write_file(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path


@pytest.fixture(scope="module")
def partial(tmp_path_factory) -> tuple[object, Path]:
    """The main fixture drawn once: 26 items, a partial run record, 10 of 12 units."""
    tmp_path = tmp_path_factory.mktemp("partial")
    return sample(tmp_path, DATASET, "--run-record", RUN_PARTIAL, "--size", 10, "--seed", 3)


# --- the ledger and the missingness log ------------------------------------------------

EXPECTED_LOG = {  # dataset item -> (reason, comment_id, raw_value)
    3: ("deleted", "c03", "deleted"),
    4: ("removed", "c04", "removed"),
    5: ("blank_body", "c05", ""),
    6: ("blank_body", "c06", "  \n\t  "),
    7: ("placeholder_body", "c07", "[deleted]"),
    8: ("placeholder_body", "c08", "[ Removed by Reddit ]"),
    9: ("missing_id", "", ""),
    10: ("missing_id", "", ""),
    11: ("invalid_status", "c11", "hidden"),
    12: ("invalid_status", "c12", ""),
    14: ("duplicate", "c01", "The app crashes every time I open it."),
    15: ("conflict", "c15", "Sync is broken since Monday."),
    16: ("conflict", "c15", "Sync is broken since Tuesday."),
    17: ("missing_id", "", '"just a string"'),
}


def test_every_exclusion_reason_is_logged_with_its_item(partial):
    result, folder = partial
    assert result.exit_code == 0, result.output
    rows = [row for row in jsonl(folder / "missingness_log.jsonl") if row["sheet"] == "dataset.json"]
    found = {row["row"]: (row["reason"], row["comment_id"], row["raw_value"]) for row in rows}
    assert found == EXPECTED_LOG
    assert all(row["coder"] == "" for row in rows)


def test_every_item_is_in_the_ledger_or_the_log_exactly_once(partial):
    _, folder = partial
    ledger = jsonl(folder / "ledger.jsonl")
    logged = [row["row"] for row in jsonl(folder / "missingness_log.jsonl") if row["sheet"] == "dataset.json"]
    assert sorted([unit["item"] for unit in ledger] + logged) == list(range(1, 27))
    counts = json.loads((folder / "sample.json").read_text())["counts"]
    assert counts["items"] == 26 and counts["usable_units"] == 12 and counts["unique_ids"] == 21


def test_log_has_the_join_columns_in_csv_and_jsonl(partial):
    _, folder = partial
    assert tuple(csv_rows(folder / "missingness_log.csv")[0]) == LOG_COLUMNS
    assert tuple(jsonl(folder / "missingness_log.jsonl")[0]) == LOG_COLUMNS
    assert LogRow._fields == LOG_COLUMNS


def test_duplicate_with_same_body_is_one_unit_and_different_body_is_a_conflict(partial):
    _, folder = partial
    ledger = {unit["comment_id"]: unit for unit in jsonl(folder / "ledger.jsonl")}
    assert ledger["c01"]["copies"] == 2 and ledger["c01"]["item"] == 1
    assert "c15" not in ledger
    log = jsonl(folder / "missingness_log.jsonl")
    duplicate = next(row for row in log if row["reason"] == "duplicate")
    assert duplicate["detail"] == "repeats item 1 with the same body; item 1 is the unit"
    conflicts = [row for row in log if row["reason"] == "conflict"]
    assert [row["row"] for row in conflicts] == [15, 16]
    assert "items 15, 16 with a different body" in conflicts[0]["detail"]


def test_ids_of_other_types_become_text_and_are_trimmed(partial):
    _, folder = partial
    ids = [unit["comment_id"] for unit in jsonl(folder / "ledger.jsonl")]
    assert "123456" in ids and "c26" in ids and " c26 " not in ids


def test_ledger_keeps_context_and_the_source_url(partial):
    _, folder = partial
    unit = next(unit for unit in jsonl(folder / "ledger.jsonl") if unit["comment_id"] == "c02")
    assert unit["post_id"] == "p1"
    assert unit["url"] == "https://www.reddit.com/r/testapp/comments/p1/crashes/"
    assert unit["author"] == "user_a" and unit["status"] == "ok"
    assert unit["observed_at"] == "2024-05-01T10:00:00Z"
    in_sample = [unit["comment_id"] for unit in jsonl(folder / "ledger.jsonl") if unit["in_sample"]]
    record = json.loads((folder / "sample.json").read_text())
    assert in_sample == record["ledger"]["sample_ids"] and len(in_sample) == 10


# --- completeness and the run record's counts -------------------------------------------


def test_partial_input_in_a_complete_run_is_a_trial_sample(partial):
    result, folder = partial
    assert (
        "thread completeness: a trial sample, not the whole thread: the run reports isComplete: true, "
        "but input 2 (https://www.reddit.com/r/testapp/comments/p2/sync/) says status 'partial'" in result.stderr
    )
    completeness = json.loads((folder / "sample.json").read_text())["completeness"]
    assert completeness["verdict"] == "partial"
    assert completeness["statement"] == "a trial sample, not the whole thread"
    assert completeness["run"]["isComplete"] is True
    assert [entry["completeness"] for entry in completeness["inputs"]] == ["complete", "partial", "failed"]
    assert completeness["inputs"][1]["commentsFound"] == 480 and completeness["inputs"][1]["commentsSaved"] == 12


def test_failed_input_is_logged_as_collection_failed(partial):
    _, folder = partial
    failed = [row for row in jsonl(folder / "missingness_log.jsonl") if row["reason"] == "collection_failed"]
    assert failed == [
        {
            "sheet": "run_partial.json",
            "coder": "",
            "row": 3,
            "comment_id": "",
            "raw_value": "https://www.reddit.com/r/testapp/comments/p3/gone/",
            "reason": "collection_failed",
            "detail": "input 3 (https://www.reddit.com/r/testapp/comments/p3/gone/) failed to collect: "
            "status 'failed', reason 'HTTP 403'",
        }
    ]


def test_run_record_counts_are_checked_and_mismatches_shown(partial):
    result, folder = partial
    assert (
        "count mismatch: commentsSaved vs items in the dataset: the run record says 28, "
        "the tool counted 26." in result.stderr
    )
    record = json.loads((folder / "sample.json").read_text())
    mismatches = {check["check"]: (check["record"], check["tool"]) for check in record["count_mismatches"]}
    assert mismatches == {
        "commentsSaved vs items in the dataset": (28, 26),
        "commentsSaved vs the sum of inputResults[].commentsSaved": (28, 26),
        "input 2 (https://www.reddit.com/r/testapp/comments/p2/sync/) commentsSaved vs items with postId p2": (12, 11),
    }
    assert record["counts"]["duplicates_skipped_by_collector"] == 2


def test_missing_run_record_is_completeness_unknown_never_complete(tmp_path):
    result, folder = sample(tmp_path, THREAD)
    assert result.exit_code == 0, result.output
    assert "completeness unknown: no run record was given (--run-record)." in result.stderr
    completeness = json.loads((folder / "sample.json").read_text())["completeness"]
    assert completeness["verdict"] == "unknown" and completeness["statement"] == "completeness unknown"


def test_complete_run_and_json_lines_input(tmp_path):
    result, folder = sample(tmp_path, THREAD, "--run-record", RUN_COMPLETE)
    assert result.exit_code == 0, result.output
    assert "thread completeness: complete:" in result.stderr and "mismatch" not in result.stderr
    ledger = jsonl(folder / "ledger.jsonl")
    # JSON Lines positions are line numbers; line 4 of the file is blank
    assert [(unit["comment_id"], unit["item"]) for unit in ledger] == [
        ("t01", 1),
        ("t02", 2),
        ("t03", 3),
        ("t04", 5),
        ("t05", 6),
        ("t06", 7),
    ]
    assert ledger[0]["url"] == "https://www.reddit.com/r/testapp/comments/p9/update/"


def test_hidden_branches_make_a_trial_sample(tmp_path):
    record = json.loads(RUN_COMPLETE.read_text())
    record["hiddenBranchesRemaining"] = 3
    result, folder = sample(tmp_path, THREAD, "--run-record", write_file(tmp_path, "run.json", json.dumps(record)))
    assert "a trial sample, not the whole thread: hiddenBranchesRemaining is 3" in result.stderr


def test_csv_dataset(tmp_path):
    result, folder = sample(tmp_path, DATASET_CSV, "--sheet-format", "xlsx")
    assert result.exit_code == 0, result.output
    ledger = {unit["comment_id"]: unit for unit in jsonl(folder / "ledger.jsonl")}
    assert list(ledger) == ["k01", "k02", "k05", "007"]  # "007" stays text
    assert ledger["k02"]["body"] == "Two lines:\nstill failing" and ledger["k05"]["body"] == "=1+1"
    log = {row["row"]: row["reason"] for row in jsonl(folder / "missingness_log.jsonl")}
    assert log == {4: "missing_id", 5: "deleted", 7: "duplicate"}  # spreadsheet rows, header = 1


# --- the draw ----------------------------------------------------------------------------


def test_draw_is_recorded_and_reproducible(tmp_path, partial):
    _, first = partial
    _, second = sample(tmp_path, DATASET, "--run-record", RUN_PARTIAL, "--size", 10, "--seed", 3)
    for name in (
        "sample.json",
        "ledger.jsonl",
        "ledger.csv",
        "missingness_log.csv",
        "sheets/alice.csv",
        "sheets/bob.csv",
    ):
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
    draw = json.loads((first / "sample.json").read_text())["draw"]
    assert (draw["seed"], draw["size"], draw["size_requested"], draw["population"]) == (3, 10, 10, 12)
    assert draw["method"].startswith("simple random sample without replacement")
    _, other = sample(tmp_path, DATASET, "--size", 10, "--seed", 4, out="other")
    assert jsonl(other / "ledger.jsonl") != jsonl(first / "ledger.jsonl")


def test_xlsx_sheets_are_byte_identical_across_runs(tmp_path):
    _, first = sample(tmp_path, DATASET, "--sheet-format", "xlsx", "--shuffle", "--seed", 9, out="a")
    _, second = sample(tmp_path, DATASET, "--sheet-format", "xlsx", "--shuffle", "--seed", 9, out="b")
    assert (first / "sheets/alice.xlsx").read_bytes() == (second / "sheets/alice.xlsx").read_bytes()


def test_shuffle_gives_each_coder_an_order_of_the_same_units(tmp_path):
    result, folder = sample(tmp_path, DATASET, "--shuffle", "--seed", 5)
    assert result.exit_code == 0, result.output
    alice = [row["comment_id"] for row in csv_rows(folder / "sheets/alice.csv")]
    bob = [row["comment_id"] for row in csv_rows(folder / "sheets/bob.csv")]
    assert alice != bob and sorted(alice) == sorted(bob)
    assert "shuffled per coder" in json.loads((folder / "sample.json").read_text())["draw"]["order"]


def test_size_above_the_population_takes_every_unit_and_says_so(tmp_path):
    result, folder = sample(tmp_path, THREAD, "--size", 50, "--seed", 1)
    assert result.exit_code == 0
    assert "note: --size 50 is more than the 6 usable units: every unit is in the sample." in result.stderr


# --- the sheets ---------------------------------------------------------------------------


def test_sheets_are_blank_the_same_for_every_coder_and_private(partial):
    _, folder = partial
    sheets = {coder: csv_rows(folder / f"sheets/{coder}.csv") for coder in ("alice", "bob")}
    for coder, rows in sheets.items():
        assert tuple(rows[0]) == SHEET_COLUMNS
        assert all(row["code"] == "" and row["note"] == "" and row["coder"] == coder for row in rows)
        assert all(row["rule"] == "explicit_current_failure" and row["rule_version"] == "v1" for row in rows)
        assert all(row["allowed_codes"] == "yes | no | unknown" for row in rows)
    other = {"alice": "bob", "bob": "alice"}
    for coder in sheets:
        assert other[coder] not in (folder / f"sheets/{coder}.csv").read_text(encoding="utf-8")
    assert [(r["comment_id"], r["body"], r["url"]) for r in sheets["alice"]] == [
        (r["comment_id"], r["body"], r["url"]) for r in sheets["bob"]
    ]


def test_formula_bodies_are_neutralised_in_csv_and_kept_exactly_in_the_ledger(tmp_path):
    _, folder = sample(tmp_path, DATASET)
    ledger = {unit["comment_id"]: unit["body"] for unit in jsonl(folder / "ledger.jsonl")}
    sheet = {row["comment_id"]: row["body"] for row in csv_rows(folder / "sheets/alice.csv")}
    for comment_id, body in FORMULA_BODIES.items():
        assert ledger[comment_id] == body
        assert sheet[comment_id] == "'" + body


def test_formula_bodies_in_xlsx_are_text_not_formulas(tmp_path):
    _, folder = sample(tmp_path, DATASET, "--sheet-format", "xlsx")
    worksheet = load_workbook(folder / "sheets/alice.xlsx").worksheets[0]  # formulas would show as "f"
    cells = {row[0].value: row[SHEET_COLUMNS.index("body")] for row in worksheet.iter_rows(min_row=2)}
    for comment_id, body in {**FORMULA_BODIES, **ODD_BODIES}.items():
        assert cells[comment_id].value == body and cells[comment_id].data_type == "s"


def test_newlines_tabs_emoji_and_right_to_left_text_are_kept(tmp_path):
    _, folder = sample(tmp_path, DATASET)
    ledger = {unit["comment_id"]: unit["body"] for unit in jsonl(folder / "ledger.jsonl")}
    sheet = {row["comment_id"]: row["body"] for row in csv_rows(folder / "sheets/bob.csv")}
    for comment_id, body in ODD_BODIES.items():
        assert ledger[comment_id] == body and sheet[comment_id] == body


def test_xlsx_sheet_states_the_allowed_codes_and_validates_the_code_column(tmp_path):
    _, folder = sample(tmp_path, DATASET, "--sheet-format", "xlsx")
    workbook = load_workbook(folder / "sheets/alice.xlsx")
    assert workbook.sheetnames == ["coding"]
    worksheet = workbook["coding"]
    assert tuple(cell.value for cell in worksheet[1]) == SHEET_COLUMNS
    note = worksheet["G1"].comment.text  # the code column, after the context columns
    assert note.startswith("Rule explicit_current_failure v1. Allowed codes:")
    assert "yes: Explicit current failure" in note and "unknown: you cannot tell" in note
    (validation,) = worksheet.data_validations.dataValidation
    assert validation.type == "list" and validation.formula1 == '"yes,no,unknown"'
    assert str(validation.sqref) == "G2:G13"


# --- the filled sheets go into join and score ----------------------------------------------

FILLED_SAMPLE = ("c01", "c02", "123456", "c18", "c19", "c20", "c21", "c23", "c25", "c26")
ALICE = dict(zip(FILLED_SAMPLE, ["yes"] * 5 + ["no"] * 5))
BOB = dict(zip(FILLED_SAMPLE, ["yes"] * 4 + ["no", "yes"] + ["no"] * 4))


def fill_csv(path: Path, codes: dict[str, str], extra: list[dict[str, str]] = ()) -> None:
    rows = csv_rows(path)
    for row in rows:
        row["code"] = codes[row["comment_id"]]
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=list(SHEET_COLUMNS), lineterminator="\n")
    writer.writeheader()
    writer.writerows([*rows, *extra])
    path.write_text(buffer.getvalue(), encoding="utf-8")


def test_filled_sheets_join_and_score_within_the_sample(tmp_path):
    result, folder = sample(tmp_path, DATASET, "--size", 10, "--seed", 3, "--shuffle")
    assert result.exit_code == 0, result.output
    assert json.loads((folder / "sample.json").read_text())["ledger"]["sample_ids"] == list(FILLED_SAMPLE)
    fill_csv(folder / "sheets/alice.csv", ALICE)
    outside = [{"comment_id": "c99", "code": "yes"}, {"comment_id": "c03", "code": "no"}]  # c03 was deleted
    fill_csv(folder / "sheets/bob.csv", BOB, outside)
    joined = tmp_path / "joined"
    result = run(
        "join",
        folder / "sheets/alice.csv",
        folder / "sheets/bob.csv",
        "--rule",
        RULE,
        "--sample",
        folder,
        "--out",
        joined,
    )
    assert result.exit_code == 0, result.output
    log = csv_rows(joined / "missingness_log.csv")
    assert [(row["coder"], row["comment_id"], row["reason"]) for row in log] == [
        ("bob", "c99", "not_in_sample"),
        ("bob", "c03", "not_in_sample"),
    ]

    for inputs in ([joined], [folder / "sheets/alice.csv", folder / "sheets/bob.csv", "--rule", RULE]):
        result = run("score", *inputs, "--format", "json")
        assert result.exit_code == 0, result.output
        report = json.loads(result.stdout)
        if inputs == [joined]:  # the join folder remembers its sample
            units = {key: report["units"][key] for key in ("total", "fully_coded", "missing")}
            assert units == {"total": 10, "fully_coded": 10, "missing": 0}
            assert report["table"] == [[4, 1], [1, 4]]
            assert report["metrics"]["po"]["value"] == pytest.approx(0.8)
            assert report["metrics"]["pe"]["value"] == pytest.approx(0.5)
            assert report["metrics"]["cohen_kappa"]["value"] == pytest.approx(0.6)
        else:  # without the sample the extra rows become units of their own (absent for alice)
            assert report["units"]["total"] == 12


def test_report_shows_where_the_units_came_from(tmp_path):
    result, folder = sample(tmp_path, DATASET, "--run-record", RUN_PARTIAL, "--size", 10, "--seed", 3)
    assert result.exit_code == 0, result.output
    fill_csv(folder / "sheets/alice.csv", ALICE)
    fill_csv(folder / "sheets/bob.csv", BOB)
    joined = tmp_path / "joined"
    assert (
        run(
            "join",
            folder / "sheets/alice.csv",
            folder / "sheets/bob.csv",
            "--rule",
            RULE,
            "--sample",
            folder,
            "--out",
            joined,
        ).exit_code
        == 0
    )
    report = json.loads(run("report", joined, "--format", "json").stdout)
    assert report["sample"]["counts"]["items"] == 26 and report["sample"]["counts"]["sampled_units"] == 10
    assert report["sample"]["completeness"]["statement"] == "a trial sample, not the whole thread"
    markdown = run("report", joined, "--format", "md").stdout
    assert "Thread completeness: a trial sample, not the whole thread." in markdown
    assert "| units in the sample | 10 |" in markdown
    bundles = tmp_path / "audits"
    frozen = run("freeze", joined, "--into", bundles)
    assert frozen.exit_code == 0, frozen.output
    bundle = Path(frozen.stdout.rstrip("\n").split("  ", 1)[1])  # sha256:<hex>  <path>
    assert json.loads(run("report", bundle, "--format", "json").stdout)["sample"] == report["sample"]


def test_filled_xlsx_sheets_join_with_the_sample(tmp_path):
    _, folder = sample(tmp_path, DATASET, "--size", 10, "--seed", 3, "--sheet-format", "xlsx")
    for coder, codes in (("alice", ALICE), ("bob", BOB)):
        path = folder / f"sheets/{coder}.xlsx"
        workbook = load_workbook(path)
        for row in workbook.worksheets[0].iter_rows(min_row=2):
            row[SHEET_COLUMNS.index("code")].value = codes[row[0].value]
        workbook.save(path)
    joined = tmp_path / "joined"
    result = run(
        "join",
        folder / "sheets/alice.xlsx",
        folder / "sheets/bob.xlsx",
        "--rule",
        RULE,
        "--sample",
        folder,
        "--out",
        joined,
    )
    assert result.exit_code == 0, result.output
    report = json.loads(run("score", joined, "--format", "json").stdout)
    assert report["table"] == [[4, 1], [1, 4]]


def test_join_sample_refuses_sheets_coded_under_the_sample_s_version_as_a_re_coding(tmp_path, partial):
    """A re-coding under v2 is allowed (tests/test_recoding.py), but these blank sheets say
    v1: the sheets' own rule version is checked, so v1 codes never pass for v2 codes."""
    _, folder = partial
    result = run(
        "join",
        folder / "sheets/alice.csv",
        folder / "sheets/bob.csv",
        "--rule",
        RULE_V2,
        "--sample",
        folder,
        "--out",
        tmp_path / "joined",
    )
    assert result.exit_code == 2
    assert result.stderr.startswith(
        "Error [sheet-rule-version]: sheet alice.csv was coded under explicit_current_failure"
    )


def test_join_sample_refuses_a_changed_ledger(tmp_path):
    _, folder = sample(tmp_path, THREAD)
    ledger = folder / "ledger.jsonl"
    ledger.write_text(ledger.read_text().replace("t01", "t99"))
    result = run(
        "join",
        folder / "sheets/alice.csv",
        folder / "sheets/bob.csv",
        "--rule",
        RULE,
        "--sample",
        folder,
        "--out",
        tmp_path / "joined",
    )
    assert result.exit_code == 2
    assert f"Error [sample-ledger-changed]: the ledger in {folder} changed" in result.stderr


def test_join_sample_needs_a_sample_folder(tmp_path):
    sheet = write_file(tmp_path, "alice.csv", "comment_id,code\na,yes\n")
    other = write_file(tmp_path, "bob.csv", "comment_id,code\na,yes\n")
    result = run("join", sheet, other, "--rule", RULE, "--sample", tmp_path, "--out", tmp_path / "joined")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error [usage-not-a-sample-dir]: {tmp_path} is not a folder written by")


# --- the output folder ----------------------------------------------------------------------


def test_a_filled_sheet_is_never_overwritten_without_force(tmp_path):
    _, folder = sample(tmp_path, THREAD)
    assert sample(tmp_path, THREAD)[0].exit_code == 0  # the same files again: nothing to lose
    fill_csv(folder / "sheets/alice.csv", {f"t{n:02d}": "yes" for n in range(1, 7)})
    result, _ = sample(tmp_path, THREAD)
    assert result.exit_code == 2
    assert "Error [output-sample-exists]" in result.stderr and "(a coder may have filled it)" in result.stderr
    assert csv_rows(folder / "sheets/alice.csv")[0]["code"] == "yes"
    assert sample(tmp_path, THREAD, "--force")[0].exit_code == 0
    assert csv_rows(folder / "sheets/alice.csv")[0]["code"] == ""


def test_an_input_is_never_overwritten(tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    dataset = write_file(folder, "ledger.jsonl", THREAD.read_text())
    result = run("sample", dataset, "--rule", RULE, "--coders", "alice,bob", "--out", folder)
    assert result.exit_code == 2
    assert "Error [output-overwrites-input]" in result.stderr


# --- bad input: exit 2, one message naming the file and the fix ---------------------------------

BAD_DATASETS = {
    "not json": (
        "dataset.json",
        "{not json",
        "Error [collector-not-json]: dataset dataset.json is not valid JSON: Expecting property name "
        "enclosed in double quotes at line 1, column 2.",
    ),
    "run record as dataset": (
        "dataset.json",
        '{"commentsSaved": 3, "isComplete": true}',
        "Error [collector-not-an-array]: dataset dataset.json is a JSON object; "
        "the dataset is a JSON array of items.\n  Hint: this looks like the run record "
        "(OUTPUT): pass it with --run-record, and the dataset as DATASET.",
    ),
    "one object": (
        "dataset.json",
        '{"commentId": "a", "body": "x", "status": "ok"}',
        "Error [collector-not-an-array]: dataset dataset.json is a JSON object; "
        "the dataset is a JSON array of items.\n  Hint: a file with one item per line is JSON Lines",
    ),
    "json lines named json": (
        "dataset.json",
        '{"commentId": "a"}\n{"commentId": "b"}\n',
        "Hint: it looks like JSON Lines (one item per line): name the file .jsonl.",
    ),
    "a number": ("dataset.json", "42", "Error [collector-not-an-array]: dataset dataset.json is a JSON number;"),
    "bad json line": (
        "dataset.jsonl",
        '{"commentId": "a", "body": "x", "status": "ok"}\n{"commentId": \n',
        "Error [collector-not-json]: dataset dataset.jsonl line 2 is not valid JSON: Expecting "
        "value (column 15).\n  Hint: repair or remove line 2;",
    ),
    "a key twice in a json line": (  # json.loads would keep "b": comment "a" in neither the ledger nor the log
        "dataset.jsonl",
        '{"commentId": "c", "body": "y", "status": "ok"}\n{"commentId": "a", "body": "x", "commentId": "b"}\n',
        "Error [collector-duplicate-key]: dataset dataset.jsonl line 2 gives the key 'commentId' twice.\n"
        "  Hint: keep the right one of the two values and delete the other",
    ),
    "a key twice in an item's object": (
        "dataset.json",
        '[{"commentId": "c", "body": "y", "status": "ok"},\n {"commentId": "a", "body": {"t": 1, "t": 2}}]',
        "Error [collector-duplicate-key]: dataset dataset.json item 2 gives the key 't' twice (in body).",
    ),
    "empty": ("dataset.json", "  \n", "Error [collector-empty]: dataset dataset.json is empty."),
    "no items": ("dataset.json", "[]", "Error [sample-no-units]: dataset dataset.json has no items."),
    "nothing usable": (
        "dataset.json",
        '[{"commentId": "a", "body": "[removed]", "status": "removed"}, 7]',
        "Error [sample-no-units]: dataset dataset.json has no usable unit: all 2 items are "
        "unusable (1 missing_id, 1 removed).",
    ),
    "csv without body": (
        "dataset.csv",
        "commentId,status\na,ok\n",
        "Error [collector-missing-column]: dataset dataset.csv has no column body.\n  Columns found: commentId, status",
    ),
    "unsupported type": (
        "dataset.txt",
        "[]",
        "Error [collector-unsupported-type]: dataset dataset.txt has an unsupported file type '.txt'.",
    ),
    "not utf-8": (
        "dataset.json",
        '[{"body": "caf\u00e9"}]'.encode("cp1252"),
        "Error [collector-encoding]: dataset dataset.json is not UTF-8 text: byte 14 (line 1) cannot be decoded.",
    ),
}


@pytest.mark.parametrize("case", BAD_DATASETS, ids=list(BAD_DATASETS))
def test_bad_dataset(tmp_path, case):
    name, content, message = BAD_DATASETS[case]
    result, folder = sample(tmp_path, write_file(tmp_path, name, content))
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.output and not folder.exists()


BAD_RUN_RECORDS = {
    "not json": ("oops", "Error [run-record-not-json]: run record run.json is not valid JSON:"),
    "an array": (
        "[1, 2]",
        "Error [run-record-not-an-object]: run record run.json is a JSON array; the run record is a JSON object.",
    ),
    "count as text": (
        '{"commentsSaved": "many"}',
        "Error [run-record-invalid]: run record run.json: key commentsSaved must be a whole number "
        "of at least 0 or null (got '\"many\"').",
    ),
    "input not an object": (
        '{"inputResults": ["https://x"]}',
        "Error [run-record-invalid]: run record run.json: key inputResults[0] must be an object",
    ),
    "isComplete as text": ('{"isComplete": "yes"}', "key isComplete must be true, false or null"),
    "a key twice": (
        '{"commentsSaved": 3, "inputResults": [{"status": "ok", "status": "failed"}]}',
        "Error [run-record-duplicate-key]: run record run.json gives the key 'status' twice (in inputResults[0]).",
    ),
}


@pytest.mark.parametrize("case", BAD_RUN_RECORDS, ids=list(BAD_RUN_RECORDS))
def test_bad_run_record(tmp_path, case):
    content, message = BAD_RUN_RECORDS[case]
    result, _ = sample(tmp_path, THREAD, "--run-record", write_file(tmp_path, "run.json", content))
    assert result.exit_code == 2
    assert message in result.stderr


def test_run_record_with_nulls_and_an_output_wrapper_is_tolerated(tmp_path):
    record = {
        "OUTPUT": {
            "commentsSaved": None,
            "isComplete": None,
            "inputResults": [
                {"postUrl": None, "commentsFound": None, "commentsSaved": None, "status": None, "reason": None}
            ],
        }
    }
    result, folder = sample(tmp_path, THREAD, "--run-record", write_file(tmp_path, "run.json", json.dumps(record)))
    assert result.exit_code == 0, result.output
    assert "completeness unknown: input 1 has status ''" in result.stderr


BAD_USAGE = {
    "size without seed": (
        ["--size", "3"],
        "Error [usage-size-needs-seed]: --size draws a random sample, which needs --seed to be reproducible.",
    ),
    "size zero": (["--size", "0", "--seed", "1"], "Error [usage-size]: --size must be at least 1 (got 0)."),
    "shuffle without seed": (["--shuffle"], "Error [usage-shuffle-needs-seed]"),
    "one coder": (
        ["--coders", "alice"],
        "Error [usage-coders]: --coders needs two or more names separated by commas (got 'alice').",
    ),
    "path in a coder name": (
        ["--coders", "alice,../bob"],
        "Error [usage-coders]: coder name '../bob' cannot name a sheet file.",
    ),
    "same coder twice": (["--coders", "alice,Alice"], "Error [usage-coders]: --coders names 'alice' and 'Alice'"),
    "reserved coder name": (["--coders", "alice,comment_id"], "Error [usage-coders]: coder name 'comment_id'"),
}


@pytest.mark.parametrize("case", BAD_USAGE, ids=list(BAD_USAGE))
def test_bad_usage(tmp_path, case):
    extra, message = BAD_USAGE[case]
    coders = extra[1] if extra[0] == "--coders" else "alice,bob"
    extra = [] if extra[0] == "--coders" else extra
    result, folder = sample(tmp_path, THREAD, *extra, coders=coders)
    assert result.exit_code == 2
    assert result.stderr.startswith(message)
    assert not folder.exists()


def test_missing_dataset_file(tmp_path):
    result, _ = sample(tmp_path, tmp_path / "nope.json")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error [collector-not-found]: dataset {tmp_path / 'nope.json'} does not exist.")


def test_items_that_are_not_objects_and_ids_that_cannot_be_text_are_logged(tmp_path):
    items = [
        {"commentId": "a", "body": "fine", "status": "ok"},
        ["a", "list"],
        None,
        {"commentId": {"id": 1}, "body": "object id", "status": "ok"},
        {"commentId": True, "body": "boolean id", "status": "ok"},
        {"commentId": 7.50, "body": "float id", "status": "ok"},
    ]
    result, folder = sample(tmp_path, write_file(tmp_path, "dataset.json", json.dumps(items).replace("7.5", "7.50")))
    assert result.exit_code == 0, result.output
    assert [unit["comment_id"] for unit in jsonl(folder / "ledger.jsonl")] == ["a", "7.50"]  # as written
    log = [
        (row["row"], row["reason"], row["raw_value"], row["detail"]) for row in jsonl(folder / "missingness_log.jsonl")
    ]
    assert log == [
        (2, "missing_id", '["a", "list"]', "item is a JSON array, not an object, so it has no commentId"),
        (3, "missing_id", "null", "item is a JSON null, not an object, so it has no commentId"),
        (4, "missing_id", '{"id": 1}', "commentId is a JSON object, not text or a number"),
        (5, "missing_id", "true", "commentId is a JSON boolean, not text or a number"),
    ]


def test_formula_looking_id_needs_xlsx_sheets(tmp_path):
    items = [{"commentId": "=cmd", "body": "a", "status": "ok"}, {"commentId": "b", "body": "b", "status": "ok"}]
    dataset = write_file(tmp_path, "dataset.json", json.dumps(items))
    result, _ = sample(tmp_path, dataset)
    assert result.exit_code == 2
    assert result.stderr.startswith("Error [usage-csv-formula-id]: comment id '=cmd' starts like a spreadsheet formula")
    assert "Hint: pass --sheet-format xlsx" in result.stderr
    result, folder = sample(tmp_path, dataset, "--sheet-format", "xlsx")
    assert result.exit_code == 0, result.output
    assert load_workbook(folder / "sheets/alice.xlsx").worksheets[0]["A2"].value == "=cmd"


def test_control_characters_xlsx_cannot_hold_are_replaced_and_recorded(tmp_path):
    items = [
        {"commentId": "a", "body": "bell\x07here", "status": "ok"},
        {"commentId": "b", "body": "b", "status": "ok"},
    ]
    result, folder = sample(tmp_path, write_file(tmp_path, "dataset.json", json.dumps(items)), "--sheet-format", "xlsx")
    assert result.exit_code == 0, result.output
    assert load_workbook(folder / "sheets/alice.xlsx").worksheets[0]["F2"].value == "bell\ufffdhere"
    assert jsonl(folder / "ledger.jsonl")[0]["body"] == "bell\x07here"
    sheet = json.loads((folder / "sample.json").read_text())["sheets"][0]
    assert sheet["bodies_with_characters_xlsx_cannot_hold"]["comment_ids"] == ["a"]
