"""`irr-audit verify`: re-hash every file of a bundle, check its manifest, recompute
the score from the frozen files and compare it with the frozen one, check the
adjudication records; then check the bundle against the anchors kept outside it
(an expected digest, a digest list, SSH signatures), if any.

Without an anchor this shows internal consistency only: whoever can write the
bundle folder could change a file and re-hash the manifest.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from irr_audit._version import __version__
from irr_audit.bundle.adjudication import check_adjudication, check_codebook_adjudication, record_files
from irr_audit.bundle.anchor import Anchors, listed_problem
from irr_audit.bundle.codebook import codebook_manifest_problems, recompute_codebook
from irr_audit.bundle.manifest import (
    ADJUDICATION_DIR,
    CODEBOOK_FORMAT,
    MANIFEST,
    RULE_DIR,
    SHEETS_DIR,
    SIGNATURE,
    UNLISTABLE,
    BundleError,
    Problem,
    bundle_files,
    bundle_path,
    canonical_sha256,
    folder_name,
    is_partial,
    load_manifest_json,
    manifest_consistency_problems,
    manifest_problems,
    not_a_bundle,
    read_own_file,
    symlink_problem,
    units_digest,
    units_entry,
)
from irr_audit.bundle.read import frozen_file, frozen_sample, join_files
from irr_audit.bundle.signing import SIGNATURE_MAX_BYTES, check_signature
from irr_audit.errors import IrrAuditError
from irr_audit.io.display import shortened
from irr_audit.io.encodings import not_utf8
from irr_audit.io.files import check_exist, read_bounded, sha256_digest, sha256_hex
from irr_audit.io.limits import DEFAULT_LIMITS, Limits
from irr_audit.io.outputs import render_json
from irr_audit.join.join import JoinResult
from irr_audit.report.headline import Headline, headline_metric
from irr_audit.report.model import AuditOptions, build_report
from irr_audit.sample.folder import SampleRef, recoding_of

# Scores are recomputed by the same code from the same bytes; the tolerance only
# absorbs float noise from a different numpy or CPU, never a changed code.
SCORE_REL_TOL = 1e-12
SCORE_ABS_TOL = 1e-15
# The tool's version may differ at verify time; that is not a changed score. The headline, the
# coefficient table and the paradox explained are read from the compared numbers: their wording
# (and the seeded bootstrap of a headline alpha, drawn by numpy) may change with the tool.
NOT_COMPARED = ("tool", "headline", "coefficients", "paradox")


def compare_scores(frozen: Any, recomputed: Any, where: str = "") -> tuple[list[str], list[str]]:
    """Differences between the frozen score JSON and a recomputed one, generically:
    every key of the frozen score must be recomputed equal (floats within a tight
    relative tolerance). Keys only in the recomputed score are returned apart: a
    newer tool may compute more coefficients than the one that froze the bundle.

    >>> compare_scores({"k": {"value": 0.7}}, {"k": {"value": 0.7000000000000001}, "alpha": 1})
    ([], ['alpha'])
    >>> compare_scores({"n": 20}, {"n": 19})
    (['n: frozen 20, recomputed 19'], [])
    >>> compare_scores({"k": {"defined": False, "reason": "n = 0"}}, {"k": {"defined": False, "reason": "n = 0: none"}})
    ([], [])
    """
    if isinstance(frozen, dict) and isinstance(recomputed, dict):
        differences: list[str] = []
        new: list[str] = []
        for key in frozen:
            if not where and key in NOT_COMPARED:
                continue
            if key == "reason" and isinstance(frozen[key], str) and isinstance(recomputed.get(key), str):
                continue  # why a value is undefined is said in words the tool may improve; `defined` is compared
            inner = f"{where}.{key}" if where else str(key)
            if key not in recomputed:
                differences.append(f"{inner}: in the frozen score, not recomputed")
                continue
            if not where and key == "warnings":
                more, more_new = _compare_warnings(frozen[key], recomputed[key])
            else:
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
    return [f"{where or '(score)'}: frozen {_as_json(frozen)}, recomputed {_as_json(recomputed)}"], []


def _compare_warnings(frozen: Any, recomputed: Any) -> tuple[list[str], list[str]]:
    """Every frozen warning must be given again; a warning only recomputed is new in this
    version of the tool (a check added since the freeze), not a changed score.

    >>> _compare_warnings(["a"], ["a", "b"])
    ([], ['warnings: 1 new'])
    """
    if not (isinstance(frozen, list) and isinstance(recomputed, list)):
        return compare_scores(frozen, recomputed, "warnings")
    lost = [warning for warning in frozen if warning not in recomputed]
    if lost:
        return [f"warnings: frozen {_as_json(lost)}, not given again"], []
    added = len(recomputed) - len(frozen)
    return [], [f"warnings: {added} new"] if added > 0 else []


def _score_difference(text: str) -> Problem:
    """'metrics.cohen_kappa.value: frozen 0.7, recomputed 0.65' as a problem of the score."""
    where, _, detail = text.partition(": ")
    return Problem("score", where, detail)


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


def _as_json(value: Any) -> str:
    return shortened(json.dumps(value, ensure_ascii=False, sort_keys=True), 80)


# --- verify -------------------------------------------------------------------------

INTERNAL_ONLY = (
    "internal consistency only: whoever can write the bundle folder could change a file and re-hash the "
    "manifest, and the bundle would still pass. To check that it is the bundle that was frozen, pass --expect "
    "with the digest freeze printed, --digests with the digest list it was added to, or --allowed-signers "
    "for a signed bundle."
)


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
    headline: HeadlineChange | None = None  # None: the manifest could not be read

    def files_by_kind(self) -> dict[str, list[str]]:
        """The paths of the changed, missing and extra files, in the order found."""
        found: dict[str, list[str]] = {kind: [] for kind in FILE_KINDS}
        for problem in self.problems:
            if problem.kind in found:
                found[problem.kind].append(problem.path)
        return found

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
            "files": self.files_by_kind(),
            "headline": self.headline.to_dict() if self.headline is not None else None,
        }


FILE_KINDS = ("changed", "missing", "extra")
NAMES_SHOWN = 3  # the verdict names this many files of each kind; --verbose lists every one


@dataclass(frozen=True)
class HeadlineChange:
    """The headline coefficient (irr_audit.report.headline) as frozen and as recomputed
    now from the bundle's files (``now`` None: the score could not be recomputed)."""

    frozen: Headline
    now: Headline | None

    @property
    def changed(self) -> bool:
        return self.now is None or self.now.to_dict() != self.frozen.to_dict()

    def to_dict(self) -> dict[str, Any]:
        frozen = self.frozen.to_dict()
        return {
            "metric": frozen.pop("metric"),
            "label": frozen.pop("label"),
            "why": frozen.pop("why"),
            "frozen": frozen,
            "now": _value_part(self.now) if self.now is not None else None,
        }

    def line(self) -> str:
        """'headline: Cohen's kappa (two coders, a nominal rule): frozen 0.7000 -> now 0.6500'."""
        head = f"headline: {self.frozen.label} ({self.frozen.why}): "
        if self.now is None:
            return head + f"frozen {self.frozen.shown} -> now cannot be recomputed"
        if not self.changed:
            return head + f"{self.frozen.shown}, frozen and now"
        return head + f"frozen {self.frozen.shown} -> now {self.now.shown}"


