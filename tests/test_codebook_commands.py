"""The commands around a codebook audit: sample's sheets with one column per variable,
import into wide sheets, and the refusals of --rule and --codebook together or neither."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import shutil
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from irr_audit.cli import app
from irr_audit.rules.codebook import load_codebook

ROOT = Path(__file__).resolve().parents[1]
CODEBOOK = ROOT / "codebooks" / "comment_study" / "v1.yaml"
DATASET = ROOT / "examples" / "collector" / "dataset.jsonl"
VARIABLES = ["explicit_current_failure", "product_area", "severity", "sarcasm"]


def run(*args: object):
    return CliRunner().invoke(app, [str(arg) for arg in args], catch_exceptions=False)


def sample(out: Path, *extra: object):
    return run("sample", DATASET, "--codebook", CODEBOOK, "--coders", "alice,bob", "--out", out, *extra)


def test_sample_csv_sheets_have_one_column_per_variable(tmp_path: Path) -> None:
    result = sample(tmp_path / "s", "--size", "5", "--seed", "3")
    assert result.exit_code == 0, result.output
    text = (tmp_path / "s" / "sheets" / "alice.csv").read_text(encoding="utf-8-sig")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 5
    header = list(rows[0])
    assert header[6:10] == VARIABLES and "code" not in header and "allowed_codes" not in header
    assert all(row[variable] == "" for row in rows for variable in VARIABLES)
    assert {row["codebook"] for row in rows} == {"comment_study"} and {row["codebook_version"] for row in rows} == {
        "v1"
    }


def test_sample_copies_the_codebook_and_its_rules_byte_for_byte(tmp_path: Path) -> None:
    assert sample(tmp_path / "s").exit_code == 0
    folder = tmp_path / "s"
    assert (folder / "codebook.yaml").read_bytes() == CODEBOOK.read_bytes()
    for variable in VARIABLES:
        copied = folder / "rules" / variable / "v1.yaml"
        assert copied.read_bytes() == (ROOT / "rules" / variable / "v1.yaml").read_bytes()
    assert not (folder / "rule.yaml").exists()
    record = json.loads((folder / "sample.json").read_text())
    assert "rule" not in record
    section = record["codebook"]
    assert (section["name"], section["version"], section["digest"]) == (
        "comment_study",
        1,
        load_codebook(CODEBOOK).digest,
    )
    assert [rule["id"] for rule in section["rules"]] == VARIABLES
    severity = section["rules"][2]
    assert severity["applies_when"] == {"rule": "explicit_current_failure", "codes": ["yes"]}
    assert severity["allowed_codes"] == ["minor", "moderate", "major", "critical", "unknown"]
    # the copy in the sample folder loads as the codebook it is (its rules beside it)
    assert load_codebook(folder / "codebook.yaml").digest == section["digest"]
    assert sample(tmp_path / "s").exit_code == 0  # the same sample again: the same bytes


def test_sample_xlsx_sheets_offer_each_variables_codes(tmp_path: Path) -> None:
    from openpyxl import load_workbook

    assert sample(tmp_path / "s", "--sheet-format", "xlsx").exit_code == 0
    path = tmp_path / "s" / "sheets" / "bob.xlsx"
    sheet = load_workbook(path).worksheets[0]
    header = [cell.value for cell in sheet[1]]
    assert header[6:10] == VARIABLES
    lists = {}
    for validation in sheet.data_validations.dataValidation:
        (cells,) = str(validation.sqref).split()
        lists[cells.split(":")[0][0]] = validation.formula1
    letters = {variable: chr(ord("A") + header.index(variable)) for variable in VARIABLES}
    assert lists[letters["product_area"]] == '"app,sync,billing,support,other,unknown"'
    assert lists[letters["severity"]] == '"minor,moderate,major,critical,unknown"'
    assert lists[letters["sarcasm"]] == '"yes,no,unknown"'
    note = sheet.cell(row=1, column=header.index("severity") + 1).comment.text
    assert "Asked only when explicit_current_failure is yes" in note and "rules/severity/v1.yaml" in note
    with zipfile.ZipFile(path) as workbook:  # reproducible bytes, as a rule's sheet
        assert {info.date_time for info in workbook.infolist()} == {(1980, 1, 1, 0, 0, 0)}


@pytest.mark.parametrize(
    ("extra", "code"),
    [
        (["--rule", ROOT / "rules" / "explicit_current_failure" / "v1.yaml"], "usage-rule-or-codebook"),
        (["--rules", ROOT / "rules"], None),
    ],
)
def test_sample_refuses_rule_and_codebook_together(tmp_path: Path, extra: list, code: str | None) -> None:
    result = sample(tmp_path / "s", *extra)
    if code is None:
        assert result.exit_code == 0, result.output  # --rules with --codebook is fine
    else:
        assert result.exit_code == 2 and f"[{code}]" in result.output


def test_sample_without_rule_or_codebook_is_refused(tmp_path: Path) -> None:
    result = run("sample", DATASET, "--coders", "a,b", "--out", tmp_path / "s")
    assert result.exit_code == 2 and "[usage-rule-or-codebook]" in result.output
    alone = run("sample", DATASET, "--rules", ROOT / "rules", "--rule", CODEBOOK, "--coders", "a,b", "--out", tmp_path)
    assert alone.exit_code == 2 and "--rules names the folder of a codebook's rules" in alone.output


def test_sample_with_a_broken_codebook_exits_2_naming_it(tmp_path: Path) -> None:
    broken = tmp_path / "codebooks" / "study" / "v1.yaml"
    broken.parent.mkdir(parents=True)
    broken.write_text("codebook: study\nversion: 1\nrules: [{rule: severity, version: 1}]\n")
    result = run(
        "sample", DATASET, "--codebook", broken, "--rules", ROOT / "rules", "--coders", "a,b", "--out", tmp_path / "s"
    )
    assert result.exit_code == 2
    assert "[codebook-condition-unknown]" in result.output and str(broken) in result.output
    assert not (tmp_path / "s").exists()


# --- import --codebook ------------------------------------------------------------------

LS_CODEBOOK = ROOT / "tests" / "fixtures" / "importers" / "label_studio_codebook" / "export.json"


def read_csv(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))


def test_import_label_studio_into_wide_sheets(tmp_path: Path) -> None:
    result = run("import", "label-studio", LS_CODEBOOK, "--codebook", CODEBOOK, "--out", tmp_path / "i")
    assert result.exit_code == 0, result.output
    alice = read_csv(tmp_path / "i" / "sheets" / "alice_example.org.csv")
    bob = read_csv(tmp_path / "i" / "sheets" / "bob_example.org.csv")
    assert list(alice[0]) == ["comment_id", *VARIABLES, "body"]
    by_id = {row["comment_id"]: row for row in alice}
    assert [row["comment_id"] for row in alice] == ["c1", "c2", "c3", "c4"]
    assert by_id["c2"]["severity"] == ""  # not asked: left blank
    assert by_id["c4"]["product_area"] == ""  # 'pricing' is no code: in the log only
    assert by_id["c3"]["body"] == "Ça plante depuis la mise à jour 🙁, merci beaucoup."
    bob_by_id = {row["comment_id"]: row for row in bob}
    assert bob_by_id["c2"]["severity"] == "minor"  # coded anyway: kept, join decides
    assert bob_by_id["c3"]["product_area"] == ""  # two areas for a one-code rule
    assert "c4" not in bob_by_id and "c5" not in bob_by_id  # cancelled; nobody annotated
    log = read_csv(tmp_path / "i" / "import_log.csv")
    assert len(log) == 4 * 9  # every variable: 8 annotations and the task nobody annotated
    outcomes = {(row["variable"], row["unit_id"], row["annotator"]): row["outcome"] for row in log}
    assert outcomes["product_area", "c3", "bob@example.org"] == "several_labels"
    assert outcomes["product_area", "c4", "alice@example.org"] == "unknown_label"
    assert outcomes["severity", "c2", "alice@example.org"] == "no_label"
    assert outcomes["sarcasm", "c4", "bob@example.org"] == "skipped"
    assert outcomes["explicit_current_failure", "c5", ""] == "not_annotated"
    record = json.loads((tmp_path / "i" / "import.json").read_text())
    assert record["codebook"]["digest"] == load_codebook(CODEBOOK).digest
    assert [rule["id"] for rule in record["codebook"]["rules"]] == VARIABLES
    assert record["exports"][0]["sha256"] == hashlib.sha256(LS_CODEBOOK.read_bytes()).hexdigest()
    assert record["variables"]["severity"]["outcomes"] == {"coded": 4, "no_label": 3, "skipped": 1, "not_annotated": 1}


@pytest.mark.parametrize("export_format", ["prodigy", "doccano"])
def test_import_codebook_refuses_formats_without_question_names(tmp_path: Path, export_format: str) -> None:
    result = run("import", export_format, LS_CODEBOOK, "--codebook", CODEBOOK, "--out", tmp_path / "i")
    assert result.exit_code == 2 and "[import-codebook-format]" in result.output
    assert not (tmp_path / "i").exists()


def test_import_codebook_refuses_question_and_rule(tmp_path: Path) -> None:
    question = run(
        "import", "label-studio", LS_CODEBOOK, "--codebook", CODEBOOK, "--question", "x", "--out", tmp_path / "i"
    )
    assert question.exit_code == 2 and "[import-codebook-question]" in question.output
    rule = ROOT / "rules" / "explicit_current_failure" / "v1.yaml"
    both = run("import", "label-studio", LS_CODEBOOK, "--codebook", CODEBOOK, "--rule", rule, "--out", tmp_path / "i")
    assert both.exit_code == 2 and "[usage-rule-or-codebook]" in both.output
    neither = run("import", "label-studio", LS_CODEBOOK, "--out", tmp_path / "i")
    assert neither.exit_code == 2 and "[usage-rule-or-codebook]" in neither.output


def test_import_codebook_never_writes_over_a_rule_file(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    shutil.copytree(ROOT / "codebooks", tmp_path / "codebooks")
    codebook = tmp_path / "codebooks" / "comment_study" / "v1.yaml"
    result = run("import", "label-studio", LS_CODEBOOK, "--codebook", codebook, "--out", tmp_path / "rules")
    assert result.exit_code == 2 and "[output-overwrites-input]" in result.output
    assert (tmp_path / "rules" / "severity" / "v1.yaml").read_bytes() == (ROOT / "rules/severity/v1.yaml").read_bytes()


# --- the example codebook's expected values, and what is not there yet ----------------------

EXAMPLE_SHEETS = sorted((ROOT / "examples" / "codebook" / "sheets").glob("*.csv"))
EXPECTED = json.loads((ROOT / "examples" / "codebook" / "expected.json").read_text())


@pytest.mark.parametrize("variable", ["explicit_current_failure", "product_area", "sarcasm"])
def test_example_unconditional_variables_score_as_the_oracle_says(variable: str) -> None:
    """A variable without a condition is scored from its column exactly as a rule is: the
    oracle's numbers (examples/codebook/EXPECTED.md) hold through --code-column."""
    rule = ROOT / "rules" / variable / "v1.yaml"
    result = run("score", *EXAMPLE_SHEETS, "--rule", rule, "--code-column", variable, "--format", "json")
    assert result.exit_code == 0, result.output
    scored = json.loads(result.stdout)
    expected = EXPECTED[variable]
    assert scored["units"]["fully_coded"] == expected["fully_coded"]
    metrics = scored["metrics"]
    assert metrics["po"]["value"] == pytest.approx(expected["po"], abs=1e-9)
    assert metrics["fleiss_kappa"]["value"] == pytest.approx(expected["fleiss_kappa"], abs=1e-9)
    assert metrics["krippendorff_alpha"]["value"] == pytest.approx(expected["krippendorff_alpha"], abs=1e-9)
    alpha = scored["available_case"]["krippendorff_alpha"]["value"]
    assert alpha == pytest.approx(expected["krippendorff_alpha_available_case"], abs=1e-9)


