"""The bundle format: where each file of a bundle lives, its manifest (built at
freeze, read and checked by every command that uses a bundle), and the paths a
manifest names, which are never trusted.

    AUDITS_DIR/<YYYYMMDDTHHMMSSZ>_<rule-id>_v<version>[_<n>]/
      manifest.json        what is frozen: every file's sha256 and size, the score JSON
      manifest.json.sig    an SSH signature of manifest.json, when freeze --sign made one
      sheets/<file name>   the original sheets
      rule/<id>/v<n>.yaml  the rule file
      sample/...           the ledger and missingness log of `irr-audit sample`, when given
      adjudication/...     later consensus records (irr_audit.bundle.adjudication); not frozen

Nothing a manifest says is trusted as a path: every member path is checked to stay
inside the bundle, without symlinks. The bundle's digest, the sha256 of
manifest.json's bytes, names the whole frozen audit; verify checks it against an
anchor kept outside the bundle (irr_audit.bundle.anchor).
"""

from __future__ import annotations

import errno
import json
import os
import re
import shlex
import stat
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from irr_audit._threads import Workers
from irr_audit._version import __version__
from irr_audit.errors import IrrAuditError
from irr_audit.io import records as recorded
from irr_audit.io.encodings import not_utf8
from irr_audit.io.files import read_bounded, resolved, sha256_hex
from irr_audit.io.fingerprints import hash_heads, heads_sketch, sorted_lines_sha256
from irr_audit.io.limits import load_json
from irr_audit.io.outputs import render_json
from irr_audit.io.runfolder import (
    BUNDLE_MANIFEST,
    BUNDLE_RULE,
    BUNDLE_SHEETS,
    CODEBOOK_BUNDLE_FORMAT,
    PARTIAL_MARK,
    SAMPLE_RECORD,
    is_bundle,
    member_path_problem,
)
from irr_audit.io.sheets import ColumnChoice
from irr_audit.io.unitsketch import is_sketch
from irr_audit.join.join import JoinResult
from irr_audit.rules.model import Rule

FORMAT = "irr-audit-bundle/1"
CODEBOOK_FORMAT = CODEBOOK_BUNDLE_FORMAT  # the bundle of a codebook audit (irr_audit.bundle.codebook)
MANIFEST = BUNDLE_MANIFEST  # the names of io.runfolder, which decides what is a bundle
SIGNATURE = f"{MANIFEST}.sig"  # beside the manifest: it signs the manifest's bytes, so cannot be listed in it
SHEETS_DIR = BUNDLE_SHEETS
RULE_DIR = BUNDLE_RULE
SAMPLE_DIR = "sample"
ADJUDICATION_DIR = "adjudication"
SAMPLE_SUMMARY = SAMPLE_RECORD
NAME_PATTERN = re.compile(r"(?P<stamp>\d{8}T\d{6}Z)_(?P<rule>[a-z0-9_]+)_v(?P<version>\d+)(?:_(?P<n>\d+))?")
SHA256_PATTERN = re.compile(r"[0-9a-f]{64}")
INTEGRITY_OF = "this manifest as canonical JSON (sorted keys, no spaces, UTF-8) without the integrity key"
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


class BundleError(IrrAuditError):
    code = "bundle-invalid"


@dataclass(frozen=True)
class Problem:
    """One thing verify (or its check of the adjudication records) found: kind is changed,
    missing, extra, manifest, units, score, adjudication, unfinished, anchor (not the
    bundle anchored outside it) or signature (a missing or bad signature)."""

    kind: str
    path: str
    detail: str = ""
    unreadable: bool = False  # the user may not read it (permissions): other commands refuse it as such

    def line(self) -> str:
        return ": ".join(part for part in (self.kind, self.path, self.detail) if part)

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "path": self.path, "detail": self.detail}


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


def units_digest(unit_ids: Iterable[str] | pa.Array) -> str:
    """sha256 of the sorted unit ids joined by newlines (UTF-8): two audits of the
    same units have the same digest whatever order their sheets list them in."""
    return sorted_lines_sha256(unit_ids)