def _value_part(headline: Headline) -> dict[str, Any]:
    part = headline.to_dict()
    for key in ("metric", "label", "why"):
        part.pop(key)
    return part


def headline_change(frozen_score: Any, recomputed_score: dict[str, Any] | None) -> HeadlineChange | None:
    """The headline of the frozen score, and the same coefficient recomputed (the design
    is the frozen one: a changed sheet does not change which coefficient is compared)."""
    if not isinstance(frozen_score, dict):
        return None
    frozen = headline_metric(frozen_score)
    if recomputed_score is None:
        return HeadlineChange(frozen, None)
    metrics = recomputed_score.get("metrics")
    metric = metrics.get(frozen.name) if isinstance(metrics, dict) else None
    return HeadlineChange(frozen, Headline(frozen.name, frozen.label, frozen.why, metric))


def verdict_lines(result: Verification) -> list[str]:
    """The short verdict verify prints first: the outcome, the changed, missing and extra
    files (counts and a few names), the headline coefficient frozen -> now, and how many
    other problems there are. Pure."""
    name = result.name or folder_name(result.bundle)
    files = result.files_by_kind()
    counted = ", ".join(_files_part(kind, files[kind]) for kind in FILE_KINDS)
    if result.ok:
        lines = [f"OK: bundle {name}: files {result.files_checked} unchanged, 0 missing, 0 extra."]
    else:
        lines = [f"FAILED: bundle {name}: files {counted}."]
    if result.headline is not None:
        lines.append(result.headline.line())
    others: dict[str, int] = {}
    for problem in result.problems:
        if problem.kind not in FILE_KINDS:
            others[problem.kind] = others.get(problem.kind, 0) + 1
    if others:
        lines.append("other problems, by kind: " + ", ".join(f"{count} {kind}" for kind, count in others.items()) + ".")
    return lines


