"""Audit bundle commands: freeze, verify, adjudicate. They register on the main app
when irr_audit.cli imports this module; the library work is in irr_audit.bundle
(irr_audit.bundle.workflow: what each command does, as calls)."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from irr_audit.cli.codebook_options import CodebookOption, RulesFolderOption, one_of_rule_or_codebook
from irr_audit.cli.shared import (
    FOLDER,
    PATH,
    CodeColumn,
    FreezeRuleOption,
    IdColumn,
    LimitOption,
    Quiet,
    QuietWarnings,
    Worksheet,
    app,
    check_outputs,
    output_file,
    parse_limits,
    reports_errors,
    say,
    to_stdout,
)
from irr_audit.errors import UsageError

if TYPE_CHECKING:
    from irr_audit.bundle.verify import Verification

BundleArgument = Annotated[Path, typer.Argument(help="An audit bundle folder made by irr-audit freeze.")]
DigestsOption = Annotated[
    Path | None,
    typer.Option(
        "--digests",
        help="A digest list kept in the repository (e.g. audits/DIGESTS): append this "
        "bundle's digest to it (created if missing; earlier lines are never rewritten).",
    ),
]
RecordDigestsOption = Annotated[
    Path | None,
    typer.Option(
        "--digests",
        help="A digest list kept in the repository (e.g. audits/DIGESTS): append the new adjudication "
        "record's digest to it, as <bundle>/adjudication/<record> (created if missing; earlier lines are "
        "never rewritten).",
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
    into: Annotated[
        Path, typer.Option("--into", metavar=FOLDER, help="The audits folder; the new bundle is made inside it.")
    ],
    rule: FreezeRuleOption = None,
    codebook: CodebookOption = None,
    rules: RulesFolderOption = None,
    recodes: Annotated[
        Path | None,
        typer.Option(
            "--recodes", metavar=FOLDER, help="The bundle whose units this audit codes again under a revised rule."
        ),
    ] = None,
    sample: Annotated[
        Path | None,
        typer.Option(
            "--sample",
            metavar=FOLDER,
            help="The folder irr-audit sample wrote: its ledger and missingness log are kept.",
        ),
    ] = None,
    digests: DigestsOption = None,
    sign: SignOption = None,
    id_column: IdColumn = None,
    code_column: CodeColumn = None,
    worksheet: Worksheet = None,
    limit: LimitOption = None,
    quiet: QuietWarnings = False,
) -> None:
    """Freeze an audit: the original sheets, the rule file and the score, in a new read-only bundle.

    Prints the bundle's digest and path: sha256:<hex>  <bundle>. Keep the digest outside the
    bundle (--digests, a commit, a message): verify --expect checks a bundle against it.
    """
    from irr_audit.bundle.anchor import append_digest, digest_line
    from irr_audit.bundle.workflow import freeze_audit

    if codebook is not None or rules is not None or _is_codebook_join(inputs, rule):
        if codebook is not None or rules is not None:
            one_of_rule_or_codebook(rule, codebook, rules)
        _freeze_codebook(inputs, into, codebook, rules, recodes, sample, id_column, code_column, worksheet, digests,
                         sign, quiet, limit)  # fmt: skip
        return
    frozen = freeze_audit(
        inputs,
        into,
        rule=rule,
        recodes=recodes,
        sample=sample,
        id_column=id_column,
        code_column=code_column,
        worksheet=worksheet,
        digests=digests,
        sign_key=sign,
        limits=parse_limits(limit),
    )
    result = frozen.result
    say(digest_line(frozen.digest, str(result.path)), err=False)
    listed = append_digest(digests, frozen.digest, result.path.name) if digests is not None else None
    if not quiet:
        say(frozen.source.join.summary_line())
        for warning in frozen.source.join.warnings:
            say(f"warning: {warning}")
        say(f"froze {len(result.manifest['files'])} files and the score into {result.path}")
        for note in result.notes:
            say(note if note.startswith("warning:") else f"note: {note}")
        _say_where_the_digest_is(result.path, frozen.digest, sign, digests, listed)


def _is_codebook_join(inputs: list[Path], rule: Path | None) -> bool:
    """A folder join --codebook wrote, given alone: it keeps its codebook, as a rule's join folder its rule."""
    from irr_audit.join.codebook_folder import is_codebook_join_dir

    return rule is None and len(inputs) == 1 and is_codebook_join_dir(inputs[0])


