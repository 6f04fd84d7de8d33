"""The codebook-revision check: codebooks kept as ``codebooks/<name>/v<version>.yaml`` are
versioned as rules are (docs/codebooks.md, "Versions").

Pure, like rules.revisions: the caller hands in the bytes of the codebook files and of the
rule files (keys relative to their folders), the released codebook versions (a git ref, the
lock file) and the rule versions each released codebook pinned, as the lock recorded them.
Every problem names the file, what is wrong and the fix, under a stable code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from irr_audit.errors import IrrAuditError
from irr_audit.io.files import sha256_digest
from irr_audit.rules.codebook import Codebook, parse_codebook, rule_file_key
from irr_audit.rules.load import MAX_RULE_BYTES, parse_rule
from irr_audit.rules.model import Rule
from irr_audit.rules.revisions import RULE_FILE_NAME, Baseline, Problem, short_digest, shown_path


@dataclass(frozen=True)
class CodebookFile:
    """A file under codebooks/ as found: where it sits, what it says, whether it validates."""

    key: str
    shown: str
    folder: str
    name: str
    digest: str
    codebook: Codebook | None
    problem: Problem | None

    @property
    def name_version(self) -> int | None:
        match = RULE_FILE_NAME.fullmatch(self.name)
        return int(match.group(1)) if match else None


def check_codebooks(
    codebooks: Mapping[str, bytes],
    rules: Mapping[str, bytes],
    baselines: Sequence[Baseline] = (),
    pins: Mapping[str, Mapping[str, str]] | None = None,
    codebooks_label: str = "codebooks",
    rules_label: str = "rules",
) -> list[Problem]:
    """Every problem with the codebook files, in a stable order. ``pins`` is, per released
    codebook key, the digest of each rule file (``<rule>/v<N>.yaml``) it pinned when released."""
    files = [
        read_codebook_file(key, data, rules, codebooks_label, rules_label) for key, data in sorted(codebooks.items())
    ]
    problems = [file.problem for file in files if file.problem]
    problems += codebook_layout_problems(files)
    problems += codebook_sequence_problems(files)
    problems += released_codebook_problems(files, baselines, codebooks_label)
    problems += pinned_rule_problems(files, pins or {}, rules, codebooks_label, rules_label)
    for file in files:
        if file.codebook is not None and file.codebook.version > 1 and is_new(file, baselines):
            problems += changelog_problems(file)
    return problems


def read_codebook_file(
    key: str, data: bytes, rules: Mapping[str, bytes], codebooks_label: str, rules_label: str
) -> CodebookFile:
    path = PurePosixPath(key)
    shown = shown_path(codebooks_label, key)
    folder, name = (path.parts[-2], path.name) if len(path.parts) >= 2 else ("", path.name)
    digest = sha256_digest(data)
    if len(data) > MAX_RULE_BYTES:
        problem = Problem(
            "codebook-too-large",
            shown,
            f"is {len(data):,} bytes; a codebook file is at most {MAX_RULE_BYTES:,} bytes.",
            "keep only codebook files under the codebooks folder.",
        )
        return CodebookFile(key, shown, folder, name, digest, None, problem)

    def read_rule(rule_id: str, version: int) -> Rule:
        rule_key = rule_file_key(rule_id, version)
        if rule_key not in rules:
            raise IrrAuditError(
                f"{shown}: rule {rule_id} version {version} is not in the rules folder "
                f"({shown_path(rules_label, rule_key)} does not exist).",
                hint="add that rule version, or pin a version that exists.",
                code="codebook-rule-not-found",
            )
        return parse_rule(rules[rule_key], shown_path(rules_label, rule_key))

    try:
        codebook = parse_codebook(data, shown, read_rule, rules_label=rules_label)
    except IrrAuditError as error:
        fix = error.hint or "fix the codebook so that it validates."
        what = error.message.removeprefix(f"{shown}: ").removeprefix(f"{shown} ")
        return CodebookFile(key, shown, folder, name, digest, None, Problem(error.code, shown, what, fix))
    return CodebookFile(key, shown, folder, name, digest, codebook, None)


def codebook_layout_problems(files: Sequence[CodebookFile]) -> list[Problem]:
    """``<name>/v<version>.yaml``: the file name and folder agree with what the file says."""
    problems: list[Problem] = []
    for file in files:
        if file.name_version is None:
            problems.append(
                Problem(
                    "codebook-file-name",
                    file.shown,
                    f"is not named v<version>.yaml, so it is no version of codebook {file.folder!r}.",
                    "name each version of a codebook v1.yaml, v2.yaml, ... inside the codebook's folder.",
                )
            )
        if file.codebook is None:
            continue
        if file.codebook.name != file.folder:
            problems.append(
                Problem(
                    "codebook-folder-mismatch",
                    file.shown,
                    f"says codebook: {file.codebook.name} but sits in the folder {file.folder!r}.",
                    f"move it to {file.codebook.name}/{file.name}, or set codebook: {file.folder}.",
                )
            )
        if file.name_version is not None and file.codebook.version != file.name_version:
            problems.append(
                Problem(
                    "codebook-version-mismatch",
                    file.shown,
                    f"says version: {file.codebook.version} but its file name says {file.name_version}.",
                    f"set version: {file.name_version}, or rename the file v{file.codebook.version}.yaml.",
                )
            )
    return problems


def codebook_sequence_problems(files: Sequence[CodebookFile]) -> list[Problem]:
    """Each codebook's versions (by file name) run 1, 2, 3, ... without a gap."""
    problems: list[Problem] = []
    for folder in sorted({file.folder for file in files}):
        versions = sorted(
            (file.name_version, file.shown) for file in files if file.folder == folder and file.name_version
        )
        for expected, (version, shown) in enumerate(versions, start=1):
            if version != expected:
                problems.append(
                    Problem(
                        "codebook-version-skipped",
                        shown,
                        f"is version {version} of codebook {folder!r}, but v{expected} does not exist.",
                        f"number versions without gaps: make this v{expected}.yaml with version: {expected}.",
                    )
                )
                break
    return problems


