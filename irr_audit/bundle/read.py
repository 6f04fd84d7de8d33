"""A bundle as audit input (`score BUNDLE`, `report BUNDLE`, `adjudicate`, verify's
recomputation): the frozen sheets joined under the frozen rule, restricted to the
frozen sample's ids, exactly as freeze joined them. Every path comes from the
manifest and is checked to stay inside the bundle.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from irr_audit.bundle.manifest import SAMPLE_DIR, altered, member, read_manifest, sha256_hex
from irr_audit.io.limits import DEFAULT_LIMITS, Limits
from irr_audit.io.sheets import SheetOptions, parse_sheet, recorded_columns
from irr_audit.join.join import JoinResult, join_sheets
from irr_audit.rules.load import parse_rule
from irr_audit.sample.folder import read_sample


def join_files(bundle: Path, manifest: dict[str, Any], limits: Limits = DEFAULT_LIMITS) -> JoinResult:
    """Join the frozen sheets under the frozen rule (and sample), as freeze did."""
    rule = parse_rule(_member_bytes(bundle, manifest["rule"]["file"]), manifest["rule"]["file"], limits)
    options = SheetOptions(**asdict(recorded_columns(manifest.get("columns"))), limits=limits)
    sheets = [
        parse_sheet(_member_bytes(bundle, record["file"]), member(bundle, record["file"]), options)
        for record in manifest["sheets"]
    ]
    return join_sheets(sheets, rule, sample_ids=frozen_sample_ids(bundle, manifest))


def frozen_sample_ids(bundle: Path, manifest: dict[str, Any]) -> list[str] | None:
    if not manifest.get("sample"):
        return None

    member(bundle, manifest["sample"]["summary"])  # refuses a symlinked sample folder
    return list(read_sample(bundle / SAMPLE_DIR).ids)


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


def join_bundle(bundle: Path, limits: Limits = DEFAULT_LIMITS) -> JoinResult:
    """`score BUNDLE` and `report BUNDLE`: the frozen audit, checked unchanged first."""
    manifest = read_manifest(bundle)
    check_frozen_files(bundle, manifest)
    return join_files(bundle, manifest, limits)
