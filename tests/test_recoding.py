"""Re-coding a sample under a revised rule (docs/procedure.md, step 8): joined with --sample,
recorded in summary.json, every report and the bundle; rules check --audits refuses a
revision validated on the same (or largely the same) units unless it is marked as a re-coding."""

from __future__ import annotations

import csv
import json
import os
import random
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

import irr_audit
from irr_audit.bundle.manifest import canonical_sha256
from irr_audit.io.fingerprints import units_sketch
from irr_audit.io.outputs import render_json
from irr_audit.io.unitsketch import SKETCH_SIZE, sketch_jaccard
from tests.conftest import run

ROOT = Path(__file__).resolve().parents[1]
COLLECTOR = ROOT / "tests" / "fixtures" / "collector"
RULE_ID = "explicit_current_failure"
CODES = {"alice": "yes no yes no yes no", "bob": "yes no no no yes no"}
RECODING = "Re-coding: the units of the sample drawn under explicit_current_failure v1, coded again under v2."


@pytest.fixture
def study(tmp_path: Path) -> Path:
    """A sample drawn under v1, its sheets coded under v1 and again under v2, and the rules."""
    rules = tmp_path / "rules" / RULE_ID
    rules.mkdir(parents=True)
    v1 = (COLLECTOR / "rule_v1.yaml").read_text(encoding="utf-8")
    (rules / "v1.yaml").write_text(v1, encoding="utf-8")
    revised = yaml.safe_load(v1)
    revised.update(version=2, changelog={"summary": "Fixed crashes are no.", "why": "Coders split on them."})
    (rules / "v2.yaml").write_text(yaml.safe_dump(revised, sort_keys=False), encoding="utf-8")
    assert run(
        "sample", COLLECTOR / "thread.jsonl", "--rule", rules / "v1.yaml", "--coders", "alice,bob",
        "--out", tmp_path / "sample", "-q",
    ).exit_code == 0  # fmt: skip
    for version in (1, 2):
        folder = tmp_path / f"coded_v{version}"
        folder.mkdir()
        for coder, codes in CODES.items():
            with open(tmp_path / "sample" / "sheets" / f"{coder}.csv", encoding="utf-8-sig", newline="") as stream:
                rows = list(csv.DictReader(stream))
            for row, code in zip(rows, codes.split()):
                row["code"] = "no" if (version == 2 and row["comment_id"] == "t01") else code
                row["rule_version"] = f"v{version}"
            with open(folder / f"{coder}.csv", "w", encoding="utf-8", newline="") as stream:
                writer = csv.DictWriter(stream, fieldnames=list(rows[0]))
                writer.writeheader()
                writer.writerows(rows)
    return tmp_path


def sheets(study: Path, version: int) -> list[Path]:
    return [study / f"coded_v{version}" / f"{coder}.csv" for coder in CODES]


def rule(study: Path, version: int) -> Path:
    return study / "rules" / RULE_ID / f"v{version}.yaml"


def join(study: Path, version: int, out: str) -> Path:
    result = run("join", *sheets(study, version), "--rule", rule(study, version), "--sample", study / "sample",
                 "--out", study / out)  # fmt: skip
    assert result.exit_code == 0, result.stderr
    return study / out


def freeze(*args: object) -> Path:
    result = run("freeze", *args, "-q")
    assert result.exit_code == 0, result.stderr
    return Path(result.stdout.rstrip("\n").split("  ", 1)[1])


def manifest(bundle: Path) -> dict:
    return json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))


def edited_sheets(study: Path, folder: Path, edit: Callable[[Path, str], str]) -> list[Path]:
    """The v2 sheets written to ``folder``, each one's text as ``edit(path, text)`` makes it."""
    folder.mkdir()
    for path in sheets(study, 2):
        (folder / path.name).write_text(edit(path, path.read_text(encoding="utf-8")), encoding="utf-8")
    return sorted(folder.iterdir())


def test_join_sample_under_a_revised_rule_is_recorded_as_a_re_coding(study: Path):
    result = run("join", *sheets(study, 2), "--rule", rule(study, 2), "--sample", study / "sample",
                 "--out", study / "j2")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert RECODING in result.stderr
    recoding = json.loads((study / "j2" / "summary.json").read_text())["sample"]["report"]["recoding"]
    assert recoding["drawn_under"]["version"] == 1 and recoding["coded_under"]["version"] == 2
    assert recoding["drawn_under"]["id"] == recoding["coded_under"]["id"] == RULE_ID
    for form in ("md", "text", "html"):
        shown = run("report", study / "j2", "--format", form).stdout
        assert "Re-coding: the units of the sample drawn under" in shown.replace("\\_", "_"), form
    assert json.loads(run("report", study / "j2", "--format", "json").stdout)["sample"]["recoding"] == recoding


