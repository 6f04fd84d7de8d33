"""The bundle commands as library calls: freeze an audit and anchor its digest, read the
anchors verify checks, list a bundle's disagreements to decide and record the decisions.
`irr-audit freeze`, `verify` and `adjudicate` parse their options, call these and print
what they return.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from irr_audit.bundle import adjudication as adj
from irr_audit.bundle.anchor import Anchors, check_list_target, parse_digest, read_digest_list
from irr_audit.bundle.codebook import (
    CodebookSource,
    collect_codebook_source,
    freeze_codebook,
    is_codebook_bundle,
    read_codebook_bundle,
)
from irr_audit.bundle.freeze import FreezeResult, FreezeSource, collect_source
from irr_audit.bundle.freeze import freeze as freeze_bundle
from irr_audit.bundle.manifest import ADJUDICATION_DIR, bundle_path, shell_path
from irr_audit.bundle.read import read_bundle
from irr_audit.bundle.signing import check_allowed_signers, check_sign_key, sign, ssh_keygen
from irr_audit.errors import IrrAuditError, LimitError, UsageError
from irr_audit.io.csvtables import table_csv_columns
from irr_audit.io.encodings import refuse_foreign_mark
from irr_audit.io.files import check_exist, check_usable, read_bounded, sha256_digest, sha256_hex
from irr_audit.io.limits import DEFAULT_LIMITS, Limits
from irr_audit.io.outputs import Same
from irr_audit.join.join import JoinResult
from irr_audit.join.variables import VariableJoin
from irr_audit.report.model import Disagreements, disagreement_units

# --- freeze --------------------------------------------------------------------------


@dataclass(frozen=True)
class Frozen:
    """A new bundle: what was frozen (``source``), the bundle (``result``) and its digest
    (sha256:<hex> of its manifest), to show before it is appended to a digest list
    (anchor.append_digest), so that a list that cannot be written loses no digest."""

    source: FreezeSource
    result: FreezeResult
    digest: str


def freeze_audit(
    inputs: list[Path],
    into: Path,
    *,
    rule: Path | None = None,
    recodes: Path | None = None,
    sample: Path | None = None,
    id_column: str | None = None,
    code_column: str | None = None,
    worksheet: str | None = None,
    digests: Path | None = None,
    sign_key: Path | None = None,
    limits: Limits = DEFAULT_LIMITS,
    now: datetime | None = None,
) -> Frozen:
    """Freeze an audit (sheets + rule, or a join folder) into a new bundle under ``into``,
    signed with ``sign_key`` when given. The digest list the digest will be appended to
    (``digests``) and the key are checked before anything is read or written."""
    check_usable([*inputs, into, rule, recodes, sample, digests, sign_key])
    kind = "input" if len(inputs) == 1 else "sheet"
    check_exist([*((path, kind) for path in inputs), (rule, "rule"), (recodes, "bundle"), (sample, "sample")])
    if digests is not None:
        check_list_target(digests, [*inputs, rule, sample, recodes])
    check_sign_key(sign_key)
    source = collect_source(inputs, rule, id_column, code_column, sample, worksheet=worksheet, limits=limits)
    result = freeze_bundle(source, into, now or datetime.now(timezone.utc), recodes=recodes, sign_key=sign_key)
    return Frozen(source, result, result.digest)


@dataclass(frozen=True)
class FrozenCodebook:
    """A new codebook bundle, as :class:`Frozen` is a rule's."""

    source: CodebookSource
    result: FreezeResult
    digest: str


def freeze_codebook_audit(
    inputs: list[Path],
    into: Path,
    codebook: Path | None,
    *,
    rules_dir: Path | None = None,
    sample: Path | None = None,
    recodes: Path | None = None,
    id_column: str | None = None,
    worksheet: str | None = None,
    delimiter: str | None = None,
    digests: Path | None = None,
    sign_key: Path | None = None,
    limits: Limits = DEFAULT_LIMITS,
    now: datetime | None = None,
) -> FrozenCodebook:
    """Freeze a codebook audit (the coders' sheets + the codebook and its rules, restricted to the
    units of ``sample`` when given; or a folder `join --codebook` wrote, which keeps its codebook)
    into a new bundle under ``into``; the digest list and the key are checked before anything is read."""
    check_usable([*inputs, into, codebook, rules_dir, sample, recodes, digests, sign_key])
    named = [(codebook, "codebook"), (rules_dir, "rules folder"), (sample, "sample"), (recodes, "bundle")]
    kind = "input" if len(inputs) == 1 else "sheet"
    check_exist([*((path, kind) for path in inputs), *named])
    if digests is not None:
        check_list_target(digests, [*inputs, codebook, sample, recodes])
    check_sign_key(sign_key)
    source = collect_codebook_source(
        inputs,
        codebook,
        rules_dir,
        id_column=id_column,
        worksheet=worksheet,
        delimiter=delimiter,
        limits=limits,
        sample=sample,
    )
    result = freeze_codebook(source, into, now or datetime.now(timezone.utc), recodes=recodes, sign_key=sign_key)
    return FrozenCodebook(source, result, result.digest)


