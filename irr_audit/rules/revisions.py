"""The rule-revision check: is every change to rules/ a new, documented, validated version?

Pure: no git, no files, no clock. The caller (rules.repository) reads the rule files,
the released versions (from a git ref or the lock file) and the audit-bundle
manifests, and hands their bytes in. What comes back is data: each Problem names
the file, what is wrong and the fix, under a stable code that tests and scripts
can rely on (the way pandera and frictionless keep failures as data).

Keys of ``current`` and of a Baseline are paths relative to the rules folder,
``<rule>/v<version>.yaml``; ``rules_label`` is that folder as the user named it,
so that every message points at a file the user can open.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import PurePosixPath
from typing import Any

from irr_audit.errors import LimitError, RuleError
from irr_audit.io import records as recorded
from irr_audit.io.display import shown_against, visible
from irr_audit.io.encodings import not_utf8
from irr_audit.io.files import sha256_digest
from irr_audit.io.limits import load_json
from irr_audit.io.runfolder import CODEBOOK_BUNDLE_FORMAT
from irr_audit.io.unitsketch import is_sketch, sketch_jaccard
from irr_audit.rules.load import MAX_RULE_BYTES, parse_rule
from irr_audit.rules.model import Rule, code_key

RULE_FILE_NAME = re.compile(r"v([1-9][0-9]*)\.yaml")
BUNDLE_FORMAT = "irr-audit-bundle/1"
# A two-coder score reports Cohen's kappa; three or more coders report Fleiss'.
KAPPA_METRICS = ("cohen_kappa", "fleiss_kappa")
ALPHA_METRICS = ("krippendorff_alpha",)


@dataclass(frozen=True)
class Problem:
    """One violation: the file, what is wrong, the fix, and a stable code."""

    code: str
    file: str
    what: str
    fix: str

    def render(self) -> str:
        # User text (bundle names, YAML) is escaped: it must not break the one-line-per-problem output.
        return visible(f"{self.file}: [{self.code}] {self.what} Fix: {self.fix}")


@dataclass(frozen=True)
class Baseline:
    """Released versions as recorded somewhere (a git ref, the lock file): key -> digest."""

    source: str
    digests: Mapping[str, str]


@dataclass(frozen=True)
class Gates:
    """Optional score gates. Conventions of the project, never laws of nature."""

    min_kappa: float | None = None
    min_alpha: float | None = None
    use_ci_lower: bool = False

    @property
    def active(self) -> bool:
        return self.min_kappa is not None or self.min_alpha is not None


@dataclass(frozen=True)
class CheckResult:
    problems: tuple[Problem, ...]
    notes: tuple[str, ...]
    files_checked: int

    @property
    def clean(self) -> bool:
        return not self.problems


@dataclass(frozen=True)
class RuleFile:
    """A file under rules/ as found: where it sits, what it says, whether it parses."""

    key: str
    shown: str
    folder: str
    name: str
    digest: str
    rule: Rule | None
    problem: Problem | None

    @property
    def name_version(self) -> int | None:
        match = RULE_FILE_NAME.fullmatch(self.name)
        return int(match.group(1)) if match else None

    @property
    def version(self) -> int | None:
        """What the file declares; its file name's number when it does not parse."""
        return self.rule.version if self.rule is not None else self.name_version


@dataclass(frozen=True)
class Bundle:
    """What the check needs from an audit bundle's manifest.json."""

    shown: str
    name: str
    created: datetime
    rule_id: str
    version: int
    rule_digest: str
    ids_sha256: str
    recodes: Mapping[str, Any] | None
    score: Any = field(default=None, compare=False)
    sketch: tuple[str, ...] = ()  # units.sketch: of every unit (none in older bundles)
    scored_sketch: tuple[str, ...] = ()  # units.scored_sketch: of the fully coded units (none in older bundles)
    sample_recoding: bool = False  # made from a sample drawn under an earlier version: a re-coding
    codebook: str = ""  # a codebook bundle's variable: the codebook audited ("comment_study v1"); "" for a rule's

    @property
    def label(self) -> str:
        """The bundle as a problem line names it."""
        return f"{'codebook ' if self.codebook else ''}audit bundle {self.name!r}"

    @property
    def validates(self) -> str:
        """The rule version this audit validates: a variable of a codebook's, named so."""
        pinned = f"{self.rule_id} v{self.version}"
        return f"variable {pinned} of {self.codebook}" if self.codebook else pinned

    @property
    def marked_recoding(self) -> bool:
        return self.recodes is not None or self.sample_recoding

    @property
    def overlap_sketch(self) -> tuple[str, ...]:
        """The sketch the overlap with other audits is measured by: of the units scored, or, in a
        bundle frozen before that sketch was kept, of every unit."""
        return self.scored_sketch or self.sketch


