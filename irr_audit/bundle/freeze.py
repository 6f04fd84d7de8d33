"""`irr-audit freeze`: collect what an audit read (the sheets and rule bytes exactly
as parsed, their join, the sample), then write a new, read-only bundle.

A bundle is built in a hidden sibling folder and renamed into place only when
every file and the manifest are on disk, so a crash leaves no half bundle under a
bundle's name. Freeze holds the audits folder's lock (AUDITS_DIR/.freeze.lock) from
the check that the audit is not frozen yet to that rename, so two freezes of one
audit at once make one bundle.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from irr_audit.bundle.manifest import (
    MANIFEST,
    SAMPLE_DIR,
    SAMPLE_SUMMARY,
    SHEETS_DIR,
    SIGNATURE,
    FrozenFile,
    build_manifest,
    bundle_name,
    list_bundles,
    load_manifest_json,
    manifest_bytes,
    plain_file_name_problem,
    read_manifest,
    rule_member,
    shell_path,
    units_digest,
)
from irr_audit.bundle.signing import sign
from irr_audit.errors import OutputError, UsageError
from irr_audit.io.files import read_bounded, resolved, sha256_hex
from irr_audit.io.limits import DEFAULT_LIMITS, Limits
from irr_audit.io.runfolder import JOIN_RECORD, RECORD_FILES, build_folder, fsync_folder, is_bundle
from irr_audit.io.sheets import ColumnChoice, Sheet, SheetOptions, read_sheets_keeping_bytes
from irr_audit.join.folder import JoinDir, is_join_dir, read_join_dir, refuse_sheet_options
from irr_audit.join.join import JoinResult, check_distinct_files, join_sheets
from irr_audit.report.model import AuditOptions, build_report
from irr_audit.rules.load import load_rule
from irr_audit.rules.model import Rule
from irr_audit.sample.folder import SampleRef, check_sample_rule, read_sample, recoding_of

FREEZE_LOCK = ".freeze.lock"  # held by freeze around "is this audit frozen? -> write its bundle"
LOCK_TIMEOUT = 600.0  # seconds a freeze waits for another freeze of the same audits folder


@dataclass(frozen=True)
class FreezeSource:
    """What freeze copies: the rule and sheet bytes exactly as read, and their join."""

    rule_data: bytes
    sheet_data: tuple[bytes, ...]
    columns: ColumnChoice
    join: JoinResult
    sample: Path | None = None
    notes: tuple[str, ...] = ()
    recoding: dict[str, Any] | None = None  # the sample was drawn under an earlier version of the rule


@dataclass(frozen=True)
class FreezeResult:
    path: Path
    manifest: dict[str, Any]
    notes: tuple[str, ...]
    digest: str = ""  # sha256:<hex> of the manifest's bytes as written: the bundle's digest


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
    if len(inputs) == 1 and is_bundle(inputs[0]):
        raise UsageError(
            f"{inputs[0]} is already an audit bundle.",
            hint="freeze takes the sheets or a join folder; to re-code the bundle's units under a revised "
            f"rule, freeze the new sheets with --recodes {shell_path(inputs[0])}.",
            code="usage-freeze-bundle",
        )
    join_dir: JoinDir | None = None  # set when freezing a join folder
    if len(inputs) == 1 and is_join_dir(inputs[0]):
        folder = inputs[0]
        reading = {"--id-column": id_column, "--code-column": code_column, "--worksheet": worksheet}
        refuse_sheet_options(folder, reading)
        joined = read_join_dir(folder, limits)
        rule, sheets, columns = joined.rule, joined.sheets, joined.columns
        if rule.run_aliases:
            raise UsageError(
                f"the join in {folder} maps values with --alias, which a bundle cannot keep: it keeps the rule file, "
                "and verify recomputes the scores from it alone.",
                hint="add the aliases to the rule file (aliases:, in a new version of the rule) and join again.",
                code="usage-alias",
            )
        sample = sample or _join_dir_sample(joined)
        join_dir = joined
        rule_data = rule.source  # the bytes of rule.yaml that were parsed
        # read again, bounded, and checked to be the bytes the join recorded
        sheet_data = tuple(_read_matching(sheet.path, sheet.sha256, limits) for sheet in sheets)
        if rule_path is not None and load_rule(rule_path, limits).digest != rule.digest:
            raise UsageError(
                f"--rule {rule_path} is not the rule the join in {folder} used ({rule.label}, {rule.digest[:19]}...).",
                hint="leave out --rule to freeze the join's own rule, or run join again with this rule.",
                code="usage-rule-mismatch",
            )
    elif len(inputs) == 1 and inputs[0].is_dir():
        raise UsageError(
            f"{inputs[0]} is a folder but not one written by irr-audit join (it has no {JOIN_RECORD}).",
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
        rule_data = rule.source  # the bytes that were parsed
        columns = ColumnChoice(id_column=id_column, code_column=code_column, worksheet=worksheet)
        read = read_sheets_keeping_bytes(inputs, SheetOptions(**asdict(columns), limits=limits))
        sheets = [sheet for sheet, _ in read]
        sheet_data = tuple(data for _, data in read)
    check_sheet_names(sheets)
    sample_ids, notes, recoding = _sample_ids(sample, rule, join_dir)
    join = join_sheets(sheets, rule, sample_ids=sample_ids)
    return FreezeSource(rule_data, sheet_data, columns, join, sample, tuple(notes), recoding)


def _join_dir_sample(joined: JoinDir) -> Path | None:
    """The sample folder a join was restricted to, which freeze keeps too."""
    if joined.sample_ids is None:
        return None
    if joined.sample_folder is not None and joined.sample_folder.is_dir():
        return joined.sample_folder
    raise UsageError(
        f"the join in {joined.folder} was restricted to the sample in {joined.sample_folder}, "
        "which is no longer there.",
        hint="pass the sample folder with --sample DIR, so the bundle keeps its ledger and log.",
        code="usage-sample-missing",
    )


def _sample_ids(
    sample: Path | None, rule: Rule, joined: JoinDir | None = None
) -> tuple[list[str] | None, list[str], dict[str, Any] | None]:
    """The sample's ids, warnings, and the re-coding the audit is (None: coded under the sample's rule).
    ``joined``: the join folder being frozen, whose sample this must be."""
    if sample is None:
        return None, [], None
    reference = read_sample(sample)
    if joined is not None:
        check_join_sample(joined, reference)
    warnings = check_sample_rule(reference, rule)
    return list(reference.ids), warnings, recoding_of(reference, rule)


def check_join_sample(joined: JoinDir, reference: SampleRef) -> None:
    """A join restricted to a sample is frozen with that sample only: another one (the folder
    drawn again, or another --sample) would re-join the sheets against other units and the
    bundle would score other units than the join did. The join records its ledger's sha256
    (a join written before that, its sampled ids, compared instead)."""
    if joined.sample_ids is None:
        return  # a join of all the sheets' units, restricted here by --sample
    recorded = joined.sample_ledger_sha256
    same = recorded == reference.ledger_sha256 if recorded else list(reference.ids) == joined.sample_ids
    if same:
        return
    digests = (
        f"the join's ledger has sha256 {recorded}, the ledger in {reference.folder} {reference.ledger_sha256}"
        if recorded
        else f"its {len(reference.ids)} sampled ids are not the {len(joined.sample_ids)} the join used"
    )
    raise UsageError(
        f"the sample in {reference.folder} is not the sample the join in {joined.folder} used ({digests}).",
        hint="pass the join's sample with --sample DIR, or run join again with --sample "
        f"{shell_path(reference.folder)} and freeze that join.",
        code="usage-sample-mismatch",
    )


def _read_matching(path: Path, sha256: str, limits: Limits) -> bytes:
    """The file's bytes, which must still be those that were parsed a moment ago."""
    data = read_bounded(path, f"{path}", limits)
    if sha256_hex(data) != sha256:
        raise UsageError(
            f"{path} changed while it was being frozen.",
            hint="wait until nobody is editing the file, then run freeze again.",
            code="usage-input-changed",
        )
    return data


