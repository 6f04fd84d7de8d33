"""A manifest edited so that a path is a JSON list, object, number or null: reported, never a traceback."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
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


# --- every value a command reads from a manifest is checked where the manifest is read -------------------

CODEBOOK = ROOT / "codebooks" / "comment_study" / "v1.yaml"
CODEBOOK_SHEETS = [ROOT / "examples" / "codebook" / "sheets" / f"{name}.csv" for name in ("alice", "bob", "carol")]


def set_key(manifest: dict[str, Any], path: str, value: object) -> None:
    *parents, last = path.split(".")
    for key in parents:
        manifest = manifest[key]
    manifest[last] = value


CRAFTED = [
    ("columns", {"delimiter": "xx"}, "columns.delimiter is 'xx', not one of , ; tab |"),
    ("columns", {"delimiter": ""}, "columns.delimiter is '', not one of , ; tab |"),
    ("columns", {"id_column": 5}, "columns.id_column is 5, not text or null"),
    ("score.metrics.cohen_kappa.value", "0.7", "score.metrics.cohen_kappa.value is '0.7', not a finite number"),
    ("score.metrics.cohen_kappa.value", 10**400, "score.metrics.cohen_kappa.value is 1000000"),
    ("score.metrics.cohen_kappa.defined", "yes", "score.metrics.cohen_kappa.defined is 'yes', not true or false"),
    ("score.metrics.cohen_kappa.ci", [0, "1"], "score.metrics.cohen_kappa.ci is [0, '1'], not null or two finite"),
    ("score.metrics.cohen_kappa.reason", 5, "score.metrics.cohen_kappa.reason is 5, not text"),
    ("score.metrics.cohen_kappa", 0.7, "score.metrics.cohen_kappa is 0.7, not an object"),
    ("score.rule.scale", 3, "score.rule.scale is 3, not text"),
]


@pytest.mark.parametrize(
    ("key", "value", "problem"), CRAFTED, ids=[f"{key}={value!r}"[:40] for key, value, _ in CRAFTED]
)
def test_a_crafted_manifest_value_is_named_never_a_crash(bundle: Path, key: str, value: object, problem: str) -> None:
    """A manifest re-hashed after an edit (a forger, a careless script): every command names the key."""
    manifest = manifest_of(bundle)
    set_key(manifest, key, value)
    rewrite_manifest(bundle, manifest)

    verified = run("verify", bundle)
    assert verified.exit_code == 1 and f"manifest: manifest.json: {problem}" in verified.stdout
    for command in ("labels", "score", "report", "adjudicate"):
        result = run(command, bundle)
        assert result.exit_code == 2, (command, result.output)
        assert f"Error [bundle-altered]: bundle {bundle} was altered: manifest.json {problem}" in result.stderr


@pytest.mark.parametrize(
    ("columns", "problem"),
    [
        ({"id_column": 5}, "columns.id_column is 5, not text or null"),
        ({"delimiter": "xx"}, "columns.delimiter is 'xx'"),
    ],
)
def test_a_crafted_codebook_manifest_is_named(tmp_path: Path, columns: dict[str, Any], problem: str) -> None:
    frozen = run("freeze", *CODEBOOK_SHEETS, "--codebook", CODEBOOK, "--into", tmp_path / "audits")
    assert frozen.exit_code == 0, frozen.output
    bundle = Path(frozen.stdout.strip().split("  ", 1)[1])
    manifest = manifest_of(bundle)
    manifest["columns"] = columns
    rewrite_manifest(bundle, manifest)

    verified = run("verify", bundle)
    assert verified.exit_code == 1 and f"manifest: manifest.json: {problem}" in verified.stdout
    for command in ("labels", "score"):
        result = run(command, bundle)
        assert result.exit_code == 2 and "was altered: manifest.json columns." in result.stderr, result.output


def test_rules_check_names_a_coefficient_beyond_any_float(bundle: Path, tmp_path: Path) -> None:
    """rules check reads manifests without their integrity hash: the gate's value is checked there too."""
    manifest = manifest_of(bundle)
    manifest["score"]["metrics"]["cohen_kappa"]["value"] = 10**400
    rewrite_manifest(bundle, manifest)

    result = run("rules", "check", ROOT / "rules", "--audits", bundle.parent, "--min-kappa", "0.5")
    assert result.exit_code == 1
    assert "[bundle-manifest-invalid] is not a readable irr-audit-bundle/1 manifest: " in result.stdout
    assert "score.metrics.cohen_kappa.value is 1000" in result.stdout


def test_a_manifest_beyond_the_size_limit_is_refused_before_it_is_read(bundle: Path) -> None:
    """A sparse manifest of 2.2 GB (no disk used): under a 1.5 GB address space a read of it fails."""
    os.chmod(bundle / "manifest.json", 0o644)
    os.truncate(bundle / "manifest.json", 2200 * 1024 * 1024)
    command = [sys.executable, "-m", "irr_audit"]

    def capped() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1500 * 1024 * 1024, resource.RLIM_INFINITY))

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for name, code in (("verify", 1), ("labels", 2)):
        done = subprocess.run(
            [*command, name, str(bundle)], capture_output=True, text=True, env=env, preexec_fn=capped, check=False
        )
        assert done.returncode == code, done.stdout + done.stderr
        assert "is 2,306,867,200 bytes; the limit file_bytes is 2,147,483,648" in done.stdout + done.stderr