# --- the check ----------------------------------------------------------------


def check_rules(
    current: Mapping[str, bytes],
    baselines: Sequence[Baseline] = (),
    manifests: Mapping[str, bytes] | None = None,
    gates: Gates | None = None,
    rules_label: str = "rules",
) -> CheckResult:
    """Every problem with the rule files ``current`` (key -> bytes), in a stable order."""
    files = [read_rule_file(key, data, rules_label) for key, data in sorted(current.items())]
    problems: list[Problem] = [file.problem for file in files if file.problem]
    problems += layout_problems(files)
    problems += sequence_problems(files)
    problems += released_problems(files, baselines, rules_label)
    for file in files:
        if file.rule is not None and is_new(file, baselines):
            previous = previous_version(file, files)
            problems += changelog_problems(file)
            problems += code_map_problems(file, previous)
    bundles, bundle_problems = read_bundles(manifests or {})
    ours = {file.rule.id for file in files if file.rule is not None}
    bundles = [bundle for bundle in bundles if bundle.rule_id in ours]
    problems += bundle_problems
    problems += frozen_rule_problems(bundles, files)
    problems += recoding_problems(bundles)
    gate_problems, notes = gate_results(bundles, files, gates or Gates())
    problems += gate_problems
    if manifests is not None and not (gates or Gates()).active:  # a gate notes these itself
        notes += unvalidated_notes(files, bundles, baselines)
    return CheckResult(problems=tuple(problems), notes=tuple(notes), files_checked=len(files))


def read_rule_file(key: str, data: bytes, rules_label: str) -> RuleFile:
    path = PurePosixPath(key)
    shown = shown_path(rules_label, key)
    digest = sha256_digest(data)
    folder, name = (path.parts[-2], path.name) if len(path.parts) >= 2 else ("", path.name)
    if len(data) > MAX_RULE_BYTES:
        problem = Problem(
            "rule-too-large",
            shown,
            f"is {len(data):,} bytes; a rule file is at most {MAX_RULE_BYTES:,} bytes.",
            "keep only rule files under the rules folder.",
        )
        return RuleFile(key, shown, folder, name, digest, None, problem)
    try:
        rule = parse_rule(data, shown)
    except RuleError as error:
        fix = error.hint or "fix the rule file so that it validates."
        problem = Problem(error.code, shown, _without_prefix(error.message, shown), fix)
        return RuleFile(key, shown, folder, name, digest, None, problem)
    return RuleFile(key, shown, folder, name, digest, rule, None)


def layout_problems(files: Sequence[RuleFile]) -> list[Problem]:
    """`<rule>/v<version>.yaml`: the file name and folder agree with what the file says."""
    problems: list[Problem] = []
    for file in files:
        if file.name_version is None:
            problems.append(
                Problem(
                    "rule-file-name",
                    file.shown,
                    f"is not named v<version>.yaml, so it is no version of rule {file.folder!r}.",
                    "name each version of a rule v1.yaml, v2.yaml, ... inside the rule's folder.",
                )
            )
        if file.rule is None:
            continue
        if file.rule.id != file.folder:
            problems.append(
                Problem(
                    "rule-folder-mismatch",
                    file.shown,
                    f"says rule: {file.rule.id} but sits in the folder {file.folder!r}.",
                    f"move it to {file.rule.id}/{file.name}, or set rule: {file.folder}.",
                )
            )
        if file.name_version is not None and file.rule.version != file.name_version:
            problems.append(
                Problem(
                    "version-mismatch",
                    file.shown,
                    f"says version: {file.rule.version} but its file name says {file.name_version}.",
                    f"set version: {file.name_version}, or rename the file v{file.rule.version}.yaml.",
                )
            )
    return problems


def sequence_problems(files: Sequence[RuleFile]) -> list[Problem]:
    """Each rule's versions run 1, 2, 3, ... without a gap or a repeat."""
    problems: list[Problem] = []
    for folder in sorted({file.folder for file in files}):
        declared = sorted(
            (file.version, file.shown) for file in files if file.folder == folder and file.version is not None
        )
        seen: dict[int, str] = {}
        expected = 1
        for version, shown in declared:
            if version in seen:
                problems.append(
                    Problem(
                        "version-repeated",
                        shown,
                        f"repeats version {version} of rule {folder!r}, already in {seen[version]}.",
                        "give every revision the next version number, in a file of its own.",
                    )
                )
                continue
            seen[version] = shown
            if version > expected:
                missing = f"v{expected}" if version == expected + 1 else f"v{expected} to v{version - 1}"
                problems.append(
                    Problem(
                        "version-skipped",
                        shown,
                        f"is version {version} of rule {folder!r}, but {missing} does not exist.",
                        f"number versions without gaps: make this v{expected}.yaml with version: {expected}"
                        + ("." if expected > 1 else ", or restore v1.yaml."),
                    )
                )
            expected = version + 1
    return problems


