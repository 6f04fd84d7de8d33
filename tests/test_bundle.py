"""Audit bundles through the CLI: freeze, verify, score/report BUNDLE, adjudicate (issue 5)."""

from __future__ import annotations

import csv
import errno
import hashlib
import io
import json
import os
import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

import irr_audit
from irr_audit.bundle import adjudication
from irr_audit.bundle import freeze as freeze_module
from irr_audit.bundle.manifest import canonical_sha256, list_bundles, units_digest
from irr_audit.errors import OutputError
from irr_audit.io import runfolder
from irr_audit.io.fingerprints import units_sketch
from irr_audit.io.outputs import render_json
from irr_audit.report.format import bundle_lines
from tests.conftest import run

ROOT = Path(__file__).resolve().parents[1]
RULE = ROOT / "rules" / "explicit_current_failure" / "v1.yaml"
EXAMPLES = ROOT / "examples" / "sheets"
RULE_FILE = "rule/explicit_current_failure/v1.yaml"
NAME = re.compile(r"\d{8}T\d{6}Z_explicit_current_failure_v1")


def printed_path(stdout: str) -> Path:
    """The path in the line freeze and adjudicate print: sha256:<hex>  <path>."""
    digest, path = stdout.rstrip("\n").split("  ", 1)
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", digest), stdout
    return Path(path)


def freeze(inputs: list[Path], audits: Path, *extra: object) -> Path:
    result = run("freeze", *inputs, "--rule", RULE, "--into", audits, *extra)
    assert result.exit_code == 0, result.stderr
    return printed_path(result.stdout)


def manifest_of(bundle: Path) -> dict[str, Any]:
    return json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))


def writable(path: Path) -> Path:
    os.chmod(path, stat.S_IRUSR | stat.S_IWUSR)
    return path


def rewrite_manifest(bundle: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Edit the manifest as a careful forger would: with its integrity hash recomputed."""
    manifest = manifest_of(bundle)
    change(manifest)
    manifest["integrity"]["sha256"] = canonical_sha256(manifest, "integrity")
    writable(bundle / "manifest.json").write_text(render_json(manifest), encoding="utf-8")


def score_json(*inputs: object) -> dict[str, Any]:
    result = run("score", *inputs, "--format", "json", "--quiet")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def scored_ids(sheets: list[Path], tmp_path: Path, *extra: object) -> list[str]:
    """The fully coded units of the sheets, as join's joined.csv marks them."""
    folder = tmp_path / "scored_join"
    assert run("join", *sheets, "--rule", RULE, "--out", folder, *extra, "-q").exit_code == 0
    with open(folder / "joined.csv", encoding="utf-8-sig", newline="") as stream:
        return [row["comment_id"] for row in csv.DictReader(stream) if row["fully_coded"] == "True"]


# --- freeze and verify -----------------------------------------------------------------


def test_freeze_verify_round_trip(sheets: list[Path], tmp_path: Path) -> None:
    audits = tmp_path / "audits"
    bundle = freeze(sheets, audits)

    assert bundle.parent == audits and NAME.fullmatch(bundle.name)
    manifest = manifest_of(bundle)
    assert manifest["format"] == "irr-audit-bundle/1"
    assert manifest["name"] == bundle.name
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", manifest["created"])
    assert manifest["rule"] == {
        "id": "explicit_current_failure",
        "version": 1,
        "digest": "sha256:" + sha256_of(RULE),
        "file": RULE_FILE,
    }
    assert manifest["sheets"] == [
        {"file": f"sheets/{path.name}", "coder": path.stem, "sha256": sha256_of(path), "size": path.stat().st_size}
        for path in sheets
    ]
    assert [record["path"] for record in manifest["files"]] == [RULE_FILE, "sheets/alice.csv", "sheets/bob.csv"]
    assert manifest["recodes"] is None and manifest["sample"] is None
    ids = [line.split(",")[0] for line in (EXAMPLES / "alice.csv").read_text().splitlines()[1:]]
    scored = scored_ids(sheets, tmp_path)
    assert len(scored) == 20
    assert manifest["units"] == {
        "count": 22,
        "ids_sha256": units_digest(ids),
        "sketch": units_sketch(ids),
        "scored_sketch": units_sketch(scored),
    }
    assert manifest["score"]["metrics"]["cohen_kappa"]["value"] == pytest.approx(0.70, abs=1e-12)
    assert manifest["score"]["units"]["fully_coded"] == 20

    for path in sheets:
        assert (bundle / "sheets" / path.name).read_bytes() == path.read_bytes()
    assert (bundle / RULE_FILE).read_bytes() == RULE.read_bytes()
    for path in [bundle / "manifest.json", *(bundle / record["path"] for record in manifest["files"])]:
        assert not path.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH), path

    verified = run("verify", bundle)
    assert verified.exit_code == 0, verified.stdout
    assert verified.stdout.splitlines()[-1].startswith(f"OK: bundle {bundle.name} verifies: 3 files unchanged")

    from_bundle = score_json(bundle)
    assert from_bundle == score_json(*sheets, "--rule", RULE)
    assert {key: value for key, value in from_bundle.items() if key != "tool"} == {
        key: value for key, value in manifest["score"].items() if key != "tool"
    }


def test_freeze_a_join_folder(sheets: list[Path], tmp_path: Path) -> None:
    joined = tmp_path / "joined"
    assert run("join", *sheets, "--rule", RULE, "--out", joined, "--quiet").exit_code == 0

    bundle = freeze([joined], tmp_path / "audits")

    assert [sheet["file"] for sheet in manifest_of(bundle)["sheets"]] == ["sheets/alice.csv", "sheets/bob.csv"]
    assert manifest_of(bundle)["score"] == json.loads(render_json(manifest_of(bundle)["score"]))
    assert run("verify", bundle).exit_code == 0
    assert score_json(bundle) == score_json(joined)