PROBLEMS_SHOWN = 10  # without --verbose: this many problem lines, never the score's value by value


def problems_shown(result: Verification, verbose: bool) -> tuple[list[Problem], int]:
    """The problem lines verify prints after its verdict, and how many it leaves to
    --verbose: every one when ``verbose``; else the first few, score differences last
    (the verdict gives the headline's and counts the rest)."""
    if verbose:
        return list(result.problems), 0
    ordered = sorted(result.problems, key=lambda problem: problem.kind == "score" and bool(problem.path))
    return ordered[:PROBLEMS_SHOWN], max(0, len(ordered) - PROBLEMS_SHOWN)


def _files_part(kind: str, paths: list[str]) -> str:
    """'2 changed (sheets/a.csv, sheets/b.csv)', '0 missing'."""
    shown = ", ".join(paths[:NAMES_SHOWN]) + (
        f" and {len(paths) - NAMES_SHOWN} more" if len(paths) > NAMES_SHOWN else ""
    )
    return f"{len(paths)} {kind}" + (f" ({shown})" if paths else "")


def verify_bundle(bundle: Path, anchors: Anchors | None = None, limits: Limits = DEFAULT_LIMITS) -> Verification:
    """Re-hash every file, check the manifest, recompute the score and compare; then
    check the bundle against the anchors kept outside it, if any."""
    check_exist([(bundle, "bundle")])
    bundle = bundle_path(bundle)
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
        why = manifest_read_problem(exc).removeprefix(f"{bundle / MANIFEST} ")  # the problem names the file
        found = _failed(bundle, [Problem("manifest", MANIFEST, why)])
        return _with_anchors(found, _bytes_or_none(bundle / MANIFEST), anchors or Anchors())
    return _with_anchors(
        check_consistency(bundle, manifest_data, manifest, limits), manifest_data, anchors or Anchors()
    )


def check_consistency(
    bundle: Path, manifest_data: bytes, manifest: Any, limits: Limits = DEFAULT_LIMITS
) -> Verification:
    """The bundle against its own manifest: structure, integrity hash, files, units, score
    and adjudication records. Anyone who can write the folder can make all of them agree."""
    if isinstance(manifest, dict) and manifest.get("format") == CODEBOOK_FORMAT:
        return check_codebook_consistency(bundle, manifest_data, manifest, limits)
    structure = manifest_problems(manifest)
    if structure:
        return _failed(bundle, [Problem("manifest", MANIFEST, text) for text in structure])
    problems: list[Problem] = []
    if manifest["integrity"]["sha256"] != canonical_sha256(manifest, "integrity"):
        problems.append(Problem("manifest", MANIFEST, "edited after freezing (its integrity hash does not match)"))
    problems += [Problem("manifest", MANIFEST, text) for text in manifest_consistency_problems(manifest)]
    files, found = file_problems(bundle, manifest, limits)
    problems += found
    notes: list[str] = []
    join, score_problems, new_keys, score = recompute(bundle, manifest, files, limits)
    problems += score_problems
    if new_keys:
        shown = ", ".join(new_keys[:8]) + (f" and {len(new_keys) - 8} more" if len(new_keys) > 8 else "")
        notes.append(f"not in the frozen score (new in irr-audit {__version__}?), not compared: {shown}")
    records = 0
    if join is not None:
        adjudication_problems, records = check_adjudication(bundle, sha256_hex(manifest_data), join)
        problems += adjudication_problems
    return Verification(
        bundle,
        manifest["name"],
        tuple(problems),
        tuple(notes),
        len(manifest["files"]),
        records,
        headline=headline_change(manifest["score"], score),
    )