def freeze_example(audits: Path, *extra: object) -> Path:
    result = run("freeze", *EXAMPLE_SHEETS, "--codebook", CODEBOOK, "--into", audits, *extra)
    assert result.exit_code == 0, result.output
    (bundle,) = [path for path in audits.iterdir() if path.is_dir()]
    return bundle


def writable(path: Path) -> None:
    for folder in (path.parent, path):
        folder.chmod(folder.stat().st_mode | 0o200)


def test_freeze_a_codebook_keeps_every_file_and_every_variables_score(tmp_path: Path) -> None:
    bundle = freeze_example(tmp_path / "audits")
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert manifest["format"] == "irr-audit-codebook-bundle/1" and bundle.name.endswith("_comment_study_v1")
    frozen = {record["path"]: record["sha256"] for record in manifest["files"]}
    originals = {
        "codebook/comment_study/v1.yaml": CODEBOOK,
        **{f"rule/{variable}/v1.yaml": ROOT / "rules" / variable / "v1.yaml" for variable in VARIABLES},
        **{f"sheets/{path.name}": path for path in EXAMPLE_SHEETS},
    }
    assert set(frozen) == set(originals)
    for member, original in originals.items():
        assert (bundle / member).read_bytes() == original.read_bytes()
        assert frozen[member] == hashlib.sha256(original.read_bytes()).hexdigest()
    assert manifest["codebook"]["digest"] == load_codebook(CODEBOOK).digest
    for variable, expected in EXPECTED.items():  # the oracle's numbers, severity's condition applied
        score = manifest["score"]["variables"][variable]["score"]
        assert score["units"]["fully_coded"] == expected["fully_coded"]
        assert score["metrics"]["po"]["value"] == pytest.approx(expected["po"], abs=1e-9)
        assert score["metrics"]["fleiss_kappa"]["value"] == pytest.approx(expected["fleiss_kappa"], abs=1e-9)
        alpha = score["metrics"]["krippendorff_alpha"]["value"]
        assert alpha == pytest.approx(expected["krippendorff_alpha"], abs=1e-9)
    digest = "sha256:" + hashlib.sha256((bundle / "manifest.json").read_bytes()).hexdigest()
    verified = run("verify", bundle, "--expect", digest)
    assert verified.exit_code == 0, verified.output
    assert "anchored" in verified.output


