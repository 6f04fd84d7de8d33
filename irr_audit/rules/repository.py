"""The I/O side of `irr-audit rules`: read rules/, the released versions (a git ref or
the lock file) and the audit-bundle manifests, and hand their bytes to the revision
check (rules.revisions) and the lock (rules.lock).

Git is called with an argument list, never through a shell, and only when --base
is given. When git cannot answer (no repository, no commits yet) the check falls
back to the lock file and says so in a note.
"""

from __future__ import annotations

import os
import posixpath
import re
import stat
import subprocess
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from irr_audit.errors import IrrAuditError, UsageError
from irr_audit.io.files import check_name, check_usable, resolved, sha256_digest
from irr_audit.io.outputs import write_text_atomic
from irr_audit.io.runfolder import BUNDLE_MANIFEST
from irr_audit.rules.codebook import CODEBOOKS_FOLDER
from irr_audit.rules.load import MAX_RULE_BYTES
from irr_audit.rules.lock import LOCK_FILE_NAME, parse_lock, parse_lock_codebooks
from irr_audit.rules.revisions import RULE_FILE_NAME, Baseline

MAX_MANIFEST_BYTES = 50_000_000
GIT_TIMEOUT_SECONDS = 120
# Set by git hooks (pre-commit runs inside one); they would point git at another
# repository than the one holding the rules folder.
GIT_LOCATION_VARIABLES = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR")
RULE_SUFFIXES = (".yaml", ".yml")
SYMLINK_MODE = "120000"
MAX_LINKS = 8  # links followed from one path, as a guard against a loop


@dataclass(frozen=True)
class CheckInputs:
    current: dict[str, bytes]
    baselines: list[Baseline]
    manifests: dict[str, bytes]
    notes: list[str] = field(default_factory=list)
    # Codebooks (codebooks/<name>/v<N>.yaml), their released versions and the rule files each pinned.
    codebooks: dict[str, bytes] = field(default_factory=dict)
    codebook_baselines: list[Baseline] = field(default_factory=list)
    pins: dict[str, dict[str, str]] = field(default_factory=dict)
    codebooks_label: str = CODEBOOKS_FOLDER

    @property
    def compared_with(self) -> str:
        if not self.baselines:
            return "no released versions recorded"
        return "released versions compared with " + " and ".join(b.source for b in self.baselines)


def label_of(path: Path) -> str:
    return path.as_posix()


def default_lock_path(rules_dir: Path) -> Path:
    return rules_dir / LOCK_FILE_NAME


def default_codebooks_dir(rules_dir: Path) -> Path:
    """``codebooks`` beside the rules folder: ``<root>/codebooks`` for ``<root>/rules``."""
    return rules_dir.parent / CODEBOOKS_FOLDER


def gather_check_inputs(
    rules_dir: Path,
    base: str | None,
    lock_path: Path | None,
    audits_dir: Path | None,
    codebooks_dir: Path | None = None,
) -> CheckInputs:
    """What the check reads; with codebooks (``codebooks_dir``, else the default one when it
    exists), their files and released versions too."""
    inputs = _gather_rule_inputs(rules_dir, base, lock_path, audits_dir)
    found = gather_codebooks(rules_dir, codebooks_dir, lock_path, base)
    if found is None:
        return inputs
    codebooks, baselines, pins, label = found
    return CheckInputs(
        inputs.current,
        inputs.baselines,
        inputs.manifests,
        inputs.notes,
        codebooks=codebooks,
        codebook_baselines=baselines,
        pins=pins,
        codebooks_label=label,
    )


def gather_codebooks(
    rules_dir: Path, codebooks_dir: Path | None, lock_path: Path | None, base: str | None = None
) -> tuple[dict[str, bytes], list[Baseline], dict[str, dict[str, str]], str] | None:
    """The codebook files (``codebooks_dir``, else the default folder), their released versions
    (a git ref, the lock file when there is one) and the rule files each released version pinned,
    and the folder as shown; None when there are no codebooks, current or released. A default
    folder that is gone holds no files: its released versions are still read, so that deleting
    the whole folder is reported as removing them, not taken for a project without codebooks."""
    named = codebooks_dir is not None
    codebooks_dir = codebooks_dir or default_codebooks_dir(rules_dir)
    check_usable([codebooks_dir])
    gone = not named and not codebooks_dir.exists() and not codebooks_dir.is_symlink()
    codebooks = {} if gone else read_codebook_files(codebooks_dir)
    baselines: list[Baseline] = []
    pins: dict[str, dict[str, str]] = {}
    lock_path = lock_path or default_lock_path(rules_dir)
    if lock_path.is_file():
        locked, pins = parse_lock_codebooks(read_at_most(lock_path, MAX_MANIFEST_BYTES), label_of(lock_path))
        baselines.append(locked)
    if base is not None:
        git, _, _ = git_baseline(codebooks_dir, base)
        if git is not None:
            baselines.insert(0, git)
    if gone and not any(baseline.digests for baseline in baselines):
        return None  # no codebooks now, none released: a project of rules alone
    return codebooks, baselines, pins, label_of(codebooks_dir)