def released_codebook_problems(
    files: Sequence[CodebookFile], baselines: Sequence[Baseline], codebooks_label: str
) -> list[Problem]:
    """A released codebook version stays byte for byte what was released, and stays present."""
    problems: list[Problem] = []
    by_key = {file.key: file for file in files}
    for baseline in baselines:
        for key, digest in sorted(baseline.digests.items()):
            file = by_key.get(key)
            shown = shown_path(codebooks_label, key)
            if file is None:
                problems.append(
                    Problem(
                        "codebook-released-removed",
                        shown,
                        f"is a released codebook version (in {baseline.source}) and has been removed.",
                        "restore it unchanged; released versions stay readable.",
                    )
                )
            elif file.digest != digest:
                problems.append(
                    Problem(
                        "codebook-released-edited",
                        shown,
                        f"is a released codebook version and differs from {baseline.source} "
                        f"({short_digest(digest)} there, {short_digest(file.digest)} now).",
                        f"restore it as released and put the change in a new version, "
                        f"{file.folder}/v{_next_version(file, files)}.yaml, with a changelog.",
                    )
                )
    return problems


def pinned_rule_problems(
    files: Sequence[CodebookFile],
    pins: Mapping[str, Mapping[str, str]],
    rules: Mapping[str, bytes],
    codebooks_label: str,
    rules_label: str,
) -> list[Problem]:
    """A released codebook's rule versions stay the bytes it was released with."""
    problems: list[Problem] = []
    present = {file.key for file in files}
    for key, pinned in sorted(pins.items()):
        if key not in present:
            continue  # reported as removed
        for rule_key, digest in sorted(pinned.items()):
            now = sha256_digest(rules[rule_key]) if rule_key in rules else None
            if now == digest:
                continue
            state = (
                "has been removed"
                if now is None
                else f"has changed ({short_digest(digest)} then, {short_digest(now)} now)"
            )
            problems.append(
                Problem(
                    "codebook-rule-changed",
                    shown_path(codebooks_label, key),
                    f"is a released codebook version pinning {shown_path(rules_label, rule_key)}, which {state}.",
                    "restore the rule version as released; a changed rule is a new rule version, "
                    "pinned by a new codebook version.",
                )
            )
    return problems


def is_new(file: CodebookFile, baselines: Sequence[Baseline]) -> bool:
    return all(file.key not in baseline.digests for baseline in baselines)


def changelog_problems(file: CodebookFile) -> list[Problem]:
    """A new codebook version (after v1) says what changed and why, as a rule's does."""
    changelog = file.codebook.changelog if file.codebook else None
    if isinstance(changelog, Mapping) and all(
        isinstance(changelog.get(k), str) and changelog[k].strip() for k in ("summary", "why")
    ):
        return []
    return [
        Problem(
            "codebook-changelog-missing",
            file.shown,
            "is a new codebook version without a changelog saying what changed (which rule versions) and why.",
            "add `changelog: {summary: what changed, why: why it changed}`.",
        )
    ]


def _next_version(file: CodebookFile, files: Sequence[CodebookFile]) -> int:
    versions = [other.name_version or 0 for other in files if other.folder == file.folder]
    return max(versions, default=0) + 1