def test_the_library_records_the_same(study: Path):
    folder = irr_audit.join_folder(sheets(study, 2), rule(study, 2), study / "lib", sample=study / "sample")
    assert RECODING in folder.notes
    audited = irr_audit.audit(sheets(study, 2), rule(study, 2), sample=study / "sample")
    assert audited.to_dict()["sample"]["recoding"]["coded_under"]["version"] == 2
    assert irr_audit.audit(study / "lib").to_dict()["sample"] == audited.to_dict()["sample"]


def test_a_join_under_the_sample_s_own_rule_is_no_re_coding(study: Path):
    folder = join(study, 1, "j1")
    assert "recoding" not in json.loads((folder / "summary.json").read_text())["sample"]["report"]
    assert "Re-coding" not in run("report", folder, "--format", "md").stdout


def test_another_rule_and_an_earlier_version_are_refused(study: Path, tmp_path: Path):
    other = yaml.safe_load(rule(study, 2).read_text())
    other["rule"] = "another_rule"
    (tmp_path / "other.yaml").write_text(yaml.safe_dump(other), encoding="utf-8")
    refused = run("join", *sheets(study, 2), "--rule", tmp_path / "other.yaml", "--sample", study / "sample",
                  "--out", study / "x")  # fmt: skip
    assert refused.exit_code == 2 and refused.stderr.startswith("Error [usage-sample-rule]: the sample in ")
    assert "another_rule" in refused.stderr
    # a sample drawn under v2, joined under v1
    assert run("sample", COLLECTOR / "thread.jsonl", "--rule", rule(study, 2), "--coders", "alice,bob",
               "--out", study / "sample_v2", "-q").exit_code == 0  # fmt: skip
    earlier = run("join", *sheets(study, 1), "--rule", rule(study, 1), "--sample", study / "sample_v2",
                  "--out", study / "y")  # fmt: skip
    assert earlier.exit_code == 2 and "Error [usage-sample-rule]" in earlier.stderr
    assert "never an earlier one" in earlier.stderr


def test_a_frozen_re_coding_keeps_the_mark_and_passes_rules_check(study: Path):
    first = freeze(join(study, 1, "j1"), "--into", study / "audits")
    second = freeze(join(study, 2, "j2"), "--into", study / "audits")
    recoding = manifest(second)["sample"]["recoding"]
    assert (recoding["drawn_under"]["version"], recoding["coded_under"]["version"]) == (1, 2)
    assert "recoding" not in manifest(first)["sample"]
    assert manifest(second)["units"]["ids_sha256"] == manifest(first)["units"]["ids_sha256"]
    assert run("verify", second).exit_code == 0
    assert RECODING in run("report", second, "--format", "md").stdout.replace("\\_", "_")
    checked = run("rules", "check", study / "rules", "--audits", study / "audits")
    assert checked.exit_code == 0, checked.stdout


def test_freeze_recodes_and_the_sample_must_agree(study: Path):
    first = freeze(join(study, 1, "j1"), "--into", study / "audits")
    both = freeze(join(study, 2, "j2"), "--into", study / "audits", "--recodes", first)
    assert manifest(both)["recodes"]["bundle"] == first.name
    assert (
        manifest(both)["sample"]["recoding"]["drawn_under"]["version"] == manifest(both)["recodes"]["rule"]["version"]
    )
    # a v2 audit passed as the bundle a v1 sample's re-coding re-codes
    other = run("freeze", join(study, 2, "j2b"), "--into", study / "audits3", "--recodes", both)
    assert other.exit_code == 2 and "Error [usage-recodes-rule]" in other.stderr
    assert "the sample was drawn under v1" in other.stderr


def test_the_bypass_a_v2_bundle_on_the_same_units_without_the_mark_fails(study: Path, tmp_path: Path):
    """The issue's case: v1 frozen from the sample; v2 frozen from the sheets alone, without
    --recodes, with one id mistyped (a new unit), so its units differ from v1's by one."""
    audits = study / "audits"
    freeze(join(study, 1, "j1"), "--into", audits)
    typo = edited_sheets(
        study, tmp_path / "typo", lambda path, text: text.replace("\nt02,", "\nt2,") if path.stem == "alice" else text
    )
    freeze(*typo, "--rule", rule(study, 2), "--into", audits)
    checked = run("rules", "check", study / "rules", "--audits", audits)
    assert checked.exit_code == 1
    assert "[same-units-not-recoded]" in checked.stdout
    # t02 and t2 are each in one sheet only, so neither is scored: v2 scores 5 of v1's 6 units
    assert "on largely the same fully coded units (Jaccard index 0.83)" in checked.stdout
    # the identical units, frozen without the sample and without --recodes, fail too
    again = study / "audits_again"
    freeze(join(study, 1, "j1"), "--into", again)
    freeze(*sheets(study, 2), "--rule", rule(study, 2), "--into", again)
    checked = run("rules", "check", study / "rules", "--audits", again)
    assert checked.exit_code == 1 and "on the same units as" in checked.stdout


