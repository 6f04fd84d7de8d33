"""`verify` prints a short verdict first (the files changed, missing and extra, the headline
coefficient frozen -> now); the full list with --verbose or in JSON. The headline is chosen
by one library function."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from irr_audit.bundle.verify import PROBLEMS_SHOWN, verify_bundle
from irr_audit.report.headline import headline_metric
from tests.conftest import run

ROOT = Path(__file__).resolve().parents[1]
RULE = ROOT / "rules" / "explicit_current_failure" / "v1.yaml"
OLD_KEYS = {
    "bundle",
    "name",
    "ok",
    "digest",
    "anchored",
    "anchors",
    "problems",
    "notes",
    "files_checked",
    "adjudication_records",
}


@pytest.mark.parametrize(
    ("coders", "scale", "name", "label"),
    [
        (["a", "b"], "nominal", "cohen_kappa", "Cohen's kappa"),
        (["a", "b", "c"], "nominal", "krippendorff_alpha", "Krippendorff's alpha (nominal)"),
        (["a", "b"], "ordinal", "krippendorff_alpha", "Krippendorff's alpha (ordinal)"),
        (["a", "b"], "interval", "krippendorff_alpha", "Krippendorff's alpha (interval)"),
        (None, None, "krippendorff_alpha", "Krippendorff's alpha (nominal)"),
    ],
)
def test_the_headline_follows_the_design(coders, scale, name, label):
    metric = {"value": 0.5, "defined": True}
    report = {"coders": coders, "rule": {"scale": scale}, "metrics": {name: metric}}
    headline = headline_metric(report)
    assert (headline.name, headline.label, headline.metric) == (name, label, metric)
    assert headline.shown == "0.5000"


def test_an_undefined_or_absent_headline_says_so():
    report = {"coders": ["a", "b"], "rule": {"scale": "nominal"}, "metrics": {}}
    assert headline_metric(report).shown == "not in the score"
    report["metrics"] = {"cohen_kappa": {"value": None, "defined": False, "reason": "no unit"}}
    assert headline_metric(report).shown == "undefined: no unit"
    assert headline_metric(report).to_dict()["reason"] == "no unit"


@pytest.fixture
def bundle(sheets: list[Path], tmp_path: Path) -> Path:
    result = run("freeze", *sheets, "--rule", RULE, "--into", tmp_path / "audits")
    assert result.exit_code == 0, result.stderr
    return Path(result.stdout.rstrip("\n").split("  ", 1)[1])


def writable(path: Path) -> Path:
    os.chmod(path, stat.S_IRUSR | stat.S_IWUSR | (stat.S_IXUSR if path.is_dir() else 0))
    return path


def change_one_cell(bundle: Path) -> None:
    path = writable(bundle / "sheets" / "bob.csv")
    path.write_text(path.read_text(encoding="utf-8").replace(",yes,,v1", ",no,,v1", 1), encoding="utf-8")


def test_one_changed_cell_gives_a_short_verdict_first(bundle: Path):
    change_one_cell(bundle)
    result = run("verify", bundle)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0] == f"FAILED: bundle {bundle.name}: files 1 changed (sheets/bob.csv), 0 missing, 0 extra."
    assert lines[1].startswith("headline: Cohen's kappa (two coders, a nominal rule): frozen 0.7000 -> now ")
    assert lines[1] != "headline: Cohen's kappa (two coders, a nominal rule): frozen 0.7000 -> now 0.7000"
    assert lines[2].startswith("other problems, by kind: ") and " score." in lines[2]
    assert len(lines) <= 4 + PROBLEMS_SHOWN + 3
    assert any(line.startswith("... ") and "--verbose lists every one" in line for line in lines)
    assert lines[-1].startswith(f"FAILED: bundle {bundle.name} does not verify")  # still last, for tail -n 1

    verbose = run("verify", bundle, "--verbose")
    assert verbose.stdout.splitlines()[:2] == lines[:2]
    count = len(verify_bundle(bundle).problems)
    assert count > PROBLEMS_SHOWN
    assert sum(line.startswith(("changed: ", "score: ")) for line in verbose.stdout.splitlines()) == count


def test_the_json_keeps_its_keys_and_adds_the_verdict(bundle: Path):
    change_one_cell(bundle)
    document = json.loads(run("verify", bundle, "--format", "json").stdout)
    assert OLD_KEYS <= set(document)
    assert len(document["problems"]) == len(verify_bundle(bundle).problems)  # every problem, always
    assert document["files"] == {"changed": ["sheets/bob.csv"], "missing": [], "extra": []}
    headline = document["headline"]
    assert (headline["metric"], headline["label"]) == ("cohen_kappa", "Cohen's kappa")
    assert headline["frozen"] == {"value": 0.7, "defined": True}
    assert headline["now"]["defined"] is True and headline["now"]["value"] != 0.7


def test_an_intact_bundle_says_ok_first_and_the_headline_unchanged(bundle: Path):
    lines = run("verify", bundle).stdout.splitlines()
    assert lines[0] == f"OK: bundle {bundle.name}: files 3 unchanged, 0 missing, 0 extra."
    assert lines[1] == "headline: Cohen's kappa (two coders, a nominal rule): 0.7000, frozen and now"
    document = json.loads(run("verify", bundle, "--format", "json").stdout)
    assert document["headline"]["frozen"] == document["headline"]["now"]


def test_missing_and_extra_files_are_counted_and_a_few_named(bundle: Path):
    writable(bundle / "sheets")
    writable(bundle / "sheets" / "alice.csv").unlink()
    for number in range(5):
        (bundle / "sheets" / f"extra{number}.csv").write_text("x\n", encoding="utf-8")
    result = run("verify", bundle)
    first = result.stdout.splitlines()[0]
    assert "1 missing (sheets/alice.csv)" in first
    assert "5 extra (sheets/extra0.csv, sheets/extra1.csv, sheets/extra2.csv and 2 more)" in first
    assert "now cannot be recomputed" in result.stdout.splitlines()[1]
