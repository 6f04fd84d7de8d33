"""Audit bundle commands: freeze, verify, adjudicate. They register on the main app
when irr_audit.cli imports this module; the library work is in irr_audit.bundle
and irr_audit.adjudication."""

from __future__ import annotations

from datetime import datetime, timezone
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from irr_audit.cli import CodeColumn, IdColumn, Quiet, RuleOption, Worksheet, app, reports_errors
from irr_audit.errors import UsageError

BundleArgument = Annotated[Path, typer.Argument(help="An audit bundle folder made by irr-audit freeze.")]


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
    quiet: Quiet = False,
) -> None:
    """Freeze an audit: the original sheets, the rule file and the score, in a new read-only bundle."""
    from irr_audit.bundle import collect_source
    from irr_audit.bundle import freeze as freeze_bundle

    source = collect_source(inputs, rule, id_column, code_column, sample, worksheet=worksheet)
    result = freeze_bundle(source, into, datetime.now(timezone.utc), recodes=recodes)
    typer.echo(str(result.path))
    if not quiet:
        typer.echo(source.join.summary_line(), err=True)
        for warning in source.join.warnings:
            typer.echo(f"warning: {warning}", err=True)
        typer.echo(f"froze {len(result.manifest['files'])} files and the score into {result.path}", err=True)
        for note in result.notes:
            typer.echo(note if note.startswith("warning:") else f"note: {note}", err=True)


@app.command()
@reports_errors
def verify(
    bundle: BundleArgument,
    output_format: Annotated[VerifyFormat, typer.Option("--format", help="text or json.")] = VerifyFormat.TEXT,
) -> None:
    """Re-hash a bundle and recompute its score. Exit 0 when all match, 1 naming each difference."""
    from irr_audit.bundle import verify_bundle
    from irr_audit.report import render_json

    result = verify_bundle(bundle)
    if output_format is VerifyFormat.JSON:
        typer.echo(render_json(result.to_dict()), nl=False)
    else:
        for problem in result.problems:
            typer.echo(problem.line())
        typer.echo(_verdict(result))
        for note in result.notes:
            typer.echo(f"note: {note}", err=True)
    if not result.ok:
        raise typer.Exit(1)


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
    quiet: Quiet = False,
) -> None:
    """List a bundle's disagreements to decide (a CSV to fill in), or record the decisions taken.

    The decisions go to a new file under BUNDLE/adjudication/; the frozen sheets and the first
    statistics are never changed.
    """
    from irr_audit import adjudication as adj
    from irr_audit.audit import build_report
    from irr_audit.bundle import MANIFEST, join_bundle, read_manifest, sha256_hex, shell_path
    from irr_audit.cli import check_outputs

    if output is not None:
        check_outputs([bundle, decisions], files=[output])
    manifest = read_manifest(bundle)
    join = join_bundle(bundle)
    disagreements = adj.disagreement_codes(build_report(join).disagreements)
    manifest_sha256 = sha256_hex((bundle / MANIFEST).read_bytes())
    records = adj.trusted_records(bundle, manifest_sha256, disagreements, join.rule.categories)
    current = adj.current_decisions(records)
    if decisions is None:
        _list_disagreements(bundle, adj.template_csv(disagreements, list(join.coders), current), output, by)
        if not quiet:
            decided = sum(unit in current for unit in disagreements)
            typer.echo(
                f"{len(disagreements)} disagreements, {decided} decided. Fill in code and note, then run: "
                f"irr-audit adjudicate {shell_path(bundle)} --decisions FILE.csv --by NAME",
                err=True,
            )
        return
    if output is not None:
        raise UsageError("--output is for the list of disagreements, not with --decisions.",
                         hint="leave out --output.", code="usage-adjudicate")
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
        typer.echo(f"nothing new to record: the {len(found)} decisions in {decisions} are already on record.", err=True)
        return
    now = datetime.now(timezone.utc)
    record = adj.build_record(
        bundle_name=manifest["name"], manifest_sha256=manifest_sha256, by=by.strip(), created=now,
        source_name=decisions.name, source_sha256=sha256_hex(data), decisions=new, disagreements=disagreements,
    )
    path = adj.write_record(bundle, record, now)
    typer.echo(str(path))
    if not quiet:
        decided = len(set(current) | {decision.comment_id for decision in new})
        typer.echo(f"recorded {len(new)} decisions by {by.strip()}; {decided} of {len(disagreements)} "
                   "disagreements decided. The independent statistics are unchanged.", err=True)


def _list_disagreements(bundle: Path, text: str, output: Path | None, by: str | None) -> None:
    from irr_audit.bundle import shell_path
    from irr_audit.outputs import write_text_atomic

    if by is not None:
        raise UsageError("--by names who decided; it goes with --decisions FILE.",
                         hint=f"irr-audit adjudicate {shell_path(bundle)} --decisions FILE.csv --by NAME",
                         code="usage-adjudicate")
    if output is None:
        typer.echo(text, nl=False)
        return
    if output.resolve().is_relative_to(bundle.resolve()):
        raise UsageError(f"--output {output} is inside the bundle {bundle}.",
                         hint="write the list elsewhere; a bundle only gains adjudication records.",
                         code="usage-adjudicate")
    write_text_atomic(output, text)


def _read_decisions_file(path: Path) -> tuple[str, bytes]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"decisions file {path} cannot be read ({exc.strerror}).",
                         hint="pass the CSV you filled in with --decisions FILE.csv.",
                         code="adjudication-decisions") from None
    try:
        return data.decode("utf-8-sig"), data
    except UnicodeDecodeError as exc:
        raise UsageError(f"decisions file {path} is not UTF-8 (byte {exc.start}).",
                         hint="save it as CSV UTF-8.", code="adjudication-decisions") from None
