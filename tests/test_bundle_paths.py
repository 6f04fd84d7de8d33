"""Every spelling of a bundle's path is the same bundle to every bundle command.

A trailing slash (what shell completion types), ./, a/../a, a/sheets/.., a symlink to the
folder, an absolute path, and `.` inside the bundle all name one folder: the bundle commands
open it through irr_audit.bundle.manifest.bundle_path, so that what a command takes from the
path's last component (the folder's name, which anchors and unfinished freezes are told by)
is the folder's own name, never '', '..' or a link's.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import pytest

from irr_audit.bundle.manifest import bundle_path, folder_name, is_partial
from irr_audit.bundle.workflow import freeze_audit
from tests.conftest import run

ROOT = Path(__file__).resolve().parents[1]
RULE = ROOT / "rules" / "explicit_current_failure" / "v1.yaml"
DIGEST_LINE = re.compile(r"(sha256:[0-9a-f]{64})  (.+)")


def freeze(sheets: list[Path], audits: Path, *extra: object) -> Path:
    result = run("freeze", *sheets, "--rule", RULE, "--into", audits, *extra)
    assert result.exit_code == 0, result.stderr
    match = DIGEST_LINE.fullmatch(result.stdout.rstrip("\n"))
    assert match is not None, result.stdout
    return Path(match.group(2))


def writable(folder: Path) -> None:
    for root, folders, files in os.walk(folder):
        for name in folders + files:
            os.chmod(Path(root) / name, stat.S_IRWXU)
    os.chmod(folder, stat.S_IRWXU)


# Each spelling: (tmp_path, the bundle folder) -> the argument to pass, after changing the
# working folder where the spelling needs it (tmp_path, or the bundle itself for ".").
Spelling = Callable[[Path, Path], str]


def relative(tmp_path: Path, bundle: Path) -> str:
    return os.path.relpath(bundle, tmp_path)


def via_link(tmp_path: Path, bundle: Path) -> str:
    link = tmp_path / "link to the bundle"
    if not link.is_symlink():
        link.symlink_to(bundle, target_is_directory=True)
    return link.name


SPELLINGS: dict[str, Spelling] = {
    "relative": relative,
    "trailing slash": lambda tmp, bundle: relative(tmp, bundle) + "/",
    "dot slash": lambda tmp, bundle: "./" + relative(tmp, bundle),
    "dot dot": lambda tmp, bundle: f"{bundle.parent.name}/../{relative(tmp, bundle)}/",
    "member dot dot": lambda tmp, bundle: relative(tmp, bundle) + "/sheets/..",
    "trailing dot": lambda tmp, bundle: relative(tmp, bundle) + "/.",
    "absolute slash": lambda tmp, bundle: str(bundle) + "/",
    "symlink": via_link,
    "symlink slash": lambda tmp, bundle: via_link(tmp, bundle) + "/",
    "dot": lambda tmp, bundle: ".",
}


def spelled(name: str, tmp_path: Path, bundle: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The bundle's path as the spelling writes it, from the working folder it needs."""
    monkeypatch.chdir(bundle if name == "dot" else tmp_path)
    return SPELLINGS[name](tmp_path, bundle)


@pytest.mark.parametrize("name", SPELLINGS)
def test_bundle_path_is_the_folder_itself(name: str, sheets: list[Path], tmp_path: Path, monkeypatch) -> None:
    bundle = freeze(sheets, tmp_path / "audits")
    given = Path(spelled(name, tmp_path, bundle, monkeypatch))

    assert folder_name(given) == bundle.name
    assert bundle_path(given).name == bundle.name
    assert bundle_path(given).resolve() == bundle.resolve()