def check_sheet_names(sheets: list[Sheet]) -> None:
    """Sheets keep their file name in the bundle (the coder may be its stem), so the
    names must be plain and distinct even on a case-insensitive file system. One file given
    twice is named as such first: its two names being alike is not the problem."""
    check_distinct_files(sheets)
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
        refuse_sample_symlink(folder, path)
        if not path.is_file():
            continue
        if plain_file_name_problem(path.name) is not None:
            raise UsageError(
                f"--sample {folder}: the file name {path.name!r} cannot be stored.",
                hint="rename the file.",
                code="usage-sample-name",
            )
        files.append(sample_member(folder, path))
    return files


def refuse_sample_symlink(folder: Path, path: Path) -> None:
    """A bundle keeps real files only: a symlink in the sample folder is refused, not followed."""
    if path.is_symlink():
        raise UsageError(
            f"--sample {folder} holds a symlink, {path.relative_to(folder).as_posix()}; a bundle keeps real "
            "files only.",
            hint="replace the symlink by the file it points to, or remove it.",
            code="usage-sample-symlink",
        )


def sample_member(folder: Path, path: Path) -> FrozenFile:
    """A file of the sample folder, read bounded, as the bundle keeps it (under sample/, at its place)."""
    inside = path.relative_to(folder).as_posix()
    return FrozenFile(f"{SAMPLE_DIR}/{inside}", read_bounded(path, f"--sample {folder}: {inside}", code="usage-sample"))


def recodes_reference(bundle: Path, rule: Rule) -> dict[str, Any]:
    """The manifest's `recodes` entry for an audit that re-codes ``bundle``'s units."""
    manifest = read_manifest(bundle).content
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


