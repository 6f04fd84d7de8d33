"""A codebook bundle's manifest keeps its units' sketches (every unit's, and each variable's fully
coded units'), as a rule's bundle keeps its own: rules check --audits finds a codebook bundle on
largely the same units as another audit, and verify checks the sketches against the frozen sheets.
A codebook bundle frozen before the sketches still verifies and reports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from irr_audit.bundle.codebook import read_codebook_bundle
from irr_audit.cli import app
from irr_audit.io.fingerprints import units_sketch
from irr_audit.rules.revisions import check_rules
from tests.test_codebook_rules_check import codebook_manifest
from tests.test_manifest_values import manifest_of, rewrite_manifest
from tests.test_revisions import SECOND, key, manifest, rule_text

ROOT = Path(__file__).resolve().parents[1]
CODEBOOK = ROOT / "codebooks" / "comment_study" / "v1.yaml"
SHEETS = sorted((ROOT / "examples" / "codebook" / "sheets").glob("*.csv"))
VARIABLES = ("explicit_current_failure", "product_area", "severity", "sarcasm")


def run(*args: object):
    return CliRunner().invoke(app, [str(arg) for arg in args], catch_exceptions=False)


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    frozen = run("freeze", *SHEETS, "--codebook", CODEBOOK, "--into", tmp_path / "audits")
    assert frozen.exit_code == 0, frozen.output
    return Path(frozen.stdout.strip().split("  ", 1)[1])


def fully_coded_ids(bundle: Path, variable: str) -> list[str]:
    """A variable's fully coded units, from the bundle read back as score and report read it."""
    _, _, variables = read_codebook_bundle(bundle)
    joined = variables[variable].join
    return [str(unit) for unit in joined.unit_ids[joined.fully_coded]]


def test_the_manifest_sketches_every_unit_and_each_variables_fully_coded_units(bundle: Path) -> None:
    units = manifest_of(bundle)["units"]
    scores = manifest_of(bundle)["score"]["variables"]

    assert units["count"] == 26 and len(units["sketch"]) == 26  # up to 127 units the sketch is every unit's hash
    assert sorted(units["scored_sketches"]) == sorted(VARIABLES)
    for variable in VARIABLES:
        assert len(units["scored_sketches"][variable]) == scores[variable]["score"]["units"]["fully_coded"]
    # severity is asked only where a failure is stated: its fully coded units are its own
    assert units["scored_sketches"]["severity"] != units["scored_sketches"]["product_area"]


def test_the_scored_sketch_is_of_the_units_the_variable_is_scored_on(bundle: Path) -> None:
    scored = manifest_of(bundle)["units"]["scored_sketches"]
    for variable in VARIABLES:
        assert scored[variable] == units_sketch(fully_coded_ids(bundle, variable))


# --- rules check --audits reads the sketches ---------------------------------------------------------------


def sketches(**by_variable: list[str]) -> dict[str, Any]:
    every = sorted({unit for ids in by_variable.values() for unit in ids})
    return {
        "sketch": units_sketch(every),
        "scored_sketches": {name: units_sketch(ids) for name, ids in by_variable.items()},
    }


def with_units(data: bytes, units: dict[str, Any]) -> bytes:
    document = json.loads(data)
    document["units"].update(units)
    return json.dumps(document).encode("utf-8")


OLD_UNITS = [f"u{n}" for n in range(20)]


@pytest.mark.parametrize(
    ("scored", "same"),
    [
        (OLD_UNITS[:18] + ["new1"], True),  # largely the same units, a unit more or less: a re-coding
        ([f"new{n}" for n in range(20)], False),  # a new sample
    ],
)
def test_a_codebook_variable_on_largely_a_rules_audits_units_is_found(scored: list[str], same: bool) -> None:
    v1, v2 = rule_text(), rule_text(2, changelog=SECOND, definition="Now.")
    metrics = {"cohen_kappa": {"value": 0.9, "defined": True}}
    rule_bundle = manifest("a", v1, 1, units="units-a", sketches={"sketch": units_sketch(OLD_UNITS)})
    book = codebook_manifest("explicit_current_failure", 2, v2, "units-b", metrics)
    manifests = {
        "audits/a/manifest.json": rule_bundle,
        "audits/c/manifest.json": with_units(book, sketches(explicit_current_failure=scored)),
    }

    result = check_rules({key(1): v1, key(2): v2}, manifests=manifests)

    assert [problem.code for problem in result.problems] == (["same-units-not-recoded"] if same else [])
    if same:
        assert "largely the same units (Jaccard index" in result.problems[0].what