@pytest.mark.parametrize("name", SPELLINGS)
def test_a_folder_holding_another_anchored_bundle_fails_however_it_is_spelled(
    name: str, sheets: list[Path], tmp_path: Path, monkeypatch
) -> None:
    """Two audits frozen into one folder and listed in its DIGESTS; the first folder then holds
    the second bundle's files. With the digest list it must fail, by any spelling of its path."""
    digests = tmp_path / "audits" / "DIGESTS"
    first = freeze(sheets, tmp_path / "audits", "--digests", digests)
    sheets[1].write_text(sheets[1].read_text(encoding="utf-8").replace(",yes,", ",no,", 1), encoding="utf-8")
    second = freeze(sheets, tmp_path / "audits", "--digests", digests)
    writable(first)
    shutil.rmtree(first)
    shutil.copytree(second, first)
    given = spelled(name, tmp_path, first, monkeypatch)

    result = run("verify", given, "--digests", digests)

    assert result.exit_code == 1, result.stdout
    assert f"the folder is named {first.name}; the manifest names the bundle {second.name}" in result.stdout
    as_json = json.loads(run("verify", given, "--digests", digests, "--format", "json").stdout)
    assert as_json["ok"] is False and [problem["kind"] for problem in as_json["problems"]] == ["anchor"]


@pytest.mark.parametrize("name", SPELLINGS)
def test_an_unfinished_freeze_is_unfinished_however_it_is_spelled(
    name: str, sheets: list[Path], tmp_path: Path, monkeypatch
) -> None:
    """A folder freeze was still building (.<name>.partial-<random>) is never verified as a
    bundle: its name says so, and `.` or `<it>/sheets/..` must not hide the name."""
    bundle = freeze(sheets, tmp_path / "audits")
    partial = bundle.with_name(f".{bundle.name}.partial-0123456789ab")
    bundle.rename(partial)
    given = spelled(name, tmp_path, partial, monkeypatch)

    assert is_partial(Path(given))
    result = run("verify", given)

    assert result.exit_code == 1, result.stdout
    assert f"unfinished: {partial.name}: a freeze that did not finish" in result.stdout


@pytest.mark.parametrize("name", SPELLINGS)
def test_every_bundle_command_reads_the_same_bundle(name: str, sheets: list[Path], tmp_path: Path, monkeypatch) -> None:
    """labels, score, the list of disagreements and an adjudication recorded through any spelling
    are the bundle's own: the record lands in the bundle, anchored under its name."""
    bundle = freeze(sheets, tmp_path / "audits")
    expected_labels = run("labels", bundle, "--quiet").stdout
    expected_score = run("score", bundle, "--format", "json", "--quiet").stdout
    expected_template = run("adjudicate", bundle, "--quiet").stdout
    given = spelled(name, tmp_path, bundle, monkeypatch)

    assert run("labels", given, "--quiet").stdout == expected_labels
    assert run("score", given, "--format", "json", "--quiet").stdout == expected_score
    template = run("adjudicate", given, "--quiet").stdout
    assert template == expected_template
    rows = template.splitlines()
    decided = rows[1].split(",")[0]
    decisions = tmp_path / "decisions.csv"
    decisions.write_text(f"comment_id,code,note\n{decided},yes,\n", encoding="utf-8")
    digests = tmp_path / "DIGESTS"

    recorded = run("adjudicate", given, "--decisions", decisions, "--by", "alice", "--digests", digests)

    assert recorded.exit_code == 0, recorded.stderr
    records = list((bundle / "adjudication").glob("*.json"))
    assert len(records) == 1
    assert digests.read_text(encoding="utf-8").split()[1] == f"{bundle.name}/adjudication/{records[0].name}"
    assert run("verify", given, "--digests", digests).exit_code == 1  # the bundle itself is not listed
    listed = run("verify", bundle, "--expect", _digest_of(bundle))
    assert listed.exit_code == 0, listed.stdout


def _digest_of(bundle: Path) -> str:
    return "sha256:" + hashlib.sha256((bundle / "manifest.json").read_bytes()).hexdigest()


