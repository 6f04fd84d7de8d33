"""A path that cannot be used as given is bad input, refused by the library itself.

Every path argument of every command is fed a folder where a file belongs, a dangling
symlink, a file without read permission and a path under a file (``a.csv/x``): each
gets exit 2 and one message from an IrrAuditError the readers raise (the CLI has no
catch-all that turns any OSError into "bad input"), and a library caller gets the same.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import irr_audit
from irr_audit.errors import IrrAuditError
from irr_audit.report.model import AuditOptions
from tests.conftest import run

ROOT = Path(__file__).resolve().parents[1]
RULE = ROOT / "rules" / "explicit_current_failure" / "v1.yaml"
EXAMPLES = ROOT / "examples" / "sheets"
COLLECTOR = ROOT / "tests" / "fixtures" / "collector"
KINDS = (
    "folder",
    "dangling symlink",
    "unreadable file",
    "under a file",
    "looping symlink",
    "name too long",
    "in a closed folder",
)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Valid inputs of every command: two sheets, a join folder, a bundle, a sample, rules."""
    home = tmp_path_factory.mktemp("paths")
    for name in ("alice.csv", "bob.csv"):
        shutil.copy(EXAMPLES / name, home / name)
    shutil.copy(COLLECTOR / "dataset.json", home / "dataset.json")
    shutil.copytree(ROOT / "rules" / "explicit_current_failure", home / "rules" / "explicit_current_failure")
    rule = home / "rules" / "explicit_current_failure" / "v1.yaml"
    assert run("join", home / "alice.csv", home / "bob.csv", "--rule", rule, "--out", home / "J", "-q").exit_code == 0
    assert run("freeze", home / "J", "--into", home / "audits", "-q").exit_code == 0
    (bundle,) = [path for path in (home / "audits").iterdir() if path.is_dir()]
    bundle.rename(home / "B")
    assert run(
        "sample", home / "dataset.json", "--rule", COLLECTOR / "rule_v1.yaml", "--coders", "a,b", "--out", home / "S"
    ).exit_code in (0, 1)
    return home


def bad_path(home: Path, kind: str, name: str) -> Path:
    """A path of ``kind`` under ``home`` (made once per name)."""
    where = home / "bad" / kind.replace(" ", "_")
    where.mkdir(parents=True, exist_ok=True)
    path = where / name
    if kind == "folder":
        path.mkdir(exist_ok=True)
    elif kind == "dangling symlink":
        if not path.is_symlink():
            path.symlink_to(where / f"missing-{name}")
    elif kind == "unreadable file" and not path.exists():
        path.write_text("comment_id,code\nc1,yes\n", encoding="utf-8")
        path.chmod(0)
    elif kind == "looping symlink":
        if not path.is_symlink():
            path.symlink_to(path.name)
    elif kind == "name too long":
        path = where / ("n" * 300) / name
    elif kind == "in a closed folder":
        closed = where / "closed"
        if not closed.exists():
            closed.mkdir()
            (closed / name).write_text("comment_id,code\nc1,yes\n", encoding="utf-8")
            closed.chmod(0)
        path = closed / name
    elif kind == "under a file":
        (where / "a.csv").write_text("comment_id,code\n", encoding="utf-8")
        path = where / "a.csv" / name
    return path


AS_A_USER = "IRR_AUDIT_TESTS_WITHOUT_DAC"  # set by .ci/run where it runs these cases as root without the capability


def skip_if_readable(path: Path, kind: str) -> None:
    """Root (with CAP_DAC_OVERRIDE) reads any file and enters any folder: there is no
    unreadable file to test with. .ci/run runs these cases again as root without that
    capability (`setpriv --bounding-set -dac_override,-dac_read_search`), where a readable
    one is a failure, not a skip."""
    if kind not in ("unreadable file", "in a closed folder"):
        return
    try:
        path.read_bytes() if kind == "unreadable file" else list(path.parent.iterdir())
    except PermissionError:
        return
    if os.environ.get(AS_A_USER):
        pytest.fail(f"{AS_A_USER} is set, yet this process reads a file without permission")
    pytest.skip("this process reads files without permission (root): .ci/run runs this case without that capability")