@pytest.mark.parametrize(
    ("member", "edit"),
    [
        ("sheets/carol.csv", lambda data: data.replace(b"major,no", b"minor,no", 1)),
        ("rule/severity/v1.yaml", lambda data: data.replace(b"code: minor", b"code: minoR")),
        ("codebook/comment_study/v1.yaml", lambda data: data.replace(b"failures: whether", b"failures; whether")),
    ],
)
def test_verify_detects_tampering_with_any_file_of_a_codebook_bundle(tmp_path: Path, member: str, edit) -> None:
    bundle = freeze_example(tmp_path / "audits")
    path = bundle / member
    writable(path)
    before = path.read_bytes()
    path.write_bytes(edit(before))
    assert path.read_bytes() != before and len(path.read_bytes()) == len(before)
    result = run("verify", bundle, "--format", "json")
    assert result.exit_code == 1
    found = json.loads(result.stdout)
    assert found["files"]["changed"] == [member]
    if member.startswith("sheets/"):
        assert any(problem["kind"] == "score" for problem in found["problems"])  # recomputed from the edited sheet


def test_other_commands_refuse_a_codebook_bundle_by_name(tmp_path: Path) -> None:
    bundle = freeze_example(tmp_path / "audits")
    sarcasm = ROOT / "rules/sarcasm/v1.yaml"
    refused = (
        ["report", bundle, "--rule", sarcasm],
        ["freeze", *EXAMPLE_SHEETS[:2], "--rule", sarcasm, "--code-column", "sarcasm", "--recodes", bundle,
         "--into", tmp_path / "again"],
    )  # fmt: skip
    for command in refused:
        result = run(*command)
        assert result.exit_code == 2, (command, result.output)
        assert "[bundle-codebook-not-yet]" in result.output
        # what the message says reads a codebook bundle does (docs/codebooks.md, "Not yet")
        said = " ".join(result.output.split())
        assert "verify, labels, adjudicate, compare (with another codebook bundle), and score and report" in said
        assert "freeze --rule --recodes takes only the bundle of one rule's audit, freeze --codebook --recodes" in said
    # score and report audit every variable of it (docs/codebook_audit.md; tests/test_codebook_score.py)
    assert run("score", bundle, "--quiet").exit_code == 0
    checked = run("rules", "check", ROOT / "rules", "--audits", tmp_path / "audits")
    assert checked.exit_code == 0, checked.output  # a codebook bundle is no rule bundle gone bad