def _say_where_the_digest_is(
    bundle: Path, digest: str, sign: Path | None, digests: Path | None, listed: int | None
) -> None:
    """What keeps a frozen bundle checkable: its signature, and the digest's line in the
    digests file or the verify command to keep beside it."""
    from irr_audit.bundle.manifest import MANIFEST, shell_path

    if sign is not None:
        say(f"signed the manifest with {sign}: {bundle / MANIFEST}.sig")
    if listed is not None:
        say(f"anchored: {digests} line {listed} lists {digest} for {bundle.name}; commit it")
    else:
        say(
            f"keep the digest outside the bundle: irr-audit verify {shell_path(bundle)} "
            f"--expect {digest} proves the bundle is this one"
        )


def _freeze_codebook(
    inputs: list[Path],
    into: Path,
    codebook: Path | None,
    rules: Path | None,
    recodes: Path | None,
    sample: Path | None,
    id_column: str | None,
    code_column: str | None,
    worksheet: str | None,
    digests: Path | None,
    sign: Path | None,
    quiet: bool,
    limit: list[str] | None,
) -> None:
    from irr_audit.bundle.anchor import append_digest, digest_line
    from irr_audit.bundle.workflow import freeze_codebook_audit

    if code_column is not None:  # as score, report and join --codebook refuse it
        raise UsageError(
            "--code-column is not taken with a codebook: its sheets have no one column of codes to name. A wide "
            "sheet has one column per variable, named after its rule id; a long sheet has `variable` and `code`.",
            hint="leave out --code-column; to freeze one variable read from a column of your own, freeze it as one "
            "rule's audit: --rule RULE --code-column COLUMN.",
            code="usage-codebook-option",
        )
    frozen = freeze_codebook_audit(
        inputs,
        into,
        codebook,
        rules_dir=rules,
        sample=sample,
        recodes=recodes,
        id_column=id_column,
        worksheet=worksheet,
        digests=digests,
        sign_key=sign,
        limits=parse_limits(limit),
    )
    result = frozen.result
    say(digest_line(frozen.digest, str(result.path)), err=False)
    listed = append_digest(digests, frozen.digest, result.path.name) if digests is not None else None
    if not quiet:
        say(frozen.source.summary_line())
        say(f"froze {len(result.manifest['files'])} files and every variable's score into {result.path}")
        for note in result.notes:
            say(f"note: {note}")
        _say_where_the_digest_is(result.path, frozen.digest, sign, digests, listed)


@app.command()
@reports_errors
def verify(
    bundle: BundleArgument,
    output_format: Annotated[
        VerifyFormat, typer.Option("--format", help="text or json.", case_sensitive=False)
    ] = VerifyFormat.TEXT,
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
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="List every problem (the JSON output always does).")
    ] = False,
) -> None:
    """Re-hash a bundle and recompute its score. Exit 0 when all match, 1 naming each difference.

    The short verdict comes first: the changed, missing and extra files, and the headline
    coefficient frozen -> now; --verbose lists every problem.

    Without --expect, --digests or --allowed-signers this checks internal consistency only:
    whoever can write the bundle could change a file and re-hash the manifest.
    """
    from irr_audit.bundle.verify import INTERNAL_ONLY, problems_shown, verdict_lines, verify_bundle
    from irr_audit.bundle.workflow import read_anchors
    from irr_audit.io.outputs import render_json

    anchors = read_anchors(expect, digests, allowed_signers, identity)
    result = verify_bundle(bundle, anchors, parse_limits(limit))
    if output_format is VerifyFormat.JSON:
        to_stdout(render_json(result.to_dict()))
    else:
        for line in verdict_lines(result):
            say(line, err=False)
        shown, hidden = problems_shown(result, verbose)
        for problem in shown:
            say(problem.line(), err=False)
        if hidden:
            say(f"... {hidden} more problem{'s' if hidden != 1 else ''}: --verbose lists every one.", err=False)
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