@pytest.mark.parametrize("option", [["--id-column", "id"], ["--code-column", "label"], ["--worksheet", "Sheet1"]])
def test_freeze_of_a_join_folder_refuses_options_that_read_sheets(
    sheets: list[Path], tmp_path: Path, option: list[str]
) -> None:
    """The folder keeps how its sheets were read: such an option would be passed over silently."""
    joined = tmp_path / "joined"
    assert run("join", *sheets, "--rule", RULE, "--out", joined, "--quiet").exit_code == 0
    result = run("freeze", joined, "--into", tmp_path / "audits", *option)
    assert result.exit_code == 2 and "usage-join-dir-option" in result.stderr and option[0] in result.stderr
    assert not (tmp_path / "audits").exists() or not any((tmp_path / "audits").iterdir())


@pytest.mark.parametrize("command", ["score", "report"])
@pytest.mark.parametrize("option", [["--id-column", "id"], ["--worksheet", "Sheet1"], ["--delimiter", ";"]])
def test_score_and_report_of_a_join_folder_or_bundle_refuse_options_that_read_sheets(
    sheets: list[Path], tmp_path: Path, command: str, option: list[str]
) -> None:
    joined = tmp_path / "joined"
    assert run("join", *sheets, "--rule", RULE, "--out", joined, "--quiet").exit_code == 0
    bundle = freeze([joined], tmp_path / "audits")
    for folder in (joined, bundle):
        result = run(command, folder, "--format", "json", "-q", *option)
        assert result.exit_code == 2 and "usage-join-dir-option" in result.stderr and option[0] in result.stderr


def flip_one_byte(bundle: Path) -> None:
    path = writable(bundle / "sheets" / "alice.csv")
    data = bytearray(path.read_bytes())
    data[-4] ^= 0x01  # inside the last row's rule_version cell: "v1" -> "w1"
    path.write_bytes(bytes(data))


def delete_bob(bundle: Path) -> None:
    (bundle / "sheets" / "bob.csv").unlink()


def add_carol(bundle: Path) -> None:
    shutil.copy(EXAMPLES / "bob.csv", bundle / "sheets" / "carol.csv")


def edit_created(bundle: Path) -> None:
    path = writable(bundle / "manifest.json")
    path.write_text(path.read_text().replace('"created": "', '"created": "1999'), encoding="utf-8")


def edit_rule(bundle: Path) -> None:
    path = writable(bundle / RULE_FILE)
    path.write_text(path.read_text().replace("version: 1", "version: 1\n# clarified after review"), encoding="utf-8")


@pytest.mark.parametrize(
    ("tamper", "expected"),
    [
        (flip_one_byte, "changed: sheets/alice.csv: sha256 "),
        (delete_bob, "missing: sheets/bob.csv"),
        (add_carol, "extra: sheets/carol.csv: not in the manifest"),
        (edit_created, "manifest: manifest.json: edited after freezing (its integrity hash does not match)"),
        (edit_rule, f"changed: {RULE_FILE}: is larger than the "),  # a file grown since freezing is not read
    ],
    ids=["one byte of a sheet", "deleted file", "added file", "edited manifest", "edited rule"],
)
def test_verify_names_each_change(sheets: list[Path], tmp_path: Path, tamper, expected: str) -> None:
    bundle = freeze(sheets, tmp_path / "audits")
    tamper(bundle)

    result = run("verify", bundle)

    assert result.exit_code == 1
    assert any(line.startswith(expected) for line in result.stdout.splitlines()), result.stdout
    assert result.stdout.splitlines()[-1].startswith(f"FAILED: bundle {bundle.name} does not verify")


def test_verify_recomputes_the_score(sheets: list[Path], tmp_path: Path) -> None:
    """A forged score, even with a recomputed integrity hash, differs from the frozen sheets."""
    bundle = freeze(sheets, tmp_path / "audits")
    rewrite_manifest(bundle, lambda manifest: manifest["score"]["metrics"]["cohen_kappa"].update(value=0.9))

    result = run("verify", bundle)

    assert result.exit_code == 1
    assert "score: metrics.cohen_kappa.value: frozen 0.9, recomputed 0.7" in result.stdout


@pytest.mark.parametrize("key", ["count", "ids_sha256", "sketch", "scored_sketch"])
def test_verify_recomputes_the_units_fingerprints(sheets: list[Path], tmp_path: Path, key: str) -> None:
    """A forged unit count, ids digest or sketch, even with a recomputed integrity hash, is found."""
    bundle = freeze(sheets, tmp_path / "audits")
    forged = {"count": 23, "ids_sha256": "0" * 64, "sketch": ["0" * 16], "scored_sketch": ["0" * 16]}
    rewrite_manifest(bundle, lambda manifest: manifest["units"].update({key: forged[key]}))

    result = run("verify", bundle)

    assert result.exit_code == 1
    assert "units: the frozen sheets hold 22 units, the manifest says" in result.stdout, result.stdout


def test_a_bundle_frozen_before_the_scored_sketch_still_verifies(sheets: list[Path], tmp_path: Path) -> None:
    """Bundles frozen by earlier versions have no units.scored_sketch (nor, earlier still, a sketch)."""
    bundle = freeze(sheets, tmp_path / "audits")
    rewrite_manifest(bundle, lambda manifest: manifest["units"].pop("scored_sketch"))
    assert run("verify", bundle).exit_code == 0
    rewrite_manifest(bundle, lambda manifest: manifest["units"].pop("sketch"))
    assert run("verify", bundle).exit_code == 0


