"""Audit bundle commands: freeze, verify, adjudicate. They register on the main app
when irr_audit.cli imports this module; the library work is in irr_audit.bundle."""

from __future__ import annotations

from datetime import datetime, timezone
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from irr_audit.bundle import adjudication as adj
from irr_audit.bundle.anchor import (
    Anchors,
    append_digest,
    check_list_target,
    digest_line,
    parse_digest,
    read_digest_list,
    sha256_digest,
)
from irr_audit.bundle.freeze import collect_source
from irr_audit.bundle.freeze import freeze as freeze_bundle
from irr_audit.bundle.manifest import MANIFEST, read_manifest, sha256_hex, shell_path
from irr_audit.bundle.read import join_bundle
from irr_audit.bundle.signing import SigningError, check_allowed_signers, sign, ssh_keygen
from irr_audit.bundle.verify import INTERNAL_ONLY, verify_bundle
from irr_audit.cli.shared import (
    CodeColumn,
    IdColumn,
    LimitOption,
    Quiet,
    RuleOption,
    Worksheet,
    app,
    check_outputs,
    reports_errors,
    say,
)
from irr_audit.errors import IrrAuditError, LimitError, UsageError
from irr_audit.io.files import read_bounded, resolved
from irr_audit.io.limits import parse_limit_options
from irr_audit.io.outputs import render_json, write_text_atomic
from irr_audit.report.model import build_report

BundleArgument = Annotated[Path, typer.Argument(help="An audit bundle folder made by irr-audit freeze.")]
DigestsOption = Annotated[
    Path | None,
    typer.Option(
        "--digests",
        help="A digest list kept in the repository (e.g. audits/DIGESTS): append this "
        "bundle's digest to it (created if missing; earlier lines are never rewritten).",
    ),
]
SignOption = Annotated[
    Path | None,
    typer.Option("--sign", help="An SSH private key: sign with ssh-keygen -Y sign (namespace irr-audit)."),
]


class VerifyFormat(str, Enum):
    TEXT = "text"
    JSON = "json"


@app.command()
@reports_errors
def freeze(
    inputs: Annotated[list[Path], typer.Argument(help="A folder written by join, or two or more sheets.")],
    into: Annotated[Path, typer.Option("--into", help="The audits folder; the new bundle is made inside it.")],
    rule: RuleOption = None,
    recodes: Annotated[
        Path | None,
        typer.Option("--recodes", help="The bundle whose units this audit codes again under a revised rule."),
    ] = None,
    sample: Annotated[
        Path | None,
        typer.Option("--sample", help="The folder irr-audit sample wrote: its ledger and missingness log are kept."),
    ] = None,
    id_column: IdColumn = None,
    code_column: CodeColumn = None,
    worksheet: Worksheet = None,
    digests: DigestsOption = None,
    sign: SignOption = None,
    quiet: Quiet = False,
    limit: LimitOption = None,
) -> None:
    """Freeze an audit: the original sheets, the rule file and the score, in a new read-only bundle.

    Prints the bundle's digest and path: sha256:<hex>  <bundle>. Keep the digest outside the
    bundle (--digests, a commit, a message): verify --expect checks a bundle against it.
    """
    reads = [*inputs, *(path for path in (rule,) if path is not None)]
    folders = [path for path in (*inputs, sample, recodes) if path is not None and path.is_dir()]
    if digests is not None:
        check_list_target(digests, reads, folders)
    _check_sign_key(sign)
    source = collect_source(
        inputs, rule, id_column, code_column, sample, worksheet=worksheet, limits=parse_limit_options(limit)
    )
    result = freeze_bundle(source, into, datetime.now(timezone.utc), recodes=recodes, sign_key=sign)
    digest = sha256_digest((result.path / MANIFEST).read_bytes())
    say(digest_line(digest, str(result.path)), err=False)
    listed = append_digest(digests, digest, result.path.name) if digests is not None else None
    if not quiet:
        say(source.join.summary_line())
        for warning in source.join.warnings:
            say(f"warning: {warning}")
        say(f"froze {len(result.manifest['files'])} files and the score into {result.path}")
        for note in result.notes:
            say(note if note.startswith("warning:") else f"note: {note}")
        if sign is not None:
            say(f"signed the manifest with {sign}: {result.path / MANIFEST}.sig")
        if listed is not None:
            say(f"anchored: {digests} line {listed} lists {digest} for {result.path.name}; commit it")
        else:
            say(
                f"keep the digest outside the bundle: irr-audit verify {shell_path(result.path)} "
                f"--expect {digest} proves the bundle is this one"
            )