def test_freeze_codebook_refuses_what_it_does_not_take(tmp_path: Path) -> None:
    for extra in (["--code-column", "severity"],):
        result = run("freeze", *EXAMPLE_SHEETS, "--codebook", CODEBOOK, "--into", tmp_path / "audits", *extra)
        assert result.exit_code == 2 and "[usage-codebook-option]" in result.output
        said = " ".join(result.output.split())  # why it does not apply, and the way to do what was meant
        assert "no one column of codes" in said and "yet" not in said
        assert "--rule RULE --code-column COLUMN" in said
    rule = ROOT / "rules" / "severity" / "v1.yaml"
    both = run("freeze", *EXAMPLE_SHEETS, "--codebook", CODEBOOK, "--rule", rule, "--into", tmp_path / "audits")
    assert both.exit_code == 2 and "[usage-rule-or-codebook]" in both.output
    assert not (tmp_path / "audits").exists()
    again = tmp_path / "again"
    freeze_example(again)
    twice = run("freeze", *EXAMPLE_SHEETS, "--codebook", CODEBOOK, "--into", again)
    assert twice.exit_code == 2 and "[usage-already-frozen]" in twice.output


def test_a_codebook_sample_given_to_a_one_rule_join_is_refused_by_name(tmp_path: Path) -> None:
    assert sample(tmp_path / "s").exit_code == 0
    sheets = [tmp_path / "s" / "sheets" / f"{coder}.csv" for coder in ("alice", "bob")]
    rule = ROOT / "rules" / "explicit_current_failure" / "v1.yaml"
    result = run(
        "join", *sheets, "--rule", rule, "--code-column", "explicit_current_failure", "--sample", tmp_path / "s",
        "--out", tmp_path / "j",
    )  # fmt: skip
    assert result.exit_code == 2 and "[usage-sample-codebook]" in result.output
    assert "comment_study v1" in result.output and not (tmp_path / "j").exists()