def canonical_sha256(document: dict[str, Any], without: str) -> str:
    """sha256 of a JSON document without one key, so a document can carry its own digest."""
    rest = {key: value for key, value in document.items() if key != without}
    text = json.dumps(rest, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return sha256_hex(text.encode("utf-8"))


def plain_file_name_problem(name: str) -> str | None:
    """Why a sheet's file name cannot be stored as sheets/<name>, or None."""
    if member_path_problem(name) is not None or "/" in name:
        return "is not a plain file name"
    if name == MANIFEST:
        return "is reserved for the manifest"
    return None


# --- the manifest --------------------------------------------------------------


@dataclass(frozen=True)
class FrozenFile:
    """One file of the bundle: its path inside the bundle and its bytes."""

    path: str
    data: bytes

    @cached_property
    def sha256(self) -> str:
        return sha256_hex(self.data)  # (once: the manifest and the check for the same audit both need it)

    def record(self) -> dict[str, Any]:
        return {"path": self.path, "sha256": self.sha256, "size": len(self.data)}


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
    sample_recoding: dict[str, Any] | None = None,
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
                "sha256": by_path[f"{SHEETS_DIR}/{sheet.name}"].sha256,
                "size": len(by_path[f"{SHEETS_DIR}/{sheet.name}"].data),
            }
            for sheet in join.sheets
        ],
        "files": sorted((file.record() for file in files), key=lambda record: record["path"]),
        "units": units_entry(join.units, join.fully_coded),
        "recodes": recodes,
        "sample": None if sample_files is None else sample_entry(sample_files, sample_ids or [], sample_recoding),
        "columns": {key: value for key, value in asdict(columns).items() if key != "delimiter" or value is not None},
        "score": score,
    }
    manifest["integrity"] = {"sha256": canonical_sha256(manifest, "integrity"), "of": INTEGRITY_OF}
    return manifest


def units_entry(units: pa.Array, fully_coded: np.ndarray) -> dict[str, Any]:
    """The units' count and fingerprints: the digest (sorting, which lets other threads run)
    is made beside the sketches (hashing each id, which does not). ``scored_sketch`` is of the
    fully coded units alone, the ones the statistics rest on: rules check --audits compares
    audits by it, so ids only one coder's sheet has (never scored) cannot make an old sample
    look new; ``sketch`` (of every unit) stays for what older versions read."""
    with Workers(max_workers=1) as pool:
        digest = pool.submit(units_digest, units)
        heads = hash_heads(units)  # each id hashed once for both sketches
        return {
            "count": len(units),
            "ids_sha256": digest.result(),
            "sketch": heads_sketch(heads),
            "scored_sketch": heads_sketch(heads[fully_coded]),
        }


def manifest_bytes(manifest: dict[str, Any]) -> bytes:
    """manifest.json as written: the bytes the bundle's digest and signature cover."""
    return render_json(manifest).encode("utf-8")


def sample_entry(files: list[str], sample_ids: list[str], recoding: dict[str, Any] | None = None) -> dict[str, Any]:
    """The manifest's `sample`: the frozen files of `irr-audit sample`; the audit's
    units are exactly the sample's ids, read back from sample/sample.json. ``recoding``
    (the sample was drawn under an earlier version of the rule) marks the audit as a re-coding."""
    entry = {
        "files": files,
        "summary": f"{SAMPLE_DIR}/{SAMPLE_SUMMARY}",
        "ids": {"count": len(sample_ids), "ids_sha256": units_digest(sample_ids)},
        "restricts_units": True,
    }
    return {**entry, "recoding": recoding} if recoding is not None else entry