def _verdict(result: Verification) -> str:
    from irr_audit.bundle.manifest import folder_name

    name = result.name or folder_name(result.bundle)
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
def labels(
    bundle: BundleArgument,
    output_text: Annotated[
        str | None,
        typer.Option("--output", "-o", metavar=PATH, help="Write the CSV to this file, not to standard output."),
    ] = None,
    limit: LimitOption = None,
    quiet: Quiet = False,
) -> None:
    """The final labels as CSV: per unit, each coder's code, the agreed and adjudicated code, which is final and why.

    Why: agreed, adjudicated, or undecided with its reason."""
    from irr_audit.api import labels as bundle_labels
    from irr_audit.bundle.labels import labels_csv_chunks, labels_summary
    from irr_audit.io.outputs import write_bytes_atomic

    output = output_file(output_text, "--output", "labels.csv")
    if output is not None:
        check_outputs([bundle], "--output", files=[output])
    frame = bundle_labels(bundle, limits=parse_limits(limit))
    if output is None:
        for chunk in labels_csv_chunks(frame):
            to_stdout(chunk)
    else:
        write_bytes_atomic(output, labels_csv_chunks(frame))
    if not quiet:
        say(labels_summary(frame))


@app.command()
@reports_errors
def adjudicate(
    bundle: BundleArgument,
    decisions: Annotated[
        Path | None,
        typer.Option(
            "--decisions",
            help="A CSV of comment_id, code (the final code), note (and variable, for a codebook's bundle); "
            "rows without a code are skipped.",
        ),
    ] = None,
    by: Annotated[str | None, typer.Option("--by", help="Who decided, e.g. 'alice and bob'.")] = None,
    output_text: Annotated[
        str | None,
        typer.Option(
            "--output",
            "-o",
            metavar=PATH,
            help="Without --decisions: write the list of disagreements (CSV) to this file, not to standard output.",
        ),
    ] = None,
    digests: RecordDigestsOption = None,
    sign: SignOption = None,
    limit: LimitOption = None,
    quiet: Quiet = False,
) -> None:
    """List a bundle's disagreements to decide (a CSV to fill in), or record the decisions taken.

    The decisions go to a new file under BUNDLE/adjudication/; the frozen sheets and the first
    statistics are never changed. Prints the record's digest and path: sha256:<hex>  <record>.
    """
    from irr_audit.bundle.anchor import append_digest, check_list_target, digest_line
    from irr_audit.bundle.manifest import shell_path
    from irr_audit.bundle.signing import check_sign_key
    from irr_audit.bundle.workflow import bundle_adjudication, decide_hint, record_decisions
    from irr_audit.io.outputs import write_text_atomic

    if decisions is None and (digests is not None or sign is not None):
        raise UsageError(
            "--digests and --sign anchor a new adjudication record; they go with --decisions.",
            hint="add --decisions FILE.csv --by NAME, or leave them out.",
            code="usage-adjudicate",
        )
    if digests is not None:
        check_list_target(digests, [bundle, decisions])
    check_sign_key(sign)
    output = output_file(output_text, "--output", "decisions.csv")
    if output is not None:
        check_outputs([bundle, decisions], "--output", files=[output])
    state = bundle_adjudication(bundle, parse_limits(limit))
    if decisions is None:
        if by is not None:
            raise UsageError(
                "--by names who decided; it goes with --decisions FILE.",
                hint=decide_hint(bundle),
                code="usage-adjudicate",
            )
        if output is None:
            to_stdout(state.template())
        else:
            write_text_atomic(output, state.template())
        if not quiet:
            say(
                f"{len(state.disagreements)} disagreements, {state.decided} decided. Fill in code and note, then "
                f"run: {decide_hint(bundle)}"
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
    recorded = record_decisions(state, decisions, by, sign_key=sign)
    if recorded.path is None:
        say(f"nothing new to record: the {recorded.found} decisions in {decisions} are already on record.")
        return
    say(digest_line(recorded.digest, str(recorded.path)), err=False)
    listed = append_digest(digests, recorded.digest, recorded.listed_as) if digests is not None else None
    if not quiet:
        if listed is not None:
            say(f"anchored: {digests} line {listed} lists {recorded.digest} for {recorded.listed_as}; commit it")
        say(
            f"recorded {recorded.new} decisions by {by.strip()}; {recorded.decided} of {len(state.disagreements)} "
            "disagreements decided. The independent statistics are unchanged."
        )