def test_import_codebook_refuses_a_variable_named_like_a_key_of_the_format(tmp_path: Path) -> None:
    rules = tmp_path / "rules" / "confidence"
    rules.mkdir(parents=True)
    (rules / "v1.yaml").write_text("rule: confidence\nversion: 1\nscale: ordinal\ncodes: [low, high]\n")
    codebook = tmp_path / "book.yaml"
    codebook.write_text("codebook: book\nversion: 1\nrules: [{rule: confidence, version: 1}]\n")
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"comment_id": "a", "model": "m", "confidence": 0.5}\n')
    result = run("import", "model", labels, "--codebook", codebook, "--out", tmp_path / "i")
    assert result.exit_code == 2 and "[import-codebook-question]" in result.output
    assert "confidence" in result.output and not (tmp_path / "i").exists()


def test_import_codebook_names_the_variable_whose_column_is_missing(tmp_path: Path) -> None:
    export = tmp_path / "min.json"
    export.write_text(json.dumps([{"id": 1, "comment_id": "a", "annotator": 1, "explicit_current_failure": "no"}]))
    result = run("import", "label-studio-min", export, "--codebook", CODEBOOK, "--out", tmp_path / "i")
    assert result.exit_code == 2 and "[import-question]" in result.output
    assert "variable product_area of comment_study v1" in result.output


def test_labels_of_a_codebook_bundle_one_row_per_variable_and_unit(tmp_path: Path) -> None:
    bundle = freeze_example(tmp_path / "audits")
    result = run("labels", bundle, "--output", tmp_path / "labels.csv")
    assert result.exit_code == 0, result.output
    rows = read_csv(tmp_path / "labels.csv")
    assert list(rows[0])[:5] == ["variable", "comment_id", "coder:alice", "coder:bob", "coder:carol"]
    assert len(rows) == 4 * 26
    by_key = {(row["variable"], row["comment_id"]): row for row in rows}
    assert (
        by_key["severity", "kq3n0c7"]["final"] == "agreed" and by_key["severity", "kq3n0c7"]["final_code"] == "critical"
    )
    assert by_key["severity", "kq43u3v"]["final"] == "not_applicable"  # alice's 'minor' is not a label
    assert by_key["severity", "kq43u3v"]["coder:alice"] == ""
    assert by_key["severity", "kq3z1q7"]["final"] == "undecided"  # the coders disagree on the condition
    assert "whether it is asked" in by_key["severity", "kq3z1q7"]["why"]
    assert by_key["product_area", "kq3q1f4"]["why"] == "missing codes: bob blank"
    not_applicable = [row for row in rows if row["variable"] == "severity" and row["final"] == "not_applicable"]
    assert len(not_applicable) == len(EXPECTED["severity"]["not_applicable_units"])
    assert "severity: 14 units" in result.output and "12 not applicable" in result.output
    writable(bundle / "sheets" / "bob.csv")
    (bundle / "sheets" / "bob.csv").write_bytes(b"changed")
    altered = run("labels", bundle)
    assert altered.exit_code == 2 and "[bundle-altered]" in altered.output and "sheets/bob.csv" in altered.output


def test_a_frozen_codebook_score_is_what_score_codebook_reports(tmp_path: Path) -> None:
    bundle = freeze_example(tmp_path / "audits")
    frozen = json.loads((bundle / "manifest.json").read_text())["score"]["variables"]
    scored = run("score", *EXAMPLE_SHEETS, "--codebook", CODEBOOK, "--format", "json")
    assert scored.exit_code == 0, scored.output
    variables = json.loads(scored.stdout)["variables"]
    assert set(frozen) == set(variables) == set(VARIABLES)
    for variable in VARIABLES:
        for key in ("units", "metrics", "available_case", "table", "categories", "coders"):
            assert frozen[variable]["score"][key] == variables[variable][key], (variable, key)