def released_problems(files: Sequence[RuleFile], baselines: Sequence[Baseline], rules_label: str) -> list[Problem]:
    """A released version stays byte-for-byte what was released, and stays present."""
    problems: list[Problem] = []
    by_key = {file.key: file for file in files}
    for baseline in baselines:
        for key, digest in sorted(baseline.digests.items()):
            shown = shown_path(rules_label, key)
            file = by_key.get(key)
            if file is None:
                problems.append(
                    Problem(
                        "released-removed",
                        shown,
                        f"is a released version (in {baseline.source}) and has been removed.",
                        "restore it unchanged; released versions stay readable. Retire a rule by "
                        "adding a new version, not by deleting old ones.",
                    )
                )
            elif file.digest != digest:
                problems.append(
                    Problem(
                        "released-edited",
                        shown,
                        f"is a released version and differs from {baseline.source} "
                        f"({short_digest(digest)} there, {short_digest(file.digest)} now).",
                        f"restore it as released and put the change in a new version, "
                        f"{next_version_name(file, files)}, with a changelog.",
                    )
                )
    return problems


def unvalidated_notes(files: Sequence[RuleFile], bundles: Sequence[Bundle], baselines: Sequence[Baseline]) -> list[str]:
    """With --audits: each new version that no audit validates yet, so that it is not used
    as if it had been (not a problem: a revision is written before its audit is made)."""
    validated = {(bundle.rule_id, bundle.version) for bundle in bundles}
    return [
        f"{file.rule.id} v{file.rule.version} is new and has no validation audit yet: validate it on a new "
        "sample, or on an earlier sample coded again under it (join --sample, or freeze --recodes), before it is used."
        for file in files
        if file.rule is not None and is_new(file, baselines) and (file.rule.id, file.rule.version) not in validated
    ]


def is_new(file: RuleFile, baselines: Sequence[Baseline]) -> bool:
    """New means released nowhere: not at the git base, not in the lock file."""
    return all(file.key not in baseline.digests for baseline in baselines)


def previous_version(file: RuleFile, files: Sequence[RuleFile]) -> RuleFile | None:
    """The version this one revises: the highest one below it (v-1, unless one was skipped)."""
    if file.rule is None:
        return None
    earlier = [
        (other, other.rule)
        for other in files
        if other.folder == file.folder and other.rule is not None and other.rule.version < file.rule.version
    ]
    # Highest version first; a correctly named file wins over one that merely declares it.
    earlier.sort(key=lambda pair: (-pair[1].version, pair[0].name_version != pair[1].version))
    return earlier[0][0] if earlier else None


def changelog_problems(file: RuleFile) -> list[Problem]:
    """A new version (after v1) says what changed and why."""
    rule = file.rule
    if rule is None or rule.version == 1:
        return []
    changelog = rule.changelog
    example = "changelog: {summary: what changed, why: the disagreement it resolves}"
    if isinstance(changelog, str) and changelog.strip():
        # free text cannot be checked for a reason; a revision is reviewed by what and why
        return [
            Problem(
                "changelog-incomplete",
                file.shown,
                f"is new version {rule.version} of {rule.id} and its changelog is one piece of text, "
                "which does not say apart what changed and why.",
                f"write it as `changelog: {{summary: {_one_line(changelog)}, why: the disagreement it resolves}}`.",
            )
        ]
    if not isinstance(changelog, Mapping) or not changelog:
        return [
            Problem(
                "changelog-missing",
                file.shown,
                f"is new version {rule.version} of {rule.id} and has no changelog saying what changed and why.",
                f"add `{example}`.",
            )
        ]
    missing = [key for key in ("summary", "why") if not _says_something(changelog.get(key))]
    meaning = {"summary": "what changed", "why": "why it changed"}
    if missing:
        return [
            Problem(
                "changelog-incomplete",
                file.shown,
                "has a changelog without " + " or ".join(f"{key} ({meaning[key]})" for key in missing) + ".",
                f"add {' and '.join(f'changelog.{key}' for key in missing)} as text.",
            )
        ]
    if _normal_text(changelog["why"]) == _normal_text(changelog["summary"]):
        return [
            Problem(
                "changelog-incomplete",
                file.shown,
                "has a changelog whose why repeats its summary, so it does not say why the rule changed.",
                "write in changelog.why the disagreement or finding the change resolves.",
            )
        ]
    return []


