"""The record files of irr-audit's folders (join's summary.json, sample's sample.json),
edited by hand: each is checked for structure once, when it is read, and refused with
exit 2 naming the key at fault, never a crash and never a value taken for another."""

from __future__ import annotations

import csv
import json
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import irr_audit
from irr_audit.cli import app

ROOT = Path(__file__).resolve().parents[1]
RULE = ROOT / "rules" / "explicit_current_failure" / "v1.yaml"
EXAMPLES = ROOT / "examples" / "sheets"
COLLECTOR = ROOT / "tests" / "fixtures" / "collector"


def run(*args: object):
    return CliRunner().invoke(app, [str(arg) for arg in args], catch_exceptions=False)


def refused(result, code: str, *phrases: str) -> None:
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"Error [{code}]: "), result.stderr
    assert result.stderr.count("Error [") == 1
    for phrase in phrases:
        assert phrase in result.stderr, result.stderr


def edit_json(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    document = json.loads(path.read_text(encoding="utf-8"))
    change(document)
    path.write_text(json.dumps(document), encoding="utf-8")


@pytest.fixture
def work(tmp_path: Path) -> Path:
    for name in ("alice.csv", "bob.csv"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    shutil.copy(RULE, tmp_path / "rule.yaml")
    return tmp_path


def sampled(work: Path) -> Path:
    """A sample folder of the collector fixture with two filled sheets, and a join of it (J)."""
    result = run(
        "sample",
        COLLECTOR / "dataset.json",
        "--rule",
        work / "rule.yaml",
        "--coders",
        "ann,ben",
        "--out",
        work / "s",
        "-q",
    )
    assert result.exit_code == 0, result.output
    for coder in ("ann", "ben"):
        with open(work / "s" / "sheets" / f"{coder}.csv", encoding="utf-8", newline="") as stream:
            rows = list(csv.DictReader(stream))
        with open(work / f"{coder}.csv", "w", encoding="utf-8", newline="") as stream:
            writer = csv.DictWriter(stream, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows({**row, "code": "yes"} for row in rows)
    return work / "s"


def join_with_sample(work: Path) -> Path:
    sample = sampled(work)
    result = run(
        "join", work / "ann.csv", work / "ben.csv", "--rule", work / "rule.yaml", "--sample", sample, "--out",
        work / "J", "-q",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return work / "J"


def plain_join(work: Path) -> Path:
    result = run("join", work / "alice.csv", work / "bob.csv", "--rule", work / "rule.yaml", "--out", work / "J", "-q")
    assert result.exit_code == 0, result.output
    return work / "J"


# --- summary.json -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "key"),
    [
        (lambda summary: summary.update(columns={"id_column": 5}), "columns.id_column"),
        (lambda summary: summary.update(columns=["comment_id"]), "columns"),
        (lambda summary: summary.update(sheets={"name": "alice.csv"}), "sheets"),
        (lambda summary: summary["sheets"][0].update(sha256=7), "sheets[0].sha256"),
        (lambda summary: summary.update(sample={"ids": "c1", "report": {}}), "sample.ids"),
        (lambda summary: summary.update(sample={"ids": [1, 2], "report": {}}), "sample.ids[0]"),
        (lambda summary: summary.update(sample=[1]), "sample"),
        (lambda summary: summary.update(sample={"ids": ["c1"], "report": 5}), "sample.report"),
        (lambda summary: summary.update(sample={"ids": ["c1"], "folder": 3, "report": {}}), "sample.folder"),
    ],
)
@pytest.mark.parametrize("command", [("score",), ("report", "--format", "html"), ("report", "--format", "md")])
def test_a_hand_edited_join_summary_is_refused_by_its_key(work: Path, change, key: str, command) -> None:
    folder = plain_join(work)
    edit_json(folder / "summary.json", change)
    refused(run(*command, folder, "-q"), "joindir-invalid", "summary.json", key)


@pytest.mark.parametrize(
    ("change", "key"),
    [
        (lambda report: report.update(counts={"items": 3}), "sample.report.counts.usable_units"),
        (lambda report: report["counts"].update(items="many"), "sample.report.counts.items"),
        (lambda report: report["counts"].update(log_rows=[1]), "sample.report.counts.log_rows"),
        (lambda report: report.update(completeness=[1]), "sample.report.completeness"),
        (lambda report: report["completeness"].update(reasons="cut"), "sample.report.completeness.reasons"),
        (lambda report: report.update(dataset={"file": "x"}), "sample.report.dataset"),
        (lambda report: report.update(count_mismatches=[{"check": 1}]), "sample.report.count_mismatches[0]"),
        (lambda report: report.update(draw={"seed": "x"}), "sample.report.draw.seed"),
    ],
)
@pytest.mark.parametrize("output_format", ["html", "md", "json"])
def test_a_hand_edited_sample_section_of_a_join_summary_is_refused(work: Path, change, key, output_format) -> None:
    folder = join_with_sample(work)
    edit_json(folder / "summary.json", lambda summary: change(summary["sample"]["report"]))
    refused(run("report", folder, "--format", output_format, "-q"), "joindir-invalid", key)


def test_an_unknown_column_option_from_a_newer_tool_is_ignored(work: Path) -> None:
    folder = plain_join(work)
    before = run("score", folder, "--format", "json", "-q").stdout
    edit_json(folder / "summary.json", lambda summary: summary["columns"].update(sheet_password="x"))
    assert run("score", folder, "--format", "json", "-q").stdout == before


def test_a_valid_join_summary_with_a_sample_still_reports(work: Path) -> None:
    folder = join_with_sample(work)
    result = run("report", folder, "--format", "md", "-q")
    assert result.exit_code == 0, result.output
    assert "Sample: from the collector's output (dataset.json)" in result.stdout


# --- sample.json ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "key"),
    [
        (lambda record: record.update(completeness=[1]), "completeness"),
        (lambda record: record.update(dataset="x"), "dataset"),
        (lambda record: record["dataset"].update(file=5), "dataset.file"),
        (lambda record: record.update(counts={"items": 3}), "counts.usable_units"),
        (lambda record: record["counts"].update(log_rows={"deleted": "2"}), "counts.log_rows.deleted"),
        (lambda record: record.update(count_mismatches={"check": "x"}), "count_mismatches"),
        (lambda record: record.update(draw=[]), "draw"),
        (lambda record: record["rule"].update(version="1"), "rule.version"),
        (lambda record: record.update(rule="explicit_current_failure"), "rule"),
        (lambda record: record["ledger"].update(sample_ids="abc"), "ledger.sample_ids"),
        (lambda record: record["ledger"].update(file=["ledger.jsonl"]), "ledger.file"),
        (lambda record: record.update(ledger=None), "ledger"),
        (lambda record: record.update(run=[]), "run"),
        (lambda record: record.__setitem__("sheets", "x"), None),  # not read by join --sample: no refusal
    ],
)
def test_a_hand_edited_sample_record_is_refused_by_its_key(work: Path, change, key: str | None) -> None:
    sample = sampled(work)
    edit_json(sample / "sample.json", change)
    result = run(
        "join", work / "ann.csv", work / "ben.csv", "--rule", work / "rule.yaml", "--sample", sample, "--out",
        work / "J", "-q",
    )  # fmt: skip
    if key is None:
        assert result.exit_code == 0, result.output
    else:
        refused(result, "sample-dir-invalid", "sample.json", key)


def test_a_sample_record_that_is_not_an_object_is_refused(work: Path) -> None:
    sample = sampled(work)
    (sample / "sample.json").write_text("[1, 2]", encoding="utf-8")
    result = run(
        "join", work / "ann.csv", work / "ben.csv", "--rule", work / "rule.yaml", "--sample", sample, "--out",
        work / "J", "-q",
    )  # fmt: skip
    refused(result, "sample-dir-invalid", "sample.json", "not a JSON object")


# --- what is a bundle: decided once (io.runfolder.is_bundle) --------------------------------


def test_a_manifest_alone_makes_no_bundle_for_any_command(work: Path) -> None:
    web = work / "web"  # a web project keeps a manifest.json too
    web.mkdir()
    (web / "manifest.json").write_text('{"name": "app"}', encoding="utf-8")
    sheets = (work / "alice.csv", work / "bob.csv")

    written = run("report", *sheets, "--rule", work / "rule.yaml", "--output", web / "report.md", "-q")
    assert written.exit_code == 0, written.output
    assert (web / "report.md").is_file()
    refused(run("score", web, "-q"), "usage-not-a-join-dir", str(web), "summary.json")
    refused(run("adjudicate", web, "-q"), "bundle-not-found", str(web), "manifest.json is not beside sheets/ or rule/")


def test_a_bundle_is_never_written_into(work: Path) -> None:
    bundle = work / "audits" / "b"
    (bundle / "rule").mkdir(parents=True)
    (bundle / "manifest.json").write_text("{}", encoding="utf-8")
    sheets = (work / "alice.csv", work / "bob.csv")

    result = run("report", *sheets, "--rule", work / "rule.yaml", "--output", bundle / "rule" / "report.md", "-q")
    refused(result, "output-in-bundle", str(bundle))


# --- a bundle's sample: only the one its manifest lists (finding: planted sample/ folders) ----


def frozen(work: Path, *extra: object) -> Path:
    result = run("freeze", *extra, "--into", work / "audits")
    assert result.exit_code == 0, result.output
    (bundle,) = [path for path in (work / "audits").iterdir() if not path.name.startswith(".")]
    bundle.chmod(0o755)  # to plant files as an attacker who can write the folder would
    return bundle


def report_json(bundle: Path) -> dict[str, Any]:
    result = run("report", bundle, "--format", "json", "-q")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("planted", ["a folder", "a symlink to a folder outside"])
def test_a_sample_folder_planted_in_a_bundle_frozen_without_one_is_ignored(work: Path, planted: str) -> None:
    sample = sampled(work)
    bundle = frozen(work, work / "alice.csv", work / "bob.csv", "--rule", work / "rule.yaml")
    before = report_json(bundle)
    if planted == "a folder":
        shutil.copytree(sample, bundle / "sample")
    else:
        (bundle / "sample").symlink_to(sample, target_is_directory=True)

    after = report_json(bundle)

    assert before.get("sample") is None and after == before
    assert irr_audit.audit(bundle).report.sample is None  # the API's audit of the bundle too
    for output_format in ("md", "html"):
        shown = run("report", bundle, "--format", output_format, "-q")
        assert shown.exit_code == 0 and "collector" not in shown.stdout, shown.output


def test_a_frozen_sample_replaced_by_a_symlink_is_refused(work: Path) -> None:
    sample = sampled(work)
    bundle = frozen(work, work / "ann.csv", work / "ben.csv", "--rule", work / "rule.yaml", "--sample", sample)
    assert report_json(bundle)["sample"]["dataset"] == "dataset.json"
    shutil.copytree(bundle / "sample", work / "outside")
    (bundle / "sample").chmod(0o755)
    shutil.rmtree(bundle / "sample")
    (bundle / "sample").symlink_to(work / "outside", target_is_directory=True)

    for command in (("report", bundle), ("score", bundle), ("adjudicate", bundle)):
        refused(run(*command, "-q"), "bundle-unsafe-path", "passes through the symlink sample")


# --- each record read once (counted by wrapping the library's readers in this test only) ---------


def posix(path: Path, *_: object) -> str:
    return Path(path).as_posix()


def count_reads(monkeypatch) -> Counter[str]:
    """Count, by path, the reads of the library's bounded reader (where the run records,
    the rule and the sample use it), its run-record hashing and its manifest reader."""
    import irr_audit.bundle.manifest as manifest_module
    import irr_audit.io.records as records_module
    import irr_audit.io.runfolder as runfolder_module
    import irr_audit.rules.load as rule_module
    import irr_audit.sample.folder as sample_folder_module

    reads: Counter[str] = Counter()

    def counted(function, name_of):
        def wrapper(*args, **kwargs):
            reads[name_of(*args)] += 1
            return function(*args, **kwargs)

        return wrapper

    for module in (records_module, rule_module, sample_folder_module):
        monkeypatch.setattr(
            module, "read_bounded", counted(module.read_bounded, lambda path, *_: Path(path).as_posix())
        )
    monkeypatch.setattr(runfolder_module, "sha256_file", counted(runfolder_module.sha256_file, posix))
    monkeypatch.setattr(
        manifest_module,
        "load_manifest_json",
        counted(manifest_module.load_manifest_json, lambda bundle: (Path(bundle) / "manifest.json").as_posix()),
    )
    return reads


def test_report_of_a_join_folder_reads_its_summary_rule_and_sample_once(work: Path, monkeypatch) -> None:
    folder = join_with_sample(work)
    reads = count_reads(monkeypatch)

    assert run("report", folder, "--format", "html", "-q").exit_code == 0

    assert reads[f"{folder}/summary.json"] == 1 and reads[f"{folder}/rule.yaml"] == 1, reads


def test_join_with_a_sample_reads_its_record_and_ledger_once(work: Path, monkeypatch) -> None:
    sample = sampled(work)
    reads = count_reads(monkeypatch)

    result = run(
        "join", work / "ann.csv", work / "ben.csv", "--rule", work / "rule.yaml", "--sample", sample, "--out",
        work / "J", "-q",
    )  # fmt: skip

    assert result.exit_code == 0, result.output
    assert reads[f"{sample}/sample.json"] == 1 and reads[f"{sample}/ledger.jsonl"] == 1, reads
    assert reads[f"{work}/rule.yaml"] == 1, reads


@pytest.mark.parametrize("command", [("report", "--format", "md"), ("adjudicate",), ("score",)])
def test_a_bundle_command_reads_the_manifest_once(work: Path, monkeypatch, command) -> None:
    sample = sampled(work)
    bundle = frozen(work, work / "ann.csv", work / "ben.csv", "--rule", work / "rule.yaml", "--sample", sample)
    reads = count_reads(monkeypatch)

    result = run(
        command[0], bundle, *command[1:], "-q", *(["-o", work / "list.csv"] if command == ("adjudicate",) else [])
    )

    assert result.exit_code in (0, 1), result.output
    assert reads[f"{bundle}/manifest.json"] == 1, reads
    assert reads[f"{bundle}/sample/sample.json"] == 1 and reads[f"{bundle}/sample/ledger.jsonl"] == 1, reads
