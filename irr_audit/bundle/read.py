"""A bundle as audit input (`score BUNDLE`, `report BUNDLE`, `adjudicate`, verify's
recomputation): the frozen sheets joined under the frozen rule, restricted to the
frozen sample's ids, exactly as freeze joined them. Every path comes from the
manifest and is checked to stay inside the bundle; each file is read once, within
the limits and never beyond its frozen size, then hashed and parsed from the same bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from irr_audit.bundle.manifest import (
    CANNOT_REACH,
    Manifest,
    Problem,
    altered,
    bundle_path,
    member,
    read_manifest,
    symlink_problem,
    unreadable_bundle,
)
from irr_audit.errors import IrrAuditError, LimitError
from irr_audit.io.files import read_bounded, sha256_hex
from irr_audit.io.limits import DEFAULT_LIMITS, Limits
from irr_audit.io.sheets import SheetOptions, parse_sheets, recorded_columns
from irr_audit.join.join import JoinResult, join_sheets
from irr_audit.rules.load import parse_rule
from irr_audit.sample.folder import SampleRef, read_sample


def join_files(
    bundle: Path,
    manifest: dict[str, Any],
    files: Mapping[str, bytes],
    limits: Limits = DEFAULT_LIMITS,
    sample: SampleRef | None = None,
) -> JoinResult:
    """Join the frozen sheets under the frozen rule (and sample: read here unless given), as
    freeze did, from ``files``: the bytes of the listed files as read (see ``frozen_file``)."""
    rule_file = manifest["rule"]["file"]
    rule = parse_rule(_frozen_bytes(bundle, files, rule_file), rule_file, limits)
    options = SheetOptions(**asdict(recorded_columns(manifest.get("columns"))), limits=limits)
    names = [record["file"] for record in manifest["sheets"]]
    sheets = parse_sheets([(_frozen_bytes(bundle, files, name), member(bundle, name)) for name in names], options)
    sample = sample or frozen_sample(bundle, manifest, limits)
    if sample is None:
        return join_sheets(sheets, rule)
    return sample.joined(join_sheets(sheets, rule, sample_ids=list(sample.ids)))


def frozen_sample(bundle: Path, manifest: dict[str, Any], limits: Limits = DEFAULT_LIMITS) -> SampleRef | None:
    """The sample the manifest lists, read through member() (a symlinked sample folder is
    refused); a sample/ folder the manifest does not list was never frozen, and is ignored."""
    if not manifest.get("sample"):
        return None
    return read_sample(member(bundle, manifest["sample"]["summary"]).parent, limits)


def _frozen_bytes(bundle: Path, files: Mapping[str, bytes], path: str) -> bytes:
    member(bundle, path)  # a path that leaves the bundle is refused as such
    if path not in files:
        raise altered(bundle, f"{path} cannot be read as frozen")
    return files[path]


def frozen_file(
    bundle: Path, record: dict[str, Any], limits: Limits = DEFAULT_LIMITS
) -> tuple[bytes | None, Problem | None]:
    """A file the manifest lists, read once: its bytes (None when they cannot be read)
    and what is wrong with it (None when it is as frozen). A file larger than its frozen
    size is not read. A file of its frozen size beyond a limit the user lowered raises
    the LimitError, which names the limit to raise."""
    path = record["path"]
    unsafe = symlink_problem(bundle, path)
    if unsafe is not None:
        return None, Problem("changed", path, unsafe, unreadable=unsafe.startswith(CANNOT_REACH))
    try:
        data = read_bounded(bundle.joinpath(*path.split("/")), path, limits, code="frozen", max_bytes=record["size"])
    except LimitError:
        raise
    except IrrAuditError as error:
        return None, _unread(path, record, error)
    digest = sha256_hex(data)
    if digest != record["sha256"] or len(data) != record["size"]:
        frozen = f"frozen {record['sha256'][:12]}... ({record['size']} bytes)"
        return data, Problem("changed", path, f"sha256 {digest[:12]}... ({len(data)} bytes), {frozen}")
    return data, None


def _unread(path: str, record: dict[str, Any], error: IrrAuditError) -> Problem:
    if error.code == "frozen-not-found":
        return Problem("missing", path)
    if error.code == "frozen-too-large":
        return Problem("changed", path, f"is larger than the {record['size']:,} bytes frozen (not read)")
    if error.code == "frozen-not-a-file":
        return Problem("changed", path, "is not a file")
    detail = error.message.removeprefix(path).strip().rstrip(".")
    return Problem("changed", path, detail, unreadable=error.code == "frozen-unreadable")


def read_frozen_files(bundle: Path, manifest: dict[str, Any], limits: Limits = DEFAULT_LIMITS) -> dict[str, bytes]:
    """Every file the manifest lists, read once and checked as frozen; raises on the
    first that is not (verify lists them all)."""
    files = {}
    for record in manifest["files"]:
        member(bundle, record["path"])  # an unsafe path is refused as such
        data, problem = frozen_file(bundle, record, limits)
        if problem is not None and problem.unreadable:
            raise unreadable_bundle(bundle, f"{problem.path} {problem.detail}")
        if problem is not None:
            changed = data is not None
            raise altered(
                bundle,
                f"{problem.path} " + ("changed since it was frozen" if changed else problem.detail or "is missing"),
            )
        assert data is not None
        files[record["path"]] = data
    return files


@dataclass(frozen=True)
class FrozenAudit:
    """A bundle as audit input: its manifest (read once), the frozen sheets joined, and
    the frozen sample, when the manifest lists one."""

    manifest: Manifest
    join: JoinResult
    sample: SampleRef | None


def read_bundle(bundle: Path, limits: Limits = DEFAULT_LIMITS) -> FrozenAudit:
    """`score BUNDLE`, `report BUNDLE` and `adjudicate`: the frozen audit, checked unchanged first."""
    bundle = bundle_path(bundle)
    manifest = read_manifest(bundle)
    files = read_frozen_files(bundle, manifest.content, limits)
    sample = frozen_sample(bundle, manifest.content, limits)
    return FrozenAudit(manifest, join_files(bundle, manifest.content, files, limits, sample), sample)