PLACEHOLDERS = frozenset({"-", "--", ".", "...", "?", "n/a", "na", "none", "tbd", "todo", "fixme", "xxx", "wip"})


def _normal_text(text: str) -> str:
    return " ".join(text.split()).casefold().rstrip(".")


def _says_something(value: Any) -> bool:
    """Text that is more than a placeholder (``TBD``, ``n/a``, ``-``)."""
    return _filled_text(value) and _normal_text(value) not in {*PLACEHOLDERS, ""}


def _one_line(text: str) -> str:
    """A changelog's text quoted for a YAML flow mapping in a fix."""
    flat = " ".join(text.split())
    return json.dumps(flat if len(flat) <= 80 else flat[:77] + "...", ensure_ascii=False)


def code_map_problems(file: RuleFile, previous: RuleFile | None) -> list[Problem]:
    """Changed codes need changelog.code_map: every old code -> a new code or null."""
    rule = file.rule
    if rule is None or previous is None or previous.rule is None:
        return []
    old_codes, new_codes = previous.rule.categories, rule.categories
    changelog = rule.changelog if isinstance(rule.changelog, Mapping) else {}
    code_map = changelog.get("code_map")
    changed = [code_key(code) for code in old_codes] != [code_key(code) for code in new_codes]
    if code_map is None:
        if not changed:
            return []
        pairs = ", ".join(f"{json.dumps(code)}: ..." for code in old_codes)
        return [
            Problem(
                "code-map-missing",
                file.shown,
                f"changes the codes of {rule.id} (v{previous.rule.version} -> v{rule.version}: "
                f"{describe_code_change(old_codes, new_codes)}) and the changelog does not say how "
                "old codes map to new ones.",
                f"add changelog.code_map: {{{pairs}}} mapping every v{previous.rule.version} code to a "
                f"v{rule.version} code, or to null when it has none.",
            )
        ]
    return code_map_entry_problems(file, code_map, old_codes, new_codes, previous.rule.version)


def code_map_entry_problems(
    file: RuleFile, code_map: Any, old_codes: Sequence[str], new_codes: Sequence[str], old_version: int
) -> list[Problem]:
    version = file.rule.version if file.rule else "?"
    fix_shape = (
        f"map every v{old_version} code ({', '.join(old_codes)}) to a v{version} code "
        f"({', '.join(new_codes)}) or to null."
    )
    if not isinstance(code_map, Mapping):
        return [
            Problem(
                "code-map-invalid",
                file.shown,
                "has a changelog.code_map that is not a mapping of old code to new code.",
                fix_shape,
            )
        ]
    old_keys = {code_key(code) for code in old_codes}
    new_keys = {code_key(code) for code in new_codes}
    mapped: set[str] = set()
    problems: list[Problem] = []
    for old, new in code_map.items():
        old_text, new_text = code_ref(old), code_ref(new)
        if old_text is None or code_key(old_text) not in old_keys:
            problems.append(
                Problem(
                    "code-map-invalid",
                    file.shown,
                    f"maps {old!r} in changelog.code_map, which is no v{old_version} code.",
                    fix_shape,
                )
            )
            continue
        mapped.add(code_key(old_text))
        if new is not None and (new_text is None or code_key(new_text) not in new_keys):
            problems.append(
                Problem(
                    "code-map-invalid",
                    file.shown,
                    f"maps {old_text!r} to {new!r} in changelog.code_map, which is no v{version} code.",
                    fix_shape,
                )
            )
    unmapped = [code for code in old_codes if code_key(code) not in mapped]
    if unmapped:
        problems.append(
            Problem(
                "code-map-incomplete",
                file.shown,
                f"has a changelog.code_map that does not say where v{old_version} "
                f"code{'s' if len(unmapped) > 1 else ''} {', '.join(map(repr, unmapped))} went.",
                fix_shape,
            )
        )
    return problems