# (command line with X where the bad path goes, the kinds for which X is refused). A folder
# is a valid --out, --into or RULES_DIR; there only the other kinds are bad.
FILE_SLOTS = [
    "join X {h}/bob.csv --rule {rule} --out {h}/out",
    "join {h}/alice.csv {h}/bob.csv --rule X --out {h}/out",
    "join {h}/alice.csv {h}/bob.csv --rule {rule} --out {h}/out --sample X",
    "score X {h}/bob.csv --rule {rule}",
    "score X",
    "score --counts X --rule {rule}",
    "counts X --rule {rule} --out {h}/counts.csv",
    "counts {h}/alice.csv --rule X --out {h}/counts.csv",
    "counts {h}/alice.csv --rule {rule} --out X",
    "report X {h}/bob.csv --rule {rule}",
    "report {h}/J --output X",
    "sample X --rule {collector}/rule_v1.yaml --coders a,b --out {h}/out",
    "sample {h}/dataset.json --rule X --coders a,b --out {h}/out",
    "sample {h}/dataset.json --rule {collector}/rule_v1.yaml --coders a,b --out {h}/out --run-record X",
    "freeze X {h}/bob.csv --rule {rule} --into {h}/new",
    "freeze {h}/J --into {h}/new --recodes X",
    "freeze {h}/J --into {h}/new --sample X",
    "freeze {h}/J --into {h}/new --digests X",
    "freeze {h}/J --into {h}/new --sign X",
    "verify X",
    "verify {h}/B --digests X",
    "verify {h}/B --allowed-signers X",
    "adjudicate X",
    "adjudicate {h}/B --decisions X --by a",
    "adjudicate {h}/B --output X",
    "labels X",
    "labels {h}/B --output X",
    "rules check X",
    "rules check {h}/rules --lock X",
    "rules lock {h}/rules --lock X",
    "rules diff X {rule}",
    "rules diff {rule} X",
]
FOLDER_SLOTS = [
    "join {h}/alice.csv {h}/bob.csv --rule {rule} --out X",
    "sample {h}/dataset.json --rule {collector}/rule_v1.yaml --coders a,b --out X",
    "freeze {h}/J --into X",
    "rules lock X",
    "rules check {h}/rules --audits X",
]
CASES = [(line, kind) for line in FILE_SLOTS for kind in KINDS] + [
    (line, kind) for line in FOLDER_SLOTS for kind in KINDS if kind != "folder"
]


@pytest.mark.parametrize(("line", "kind"), CASES, ids=[f"{line.split(' X')[0]} X:{kind}" for line, kind in CASES])
def test_every_path_argument_refuses_an_unusable_path(world: Path, line: str, kind: str) -> None:
    bad = bad_path(world, kind, "x.csv")
    skip_if_readable(bad, kind)
    words = line.format(h=world, rule=world / "rules" / "explicit_current_failure" / "v1.yaml", collector=COLLECTOR)
    args = [str(bad) if word == "X" else word for word in words.split()]
    result = run(*args)  # an exception (an OSError that escaped) fails the test here
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    if result.stderr.startswith("Usage: "):  # typer checks that some paths it is given are readable
        assert f"'{bad}' is not readable" in " ".join(result.stderr.replace("│", "").split()), result.stderr
        return
    assert result.stderr.startswith("Error ["), result.stderr
    assert result.stderr.count("Error [") == 1 and "Traceback" not in result.stderr


@pytest.mark.parametrize("kind", KINDS)
def test_a_library_caller_gets_the_same_error(world: Path, kind: str) -> None:
    bad = bad_path(world, kind, "y.csv")
    skip_if_readable(bad, kind)
    calls: list[Callable[[], object]] = [
        lambda: irr_audit.audit([bad, world / "bob.csv"], rule=RULE),
        lambda: irr_audit.load_rule(bad),
        lambda: irr_audit.audit_counts([bad], rule=RULE),
        lambda: irr_audit.join_folder([bad, world / "bob.csv"], RULE, world / "library-out"),
    ]
    if kind != "folder":  # a folder is what join writes into
        calls.append(lambda: irr_audit.join_folder([world / "alice.csv", world / "bob.csv"], RULE, bad))
    for call in calls:
        with pytest.raises(IrrAuditError):
            call()