def _gather_rule_inputs(
    rules_dir: Path, base: str | None, lock_path: Path | None, audits_dir: Path | None
) -> CheckInputs:
    check_usable([rules_dir, lock_path, audits_dir])
    current = read_rule_files(rules_dir)
    named = lock_path is not None  # a lock the user named must exist; the default one may not
    lock_path = lock_path or default_lock_path(rules_dir)
    lock = read_lock(lock_path, named=named)
    manifests = read_manifests(audits_dir) if audits_dir is not None else {}
    shown_lock = label_of(lock_path)
    if base is None:
        if lock is not None:
            note = f"no --base given: comparing released versions with the lock file {shown_lock}."
        else:
            note = no_baseline_note(shown_lock, "no --base given and")
        return CheckInputs(current, [lock] if lock else [], manifests, [note])
    git, reason, git_notes = git_baseline(rules_dir, base)
    if git is not None:
        return CheckInputs(current, [git, *([lock] if lock else [])], manifests, git_notes)
    if lock is not None:
        note = (
            f"{reason}, so --base {base} cannot be read: comparing released versions with the "
            f"lock file {shown_lock} instead."
        )
    else:
        note = no_baseline_note(shown_lock, f"{reason}, so --base {base} cannot be read, and")
    return CheckInputs(current, [lock] if lock else [], manifests, [note])


def no_baseline_note(shown_lock: str, why: str) -> str:
    return (
        f"{why} there is no lock file ({shown_lock}): every version counts as new and no released "
        "version is protected. Run `irr-audit rules lock` to record the released versions."
    )


# --- rule files -----------------------------------------------------------------


def rule_folder_files(rules_dir: Path) -> list[Path]:
    """The files one level down in the rules folder (`<rule>/<file>`): what `rules lock` reads."""
    check_usable([rules_dir])
    return sorted(rules_dir.glob("*/*"))


def read_rule_files(rules_dir: Path) -> dict[str, bytes]:
    """`<rule>/<file>.yaml` under the rules folder, keyed by that relative path."""
    check_usable([rules_dir])
    if not rules_dir.is_dir():
        raise UsageError(
            f"{label_of(rules_dir)} is not a folder.",
            hint="pass the folder that holds <rule>/v<version>.yaml files, e.g. rules/.",
            code="usage-rules-dir",
        )
    current: dict[str, bytes] = {}
    for folder in sorted(_children(rules_dir)):
        if folder.is_dir() and not folder.name.startswith("."):
            for path in sorted(_children(folder)):
                if path.is_file() and path.suffix in RULE_SUFFIXES:
                    check_name(path, "rule file")  # its name goes into messages and the lock file
                    current[f"{folder.name}/{path.name}"] = read_at_most(path, MAX_RULE_BYTES + 1)
    if not current:
        raise UsageError(
            f"{label_of(rules_dir)} holds no rule files (<rule>/v<version>.yaml).",
            hint="pass the folder that holds the rule folders, e.g. rules/.",
            code="usage-no-rules",
        )
    return current


def read_codebook_files(codebooks_dir: Path) -> dict[str, bytes]:
    """``<name>/<file>.yaml`` under the codebooks folder, keyed by that relative path."""
    if not codebooks_dir.is_dir():
        raise UsageError(
            f"{label_of(codebooks_dir)} is not a folder.",
            hint="pass the folder that holds <codebook>/v<version>.yaml files, e.g. codebooks/.",
            code="usage-codebooks-dir",
        )
    current: dict[str, bytes] = {}
    for folder in sorted(_children(codebooks_dir)):
        if folder.is_dir() and not folder.name.startswith("."):
            for path in sorted(_children(folder)):
                if path.is_file() and path.suffix in RULE_SUFFIXES:
                    check_name(path, "codebook file")
                    current[f"{folder.name}/{path.name}"] = read_at_most(path, MAX_RULE_BYTES + 1)
    return current


def read_at_most(path: Path, limit: int) -> bytes:
    # One byte past the limit is enough for the check to say the file is too large.
    try:
        with path.open("rb") as stream:
            return stream.read(limit)
    except OSError as exc:
        raise UsageError(
            f"cannot read {label_of(path)}: {exc.strerror}.",
            hint="check the file's permissions.",
            code="usage-unreadable",
        ) from None