def test_each_variable_is_compared_by_its_own_fully_coded_units() -> None:
    """Two codebook bundles whose units are alike, but whose variable was scored on other units."""
    v1, v2 = rule_text(), rule_text(2, changelog=SECOND, definition="Now.")
    metrics = {"cohen_kappa": {"value": 0.9, "defined": True}}
    first = with_units(
        codebook_manifest("explicit_current_failure", 1, v1, "units-a", metrics),
        sketches(explicit_current_failure=OLD_UNITS[:10], other=OLD_UNITS),
    )
    second = with_units(
        codebook_manifest("explicit_current_failure", 2, v2, "units-b", metrics),
        sketches(explicit_current_failure=OLD_UNITS[10:], other=OLD_UNITS),
    )
    manifests = {"audits/c1/manifest.json": first, "audits/c2/manifest.json": second}

    assert check_rules({key(1): v1, key(2): v2}, manifests=manifests).clean


def test_a_codebook_manifest_without_sketches_is_found_on_the_very_same_units_only() -> None:
    v1, v2 = rule_text(), rule_text(2, changelog=SECOND, definition="Now.")
    metrics = {"cohen_kappa": {"value": 0.9, "defined": True}}
    rule_bundle = manifest("a", v1, 1, units="units-a", sketches={"sketch": units_sketch(OLD_UNITS)})
    older = codebook_manifest("explicit_current_failure", 2, v2, "units-b", metrics)  # frozen before the sketches
    manifests = {"audits/a/manifest.json": rule_bundle, "audits/c/manifest.json": older}
    assert check_rules({key(1): v1, key(2): v2}, manifests=manifests).clean
    manifests["audits/c/manifest.json"] = codebook_manifest("explicit_current_failure", 2, v2, "units-a", metrics)
    assert [p.code for p in check_rules({key(1): v1, key(2): v2}, manifests=manifests).problems] == [
        "same-units-not-recoded"
    ]


# --- verify checks them; a bundle without them still verifies ----------------------------------------------


@pytest.mark.parametrize(
    ("key", "value", "problem"),
    [
        ("sketch", ["zz"], "manifest: manifest.json: units.sketch must be a list of the ids' smallest hashes"),
        ("scored_sketches", {"severity": []}, "units.scored_sketches must hold one sketch per variable of rules"),
        ("scored_sketches.severity", "x", "units.scored_sketches.severity must be a list of the ids' smallest"),
    ],
)
def test_a_sketch_of_the_wrong_form_is_a_manifest_problem(bundle: Path, key: str, value: object, problem: str) -> None:
    document = manifest_of(bundle)
    units = document["units"]
    if "." in key:
        units["scored_sketches"]["severity"] = value
    else:
        units[key] = value
    rewrite_manifest(bundle, document)

    verified = run("verify", bundle)

    assert verified.exit_code == 1 and problem in verified.stdout, verified.stdout
    assert run("labels", bundle).exit_code == 2  # a command that reads the bundle refuses it


@pytest.mark.parametrize("key", ["sketch", "scored_sketches", "ids_sha256"])
def test_a_sketch_that_is_not_the_frozen_units_fails_verify(bundle: Path, key: str) -> None:
    document = manifest_of(bundle)
    units = document["units"]
    if key == "sketch":
        units["sketch"] = units_sketch(["someone", "else"])
    elif key == "scored_sketches":
        units["scored_sketches"]["severity"] = units["scored_sketches"]["product_area"]
    else:
        units["ids_sha256"] = "0" * 64
    rewrite_manifest(bundle, document)

    verified = run("verify", bundle)

    assert verified.exit_code == 1
    assert f"units: units.{key} differs from the units of the frozen sheets" in verified.stdout


def test_a_codebook_bundle_frozen_before_the_sketches_still_verifies_and_reports(bundle: Path) -> None:
    document = manifest_of(bundle)
    for name in ("sketch", "scored_sketches"):
        del document["units"][name]
    rewrite_manifest(bundle, document)  # as the code before the sketches wrote it

    assert run("verify", bundle).exit_code == 0
    report = run("report", bundle, "--format", "json")
    assert report.exit_code == 0 and set(json.loads(report.stdout)["variables"]) == set(VARIABLES)
    checked = run("rules", "check", ROOT / "rules", "--audits", bundle.parent)
    assert checked.exit_code == 0, checked.output