def _check_sign_key(key: Path | None) -> None:
    """Before anything is read or written: ssh-keygen is there and the key is a file."""
    if key is None:
        return

    ssh_keygen()
    if not key.is_file():
        raise SigningError(
            f"--sign {key} is not a key file.",
            hint="pass an SSH private key, e.g. ~/.ssh/id_ed25519.",
            code="usage-sign-key",
        )


@app.command()
@reports_errors
def verify(
    bundle: BundleArgument,
    output_format: Annotated[VerifyFormat, typer.Option("--format", help="text or json.")] = VerifyFormat.TEXT,
    expect: Annotated[
        str | None,
        typer.Option("--expect", help="The digest freeze printed (sha256:<hex>): fail unless this is that bundle."),
    ] = None,
    digests: Annotated[
        Path | None,
        typer.Option(
            "--digests",
            help="A digest list (e.g. audits/DIGESTS): fail unless it lists this bundle's "
            "digest under its name, and its adjudication records' digests.",
        ),
    ] = None,
    allowed_signers: Annotated[
        Path | None,
        typer.Option(
            "--allowed-signers",
            help="An SSH allowed signers file: fail unless the manifest (and each "
            "adjudication record) has a good signature by a key in it.",
        ),
    ] = None,
    identity: Annotated[
        str | None,
        typer.Option("--identity", help="With --allowed-signers: the signer's identity (default: any listed)."),
    ] = None,
    limit: LimitOption = None,
) -> None:
    """Re-hash a bundle and recompute its score. Exit 0 when all match, 1 naming each difference.

    Without --expect, --digests or --allowed-signers this checks internal consistency only:
    whoever can write the bundle could change a file and re-hash the manifest.
    """
    anchors = _anchors(expect, digests, allowed_signers, identity)
    result = verify_bundle(bundle, anchors, parse_limit_options(limit))
    if output_format is VerifyFormat.JSON:
        typer.echo(render_json(result.to_dict()), nl=False)
    else:
        for problem in result.problems:
            say(problem.line(), err=False)
        if result.digest is not None:
            say(f"digest: {result.digest}", err=False)
        if result.anchors:
            say("anchored: " + "; ".join(result.anchors) + ".", err=False)
        if not anchors.given:
            say(f"checked: {INTERNAL_ONLY}", err=False)
        say(_verdict(result), err=False)  # last: a script may read the verdict with tail -n 1
        for note in result.notes:
            say(f"note: {note}")
    if not result.ok:
        raise typer.Exit(1)


def _anchors(expect: str | None, digests: Path | None, allowed_signers: Path | None, identity: str | None) -> Anchors:
    """The anchors verify checks, read and checked before the bundle is."""
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


def _verdict(result) -> str:  # type: ignore[no-untyped-def]
    name = result.name or result.bundle.name
    if not result.ok:
        count = len(result.problems)
        return f"FAILED: bundle {name} does not verify ({count} problem{'s' if count != 1 else ''})."
    records = result.adjudication_records
    return (
        f"OK: bundle {name} verifies: {result.files_checked} files unchanged, manifest intact, score recomputed "
        f"equal; {records} adjudication record{'s' if records != 1 else ''} checked."
    )


