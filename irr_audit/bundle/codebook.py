"""The bundle of a codebook audit (docs/codebooks.md, "Freezing"): the coders' sheets, the
codebook file and every rule file it pins, byte for byte, with a manifest of their sha256
and of every variable's score. verify (irr_audit.bundle.verify) re-hashes the files and
recomputes every variable from them.

Layout: ``sheets/<name>``, ``rule/<rule>/v<N>.yaml`` (as a rule's bundle keeps its rule),
``codebook/<name>/v<N>.yaml`` and ``manifest.json``, whose ``format`` is
``irr-audit-codebook-bundle/1``. The score is, per variable, exactly the single-rule score
JSON a rule's bundle freezes (its condition applied first), with the variable's cells.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from irr_audit._version import __version__
from irr_audit.bundle.codebook_recodes import codebook_recodes, recodes_problems
from irr_audit.bundle.freeze import (
    FreezeResult,
    audits_lock,
    check_audits_dir,
    check_sheet_names,
    collect_sample,
    refuse_frozen,
    refuse_sample_symlink,
    sample_member,
    signature_files,
    write_bundle,
)
from irr_audit.bundle.manifest import (
    CODEBOOK_FORMAT,
    INTEGRITY_OF,
    MANIFEST,
    NAME_PATTERN,
    RULE_DIR,
    SAMPLE_DIR,
    SAMPLE_SUMMARY,
    SHEETS_DIR,
    FrozenFile,
    Manifest,
    _file_list_problems,
    altered,
    bundle_path,
    canonical_sha256,
    load_manifest_json,
    manifest_bytes,
    member,
    plain_file_name_problem,
    read_manifest,
    refuse_unfinished,
    rule_member,
    sample_entry,
    shell_path,
    units_digest,
    unreadable_bundle,
    utc_stamp,
    utc_text,
)
from irr_audit.bundle.read import frozen_file
from irr_audit.errors import IrrAuditError, UsageError
from irr_audit.io import records as recorded
from irr_audit.io.files import resolved, sha256_hex
from irr_audit.io.fingerprints import hash_heads, heads_sketch
from irr_audit.io.limits import DEFAULT_LIMITS, Limits
from irr_audit.io.outputs import render_json
from irr_audit.io.runfolder import is_bundle, member_path_problem
from irr_audit.io.sheets import Sheet, SheetOptions
from irr_audit.io.tables import parse_file, read_table_bytes, refuse_options_no_sheet_reads
from irr_audit.io.unitsketch import is_sketch
from irr_audit.join.codebook_folder import (
    CodebookJoinDir,
    check_sheet_sha256,
    is_codebook_join_dir,
    read_codebook_join_dir,
    sheet_options,
)
from irr_audit.join.folder import refuse_sheet_options
from irr_audit.join.join import JoinResult
from irr_audit.join.variables import SheetViews, VariableJoin, join_variables, variable_views
from irr_audit.report.model import AuditOptions, build_report
from irr_audit.rules.codebook import Codebook, load_codebook, parse_codebook
from irr_audit.rules.load import parse_rule
from irr_audit.rules.model import Rule
from irr_audit.sample.build import RULES_COPY
from irr_audit.sample.folder import SampleRef, read_sample

CODEBOOK_DIR = "codebook"


@dataclass(frozen=True)
class CodebookSource:
    """What a codebook freeze copies: the codebook (with its rules' bytes), the sheets'
    bytes exactly as parsed, how they were read, and every variable joined from them."""

    codebook: Codebook
    sheet_names: tuple[str, ...]
    sheet_coders: tuple[str, ...]
    sheet_data: tuple[bytes, ...]
    options: SheetOptions
    variables: Mapping[str, VariableJoin]
    sample: SampleRef | None = None  # the sample drawn for the codebook the units are restricted to

    def summary_line(self) -> str:
        first = next(iter(self.variables.values()))
        return (
            f"Codebook {self.codebook.label}: {len(self.variables)} variables from "
            f"{len(first.full.coders)} coders, {len(unit_ids(self.variables))} units."
        )


def codebook_member(codebook: Codebook) -> str:
    return f"{CODEBOOK_DIR}/{codebook.name}/v{codebook.version}.yaml"


def unit_ids(variables: Mapping[str, VariableJoin]) -> list[str]:
    """Every unit of any variable (a long sheet may give the variables different units)."""
    return sorted({unit for joined in variables.values() for unit in joined.full.unit_ids})


def joined_variables(
    codebook: Codebook,
    sheets: Sequence[tuple[bytes, Path]],
    options: SheetOptions,
    sample: SampleRef | None = None,
) -> tuple[dict[str, VariableJoin], list[Sheet]]:
    """Every variable joined from the sheets' bytes (each parsed once), as join --codebook joins
    them from files (restricted to the sample's units, with its ledger's text, as join --codebook
    --sample joins them), and each sheet's base (its rows of every variable). Pure."""
    views = SheetViews({rule.id: [] for rule in codebook.rules}, [], {rule.id: [] for rule in codebook.rules}, [])
    for data, path in sheets:
        parsed = parse_file(data, path, options.worksheet, options.limits, options.delimiter)
        by_variable, rows_of, base, rest = variable_views(parsed, path, codebook.rules, options)
        for rule in codebook.rules:
            views.by_variable[rule.id].append(by_variable[rule.id])
            views.rows_of[rule.id].append(rows_of[rule.id])
        views.bases.append(base)
        if rest is not None:
            views.rests.append(rest)
    variables = join_variables(views, codebook.rules, sample_ids=list(sample.ids) if sample is not None else None)
    if sample is not None:
        variables = {
            rule_id: dataclasses.replace(joined, join=sample.joined(joined.join))
            for rule_id, joined in variables.items()
        }
    return variables, views.bases


def collect_codebook_source(
    inputs: Sequence[Path],
    codebook_path: Path | None,
    rules_dir: Path | None = None,
    *,
    id_column: str | None = None,
    worksheet: str | None = None,
    delimiter: str | None = None,
    limits: Limits = DEFAULT_LIMITS,
    sample: Path | None = None,
) -> CodebookSource:
    """Read the codebook and the coders' sheets (wide or long), or a folder `join --codebook`
    wrote (its codebook, and its sheets read again, checked to be the bytes it joined), keeping
    the bytes that were parsed; with ``sample`` (a folder `sample --codebook` wrote for this
    codebook; for a join folder restricted to a sample, that sample) the units are its ids."""
    if len(inputs) == 1 and is_bundle(inputs[0]):
        raise UsageError(
            f"{inputs[0]} is already an audit bundle.",
            hint="freeze --codebook takes the coders' sheets or a join --codebook folder; to re-code the bundle's "
            f"units under a revised codebook, freeze the new sheets with --recodes {shell_path(inputs[0])}.",
            code="usage-freeze-bundle",
        )
    if len(inputs) == 1 and is_codebook_join_dir(inputs[0]):
        return _join_dir_source(inputs[0], codebook_path, rules_dir, (id_column, worksheet, delimiter), limits, sample)
    if len(inputs) == 1 and inputs[0].is_dir():
        raise UsageError(
            f"{inputs[0]} is a folder but not one written by irr-audit join --codebook.",
            hint="pass the folder given to join --codebook --out, or the sheets themselves with --codebook.",
            code="usage-not-a-join-dir",
        )
    if codebook_path is None:
        raise UsageError(
            "sheets need the codebook they were coded under.",
            hint="add --codebook codebooks/<name>/v<version>.yaml.",
            code="usage-missing-rule",
        )
    codebook = load_codebook(codebook_path, rules_dir, limits)
    options = SheetOptions(id_column=id_column, worksheet=worksheet, delimiter=delimiter, limits=limits)
    reference = read_sample(sample, limits, codebook=codebook) if sample is not None else None
    refuse_options_no_sheet_reads(inputs, worksheet, delimiter)
    datas = [(read_table_bytes(path, limits), path) for path in inputs]
    return _source(codebook, datas, options, reference)


def _source(
    codebook: Codebook, datas: list[tuple[bytes, Path]], options: SheetOptions, reference: SampleRef | None
) -> CodebookSource:
    variables, sheets = joined_variables(codebook, datas, options, reference)
    check_sheet_names(sheets)
    return CodebookSource(
        codebook,
        tuple(sheet.name for sheet in sheets),
        tuple(sheet.coder for sheet in sheets),
        tuple(data for data, _ in datas),
        options,
        variables,
        reference,
    )


def _join_dir_source(
    folder: Path,
    codebook_path: Path | None,
    rules_dir: Path | None,
    given: tuple[str | None, str | None, str | None],
    limits: Limits,
    sample: Path | None,
) -> CodebookSource:
    """A codebook's join folder frozen as a rule's join folder is: its own codebook (a --codebook
    given must be the same), its sheets read again, bounded, and checked to be the bytes the join
    recorded, read as the join read them, and the units of the sample it was restricted to."""
    refuse_sheet_options(folder, dict(zip(("--id-column", "--worksheet", "--delimiter"), given, strict=True)))
    kept = read_codebook_join_dir(folder, limits)  # one run, its codebook and rules its own copies
    if codebook_path is not None:
        given_codebook = load_codebook(codebook_path, rules_dir, limits)
        if given_codebook.digest != kept.codebook.digest:
            raise UsageError(
                f"--codebook {codebook_path} ({given_codebook.label}) is not the codebook the join in {folder} used "
                f"({kept.codebook.label}, {kept.codebook.digest[:19]}...).",
                hint="leave out --codebook to freeze the join's own codebook, or run join --codebook again with "
                "this one.",
                code="usage-codebook-mismatch",
            )
    reference = _join_dir_sample(kept, sample, limits)
    datas = []
    for path, sha256 in zip(kept.sheet_paths, kept.sha256, strict=True):
        data = read_table_bytes(path, limits)  # read again, bounded: the bytes the join recorded, else refused
        check_sheet_sha256(kept, path, sha256_hex(data), sha256)
        datas.append((data, path))
    return _source(kept.codebook, datas, sheet_options(kept, limits), reference)


def _join_dir_sample(kept: CodebookJoinDir, sample: Path | None, limits: Limits) -> SampleRef | None:
    """The sample a codebook's join folder was restricted to (or --sample, restricting it here),
    read for its codebook; a join restricted to a sample is frozen with that sample only."""
    if sample is None and kept.sample_ids is not None:
        if kept.sample_folder is None or not kept.sample_folder.is_dir():
            raise UsageError(
                f"the join in {kept.folder} was restricted to the sample in {kept.sample_folder}, "
                "which is no longer there.",
                hint="pass the sample folder with --sample DIR, so the bundle keeps its ledger and log.",
                code="usage-sample-missing",
            )
        sample = kept.sample_folder
    if sample is None:
        return None
    reference = read_sample(sample, limits, codebook=kept.codebook)
    if kept.sample_ids is not None and list(reference.ids) != kept.sample_ids:
        raise UsageError(
            f"the sample in {reference.folder} is not the sample the join in {kept.folder} used (its "
            f"{len(reference.ids)} sampled ids are not the {len(kept.sample_ids)} the join used).",
            hint="pass the join's sample with --sample DIR, or run join --codebook again with --sample "
            f"{shell_path(reference.folder)} and freeze that join.",
            code="usage-sample-mismatch",
        )
    return reference


def codebook_score(codebook: Codebook, variables: Mapping[str, VariableJoin]) -> dict[str, Any]:
    """What a codebook bundle freezes and verify recomputes: per variable, the single-rule
    score JSON (as a rule's bundle has it) and its cells; through JSON, as it is stored."""
    score = {
        "codebook": {"name": codebook.name, "version": codebook.version, "digest": codebook.digest},
        "variables": {
            rule_id: {
                "score": build_report(joined.join, AuditOptions(list_disagreements=False)).to_dict(
                    include_disagreements=False
                ),
                "cells": joined.cell_counts(),
            }
            for rule_id, joined in variables.items()
        },
    }
    loaded: dict[str, Any] = json.loads(render_json(score))
    return loaded


def codebook_units(variables: Mapping[str, VariableJoin]) -> dict[str, Any]:
    """The manifest's `units`: every unit's count, digest and sketch, and per variable the sketch of
    its fully coded units (``scored_sketches``), the ones its statistics rest on. A variable's are
    its own (a conditional variable's units, a long sheet's rows of it), so rules check --audits
    compares each variable with other audits of its rule by that variable's sketch, as a rule's
    bundle is compared by its ``scored_sketch``. Pure."""
    ids = unit_ids(variables)
    return {
        "count": len(ids),
        "ids_sha256": units_digest(ids),
        "sketch": heads_sketch(hash_heads(ids)),
        "scored_sketches": {
            rule_id: heads_sketch(hash_heads(joined.join.units)[joined.join.fully_coded])
            for rule_id, joined in variables.items()
        },
    }


def collect_codebook_sample(folder: Path) -> list[FrozenFile]:
    """The files of a sample drawn for a codebook, under sample/: those of a rule's sample
    (sample.json, ledger, missingness log, the codebook's copy) and its copies of the rule files,
    ``rules/<rule>/v<N>.yaml``, which its run record lists and a read of the sample checks."""
    files = collect_sample(folder)
    rules = folder / RULES_COPY
    if rules.is_symlink() or not rules.is_dir():
        return files  # read_sample names what the run record misses
    for path in sorted(rules.rglob("*")):
        refuse_sample_symlink(folder, path)
        if not path.is_file():
            continue
        inside = path.relative_to(folder).as_posix()
        if len(path.relative_to(rules).parts) != 2 or any(plain_file_name_problem(part) for part in path.parts[-2:]):
            raise UsageError(
                f"--sample {folder}: the file {inside!r} is not a rule copy (rules/<rule>/v<N>.yaml).",
                hint="remove it from the sample folder, or draw the sample again into a new folder.",
                code="usage-sample-name",
            )
        files.append(sample_member(folder, path))
    return files


def codebook_frozen_files(source: CodebookSource) -> list[FrozenFile]:
    sheets = [FrozenFile(f"{SHEETS_DIR}/{name}", data) for name, data in zip(source.sheet_names, source.sheet_data)]
    rules = [FrozenFile(rule_member(rule), rule.source) for rule in source.codebook.rules]
    return [*sheets, *rules, FrozenFile(codebook_member(source.codebook), source.codebook.source)]


def build_codebook_manifest(
    *,
    name: str,
    created: datetime,
    source: CodebookSource,
    files: list[FrozenFile],
    score: dict[str, Any],
    sample_files: list[str] | None = None,
    recodes: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The manifest of a new codebook bundle. Pure."""
    codebook = source.codebook
    by_path = {file.path: file for file in files}
    manifest: dict[str, Any] = {
        "format": CODEBOOK_FORMAT,
        "name": name,
        "created": utc_text(created),
        "tool_version": __version__,
        "codebook": {
            "name": codebook.name,
            "version": codebook.version,
            "digest": codebook.digest,
            "file": codebook_member(codebook),
        },
        "rules": [
            {"id": rule.id, "version": rule.version, "digest": rule.digest, "file": rule_member(rule)}
            for rule in codebook.rules
        ],
        "sheets": [
            {
                "file": f"{SHEETS_DIR}/{sheet}",
                "coder": coder,
                "sha256": sha256_hex(by_path[f"{SHEETS_DIR}/{sheet}"].data),
                "size": len(by_path[f"{SHEETS_DIR}/{sheet}"].data),
            }
            for sheet, coder in zip(source.sheet_names, source.sheet_coders)
        ],
        "files": sorted((file.record() for file in files), key=lambda record: record["path"]),
        "units": codebook_units(source.variables),
        "recodes": recodes,
        "sample": None
        if source.sample is None or sample_files is None
        else sample_entry(sample_files, list(source.sample.ids)),
        "columns": {
            key: value
            for key, value in (
                ("id_column", source.options.id_column),
                ("worksheet", source.options.worksheet),
                ("delimiter", source.options.delimiter),
            )
            if value is not None
        },
        "score": score,
    }
    manifest["integrity"] = {"sha256": canonical_sha256(manifest, "integrity"), "of": INTEGRITY_OF}
    return manifest


def codebook_bundle_name(created: datetime, codebook: Codebook, n: int = 1) -> str:
    name = f"{utc_stamp(created)}_{codebook.name}_v{codebook.version}"
    return name if n == 1 else f"{name}_{n}"


def freeze_codebook(
    source: CodebookSource,
    audits_dir: Path,
    created: datetime,
    *,
    recodes: Path | None = None,
    sign_key: Path | None = None,
) -> FreezeResult:
    """Freeze a codebook audit into a new bundle under ``audits_dir``, as a rule's audit is
    frozen (irr_audit.bundle.freeze.freeze): never a second bundle of the same files. With
    ``recodes`` (an earlier bundle whose units this audit codes again under revised rules) the
    manifest records the re-coding per revised variable (irr_audit.bundle.codebook_recodes)."""
    check_audits_dir(audits_dir)
    sample = source.sample.folder if source.sample is not None else None
    if sample is not None and resolved(audits_dir).is_relative_to(resolved(sample)):
        raise UsageError(
            f"--into {audits_dir} is inside --sample {sample}.",
            hint="keep the audits folder apart from the sample folder.",
            code="usage-into",
        )
    sample_files = collect_codebook_sample(sample) if sample is not None else []
    files = codebook_frozen_files(source) + sample_files
    refuse_frozen(files, audits_dir)
    recodes_entry, notes = (
        codebook_recodes(_read_recoded(recodes), source.codebook, codebook_units(source.variables), recodes)
        if recodes is not None
        else (None, [])
    )
    score = codebook_score(source.codebook, source.variables)
    with audits_lock(audits_dir):
        refuse_frozen(files, audits_dir)
        n = 1
        while (audits_dir / codebook_bundle_name(created, source.codebook, n)).exists():
            n += 1
        name = codebook_bundle_name(created, source.codebook, n)
        manifest = build_codebook_manifest(
            name=name,
            created=created,
            source=source,
            files=files,
            score=score,
            sample_files=[file.path for file in sample_files],
            recodes=recodes_entry,
        )
        path = write_bundle(audits_dir, name, files + signature_files(manifest, sign_key), manifest)
    digest = f"sha256:{sha256_hex(manifest_bytes(manifest))}"
    return FreezeResult(path=path, manifest=manifest, notes=tuple(notes), digest=digest)


# --- read back: what verify checks -----------------------------------------------------------


def codebook_manifest_problems(manifest: dict[str, Any]) -> list[str]:
    """What is wrong with a codebook bundle's manifest structure, as short sentences. Pure."""
    problems: list[str] = []
    if not isinstance(manifest.get("name"), str) or not NAME_PATTERN.fullmatch(manifest["name"]):
        problems.append(f"name {manifest.get('name')!r} is not a bundle name (<time>_<codebook>_v<version>)")
    for key in ("created", "tool_version"):
        if not isinstance(manifest.get(key), str):
            problems.append(f"{key} is missing")
    book = manifest.get("codebook")
    if not (isinstance(book, dict) and isinstance(book.get("file"), str) and member_path_problem(book["file"]) is None):
        problems.append("codebook must name its file in the bundle")
    rules = manifest.get("rules")
    if not (
        isinstance(rules, list)
        and rules
        and all(
            isinstance(rule, dict)
            and isinstance(rule.get("file"), str)
            and rule["file"].startswith(f"{RULE_DIR}/")
            and member_path_problem(rule["file"]) is None
            and isinstance(rule.get("id"), str)
            and isinstance(rule.get("version"), int)
            and not isinstance(rule["version"], bool)
            for rule in rules
        )
    ):
        problems.append("rules must list each rule's id, version and file")
    problems += _file_list_problems(manifest.get("files"))
    sheets = manifest.get("sheets")
    if not (
        isinstance(sheets, list)
        and len(sheets) >= 2
        and all(
            isinstance(sheet, dict)
            and isinstance(sheet.get("file"), str)
            and sheet["file"].startswith(f"{SHEETS_DIR}/")
            and sheet["file"].count("/") == 1
            and member_path_problem(sheet["file"]) is None
            for sheet in sheets
        )
    ):
        problems.append("sheets must list two or more sheets under sheets/")
    units = manifest.get("units")
    if not (
        isinstance(units, dict)
        and isinstance(units.get("count"), int)
        and not isinstance(units["count"], bool)
        and isinstance(units.get("ids_sha256"), str)
    ):
        problems.append("units must have a count and an ids_sha256")
    else:
        problems += units_sketch_problems(units, rules)
    if not isinstance(manifest.get("columns"), dict):
        problems.append("columns is missing")
    else:
        problems += recorded.columns(manifest["columns"], "columns")
    problems += codebook_sample_problems(manifest.get("sample"), manifest.get("files"))
    problems += recodes_problems(manifest.get("recodes"), rules)
    score = manifest.get("score")
    if not (isinstance(score, dict) and isinstance(score.get("variables"), dict) and score["variables"]):
        problems.append("score must hold every variable's score")
    integrity = manifest.get("integrity")
    if not (isinstance(integrity, dict) and isinstance(integrity.get("sha256"), str)):
        problems.append("integrity is missing")
    return problems


def codebook_sample_problems(sample: Any, files: Any) -> list[str]:
    """The manifest's `sample` (null or absent: none): the frozen files of the sample drawn for the
    codebook, under sample/ (its rule copies under sample/rules/<rule>/), each in the file list. Pure."""
    if sample is None:
        return []
    summary = f"{SAMPLE_DIR}/{SAMPLE_SUMMARY}"
    if not isinstance(sample, dict) or not isinstance(sample.get("files"), list):
        return ["sample must be null or list its files under sample/"]
    listed = {record.get("path") for record in files if isinstance(record, dict)} if isinstance(files, list) else set()
    problems = []
    for position, path in enumerate(sample["files"]):
        why = member_path_problem(path)
        parts = path.split("/") if why is None else []
        if why is not None:
            problems.append(f"sample.files[{position}] {path!r} {why}")
        elif parts[0] != SAMPLE_DIR or not (len(parts) == 2 or (len(parts) == 4 and parts[1] == RULES_COPY)):
            problems.append(f"sample.files[{position}] {path!r} is not in {SAMPLE_DIR}/ or {SAMPLE_DIR}/{RULES_COPY}/")
        elif path not in listed:
            problems.append(f"sample file {path} is not in the file list")
    if sample.get("summary") != summary or summary not in sample["files"]:
        problems.append(f"sample.summary must be {summary}, one of sample.files")
    ids = sample.get("ids")
    if not (
        isinstance(ids, dict)
        and isinstance(ids.get("count"), int)
        and not isinstance(ids["count"], bool)
        and isinstance(ids.get("ids_sha256"), str)
    ):
        problems.append("sample.ids must have a count and an ids_sha256")
    if sample.get("restricts_units") is not True:
        problems.append("sample.restricts_units must be true")
    return problems


def units_sketch_problems(units: dict[str, Any], rules: Any) -> list[str]:
    """The sketches of a codebook manifest's `units`, when it has them (a bundle frozen before them
    has none): lists of hashes, and one per variable of the manifest's rules. Pure."""
    problems = []
    if "sketch" in units and not is_sketch(units["sketch"]):
        problems.append("units.sketch must be a list of the ids' smallest hashes (16 hex digits), ascending")
    if "scored_sketches" not in units:
        return problems
    sketches = units["scored_sketches"]
    ids = {rule.get("id") for rule in rules if isinstance(rule, dict)} if isinstance(rules, list) else set()
    if not (isinstance(sketches, dict) and set(sketches) == ids):
        problems.append("units.scored_sketches must hold one sketch per variable of rules")
    else:
        problems += [
            f"units.scored_sketches.{rule_id} must be a list of the ids' smallest hashes (16 hex digits), ascending"
            for rule_id, sketch in sketches.items()
            if not is_sketch(sketch)
        ]
    return problems


def recompute_codebook(
    bundle: Path, manifest: dict[str, Any], files: Mapping[str, bytes], limits: Limits = DEFAULT_LIMITS
) -> tuple[dict[str, Any], dict[str, Any], dict[str, JoinResult], SampleRef | None]:
    """Every variable's score recomputed from the bundle's files as read (``files``), the units
    (as the manifest's `units`), each variable's scored join (verify checks the adjudication
    records against its disagreements) and the frozen sample. IrrAuditError when the files cannot
    give it (a rule file missing, say)."""
    codebook, variables, sample = variables_from_files(bundle, manifest, files, limits)
    joins = {variable: joined.join for variable, joined in variables.items()}
    return codebook_score(codebook, variables), codebook_units(variables), joins, sample


def frozen_codebook_sample(
    bundle: Path, manifest: dict[str, Any], codebook: Codebook, limits: Limits = DEFAULT_LIMITS
) -> SampleRef | None:
    """The sample the manifest lists, read from the bundle's sample/ as `freeze --codebook --sample`
    read it (its ledger and run checked; a symlinked folder refused); None without one."""
    if not manifest.get("sample"):
        return None
    return read_sample(member(bundle, manifest["sample"]["summary"]).parent, limits, codebook=codebook)


def _not_frozen(bundle: Path, name: str) -> IrrAuditError:
    """A file the manifest names for the codebook, a rule or a sheet that is not among the bundle's files."""
    return IrrAuditError(
        f"{name} cannot be read",
        hint=f"the bundle's manifest names a file it does not hold: run irr-audit verify {shell_path(bundle)} to see "
        "every problem, and restore the bundle from a copy (or freeze the sheets again with irr-audit freeze).",
        code="bundle-file",
    )


def variables_from_files(
    bundle: Path, manifest: dict[str, Any], files: Mapping[str, bytes], limits: Limits = DEFAULT_LIMITS
) -> tuple[Codebook, dict[str, VariableJoin], SampleRef | None]:
    """The codebook, every variable joined and the frozen sample, from a codebook bundle's files as read."""
    rules: dict[tuple[str, int], Rule] = {}
    for entry in manifest["rules"]:
        data = files.get(entry["file"])
        if data is None:
            raise _not_frozen(bundle, entry["file"])
        rule = parse_rule(data, entry["file"], limits)
        rules[rule.id, rule.version] = rule
    book = manifest["codebook"]["file"]
    if book not in files:
        raise _not_frozen(bundle, book)
    codebook = parse_codebook(files[book], book, rules, limits)
    columns = manifest["columns"]
    options = SheetOptions(
        id_column=columns.get("id_column"),
        worksheet=columns.get("worksheet"),
        delimiter=columns.get("delimiter"),
        limits=limits,
    )
    sheets = []
    for entry in manifest["sheets"]:
        if entry["file"] not in files:
            raise _not_frozen(bundle, entry["file"])
        sheets.append((files[entry["file"]], Path(entry["file"])))
    sample = frozen_codebook_sample(bundle, manifest, codebook, limits)
    variables, _ = joined_variables(codebook, sheets, options, sample)
    return codebook, variables, sample


def is_codebook_bundle(path: Path) -> bool:
    """A folder freeze --codebook wrote (its manifest's format says so). A path the system cannot
    look up is none: the command that reads it names it (irr_audit.io.files.check_exist)."""
    try:
        if not is_bundle(path) or (path / MANIFEST).is_symlink():
            return False
        _, manifest = load_manifest_json(path)
    except (OSError, ValueError, IrrAuditError):
        return False
    return isinstance(manifest, dict) and manifest.get("format") == CODEBOOK_FORMAT


def read_codebook_bundle(
    bundle: Path, limits: Limits = DEFAULT_LIMITS
) -> tuple[Manifest, Codebook, dict[str, VariableJoin]]:
    """A codebook bundle as audit input (labels, adjudicate): see :func:`read_codebook_audit`."""
    manifest, codebook, variables, _ = read_codebook_audit(bundle, limits)
    return manifest, codebook, variables


def read_codebook_audit(
    bundle: Path, limits: Limits = DEFAULT_LIMITS
) -> tuple[Manifest, Codebook, dict[str, VariableJoin], SampleRef | None]:
    """A codebook bundle as audit input (score, report, labels, adjudicate): its manifest checked (as
    read once: its bytes are what records and anchors name), every file read once and checked
    unchanged, every variable joined (on its frozen sample's units, when it has one), and that
    sample. A bundle that does not verify is refused."""
    bundle = bundle_path(bundle)
    checked = read_codebook_manifest(bundle)
    manifest = checked.content
    files: dict[str, bytes] = {}
    for record in manifest["files"]:
        content, problem = frozen_file(bundle, record, limits)
        if problem is not None and problem.unreadable:
            raise unreadable_bundle(bundle, f"{problem.path} {problem.detail}")
        if problem is not None or content is None:
            why = (problem.detail or problem.kind) if problem is not None else "cannot be read"
            raise altered(bundle, f"{record['path']} {why}")
        files[record["path"]] = content
    codebook, variables, sample = variables_from_files(bundle, manifest, files, limits)
    return checked, codebook, variables, sample


def read_codebook_manifest(bundle: Path) -> Manifest:
    """A codebook bundle's manifest, read once and checked (structure, integrity hash); its files
    are not read. A manifest that does not verify is refused."""
    bundle = bundle_path(bundle)
    refuse_unfinished(bundle)
    try:
        data, manifest = load_manifest_json(bundle)
    except (OSError, ValueError) as exc:
        raise altered(bundle, f"{MANIFEST} cannot be read as JSON ({type(exc).__name__})") from None
    problems = codebook_manifest_problems(manifest) if isinstance(manifest, dict) else ["is not a JSON object"]
    if not problems and manifest["integrity"]["sha256"] != canonical_sha256(manifest, "integrity"):
        problems = ["was edited after freezing (its integrity hash does not match)"]
    if problems:
        raise altered(bundle, f"{MANIFEST} {problems[0]}")
    return Manifest(data, manifest)


def _read_recoded(bundle: Path) -> dict[str, Any]:
    """The manifest of the bundle ``--recodes`` names, checked (structure, integrity), a rule's or a
    codebook's."""
    if is_codebook_bundle(bundle):
        return read_codebook_manifest(bundle).content
    return read_manifest(bundle).content