def test_a_new_sample_passes(study: Path, tmp_path: Path):
    audits = study / "audits"
    freeze(join(study, 1, "j1"), "--into", audits)
    fresh = edited_sheets(study, tmp_path / "fresh", lambda path, text: text.replace("\nt0", "\nn0"))
    freeze(*fresh, "--rule", rule(study, 2), "--into", audits)
    assert run("rules", "check", study / "rules", "--audits", audits).exit_code == 0


def test_padding_one_sheet_with_made_up_ids_does_not_make_a_new_sample(study: Path, tmp_path: Path):
    """v2 on v1's units, one sheet padded with more ids than there are units: every id of the
    sheets is largely new, but the units scored (the fully coded ones) are exactly v1's."""
    audits = study / "audits"
    freeze(join(study, 1, "j1"), "--into", audits)
    padding = "".join(f"pad{n},,,,,,,yes,,v2\n" for n in range(20))
    padded = edited_sheets(
        study, tmp_path / "padded", lambda path, text: text + padding if path.stem == "alice" else text
    )
    bundle = freeze(*padded, "--rule", rule(study, 2), "--into", audits)
    assert manifest(bundle)["units"]["count"] == 26
    checked = run("rules", "check", study / "rules", "--audits", audits)
    assert checked.exit_code == 1, checked.stdout
    assert "[same-units-not-recoded]" in checked.stdout
    assert "on largely the same fully coded units (Jaccard index 1.00)" in checked.stdout


def test_a_new_sample_passes_though_a_sheet_still_lists_the_old_units(study: Path, tmp_path: Path):
    """The other side: a new sample whose one sheet also lists v1's units, uncoded by the other
    coder. The sheets' ids are half old, but no old unit is scored: a new sample."""
    audits = study / "audits"
    freeze(join(study, 1, "j1"), "--into", audits)

    def new_units(path: Path, text: str) -> str:
        renamed = text.replace("\nt0", "\nn0")
        return text + renamed.split("\n", 1)[1] if path.stem == "alice" else renamed

    fresh = edited_sheets(study, tmp_path / "fresh", new_units)
    bundle = freeze(*fresh, "--rule", rule(study, 2), "--into", audits)
    assert manifest(bundle)["units"]["count"] == 12 and manifest(bundle)["score"]["units"]["fully_coded"] == 6
    checked = run("rules", "check", study / "rules", "--audits", audits)
    assert checked.exit_code == 0, checked.stdout


def test_the_sketch_is_exact_for_small_audits_and_close_for_large_ones():
    a = [f"c{n}" for n in range(100)]
    b = [f"c{n}" for n in range(10, 110)]
    assert sketch_jaccard(units_sketch(a), units_sketch(b)) == pytest.approx(90 / 110)
    assert len(units_sketch(range_ids(5000))) == SKETCH_SIZE
    generator = random.Random(1)
    big = range_ids(20000)
    kept = [unit for unit in big if generator.random() < 0.8]
    estimate = sketch_jaccard(units_sketch(big), units_sketch(kept))
    assert estimate == pytest.approx(len(kept) / len(big), abs=0.15)
    assert sketch_jaccard(units_sketch(big), units_sketch(range_ids(20000, "other"))) < 0.1


def range_ids(count: int, prefix: str = "id") -> list[str]:
    return [f"{prefix}{n}" for n in range(count)]


def test_verify_refuses_a_forged_re_coding_mark(study: Path):
    bundle = freeze(join(study, 1, "j1"), "--into", study / "audits")
    document = manifest(bundle)
    document["sample"]["recoding"] = {"drawn_under": {"id": RULE_ID, "version": 0}, "coded_under": {"version": 1}}
    document["integrity"]["sha256"] = canonical_sha256(document, "integrity")
    os.chmod(bundle / "manifest.json", stat.S_IRUSR | stat.S_IWUSR)
    (bundle / "manifest.json").write_text(render_json(document), encoding="utf-8")
    result = run("verify", bundle)
    assert result.exit_code == 1
    assert "manifest: manifest.json: sample.recoding does not match" in result.stdout