def test_rules_check_reads_no_bundle_through_a_symlink(sheets: list[Path], tmp_path: Path) -> None:
    """A symlink in the audits folder to a bundle kept elsewhere is not one of its audits (freeze
    does not count it either): its newer, better score must not pass the gate for them."""
    audits = tmp_path / "audits"
    recoded = [tmp_path / "alice.csv", tmp_path / "bob.csv"]
    for sheet, copy in zip(sheets, recoded):
        text = sheet.read_text(encoding="utf-8")
        copy.write_text(text.replace(",yes,", ",no,", 3) if copy.name == "bob.csv" else text, encoding="utf-8")
    low = freeze_audit(recoded, audits, rule=RULE, now=datetime(2030, 1, 1, tzinfo=timezone.utc)).result.path
    later = datetime(2030, 1, 2, tzinfo=timezone.utc)  # the newest validation
    elsewhere = freeze_audit(sheets, tmp_path / "elsewhere", rule=RULE, now=later).result.path
    (audits / "zz").symlink_to(elsewhere, target_is_directory=True)
    rules = tmp_path / "rules"
    (rules / "explicit_current_failure").mkdir(parents=True)
    shutil.copy(RULE, rules / "explicit_current_failure" / "v1.yaml")
    kappa = json.loads((low / "manifest.json").read_text(encoding="utf-8"))["score"]["metrics"]["cohen_kappa"]
    assert kappa["value"] < 0.65

    result = run("rules", "check", rules, "--audits", audits, "--min-kappa", "0.65")

    assert result.exit_code == 1, result.stdout + result.stderr
    assert f"audit bundle '{low.name}'" in result.stdout and "[gate-below]" in result.stdout


CODEBOOK = ROOT / "codebooks" / "comment_study" / "v1.yaml"
CODEBOOK_SHEETS = sorted((ROOT / "examples" / "codebook" / "sheets").glob("*.csv"))


@pytest.mark.parametrize("name", ["trailing slash", "member dot dot", "symlink", "dot"])
def test_a_codebook_bundle_is_the_same_bundle_however_it_is_spelled(name: str, tmp_path: Path, monkeypatch) -> None:
    result = run("freeze", *CODEBOOK_SHEETS, "--codebook", CODEBOOK, "--into", tmp_path / "audits")
    assert result.exit_code == 0, result.output
    bundle = Path(result.stdout.split("  ", 1)[1].strip())
    expected = run("adjudicate", bundle, "--quiet").stdout
    expected_labels = run("labels", bundle, "--quiet").stdout
    given = spelled(name, tmp_path, bundle, monkeypatch)

    listed = run("adjudicate", given, "--quiet").stdout
    assert listed == expected
    unit = listed.splitlines()[1].split(",")[:2]
    decisions = tmp_path / "decisions.csv"
    decisions.write_text(f"variable,comment_id,code\n{unit[0]},{unit[1]},yes\n", encoding="utf-8")
    assert run("adjudicate", given, "--decisions", decisions, "--by", "alice").exit_code == 0
    assert len(list((bundle / "adjudication").glob("*.json"))) == 1
    assert run("labels", given, "--quiet").stdout != expected_labels
    assert run("verify", given).exit_code == 0


@pytest.mark.parametrize("name", ["relative", "member dot dot", "symlink", "dot"])
@pytest.mark.parametrize("codebook", [False, True])
def test_the_other_commands_refuse_an_unfinished_freeze(
    name: str, codebook: bool, sheets: list[Path], tmp_path: Path, monkeypatch
) -> None:
    """labels, score and adjudicate never read, nor add a record to, a folder freeze did not finish."""
    if codebook:
        frozen = run("freeze", *CODEBOOK_SHEETS, "--codebook", CODEBOOK, "--into", tmp_path / "audits")
        assert frozen.exit_code == 0, frozen.output
        bundle = Path(frozen.stdout.split("  ", 1)[1].strip())
    else:
        bundle = freeze(sheets, tmp_path / "audits")
    partial = bundle.with_name(f".{bundle.name}.partial-0123456789ab")
    bundle.rename(partial)
    given = spelled(name, tmp_path, partial, monkeypatch)

    for command in (["labels", given], ["score", given], ["adjudicate", given]):
        result = run(*command)
        assert result.exit_code == 2, (command, result.output)
        assert "Error [bundle-not-found]: " in result.output and "is a freeze that did not finish" in result.output
    assert not (partial / "adjudication").exists()