def test_verify_reports_a_changed_code_as_a_score_difference(sheets: list[Path], tmp_path: Path) -> None:
    bundle = freeze(sheets, tmp_path / "audits")
    path = writable(bundle / "sheets" / "bob.csv")
    path.write_text(path.read_text().replace(",yes,,v1", ",no,,v1", 1), encoding="utf-8")

    lines = run("verify", bundle, "--verbose").stdout.splitlines()

    assert lines[0].startswith("FAILED: bundle ") and "files 1 changed (sheets/bob.csv)" in lines[0]
    assert lines[1].startswith("headline: Cohen's kappa (two coders, a nominal rule): frozen 0.7000 -> now ")
    assert any(line.startswith("changed: sheets/bob.csv") for line in lines)
    assert any(line.startswith("score: table[0][0]: frozen 8, recomputed ") for line in lines)


def test_freezing_twice_into_the_same_place_is_refused(sheets: list[Path], tmp_path: Path) -> None:
    audits = tmp_path / "audits"
    bundle = freeze(sheets, audits)

    again = run("freeze", *sheets, "--rule", RULE, "--into", audits)
    into_bundle = run("freeze", *sheets, "--rule", RULE, "--into", bundle)

    assert again.exit_code == 2
    assert again.stderr.startswith(
        f"Error [usage-already-frozen]: these sheets and this rule are already frozen in {bundle}."
    )
    assert into_bundle.exit_code == 2
    assert "Error [usage-into-bundle]" in into_bundle.stderr
    assert list_bundles(audits) == [bundle] and sorted(os.listdir(audits)) == [freeze_module.FREEZE_LOCK, bundle.name]


def test_a_copied_bundle_still_verifies(sheets: list[Path], tmp_path: Path) -> None:
    bundle = freeze(sheets, tmp_path / "audits")
    copy = Path(shutil.copytree(bundle, tmp_path / "elsewhere" / "archive 2024" / bundle.name))
    shutil.rmtree(tmp_path / "coding sheets")  # the originals are not needed any more

    assert run("verify", copy).exit_code == 0
    assert score_json(copy)["metrics"]["cohen_kappa"]["value"] == pytest.approx(0.70, abs=1e-12)


def test_paths_with_spaces_and_non_ascii_names(tmp_path: Path) -> None:
    folder = tmp_path / "données d'équipe"
    folder.mkdir()
    agot = Path(shutil.copy(EXAMPLES / "alice.csv", folder / "Ågot Ørn.csv"))
    bob = Path(shutil.copy(EXAMPLES / "bob.csv", folder / "bob 李.csv"))

    bundle = freeze([agot, bob], tmp_path / "mes audits" / "été 2024")

    assert [sheet["coder"] for sheet in manifest_of(bundle)["sheets"]] == ["Ågot Ørn", "bob 李"]
    assert (bundle / "sheets" / "Ågot Ørn.csv").read_bytes() == agot.read_bytes()
    assert run("verify", bundle).exit_code == 0
    assert score_json(bundle)["coders"] == ["Ågot Ørn", "bob 李"]


# --- nothing escapes the audits folder ----------------------------------------------------


def test_a_sheet_path_with_dot_dot_lands_inside_the_bundle(sheets: list[Path], tmp_path: Path) -> None:
    detour = sheets[0].parent / "sub" / ".." / "alice.csv"
    (sheets[0].parent / "sub").mkdir()
    audits = tmp_path / "audits"

    bundle = freeze([detour, sheets[1]], audits)

    assert sorted(path.name for path in (bundle / "sheets").iterdir()) == ["alice.csv", "bob.csv"]
    assert sorted(os.listdir(audits)) == [freeze_module.FREEZE_LOCK, bundle.name]


@pytest.mark.parametrize("path", ["../outside.csv", "/etc/passwd", "sheets/../../outside.csv", "sheets\\..\\x.csv"])
def test_a_manifest_path_cannot_leave_the_bundle(sheets: list[Path], tmp_path: Path, path: str) -> None:
    bundle = freeze(sheets, tmp_path / "audits")
    shutil.copy(EXAMPLES / "alice.csv", tmp_path / "audits" / "outside.csv")

    def point_outside(manifest: dict[str, Any]) -> None:
        manifest["sheets"][0]["file"] = path
        manifest["files"][1]["path"] = path

    rewrite_manifest(bundle, point_outside)

    verified = run("verify", bundle)
    scored = run("score", bundle)
    assert verified.exit_code == 1
    assert f"files[1].path {path!r}" in verified.stdout
    assert scored.exit_code == 2
    assert scored.stderr.startswith(f"Error [bundle-altered]: bundle {bundle} was altered: manifest.json files[1].path")


def test_a_symlinked_sheet_is_refused(sheets: list[Path], tmp_path: Path) -> None:
    bundle = freeze(sheets, tmp_path / "audits")
    frozen = bundle / "sheets" / "alice.csv"
    frozen.unlink()
    frozen.symlink_to(sheets[0])  # the same bytes, but outside the bundle

    verified = run("verify", bundle)
    scored = run("score", bundle)

    assert verified.exit_code == 1
    assert "changed: sheets/alice.csv: passes through the symlink sheets/alice.csv" in verified.stdout
    assert scored.exit_code == 2
    assert "Error [bundle-unsafe-path]" in scored.stderr and "passes through the symlink" in scored.stderr


def test_a_symlinked_folder_is_refused(sheets: list[Path], tmp_path: Path) -> None:
    bundle = freeze(sheets, tmp_path / "audits")
    outside = Path(shutil.copytree(bundle / "sheets", tmp_path / "outside"))
    shutil.rmtree(bundle / "sheets")
    (bundle / "sheets").symlink_to(outside, target_is_directory=True)

    result = run("verify", bundle)

    assert result.exit_code == 1
    assert "changed: sheets/alice.csv: passes through the symlink sheets" in result.stdout
    assert "extra: sheets: not in the manifest" in result.stdout


