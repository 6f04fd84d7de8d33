"""Outputs never write an input or a bundle; an output folder is one run or none;
concurrent freezes of one audit make one bundle.

Every refusal is exit 2 with one message, before the command reads anything: a
sheet that cannot even be parsed is passed beside the unsafe output to show it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
from filelock import FileLock
from typer.testing import CliRunner

from irr_audit.bundle import freeze as freeze_module
from irr_audit.bundle.freeze import FREEZE_LOCK, collect_source
from irr_audit.bundle.manifest import list_bundles
from irr_audit.cli import app
from irr_audit.errors import IrrAuditError, OutputError
from irr_audit.io import runfolder
from irr_audit.io.outputs import refuse_unsafe_outputs

ROOT = Path(__file__).resolve().parents[1]
RULE = ROOT / "rules" / "explicit_current_failure" / "v1.yaml"
EXAMPLES = ROOT / "examples" / "sheets"
COLLECTOR = ROOT / "tests" / "fixtures" / "collector"
JOIN_FILES = ["counts.csv", "joined.csv", "missingness_log.csv", "missingness_log.jsonl", "rule.yaml", "summary.json"]


def run(*args: object):
    return CliRunner().invoke(app, [str(arg) for arg in args], catch_exceptions=False)


def digests(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (relative path -> sha256): what a test compares before and after."""
    return {
        path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A copy of the example audit: sheets alice.csv and bob.csv, the rule as rule.yaml."""
    for name in ("alice.csv", "bob.csv"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    shutil.copy(RULE, tmp_path / "rule.yaml")
    return tmp_path


def join(work: Path, out: Path, *extra: object, sheets: tuple[str, ...] = ("alice.csv", "bob.csv")):
    return run("join", *(work / name for name in sheets), "--rule", work / "rule.yaml", "--out", out, "-q", *extra)


def frozen(work: Path) -> Path:
    result = run(
        "freeze", work / "alice.csv", work / "bob.csv", "--rule", work / "rule.yaml", "--into", work / "audits", "-q"
    )
    assert result.exit_code == 0, result.stderr
    return Path(result.stdout.strip().split("  ", 1)[1])  # sha256:<digest>  <bundle>


def refused(result, code: str, *phrases: str) -> None:
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"Error [{code}]: "), result.stderr
    assert result.stderr.count("Error [") == 1
    for phrase in phrases:
        assert phrase in result.stderr, result.stderr


# --- 1. an output is never an input ------------------------------------------------------------


@pytest.mark.parametrize("output", ["alice.csv", "rule.yaml", "hard link", "symlink", "through a linked folder"])
def test_report_never_writes_an_input(work: Path, output: str) -> None:
    target = {
        "hard link": work / "hard.csv",
        "symlink": work / "soft.csv",
        "through a linked folder": work / "linked" / "bob.csv",
    }.get(output, work / output)
    if output == "hard link":
        os.link(work / "alice.csv", target)
    elif output == "symlink":
        target.symlink_to(work / "rule.yaml")
    elif output == "through a linked folder":
        (work / "linked").symlink_to(work)
    before = digests(work)
    result = run(
        "report",
        work / "alice.csv",
        work / "bob.csv",
        "--rule",
        work / "rule.yaml",
        "--output",
        target,
        "--format",
        "md",
    )
    refused(result, "output-overwrites-input", f"writing {target} would overwrite an input file")
    assert digests(work) == before


def test_the_refusal_comes_before_any_sheet_is_read(work: Path) -> None:
    (work / "broken.csv").write_bytes(b"\xff\xfe\x00not a sheet")
    result = run(
        "report", work / "broken.csv", work / "bob.csv", "--rule", work / "rule.yaml", "--output", work / "bob.csv"
    )
    refused(result, "output-overwrites-input")  # not the sheet's encoding error: nothing was read


def test_report_of_a_bundle_never_writes_into_it(work: Path) -> None:
    bundle = frozen(work)
    before = digests(bundle)
    for target in (
        bundle / "sheets" / "x.csv",
        bundle / "sheets" / "alice.csv",
        bundle / "report.md",
        bundle / "adjudication" / "x.md",
    ):
        result = run("report", bundle, "--output", target, "--format", "md")
        refused(result, "output-overwrites-input" if target.exists() else "output-in-bundle")
    result = run(
        "report",
        work / "alice.csv",
        work / "bob.csv",
        "--rule",
        work / "rule.yaml",
        "--output",
        bundle / "sheets" / "new.md",
    )
    refused(result, "output-in-bundle", f"is inside the audit bundle {bundle}")
    assert digests(bundle) == before


def test_report_never_writes_a_counts_file_it_reads(work: Path) -> None:
    assert join(work, work / "out").exit_code == 0
    counts = work / "counts.csv"
    shutil.copy(work / "out" / "counts.csv", counts)
    before = counts.read_bytes()
    result = run("report", "--counts", counts, "--rule", work / "rule.yaml", "--output", counts, "--format", "json")
    refused(result, "output-overwrites-input")
    assert counts.read_bytes() == before


def test_report_of_a_join_folder_never_writes_its_files_or_sheets(work: Path) -> None:
    out = work / "out"
    assert join(work, out).exit_code == 0
    before = digests(work)
    for target in (out / "summary.json", out / "joined.csv", work / "alice.csv"):
        refused(run("report", out, "--output", target), "output-overwrites-input")
    # another command's output that would replace one file of the join's run
    result = run(
        "report", work / "alice.csv", work / "bob.csv", "--rule", work / "rule.yaml", "--output", out / "counts.csv"
    )
    refused(result, "output-in-run-folder", "of the join run in")
    assert digests(work) == before
    assert run("report", out, "--output", out / "report.md", "-q").exit_code == 0  # a new file beside them is fine


def test_join_never_writes_into_a_folder_holding_an_input(work: Path) -> None:
    out = work / "out"
    out.mkdir()
    shutil.copy(work / "alice.csv", out / "counts.csv")  # an input under one of join's output names
    before = digests(work)
    result = join(work, out, "--force", sheets=("out/counts.csv", "bob.csv"))
    refused(result, "output-overwrites-input", f"the folder holds {out / 'counts.csv'}")
    assert digests(work) == before
    (out / "counts.csv").unlink()
    os.link(work / "alice.csv", out / "joined.csv")  # an input by another name (a hard link)
    result = join(work, out, "--force")
    refused(result, "output-overwrites-input", f"the folder holds {work / 'alice.csv'}")
    assert digests(work) == {
        **{k: v for k, v in before.items() if k != "out/counts.csv"},
        "out/joined.csv": before["alice.csv"],
    }


def test_join_never_writes_into_a_bundle(work: Path) -> None:
    bundle = frozen(work)
    before = digests(bundle)
    refused(join(work, bundle, "--force"), "output-in-bundle", f"is the audit bundle {bundle}")
    refused(join(work, bundle / "sheets" / "out"), "output-in-bundle")
    assert digests(bundle) == before


def test_sample_never_writes_over_its_dataset(tmp_path: Path) -> None:
    out = tmp_path / "sample"
    out.mkdir()
    dataset = out / "ledger.jsonl"
    shutil.copy(COLLECTOR / "thread.jsonl", dataset)
    result = run(
        "sample", dataset, "--rule", COLLECTOR / "rule_v1.yaml", "--coders", "alice,bob", "--out", out, "--force"
    )
    refused(result, "output-overwrites-input", f"the folder holds {dataset}")
    assert dataset.read_bytes() == (COLLECTOR / "thread.jsonl").read_bytes()


def test_adjudicate_and_rules_lock_never_write_their_inputs(work: Path) -> None:
    bundle = frozen(work)
    before = digests(work)
    refused(run("adjudicate", bundle, "--output", bundle / "todo.csv"), "output-in-bundle")
    refused(run("adjudicate", bundle, "--output", bundle / "sheets" / "alice.csv"), "output-overwrites-input")
    rules = work / "rules" / "explicit_current_failure"
    rules.mkdir(parents=True)
    shutil.copy(RULE, rules / "v1.yaml")
    refused(run("rules", "lock", work / "rules", "--lock", rules / "v1.yaml"), "output-overwrites-input")
    refused(run("rules", "lock", work / "rules", "--lock", bundle / "rules.lock"), "output-in-bundle")
    assert digests(work) == {**before, "rules/explicit_current_failure/v1.yaml": digests(rules)["v1.yaml"]}


# --- 5. outputs of the same kind ------------------------------------------------------------------


def test_output_paths_that_are_not_plain_files(work: Path) -> None:
    sheets = (work / "alice.csv", work / "bob.csv", "--rule", work / "rule.yaml")
    (work / "dangling.md").symlink_to(work / "nowhere" / "x.md")
    refused(run("report", *sheets, "--output", work / "dangling.md"), "output-symlink", "is a symbolic link")
    assert not (work / "nowhere").exists()
    elsewhere = work / "elsewhere.md"
    elsewhere.write_text("keep")
    (work / "link.md").symlink_to(elsewhere)
    refused(run("report", *sheets, "--output", work / "link.md"), "output-symlink")
    assert elsewhere.read_text() == "keep" and (work / "link.md").is_symlink()
    os.mkfifo(work / "pipe")
    refused(run("report", *sheets, "--output", work / "pipe"), "output-not-a-file")
    locked = work / "frozen.md"
    locked.write_text("keep")
    locked.chmod(0o444)
    refused(run("report", *sheets, "--output", locked), "output-read-only")
    assert locked.read_text() == "keep"
    # /proc/self cannot be written even by root: refused before the report is built
    refused(run("report", *sheets, "--output", "/proc/self/report.md"), "output-unwritable", "is not writable")
    refused(run("report", *sheets, "--output", work / "alice.csv" / "x.md"), "output-unwritable", "is a file")


@pytest.mark.parametrize("ending", ["/", "/.", os.sep + os.sep])
def test_an_output_file_spelled_as_a_folder_is_refused_not_written_as_a_file(work: Path, ending: str) -> None:
    """`--output out/` names a folder; a Path drops the separator, and the file was written as `out`."""
    sheets = (work / "alice.csv", work / "bob.csv", "--rule", work / "rule.yaml")
    named = f"{work / 'out'}{ending}"
    refused(run("report", *sheets, "--output", named), "output-is-a-folder", "names a folder", f"{work / 'out'}")
    bundle = frozen(work)
    refused(run("labels", bundle, "--output", named), "output-is-a-folder", "labels.csv")
    refused(run("adjudicate", bundle, "--output", named), "output-is-a-folder")
    rules = work / "rules" / "explicit_current_failure"
    rules.mkdir(parents=True)
    shutil.copy(RULE, rules / "v1.yaml")
    refused(run("rules", "lock", work / "rules", "--lock", named), "output-is-a-folder", "--lock")
    (work / "long.csv").write_text("comment_id,coder,code\na,x,yes\na,y,no\n")
    for option in ("--out", "--summary", "--log"):
        files = {"--out": work / "c.csv", "--summary": work / "s.json", "--log": work / "l.jsonl", option: named}
        counted = run("counts", work / "long.csv", "--rule", work / "rule.yaml", *(x for o in files.items() for x in o))
        refused(counted, "output-is-a-folder", option)
    assert not (work / "out").exists()
    assert run("report", *sheets, "--output", work / "out" / "audit.md", "-q").exit_code == 0  # a file in it
    assert join(work, f"{work / 'joined'}{ending}").exit_code == 0  # --out names a folder: written as one
    assert (work / "joined" / "summary.json").is_file()


def test_output_folders_that_cannot_be_replaced(work: Path, monkeypatch) -> None:
    (work / "linked").symlink_to(work / "elsewhere", target_is_directory=True)
    refused(join(work, work / "linked"), "output-symlink")
    refused(join(work, work / "rule.yaml"), "output-unwritable", "it is a file, not a folder")
    out = work / "out"
    out.mkdir()
    monkeypatch.chdir(out)
    refused(join(work, Path(".")), "output-folder-in-use", "is the folder you are working in")
    refused(join(work, Path("..")), "output-overwrites-input")


# --- 2. join --out: the folder is the run's, whole ----------------------------------------------


def test_join_replaces_its_own_folder_and_refuses_others(work: Path) -> None:
    out = work / "out"
    assert join(work, out).exit_code == 0
    first = digests(out)
    assert sorted(first) == JOIN_FILES
    (out / ".DS_Store").write_bytes(b"\0")  # what a file manager leaves: no reason to refuse
    assert join(work, out).exit_code == 0  # a previous join's folder is replaced as a whole
    assert digests(out) == first  # ... and the same inputs give the same bytes
    (out / "notes.txt").write_text("mine")
    (out / "joined.csv").write_text("edited")
    result = join(work, out)
    refused(
        result,
        "output-folder-not-ours",
        "holds 2 files join did not write",
        "joined.csv (changed since join wrote it)",
        "notes.txt",
        "--force",
    )
    assert (out / "notes.txt").read_text() == "mine"
    result = run("join", work / "alice.csv", work / "bob.csv", "--rule", work / "rule.yaml", "--out", out, "--force")
    assert result.exit_code == 0, result.stderr
    assert "deleted joined.csv, notes.txt" in result.stderr
    assert digests(out) == first
    (out / "sub").mkdir()
    refused(join(work, out, "--force"), "output-folder-not-ours", "holds the folder sub")
    assert (out / "sub").is_dir()


def test_join_into_a_folder_of_an_older_join(work: Path) -> None:
    out = work / "out"
    assert join(work, out).exit_code == 0
    summary = json.loads((out / "summary.json").read_text())
    del summary["run"]
    (out / "summary.json").write_text(json.dumps(summary))
    refused(run("score", out), "joindir-no-run-record", "has no run record", "run irr-audit join again")
    assert join(work, out).exit_code == 0  # an older join's files are join's: replaced without --force
    assert run("score", out, "-q").exit_code == 0


def test_a_failed_join_leaves_the_old_folder(work: Path, monkeypatch) -> None:
    out = work / "out"
    assert join(work, out).exit_code == 0
    before = digests(out)
    shutil.copy(work / "bob.csv", work / "carol.csv")
    real_write = runfolder._write_new_file
    for written in range(len(JOIN_FILES)):  # the disk fills up after 0, 1, ... 5 of the 6 files
        calls: list[Path] = []

        def full_disk(path: Path, data: bytes, calls=calls, written=written) -> None:
            if len(calls) == written:
                raise OSError(28, "No space left on device")
            calls.append(path)
            real_write(path, data)

        monkeypatch.setattr(runfolder, "_write_new_file", full_disk)
        result = join(work, out, sheets=("alice.csv", "bob.csv", "carol.csv"))
        monkeypatch.undo()
        refused(result, "output-unwritable", f"cannot write into {out}: No space left on device")
        assert digests(out) == before
        assert sorted(os.listdir(work)) == ["alice.csv", "bob.csv", "carol.csv", "out", "rule.yaml"]


def test_an_interrupted_swap_puts_the_old_folder_back(work: Path, monkeypatch) -> None:
    out = work / "out"
    assert join(work, out).exit_code == 0
    before = digests(out)
    real_rename = os.rename

    def interrupted(source: Path, target: Path) -> None:
        if target == out and ".partial-" in Path(source).name:
            raise KeyboardInterrupt  # the old folder is aside, the new one not yet in place
        real_rename(source, target)  # putting the old folder back is not interrupted

    monkeypatch.setattr(os, "rename", interrupted)
    shutil.copy(work / "bob.csv", work / "carol.csv")
    assert join(work, out, sheets=("alice.csv", "carol.csv")).exit_code != 0  # click: "Aborted!"
    assert digests(out) == before
    assert [path.name for path in work.iterdir() if path.name.startswith(".")] == []


KILLED_WRITER = """
import os, sys
from pathlib import Path
from irr_audit.io import runfolder

steps_left = int(sys.argv[2])

def killed_after(step):
    def wrapped(*args):
        global steps_left
        if steps_left == 0:
            os._exit(9)  # kill -9: no clean-up runs
        steps_left -= 1
        return step(*args)
    return wrapped

runfolder._write_new_file = killed_after(runfolder._write_new_file)
os.rename = killed_after(os.rename)
runfolder.replace_folder(Path(sys.argv[1]), {"joined.csv": b"new 1", "sheets/alice.csv": b"new 2",
                                             "summary.json": b"new 3"})
"""


def test_a_kill_at_any_step_leaves_the_old_folder_the_new_one_or_none_and_a_leftover(tmp_path: Path) -> None:
    old = {"joined.csv": b"old 1", "summary.json": b"old 3", "extra.csv": b"old 4"}
    new = {"joined.csv": b"new 1", "sheets/alice.csv": b"new 2", "summary.json": b"new 3"}
    outcomes = set()
    for steps in range(6):  # 3 files, the old folder aside, the new one in; 5: not killed
        case = tmp_path / str(steps)
        out = case / "out"
        runfolder.replace_folder(out, old)
        done = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(out), str(steps)], cwd=ROOT)
        assert done.returncode == (9 if steps < 5 else 0)
        found = (
            {path.relative_to(out).as_posix(): path.read_bytes() for path in out.rglob("*") if path.is_file()}
            if out.exists()
            else None
        )
        leftovers = sorted(path for path in case.iterdir() if path.name.startswith(".out."))
        assert found in (old, new, None), (steps, found)
        if found is None:  # killed between the two renames: the old folder waits, whole, beside
            aside = [path for path in leftovers if runfolder.REPLACED_MARK in path.name]
            assert len(aside) == 1
            assert {path.name: path.read_bytes() for path in aside[0].iterdir()} == old
        assert all(path.name.startswith(".out.") for path in leftovers)
        outcomes.add("old" if found == old else "new" if found == new else "none")
        assert sorted(path.name for path in case.iterdir() if path not in leftovers) == (
            [] if found is None else ["out"]
        )
    assert outcomes == {"old", "none", "new"}


# --- 3. the run record ---------------------------------------------------------------------------


def test_the_run_record_lists_every_file_and_an_id_from_their_content(work: Path) -> None:
    assert join(work, work / "a").exit_code == 0
    assert join(work, work / "b").exit_code == 0
    run_a = json.loads((work / "a" / "summary.json").read_text())["run"]
    assert run_a["files"] == {name: sha for name, sha in digests(work / "a").items() if name != "summary.json"}
    listing = "".join(f"{name}\t{sha}\n" for name, sha in sorted(run_a["files"].items()))
    assert run_a["id"] == hashlib.sha256(listing.encode()).hexdigest()
    assert (work / "a" / "summary.json").read_bytes() == (work / "b" / "summary.json").read_bytes()
    shutil.copy(work / "bob.csv", work / "carol.csv")
    assert join(work, work / "c", sheets=("alice.csv", "carol.csv")).exit_code == 0
    assert json.loads((work / "c" / "summary.json").read_text())["run"]["id"] != run_a["id"]


def test_a_folder_mixing_two_joins_is_refused(work: Path) -> None:
    shutil.copy(work / "bob.csv", work / "carol.csv")
    assert join(work, work / "one").exit_code == 0
    assert join(work, work / "two", sheets=("alice.csv", "carol.csv")).exit_code == 0
    shutil.copy(work / "two" / "joined.csv", work / "one" / "joined.csv")  # what a kill mid-write used to leave
    run_id = json.loads((work / "one" / "summary.json").read_text())["run"]["id"]
    for command in (["score"], ["report"], ["freeze", "--into", work / "audits"]):
        result = run(command[0], work / "one", *command[1:])
        refused(
            result,
            "joindir-not-one-run",
            f"{work / 'one'} does not hold one join run: joined.csv has sha256",
            f"summary.json records run {run_id[:12]}",
        )
    assert not (work / "audits").exists()
    (work / "one" / "joined.csv").unlink()
    refused(run("score", work / "one"), "joindir-not-one-run", "joined.csv is missing")
    (work / "one" / "joined.csv").symlink_to(work / "two" / "joined.csv")
    refused(run("score", work / "one"), "joindir-not-one-run", "joined.csv is a symbolic link")


def test_a_sample_folder_mixing_two_draws_is_refused(tmp_path: Path) -> None:
    rule = COLLECTOR / "rule_v1.yaml"

    def draw(out: str, seed: int):
        return run(
            "sample",
            COLLECTOR / "dataset.json",
            "--rule",
            rule,
            "--coders",
            "alice,bob",
            "--size",
            5,
            "--seed",
            seed,
            "--out",
            tmp_path / out,
            "-q",
        )

    assert draw("one", 1).exit_code == 0 and draw("two", 2).exit_code == 0
    one = tmp_path / "one"
    sheets = (one / "sheets" / "alice.csv", one / "sheets" / "bob.csv")
    assert run("join", *sheets, "--rule", rule, "--sample", one, "--out", tmp_path / "j", "-q").exit_code == 0
    assert draw("one", 1).exit_code == 0  # the same draw again: the same bytes, nothing to lose
    refused(draw("one", 2), "output-sample-exists", "differs from what this sample would write")
    shutil.copy(tmp_path / "two" / "ledger.csv", one / "ledger.csv")
    result = run("join", *sheets, "--rule", rule, "--sample", one, "--out", tmp_path / "k")
    refused(result, "sample-dir-not-one-run", "ledger.csv has sha256")
    (one / "notes.txt").write_text("mine")
    refused(draw("one", 1), "output-sample-exists")
    result = run(
        "sample",
        COLLECTOR / "dataset.json",
        "--rule",
        rule,
        "--coders",
        "alice,bob",
        "--size",
        5,
        "--seed",
        1,
        "--out",
        one,
        "--force",
    )
    assert result.exit_code == 0, result.stderr
    assert "replaced or deleted ledger.csv, notes.txt" in result.stderr
    assert digests(one) == {name: sha for name, sha in digests(tmp_path / "one").items() if name != "notes.txt"}
    assert not (one / "notes.txt").exists()
    (one / "sheets" / "carol.csv").write_text("a third coder's sheet")
    refused(draw("one", 1), "output-folder-not-ours", "holds 1 file this sample would not write: sheets/carol.csv")
    (one / "sheets" / "carol.csv").unlink()
    assert run("join", *sheets, "--rule", rule, "--sample", one, "--out", tmp_path / "k", "-q").exit_code == 0


# --- 4. one bundle per audit, however many freezes run at once ------------------------------------


def test_freezes_started_together_make_one_bundle(work: Path) -> None:
    audits = work / "audits"
    command = [
        sys.executable,
        "-m",
        "irr_audit",
        "freeze",
        str(work / "alice.csv"),
        str(work / "bob.csv"),
        "--rule",
        str(work / "rule.yaml"),
        "--into",
        str(audits),
        "-q",
    ]
    processes = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(3)]
    results = [(*process.communicate(timeout=300),) for process in processes]
    results = [(process.returncode, stdout, stderr) for process, (stdout, stderr) in zip(processes, results)]
    bundles = list_bundles(audits)
    assert len(bundles) == 1
    assert sorted(code for code, _, _ in results) == [0, 2, 2]
    assert [stdout.strip().split("  ", 1)[1] for code, stdout, _ in results if code == 0] == [str(bundles[0])]
    for code, _, stderr in results:
        if code == 2:
            assert stderr.startswith(
                f"Error [usage-already-frozen]: these sheets and this rule are already frozen in {bundles[0]}."
            )


def source_of(work: Path):
    return collect_source([work / "alice.csv", work / "bob.csv"], work / "rule.yaml")


def test_a_freeze_waits_for_the_lock_and_then_finds_the_bundle(work: Path, monkeypatch) -> None:
    """Another freeze of the same audit finishes while this one waits for the lock."""
    audits = work / "audits"
    other = frozen(work)  # made elsewhere, then moved in by "the other freeze"
    shutil.move(str(other.parent), str(work / "elsewhere"))
    real_lock = freeze_module.audits_lock

    def lock_after_the_other_freeze(folder: Path, timeout: float):
        shutil.copytree(work / "elsewhere" / other.name, audits / other.name)
        return real_lock(folder, timeout)

    monkeypatch.setattr(freeze_module, "audits_lock", lock_after_the_other_freeze)
    with pytest.raises(IrrAuditError) as error:
        freeze_module.freeze(source_of(work), audits, datetime.now(timezone.utc))
    assert error.value.code == "usage-already-frozen"
    assert str(audits / other.name) in error.value.message
    assert list_bundles(audits) == [audits / other.name]


def test_a_freeze_never_writes_while_another_holds_the_lock(work: Path) -> None:
    audits = work / "audits"
    audits.mkdir()
    held = FileLock(audits / FREEZE_LOCK)
    with held:
        with pytest.raises(OutputError) as error:
            freeze_module.freeze(source_of(work), audits, datetime.now(timezone.utc), lock_timeout=0.05)
    assert error.value.code == "output-audits-busy"
    assert f"another irr-audit freeze holds the lock {audits / FREEZE_LOCK}; waited 0.05 s" in error.value.message
    assert list_bundles(audits) == []
    assert freeze_module.freeze(source_of(work), audits, datetime.now(timezone.utc)).path in list_bundles(audits)


@pytest.mark.parametrize("link", ["hard", "symbolic"])
def test_a_freeze_lock_that_is_a_link_to_a_sheet_is_refused_and_the_sheet_kept(work: Path, link: str) -> None:
    """filelock before version 4 opens its file with O_TRUNC: through a link, that empties the file."""
    audits = work / "audits"
    audits.mkdir()
    if link == "hard":
        os.link(work / "alice.csv", audits / FREEZE_LOCK)
    else:
        (audits / FREEZE_LOCK).symlink_to(work / "alice.csv")
    before = digests(work)
    result = run("freeze", work / "alice.csv", work / "bob.csv", "--rule", work / "rule.yaml", "--into", audits)
    assert result.exit_code == 2, result.output
    assert "Error [output-lock-linked]" in result.output and f"remove {audits / FREEZE_LOCK}" in result.output
    assert digests(work) == before and list_bundles(audits) == []


# --- the library decision -------------------------------------------------------------------------


def test_refuse_unsafe_outputs_is_the_one_decision(work: Path) -> None:
    inputs = [work / "alice.csv", work / "rule.yaml"]
    refuse_unsafe_outputs(inputs, files=[work / "report.md"], folders=[work / "out"])  # nothing to refuse
    for files, folders, code in (
        ([work / "alice.csv"], [], "output-overwrites-input"),
        ([], [work], "output-overwrites-input"),
        ([work], [], "output-is-a-folder"),
        ([], [work / "rule.yaml"], "output-unwritable"),
    ):
        with pytest.raises(OutputError) as error:
            refuse_unsafe_outputs(inputs, files=files, folders=folders)
        assert error.value.code == code
    assert not (work / "report.md").exists() and not (work / "out").exists()