@pytest.mark.parametrize(
    ("options", "code"),
    [
        ({"n_boot": 10, "seed": -1}, "usage-seed"),
        ({"n_boot": 10, "seed": 1.5}, "usage-seed"),
        ({"n_boot": -1}, "usage-bootstrap"),
        ({"n_boot": True}, "usage-bootstrap"),
        ({"n_boot": 10**9}, "usage-bootstrap"),
    ],
)
def test_audit_options_are_checked_when_made(options: dict, code: str) -> None:
    """A library caller building AuditOptions gets the CLI's refusal, not numpy's ValueError."""
    with pytest.raises(IrrAuditError) as raised:
        AuditOptions(**options)
    assert raised.value.code == code


def test_the_permission_cases_run_even_as_root(tmp_path: Path) -> None:
    """The unreadable-file and closed-folder cases skip under root, which reads any file; here
    they run again in a pytest without root's override of file permissions (setpriv drops
    CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH), so that CI, which runs as root, checks them too."""
    locked = tmp_path / "locked.csv"
    locked.write_text("comment_id,code\n", encoding="utf-8")
    locked.chmod(0)
    if os.geteuid() != 0:  # a user: the cases above ran as they are, none skipped
        with pytest.raises(PermissionError):
            locked.read_bytes()
        return
    setpriv = shutil.which("setpriv")
    assert setpriv is not None, "setpriv (util-linux) runs the permission cases without root's override"
    command = [setpriv, "--bounding-set", "-dac_override,-dac_read_search", sys.executable, "-m", "pytest"]
    options = [str(Path(__file__)), "-k", "unreadable or closed", "-q", "-p", "no:cacheprovider", "-rs"]
    done = subprocess.run([*command, *options], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    passed = re.search(r"(\d+) passed", done.stdout)
    assert passed and int(passed.group(1)) >= 2 * len(FILE_SLOTS), done.stdout[-2000:]
    assert "skipped" not in done.stdout, done.stdout[-2000:]


@pytest.mark.parametrize("folder", ["sheets", "rule", "adjudication", "adjudication/record"])
def test_a_bundle_with_a_closed_folder_or_unreadable_record_is_named(tmp_path: Path, folder: str) -> None:
    """A folder of a bundle the user may not enter (or a record it may not read) is a problem of
    permissions, named with the fix: verify reports it, every other command refuses it (exit 2)."""
    assert (
        run("freeze", EXAMPLES / "alice.csv", EXAMPLES / "bob.csv", "--rule", RULE, "--into", tmp_path).exit_code == 0
    )
    (bundle,) = [path for path in tmp_path.iterdir() if path.is_dir()]
    (tmp_path / "d.csv").write_text("comment_id,code,note\nkq3z1q7,no,x\n", encoding="utf-8")
    assert run("adjudicate", bundle, "--decisions", tmp_path / "d.csv", "--by", "carol").exit_code == 0
    closed = bundle / folder if folder != "adjudication/record" else next((bundle / "adjudication").iterdir())
    mode = closed.stat().st_mode
    closed.chmod(0)
    try:
        skip_if_readable(
            closed if closed.is_file() else closed / "x",
            "unreadable file" if closed.is_file() else "in a closed folder",
        )
        verified = run("verify", bundle)
        assert verified.exit_code == 1
        assert verified.stdout.count(": Permission denied") + verified.stdout.count("(Permission denied)") >= 1
        for command in ("labels", "report", "adjudicate"):
            result = run(command, bundle)
            assert result.exit_code == 2, (command, result.output)
            assert result.stderr.startswith(f"Error [bundle-unreadable]: bundle {bundle}: {folder.split('/')[0]}")
            assert f"chmod -R u+rX {bundle}" in result.stderr
        listed = run("rules", "check", ROOT / "rules", "--audits", tmp_path)
        assert listed.exit_code in (0, 1), listed.output  # the manifest is readable: only the folder is closed
    finally:
        closed.chmod(mode)


def test_rules_check_names_a_closed_bundle_folder(tmp_path: Path) -> None:
    assert (
        run("freeze", EXAMPLES / "alice.csv", EXAMPLES / "bob.csv", "--rule", RULE, "--into", tmp_path).exit_code == 0
    )
    (bundle,) = [path for path in tmp_path.iterdir() if path.is_dir()]
    bundle.chmod(0)
    try:
        skip_if_readable(bundle / "manifest.json", "in a closed folder")
        result = run("rules", "check", ROOT / "rules", "--audits", tmp_path)
        assert result.exit_code == 2
        assert result.stderr.startswith("Error [usage-unreadable]: cannot read ") and "manifest.json" in result.stderr
    finally:
        bundle.chmod(0o755)