def _children(folder: Path) -> list[Path]:
    try:
        return list(folder.iterdir())
    except OSError as exc:
        raise UsageError(
            f"cannot list {label_of(folder)}: {exc.strerror}.",
            hint="check the folder's permissions.",
            code="usage-unreadable",
        ) from None


# --- the lock file ---------------------------------------------------------------


def read_lock(lock_path: Path, *, named: bool = False) -> Baseline | None:
    """The lock file, or None when there is none: the default lock may be missing, a lock the
    user named (``named``) or a symbolic link to a missing file may not."""
    if not lock_path.exists():
        if not named and not lock_path.is_symlink():
            return None
        raise UsageError(
            f"the lock file {label_of(lock_path)} does not exist"
            f"{' (it is a symbolic link to a missing file)' if lock_path.is_symlink() else ''}.",
            hint="pass --lock FILE of a lock that irr-audit rules lock wrote, or leave out --lock "
            "to use RULES_DIR/rules.lock.",
            code="usage-lock",
        )
    if not lock_path.is_file():
        raise UsageError(
            f"the lock file {label_of(lock_path)} is not a file.", hint="pass --lock FILE.", code="usage-lock"
        )
    return parse_lock(read_at_most(lock_path, MAX_MANIFEST_BYTES), label_of(lock_path))


def write_lock(lock_path: Path, text: str) -> bool:
    """Write the lock file; False when it already says exactly this."""
    if lock_path.is_file() and read_at_most(lock_path, MAX_MANIFEST_BYTES) == text.encode("utf-8"):
        return False
    write_text_atomic(lock_path, text)
    return True


# --- audit bundles ---------------------------------------------------------------


def read_manifests(audits_dir: Path) -> dict[str, bytes]:
    """`<AUDITS_DIR>/<bundle>/manifest.json`, keyed by the path shown to the user."""
    if not audits_dir.is_dir():
        raise UsageError(
            f"--audits {label_of(audits_dir)} is not a folder.",
            hint="pass the folder given to irr-audit freeze --into.",
            code="usage-audits-dir",
        )
    manifests: dict[str, bytes] = {}
    for bundle in sorted(_children(audits_dir)):
        manifest = bundle / BUNDLE_MANIFEST
        # a symlink to a bundle is not a bundle of this folder (freeze's list_bundles skips it too):
        # read, it would count that bundle twice, or count one kept elsewhere
        if bundle.is_dir() and not bundle.is_symlink() and not bundle.name.startswith(".") and _is_file(manifest):
            manifests[label_of(manifest)] = read_at_most(manifest, MAX_MANIFEST_BYTES)
    return manifests