# --- verify ------------------------------------------------------------------------------


def read_anchors(
    expect: str | None, digests: Path | None, allowed_signers: Path | None, identity: str | None
) -> Anchors:
    """The anchors verify checks, read and checked before the bundle is."""
    check_usable([digests, allowed_signers])
    if identity is not None and allowed_signers is None:
        raise UsageError(
            "--identity names the signer to check; it goes with --allowed-signers FILE.",
            hint="add --allowed-signers FILE, or leave out --identity.",
            code="usage-identity",
        )
    if allowed_signers is not None:
        ssh_keygen()
        check_allowed_signers(allowed_signers)
    return Anchors(
        expect=parse_digest(expect) if expect is not None else None,
        digests=read_digest_list(digests) if digests is not None else None,
        allowed_signers=allowed_signers,
        identity=identity,
    )


# --- adjudicate -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Adjudication:
    """A bundle's disagreements (comment id -> {coder: independent code}) and the decisions
    on record (comment id -> the current decision), every record checked first."""

    bundle: Path
    manifest: dict[str, Any]
    manifest_sha256: str
    join: JoinResult
    disagreements: adj.DisagreementCodes
    current: dict[str, dict[str, Any]]
    texts: dict[str, dict[str, str]] = field(default_factory=dict)  # comment id -> text and link shown to decide

    @property
    def decided(self) -> int:
        return sum(unit in self.current for unit in self.disagreements)

    def template(self) -> str:
        """The disagreements to decide as a CSV to fill in (code and note prefilled with the current decision)."""
        return adj.template_csv(self.disagreements, list(self.join.coders), self.current, self.texts)

    def changes(self, text: str, source: str) -> Changes:
        """What the decisions file ``text`` changes on record."""
        found = adj.parse_decisions(text, source, self.join.rule, self.disagreements)
        new = adj.changed_decisions(found, self.current)
        decided = len(set(self.current) | {decision.comment_id for decision in new})
        entries = [adj.decision_entry(decision, self.disagreements[decision.comment_id]) for decision in new]
        return Changes(len(found), entries, decided)


@dataclass(frozen=True)
class Changes:
    """What a decisions file changes: how many decisions it holds (``found``), those not yet on
    record as a record holds them (``entries``), and how many disagreements are decided then."""

    found: int
    entries: list[dict[str, Any]]
    decided: int


@dataclass(frozen=True)
class VariableAdjudication:
    """One variable of a codebook bundle: the variable joined, its disagreements (comment id ->
    {coder: independent code}) and its decisions on record (comment id -> the current one)."""

    joined: VariableJoin
    disagreements: adj.DisagreementCodes
    current: dict[str, dict[str, Any]]

    @property
    def decided(self) -> int:
        return sum(unit in self.current for unit in self.disagreements)


@dataclass(frozen=True)
class CodebookAdjudication:
    """A codebook bundle's disagreements, variable by variable, and the decisions on record, as
    :class:`Adjudication` is a rule's bundle's: decided the same way, in the same record files,
    each decision naming its variable."""

    bundle: Path
    manifest: dict[str, Any]
    manifest_sha256: str
    variables: dict[str, VariableAdjudication]

    @property
    def disagreements(self) -> list[tuple[str, str]]:
        """(variable, comment id) of every disagreement, in the codebook's order."""
        return [(variable, unit) for variable, state in self.variables.items() for unit in state.disagreements]

    @property
    def decided(self) -> int:
        return sum(state.decided for state in self.variables.values())

    def template(self) -> str:
        """The disagreements to decide as a CSV to fill in: a rule's template of each variable, one
        after the other, after a first column ``variable``."""
        parts = [
            (variable, *adj.template_columns(state.disagreements, list(state.joined.join.coders), state.current))
            for variable, state in self.variables.items()
        ]
        header = ["variable", *parts[0][1]]  # the variables of one codebook are coded by the same coders
        total = sum(length for *_, length in parts)
        columns: list[list[object]] = [[] for _ in header]
        for variable, _, part, length in parts:
            columns[0] += [variable] * length
            for at, column in enumerate(part, start=1):
                columns[at] += [column.cell] * length if isinstance(column, Same) else list(column)
        return table_csv_columns(header, columns, total)

    def changes(self, text: str, source: str) -> Changes:
        """What the decisions file ``text`` (with its ``variable`` column) changes on record."""
        scopes = {variable: (state.joined.rule, state.disagreements) for variable, state in self.variables.items()}
        found = adj.parse_codebook_decisions(text, source, scopes)
        new = [decision for decision in found if adj.changed_decisions([decision], self.of(decision).current)]
        decided = self.decided + sum(decision.comment_id not in self.of(decision).current for decision in new)
        entries = [
            adj.decision_entry(decision, self.of(decision).disagreements[decision.comment_id]) for decision in new
        ]
        return Changes(len(found), entries, decided)

    def of(self, decision: adj.Decision) -> VariableAdjudication:
        return self.variables[decision.variable]