def test_a_recoded_bundle_name_cannot_be_a_path(sheets: list[Path], tmp_path: Path) -> None:
    first = freeze(sheets, tmp_path / "audits")
    rewrite_manifest(first, lambda manifest: manifest.update(name="../../evil"))

    result = run("freeze", *sheets, "--rule", RULE, "--into", tmp_path / "other", "--recodes", first)

    assert result.exit_code == 2
    assert "Error [bundle-altered]" in result.stderr and "name '../../evil' is not a bundle name" in result.stderr
    assert not (tmp_path / "other").exists() or list_bundles(tmp_path / "other") == []


def test_two_sheets_with_one_file_name_are_refused(tmp_path: Path) -> None:
    paths = []
    for coder in ("alice", "bob"):
        (tmp_path / coder).mkdir()
        paths.append(tmp_path / coder / "sheet.csv")
        paths[-1].write_text(f"comment_id,code,coder\na,yes,{coder}\nb,no,{coder}\n", encoding="utf-8")

    result = run("freeze", *paths, "--rule", RULE, "--into", tmp_path / "audits")

    assert result.exit_code == 2
    assert result.stderr.startswith(
        f"Error [usage-sheet-name]: sheets {paths[0]} and {paths[1]} have the same file name"
    )


# --- re-coding and samples ----------------------------------------------------------------


def revised_rule(tmp_path: Path, rule_id: str = "explicit_current_failure") -> Path:
    text = RULE.read_text(encoding="utf-8").replace("version: 1", "version: 2", 1)
    text = text.replace("rule: explicit_current_failure", f"rule: {rule_id}", 1)
    path = tmp_path / "rules" / rule_id / "v2.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    return path


def recoded_sheets(tmp_path: Path) -> list[Path]:
    folder = tmp_path / "recoded"
    folder.mkdir()
    paths = []
    for name in ("alice.csv", "bob.csv"):
        paths.append(folder / name)
        paths[-1].write_text((EXAMPLES / name).read_text(encoding="utf-8").replace(",v1\n", ",v2\n"), encoding="utf-8")
    return paths


def test_a_recoded_sample_names_the_bundle_it_recodes(sheets: list[Path], tmp_path: Path) -> None:
    audits = tmp_path / "audits"
    first = freeze(sheets, audits)
    rule_v2 = revised_rule(tmp_path)

    result = run("freeze", *recoded_sheets(tmp_path), "--rule", rule_v2, "--into", audits, "--recodes", first)

    assert result.exit_code == 0, result.stderr
    second = printed_path(result.stdout)
    assert re.fullmatch(r"\d{8}T\d{6}Z_explicit_current_failure_v2", second.name)
    manifest = manifest_of(second)
    assert manifest["recodes"] == {
        "bundle": first.name,
        "ids_sha256": manifest_of(first)["units"]["ids_sha256"],
        "rule": {"id": "explicit_current_failure", "version": 1},
    }
    assert manifest["units"]["ids_sha256"] == manifest["recodes"]["ids_sha256"]
    assert list_bundles(audits) == sorted([first, second])
    assert run("verify", second).exit_code == 0


def test_recoding_an_audit_of_another_rule_is_refused(sheets: list[Path], tmp_path: Path) -> None:
    first = freeze(sheets, tmp_path / "audits")
    other_rule = revised_rule(tmp_path, "another_rule")

    result = run(
        "freeze", *recoded_sheets(tmp_path), "--rule", other_rule, "--into", tmp_path / "audits", "--recodes", first
    )

    assert result.exit_code == 2
    assert "Error [usage-recodes-rule]" in result.stderr and "not another_rule" in result.stderr


def hand_made_sample(tmp_path: Path, ids: list[str], name: str = "sample run") -> Path:
    """A folder in the shape `irr-audit sample` writes: sample.json, a ledger, a log, blank sheets."""
    folder = tmp_path / name
    (folder / "sheets").mkdir(parents=True, exist_ok=True)
    ledger = "".join(json.dumps({"comment_id": unit, "body": "…"}) + "\n" for unit in ids).encode()
    (folder / "ledger.jsonl").write_bytes(ledger)
    (folder / "missingness_log.csv").write_text(
        "sheet,coder,row,comment_id,raw_value,reason,detail\ndataset.json,,7,kq9,,deleted,status deleted\n",
        encoding="utf-8",
    )
    (folder / "sheets" / "alice.csv").write_text("comment_id,code\n", encoding="utf-8")
    record = {
        "rule": {"id": "explicit_current_failure", "version": 1, "digest": "sha256:" + sha256_of(RULE)},
        "ledger": {"file": "ledger.jsonl", "sha256": hashlib.sha256(ledger).hexdigest(), "sample_ids": ids},
    }
    (folder / "sample.json").write_text(json.dumps(record), encoding="utf-8")
    return folder


def test_freeze_keeps_the_sample_and_its_units(sheets: list[Path], tmp_path: Path) -> None:
    ids = [line.split(",")[0] for line in (EXAMPLES / "alice.csv").read_text().splitlines()[1:19]]
    sample = hand_made_sample(tmp_path, ids)

    bundle = freeze(sheets, tmp_path / "audits", "--sample", sample)

    manifest = manifest_of(bundle)
    assert manifest["sample"]["files"] == ["sample/ledger.jsonl", "sample/missingness_log.csv", "sample/sample.json"]
    assert manifest["sample"]["ids"] == {"count": 18, "ids_sha256": units_digest(ids)}
    assert not (bundle / "sample" / "sheets").exists()
    assert manifest["units"] == {
        "count": 18,
        "ids_sha256": units_digest(ids),
        "sketch": units_sketch(ids),
        "scored_sketch": units_sketch(scored_ids(sheets, tmp_path, "--sample", sample)),
    }
    assert (bundle / "sample" / "missingness_log.csv").read_bytes() == (sample / "missingness_log.csv").read_bytes()
    assert run("verify", bundle).exit_code == 0
    assert score_json(bundle)["units"]["total"] == 18

    writable(bundle / "sample" / "missingness_log.csv").write_text("edited\n", encoding="utf-8")
    result = run("verify", bundle)
    assert result.exit_code == 1 and "changed: sample/missingness_log.csv" in result.stdout