def describe_code_change(old_codes: Sequence[str], new_codes: Sequence[str]) -> str:
    """'added maybe; removed no' or 'reordered yes, no -> no, yes'.

    >>> describe_code_change(["yes", "no"], ["yes", "no", "maybe"])
    'added maybe'
    >>> describe_code_change(["yes", "no"], ["no", "yes"])
    'reordered yes, no -> no, yes'
    """
    old_keys = [code_key(code) for code in old_codes]
    new_keys = [code_key(code) for code in new_codes]
    added = [code for code in new_codes if code_key(code) not in old_keys]
    removed = [code for code in old_codes if code_key(code) not in new_keys]
    parts = []
    if added:
        parts.append("added " + ", ".join(added))
    if removed:
        parts.append("removed " + ", ".join(removed))
    kept_old = [key for key in old_keys if key in new_keys]
    kept_new = [key for key in new_keys if key in old_keys]
    if kept_old != kept_new or not parts:
        parts.append(f"reordered {', '.join(old_codes)} -> {', '.join(new_codes)}")
    return "; ".join(parts)


# --- audit bundles ------------------------------------------------------------


def read_bundles(manifests: Mapping[str, bytes]) -> tuple[list[Bundle], list[Problem]]:
    bundles: list[Bundle] = []
    problems: list[Problem] = []
    for shown, data in sorted(manifests.items()):
        codebook = is_codebook_bundle(data)
        try:
            # each variable of a codebook's audit is an audit of its rule, as a rule's bundle is of its own
            bundles += parse_codebook_manifest(data, shown) if codebook else [parse_manifest(data, shown)]
        except ValueError as error:
            problems.append(
                Problem(
                    "bundle-manifest-invalid",
                    shown,
                    f"is not a readable {CODEBOOK_BUNDLE_FORMAT if codebook else BUNDLE_FORMAT} manifest: {error}.",
                    "run irr-audit verify on the bundle; re-freeze it if it was damaged.",
                )
            )
    return bundles, problems


def is_codebook_bundle(data: bytes) -> bool:
    """The manifest of a codebook audit's bundle (irr_audit.bundle.codebook)."""
    try:
        document = load_json(data, "manifest.json", own_file=True)
    except (ValueError, LimitError):
        return False
    return isinstance(document, dict) and document.get("format") == CODEBOOK_BUNDLE_FORMAT


def manifest_document(data: bytes, shown: str) -> dict[str, Any]:
    """A manifest's JSON object. ValueError names what is wrong."""
    try:
        document = load_json(data, shown, own_file=True)
    except LimitError as error:
        raise ValueError(error.message.removeprefix(f"{shown} ")) from None
    except UnicodeDecodeError as error:
        raise ValueError(f"it is not UTF-8 text ({not_utf8(error, f'byte {error.start}')})") from None
    except ValueError:
        raise ValueError("it is not valid JSON") from None
    if not isinstance(document, dict):
        raise ValueError("the top level is not an object")
    return document


def parse_manifest(data: bytes, shown: str) -> Bundle:
    """The fields of a bundle manifest the check uses. ValueError names what is wrong."""
    document = manifest_document(data, shown)
    if document.get("format") != BUNDLE_FORMAT:
        raise ValueError(f"format is {document.get('format')!r}, not {BUNDLE_FORMAT!r}")
    rule = _field(document, "rule", dict)
    units = _field(document, "units", dict)
    recodes = document.get("recodes")
    if recodes is not None and not (isinstance(recodes, dict) and _filled_text(recodes.get("bundle"))):
        raise ValueError('"recodes" is neither null nor {"bundle": "<name>", ...}')
    version = _field(rule, "version", int)
    if isinstance(version, bool):
        raise ValueError('"version" is not an integer')
    score = document.get("score")
    check_score_metrics(score, "score")
    return Bundle(
        shown=shown,
        name=_field(document, "name", str),
        created=parse_created(_field(document, "created", str)),
        rule_id=_field(rule, "id", str),
        version=version,
        rule_digest=_field(rule, "digest", str),
        ids_sha256=_field(units, "ids_sha256", str),
        recodes=recodes,
        score=document.get("score"),
        sketch=tuple(units["sketch"]) if is_sketch(units.get("sketch")) else (),
        scored_sketch=tuple(units["scored_sketch"]) if is_sketch(units.get("scored_sketch")) else (),
        sample_recoding=isinstance(document.get("sample"), dict) and bool(document["sample"].get("recoding")),
    )


def check_score_metrics(score: Any, where: str) -> None:
    """The gates read the coefficients: a value beyond any float is no coefficient (ValueError)."""
    found = (
        recorded.metrics(score["metrics"], f"{where}.metrics") if isinstance(score, dict) and "metrics" in score else []
    )
    if found:
        raise ValueError(found[0])