def bundle_adjudication(bundle: Path, limits: Limits = DEFAULT_LIMITS) -> Adjudication | CodebookAdjudication:
    """`irr-audit adjudicate`: the adjudication of a rule's bundle, or of a codebook's."""
    check_exist([(bundle, "bundle")])
    if is_codebook_bundle(bundle):
        return codebook_adjudication(bundle, limits)
    return adjudication(bundle, limits)


def codebook_adjudication(bundle: Path, limits: Limits = DEFAULT_LIMITS) -> CodebookAdjudication:
    """A codebook bundle's disagreements per variable and the decisions on record, its files
    checked unchanged first; any doubtful record is refused, as for a rule's bundle."""
    check_exist([(bundle, "bundle")])
    bundle = bundle_path(bundle)  # records are written into, and named by, the folder itself
    manifest, _, variables = read_codebook_bundle(bundle, limits)
    scopes = adj.variable_scopes({variable: joined.join for variable, joined in variables.items()})
    records = adj.trusted_records(bundle, adj.codebook_check(manifest.sha256, scopes))
    current = adj.current_by_variable(records, variables)
    return CodebookAdjudication(
        bundle,
        manifest.content,
        manifest.sha256,
        {
            variable: VariableAdjudication(joined, scopes[variable][0], current[variable])
            for variable, joined in variables.items()
        },
    )


def adjudication(bundle: Path, limits: Limits = DEFAULT_LIMITS) -> Adjudication:
    """A bundle's disagreements and the decisions on record; any doubtful record is refused."""
    check_exist([(bundle, "bundle")])
    bundle = bundle_path(bundle)  # records are written into, and named by, the folder itself
    frozen = read_bundle(bundle, limits)
    join, manifest_sha256 = frozen.join, frozen.manifest.sha256
    listed = Disagreements(join, disagreement_units(join))  # listed, not scored: each unit's dict made when read
    disagreements = adj.disagreement_codes(listed)
    records = adj.trusted_records(bundle, adj.rule_check(manifest_sha256, disagreements, join.rule.categories))
    return Adjudication(
        bundle,
        frozen.manifest.content,
        manifest_sha256,
        join,
        disagreements,
        adj.current_decisions(records),
        adj.disagreement_texts(listed),
    )


@dataclass(frozen=True)
class Recorded:
    """Decisions recorded in a new adjudication record (``path``, its digest, and the name a
    digest list gives it, ``listed_as``), or none (``path`` None) when every decision of the
    file (``found``) was already on record."""

    found: int
    new: int
    decided: int
    path: Path | None = None
    digest: str = ""
    listed_as: str = ""


def record_decisions(
    state: Adjudication | CodebookAdjudication,
    decisions: Path,
    by: str,
    *,
    sign_key: Path | None = None,
    now: datetime | None = None,
) -> Recorded:
    """Record the decisions of a filled-in CSV (comment_id, code, note; and variable, for a
    codebook bundle) by ``by``: only those that change what is on record, in a new record file;
    the frozen files never change."""
    if not adj.has_visible_character(by):
        raise UsageError(
            f"--by {by!r} names no one: it has no visible character.",
            hint="pass who decided as people read it, e.g. --by 'alice and bob'.",
            code="usage-adjudicate-by",
        )
    text, data = read_decisions_file(decisions)
    changes = state.changes(text, str(decisions))
    if not changes.entries:
        return Recorded(found=changes.found, new=0, decided=state.decided)
    created = now or datetime.now(timezone.utc)
    record = adj.build_record(
        bundle_name=state.manifest["name"],
        manifest_sha256=state.manifest_sha256,
        by=by.strip(),
        created=created,
        source_name=decisions.name,
        source_sha256=sha256_hex(data),
        decisions=changes.entries,
    )
    record_data = adj.record_bytes(record)
    signature = sign(record_data, sign_key) if sign_key is not None else None
    path = adj.write_record(state.bundle, record_data, created, signature)
    digest = sha256_digest(record_data)
    listed_as = f"{state.manifest['name']}/{ADJUDICATION_DIR}/{path.name}"
    return Recorded(changes.found, len(changes.entries), changes.decided, path, digest, listed_as)


def read_decisions_file(path: Path) -> tuple[str, bytes]:
    """The filled-in decisions CSV as text (UTF-8, a BOM dropped) and its bytes."""
    try:
        data = read_bounded(path, f"decisions file {path}")
    except LimitError:
        raise
    except IrrAuditError as error:  # missing, a folder, a pipe, a device
        raise UsageError(
            error.message, hint="pass the CSV you filled in with --decisions FILE.csv.", code="adjudication-decisions"
        ) from None
    refuse_foreign_mark(data, f"decisions file {path}", code="adjudication-decisions", error=UsageError)
    try:
        return data.decode("utf-8-sig"), data
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"decisions file {path} is not UTF-8 (byte {exc.start}).",
            hint="save it as CSV UTF-8.",
            code="adjudication-decisions",
        ) from None


def decide_hint(bundle: Path) -> str:
    """The command that records the decisions, for the message after the list."""
    return f"irr-audit adjudicate {shell_path(bundle)} --decisions FILE.csv --by NAME"