def manifest_problems(manifest: Any) -> list[str]:
    """What is wrong with a manifest's structure, as short sentences. Pure."""
    if not isinstance(manifest, dict):
        return ["is not a JSON object"]
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
    else:
        problems += [
            f"units.{key} must be a list of the ids' smallest hashes (16 hex digits), ascending"
            for key in ("sketch", "scored_sketch")
            if key in units and not is_sketch(units[key])
        ]
    recodes = manifest.get("recodes", "absent")
    if recodes is not None and not (
        isinstance(recodes, dict)
        and isinstance(recodes.get("bundle"), str)
        and NAME_PATTERN.fullmatch(recodes["bundle"])
        and _is_sha(recodes.get("ids_sha256"))
    ):
        problems.append("recodes must be null or name a bundle and its units' ids_sha256")
    problems += _sample_problems(manifest.get("sample", "absent"))
    problems += recorded.columns(manifest.get("columns", {}), "columns")
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
    problems = [
        f"score.{key} is missing" if key not in score else f"score.{key} is not {JSON_KINDS[kind]}"
        for key, kind in REQUIRED_SCORE.items()
        if not isinstance(score.get(key), kind)
    ]
    rule = score.get("rule")
    if isinstance(rule, dict) and not isinstance(rule.get("scale", ""), str):
        problems.append(f"score.rule.scale is {rule['scale']!r}, not text")  # the headline names it
    if isinstance(score.get("metrics"), dict):
        problems += recorded.metrics(score["metrics"], "score.metrics")
    return problems


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
        if why is not None or not isinstance(path, str):  # a list or an object would fail in ``seen``
            problems.append(f"files[{position}].path {path!r} {why}")
            continue
        if path in (MANIFEST, SIGNATURE) or path.split("/")[0] == ADJUDICATION_DIR:
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
        if why is not None or not isinstance(path, str):
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
    or pass through a symlink, or when a folder on its way cannot be entered."""
    why = member_path_problem(path)
    if why is None:
        why = symlink_problem(bundle, path)
    if why is not None and why.startswith(CANNOT_REACH):
        raise unreadable_bundle(bundle, f"{path} {why}")
    if why is None and bundle.joinpath(*path.split("/")).exists() and not bundle.joinpath(*path.split("/")).is_file():
        why = "is not a file"  # a folder, or a pipe that would block the read
    if why is not None:
        raise BundleError(
            f"bundle {bundle}: the manifest's path {path!r} {why}.",
            hint=f"the bundle was altered; run irr-audit verify {shell_path(bundle)} to see every change.",
            code="bundle-unsafe-path",
        )
    return bundle.joinpath(*path.split("/"))


UNLISTABLE = "the folder cannot be listed"  # verify's problem for a folder the user may not list
CANNOT_REACH = "cannot be reached"  # a folder on the way cannot be entered: permissions, not an alteration


def symlink_problem(bundle: Path, path: str) -> str | None:
    current = bundle
    for part in path.split("/"):
        current = current / part
        try:
            if stat.S_ISLNK(os.lstat(current).st_mode):
                return f"passes through the symlink {current.relative_to(bundle).as_posix()}"
        except FileNotFoundError:
            return None  # missing: the reader names it
        except OSError as error:  # a folder on the way that cannot be entered, as a normal user
            if error.errno in (errno.ENOTDIR, errno.ENAMETOOLONG, errno.ELOOP):
                return None
            folder = current.parent.relative_to(bundle).as_posix()
            where = "the bundle folder" if folder == "." else f"the folder {folder}"
            return f"{CANNOT_REACH}: {where} cannot be entered ({error.strerror})"
    return None


def unreadable_bundle(bundle: Path, what: str) -> BundleError:
    """A part of the bundle the user may not read: bad permissions, not a bundle altered."""
    return BundleError(
        f"bundle {bundle}: {what}.",
        hint=f"give yourself read access to the bundle: chmod -R u+rX {shell_path(bundle)} "
        "(or run as a user who has it); nothing in it is changed.",
        code="bundle-unreadable",
    )


def bundle_path(given: Path) -> Path:
    """The bundle folder ``given`` names, spelled one way: its symlinks, ``.`` and ``..`` followed,
    relative to the working folder when given relative (absolute when it is the working folder).
    Every command opens a bundle through this, so that each spelling of one folder (a trailing
    slash, ./, a/../a, a symlink to it) is the same bundle, and the folder's name, which anchors
    and partial freezes are told by, is its own: never '' (for .), '..' or a link's name."""
    given = Path(given)
    real = resolved(given)
    if given.is_absolute():
        return real
    try:
        relative = Path(os.path.relpath(real))
    except (OSError, ValueError):  # the working folder was deleted
        return real
    return real if relative == Path(".") else relative


def folder_name(bundle: Path) -> str:
    """The name of the folder ``bundle`` is, however it is spelled (see bundle_path)."""
    return resolved(Path(bundle)).name


def is_partial(path: Path) -> bool:
    """A folder that freeze was still building when it stopped (however the path is spelled)."""
    name = folder_name(path)
    return name.startswith(".") and PARTIAL_MARK in name


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
    """Every file and symlink in the bundle as a POSIX path, and every empty folder as
    ``<path>/`` (freeze makes none: one was added), except the manifest, its signature
    and the adjudication folder, which is checked on its own. A folder that cannot be listed is added to ``unlisted``:
    what it holds is not known."""
    for root, folders, files in os.walk(bundle, onerror=unlisted.append if unlisted is not None else None):
        at = Path(root).relative_to(bundle)
        if at != Path(".") and not folders and not files and _listable(Path(root)):
            yield at.as_posix() + "/"
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