def test_freezing_a_join_restricted_to_a_sample_keeps_that_sample(sheets: list[Path], tmp_path: Path) -> None:
    ids = [line.split(",")[0] for line in (EXAMPLES / "alice.csv").read_text().splitlines()[1:19]]
    sample = hand_made_sample(tmp_path, ids)
    joined = tmp_path / "joined"
    assert run("join", *sheets, "--rule", RULE, "--out", joined, "--sample", sample, "--quiet").exit_code == 0

    bundle = freeze([joined], tmp_path / "audits")

    assert manifest_of(bundle)["sample"]["ids"]["count"] == 18
    assert score_json(bundle) == score_json(joined)
    assert run("verify", bundle).exit_code == 0


def test_freezing_a_join_with_another_sample_is_refused(sheets: list[Path], tmp_path: Path) -> None:
    """The sample folder drawn again, or another --sample, would re-join the sheets against other
    units: the bundle would score other units than the join did."""
    ids = [line.split(",")[0] for line in (EXAMPLES / "alice.csv").read_text().splitlines()[1:19]]
    sample = hand_made_sample(tmp_path, ids)
    joined = tmp_path / "joined"
    assert run("join", *sheets, "--rule", RULE, "--out", joined, "--sample", sample, "--quiet").exit_code == 0
    other = hand_made_sample(tmp_path, ids[:5], name="other sample")

    given = run("freeze", joined, "--sample", other, "--into", tmp_path / "audits")
    hand_made_sample(tmp_path, ids[3:9])  # drawn again into the join's own folder
    again = run("freeze", joined, "--into", tmp_path / "audits")

    for result in (given, again):
        assert result.exit_code == 2, result.output
        assert "Error [usage-sample-mismatch]" in result.stderr and "is not the sample the join" in result.stderr
        assert "sha256" in result.stderr
    assert list_bundles(tmp_path / "audits") == []


def test_a_sample_folder_needs_its_record(sheets: list[Path], tmp_path: Path) -> None:
    not_a_sample = tmp_path / "not a sample"
    not_a_sample.mkdir()

    result = run("freeze", *sheets, "--rule", RULE, "--into", tmp_path / "audits", "--sample", not_a_sample)

    assert result.exit_code == 2
    assert "has no sample.json" in result.stderr
    assert list_bundles(tmp_path / "audits") == []


# --- a freeze that stops halfway ---------------------------------------------------------


