"""The sample folder on disk: written as one run, and read back for `join --sample`
and freeze, with its ledger and files checked unchanged.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from irr_audit.errors import IrrAuditError, OutputError, UsageError
from irr_audit.io.collector import quoted
from irr_audit.io.display import listed
from irr_audit.io.encodings import not_utf8
from irr_audit.io.files import read_bounded
from irr_audit.io.limits import DEFAULT_LIMITS, Limits, json_lines, load_json_line, number_check_lines
from irr_audit.io.outputs import refuse_unsafe_outputs
from irr_audit.io.records import RecordKind, invalid_record, read_checked_record, sample_record_problems
from irr_audit.io.runfolder import (
    Replacement,
    files_read,
    occupants,
    recorded_files,
    refuse_unowned_folders,
    replace_folder,
    run_mismatches,
)
from irr_audit.join.join import JoinResult, UnitContext
from irr_audit.rules.codebook import Codebook
from irr_audit.rules.load import load_rule
from irr_audit.rules.model import Rule
from irr_audit.sample.build import RECORD, RULE_COPY, SHEETS, Sample


def write_sample_dir(sample: Sample, out: Path, inputs: Sequence[Path], force: bool) -> Replacement:
    """Write the sample's files as the whole of folder ``out``; returns the paths written and
    the files of the old folder replaced or deleted (with ``force``). Without ``force`` the
    folder may hold only what this sample writes, byte for byte: a sheet a coder filled, the
    files of another draw, or files sample did not write are refused."""
    refuse_unsafe_outputs(files_read(inputs), folders=[out])
    removed = check_sample_out(out, sample, force)
    return Replacement(replace_folder(out, sample.files), removed)


def check_sample_out(out: Path, sample: Sample, force: bool) -> list[str]:
    """Refuse an --out folder holding files this sample would not write identically
    (unless ``force``: they are then replaced or deleted, and listed in the return
    value). A folder is never deleted."""
    found = occupants(out, dict.fromkeys(sample.files))
    refuse_unowned_folders(out, found, "sample")
    differing = [name for name in sorted(sample.files) if _differs(out / name, sample.files[name])]
    if force:
        return sorted({*differing, *found.foreign})
    if differing:
        name = next((name for name in differing if name.startswith(SHEETS)), differing[0])
        more = len(differing) - 1
        raise OutputError(
            f"{out / name} exists and differs from what this sample would write"
            + (" (a coder may have filled it)" if name.startswith(SHEETS) else "")
            + (f"; {more} more file{'s' if more != 1 else ''} differ too" if more else "")
            + ".",
            hint="choose a new --out folder, or pass --force to replace the whole sample folder.",
            code="output-sample-exists",
        )
    if found.foreign:
        count = len(found.foreign)
        raise OutputError(
            f"--out {out} holds {count} file{'s' if count != 1 else ''} this sample would not "
            f"write: {listed(found.foreign)}.",
            hint="move the files out or choose another --out folder; --force replaces the folder and deletes them.",
            code="output-folder-not-ours",
        )
    return []


def _differs(path: Path, data: bytes) -> bool:
    """Whether a file is there that is not ``data`` byte for byte (read only when its size is data's)."""
    if path.is_symlink():
        return True
    if not path.is_file():
        return False
    try:
        return path.stat().st_size != len(data) or read_bounded(path, f"{path}", max_bytes=len(data)) != data
    except (OSError, IrrAuditError):
        return True


@dataclass(frozen=True)
class SampleRef:
    """What `join --sample` takes from a sample folder."""

    folder: Path
    ids: tuple[str, ...]
    rule_id: str
    rule_version: int
    rule_digest: str
    ledger_sha256: str
    report: dict[str, Any] = field(default_factory=dict)  # what an audit report shows of the sample
    context: Mapping[str, UnitContext] = field(default_factory=dict)  # sampled id -> its ledger text and context

    def joined(self, join: JoinResult) -> JoinResult:
        """The join with this sample's ledger text and context: what reports list beside a disagreement."""
        return replace(join, context=self.context)


def sample_report_section(record: dict[str, Any]) -> dict[str, Any]:
    """The part of sample.json an audit report shows: where the units came from and how complete they are.
    ``record`` is checked (irr_audit.io.records.sample_record_problems)."""
    completeness = record.get("completeness") or {}
    return {
        "dataset": (record.get("dataset") or {}).get("file"),
        "counts": record.get("counts", {}),
        "completeness": {key: completeness.get(key) for key in ("verdict", "statement", "reasons")},
        "count_mismatches": record.get("count_mismatches", []),
        "draw": record.get("draw", {}),
    }


def read_sample(folder: Path, limits: Limits = DEFAULT_LIMITS, *, codebook: Codebook | None = None) -> SampleRef:
    """The sampled ids of a folder written by `irr-audit sample`, with its ledger checked unchanged.
    With ``codebook`` (`join --codebook --sample`), a sample drawn for that codebook: the ref's
    rule_id, rule_version and rule_digest are then the codebook's name, version and digest."""
    record_path = folder / RECORD
    if not record_path.is_file():
        raise UsageError(
            f"{folder} is not a folder written by irr-audit sample (it has no {RECORD}).",
            hint="pass the folder given to irr-audit sample --out.",
            code="usage-not-a-sample-dir",
        )
    record = read_sample_record(record_path, limits)
    if codebook is not None:
        record = _as_codebook_sample(record, folder, codebook)
    elif "rule" not in record and isinstance(record.get("codebook"), dict):
        drawn = record["codebook"]
        raise UsageError(
            f"the sample in {folder} was drawn for the codebook {drawn.get('name')} v{drawn.get('version')}, "
            "not for one rule, and a join or freeze with --sample takes one rule.",
            hint="leave out --sample (the sheets hold the sample's units), or draw a sample for the rule alone.",
            code="usage-sample-codebook",
        )
    ledger = record["ledger"]
    ledger_path = _ledger_path(folder, ledger["file"], record_path)
    ledger_bytes = read_bounded(ledger_path, f"sample ledger {ledger_path}", limits, code="sample-ledger")
    rule = record["rule"]
    ref = SampleRef(
        folder,
        tuple(ledger["sample_ids"]),
        rule["id"],
        rule["version"],
        rule["digest"],
        ledger["sha256"],
        sample_report_section(record),
    )
    ledger_sha256 = hashlib.sha256(ledger_bytes).hexdigest()
    if ledger_sha256 != ref.ledger_sha256:
        raise UsageError(
            f"the ledger in {folder} changed since irr-audit sample wrote it.",
            hint="restore the ledger (its sha256 is in sample.json), or draw a new sample.",
            code="sample-ledger-changed",
        )
    contexts = _ledger_contexts(ledger_bytes, ledger_path, limits, set(ref.ids))
    missing = [comment_id for comment_id in ref.ids if comment_id not in contexts]
    if missing:
        raise UsageError(
            f"{record_path} lists sampled id {quoted(missing[0])}, which is not in its ledger.",
            hint="run irr-audit sample again into a new folder.",
            code="sample-dir-invalid",
        )
    check_one_sample_run(folder, record, {ledger["file"]: ledger_sha256})  # the ledger is not read again
    return replace(ref, context={comment_id: contexts[comment_id] for comment_id in ref.ids})


def _as_codebook_sample(record: dict[str, Any], folder: Path, codebook: Codebook) -> dict[str, Any]:
    """A sample record drawn for ``codebook`` (its name and version), read as a rule's record is."""
    drawn = record.get("codebook")
    if not isinstance(drawn, dict):
        rule = record.get("rule") or {}
        raise UsageError(
            f"the sample in {folder} was drawn for rule {rule.get('id')} v{rule.get('version')}, "
            f"not for the codebook {codebook.label}.",
            hint="join it with --rule, or draw a sample with sample --codebook.",
            code="usage-sample-codebook",
        )
    if (drawn.get("name"), drawn.get("version")) != (codebook.name, codebook.version):
        raise UsageError(
            f"the sample in {folder} was drawn for the codebook {drawn.get('name')} v{drawn.get('version')}, "
            f"but --codebook is {codebook.label}.",
            hint="pass the codebook the sample was drawn for, or draw a new sample.",
            code="usage-sample-codebook",
        )
    digest = drawn.get("digest") if isinstance(drawn.get("digest"), str) else ""
    return {**record, "rule": {"id": codebook.name, "version": codebook.version, "digest": digest}}


def with_ledger(
    join: JoinResult, folder: Path | None, ids: Sequence[str] | None, limits: Limits, codebook: Codebook | None = None
) -> JoinResult:
    """A join folder made with `join --sample`, joined again: with the ledger's text and context,
    read from the sample folder the join recorded. A sample folder since deleted, moved, drawn
    again or altered (its ledger checked as `join --sample` checks it) leaves the sheets' text,
    and a warning says so."""
    if folder is None or ids is None:
        return join
    if not (folder / RECORD).is_file():
        problem = f"the sample folder {folder} is no longer there"
    else:
        try:
            ref = read_sample(folder, limits, codebook=codebook)
        except IrrAuditError as error:  # the scores need only the sheets; the text is not shown unchecked
            ref, problem = None, f"the sample in {folder} cannot be read ({error.message.rstrip('.')})"
        if ref is not None and list(ref.ids) == list(ids):
            return ref.joined(join)
        if ref is not None:
            problem = f"the sample folder {folder} now holds another sample"
    warning = f"{problem}: the disagreements show the sheets' text, not the ledger's."
    return replace(join, warnings=(*join.warnings, warning))


def _sample_problems(record: Any) -> list[str]:
    """sample_record_problems, for a sample drawn for a codebook (``codebook`` instead of
    ``rule``) too: read_sample then refuses it by name rather than as a damaged record."""
    if isinstance(record, dict) and "rule" not in record and isinstance(record.get("codebook"), dict):
        return sample_record_problems({**record, "rule": {"id": "", "version": 1, "digest": ""}})
    return sample_record_problems(record)


SAMPLE_RECORD_KIND = RecordKind(
    "a sample record as irr-audit sample writes it",
    "sample record",
    "sample-dir",
    "run irr-audit sample again into a new folder.",
    _sample_problems,
)


def read_sample_record(path: Path, limits: Limits = DEFAULT_LIMITS) -> dict[str, Any]:
    """A sample folder's sample.json, read within the limits and checked for structure."""
    return read_checked_record(path, SAMPLE_RECORD_KIND, limits)


def _ledger_path(folder: Path, name: str, record_path: Path) -> Path:
    """The ledger a sample record names: a regular file in the sample's folder, never a
    path out of it (a record inside a bundle is not trusted) nor a pipe that would block."""
    if name in ("", ".", "..") or "/" in name or "\\" in name or "\x00" in name:
        raise invalid_record(
            record_path, SAMPLE_RECORD_KIND, f"ledger.file {quoted(name)} is not a file name in the sample's folder"
        )
    path = folder / name
    if path.is_symlink() or not path.is_file():
        raise UsageError(
            f"the ledger {path} that {record_path} names is missing, or is not a regular file.",
            hint="restore the ledger from the sample that was drawn, or draw the sample again into a new folder.",
            code="sample-dir-invalid",
        )
    return path


def _context(entry: dict[str, Any]) -> UnitContext:
    """A ledger entry's text and context; a ledger written before links and context has only the body."""

    def text(key: str) -> str:
        value = entry.get(key)
        return value if isinstance(value, str) else ""

    return UnitContext(text("body"), text("link") or text("url"), text("parent_body"), text("thread_title"))


def _ledger_contexts(data: bytes, path: Path, limits: Limits, wanted: set[str]) -> dict[str, UnitContext]:
    """The text and context of the ``wanted`` units in a sample ledger (one JSON object per line)
    by comment id, or a UsageError naming the line that is not one. Every line is checked; only
    the wanted units' context is kept, not each entry's fields (a million of them at scale)."""
    try:
        lines = list(json_lines(data, f"{path}", limits, own_file=True))
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"sample ledger {path} is not UTF-8 ({not_utf8(exc, f'byte {exc.start}')}).",
            hint="run irr-audit sample again into a new folder (or save the ledger again as UTF-8).",
            code="sample-dir-invalid",
        ) from None
    contexts = {}
    flagged = number_check_lines(data, limits)
    for number, line in lines:
        try:
            entry = load_json_line(
                line, f"{path} line {number}", limits, own_file=True, numbers_checked=number not in flagged
            )
        except ValueError:
            entry = None
        if not isinstance(entry, dict) or not isinstance(entry.get("comment_id"), str):
            raise UsageError(
                f"sample ledger {path}, line {number}, is not a JSON object with a comment_id.",
                hint="run irr-audit sample again into a new folder.",
                code="sample-dir-invalid",
            )
        if entry["comment_id"] in wanted:
            contexts[entry["comment_id"]] = _context(entry)
    return contexts