def parse_codebook_manifest(data: bytes, shown: str) -> list[Bundle]:
    """A codebook bundle's manifest as one audit per variable: each of its rule at the version the
    codebook pinned, with that variable's frozen score (the single-rule score JSON its report
    shows) and the bundle's units: their digest, their sketch and the sketch of that variable's
    fully coded units (a bundle frozen before the sketches has none: only the very same units are
    then found the same). ValueError names what is wrong."""
    document = manifest_document(data, shown)
    book = _field(document, "codebook", dict)
    codebook = f"{_field(book, 'name', str)} v{_field(book, 'version', int)}"
    name, created = _field(document, "name", str), parse_created(_field(document, "created", str))
    units = _field(document, "units", dict)
    ids_sha256 = _field(units, "ids_sha256", str)
    sketch = tuple(units["sketch"]) if is_sketch(units.get("sketch")) else ()
    scored = units.get("scored_sketches") if isinstance(units.get("scored_sketches"), dict) else {}
    recoded = codebook_recodes_of(document.get("recodes"))
    scores = _field(_field(document, "score", dict), "variables", dict)
    bundles = []
    for position, entry in enumerate(_field(document, "rules", list)):
        if not isinstance(entry, dict):
            raise ValueError(f"rules[{position}] is not an object")
        rule_id, version = _field(entry, "id", str), _field(entry, "version", int)
        if isinstance(version, bool):
            raise ValueError(f'rules[{position}]: "version" is not an integer')
        frozen = scores.get(rule_id)
        if not isinstance(frozen, dict) or not isinstance(frozen.get("score"), dict):
            raise ValueError(f"score.variables has no score of the variable {rule_id!r}")
        check_score_metrics(frozen["score"], f"score.variables.{rule_id}.score")
        bundles.append(
            Bundle(
                shown=shown,
                name=name,
                created=created,
                rule_id=rule_id,
                version=version,
                rule_digest=_field(entry, "digest", str),
                ids_sha256=ids_sha256,
                recodes=recoded.get(rule_id),
                score=frozen["score"],
                sketch=sketch,
                scored_sketch=tuple(scored[rule_id]) if is_sketch(scored.get(rule_id)) else (),
                codebook=codebook,
            )
        )
    return bundles


def codebook_recodes_of(recodes: Any) -> dict[str, dict[str, Any]]:
    """A codebook manifest's `recodes` per variable re-coded: {variable: {"bundle": <the bundle
    re-coded>, "from": <the version it audited>, ...}}; none without it (null, or absent in a
    bundle frozen before it). ValueError names what is wrong."""
    if recodes is None:
        return {}
    if not (
        isinstance(recodes, dict) and _filled_text(recodes.get("bundle")) and isinstance(recodes.get("variables"), dict)
    ):
        raise ValueError('"recodes" is neither null nor {"bundle": "<name>", "variables": {...}, ...}')
    return {
        variable: {"bundle": recodes["bundle"], **versions}
        for variable, versions in recodes["variables"].items()
        if isinstance(versions, dict)
    }


def parse_created(text: str) -> datetime:
    """ISO 8601; a trailing Z and a missing offset both mean UTC.

    >>> parse_created("2024-05-01T10:00:00Z").isoformat()
    '2024-05-01T10:00:00+00:00'
    """
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ValueError(f'"created" is not an ISO 8601 time ({text!r})') from None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def frozen_rule_problems(bundles: Sequence[Bundle], files: Sequence[RuleFile]) -> list[Problem]:
    """A version an audit was frozen with is released, whatever git or the lock say."""
    by_version = {(f.rule.id, f.rule.version): f for f in files if f.rule is not None}
    problems: list[Problem] = []
    reported: set[tuple[str, str]] = set()
    for bundle in bundles:
        file = by_version.get((bundle.rule_id, bundle.version))
        if file is None:
            problems.append(
                Problem(
                    "bundle-rule-missing",
                    bundle.shown,
                    f"{bundle.label} was frozen with {bundle.validates}, which has no rule file any more.",
                    f"restore {bundle.rule_id}/v{bundle.version}.yaml from the copy frozen in the bundle.",
                )
            )
        elif file.digest != bundle.rule_digest and (file.key, bundle.rule_digest) not in reported:
            reported.add((file.key, bundle.rule_digest))
            problems.append(
                Problem(
                    "bundle-rule-edited",
                    file.shown,
                    f"differs from the version {bundle.label} was frozen with "
                    f"({short_digest(bundle.rule_digest)} there, {short_digest(file.digest)} now).",
                    f"restore it from the copy frozen in the bundle and put the change in "
                    f"{next_version_name(file, files)}.",
                )
            )
    return problems