def failing_on_call(number: int, real: Callable[..., Any]) -> Callable[..., Any]:
    calls = {"n": 0}

    def write(*args: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == number:
            raise OSError(28, "No space left on device")
        return real(*args)

    return write


def test_a_failed_freeze_leaves_nothing(sheets: list[Path], tmp_path: Path, monkeypatch) -> None:
    audits = tmp_path / "audits"
    monkeypatch.setattr(runfolder, "_write_new_file", failing_on_call(2, runfolder._write_new_file))

    result = run("freeze", *sheets, "--rule", RULE, "--into", audits)

    assert result.exit_code == 2
    assert result.stderr.startswith(
        f"Error [output-unwritable]: cannot write a bundle into {audits}: No space left on device."
    )
    assert os.listdir(audits) == [freeze_module.FREEZE_LOCK]  # the lock's file, not a bundle


KILLED_FREEZE = """
import os, sys
from irr_audit.cli import app
from irr_audit.io import runfolder

real_write = runfolder._write_new_file

def write(path, data):
    if sys.argv[1] == "while-writing" and path.name == "bob.csv":
        os._exit(9)  # kill -9: no clean-up runs
    real_write(path, data)

def rename(source, target):
    os._exit(9)  # after the manifest is written, before the rename

runfolder._write_new_file = write
if sys.argv[1] == "before-rename":
    os.rename = rename
app(sys.argv[2:])
"""


def test_a_killed_freeze_leaves_no_bundle_that_looks_whole(sheets: list[Path], tmp_path: Path) -> None:
    """A kill gives no chance to clean up: the half-built folder stays, hidden and unfinished."""
    audits = tmp_path / "audits"
    for when in ("while-writing", "before-rename"):
        arguments = ["freeze", *map(str, sheets), "--rule", str(RULE), "--into", str(audits)]
        killed = subprocess.run([sys.executable, "-c", KILLED_FREEZE, when, *arguments], cwd=ROOT)
        assert killed.returncode == 9

    leftovers = sorted(path for path in audits.iterdir() if path.name != freeze_module.FREEZE_LOCK)
    assert len(leftovers) == 2 and all(path.name.startswith(".") and ".partial-" in path.name for path in leftovers)
    assert list_bundles(audits) == []
    for leftover in leftovers:
        result = run("verify", leftover)
        assert result.exit_code == 1
        assert f"\nunfinished: {leftover.name}: a freeze that did not finish" in result.stdout
    assert freeze(sheets, audits).parent == audits  # a new freeze is not confused by the leftovers


# --- adjudication ---------------------------------------------------------------------------


DISAGREEMENTS = [("kq3z1q7", "yes", "no"), ("kq40r2s", "no", "yes"), ("kq41s6t", "yes", "no")]


def decisions_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "decisions.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_adjudicate_lists_the_disagreements_to_decide(sheets: list[Path], tmp_path: Path) -> None:
    bundle = freeze(sheets, tmp_path / "audits")

    result = run("adjudicate", bundle)

    assert result.exit_code == 0
    # the sheets carry a body: the text follows, to read while deciding (no link without a sample's ledger)
    texts = {row["comment_id"]: row["body"] for row in csv.DictReader(sheets[0].open(encoding="utf-8"))}
    assert list(csv.reader(io.StringIO(result.stdout))) == [
        ["comment_id", "coder:alice", "coder:bob", "code", "note", "text", "link"]
    ] + [[unit, alice, bob, "", "", texts[unit], ""] for unit, alice, bob in DISAGREEMENTS]
    assert "3 disagreements, 0 decided" in result.stderr


def test_adjudication_is_kept_apart_from_the_independent_statistics(sheets: list[Path], tmp_path: Path) -> None:
    bundle = freeze(sheets, tmp_path / "audits")
    frozen = {path: path.read_bytes() for path in bundle.rglob("*") if path.is_file()}
    score_before = score_json(bundle)
    decisions = decisions_file(
        tmp_path, 'comment_id,code,note\nkq3z1q7,yes,"crash is current | per rule"\nkq40r2s,N,\nkq41s6t,,\n'
    )

    result = run("adjudicate", bundle, "--decisions", decisions, "--by", "alice and bob")

    assert result.exit_code == 0, result.stderr
    record_path = printed_path(result.stdout)
    assert record_path.parent == bundle / "adjudication"
    record = json.loads(record_path.read_text(encoding="utf-8"))
    assert record["by"] == "alice and bob" and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", record["created"])
    assert record["decisions"] == [
        {
            "comment_id": "kq3z1q7",
            "codes": {"alice": "yes", "bob": "no"},
            "final_code": "yes",
            "note": "crash is current | per rule",
        },
        {"comment_id": "kq40r2s", "codes": {"alice": "no", "bob": "yes"}, "final_code": "no", "note": ""},
    ]
    assert {path: path.read_bytes() for path in frozen} == frozen  # sheets, rule and manifest untouched
    assert score_json(bundle) == score_before

    verified = run("verify", bundle)
    assert verified.exit_code == 0 and "1 adjudication record checked" in verified.stdout

    document = json.loads(run("report", bundle, "--format", "json", "--quiet").stdout)
    assert document["metrics"] == score_before["metrics"]
    assert document["adjudication"]["decided"] == 2 and document["adjudication"]["undecided"] == ["kq41s6t"]
    assert document["adjudication"]["decisions"][0]["decided_by"] == "alice and bob"
    assert document["bundle"]["name"] == bundle.name

    markdown = run("report", bundle, "--format", "md", "--quiet").stdout
    independent = markdown.index("| Cohen's kappa | 0.7000")
    disagreements = markdown.index("## Disagreements for post-hoc review (3)")
    adjudicated = markdown.index("## Adjudicated labels (post-hoc consensus, not independent codes)")
    assert independent < disagreements < adjudicated
    assert "| kq3z1q7 | yes | no | yes | alice and bob |" in markdown
    assert "crash is current \\| per rule" in markdown
    assert "2 of 3 disagreements decided." in markdown and "Not yet decided: kq41s6t." in markdown

    text = run("report", bundle, "--format", "text", "--quiet").stdout
    assert text.index("Chance-corrected coefficients") < text.index(
        "Adjudicated labels (post-hoc consensus, not independent codes)"
    )
    assert "alice and bob" in text and "Not yet decided: kq41s6t." in text

    again = run("adjudicate", bundle, "--decisions", decisions, "--by", "carol")
    assert again.exit_code == 0 and "nothing new to record" in again.stderr
    assert len(list((bundle / "adjudication").iterdir())) == 1


def test_a_later_decision_supersedes_an_earlier_one(sheets: list[Path], tmp_path: Path) -> None:
    bundle = freeze(sheets, tmp_path / "audits")
    first = decisions_file(tmp_path, "comment_id,code\nkq41s6t,yes\n")
    assert run("adjudicate", bundle, "--decisions", first, "--by", "alice").exit_code == 0
    listed = run("adjudicate", bundle).stdout
    assert "kq41s6t,yes,no,yes," in listed
    changed = decisions_file(tmp_path, listed.replace("kq41s6t,yes,no,yes,", "kq41s6t,yes,no,no,on a second reading"))

    assert run("adjudicate", bundle, "--decisions", changed, "--by", "bob").exit_code == 0

    section = json.loads(run("report", bundle, "--format", "json", "--quiet").stdout)["adjudication"]
    assert [(item["final_code"], item["decided_by"]) for item in section["decisions"]] == [("no", "bob")]
    assert [record["by"] for record in section["records"]] == ["alice", "bob"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("comment_id,code\nkq3m1x0,yes\n", "row 2 names comment 'kq3m1x0', which is not a disagreement of this audit"),
        (
            "comment_id,code\nkq3z1q7,maybe\n",
            "row 2 has the final code 'maybe', which is not a code of explicit_current_failure v1 (yes, no)",
        ),
        ("comment_id,code\nkq3z1q7,unknown\n", "row 2 has the final code 'unknown'"),
        ("comment_id,code\nkq3z1q7,yes\nkq3z1q7,no\n", "row 3 decides 'kq3z1q7' again (first in row 2)"),
        ("id,final\nkq3z1q7,yes\n", 'has no column "comment_id" (columns found: id, final)'),
        ("comment_id,code,comment_id\nkq3z1q7,yes,kq41s6t\n", 'has the column "comment_id" twice (columns 1 and 3)'),
        (
            "comment_id,code,note\nkq3z1q7,yes,a,kq41s6t,no\n",
            "row 2 has 5 cells, more than the 3 columns of its header",
        ),
        ("comment_id;code;note\nkq3z1q7;yes;x\n", "seems to use ';' between its columns, not ','"),
    ],
    ids=[
        "agreed unit",
        "invalid code",
        "missing code",
        "twice",
        "no id column",
        "id column twice",
        "extra cells",
        "semicolons",
    ],
)
def test_bad_decisions_name_the_file_and_row(sheets: list[Path], tmp_path: Path, text: str, message: str) -> None:
    bundle = freeze(sheets, tmp_path / "audits")
    decisions = decisions_file(tmp_path, text)

    result = run("adjudicate", bundle, "--decisions", decisions, "--by", "alice")

    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error [adjudication-decisions]: decisions file {decisions} {message}")
    assert not (bundle / "adjudication").exists()