def check_recodes_agree(recodes: dict[str, Any] | None, recoding: dict[str, Any] | None) -> None:
    """--recodes BUNDLE and a sample drawn under an earlier version must tell one story:
    the bundle re-coded is an audit of the version the sample was drawn under."""
    if recodes is None or recoding is None:
        return
    drawn = recoding["drawn_under"]["version"]
    if recodes["rule"]["version"] != drawn:
        raise UsageError(
            f"--recodes {recodes['bundle']} is an audit of {recodes['rule']['id']} v{recodes['rule']['version']}, "
            f"but the sample was drawn under v{drawn}.",
            hint=f"pass --recodes the bundle of the v{drawn} audit of this sample, or leave --recodes out: "
            "the sample already records the re-coding.",
            code="usage-recodes-rule",
        )


def frozen_files(source: FreezeSource, sample: list[FrozenFile]) -> list[FrozenFile]:
    sheets = [
        FrozenFile(f"{SHEETS_DIR}/{sheet.name}", data) for sheet, data in zip(source.join.sheets, source.sheet_data)
    ]
    return [*sheets, FrozenFile(rule_member(source.join.rule), source.rule_data), *sample]


def same_audit(files: list[FrozenFile], audits_dir: Path) -> Path | None:
    """An existing bundle that froze exactly these files (same names, same bytes)."""
    wanted = {(file.path, file.sha256) for file in files}
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
    if recodes_entry is not None and recodes_entry["ids_sha256"] != units_digest(join.units):
        notes.append(
            f"the units differ from those of {recodes_entry['bundle']}; a re-coded sample "
            "normally re-codes the same units"
        )
    check_recodes_agree(recodes_entry, source.recoding)

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
            sample_recoding=source.recoding,
        )
        path = write_bundle(audits_dir, name, files + signature_files(manifest, sign_key), manifest)
    digest = f"sha256:{sha256_hex(manifest_bytes(manifest))}"  # the bytes write_bundle wrote, not a re-read
    return FreezeResult(path=path, manifest=manifest, notes=tuple(notes), digest=digest)


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
    lock_path = audits_dir / FREEZE_LOCK
    refuse_linked_lock(lock_path)
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


def refuse_linked_lock(lock_path: Path) -> None:
    """The lock file must be a file of its own: filelock opens it for writing and, in versions
    before 4, truncates it, which through a symbolic or hard link would empty the file it shares
    (a sheet being frozen, say)."""
    try:
        info = os.lstat(lock_path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise _unwritable(lock_path.parent, exc) from None
    if stat.S_ISREG(info.st_mode) and info.st_nlink == 1:
        return
    if stat.S_ISLNK(info.st_mode):
        what = f"a symbolic link (to {os.readlink(lock_path)})"
    elif stat.S_ISREG(info.st_mode):
        what = f"a hard link: one of {info.st_nlink} names of one file"
    else:
        what = "not a regular file"
    raise OutputError(
        f"the freeze lock {lock_path} is {what}; freeze writes to its lock file, which would change "
        "whatever it leads to.",
        hint=f"remove {shell_path(lock_path)} (freeze makes a new, empty one) and run freeze again.",
        code="output-lock-linked",
    )


def signature_files(manifest: dict[str, Any], sign_key: Path | None) -> list[FrozenFile]:
    """The manifest's signature, to write beside it (and not list in it), if a key is given."""
    if sign_key is None:
        return []

    return [FrozenFile(SIGNATURE, sign(manifest_bytes(manifest), sign_key))]


def free_name(audits_dir: Path, created: datetime, rule: Rule) -> str:
    n = 1
    while (audits_dir / bundle_name(created, rule, n)).exists():
        n += 1
    return bundle_name(created, rule, n)


def write_bundle(audits_dir: Path, name: str, files: list[FrozenFile], manifest: dict[str, Any]) -> Path:
    """Build the bundle in a hidden sibling folder, flush it to disk, then rename it
    into place: until the rename nothing carries a bundle's name."""
    final = audits_dir / name
    contents = [(file.path, file.data) for file in files] + [(MANIFEST, manifest_bytes(manifest))]  # last: whole
    try:
        building, _ = build_folder(final, contents, read_only=True)
    except OSError as exc:
        raise _unwritable(audits_dir, exc) from None
    try:
        if final.exists():
            raise UsageError(
                f"bundle {final} appeared while freezing.", hint="run freeze again.", code="usage-already-frozen"
            )
        os.rename(building, final)
        fsync_folder(audits_dir)
    except OSError as exc:
        shutil.rmtree(building, ignore_errors=True)
        raise _unwritable(audits_dir, exc) from None
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    return final


def _unwritable(audits_dir: Path, exc: OSError) -> OutputError:
    return OutputError(
        f"cannot write a bundle into {audits_dir}: {exc.strerror or exc}.",
        hint="check the folder's permissions and free space; no bundle was written.",
        code="output-unwritable",
    )
