"""A bundle as audit input (`score BUNDLE`, `report BUNDLE`, `adjudicate`, verify's
recomputation): the frozen sheets joined under the frozen rule, restricted to the
frozen sample's ids, exactly as freeze joined them. Every path comes from the
manifest and is checked to stay inside the bundle.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from irr_audit.bundle.manifest import Manifest, altered, member, read_manifest, sha256_hex
from irr_audit.io.limits import DEFAULT_LIMITS, Limits
from irr_audit.io.sheets import SheetOptions, parse_sheet, recorded_columns
from irr_audit.join.join import JoinResult, join_sheets
from irr_audit.rules.load import parse_rule
from irr_audit.sample.folder import SampleRef, read_sample


def join_files(
    bundle: Path, manifest: dict[str, Any], limits: Limits = DEFAULT_LIMITS, sample: SampleRef | None = None
) -> JoinResult:
    """Join the frozen sheets under the frozen rule (and sample: read here unless given), as freeze did."""
    rule = parse_rule(_member_bytes(bundle, manifest["rule"]["file"]), manifest["rule"]["file"], limits)
    options = SheetOptions(**asdict(recorded_columns(manifest.get("columns"))), limits=limits)
    sheets = [
        parse_sheet(_member_bytes(bundle, record["file"]), member(bundle, record["file"]), options)
        for record in manifest["sheets"]
    ]
    sample = sample or frozen_sample(bundle, manifest, limits)
    return join_sheets(sheets, rule, sample_ids=list(sample.ids) if sample else None)


def frozen_sample(bundle: Path, manifest: dict[str, Any], limits: Limits = DEFAULT_LIMITS) -> SampleRef | None:
    """The sample the manifest lists, read through member() (a symlinked sample folder is
    refused); a sample/ folder the manifest does not list was never frozen, and is ignored."""
    if not manifest.get("sample"):
        return None
    return read_sample(member(bundle, manifest["sample"]["summary"]).parent, limits)


def _member_bytes(bundle: Path, path: str) -> bytes:
    try:
        return member(bundle, path).read_bytes()
    except OSError as exc:
        raise altered(bundle, f"{path} cannot be read ({exc.strerror})") from None


def check_frozen_files(bundle: Path, manifest: dict[str, Any]) -> None:
    """Raise on the first frozen file that is not as frozen (verify lists them all)."""
    for record in manifest["files"]:
        if sha256_hex(_member_bytes(bundle, record["path"])) != record["sha256"]:
            raise altered(bundle, f"{record['path']} changed since it was frozen")


@dataclass(frozen=True)
class FrozenAudit:
    """A bundle as audit input: its manifest (read once), the frozen sheets joined, and
    the frozen sample, when the manifest lists one."""

    manifest: Manifest
    join: JoinResult
    sample: SampleRef | None


def read_bundle(bundle: Path, limits: Limits = DEFAULT_LIMITS) -> FrozenAudit:
    """`score BUNDLE`, `report BUNDLE` and `adjudicate`: the frozen audit, checked unchanged first."""
    manifest = read_manifest(bundle)
    check_frozen_files(bundle, manifest.content)
    sample = frozen_sample(bundle, manifest.content, limits)
    return FrozenAudit(manifest, join_files(bundle, manifest.content, limits, sample), sample)