def check_one_sample_run(folder: Path, record: dict[str, Any], read: dict[str, str] | None = None) -> None:
    """Refuse a sample folder whose files are not those of the run sample.json records.
    The coding sheets are left out: coders may fill them in place. A sample.json
    written before run records is checked by its ledger's sha256 alone. ``read``: the sha256
    of files already read."""
    files = recorded_files(record)
    if files is None:
        return
    mismatches = run_mismatches(
        folder, {name: digest for name, digest in files.items() if not name.startswith(f"{SHEETS}/")}, read
    )
    if mismatches:
        first = mismatches[0]
        raise UsageError(
            f"{folder} does not hold one sample run: {first.file} {first.detail}; {RECORD} records run "
            f"{record['run']['id'][:12]}.",
            hint="restore the file from the sample that was drawn, or draw the sample again into a new folder.",
            code="sample-dir-not-one-run",
        )


def check_sample_rule(ref: SampleRef, rule: Rule) -> list[str]:
    """The rule given to join must be the one the sample's sheets were made for, or a later
    version of it: the same units re-coded under a revised rule (docs/procedure.md, step 8;
    :func:`recoding_of` records it). Returns warnings (a same-version rule file whose bytes changed)."""
    if ref.rule_id != rule.id:
        raise UsageError(
            f"the sample in {ref.folder} was drawn for rule {ref.rule_id} v{ref.rule_version}, "
            f"but --rule is {rule.label}.",
            hint=f"pass --rule rules/{ref.rule_id}/v<version>.yaml, the rule the sheets were coded under "
            "(that version or a later one, for a re-coding); another rule needs its own sample.",
            code="usage-sample-rule",
        )
    if rule.version < ref.rule_version:
        raise UsageError(
            f"the sample in {ref.folder} was drawn for {ref.rule_id} v{ref.rule_version}, "
            f"but --rule is the earlier {rule.label}.",
            hint=f"pass --rule rules/{ref.rule_id}/v{ref.rule_version}.yaml or a later version; a sample is "
            "re-coded under a revised rule, never an earlier one.",
            code="usage-sample-rule",
        )
    if rule.version != ref.rule_version:
        return []
    if ref.rule_digest != rule.digest:
        return [
            f"warning: {rule.source_name} is {rule.label} but its bytes differ from the rule file the "
            f"sample was drawn with ({ref.folder / RULE_COPY}); a released rule version should not change."
        ]
    return []


def recoding_of(ref: SampleRef, rule: Rule) -> dict[str, Any] | None:
    """The re-coding a join under ``rule`` of this sample is (None: the sample's own rule):
    the rule version the sample was drawn under and the one it is coded under now."""
    if ref.rule_id != rule.id or ref.rule_version == rule.version:
        return None
    return {
        "drawn_under": {"id": ref.rule_id, "version": ref.rule_version, "digest": ref.rule_digest},
        "coded_under": {"id": rule.id, "version": rule.version, "digest": rule.digest},
    }


def sample_report_for(ref: SampleRef, rule: Rule) -> dict[str, Any]:
    """What a report shows of the sample an audit under ``rule`` was restricted to: the
    sample's section, and the re-coding when the rule is a later version than the sample's."""
    recoding = recoding_of(ref, rule)
    return {**ref.report, "recoding": recoding} if recoding else dict(ref.report)


def sample_ids_for_join(folder: Path, rule_path: Path) -> tuple[SampleRef, list[str]]:
    """For `join --sample`: the sample (its ids and report section), checked against
    the rule given to join, and any warnings to show."""
    ref = read_sample(folder)
    warnings = check_sample_rule(ref, load_rule(rule_path))
    return ref, warnings