def test_empty_trailing_cells_are_no_data(sheets: list[Path], tmp_path: Path) -> None:
    bundle = freeze(sheets, tmp_path / "audits")
    decisions = decisions_file(tmp_path, "comment_id,code,note\nkq3z1q7,yes,a,,\n")
    assert run("adjudicate", bundle, "--decisions", decisions, "--by", "alice").exit_code == 0


@pytest.mark.parametrize("by", ["\u200b", "\u200b\u00ad ", "\ufeff\u2060"])
def test_adjudicate_refuses_a_name_without_a_visible_character(sheets: list[Path], tmp_path: Path, by: str) -> None:
    bundle = freeze(sheets, tmp_path / "audits")
    decisions = decisions_file(tmp_path, "comment_id,code\nkq3z1q7,yes\n")

    result = run("adjudicate", bundle, "--decisions", decisions, "--by", by)

    assert result.exit_code == 2
    assert result.stderr.startswith("Error [usage-adjudicate-by]: --by ") and "names no one" in result.stderr
    assert not (bundle / "adjudication").exists()


def test_adjudicate_needs_who_decided(sheets: list[Path], tmp_path: Path) -> None:
    bundle = freeze(sheets, tmp_path / "audits")

    result = run("adjudicate", bundle, "--decisions", decisions_file(tmp_path, "comment_id,code\nkq3z1q7,yes\n"))

    assert result.exit_code == 2
    assert result.stderr.startswith("Error [usage-adjudicate-by]: adjudicate --decisions needs --by: who decided.")


def test_verify_checks_adjudication_records(sheets: list[Path], tmp_path: Path) -> None:
    bundle = freeze(sheets, tmp_path / "audits")
    decisions = decisions_file(tmp_path, "comment_id,code\nkq3z1q7,yes\n")
    record = printed_path(run("adjudicate", bundle, "--decisions", decisions, "--by", "alice").stdout)
    writable(record).write_text(record.read_text(encoding="utf-8").replace('"yes"', '"no"'), encoding="utf-8")
    (bundle / "adjudication" / "notes.txt").write_text("scratch", encoding="utf-8")

    result = run("verify", bundle)
    report = run("report", bundle, "--format", "md")

    assert result.exit_code == 1
    assert "extra: adjudication/notes.txt: not an adjudication record" in result.stdout
    assert (
        f"adjudication: adjudication/{record.name}: was edited after it was recorded (its record_sha256 does not match)"
    ) in result.stdout
    assert report.exit_code == 2 and "Error [bundle-adjudication]" in report.stderr


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"codes": {"alice": "no", "bob": "no"}}, "quotes other independent codes for 'kq3z1q7' than the sheets hold"),
        ({"comment_id": "kq3m1x0"}, "names 'kq3m1x0', which is not a disagreement of this audit"),
    ],
    ids=["other codes", "not a disagreement"],
)
def test_a_record_re_hashed_after_an_edit_is_checked_against_the_disagreements(
    sheets: list[Path], tmp_path: Path, change: dict[str, Any], problem: str
) -> None:
    """The record's own digest made again (as whoever edits it would): its decisions are still
    held to the frozen audit's disagreements and their independent codes."""
    bundle = freeze(sheets, tmp_path / "audits")
    decisions = decisions_file(tmp_path, "comment_id,code\nkq3z1q7,yes\n")
    record = printed_path(run("adjudicate", bundle, "--decisions", decisions, "--by", "alice").stdout)
    document = json.loads(record.read_text(encoding="utf-8"))
    document["decisions"][0].update(change)
    document["record_sha256"] = canonical_sha256(document, "record_sha256")
    writable(record).write_text(json.dumps(document), encoding="utf-8")

    result = run("verify", bundle)

    assert result.exit_code == 1
    assert f"adjudication: adjudication/{record.name}: decisions[0] {problem}" in result.stdout
    assert run("report", bundle, "--format", "md").exit_code == 2


@pytest.mark.parametrize("failure", [OSError(errno.ENOSPC, "No space left on device"), KeyboardInterrupt()])
def test_a_record_that_cannot_be_written_leaves_no_file(
    sheets: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: BaseException
) -> None:
    """A full disk (or a stopped run) while the record is written: no temporary file is left in
    the bundle to make verify fail and labels refuse it."""
    bundle = freeze(sheets, tmp_path / "audits")

    def fail(descriptor: int) -> None:
        raise failure

    monkeypatch.setattr(adjudication.os, "fsync", fail)
    with pytest.raises(OutputError if isinstance(failure, OSError) else KeyboardInterrupt):
        adjudication.write_record(bundle, b"{}", datetime.now(timezone.utc))
    monkeypatch.undo()
    assert list((bundle / "adjudication").iterdir()) == []
    assert run("verify", bundle).exit_code == 0