SAME_UNITS_JACCARD = 0.5  # at least this share of the two audits' units in common: largely the same units


def shared_units(bundle: Bundle, other: Bundle) -> float | None:
    """1.0 for the same units; else the Jaccard index of the two audits' scored units from their
    sketches (None: not known, an older bundle has no sketch). The scored units, not every id of
    the sheets: ids a sheet lists that are never fully coded add nothing to the statistics, so
    they must not make an audit of the old units look like a new sample."""
    if bundle.ids_sha256 == other.ids_sha256:
        return 1.0
    if not bundle.overlap_sketch or not other.overlap_sketch:
        return None
    return sketch_jaccard(bundle.overlap_sketch, other.overlap_sketch)


def recoding_problems(bundles: Sequence[Bundle]) -> list[Problem]:
    """A revision is validated on a new sample, or on one explicitly marked as re-coded:
    an audit of vN on the same units as an audit of an earlier version, or on largely the
    same (a typo or a few units more or less do not make a new sample), is a re-coding."""
    problems: list[Problem] = []
    for bundle in bundles:
        if bundle.marked_recoding:
            continue
        earlier = []
        for other in bundles:
            if other.rule_id == bundle.rule_id and other.version < bundle.version:
                shared = shared_units(bundle, other)
                if shared is not None and shared >= SAME_UNITS_JACCARD:
                    earlier.append((shared, other))
        if not earlier:
            continue
        shared, source = max(earlier, key=lambda pair: (pair[0], pair[1].version, pair[1].created, pair[1].name))
        scored = "fully coded " if bundle.scored_sketch and source.scored_sketch else ""
        units = (
            "the same units"
            if bundle.ids_sha256 == source.ids_sha256
            else f"largely the same {scored}units (Jaccard index {shared:.2f})"
        )
        problems.append(
            Problem(
                "same-units-not-recoded",
                bundle.shown,
                f"{bundle.label} validates {bundle.validates} on {units} "
                f"as bundle {source.name!r} (v{source.version}) and is not marked as a re-coding.",
                recoding_fix(bundle, source),
            )
        )
    return problems


def recoding_fix(bundle: Bundle, source: Bundle) -> str:
    """How to validate ``bundle``'s version: a new sample, or a re-coding marked as one, where
    freeze can mark it (a rule's audit re-codes a rule's bundle; a codebook's audit, either)."""
    if bundle.codebook:
        return (
            f"validate v{bundle.version} on a new sample, or freeze the codebook audit as an explicit re-coding: "
            f"irr-audit freeze ... --codebook ... --recodes {PurePosixPath(source.shown).parent}."
        )
    if source.codebook:
        return (
            f"validate v{bundle.version} on a new sample, or audit it within the codebook and freeze that as an "
            f"explicit re-coding: irr-audit freeze ... --codebook ... --recodes {PurePosixPath(source.shown).parent} "
            "(a rule's freeze --recodes takes a rule's bundle only: docs/codebooks.md)."
        )
    return (
        f"validate v{bundle.version} on a new sample, or freeze it as an explicit re-coding: "
        f"irr-audit freeze ... --recodes {PurePosixPath(source.shown).parent}."
    )


# --- score gates --------------------------------------------------------------


def gate_results(bundles: Sequence[Bundle], files: Sequence[RuleFile], gates: Gates) -> tuple[list[Problem], list[str]]:
    """Gate the newest validation audit of each rule's newest version.

    Only the newest version is gated: the versions before it were revised, often
    because they scored low, and must not block the revision that fixes them.
    """
    if not gates.active:
        return [], []
    newest: dict[str, int] = {}
    for file in files:
        if file.rule is not None:
            newest[file.rule.id] = max(newest.get(file.rule.id, 0), file.rule.version)
    problems: list[Problem] = []
    notes: list[str] = []
    for rule_id, version in sorted(newest.items()):
        audits = [b for b in bundles if b.rule_id == rule_id and b.version == version]
        if not audits:
            notes.append(f"{rule_id} v{version} has no validation audit yet; the score gates were not applied to it.")
            continue
        latest = max(audits, key=lambda bundle: (bundle.created, bundle.name))
        for option, threshold, names in (
            ("--min-kappa", gates.min_kappa, KAPPA_METRICS),
            ("--min-alpha", gates.min_alpha, ALPHA_METRICS),
        ):
            if threshold is not None:
                problem = gate_problem(latest, option, threshold, names, gates.use_ci_lower)
                if problem is not None:
                    problems.append(problem)
    return problems, notes


