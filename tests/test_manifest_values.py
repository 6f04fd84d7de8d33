"""A manifest edited so that a path is a JSON list, object, number or null: reported, never a traceback."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from irr_audit.bundle.manifest import canonical_sha256, manifest_problems
from irr_audit.cli import app
from irr_audit.io.outputs import render_json

ROOT = Path(__file__).resolve().parents[1]
RULE = ROOT / "rules" / "explicit_current_failure" / "v1.yaml"
EXAMPLES = ROOT / "examples" / "sheets"
NOT_TEXT = [["sheets/alice.csv"], {"path": "sheets/alice.csv"}, 7, None]


def run(*args: object):
    return CliRunner().invoke(app, [str(arg) for arg in args], catch_exceptions=False)


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    result = run("freeze", EXAMPLES / "alice.csv", EXAMPLES / "bob.csv", "--rule", RULE, "--into", tmp_path / "audits")
    assert result.exit_code == 0, result.output
    return Path(result.stdout.strip().split("  ", 1)[1])  # sha256:<digest>  <bundle>


def manifest_of(bundle: Path) -> dict[str, Any]:
    return json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))


def rewrite_manifest(bundle: Path, manifest: dict[str, Any]) -> None:
    """Write the manifest back as a careful forger would: with its integrity hash recomputed."""
    manifest["integrity"]["sha256"] = canonical_sha256(manifest, "integrity")
    os.chmod(bundle, 0o755)
    os.chmod(bundle / "manifest.json", 0o644)
    (bundle / "manifest.json").write_text(render_json(manifest), encoding="utf-8")


@pytest.mark.parametrize("path", NOT_TEXT, ids=["list", "object", "number", "null"])
def test_a_file_path_that_is_not_text_is_a_problem(bundle: Path, path: object) -> None:
    manifest = manifest_of(bundle)
    manifest["files"][1]["path"] = path
    manifest["sheets"][0]["file"] = path

    problems = manifest_problems(manifest)

    assert f"files[1].path {path!r} is not a non-empty text path" in problems
    assert f"sheets[0].file {path!r} is not a non-empty text path" in problems


def test_the_same_path_twice_is_still_reported_beside_one_that_is_not_text(bundle: Path) -> None:
    manifest = manifest_of(bundle)
    manifest["files"].insert(0, {**manifest["files"][1], "path": ["x"]})
    manifest["files"].append(dict(manifest["files"][-1]))

    problems = manifest_problems(manifest)

    assert problems == [
        "files[0].path ['x'] is not a non-empty text path",
        f"files lists {manifest['files'][-1]['path']!r} twice",
    ]


@pytest.mark.parametrize("path", NOT_TEXT, ids=["list", "object", "number", "null"])
def test_verify_and_score_name_the_path_that_is_not_text(bundle: Path, path: object) -> None:
    manifest = manifest_of(bundle)
    manifest["files"][1]["path"] = path
    rewrite_manifest(bundle, manifest)

    verified = run("verify", bundle)
    scored = run("score", bundle)

    assert verified.exit_code == 1
    assert f"files[1].path {path!r} is not a non-empty text path" in verified.stdout
    assert scored.exit_code == 2
    assert scored.stderr.startswith(f"Error [bundle-altered]: bundle {bundle} was altered: manifest.json files[1].path")