def test_a_record_whose_signature_cannot_be_written_is_not_added(
    sheets: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = freeze(sheets, tmp_path / "audits")
    calls = []

    def fail_second(descriptor: int) -> None:  # the record's fsync passes, the signature's fails
        calls.append(descriptor)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(adjudication.os, "fsync", fail_second)
    with pytest.raises(OutputError) as raised:
        adjudication.write_record(bundle, b"{}", datetime.now(timezone.utc), signature=b"signature")
    monkeypatch.undo()
    assert "no record was added" in (raised.value.hint or "")
    assert list((bundle / "adjudication").iterdir()) == []


def test_a_leftover_temporary_file_is_reported_by_verify_and_ignored_by_labels_and_report(
    sheets: list[Path], tmp_path: Path
) -> None:
    """A killed adjudicate can still leave adjudication/.record.<random>.tmp. It is never read as a
    record: verify names it and the command that removes it; labels, report and adjudicate go on."""
    bundle = freeze(sheets, tmp_path / "audits")
    decisions = decisions_file(tmp_path, "comment_id,code\nkq3z1q7,yes\n")
    assert run("adjudicate", bundle, "--decisions", decisions, "--by", "alice").exit_code == 0
    leftover = bundle / "adjudication" / ".record.k2x_9abc.tmp"
    leftover.write_text('{"decisions": "half a reco', encoding="utf-8")

    verified = run("verify", bundle)
    assert verified.exit_code == 1
    assert (
        "extra: adjudication/.record.k2x_9abc.tmp: the temporary file of an adjudicate that was stopped before it "
        f"finished: it holds no record; remove it: rm {leftover}"
    ) in verified.stdout
    labels = run("labels", bundle)
    assert labels.exit_code == 0, labels.stderr
    assert "kq3z1q7" in labels.stdout and "alice" in labels.stdout
    document = json.loads(run("report", bundle, "--format", "json", "--quiet").stdout)
    assert document["adjudication"]["decided"] == 1
    more = decisions_file(tmp_path, "comment_id,code\nkq40r2s,no\n")
    assert run("adjudicate", bundle, "--decisions", more, "--by", "bob").exit_code == 0
    leftover.unlink()
    assert run("verify", bundle).exit_code == 0
    # anything else in the folder still stops them: only adjudicate's own temporary name is passed over
    (bundle / "adjudication" / ".record.tmp").write_text("x", encoding="utf-8")
    assert run("labels", bundle).exit_code == 2


def test_a_report_of_sheets_has_no_adjudication_section(sheets: list[Path]) -> None:
    document = json.loads(run("report", *sheets, "--rule", RULE, "--format", "json", "--quiet").stdout)

    assert "adjudication" not in document and "bundle" not in document


def test_the_text_report_of_a_bundle_names_it_as_a_codebook_bundles_does(sheets: list[Path], tmp_path: Path) -> None:
    frozen = run("freeze", *sheets, "--rule", RULE, "--into", tmp_path / "audits")
    digest, bundle = frozen.stdout.split()[0], printed_path(frozen.stdout)
    manifest = manifest_of(bundle)
    named = [
        f"Audit bundle: {bundle.name}, frozen {manifest['created']} with irr-audit {manifest['tool_version']}",
        f"Bundle digest: {digest} (the sha256 of its manifest.json)",
    ]

    text = run("report", bundle, "--format", "text", "--quiet").stdout.splitlines()

    assert text[0].startswith("explicit_current_failure v1 ") and text[1:3] == named  # under the heading
    document = json.loads(run("report", bundle, "--format", "json", "--quiet").stdout)
    assert bundle_lines(document) == named  # the one wording of a codebook bundle's reports
    on_terminal = irr_audit.audit(bundle).to_text(width=200).splitlines()  # rich's console, as on a terminal
    assert [line.rstrip() for line in on_terminal[1:3]] == named
    of_sheets = run("report", *sheets, "--rule", RULE, "--format", "text", "--quiet").stdout
    assert "Audit bundle:" not in of_sheets and "Bundle digest:" not in of_sheets


# --- usage ------------------------------------------------------------------------------------


def test_verify_of_a_folder_that_is_not_a_bundle(tmp_path: Path) -> None:
    result = run("verify", tmp_path)

    assert result.exit_code == 2
    assert result.stderr.startswith(
        f"Error [bundle-not-found]: {tmp_path} is not an audit bundle (it has no manifest.json)."
    )


def test_verify_json(sheets: list[Path], tmp_path: Path) -> None:
    bundle = freeze(sheets, tmp_path / "audits")
    delete_bob(bundle)

    result = run("verify", bundle, "--format", "json")

    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert document["ok"] is False and document["name"] == bundle.name
    assert {"kind": "missing", "path": "sheets/bob.csv", "detail": ""} in document["problems"]


def test_freezing_a_bundle_is_refused(sheets: list[Path], tmp_path: Path) -> None:
    bundle = freeze(sheets, tmp_path / "audits")

    result = run("freeze", bundle, "--into", tmp_path / "audits")

    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error [usage-freeze-bundle]: {bundle} is already an audit bundle.")


def test_the_worksheet_chosen_is_kept_by_join_folders_and_bundles(tmp_path: Path) -> None:
    from openpyxl import Workbook

    rule = Path(__file__).resolve().parents[1] / "rules" / "explicit_current_failure" / "v1.yaml"
    paths = []
    for coder, codes in (("ann", ("yes", "no", "no")), ("ben", ("yes", "no", "yes"))):
        book = Workbook()
        book.active.title = "Read me"
        book.active.append(["coding instructions"])
        sheet = book.create_sheet("Codes")
        sheet.append(["comment_id", "code"])
        for number, code in enumerate(codes):
            sheet.append([f"c{number}", code])
        book.save(tmp_path / f"{coder}.xlsx")
        paths.append(tmp_path / f"{coder}.xlsx")
    joined = tmp_path / "joined"
    assert run("join", *paths, "--rule", rule, "--out", joined, "--worksheet", "Codes").exit_code == 0
    from_folder = json.loads(run("score", joined, "--format", "json").stdout)
    assert from_folder["units"]["fully_coded"] == 3 and from_folder["table"] == [[1, 0], [1, 1]]
    frozen = run("freeze", *paths, "--rule", rule, "--into", tmp_path / "audits", "--worksheet", "Codes")
    assert frozen.exit_code == 0, frozen.output
    bundle = printed_path(frozen.stdout)
    assert run("verify", bundle).exit_code == 0
    assert json.loads(run("score", bundle, "--format", "json").stdout)["table"] == [[1, 0], [1, 1]]