@app.command()
@reports_errors
def adjudicate(
    bundle: BundleArgument,
    decisions: Annotated[
        Path | None,
        typer.Option(
            "--decisions",
            help="A CSV of comment_id, code (the final code), note; rows without a code are skipped.",
        ),
    ] = None,
    by: Annotated[str | None, typer.Option("--by", help="Who decided, e.g. 'alice and bob'.")] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Without --decisions: write the list of disagreements here.")
    ] = None,
    digests: DigestsOption = None,
    sign: SignOption = None,
    quiet: Quiet = False,
    limit: LimitOption = None,
) -> None:
    """List a bundle's disagreements to decide (a CSV to fill in), or record the decisions taken.

    The decisions go to a new file under BUNDLE/adjudication/; the frozen sheets and the first
    statistics are never changed. Prints the record's digest and path: sha256:<hex>  <record>.
    """
    if decisions is None and (digests is not None or sign is not None):
        raise UsageError(
            "--digests and --sign anchor a new adjudication record; they go with --decisions.",
            hint="add --decisions FILE.csv --by NAME, or leave them out.",
            code="usage-adjudicate",
        )
    if digests is not None:
        check_list_target(digests, [path for path in (decisions,) if path is not None], [bundle])
    _check_sign_key(sign)
    if output is not None:
        check_outputs([bundle, decisions], "--output", files=[output])
    manifest = read_manifest(bundle)
    join = join_bundle(bundle, parse_limit_options(limit))
    disagreements = adj.disagreement_codes(build_report(join).disagreements)
    manifest_sha256 = sha256_hex((bundle / MANIFEST).read_bytes())
    records = adj.trusted_records(bundle, manifest_sha256, disagreements, join.rule.categories)
    current = adj.current_decisions(records)
    if decisions is None:
        _list_disagreements(bundle, adj.template_csv(disagreements, list(join.coders), current), output, by)
        if not quiet:
            decided = sum(unit in current for unit in disagreements)
            say(
                f"{len(disagreements)} disagreements, {decided} decided. Fill in code and note, then run: "
                f"irr-audit adjudicate {shell_path(bundle)} --decisions FILE.csv --by NAME"
            )
        return
    if output is not None:
        raise UsageError(
            "--output is for the list of disagreements, not with --decisions.",
            hint="leave out --output.",
            code="usage-adjudicate",
        )
    if by is None or not by.strip():
        raise UsageError(
            "adjudicate --decisions needs --by: who decided.",
            hint=f"add --by NAME, e.g. irr-audit adjudicate {shell_path(bundle)} "
            f"--decisions {shell_path(decisions)} --by 'alice and bob'.",
            code="usage-adjudicate-by",
        )
    text, data = _read_decisions_file(decisions)
    found = adj.parse_decisions(text, str(decisions), join.rule, disagreements)
    new = adj.changed_decisions(found, current)
    if not new:
        say(f"nothing new to record: the {len(found)} decisions in {decisions} are already on record.")
        return
    now = datetime.now(timezone.utc)
    record = adj.build_record(
        bundle_name=manifest["name"],
        manifest_sha256=manifest_sha256,
        by=by.strip(),
        created=now,
        source_name=decisions.name,
        source_sha256=sha256_hex(data),
        decisions=new,
        disagreements=disagreements,
    )

    record_data = adj.record_bytes(record)
    signature = _signature(record_data, sign)
    path = adj.write_record(bundle, record_data, now, signature)
    digest = sha256_digest(record_data)
    say(digest_line(digest, str(path)), err=False)
    listed_as = f"{manifest['name']}/{adj.ADJUDICATION_DIR}/{path.name}"
    listed = append_digest(digests, digest, listed_as) if digests is not None else None
    if not quiet:
        if listed is not None:
            say(f"anchored: {digests} line {listed} lists {digest} for {listed_as}; commit it")
        decided = len(set(current) | {decision.comment_id for decision in new})
        say(
            f"recorded {len(new)} decisions by {by.strip()}; {decided} of {len(disagreements)} "
            "disagreements decided. The independent statistics are unchanged."
        )


def _signature(data: bytes, key: Path | None) -> bytes | None:
    if key is None:
        return None

    return sign(data, key)


def _list_disagreements(bundle: Path, text: str, output: Path | None, by: str | None) -> None:
    if by is not None:
        raise UsageError(
            "--by names who decided; it goes with --decisions FILE.",
            hint=f"irr-audit adjudicate {shell_path(bundle)} --decisions FILE.csv --by NAME",
            code="usage-adjudicate",
        )
    if output is None:
        typer.echo(text, nl=False)
        return
    if resolved(output).is_relative_to(resolved(bundle)):
        raise UsageError(
            f"--output {output} is inside the bundle {bundle}.",
            hint="write the list elsewhere; a bundle only gains adjudication records.",
            code="usage-adjudicate",
        )
    write_text_atomic(output, text)


def _read_decisions_file(path: Path) -> tuple[str, bytes]:
    try:
        data = read_bounded(path, f"decisions file {path}")
    except LimitError:
        raise
    except IrrAuditError as error:  # missing, a folder, a pipe, a device
        raise UsageError(
            error.message, hint="pass the CSV you filled in with --decisions FILE.csv.", code="adjudication-decisions"
        ) from None
    try:
        return data.decode("utf-8-sig"), data
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"decisions file {path} is not UTF-8 (byte {exc.start}).",
            hint="save it as CSV UTF-8.",
            code="adjudication-decisions",
        ) from None
