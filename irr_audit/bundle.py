"""Audit bundles: the original sheets, byte for byte, beside the exact rule version
they were coded under and the score computed at freeze time (DOMAIN.md, step 8).

    AUDITS_DIR/<YYYYMMDDTHHMMSSZ>_<rule-id>_v<version>[_<n>]/
      manifest.json        what is frozen: every file's sha256 and size, the score JSON
      manifest.json.sig    an SSH signature of manifest.json, when freeze --sign made one
      sheets/<file name>   the original sheets
      rule/<id>/v<n>.yaml  the rule file
      sample/...           the ledger and missingness log of `irr-audit sample`, when given
      adjudication/...     later consensus records (irr_audit.adjudication); not frozen

A bundle is built in a hidden sibling folder and renamed into place only when
every file and the manifest are on disk, so a crash leaves no half bundle under a
bundle's name. Freeze holds the audits folder's lock (AUDITS_DIR/.freeze.lock) from
the check that the audit is not frozen yet to that rename, so two freezes of one
audit at once make one bundle. Nothing a manifest says is trusted as a path: every member path is
checked to stay inside the bundle, without symlinks.

The bundle's digest, the sha256 of manifest.json's bytes, names the whole frozen
audit; verify checks it against an anchor kept outside the bundle (irr_audit.anchor).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import re
import secrets
import shlex
import shutil
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields
from datetime import datetime, timezone
from pathlib import Path, PureWindowsPath
from typing import Any

from irr_audit import __version__
from irr_audit.anchor import Anchors, listed_problem, sha256_digest
from irr_audit.errors import IrrAuditError, OutputError, UsageError
from irr_audit.join import JoinResult, join_sheets
from irr_audit.limits import DEFAULT_LIMITS, Limits, load_json, resolved
from irr_audit.report import render_json
from irr_audit.rules import Rule, load_rule, parse_rule
from irr_audit.sheets import ColumnChoice, Sheet, SheetOptions, parse_sheet, read_sheets
from irr_audit.signing import SIGNATURE_MAX_BYTES

FORMAT = "irr-audit-bundle/1"
MANIFEST = "manifest.json"
SIGNATURE = "manifest.json.sig"  # beside the manifest: it signs the manifest's bytes, so cannot be listed in it
SHEETS_DIR = "sheets"
RULE_DIR = "rule"
SAMPLE_DIR = "sample"
ADJUDICATION_DIR = "adjudication"
SAMPLE_SUMMARY = "sample.json"
PARTIAL_MARK = ".partial-"
FREEZE_LOCK = ".freeze.lock"  # held by freeze around "is this audit frozen? -> write its bundle"
LOCK_TIMEOUT = 600.0  # seconds a freeze waits for another freeze of the same audits folder
NAME_PATTERN = re.compile(r"(?P<stamp>\d{8}T\d{6}Z)_(?P<rule>[a-z0-9_]+)_v(?P<version>\d+)(?:_(?P<n>\d+))?")
SHA256_PATTERN = re.compile(r"[0-9a-f]{64}")
INTEGRITY_OF = "this manifest as canonical JSON (sorted keys, no spaces, UTF-8) without the integrity key"
# Scores are recomputed by the same code from the same bytes; the tolerance only
# absorbs float noise from a different numpy or CPU, never a changed code.
SCORE_REL_TOL = 1e-12
SCORE_ABS_TOL = 1e-15
NOT_COMPARED = ("tool",)  # the tool's version may differ at verify time; that is not a changed score
# The score keys every bundle has had, with their JSON types: a frozen score without
# them would leave nothing to compare (a key only recomputed is not compared).
REQUIRED_SCORE = {
    "rule": dict,
    "coders": list,
    "categories": list,
    "units": dict,
    "table": list,
    "metrics": dict,
    "available_case": dict,
    "pairs": list,
}
JSON_KINDS = {dict: "an object", list: "a list"}
# Bytes hashed at a time: a file replaced by a huge one is hashed, not loaded whole.
HASH_CHUNK = 1024 * 1024


class BundleError(IrrAuditError):
    code = "bundle-invalid"


# --- small pure pieces -------------------------------------------------------


def utc_text(moment: datetime) -> str:
    """ISO 8601 in UTC to the second: 2024-05-01T12:00:00Z."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def utc_stamp(moment: datetime) -> str:
    """The same instant for a file name that sorts by time: 20240501T120000Z."""
    return moment.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def bundle_name(created: datetime, rule: Rule, n: int = 1) -> str:
    """Bundles sort by time and show the rule and version; ``n`` > 1 only on a clash."""
    name = f"{utc_stamp(created)}_{rule.id}_v{rule.version}"
    return name if n == 1 else f"{name}_{n}"


def shell_path(path: Path | str) -> str:
    """A path as it must be typed in a shell, for hints that show a command."""
    return shlex.quote(str(path))


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def units_digest(unit_ids: Iterable[str]) -> str:
    """sha256 of the sorted unit ids joined by newlines (UTF-8): two audits of the
    same units have the same digest whatever order their sheets list them in."""
    return sha256_hex("\n".join(sorted(unit_ids)).encode("utf-8"))