def check_codebook_consistency(
    bundle: Path, manifest_data: bytes, manifest: dict[str, Any], limits: Limits = DEFAULT_LIMITS
) -> Verification:
    """A codebook bundle against its manifest: structure, integrity hash, files, every variable's
    score recomputed from the files as read (irr_audit.bundle.codebook), and the adjudication
    records, checked against each variable's disagreements as a rule's bundle's are."""
    structure = codebook_manifest_problems(manifest)
    if structure:
        return _failed(bundle, [Problem("manifest", MANIFEST, text) for text in structure])
    problems: list[Problem] = []
    if manifest["integrity"]["sha256"] != canonical_sha256(manifest, "integrity"):
        problems.append(Problem("manifest", MANIFEST, "edited after freezing (its integrity hash does not match)"))
    files, found = file_problems(bundle, manifest, limits)
    problems += found
    notes: list[str] = []
    records = 0
    try:
        score, units, joins, sample = recompute_codebook(bundle, manifest, files, limits)
    except IrrAuditError as error:
        why = " ".join(error.message.split())
        problems.append(Problem("score", "", f"cannot be recomputed from the bundle's files: {why}"))
    else:
        problems += codebook_units_problems(manifest["units"], units)
        problems += codebook_sample_ids_problems(manifest.get("sample"), sample)
        differences, new_keys = compare_scores(manifest["score"], score)
        problems += [_score_difference(text) for text in differences]
        if new_keys:
            shown = ", ".join(new_keys[:8]) + (f" and {len(new_keys) - 8} more" if len(new_keys) > 8 else "")
            notes.append(f"not in the frozen score (new in irr-audit {__version__}?), not compared: {shown}")
        adjudication_problems, records = check_codebook_adjudication(bundle, sha256_hex(manifest_data), joins)
        problems += adjudication_problems
    return Verification(bundle, manifest["name"], tuple(problems), tuple(notes), len(manifest["files"]), records)


def codebook_units_problems(frozen: dict[str, Any], found: dict[str, Any]) -> list[Problem]:
    """The manifest's `units` against the units recomputed: every key it has (a bundle frozen before
    the sketches has none of them, and is checked on its count and digest). Pure."""
    if frozen["count"] != found["count"]:
        return [
            Problem("units", "", f"the frozen sheets hold {found['count']} units, the manifest says {frozen['count']}")
        ]
    differ = [key for key in ("ids_sha256", "sketch", "scored_sketches") if key in frozen and frozen[key] != found[key]]
    if not differ:
        return []
    return [Problem("units", "", f"units.{differ[0]} differs from the units of the frozen sheets")]


def codebook_sample_ids_problems(frozen: dict[str, Any] | None, sample: SampleRef | None) -> list[Problem]:
    """The manifest's `sample.ids` against the ids of the frozen sample as read. Pure."""
    if frozen is None or sample is None:
        return []
    found = {"count": len(sample.ids), "ids_sha256": units_digest(sample.ids)}
    if frozen["ids"] == found:
        return []
    return [Problem("manifest", MANIFEST, "sample.ids are not the ids of the frozen sample's ledger")]


