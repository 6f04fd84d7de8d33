"""`report BUNDLE` of a codebook bundle shows each variable's adjudication as a rule's bundle's
report shows its own: the `adjudication` section of that variable's document (JSON) and the
section after its statistics (Markdown, text, HTML); `score` leaves the records unread."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import irr_audit
from irr_audit.bundle.adjudication import SECTION_STATEMENT, SECTION_TITLE
from tests.conftest import run
from tests.test_codebook_adjudication import (
    CODEBOOK,
    EXAMPLE_SHEETS,
    ROOT,
    VARIABLES,
    decisions_file,
    disagreement,
    freeze_example,
    label,
    labels,
    rewrite_record,
    template,
)

RULES = ROOT / "rules"
SECTION_KEYS = {"title", "statement", "disagreements", "decided", "undecided", "decisions", "records"}


@pytest.fixture
def decided(tmp_path: Path) -> tuple[Path, str, str]:
    """A codebook bundle with one record deciding one severity and one sarcasm disagreement:
    (bundle, the severity unit, the sarcasm unit)."""
    bundle = freeze_example(tmp_path / "audits")
    rows = template(bundle)
    severity, sarcasm = disagreement(rows, "severity")["comment_id"], disagreement(rows, "sarcasm")["comment_id"]
    decisions = decisions_file(
        tmp_path, [["severity", severity, "major", "decided on a call"], ["sarcasm", sarcasm, "yes", ""]]
    )
    recorded = run("adjudicate", bundle, "--decisions", decisions, "--by", "alice and bob")
    assert recorded.exit_code == 0, recorded.output
    return bundle, severity, sarcasm


def report(bundle: Path, output_format: str) -> str:
    result = run("report", bundle, "--format", output_format)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_the_json_report_has_each_variables_adjudication(decided: tuple[Path, str, str]) -> None:
    bundle, severity, sarcasm = decided
    document = json.loads(report(bundle, "json"))

    sections = {variable: document["variables"][variable]["adjudication"] for variable in VARIABLES}
    for section in sections.values():
        assert set(section) == SECTION_KEYS
        assert (section["title"], section["statement"]) == (SECTION_TITLE, SECTION_STATEMENT)
        assert section["decided"] + len(section["undecided"]) == section["disagreements"]
    counts = {variable: (section["disagreements"], section["decided"]) for variable, section in sections.items()}
    assert counts == {"explicit_current_failure": (2, 0), "product_area": (7, 0), "severity": (7, 1), "sarcasm": (2, 1)}
    (decision,) = sections["severity"]["decisions"]
    assert (decision["comment_id"], decision["final_code"], decision["note"]) == (
        severity,
        "major",
        "decided on a call",
    )
    assert (decision["decided_by"], decision["variable"]) == ("alice and bob", "severity")
    assert severity not in sections["severity"]["undecided"]
    assert [item["comment_id"] for item in sections["sarcasm"]["decisions"]] == [sarcasm]
    # a record counts, for a variable, the decisions it holds on that variable only
    assert [record["decisions"] for record in sections["severity"]["records"]] == [1]
    assert sections["product_area"]["records"] == [] and sections["product_area"]["decisions"] == []
    # the units the report says adjudicated are those labels gives as adjudicated
    rows = labels(bundle)
    assert label(rows, "severity", severity)["final"] == "adjudicated"
    assert label(rows, "sarcasm", sarcasm)["final_code"] == "yes"


def test_the_adjudication_lists_every_disagreement_of_its_variable(decided: tuple[Path, str, str]) -> None:
    bundle, _, _ = decided
    document = json.loads(report(bundle, "json"))
    for variable in VARIABLES:
        own = document["variables"][variable]
        listed = [item["comment_id"] for item in own["disagreements"]]
        section = own["adjudication"]
        assert sorted(section["undecided"] + [item["comment_id"] for item in section["decisions"]]) == sorted(listed)


@pytest.mark.parametrize("output_format", ["md", "text", "html"])
def test_every_format_shows_the_adjudication_under_its_variable(
    decided: tuple[Path, str, str], output_format: str
) -> None:
    bundle, severity, _ = decided
    text = report(bundle, output_format)

    assert text.count(SECTION_TITLE) == len(VARIABLES)
    assert "1 of 7 disagreements decided." in text and "0 of 2 disagreements decided." in text
    assert "decided on a call" in text and severity in text


def test_score_of_a_codebook_bundle_leaves_the_records_unread(decided: tuple[Path, str, str]) -> None:
    bundle, _, _ = decided
    result = run("score", bundle, "--format", "json")
    assert result.exit_code == 0, result.output
    assert all("adjudication" not in own for own in json.loads(result.stdout)["variables"].values())


def test_a_report_without_records_says_nothing_is_decided(tmp_path: Path) -> None:
    bundle = freeze_example(tmp_path / "audits")
    document = json.loads(report(bundle, "json"))
    sections = [document["variables"][variable]["adjudication"] for variable in VARIABLES]
    assert [section["decided"] for section in sections] == [0, 0, 0, 0]
    assert all(section["records"] == [] for section in sections)


def test_a_doubtful_record_stops_the_report(decided: tuple[Path, str, str]) -> None:
    bundle, _, _ = decided
    (record,) = (bundle / "adjudication").glob("*.json")
    rewrite_record(record, lambda content: content["decisions"][0].update(variable="product_area"))

    result = run("report", bundle, "--format", "json")

    assert result.exit_code == 2
    assert "bundle-adjudication" in result.output and record.name in result.output


def frozen_digest(stdout: str) -> str:
    """The digest freeze printed (`sha256:<hex>  <bundle>`)."""
    (line,) = stdout.splitlines()
    return line.split()[0]


def test_the_report_names_the_bundle_as_a_rules_bundles_report_does(tmp_path: Path) -> None:
    frozen = run("freeze", *EXAMPLE_SHEETS, "--codebook", CODEBOOK, "--into", tmp_path / "audits")
    assert frozen.exit_code == 0, frozen.output
    digest = frozen_digest(frozen.stdout)
    (bundle,) = [path for path in (tmp_path / "audits").iterdir() if path.is_dir()]
    created = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))["created"]
    one_rule = run(
        "freeze", *EXAMPLE_SHEETS, "--rule", RULES / "sarcasm" / "v1.yaml", "--code-column", "sarcasm",
        "--into", tmp_path / "rule_audits",
    )  # fmt: skip
    assert one_rule.exit_code == 0, one_rule.output
    (rule_bundle,) = [path for path in (tmp_path / "rule_audits").iterdir() if path.is_dir()]

    document = json.loads(report(bundle, "json"))
    rules_own = json.loads(report(rule_bundle, "json"))["bundle"]
    assert set(document["bundle"]) == set(rules_own)  # the very keys of a rule's bundle's report
    assert document["bundle"]["name"] == bundle.name
    assert document["bundle"]["digest"] == digest  # what freeze printed, what verify --expect takes
    assert document["bundle"]["created"] == created
    assert (document["bundle"]["recodes"], document["bundle"]["sample"]) == (None, None)
    assert run("verify", bundle, "--expect", document["bundle"]["digest"]).exit_code == 0
    assert irr_audit.audit_codebook(bundle).to_dict()["bundle"] == document["bundle"]  # the same from Python
    for output_format in ("md", "text", "html", "methods"):
        shown = report(bundle, output_format)
        name = bundle.name.replace("_", "\\_") if output_format == "md" else bundle.name  # Markdown escapes it
        assert name in shown and digest in shown and (output_format == "methods" or created in shown)
    assert "bundle" not in json.loads(run("score", bundle, "--format", "json").stdout)  # as a rule's bundle's score


def test_a_report_of_sheets_names_no_bundle() -> None:
    result = run("report", *EXAMPLE_SHEETS, "--codebook", CODEBOOK, "--format", "json")
    assert result.exit_code in (0, 1), result.output
    assert "bundle" not in json.loads(result.stdout)