def _is_file(path: Path) -> bool:
    """Path.is_file, with a folder on the way that cannot be entered refused by name (not a traceback)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:
        raise UsageError(
            f"cannot read {label_of(path)}: {exc.strerror}.",
            hint="check the permissions of the bundle folder (chmod -R u+rX it).",
            code="usage-unreadable",
        ) from None


# --- git ----------------------------------------------------------------------------


def git_baseline(rules_dir: Path, base: str) -> tuple[Baseline | None, str, list[str]]:
    """The rule files as they were at ``base`` (and notes on what could not be read), or
    (None, why not, []) when git has no answer.

    A ref that does not exist in a repository with history is a usage error, not a
    fallback: a typo in CI must not quietly weaken the check.

    A rule file that is a symlink is compared by what it points to, as the current
    file is read: git stores a link as the text of its target, which would make an
    unchanged link look like an edited file.
    """
    if base.startswith("-") or not base.strip():
        raise UsageError(
            f"--base {base!r} is not a git ref.",
            hint="pass a branch, tag or commit, e.g. --base origin/main.",
            code="usage-base",
        )
    found = _git(["rev-parse", "--show-toplevel"], nearest_folder(rules_dir))  # (a folder deleted since base)
    if found is None:
        return None, "git is not installed", []
    if found.returncode != 0:
        message = _first_line(found.stderr)
        if "not a git repository" in message:
            return None, f"{label_of(rules_dir)} is not in a git repository", []
        raise UsageError(
            f"git cannot read the repository of {label_of(rules_dir)}: {message}",
            hint="fix what git says (e.g. git config --global --add safe.directory DIR).",
            code="usage-git",
        )
    root = Path(os.fsdecode(found.stdout.strip()))
    commit = _resolve_commit(root, base)
    if commit is None:
        return None, "the repository has no commits yet", []
    prefix = _relative_posix(rules_dir, root)
    digests: dict[str, str] = {}
    notes: list[str] = []
    for key, (path, mode) in _released_paths(root, commit, prefix).items():
        data = _released_bytes(root, commit, path, mode)
        if data is None:
            notes.append(
                f"{path} is a symlink at {base} to a file outside the repository (or to none), so its "
                "released content cannot be read from git; it is checked against the lock file only."
            )
        else:
            digests[key] = sha256_digest(data)
    return Baseline(source=f"git ref {base} ({commit[:12]})", digests=digests), "", notes


def nearest_folder(path: Path) -> Path:
    """``path`` when it is a folder, else its nearest parent that is: where git can run to read
    what a folder deleted since ``--base`` held there."""
    for folder in (path, *path.parents):
        if folder.is_dir():
            return folder
    return path


def _resolve_commit(root: Path, base: str) -> str | None:
    resolved = _git(["rev-parse", "--verify", "--quiet", f"{base}^{{commit}}"], root)
    if resolved is not None and resolved.returncode == 0:
        return os.fsdecode(resolved.stdout.strip())
    head = _git(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], root)
    if head is not None and head.returncode != 0:
        return None
    raise UsageError(
        f"--base {base} is no commit in the repository at {label_of(root)}.",
        hint="check the name; in CI fetch the base first (actions/checkout with fetch-depth: 0, "
        "or git fetch origin main).",
        code="usage-base",
    )


def _released_paths(root: Path, commit: str, prefix: str) -> dict[str, tuple[str, str]]:
    """key (<rule>/v<N>.yaml) -> (path in the repository, git mode), for each version file at ``commit``."""
    listed = _git(["ls-tree", "-r", "-z", "--full-tree", commit, "--", prefix or "."], root)
    if listed is None or listed.returncode != 0:
        raise UsageError(
            f"git could not list {prefix or '.'} at {commit[:12]}: "
            f"{_first_line(listed.stderr) if listed else 'git is not installed'}",
            hint="check the repository with git status.",
            code="usage-git",
        )
    paths: dict[str, tuple[str, str]] = {}
    for raw in listed.stdout.split(b"\0"):
        entry, _, raw_path = raw.partition(b"\t")
        path = os.fsdecode(raw_path)
        inner = PurePosixPath(path[len(prefix) + 1 :] if prefix else path)
        if path and len(inner.parts) == 2 and RULE_FILE_NAME.fullmatch(inner.name):
            paths[inner.as_posix()] = (path, os.fsdecode(entry.split(b" ")[0]))
    return paths


def _released_bytes(root: Path, commit: str, path: str, mode: str) -> bytes | None:
    """The bytes of ``path`` at ``commit``, through symlinks inside the repository; None
    for a link that leaves the repository, dangles, or loops."""
    for _ in range(MAX_LINKS):
        data = _git_show(root, commit, path)
        if mode != SYMLINK_MODE:
            return data
        target = os.fsdecode(data)
        path = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
        if posixpath.isabs(target) or path == ".." or path.startswith("../"):
            return None
        listed = _git(["ls-tree", "-z", "--full-tree", commit, "--", path], root)
        entry = listed.stdout.split(b"\0")[0] if listed is not None and listed.returncode == 0 else b""
        fields = entry.partition(b"\t")[0].split(b" ")
        if len(fields) != 3 or fields[1] != b"blob":
            return None
        mode = os.fsdecode(fields[0])
    return None


def _git_show(root: Path, commit: str, path: str) -> bytes:
    shown = _git(["show", f"{commit}:{path}"], root)
    if shown is None or shown.returncode != 0:
        raise UsageError(
            f"git could not show {path} at {commit[:12]}.",
            hint="check the repository with git status.",
            code="usage-git",
        )
    return shown.stdout


def _relative_posix(rules_dir: Path, root: Path) -> str:
    try:
        relative = resolved(rules_dir).relative_to(resolved(root))
    except ValueError:
        raise UsageError(
            f"{label_of(rules_dir)} is not inside the git repository at {label_of(root)}.",
            hint="run the check from inside the repository.",
            code="usage-git",
        ) from None
    text = relative.as_posix()
    return "" if text == "." else text


def _git(arguments: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes] | None:
    """Run git in ``cwd``; None when git is not installed."""
    environment = {key: value for key, value in os.environ.items() if key not in GIT_LOCATION_VARIABLES}
    environment["LC_ALL"] = "C"  # English messages: "not a git repository" is matched below
    try:
        return subprocess.run(
            ["git", "-C", str(cwd), *arguments],
            capture_output=True,
            env=environment,
            check=False,
            timeout=GIT_TIMEOUT_SECONDS,
        )
    except FileNotFoundError:
        return None
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise IrrAuditError(
            f"git failed in {label_of(cwd)}: {exc}.", hint="check that git works here (git status).", code="usage-git"
        ) from None


def _first_line(data: bytes) -> str:
    lines = os.fsdecode(data).strip().splitlines()
    return re.sub(r"\s+", " ", lines[0]) if lines else "no message"