def manifest_read_problem(error: Exception) -> str:
    """Why manifest.json could not be read, for verify's list of problems."""
    if isinstance(error, IrrAuditError):
        return error.message
    if isinstance(error, OSError):
        return f"cannot be read ({error.strerror or error})"
    if isinstance(error, UnicodeDecodeError):
        return f"is not UTF-8 text ({not_utf8(error, f'byte {error.start}')})"
    if isinstance(error, json.JSONDecodeError):
        if not error.doc.strip():
            return "is empty"
        return f"is not JSON ({error.msg} at line {error.lineno}, column {error.colno})"
    return f"cannot be read as JSON ({shortened(str(error), 120)})"


def _bytes_or_none(path: Path) -> bytes | None:
    try:
        return read_own_file(path, str(path))  # never read beyond the limit
    except IrrAuditError:
        return None


def _unfinished_or_missing_manifest(bundle: Path) -> Verification | None:
    if is_partial(bundle):
        return _failed(
            bundle, [Problem("unfinished", folder_name(bundle), "a freeze that did not finish; not a bundle")]
        )
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
    name = found.name or folder_name(found.bundle)
    problems: list[Problem] = []
    held: list[str] = []
    notes: list[str] = []
    renamed = _folder_name_problem(found)
    if renamed is not None and anchors.given:
        problems.append(
            Problem(
                "anchor",
                folder_name(found.bundle),
                f"{renamed}: an anchor names the bundle by its manifest, not its folder; rename the folder "
                f"back to {found.name}, or restore the bundle frozen under this name from a copy",
            )
        )
    elif renamed is not None:
        notes.append(renamed)
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


def _folder_name_problem(found: Verification) -> str | None:
    """The folder's name against the bundle's, or None. An anchor identifies a bundle by its
    manifest, so a copy of another anchored bundle passes every check under the wrong folder
    name: with an anchor the names must agree; without one, a renamed copy is only noted."""
    folder = folder_name(found.bundle)
    if found.name is None or folder == found.name:
        return None
    return (
        f"the folder is named {folder}; the manifest names the bundle {found.name}: "
        "a bundle renamed, or replaced by a copy of another"
    )


def bundle_member_bytes(bundle: Path, path: str, limit: int = SIGNATURE_MAX_BYTES) -> bytes | str | None:
    """A small file of the bundle that no manifest lists (a signature): its bytes, None
    when absent, or why it cannot be used."""
    unsafe = symlink_problem(bundle, path)
    if unsafe is not None:
        return unsafe
    location = bundle.joinpath(*path.split("/"))
    if not location.exists():
        return None
    try:
        return read_bounded(location, "the signature", max_bytes=limit)
    except IrrAuditError as error:
        return error.message.rstrip(".")


def signature_problem(data: bytes, signature: bytes | str | None, anchors: Anchors) -> tuple[str | None, str | None]:
    """Why ``signature`` is not a good signature of ``data`` by an allowed signer, or
    (None, the signer)."""
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
    files, _ = record_files(found.bundle)  # the records' own problems are the consistency check's
    missing = _listed_records_missing(anchors, name, {path for path, _ in files})
    if not files and not missing or not anchors.given:
        return [], [], []
    problems = [
        Problem("missing", path, f"listed for {name} in {source} (line {line}), not in the bundle: deleted")
        for path, source, line in missing
    ]
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
    if not count:
        return problems, [], []
    records = f"{count} adjudication record{'s' if count != 1 else ''}"
    if anchors.digests is None and anchors.allowed_signers is None:
        return (
            problems,
            [],
            [
                f"{records} {'are' if count != 1 else 'is'} not covered by --expect, which anchors "
                "the frozen audit only; check records with verify --digests or --allowed-signers "
                "(anchored by adjudicate --digests or --sign)"
            ],
        )
    ways = [way for way, given in (("listed", anchors.digests), ("signed", anchors.allowed_signers)) if given]
    verb = "are" if count != 1 else "is"
    return problems, [f"its {records} {verb} {' and '.join(ways)}"] if not problems else [], []


