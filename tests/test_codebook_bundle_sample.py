"""`freeze --codebook --sample DIR`: the units are the sample's, the sample's files are kept in the
bundle, verify checks them, and `report`/`score` of the bundle show the sample as a rule's bundle's
(and as `join --codebook --sample` of the same sheets) do."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from irr_audit.cli import app
from tests.test_manifest_values import manifest_of, rewrite_manifest

ROOT = Path(__file__).resolve().parents[1]
CODEBOOK = ROOT / "codebooks" / "comment_study" / "v1.yaml"
DATASET = ROOT / "examples" / "collector" / "dataset.jsonl"
RUN_RECORD = ROOT / "examples" / "collector" / "run.json"


def run(*args: object):
    return CliRunner().invoke(app, [str(arg) for arg in args], catch_exceptions=False)


def draw(out: Path, *how: object) -> Path:
    drawn = run("sample", DATASET, "--run-record", RUN_RECORD, *how, "--coders", "alice,bob", "--out", out,
                "--size", "8", "--seed", "3", "--quiet")  # fmt: skip
    assert drawn.exit_code == 0, drawn.output
    return out


def fill(sample: Path, into: Path) -> list[Path]:
    """The sample's sheets coded (severity split on every other unit), with a row for a unit outside it."""
    into.mkdir(parents=True, exist_ok=True)
    filled = []
    for coder in ("alice", "bob"):
        with open(sample / "sheets" / f"{coder}.csv", encoding="utf-8-sig", newline="") as stream:
            rows = list(csv.DictReader(stream))
        for at, row in enumerate(rows):
            row.update(explicit_current_failure="yes", product_area="app", sarcasm="no")
            row["severity"] = "minor" if coder == "alice" or at % 2 else "major"
        rows.append({**rows[0], "comment_id": "not_sampled"})
        path = into / f"{coder}.csv"
        with open(path, "w", encoding="utf-8", newline="") as stream:
            writer = csv.DictWriter(stream, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        filled.append(path)
    return filled


@pytest.fixture(scope="module")
def drawn(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    """A sample drawn for the codebook, and its sheets filled in."""
    folder = tmp_path_factory.mktemp("drawn")
    sample = draw(folder / "sample", "--codebook", CODEBOOK)
    return sample, fill(sample, folder / "filled")


def freeze(sheets: list[Path], sample: Path, audits: Path) -> Path:
    frozen = run("freeze", *sheets, "--codebook", CODEBOOK, "--sample", sample, "--into", audits, "--quiet")
    assert frozen.exit_code == 0, frozen.output
    return Path(frozen.stdout.strip().split("  ", 1)[1])


def test_the_units_are_the_samples_and_its_files_are_kept(drawn, tmp_path: Path) -> None:
    sample, sheets = drawn
    bundle = freeze(sheets, sample, tmp_path / "audits")
    manifest = manifest_of(bundle)

    assert manifest["units"]["count"] == 8  # the row outside the sample is not a unit
    kept = manifest["sample"]
    assert kept["restricts_units"] is True and kept["summary"] == "sample/sample.json"
    assert kept["ids"]["count"] == 8
    expected = {
        path.relative_to(sample).as_posix()
        for path in sample.rglob("*")
        if path.is_file() and not path.relative_to(sample).as_posix().startswith("sheets/")
    }
    assert {path.removeprefix("sample/") for path in kept["files"]} == expected
    assert "rules/severity/v1.yaml" in expected  # the rule copies the sample's run record lists
    for path in kept["files"]:
        assert (bundle / path).read_bytes() == (sample / path.removeprefix("sample/")).read_bytes()
    listed = {record["path"] for record in manifest["files"]}
    assert set(kept["files"]) <= listed
    verified = run("verify", bundle)
    assert verified.exit_code == 0, verified.output


def test_report_and_score_show_the_sample_as_the_join_with_it_does(drawn, tmp_path: Path) -> None:
    sample, sheets = drawn
    bundle = freeze(sheets, sample, tmp_path / "audits")
    joined = run("join", *sheets, "--codebook", CODEBOOK, "--sample", sample, "--out", tmp_path / "j", "--quiet")
    assert joined.exit_code == 0, joined.output

    from_bundle = json.loads(run("report", bundle, "--format", "json", "--quiet").stdout)
    from_join = json.loads(run("report", tmp_path / "j", "--format", "json", "--quiet").stdout)

    assert from_bundle["missingness"] == from_join["missingness"]
    for variable, document in from_bundle["variables"].items():
        assert document["sample"] and document["sample"] == from_join["variables"][variable]["sample"]
        assert document["units"]["total"] == 8
        assert document["disagreements"] == from_join["variables"][variable]["disagreements"]
    listed = from_bundle["variables"]["severity"]["disagreements"]
    assert listed and all(entry["link"] and entry["text"] for entry in listed)  # the ledger's text and link
    text = run("report", bundle, "--format", "text", "--quiet")
    assert text.exit_code == 0 and "Sample: from the collector's output (dataset.jsonl)" in text.stdout
    scored = run("score", bundle, "--format", "json", "--quiet")
    assert json.loads(scored.stdout)["variables"]["severity"]["sample"] == from_join["variables"]["severity"]["sample"]


def test_a_sample_file_changed_in_the_bundle_fails_verify(drawn, tmp_path: Path) -> None:
    sample, sheets = drawn
    bundle = freeze(sheets, sample, tmp_path / "audits")
    ledger = bundle / "sample" / "ledger.jsonl"
    ledger.parent.chmod(0o755)
    ledger.chmod(0o644)
    ledger.write_bytes(ledger.read_bytes().replace(b'"body"', b'"Body"', 1))

    verified = run("verify", bundle, "--format", "json")

    assert verified.exit_code == 1
    assert json.loads(verified.stdout)["files"]["changed"] == ["sample/ledger.jsonl"]
    assert run("report", bundle).exit_code == 2  # a command that reads the bundle refuses it


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (lambda kept: kept["ids"].update(count=7), "manifest: manifest.json: sample.ids are not the ids of the"),
        (lambda kept: kept.update(restricts_units=False), "manifest: manifest.json: sample.restricts_units must be"),
        (lambda kept: kept["files"].append("sample/x/y.csv"), "'sample/x/y.csv' is not in sample/ or sample/rules/"),
        (lambda kept: kept["files"].append("sample/gone.csv"), "sample file sample/gone.csv is not in the file list"),
        (lambda kept: kept.update(summary="sample/ledger.csv"), "sample.summary must be sample/sample.json"),
    ],
)
def test_a_tampered_sample_entry_fails_verify(drawn, tmp_path: Path, edit, problem: str) -> None:
    sample, sheets = drawn
    bundle = freeze(sheets, sample, tmp_path / "audits")
    manifest = manifest_of(bundle)
    edit(manifest["sample"])
    rewrite_manifest(bundle, manifest)

    verified = run("verify", bundle)

    assert verified.exit_code == 1 and problem in verified.stdout, verified.stdout


def test_a_sample_not_drawn_for_this_codebook_is_refused_by_name(drawn, tmp_path: Path) -> None:
    _, sheets = drawn
    rule_sample = draw(tmp_path / "rule_sample", "--rule", ROOT / "rules" / "explicit_current_failure" / "v1.yaml")

    refused = run("freeze", *sheets, "--codebook", CODEBOOK, "--sample", rule_sample, "--into", tmp_path / "audits")

    assert refused.exit_code == 2 and "Error [usage-sample-codebook]" in refused.stderr
    assert "not for the codebook comment_study v1" in refused.stderr
    assert not (tmp_path / "audits").exists()


def test_audits_inside_the_sample_folder_are_refused(drawn, tmp_path: Path) -> None:
    sample, sheets = drawn
    copy = tmp_path / "sample"
    shutil.copytree(sample, copy)

    refused = run("freeze", *sheets, "--codebook", CODEBOOK, "--sample", copy, "--into", copy / "audits")

    assert refused.exit_code == 2 and "[usage-into]" in refused.stderr