def _listable(folder: Path) -> bool:
    """os.walk gives a folder it cannot list as empty: only one listed empty is."""
    try:
        return not any(os.scandir(folder))
    except OSError:
        return False


def load_manifest_json(bundle: Path) -> tuple[bytes, Any]:
    """The manifest's bytes and parsed JSON; raises ValueError when it is not JSON, and
    IrrAuditError when it cannot be read or is beyond the file_bytes limit (checked before
    it is read: a manifest of gigabytes is refused without being loaded)."""
    data = read_own_file(bundle / MANIFEST, f"{bundle / MANIFEST}")
    return data, load_json(data, f"{bundle / MANIFEST}", own_file=True)


def read_own_file(path: Path, subject: str) -> bytes:
    """A JSON file irr-audit wrote into a bundle (the manifest, a record), read with the default
    limits, its size checked before it is read: one beyond them was altered (README, "Limits")."""
    return read_bounded(path, subject, code="bundle-file", own_file=True)


@dataclass(frozen=True)
class Manifest:
    """A bundle's manifest as read once: its bytes (what the digest and a signature cover)
    and its checked content."""

    data: bytes
    content: dict[str, Any]

    @property
    def sha256(self) -> str:
        return sha256_hex(self.data)

    @property
    def digest(self) -> str:
        """sha256:<hex>, the bundle's digest, as freeze printed it."""
        return f"sha256:{self.sha256}"


def read_manifest(bundle: Path) -> Manifest:
    """A bundle's manifest, read once and checked (structure, integrity hash), for commands that use the bundle."""
    bundle = bundle_path(bundle)
    refuse_unfinished(bundle)
    if not is_bundle(bundle):
        raise not_a_bundle(bundle)
    if (bundle / MANIFEST).is_symlink():
        raise altered(bundle, f"{MANIFEST} is a symlink")
    try:
        data, manifest = load_manifest_json(bundle)
    except UnicodeDecodeError as exc:
        raise altered(bundle, f"{MANIFEST} is not UTF-8 text ({not_utf8(exc, f'byte {exc.start}')})") from None
    except (OSError, ValueError) as exc:
        raise altered(bundle, f"{MANIFEST} cannot be read as JSON ({type(exc).__name__})") from None
    if isinstance(manifest, dict) and manifest.get("format") == CODEBOOK_FORMAT:
        raise BundleError(
            f"{bundle} is the bundle of a codebook audit ({manifest.get('name')}); this command takes the bundle of "
            "one rule's audit.",
            hint=f"verify, labels, adjudicate, compare (with another codebook bundle), and score and report "
            f"without --rule read it (irr-audit verify {shell_path(bundle)}); freeze --rule --recodes takes only "
            "the bundle of one rule's audit, freeze --codebook --recodes a codebook's too (docs/codebooks.md).",
            code="bundle-codebook-not-yet",
        )
    problems = manifest_problems(manifest)
    if not problems and manifest["integrity"]["sha256"] != canonical_sha256(manifest, "integrity"):
        problems = ["was edited after freezing (its integrity hash does not match)"]
    problems += [] if problems else manifest_consistency_problems(manifest)
    if problems:
        raise altered(bundle, f"{MANIFEST} {problems[0]}")
    return Manifest(data, manifest)


def refuse_unfinished(bundle: Path) -> None:
    """A folder freeze was still building when it stopped is no bundle, however whole it looks:
    verify fails it (an `unfinished` problem); the other commands refuse it, and adjudicate never
    adds a record to it."""
    if is_partial(bundle):
        raise BundleError(
            f"{bundle} is a freeze that did not finish, not an audit bundle.",
            hint="freeze again, or pass the bundle freeze printed; the unfinished folder can be deleted.",
            code="bundle-not-found",
        )


def not_a_bundle(path: Path) -> BundleError:
    has_manifest = (path / MANIFEST).is_file()
    why = f"its {MANIFEST} is not beside {SHEETS_DIR}/ or {RULE_DIR}/" if has_manifest else f"it has no {MANIFEST}"
    return BundleError(
        f"{path} is not an audit bundle ({why}).",
        hint="pass a folder that irr-audit freeze created, e.g. audits/20240501T120000Z_<rule>_v1.",
        code="bundle-not-found",
    )


def altered(bundle: Path, what: str) -> BundleError:
    return BundleError(
        f"bundle {bundle} was altered: {what}.",
        hint=f"run irr-audit verify {shell_path(bundle)} to see every change; restore the bundle from a copy.",
        code="bundle-altered",
    )