def gate_problem(
    bundle: Bundle, option: str, threshold: float, names: Sequence[str], use_ci_lower: bool
) -> Problem | None:
    """None when the gate is met. An undefined or absent coefficient never meets it."""
    subject = f"{bundle.label} ({bundle.validates}, the newest validation)"
    metrics = bundle.score.get("metrics") if isinstance(bundle.score, dict) else None
    if not isinstance(metrics, dict):
        metrics = {}
    found = [name for name in names if isinstance(metrics.get(name), dict)]
    if not found:
        return Problem(
            "gate-no-metric",
            bundle.shown,
            f"{subject} has no {' or '.join(names)} in its score, so {option} cannot pass.",
            "freeze an audit whose score reports that coefficient, or drop the gate.",
        )
    name = found[0]
    metric = metrics[name]
    value = metric.get("value")
    if metric.get("defined") is not True or not recorded.is_finite_number(value):
        reason = metric.get("reason") or "no reason given"
        return Problem(
            "gate-undefined",
            bundle.shown,
            f"{subject} has {name} undefined ({reason}), which fails {option} {threshold:g}.",
            "an undefined coefficient shows nothing about agreement: validate on a sample "
            "where the coders use more than one category.",
        )
    measured, what = float(value), f"{name} = {shown_against(float(value), threshold)[0]}"
    if use_ci_lower:
        interval = reported_interval(bundle.score, name, metric)
        if not (isinstance(interval, list) and len(interval) == 2 and recorded.is_finite_number(interval[0])):
            return Problem(
                "gate-no-ci",
                bundle.shown,
                f"{subject} has no confidence interval for {name}, which --use-ci-lower needs.",
                "freeze an audit whose score reports the interval (score --bootstrap N gives one to a "
                "coefficient with no formula for its SE), or drop --use-ci-lower.",
            )
        lower = float(interval[0])
        measured, what = lower, f"the lower end of the {name} interval = {shown_against(lower, threshold)[0]}"
    if measured >= threshold:
        return None
    return Problem(
        "gate-below",
        bundle.shown,
        f"{subject}: {what} is below {option} {shown_against(measured, threshold)[1]}.",
        "review the disagreements, revise the rule as a new version and validate it on a "
        "new sample (the gate is this project's convention, not a law).",
    )


def reported_interval(score: Any, name: str, metric: Mapping[str, Any]) -> Any:
    """The interval a frozen score's report gives coefficient ``name``, in the order the report
    chooses it (irr_audit.report.headline.interval_of): its analytic one; else, for the headline
    coefficient, the headline's (Krippendorff's bootstrap of an ordinal or interval alpha, which has
    no formula for its SE); else the percentile bootstrap over units of --bootstrap. As recorded:
    the caller checks it is two numbers."""
    if metric.get("ci") is not None:
        return metric.get("ci")
    headline = score.get("headline") if isinstance(score, Mapping) else None
    if (
        isinstance(headline, Mapping)
        and headline.get("metric") == name
        and isinstance(headline.get("interval"), Mapping)
    ):
        return [headline["interval"].get("low"), headline["interval"].get("high")]
    units = metric.get("bootstrap")
    return units.get("ci") if isinstance(units, Mapping) and units.get("defined") is True else None


# --- small helpers -----------------------------------------------------------


def shown_path(rules_label: str, key: str) -> str:
    """The path a user sees: the rules folder as given, then the key."""
    label = rules_label.rstrip("/")
    return key if label in ("", ".") else f"{label}/{key}"


def next_version_name(file: RuleFile, files: Sequence[RuleFile]) -> str:
    versions = [f.rule.version for f in files if f.folder == file.folder and f.rule is not None]
    versions += [f.name_version for f in files if f.folder == file.folder and f.name_version]
    return f"{file.folder}/v{max(versions, default=0) + 1}.yaml"


def _field(document: dict[str, Any], key: str, kind: type) -> Any:
    value = document.get(key)
    if not isinstance(value, kind):
        raise ValueError(f'"{key}" is missing or not {"an object" if kind is dict else kind.__name__}')
    return value


def code_ref(value: Any) -> str | None:
    """A code as written in a code_map: text, or an integer level (ordinal 0-3)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def _filled_text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def short_digest(digest: str) -> str:
    return digest[: len("sha256:") + 12]


def _without_prefix(message: str, name: str) -> str:
    """The loader's messages start with the file name, which the problem line already shows."""
    for prefix in (f"{name}: ", f"{name} "):
        if message.startswith(prefix):
            return message[len(prefix) :]
    return message
