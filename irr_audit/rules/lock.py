"""The lock file, rules/rules.lock: the released versions of every rule (rule id,
version, sha256), written by `irr-audit rules lock` and read back as a baseline
of the revision check. JSON with sorted keys: byte-stable and easy to review.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from irr_audit.errors import IrrAuditError
from irr_audit.io.encodings import not_utf8
from irr_audit.io.limits import load_json
from irr_audit.io.outputs import render_json
from irr_audit.rules.codebook import parse_codebook, rule_file_key
from irr_audit.rules.load import parse_rule
from irr_audit.rules.revisions import Baseline

LOCK_FORMAT = "irr-audit-rules-lock/1"
LOCK_FILE_NAME = "rules.lock"
SHA256_HEX = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class LockEntry:
    file: str
    rule: str
    version: int
    sha256: str


@dataclass(frozen=True)
class CodebookLockEntry:
    """A released codebook version and the rule files it pins (``<rule>/v<N>.yaml`` -> sha256 hex)."""

    file: str
    codebook: str
    version: int
    sha256: str
    rules: Mapping[str, str]


def lock_entries(current: Mapping[str, bytes]) -> list[LockEntry]:
    """One entry per valid rule file; call it once check_rules found nothing wrong."""
    entries = []
    for key, data in sorted(current.items()):
        rule = parse_rule(data, key)
        entries.append(LockEntry(key, rule.id, rule.version, hashlib.sha256(data).hexdigest()))
    return sorted(entries, key=lambda entry: (entry.rule, entry.version, entry.file))


def codebook_lock_entries(codebooks: Mapping[str, bytes], rules: Mapping[str, bytes]) -> list[CodebookLockEntry]:
    """One entry per codebook file, with the rule files it pins; call it once the check is clean."""
    entries = []
    for key, data in sorted(codebooks.items()):
        codebook = parse_codebook(
            data,
            key,
            lambda rule_id, version: parse_rule(
                rules[rule_file_key(rule_id, version)], rule_file_key(rule_id, version)
            ),
        )
        pins = {rule_file_key(rule.id, rule.version): rule.digest.removeprefix("sha256:") for rule in codebook.rules}
        entries.append(CodebookLockEntry(key, codebook.name, codebook.version, hashlib.sha256(data).hexdigest(), pins))
    return entries


def render_lock(entries: Sequence[LockEntry], codebooks: Sequence[CodebookLockEntry] = ()) -> str:
    """JSON with sorted keys and one entry per version: byte-stable and easy to review. The key
    ``codebooks`` is there only when there are codebooks, so a lock of rules alone is unchanged."""
    document: dict[str, object] = {
        "format": LOCK_FORMAT,
        "note": "Released rule versions. Written by `irr-audit rules lock`; do not edit by hand.",
        "rules": [{"file": e.file, "rule": e.rule, "version": e.version, "sha256": e.sha256} for e in entries],
    }
    if codebooks:
        document["codebooks"] = [
            {"file": e.file, "codebook": e.codebook, "version": e.version, "sha256": e.sha256, "rules": dict(e.rules)}
            for e in sorted(codebooks, key=lambda entry: (entry.codebook, entry.version, entry.file))
        ]
    return render_json(document)


def parse_lock_codebooks(data: bytes, shown: str) -> tuple[Baseline, dict[str, dict[str, str]]]:
    """The lock's released codebook versions (a Baseline keyed ``<name>/v<N>.yaml``) and, per
    version, the digests of the rule files it pinned. A lock without codebooks has none."""
    try:
        document = load_json(data, f"the lock file {shown}", own_file=True)
        entries = document.get("codebooks", []) if isinstance(document, dict) else None
        if not isinstance(entries, list):
            raise ValueError('"codebooks" is not a list')
        digests: dict[str, str] = {}
        pins: dict[str, dict[str, str]] = {}
        for position, entry in enumerate(entries):
            rules = entry.get("rules") if isinstance(entry, dict) else None
            if not (
                isinstance(entry, dict)
                and isinstance(entry.get("file"), str)
                and isinstance(entry.get("sha256"), str)
                and SHA256_HEX.fullmatch(entry["sha256"])
                and isinstance(rules, dict)
                and all(isinstance(v, str) and SHA256_HEX.fullmatch(v) for v in rules.values())
            ):
                raise ValueError(f"codebook entry {position} has no file, 64-hex-digit sha256 and rules")
            digests[entry["file"]] = "sha256:" + entry["sha256"]
            pins[entry["file"]] = {str(key): "sha256:" + value for key, value in rules.items()}
    except (ValueError, AttributeError, KeyError, TypeError) as error:
        raise IrrAuditError(
            f"the lock file {shown} is not a rules lock ({_why(error)}).",
            hint="restore it from git, or delete it and run irr-audit rules lock to write it anew.",
            code="lock-invalid",
        ) from None
    return Baseline(source=f"the lock file {shown}", digests=digests), pins


def parse_lock(data: bytes, shown: str) -> Baseline:
    """The lock file as a Baseline. IrrAuditError (exit 2) when it is not one we wrote."""
    try:
        document = load_json(data, f"the lock file {shown}", own_file=True)
        entries = document["rules"] if document.get("format") == LOCK_FORMAT else None
        if not isinstance(entries, list):
            raise ValueError(f'no "format": "{LOCK_FORMAT}" with a "rules" list')
        digests: dict[str, str] = {}
        for position, entry in enumerate(entries):
            if not (
                isinstance(entry, dict)
                and isinstance(entry.get("file"), str)
                and isinstance(entry.get("sha256"), str)
                and SHA256_HEX.fullmatch(entry["sha256"])
            ):
                raise ValueError(f"entry {position} has no file and 64-hex-digit sha256")
            digests[entry["file"]] = "sha256:" + entry["sha256"]
    except (ValueError, AttributeError, KeyError, TypeError) as error:
        raise IrrAuditError(
            f"the lock file {shown} is not a rules lock ({_why(error)}).",
            hint="restore it from git, or delete it and run irr-audit rules lock to write it anew.",
            code="lock-invalid",
        ) from None
    return Baseline(source=f"the lock file {shown}", digests=digests)


def _why(error: Exception) -> str:
    """What is wrong with a lock file, for its refusal: a file in UTF-16 or UTF-32 named by its encoding."""
    if isinstance(error, UnicodeDecodeError):
        return f"it is not UTF-8 text: {not_utf8(error, f'byte {error.start} cannot be decoded')}"
    return str(error)