def _listed_records_missing(anchors: Anchors, name: str, present: set[str]) -> list[tuple[str, str, int]]:
    """The records of this bundle that the digest list names and the bundle lacks, as
    (adjudication/<record>, the list, its line). A deleted record rolls a decision back to
    an earlier one, so only the list can tell it was there. Pure."""
    if anchors.digests is None:
        return []
    prefix = f"{name}/{ADJUDICATION_DIR}/"
    missing: dict[str, tuple[str, str, int]] = {}
    for entry in anchors.digests.entries:
        path = entry.name.removeprefix(f"{name}/")
        if entry.name.startswith(prefix) and path not in present and path not in missing:
            missing[path] = (path, anchors.digests.source, entry.line)
    return list(missing.values())


# --- verify: the files ------------------------------------------------------------------


def file_problems(
    bundle: Path, manifest: dict[str, Any], limits: Limits = DEFAULT_LIMITS
) -> tuple[dict[str, bytes], list[Problem]]:
    """The listed files' bytes as read (each once), and the changed, missing and extra
    files against the manifest's file list."""
    problems = []
    files = {}
    listed = {record["path"]: record for record in manifest["files"]}
    for path, record in listed.items():
        data, problem = frozen_file(bundle, record, limits)
        if data is not None:
            files[path] = data
        if problem is not None:
            problems.append(problem)
    unlisted: list[OSError] = []
    for path in sorted(bundle_files(bundle, unlisted)):
        if path.endswith("/"):
            problems.append(Problem("extra", path, "an empty folder, not in the manifest"))
        elif path not in listed:
            problems.append(Problem("extra", path, "not in the manifest"))
    for error in unlisted:
        where = os.path.relpath(error.filename, bundle) if error.filename else "."
        problems.append(Problem("changed", Path(where).as_posix(), f"{UNLISTABLE} ({error.strerror})"))
    adjudication = bundle / ADJUDICATION_DIR
    if adjudication.is_symlink() or (adjudication.exists() and not adjudication.is_dir()):
        problems.append(Problem("extra", ADJUDICATION_DIR, "is not a folder of adjudication records"))
    signature = bundle / SIGNATURE
    if signature.is_symlink() or (signature.exists() and not signature.is_file()):
        problems.append(Problem("extra", SIGNATURE, "is not a signature file"))
    return files, problems


def recompute(
    bundle: Path, manifest: dict[str, Any], files: dict[str, bytes], limits: Limits = DEFAULT_LIMITS
) -> tuple[JoinResult | None, list[Problem], list[str], dict[str, Any] | None]:
    """The join and score from the frozen files as they are now (``files``, as read), against the frozen ones:
    the join, the problems, the keys only the recomputed score has, and that score (None: not recomputed)."""
    try:
        sample = frozen_sample(bundle, manifest, limits)
        join = join_files(bundle, manifest, files, limits, sample)
    except IrrAuditError as error:
        why = " ".join(error.message.split())  # one line, whatever the reader's message spans
        return None, [Problem("score", "", f"cannot be recomputed from the bundle's files: {why}")], [], None
    problems = []
    units, found = manifest["units"], units_entry(join.units, join.fully_coded)
    # the sketches are checked when the manifest has them (bundles frozen before a sketch have none)
    if any(units.get(key, found[key]) != found[key] for key in ("count", "ids_sha256", "sketch", "scored_sketch")):
        problems.append(
            Problem(
                "units",
                "",
                f"the frozen sheets hold {found['count']} units, "
                f"the manifest says {units['count']} (or their ids differ)",
            )
        )
    recoding = recoding_of(sample, join.rule) if sample is not None else None
    if (manifest.get("sample") or {}).get("recoding") != recoding:
        problems.append(
            Problem("manifest", MANIFEST, "sample.recoding does not match the frozen sample's rule and the bundle's")
        )
    # Through JSON, as the frozen score went: tuples become lists, exactly as in the manifest.
    score = json.loads(
        render_json(build_report(join, AuditOptions(list_disagreements=False)).to_dict(include_disagreements=False))
    )
    differences, new_keys = compare_scores(manifest["score"], score)
    problems += [_score_difference(text) for text in differences]
    return join, problems, new_keys, score