def canonical_sha256(document: dict[str, Any], without: str) -> str:
    """sha256 of a JSON document without one key, so a document can carry its own digest."""
    rest = {key: value for key, value in document.items() if key != without}
    text = json.dumps(rest, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return sha256_hex(text.encode("utf-8"))


def member_path_problem(text: object) -> str | None:
    """Why a path read from a manifest may not name a file inside the bundle, or None.

    >>> member_path_problem("sheets/alice smith.csv") is None
    True
    >>> member_path_problem("sheets/../../etc/passwd")
    "has a '..', '.' or empty part"
    """
    if not isinstance(text, str) or not text:
        return "is not a non-empty text path"
    if "\\" in text or "\x00" in text:
        return "contains a backslash or NUL"
    if text.startswith("/") or PureWindowsPath(text).drive:
        return "is absolute"
    if any(part in ("", ".", "..") for part in text.split("/")):
        return "has a '..', '.' or empty part"
    return None


def plain_file_name_problem(name: str) -> str | None:
    """Why a sheet's file name cannot be stored as sheets/<name>, or None."""
    if member_path_problem(name) is not None or "/" in name:
        return "is not a plain file name"
    if name == MANIFEST:
        return "is reserved for the manifest"
    return None


def compare_scores(frozen: Any, recomputed: Any, where: str = "") -> tuple[list[str], list[str]]:
    """Differences between the frozen score JSON and a recomputed one, generically:
    every key of the frozen score must be recomputed equal (floats within a tight
    relative tolerance). Keys only in the recomputed score are returned apart: a
    newer tool may compute more coefficients than the one that froze the bundle.

    >>> compare_scores({"k": {"value": 0.7}}, {"k": {"value": 0.7000000000000001}, "alpha": 1})
    ([], ['alpha'])
    >>> compare_scores({"n": 20}, {"n": 19})
    (['n: frozen 20, recomputed 19'], [])
    """
    if isinstance(frozen, dict) and isinstance(recomputed, dict):
        differences: list[str] = []
        new: list[str] = []
        for key in frozen:
            if not where and key in NOT_COMPARED:
                continue
            inner = f"{where}.{key}" if where else str(key)
            if key not in recomputed:
                differences.append(f"{inner}: in the frozen score, not recomputed")
                continue
            more, more_new = compare_scores(frozen[key], recomputed[key], inner)
            differences += more
            new += more_new
        new += [f"{where}.{key}" if where else str(key) for key in recomputed if key not in frozen]
        return differences, new
    if isinstance(frozen, list) and isinstance(recomputed, list) and len(frozen) == len(recomputed):
        differences, new = [], []
        for index, (old, now) in enumerate(zip(frozen, recomputed)):
            more, more_new = compare_scores(old, now, f"{where}[{index}]")
            differences += more
            new += more_new
        return differences, new
    if _same_value(frozen, recomputed):
        return [], []
    return [f"{where or '(score)'}: frozen {_short(frozen)}, recomputed {_short(recomputed)}"], []


def _same_value(frozen: Any, recomputed: Any) -> bool:
    if isinstance(frozen, bool) or isinstance(recomputed, bool):
        return frozen is recomputed
    if isinstance(frozen, int) and isinstance(recomputed, int):
        return frozen == recomputed  # counts are exact; a tolerance would let 10**13 + 1 pass for 10**13
    if isinstance(frozen, (int, float)) and isinstance(recomputed, (int, float)):
        try:
            return math.isclose(frozen, recomputed, rel_tol=SCORE_REL_TOL, abs_tol=SCORE_ABS_TOL)
        except OverflowError:  # an integer beyond any float cannot be close to a computed value
            return False
    return type(frozen) is type(recomputed) and frozen == recomputed


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."


# --- the manifest --------------------------------------------------------------


@dataclass(frozen=True)
class FrozenFile:
    """One file of the bundle: its path inside the bundle and its bytes."""

    path: str
    data: bytes

    def record(self) -> dict[str, Any]:
        return {"path": self.path, "sha256": sha256_hex(self.data), "size": len(self.data)}


def rule_member(rule: Rule) -> str:
    return f"{RULE_DIR}/{rule.id}/v{rule.version}.yaml"


def build_manifest(
    *,
    name: str,
    created: datetime,
    join: JoinResult,
    files: list[FrozenFile],
    score: dict[str, Any],
    columns: ColumnChoice,
    recodes: dict[str, Any] | None,
    sample_files: list[str] | None,
    sample_ids: list[str] | None,
) -> dict[str, Any]:
    """The manifest of a new bundle. Pure."""
    rule = join.rule
    by_path = {file.path: file for file in files}
    manifest: dict[str, Any] = {
        "format": FORMAT,
        "name": name,
        "created": utc_text(created),
        "tool_version": __version__,
        "rule": {"id": rule.id, "version": rule.version, "digest": rule.digest, "file": rule_member(rule)},
        "sheets": [
            {
                "file": f"{SHEETS_DIR}/{sheet.name}",
                "coder": sheet.coder,
                "sha256": sha256_hex(by_path[f"{SHEETS_DIR}/{sheet.name}"].data),
                "size": len(by_path[f"{SHEETS_DIR}/{sheet.name}"].data),
            }
            for sheet in join.sheets
        ],
        "files": sorted((file.record() for file in files), key=lambda record: record["path"]),
        "units": {"count": len(join.unit_ids), "ids_sha256": units_digest(join.unit_ids)},
        "recodes": recodes,
        "sample": None if sample_files is None else sample_entry(sample_files, sample_ids or []),
        "columns": asdict(columns),
        "score": score,
    }
    manifest["integrity"] = {"sha256": canonical_sha256(manifest, "integrity"), "of": INTEGRITY_OF}
    return manifest


def sample_entry(files: list[str], sample_ids: list[str]) -> dict[str, Any]:
    """The manifest's `sample`: the frozen files of `irr-audit sample`; the audit's
    units are exactly the sample's ids, read back from sample/sample.json."""
    return {
        "files": files,
        "summary": f"{SAMPLE_DIR}/{SAMPLE_SUMMARY}",
        "ids": {"count": len(sample_ids), "ids_sha256": units_digest(sample_ids)},
        "restricts_units": True,
    }


def sheet_options(columns: dict[str, Any] | None) -> ColumnChoice:
    """The sheet-reading options a manifest recorded (unknown keys from a newer tool are ignored)."""
    known = {field.name for field in fields(ColumnChoice)}
    return ColumnChoice(**{key: value for key, value in (columns or {}).items() if key in known})


def non_finite_numbers(document: Any) -> list[str]:
    """Where a parsed JSON document holds NaN or an infinity, which Python's json module
    reads but JSON does not allow (and no score freeze writes holds). Pure.

    >>> non_finite_numbers({"score": {"po": float("nan")}, "n": [1, float("-inf")]})
    ['n[1] is -Infinity', 'score.po is NaN']
    """
    found, pending = [], [("", document)]
    while pending:  # a loop, not recursion: a nested document cannot exhaust the stack here
        where, value = pending.pop()
        if isinstance(value, float) and not math.isfinite(value):
            shown = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
            found.append(f"{where or '(the document)'} is {shown}")
        elif isinstance(value, dict):
            pending += [(f"{where}.{key}" if where else str(key), inner) for key, inner in value.items()]
        elif isinstance(value, list):
            pending += [(f"{where}[{index}]", inner) for index, inner in enumerate(value)]
    return sorted(found)


def manifest_problems(manifest: Any) -> list[str]:
    """What is wrong with a manifest's structure, as short sentences. Pure."""
    if not isinstance(manifest, dict):
        return ["is not a JSON object"]
    non_finite = non_finite_numbers(manifest)
    if non_finite:
        more = f" (and {len(non_finite) - 1} more)" if len(non_finite) > 1 else ""
        return [f"{non_finite[0]}{more}, which JSON does not allow"]
    problems: list[str] = []
    if manifest.get("format") != FORMAT:
        problems.append(f"format is {manifest.get('format')!r}, expected {FORMAT!r}")
    if not isinstance(manifest.get("name"), str) or not NAME_PATTERN.fullmatch(manifest["name"]):
        problems.append(f"name {manifest.get('name')!r} is not a bundle name (<time>_<rule>_v<version>)")
    for key in ("created", "tool_version"):
        if not isinstance(manifest.get(key), str):
            problems.append(f"{key} is missing")
    problems += _rule_problems(manifest.get("rule"))
    problems += _file_list_problems(manifest.get("files"))
    problems += _sheet_list_problems(manifest.get("sheets"))
    units = manifest.get("units")
    if not (isinstance(units, dict) and _is_count(units.get("count")) and _is_sha(units.get("ids_sha256"))):
        problems.append("units must have a count and an ids_sha256")
    recodes = manifest.get("recodes", "absent")
    if recodes is not None and not (
        isinstance(recodes, dict)
        and isinstance(recodes.get("bundle"), str)
        and NAME_PATTERN.fullmatch(recodes["bundle"])
        and _is_sha(recodes.get("ids_sha256"))
    ):
        problems.append("recodes must be null or name a bundle and its units' ids_sha256")
    problems += _sample_problems(manifest.get("sample", "absent"))
    columns = manifest.get("columns", {})
    if not isinstance(columns, dict) or not all(isinstance(value, (str, type(None))) for value in columns.values()):
        problems.append("columns must map sheet options (id_column, code_column) to text or null")
    problems += _score_problems(manifest.get("score"))
    integrity = manifest.get("integrity")
    if not (isinstance(integrity, dict) and _is_sha(integrity.get("sha256"))):
        problems.append("integrity.sha256 is missing")
    return problems


def _sample_problems(sample: Any) -> list[str]:
    if sample is None:
        return []
    summary = f"{SAMPLE_DIR}/{SAMPLE_SUMMARY}"
    if not isinstance(sample, dict) or not isinstance(sample.get("files"), list):
        return ["sample must be null or list its files under sample/"]
    problems = []
    for position, path in enumerate(sample["files"]):
        why = member_path_problem(path)
        if why is not None:
            problems.append(f"sample.files[{position}] {path!r} {why}")
        elif not path.startswith(f"{SAMPLE_DIR}/") or path.count("/") != 1:
            problems.append(f"sample.files[{position}] {path!r} is not directly in {SAMPLE_DIR}/")
    if sample.get("summary") != summary or summary not in sample["files"]:
        problems.append(f"sample.summary must be {summary}, one of sample.files")
    ids = sample.get("ids")
    if not (isinstance(ids, dict) and _is_count(ids.get("count")) and _is_sha(ids.get("ids_sha256"))):
        problems.append("sample.ids must have a count and an ids_sha256")
    if sample.get("restricts_units") is not True:
        problems.append("sample.restricts_units must be true")
    return problems


def _score_problems(score: Any) -> list[str]:
    if not isinstance(score, dict):
        return ["score is missing"]
    return [
        f"score.{key} is missing" if key not in score else f"score.{key} is not {JSON_KINDS[kind]}"
        for key, kind in REQUIRED_SCORE.items()
        if not isinstance(score.get(key), kind)
    ]


def _rule_problems(rule: Any) -> list[str]:
    if not isinstance(rule, dict):
        return ["rule is missing"]
    problems = []
    if not isinstance(rule.get("id"), str) or not re.fullmatch(r"[a-z0-9_]+", rule["id"]):
        problems.append("rule.id is not a rule id")
    if not _is_count(rule.get("version")):
        problems.append("rule.version is not a version number")
    if not isinstance(rule.get("digest"), str) or not _is_sha(rule["digest"].removeprefix("sha256:")):
        problems.append("rule.digest is not sha256:<hex>")
    if not problems and rule.get("file") != f"{RULE_DIR}/{rule['id']}/v{rule['version']}.yaml":
        problems.append(f"rule.file must be {RULE_DIR}/{rule['id']}/v{rule['version']}.yaml")
    return problems


def _file_list_problems(files: Any) -> list[str]:
    if not isinstance(files, list):
        return ["files is missing"]
    problems, seen = [], set()
    for position, record in enumerate(files):
        if not (isinstance(record, dict) and _is_sha(record.get("sha256")) and _is_count(record.get("size"))):
            problems.append(f"files[{position}] needs a path, a sha256 and a size")
            continue
        path = record.get("path")
        why = member_path_problem(path)
        if why is not None:
            problems.append(f"files[{position}].path {path!r} {why}")
        elif path in (MANIFEST, SIGNATURE) or path.split("/")[0] == ADJUDICATION_DIR:
            problems.append(f"files[{position}].path {path!r} is not a frozen file")
        elif path in seen:
            problems.append(f"files lists {path!r} twice")
        seen.add(path)
    return problems


def _sheet_list_problems(sheets: Any) -> list[str]:
    if not isinstance(sheets, list) or len(sheets) < 2:
        return ["sheets must list two or more sheets"]
    problems = []
    for position, record in enumerate(sheets):
        if not (isinstance(record, dict) and isinstance(record.get("coder"), str) and _is_sha(record.get("sha256"))):
            problems.append(f"sheets[{position}] needs a file, a coder and a sha256")
            continue
        path = record.get("file")
        why = member_path_problem(path)
        if why is not None:
            problems.append(f"sheets[{position}].file {path!r} {why}")
        elif not path.startswith(f"{SHEETS_DIR}/") or path.count("/") != 1:
            problems.append(f"sheets[{position}].file {path!r} is not directly in {SHEETS_DIR}/")
    return problems


def _is_sha(value: Any) -> bool:
    return isinstance(value, str) and SHA256_PATTERN.fullmatch(value) is not None


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def manifest_consistency_problems(manifest: dict[str, Any]) -> list[str]:
    """Cross-checks within a structurally valid manifest. Pure."""
    files = {record["path"]: record for record in manifest["files"]}
    problems = []
    rule = manifest["rule"]
    if rule["file"] not in files:
        problems.append(f"rule.file {rule['file']} is not in the file list")
    elif rule["digest"] != "sha256:" + files[rule["file"]]["sha256"]:
        problems.append("rule.digest differs from the rule file's sha256 in the file list")
    for sheet in manifest["sheets"]:
        record = files.get(sheet["file"])
        if record is None:
            problems.append(f"sheet {sheet['file']} is not in the file list")
        elif record["sha256"] != sheet["sha256"]:
            problems.append(f"sheet {sheet['file']} has another sha256 than in the file list")
    for path in (manifest.get("sample") or {}).get("files", []):
        if path not in files:
            problems.append(f"sample file {path} is not in the file list")
    return problems


# --- paths inside a bundle -----------------------------------------------------


def member(bundle: Path, path: str) -> Path:
    """The file a manifest path names, refused when it would leave the bundle
    or pass through a symlink."""
    why = member_path_problem(path)
    if why is None:
        why = symlink_problem(bundle, path)
    if why is None and bundle.joinpath(*path.split("/")).exists() and not bundle.joinpath(*path.split("/")).is_file():
        why = "is not a file"  # a folder, or a pipe that would block the read
    if why is not None:
        raise BundleError(
            f"bundle {bundle}: the manifest's path {path!r} {why}.",
            hint=f"the bundle was altered; run irr-audit verify {shell_path(bundle)} to see every change.",
            code="bundle-unsafe-path",
        )
    return bundle.joinpath(*path.split("/"))


def symlink_problem(bundle: Path, path: str) -> str | None:
    current = bundle
    for part in path.split("/"):
        current = current / part
        if current.is_symlink():
            return f"passes through the symlink {current.relative_to(bundle).as_posix()}"
    return None


def is_bundle(path: Path) -> bool:
    return path.is_dir() and (path / MANIFEST).is_file()


def is_partial(path: Path) -> bool:
    """A folder that freeze was still building when it stopped."""
    return path.name.startswith(".") and PARTIAL_MARK in path.name


def list_bundles(audits_dir: Path) -> list[Path]:
    """The finished bundles in an audits folder, oldest first (names sort by time)."""
    if not audits_dir.is_dir():
        return []
    return sorted(
        child
        for child in audits_dir.iterdir()
        if not child.name.startswith(".") and not child.is_symlink() and is_bundle(child)
    )


def bundle_files(bundle: Path, unlisted: list[OSError] | None = None) -> Iterator[str]:
    """Every file and symlink in the bundle as a POSIX path, except the manifest, its
    signature and the adjudication folder (which are checked on their own). A folder
    that cannot be listed is added to ``unlisted``: what it holds is not known."""
    for root, folders, files in os.walk(bundle, onerror=unlisted.append if unlisted is not None else None):
        at = Path(root).relative_to(bundle)
        for folder in list(folders):
            if (Path(root) / folder).is_symlink():
                folders.remove(folder)
                yield (at / folder).as_posix()
            elif at == Path(".") and folder == ADJUDICATION_DIR:
                folders.remove(folder)
        for file in files:
            if at == Path(".") and file in (MANIFEST, SIGNATURE):
                continue
            yield (at / file).as_posix()


def load_manifest_json(bundle: Path) -> tuple[bytes, Any]:
    """The manifest's bytes and parsed JSON; raises ValueError when it is not JSON."""
    data = (bundle / MANIFEST).read_bytes()
    return data, load_json(data, f"{bundle / MANIFEST}", own_file=True)


def read_manifest(bundle: Path) -> dict[str, Any]:
    """A bundle's manifest, checked (structure, integrity hash), for commands that use the bundle."""
    if not is_bundle(bundle):
        raise not_a_bundle(bundle)
    if (bundle / MANIFEST).is_symlink():
        raise _altered(bundle, f"{MANIFEST} is a symlink")
    try:
        _, manifest = load_manifest_json(bundle)
    except (OSError, ValueError) as exc:
        raise _altered(bundle, f"{MANIFEST} cannot be read as JSON ({type(exc).__name__})") from None
    problems = manifest_problems(manifest)
    if not problems and manifest["integrity"]["sha256"] != canonical_sha256(manifest, "integrity"):
        problems = ["was edited after freezing (its integrity hash does not match)"]
    problems += [] if problems else manifest_consistency_problems(manifest)
    if problems:
        raise _altered(bundle, f"{MANIFEST} {problems[0]}")
    return manifest


def not_a_bundle(path: Path) -> BundleError:
    return BundleError(
        f"{path} is not an audit bundle (it has no {MANIFEST}).",
        hint="pass a folder that irr-audit freeze created, e.g. audits/20240501T120000Z_<rule>_v1.",
        code="bundle-not-found",
    )


def _altered(bundle: Path, what: str) -> BundleError:
    return BundleError(
        f"bundle {bundle} was altered: {what}.",
        hint=f"run irr-audit verify {shell_path(bundle)} to see every change; restore the bundle from a copy.",
        code="bundle-altered",
    )


# --- reading a bundle as audit input ----------------------------------------------


def join_files(bundle: Path, manifest: dict[str, Any], limits: Limits = DEFAULT_LIMITS) -> JoinResult:
    """Join the frozen sheets under the frozen rule (and sample), as freeze did."""
    rule = parse_rule(_member_bytes(bundle, manifest["rule"]["file"]), manifest["rule"]["file"], limits)
    options = SheetOptions(**asdict(sheet_options(manifest.get("columns"))), limits=limits)
    sheets = [
        parse_sheet(_member_bytes(bundle, record["file"]), member(bundle, record["file"]), options)
        for record in manifest["sheets"]
    ]
    return join_sheets(sheets, rule, sample_ids=frozen_sample_ids(bundle, manifest))


def frozen_sample_ids(bundle: Path, manifest: dict[str, Any]) -> list[str] | None:
    if not manifest.get("sample"):
        return None
    from irr_audit.sampling import read_sample

    member(bundle, manifest["sample"]["summary"])  # refuses a symlinked sample folder
    return list(read_sample(bundle / SAMPLE_DIR).ids)


def _member_bytes(bundle: Path, path: str) -> bytes:
    try:
        return member(bundle, path).read_bytes()
    except OSError as exc:
        raise _altered(bundle, f"{path} cannot be read ({exc.strerror})") from None


def check_frozen_files(bundle: Path, manifest: dict[str, Any]) -> None:
    """Raise on the first frozen file that is not as frozen (verify lists them all)."""
    for record in manifest["files"]:
        if sha256_hex(_member_bytes(bundle, record["path"])) != record["sha256"]:
            raise _altered(bundle, f"{record['path']} changed since it was frozen")


def join_bundle(bundle: Path, limits: Limits = DEFAULT_LIMITS) -> JoinResult:
    """`score BUNDLE` and `report BUNDLE`: the frozen audit, checked unchanged first."""
    manifest = read_manifest(bundle)
    check_frozen_files(bundle, manifest)
    return join_files(bundle, manifest, limits)


# --- freeze ------------------------------------------------------------------------


@dataclass(frozen=True)
class FreezeSource:
    """What freeze copies: the rule and sheet bytes exactly as read, and their join."""

    rule_data: bytes
    sheet_data: tuple[bytes, ...]
    columns: ColumnChoice
    join: JoinResult
    sample: Path | None = None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class FreezeResult:
    path: Path
    manifest: dict[str, Any]
    notes: tuple[str, ...]


def collect_source(
    inputs: list[Path],
    rule_path: Path | None,
    id_column: str | None = None,
    code_column: str | None = None,
    sample: Path | None = None,
    worksheet: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> FreezeSource:
    """Read a join folder, or sheets + rule, keeping the bytes that were parsed. With a
    sample (given, or the one `join --sample` used) the units are the sample's ids."""
    from irr_audit.joindir import RULE_COPY, SUMMARY, is_join_dir, read_join_dir, read_join_sample_ids

    if len(inputs) == 1 and is_bundle(inputs[0]):
        raise UsageError(
            f"{inputs[0]} is already an audit bundle.",
            hint="freeze takes the sheets or a join folder; to re-code the bundle's units under a revised "
            f"rule, freeze the new sheets with --recodes {shell_path(inputs[0])}.",
            code="usage-freeze-bundle",
        )
    if len(inputs) == 1 and is_join_dir(inputs[0]):
        folder = inputs[0]
        rule, sheets = read_join_dir(folder, limits)
        summary = load_json((folder / SUMMARY).read_bytes(), f"{folder / SUMMARY}", own_file=True)
        columns = sheet_options(summary.get("columns"))
        sample = sample or _join_dir_sample(folder, summary, read_join_sample_ids(folder))
        rule_data = _read_matching(folder / RULE_COPY, rule.digest.removeprefix("sha256:"))
        if rule_path is not None and load_rule(rule_path, limits).digest != rule.digest:
            raise UsageError(
                f"--rule {rule_path} is not the rule the join in {folder} used ({rule.label}, {rule.digest[:19]}...).",
                hint="leave out --rule to freeze the join's own rule, or run join again with this rule.",
                code="usage-rule-mismatch",
            )
    elif len(inputs) == 1 and inputs[0].is_dir():
        raise UsageError(
            f"{inputs[0]} is a folder but not one written by irr-audit join (it has no summary.json).",
            hint="pass the folder given to join --out, or the sheets themselves with --rule.",
            code="usage-not-a-join-dir",
        )
    else:
        if rule_path is None:
            raise UsageError(
                "freeze needs the rule the sheets were coded under.",
                hint="add --rule rules/<rule>/v<version>.yaml.",
                code="usage-missing-rule",
            )
        rule = load_rule(rule_path, limits)
        rule_data = _read_matching(rule_path, rule.digest.removeprefix("sha256:"))
        columns = ColumnChoice(id_column=id_column, code_column=code_column, worksheet=worksheet)
        sheets = read_sheets(inputs, SheetOptions(**asdict(columns), limits=limits))
    check_sheet_names(sheets)
    sample_ids, notes = _sample_ids(sample, rule)
    join = join_sheets(sheets, rule, sample_ids=sample_ids)
    sheet_data = tuple(_read_matching(sheet.path, sheet.sha256) for sheet in sheets)
    return FreezeSource(rule_data, sheet_data, columns, join, sample, tuple(notes))


def _join_dir_sample(folder: Path, summary: dict[str, Any], ids: list[str] | None) -> Path | None:
    """The sample folder a join was restricted to, which freeze keeps too."""
    if ids is None:
        return None
    recorded = (summary.get("sample") or {}).get("folder")
    if recorded and Path(recorded).is_dir():
        return Path(recorded)
    raise UsageError(
        f"the join in {folder} was restricted to the sample in {recorded}, which is no longer there.",
        hint="pass the sample folder with --sample DIR, so the bundle keeps its ledger and log.",
        code="usage-sample-missing",
    )


def _sample_ids(sample: Path | None, rule: Rule) -> tuple[list[str] | None, list[str]]:
    if sample is None:
        return None, []
    from irr_audit.sampling import check_sample_rule, read_sample

    reference = read_sample(sample)
    return list(reference.ids), check_sample_rule(reference, rule)


def _read_matching(path: Path, sha256: str) -> bytes:
    """The file's bytes, which must still be those that were parsed a moment ago."""
    data = path.read_bytes()
    if sha256_hex(data) != sha256:
        raise UsageError(
            f"{path} changed while it was being frozen.",
            hint="wait until nobody is editing the file, then run freeze again.",
            code="usage-input-changed",
        )
    return data


def check_sheet_names(sheets: list[Sheet]) -> None:
    """Sheets keep their file name in the bundle (the coder may be its stem), so the
    names must be plain and distinct even on a case-insensitive file system."""
    seen: dict[str, Sheet] = {}
    for sheet in sheets:
        why = plain_file_name_problem(sheet.name)
        if why is not None:
            raise UsageError(
                f"sheet {sheet.path} cannot be frozen: its name {why}.",
                hint="rename the file.",
                code="usage-sheet-name",
            )
        key = sheet.name.casefold()
        if key in seen:
            raise UsageError(
                f"sheets {seen[key].path} and {sheet.path} have the same file name; "
                f"a bundle keeps both under {SHEETS_DIR}/ by name.",
                hint="rename one of the files (keep the coder column, or the coder's name as the stem).",
                code="usage-sheet-name",
            )
        seen[key] = sheet


def collect_sample(folder: Path) -> list[FrozenFile]:
    """The files of a folder written by `irr-audit sample` (sample.json, ledger, missingness
    log, rule copy), under sample/. Its sheets/ subfolder is not kept: the filled sheets
    are frozen under sheets/."""
    if not folder.is_dir() or not (folder / SAMPLE_SUMMARY).is_file():
        raise UsageError(
            f"--sample {folder} is not a folder written by irr-audit sample (it has no {SAMPLE_SUMMARY}).",
            hint="pass the folder given to irr-audit sample --out, or leave out --sample.",
            code="usage-not-a-sample-dir",
        )
    files = []
    for path in sorted(folder.iterdir()):
        if path.is_symlink():
            raise UsageError(
                f"--sample {folder} holds a symlink, {path.name}; a bundle keeps real files only.",
                hint="replace the symlink by the file it points to, or remove it.",
                code="usage-sample-symlink",
            )
        if not path.is_file():
            continue
        if plain_file_name_problem(path.name) is not None:
            raise UsageError(
                f"--sample {folder}: the file name {path.name!r} cannot be stored.",
                hint="rename the file.",
                code="usage-sample-name",
            )
        try:
            files.append(FrozenFile(f"{SAMPLE_DIR}/{path.name}", path.read_bytes()))
        except OSError as exc:
            raise UsageError(
                f"--sample {folder}: {path.name} cannot be read ({exc.strerror}).",
                hint="check the file's permissions.",
                code="usage-sample-unreadable",
            ) from None
    return files


def recodes_reference(bundle: Path, rule: Rule) -> dict[str, Any]:
    """The manifest's `recodes` entry for an audit that re-codes ``bundle``'s units."""
    manifest = read_manifest(bundle)
    if manifest["rule"]["id"] != rule.id:
        raise UsageError(
            f"--recodes {bundle} is an audit of rule {manifest['rule']['id']}, not {rule.id}.",
            hint="a re-coded sample re-codes the units of an earlier audit of the same rule.",
            code="usage-recodes-rule",
        )
    return {
        "bundle": manifest["name"],
        "ids_sha256": manifest["units"]["ids_sha256"],
        "rule": {"id": manifest["rule"]["id"], "version": manifest["rule"]["version"]},
    }


def frozen_files(source: FreezeSource, sample: list[FrozenFile]) -> list[FrozenFile]:
    sheets = [
        FrozenFile(f"{SHEETS_DIR}/{sheet.name}", data) for sheet, data in zip(source.join.sheets, source.sheet_data)
    ]
    return [*sheets, FrozenFile(rule_member(source.join.rule), source.rule_data), *sample]


def same_audit(files: list[FrozenFile], audits_dir: Path) -> Path | None:
    """An existing bundle that froze exactly these files (same names, same bytes)."""
    wanted = {(file.path, sha256_hex(file.data)) for file in files}
    for bundle in list_bundles(audits_dir):
        try:
            _, manifest = load_manifest_json(bundle)
            frozen = {(record["path"], record["sha256"]) for record in manifest["files"]}
        except (OSError, ValueError, KeyError, TypeError):
            continue  # a damaged bundle is verify's business, not a reason to refuse
        if frozen == wanted:
            return bundle
    return None


def check_audits_dir(audits_dir: Path) -> None:
    """Bundles go into a plain folder of bundles, never into a bundle."""
    for folder in (audits_dir, *resolved(audits_dir).parents):
        if is_bundle(folder):
            raise UsageError(
                f"--into {audits_dir} is inside the audit bundle {folder}.",
                hint="pass the folder that holds the bundles, e.g. --into audits.",
                code="usage-into-bundle",
            )
    if audits_dir.exists() and not audits_dir.is_dir():
        raise UsageError(f"--into {audits_dir} is a file, not a folder.", hint="pass a folder.", code="usage-into")
    from irr_audit.runfolder import RECORD_FILES

    run = next((name for name in RECORD_FILES if (audits_dir / name).is_file()), None)
    if run is not None:
        raise UsageError(
            f"--into {audits_dir} is the output folder of irr-audit {RECORD_FILES[run]} (it holds {run}).",
            hint="pass the folder that holds the bundles, e.g. --into audits; keep it apart from join and "
            "sample folders.",
            code="usage-into",
        )


def freeze(
    source: FreezeSource,
    audits_dir: Path,
    created: datetime,
    *,
    recodes: Path | None = None,
    sign_key: Path | None = None,
    lock_timeout: float = LOCK_TIMEOUT,
) -> FreezeResult:
    """Freeze an audit into a new bundle under ``audits_dir``; never replaces one, and never
    makes a second bundle of the same audit: the check and the write hold the audits
    folder's lock, so of two freezes of one audit at once, the second finds the first's bundle.
    With ``sign_key`` the manifest is signed (ssh-keygen) before anything is written."""
    check_audits_dir(audits_dir)
    sample = source.sample
    if sample is not None and resolved(audits_dir).is_relative_to(resolved(sample)):
        raise UsageError(
            f"--into {audits_dir} is inside --sample {sample}.",
            hint="keep the audits folder apart from the sample folder.",
            code="usage-into",
        )
    join = source.join
    sample_files = collect_sample(sample) if sample is not None else []
    files = frozen_files(source, sample_files)
    refuse_frozen(files, audits_dir)  # early, before the score is computed; checked again under the lock
    notes = list(source.notes)
    recodes_entry = recodes_reference(recodes, join.rule) if recodes is not None else None
    if recodes_entry is not None and recodes_entry["ids_sha256"] != units_digest(join.unit_ids):
        notes.append(
            f"the units differ from those of {recodes_entry['bundle']}; a re-coded sample "
            "normally re-codes the same units"
        )
    from irr_audit.audit import AuditOptions, build_report

    score = build_report(join, AuditOptions(list_disagreements=False)).to_dict(include_disagreements=False)
    with audits_lock(audits_dir, lock_timeout):
        refuse_frozen(files, audits_dir)
        name = free_name(audits_dir, created, join.rule)
        manifest = build_manifest(
            name=name,
            created=created,
            join=join,
            files=files,
            score=score,
            columns=source.columns,
            recodes=recodes_entry,
            sample_files=[file.path for file in sample_files] if sample is not None else None,
            sample_ids=list(join.unit_ids) if sample is not None else None,
        )
        path = write_bundle(audits_dir, name, files + signature_files(manifest, sign_key), manifest)
    return FreezeResult(path=path, manifest=manifest, notes=tuple(notes))


def refuse_frozen(files: list[FrozenFile], audits_dir: Path) -> None:
    existing = same_audit(files, audits_dir)
    if existing is not None:
        raise UsageError(
            f"these sheets and this rule are already frozen in {existing}.",
            hint=f"an audit is frozen once; check it with irr-audit verify {shell_path(existing)}.",
            code="usage-already-frozen",
        )


@contextmanager
def audits_lock(audits_dir: Path, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
    """Hold the audits folder's lock (a file lock, released by the system if the process
    dies). A lock over the time-stamped bundle names would not do: two freezes of one
    audit a second apart choose different names."""
    from filelock import FileLock, Timeout

    lock_path = audits_dir / FREEZE_LOCK
    try:
        audits_dir.mkdir(parents=True, exist_ok=True)
        lock = FileLock(lock_path, timeout=timeout)
        lock.acquire()
    except Timeout:
        raise OutputError(
            f"another irr-audit freeze holds the lock {lock_path}; waited {timeout:g} s for it.",
            hint="wait until the other freeze has finished, then run freeze again.",
            code="output-audits-busy",
        ) from None
    except OSError as exc:
        raise _unwritable(audits_dir, exc) from None
    try:
        yield
    finally:
        lock.release()


def manifest_bytes(manifest: dict[str, Any]) -> bytes:
    """manifest.json as written: the bytes the bundle's digest and signature cover."""
    return render_json(manifest).encode("utf-8")


def signature_files(manifest: dict[str, Any], sign_key: Path | None) -> list[FrozenFile]:
    """The manifest's signature, to write beside it (and not list in it), if a key is given."""
    if sign_key is None:
        return []
    from irr_audit.signing import sign

    return [FrozenFile(SIGNATURE, sign(manifest_bytes(manifest), sign_key))]


def free_name(audits_dir: Path, created: datetime, rule: Rule) -> str:
    n = 1
    while (audits_dir / bundle_name(created, rule, n)).exists():
        n += 1
    return bundle_name(created, rule, n)


def write_bundle(audits_dir: Path, name: str, files: list[FrozenFile], manifest: dict[str, Any]) -> Path:
    """Build the bundle in a hidden sibling folder, flush it to disk, then rename it
    into place: until the rename nothing carries a bundle's name."""
    try:
        audits_dir.mkdir(parents=True, exist_ok=True)
        building = audits_dir / f".{name}{PARTIAL_MARK}{secrets.token_hex(6)}"
        building.mkdir()  # not mkdtemp: the bundle keeps the usual permissions of a folder
    except OSError as exc:
        raise _unwritable(audits_dir, exc) from None
    final = audits_dir / name
    try:
        for file in files:
            _write_new_file(building.joinpath(*file.path.split("/")), file.data)
        _write_new_file(building / MANIFEST, manifest_bytes(manifest))  # last: the bundle is whole
        _make_read_only(building)
        _fsync_folders(building)
        if final.exists():
            raise UsageError(
                f"bundle {final} appeared while freezing.", hint="run freeze again.", code="usage-already-frozen"
            )
        os.rename(building, final)
        _fsync_folder(audits_dir)
    except OSError as exc:
        _discard(building)
        raise _unwritable(audits_dir, exc) from None
    except BaseException:
        _discard(building)
        raise
    return final


def _write_new_file(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "xb") as stream:
        stream.write(data)
        stream.flush()
        os.fsync(stream.fileno())


def _make_read_only(folder: Path) -> None:
    read_only = stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH
    for root, _, names in os.walk(folder):
        for name in names:
            os.chmod(Path(root) / name, read_only)


def _fsync_folders(folder: Path) -> None:
    for root, _, _ in os.walk(folder, topdown=False):
        _fsync_folder(Path(root))


def _fsync_folder(folder: Path) -> None:
    try:
        handle = os.open(folder, os.O_RDONLY)
    except OSError:
        return  # some systems cannot open a folder; the rename is still atomic there
    try:
        os.fsync(handle)
    except OSError:
        pass
    finally:
        os.close(handle)


def _discard(building: Path) -> None:
    shutil.rmtree(building, ignore_errors=True)


def _unwritable(audits_dir: Path, exc: OSError) -> OutputError:
    return OutputError(
        f"cannot write a bundle into {audits_dir}: {exc.strerror or exc}.",
        hint="check the folder's permissions and free space; no bundle was written.",
        code="output-unwritable",
    )


# --- verify -------------------------------------------------------------------------

INTERNAL_ONLY = (
    "internal consistency only: whoever can write the bundle folder could change a file and re-hash the "
    "manifest, and the bundle would still pass. To check that it is the bundle that was frozen, pass --expect "
    "with the digest freeze printed, --digests with the digest list it was added to, or --allowed-signers "
    "for a signed bundle."
)


@dataclass(frozen=True)
class Problem:
    """One thing verify found: kind is changed, missing, extra, manifest, units,
    score, adjudication, unfinished, anchor (not the bundle anchored outside it) or
    signature (a missing or bad signature)."""

    kind: str
    path: str
    detail: str = ""

    def line(self) -> str:
        return ": ".join(part for part in (self.kind, self.path, self.detail) if part)

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "path": self.path, "detail": self.detail}


@dataclass(frozen=True)
class Verification:
    bundle: Path
    name: str | None
    problems: tuple[Problem, ...]
    notes: tuple[str, ...]
    files_checked: int
    adjudication_records: int
    digest: str | None = None  # sha256:<hex> of manifest.json's bytes
    anchors: tuple[str, ...] = ()  # each outside anchor that held, as a sentence; none: internal consistency only

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def anchored(self) -> bool:
        """The bundle verifies and is the one anchored outside it (not only consistent)."""
        return self.ok and bool(self.anchors)

    def to_dict(self) -> dict[str, Any]:
        return {
            "bundle": str(self.bundle),
            "name": self.name,
            "ok": self.ok,
            "digest": self.digest,
            "anchored": self.anchored,
            "anchors": list(self.anchors),
            "problems": [problem.to_dict() for problem in self.problems],
            "notes": list(self.notes),
            "files_checked": self.files_checked,
            "adjudication_records": self.adjudication_records,
        }


def verify_bundle(bundle: Path, anchors: Anchors | None = None, limits: Limits = DEFAULT_LIMITS) -> Verification:
    """Re-hash every file, check the manifest, recompute the score and compare; then
    check the bundle against the anchors kept outside it, if any."""
    if not bundle.is_dir():
        raise BundleError(
            f"{bundle} is not a folder.", hint="pass a bundle folder made by irr-audit freeze.", code="bundle-not-found"
        )
    early = _unfinished_or_missing_manifest(bundle)
    if early is not None:
        return _with_anchors(early, None, anchors or Anchors())
    try:
        manifest_data, manifest = load_manifest_json(bundle)
    except (OSError, ValueError, IrrAuditError) as exc:
        found = _failed(bundle, [Problem("manifest", MANIFEST, manifest_read_problem(exc))])
        return _with_anchors(found, _bytes_or_none(bundle / MANIFEST), anchors or Anchors())
    return _with_anchors(
        check_consistency(bundle, manifest_data, manifest, limits), manifest_data, anchors or Anchors()
    )


def check_consistency(
    bundle: Path, manifest_data: bytes, manifest: Any, limits: Limits = DEFAULT_LIMITS
) -> Verification:
    """The bundle against its own manifest: structure, integrity hash, files, units, score
    and adjudication records. Anyone who can write the folder can make all of them agree."""
    structure = manifest_problems(manifest)
    if structure:
        return _failed(bundle, [Problem("manifest", MANIFEST, text) for text in structure])
    problems: list[Problem] = []
    if manifest["integrity"]["sha256"] != canonical_sha256(manifest, "integrity"):
        problems.append(Problem("manifest", MANIFEST, "edited after freezing (its integrity hash does not match)"))
    problems += [Problem("manifest", MANIFEST, text) for text in manifest_consistency_problems(manifest)]
    problems += file_problems(bundle, manifest)
    notes = []
    if resolved(bundle).name != manifest["name"]:
        notes.append(f"the folder is named {resolved(bundle).name}; the manifest names the bundle {manifest['name']}")
    join, score_problems, new_keys = recompute(bundle, manifest, limits)
    problems += score_problems
    if new_keys:
        shown = ", ".join(new_keys[:8]) + (f" and {len(new_keys) - 8} more" if len(new_keys) > 8 else "")
        notes.append(f"not in the frozen score (new in irr-audit {__version__}?), not compared: {shown}")
    records = 0
    if join is not None:
        from irr_audit.adjudication import check_adjudication  # adjudication builds on this module

        adjudication_problems, records = check_adjudication(bundle, sha256_hex(manifest_data), join)
        problems += adjudication_problems
    return Verification(bundle, manifest["name"], tuple(problems), tuple(notes), len(manifest["files"]), records)


def manifest_read_problem(error: Exception) -> str:
    """Why manifest.json could not be read, for verify's list of problems."""
    if isinstance(error, IrrAuditError):
        return error.message
    if isinstance(error, OSError):
        return f"cannot be read ({error.strerror or error})"
    if isinstance(error, UnicodeDecodeError):
        return f"is not UTF-8 text (byte {error.start})"
    if isinstance(error, json.JSONDecodeError):
        if not error.doc.strip():
            return "is empty"
        return f"is not JSON ({error.msg} at line {error.lineno}, column {error.colno})"
    return f"cannot be read as JSON ({_short_text(str(error))})"


def _short_text(text: str) -> str:
    return text if len(text) <= 120 else text[:117] + "..."


def _bytes_or_none(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _unfinished_or_missing_manifest(bundle: Path) -> Verification | None:
    if is_partial(bundle):
        return _failed(bundle, [Problem("unfinished", bundle.name, "a freeze that did not finish; not a bundle")])
    manifest = bundle / MANIFEST
    if manifest.is_symlink():
        return _failed(bundle, [Problem("manifest", MANIFEST, "is a symlink")])
    if manifest.is_file():
        return None
    if manifest.exists():
        return _failed(bundle, [Problem("manifest", MANIFEST, "is not a file")])
    if any((bundle / part).exists() for part in (SHEETS_DIR, RULE_DIR)):
        return _failed(bundle, [Problem("missing", MANIFEST, "the bundle has no manifest")])
    raise not_a_bundle(bundle)


def _failed(bundle: Path, problems: list[Problem]) -> Verification:
    return Verification(bundle, None, tuple(problems), (), 0, 0)


# --- verify: anchors outside the bundle ---------------------------------------------------


def _with_anchors(found: Verification, manifest_data: bytes | None, anchors: Anchors) -> Verification:
    """The verification, with the bundle's digest and the checks against each anchor given."""
    digest = sha256_digest(manifest_data) if manifest_data is not None else None
    name = found.name or resolved(found.bundle).name
    problems: list[Problem] = []
    held: list[str] = []
    notes: list[str] = []
    if anchors.expect is not None:
        if digest != anchors.expect:
            problems.append(
                Problem(
                    "anchor",
                    MANIFEST,
                    f"the bundle's digest {digest or '(no manifest)'} is not "
                    f"the expected {anchors.expect}: this is not the bundle that was anchored",
                )
            )
        else:
            held.append("its digest is the one expected (--expect)")
    if anchors.digests is not None:
        why = listed_problem(anchors.digests, name, digest or "(no manifest)")
        if why is not None:
            problems.append(Problem("anchor", MANIFEST, f"{why}: this is not the bundle that was anchored"))
        else:
            line = anchors.digests.lookup(name)[0].line
            held.append(f"its digest is listed for {name} in {anchors.digests.source} (line {line})")
    signature = bundle_member_bytes(found.bundle, SIGNATURE)
    if anchors.allowed_signers is not None:
        if manifest_data is None:
            problems.append(Problem("signature", SIGNATURE, "cannot be checked: the manifest cannot be read"))
        else:
            problem, signer = signature_problem(manifest_data, signature, anchors)
            if problem is not None:
                problems.append(Problem("signature", SIGNATURE, problem))
            else:
                held.append(f"its manifest is signed by {signer} ({anchors.allowed_signers})")
    elif isinstance(signature, bytes):
        notes.append(f"the manifest is signed ({SIGNATURE}); pass --allowed-signers FILE to check the signature")
    record_problems, record_held, record_notes = _record_anchor_problems(found, name, anchors)
    return dataclasses.replace(
        found,
        problems=found.problems + tuple(problems) + tuple(record_problems),
        notes=found.notes + tuple(notes) + tuple(record_notes),
        digest=digest,
        anchors=tuple(held + record_held),
    )


def bundle_member_bytes(bundle: Path, path: str, limit: int = SIGNATURE_MAX_BYTES) -> bytes | str | None:
    """A small file of the bundle that no manifest lists (a signature): its bytes, None
    when absent, or why it cannot be used."""
    location = bundle.joinpath(*path.split("/"))
    unsafe = symlink_problem(bundle, path)
    if unsafe is not None:
        return unsafe
    if not location.exists():
        return None
    if not location.is_file():
        return "is not a file"
    try:
        with open(location, "rb") as stream:
            data = stream.read(limit + 1)
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    return data if len(data) <= limit else f"is larger than the signature limit of {limit} bytes"


def signature_problem(data: bytes, signature: bytes | str | None, anchors: Anchors) -> tuple[str | None, str | None]:
    """Why ``signature`` is not a good signature of ``data`` by an allowed signer, or
    (None, the signer)."""
    from irr_audit.signing import check_signature

    if signature is None:
        return "is missing: this was not signed", None
    if isinstance(signature, str):
        return signature, None
    assert anchors.allowed_signers is not None
    checked = check_signature(data, signature, anchors.allowed_signers, anchors.identity)
    return checked.problem, checked.signer


def _record_anchor_problems(
    found: Verification, name: str, anchors: Anchors
) -> tuple[list[Problem], list[str], list[str]]:
    """Adjudication records are added after freezing, so the bundle's digest does not
    cover them: each is listed in the digest list, or signed, on its own."""
    from irr_audit.adjudication import record_files

    files, _ = record_files(found.bundle)  # the records' own problems are the consistency check's
    if not files or not anchors.given:
        return [], [], []
    problems: list[Problem] = []
    for path, data in files:
        digest = sha256_digest(data)
        if anchors.digests is not None:
            why = listed_problem(anchors.digests, f"{name}/{path}", digest)
            if why is not None:
                problems.append(Problem("anchor", path, f"{why}: this record was not anchored"))
        if anchors.allowed_signers is not None:
            problem, _ = signature_problem(data, bundle_member_bytes(found.bundle, path + ".sig"), anchors)
            if problem is not None:
                problems.append(Problem("signature", path + ".sig", problem))
    count = len(files)
    records = f"{count} adjudication record{'s' if count != 1 else ''}"
    if anchors.digests is None and anchors.allowed_signers is None:
        return (
            problems,
            [],
            [
                f"{records} {'are' if count != 1 else 'is'} not covered by --expect, which anchors "
                "the frozen audit only; anchor records with adjudicate --digests or --sign"
            ],
        )
    ways = [way for way, given in (("listed", anchors.digests), ("signed", anchors.allowed_signers)) if given]
    verb = "are" if count != 1 else "is"
    return problems, [f"its {records} {verb} {' and '.join(ways)}"] if not problems else [], []


# --- verify: the files ------------------------------------------------------------------


def file_problems(bundle: Path, manifest: dict[str, Any]) -> list[Problem]:
    """Changed, missing and extra files against the manifest's file list."""
    problems = []
    listed = {record["path"]: record for record in manifest["files"]}
    for path, record in listed.items():
        problem = _file_problem(bundle, path, record)
        if problem is not None:
            problems.append(problem)
    unlisted: list[OSError] = []
    for path in sorted(bundle_files(bundle, unlisted)):
        if path not in listed:
            problems.append(Problem("extra", path, "not in the manifest"))
    for error in unlisted:
        where = os.path.relpath(error.filename, bundle) if error.filename else "."
        problems.append(Problem("changed", Path(where).as_posix(), f"the folder cannot be listed ({error.strerror})"))
    adjudication = bundle / ADJUDICATION_DIR
    if adjudication.is_symlink() or (adjudication.exists() and not adjudication.is_dir()):
        problems.append(Problem("extra", ADJUDICATION_DIR, "is not a folder of adjudication records"))
    signature = bundle / SIGNATURE
    if signature.is_symlink() or (signature.exists() and not signature.is_file()):
        problems.append(Problem("extra", SIGNATURE, "is not a signature file"))
    return problems


def _file_problem(bundle: Path, path: str, record: dict[str, Any]) -> Problem | None:
    unsafe = symlink_problem(bundle, path)
    location = bundle.joinpath(*path.split("/"))
    if unsafe is not None:
        return Problem("changed", path, unsafe)
    if not location.exists():
        return Problem("missing", path)
    if not location.is_file():
        return Problem("changed", path, "is not a file")
    try:
        size, digest = file_sha256(location)
    except OSError as exc:
        return Problem("changed", path, f"cannot be read ({exc.strerror})")
    if digest != record["sha256"] or size != record["size"]:
        return Problem(
            "changed",
            path,
            f"sha256 {digest[:12]}... ({size} bytes), frozen {record['sha256'][:12]}... ({record['size']} bytes)",
        )
    return None


def file_sha256(path: Path) -> tuple[int, str]:
    """A file's size and sha256, read in chunks: a file replaced by a huge one is not loaded whole."""
    digest, size = hashlib.sha256(), 0
    with open(path, "rb") as stream:
        while chunk := stream.read(HASH_CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return size, digest.hexdigest()


def recompute(
    bundle: Path, manifest: dict[str, Any], limits: Limits = DEFAULT_LIMITS
) -> tuple[JoinResult | None, list[Problem], list[str]]:
    """The join and score from the frozen files as they are now, against the frozen ones."""
    from irr_audit.audit import AuditOptions, build_report

    try:
        join = join_files(bundle, manifest, limits)
    except IrrAuditError as error:
        why = " ".join(error.message.split())  # one line, whatever the reader's message spans
        return None, [Problem("score", "", f"cannot be recomputed from the bundle's files: {why}")], []
    problems = []
    units = manifest["units"]
    if units["count"] != len(join.unit_ids) or units["ids_sha256"] != units_digest(join.unit_ids):
        problems.append(
            Problem(
                "units",
                "",
                f"the frozen sheets hold {len(join.unit_ids)} units, "
                f"the manifest says {units['count']} (or their ids differ)",
            )
        )
    # Through JSON, as the frozen score went: tuples become lists, exactly as in the manifest.
    score = json.loads(
        render_json(build_report(join, AuditOptions(list_disagreements=False)).to_dict(include_disagreements=False))
    )
    differences, new_keys = compare_scores(manifest["score"], score)
    problems += [Problem("score", *text.split(": ", 1)) for text in differences]
    return join, problems, new_keys
