"""The audit commands: `join` (sheets -> a join folder), `score` and `report` (sheets,
a join folder, a bundle or unit-pattern counts -> the audit report, rendered)."""

from __future__ import annotations

import dataclasses
import io
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from irr_audit.bundle.adjudication import bundle_report_sections
from irr_audit.bundle.read import join_bundle
from irr_audit.cli.progress import steps, wanted
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
from irr_audit.errors import UsageError
from irr_audit.io.limits import parse_limit_options
from irr_audit.io.outputs import render_json, write_text_atomic
from irr_audit.io.sheets import SheetOptions, limits_of, read_sheets
from irr_audit.join.counts import read_counts
from irr_audit.join.folder import (
    check_join_out,
    is_join_dir,
    read_join_dir,
    read_join_sample_ids,
    read_join_sample_report,
    write_join_dir,
)
from irr_audit.join.join import join_sheets
from irr_audit.report.console import print_report, render_console
from irr_audit.report.html import render_html
from irr_audit.report.markdown import render_markdown
from irr_audit.report.model import AuditOptions, GroupSpec, build_counts_report, build_report, check_audit_size
from irr_audit.rules.load import load_rule
from irr_audit.sample.folder import read_sample, sample_ids_for_join


class ScoreFormat(str, Enum):
    TEXT = "text"
    JSON = "json"


class ReportFormat(str, Enum):
    MD = "md"
    JSON = "json"
    HTML = "html"
    TEXT = "text"


Bootstrap = Annotated[
    int, typer.Option("--bootstrap", min=0, help="Bootstrap replicates over units for every coefficient (0: none).")
]
Seed = Annotated[int | None, typer.Option("--seed", help="Seed of the bootstrap, for reproducible intervals.")]
GroupOption = Annotated[
    str | None,
    typer.Option("--group", help="NAME=CODER,CODER,...: score this group's consensus against --against."),
]
Against = Annotated[str | None, typer.Option("--against", help="The coder the --group consensus is scored against.")]
CountsOption = Annotated[
    list[Path] | None,
    typer.Option("--counts", help="Score unit-pattern counts (join's counts.csv, or made in SQL); repeat to merge."),
]


def _join_inputs(
    inputs: list[Path],
    rule_path: Path | None,
    options: SheetOptions,
    sample_ids: list[str] | None = None,
    progress: Any = None,
):
    """Sheets + rule (restricted to a sample's ids when given), a folder written by
    `join`, or an audit bundle, joined in memory."""
    if len(inputs) == 1 and inputs[0].is_dir():
        folder = inputs[0]
        if (folder / "manifest.json").is_file():  # an audit bundle (irr-audit freeze)
            result = join_bundle(folder, limits_of(options))
        elif is_join_dir(folder):
            rule, sheets = read_join_dir(folder, limits_of(options))
            result = join_sheets(sheets, rule, sample_ids=read_join_sample_ids(folder))
        else:
            raise UsageError(
                f"{folder} is a folder but not one written by irr-audit join (it has no summary.json).",
                hint="pass the folder given to join --out, or the sheets themselves with --rule.",
                code="usage-not-a-join-dir",
            )
        _check_same_rule(rule_path, result.rule, folder, limits_of(options))
        return result
    if rule_path is None:
        raise UsageError(
            "sheets need the rule they were coded under.",
            hint="add --rule rules/<rule>/v<version>.yaml.",
            code="usage-missing-rule",
        )
    rule = load_rule(rule_path, options.limits)
    if progress is not None:
        progress.step(f"reading {len(inputs)} sheets")
    sheets = read_sheets(inputs, options)
    if progress is not None:
        progress.step(f"joining {len(sheets)} sheets")
    return join_sheets(sheets, rule, sample_ids=sample_ids)


def _sheet_options(
    id_column: str | None, code_column: str | None, worksheet: str | None, limit: list[str] | None = None
) -> SheetOptions:
    return SheetOptions(id_column, code_column, worksheet, parse_limit_options(limit))


def _check_same_rule(rule_path: Path | None, used: Any, folder: Path, limits: Any) -> None:
    """A --rule given with a folder must be the rule the folder was made with."""
    if rule_path is None:
        return

    given = load_rule(rule_path, limits)
    if given.digest != used.digest:
        raise UsageError(
            f"--rule {rule_path} ({given.label}, {given.digest[:19]}...) is not the rule {folder} was made with "
            f"({used.label}, {used.digest[:19]}...).",
            hint="leave --rule out: the folder keeps its own copy of the rule.",
            code="usage-rule-mismatch",
        )


@app.command()
@reports_errors
def join(
    sheets: Annotated[list[Path], typer.Argument(help="Two or more coding sheets (CSV, TSV, XLSX, JSONL).")],
    out: Annotated[Path, typer.Option("--out", help="Folder for the joined table, the log and the summary.")],
    rule: RuleOption = None,
    id_column: IdColumn = None,
    code_column: CodeColumn = None,
    worksheet: Worksheet = None,
    quiet: Quiet = False,
    sample: Annotated[
        Path | None, typer.Option("--sample", help="The folder irr-audit sample wrote: join exactly its units.")
    ] = None,
    force: Annotated[
        bool,
        typer.Option("--force", help="Replace an --out folder that holds files join did not write (they are deleted)."),
    ] = False,
    limit: LimitOption = None,
) -> None:
    """Join coding sheets on comment id; route every missing code into the missingness log."""
    if rule is None:
        raise UsageError(
            "join needs the rule the sheets were coded under.", hint="add --rule RULE.", code="usage-missing-rule"
        )
    check_outputs([*sheets, rule, sample], "--out", folders=[out])
    strays = check_join_out(out, force)
    reference, notes = sample_ids_for_join(sample, rule) if sample else (None, [])
    sample_ids = list(reference.ids) if reference else None
    options = _sheet_options(id_column, code_column, worksheet, limit)
    with steps(wanted(quiet)) as progress:
        result = _join_inputs(sheets, rule, options, sample_ids, progress=progress)
    written = write_join_dir(
        result,
        rule.read_bytes(),
        out,
        options,
        sample=sample,
        sample_ids=sample_ids,
        sample_report=reference.report if reference else None,
        force=force,
        inputs=[rule],
    )
    for note in notes:
        say(note)
    if not quiet:
        _tell(result)
        say(f"wrote {', '.join(str(path) for path in written)}")
        if strays:
            say(f"replaced {out} (--force): deleted {', '.join(strays)}")


@app.command()
@reports_errors
def score(
    inputs: Annotated[
        list[Path] | None, typer.Argument(help="A folder written by join (or an audit bundle), or two or more sheets.")
    ] = None,
    rule: RuleOption = None,
    output_format: Annotated[ScoreFormat, typer.Option("--format", help="text or json.")] = ScoreFormat.TEXT,
    bootstrap: Bootstrap = 0,
    seed: Seed = None,
    group: GroupOption = None,
    against: Against = None,
    counts: CountsOption = None,
    id_column: IdColumn = None,
    code_column: CodeColumn = None,
    worksheet: Worksheet = None,
    quiet: Quiet = False,
    limit: LimitOption = None,
) -> None:
    """Score agreement on the fully coded units: the table, po, pe, kappa and every standard coefficient."""
    options = dataclasses.replace(_audit_options(bootstrap, seed, group, against), list_disagreements=False)
    audit = _audit(inputs or [], rule, counts, options, _sheet_options(id_column, code_column, worksheet, limit), quiet)
    _emit(audit.to_dict(include_disagreements=False), output_format.value, None)


@app.command()
@reports_errors
def report(
    inputs: Annotated[
        list[Path] | None, typer.Argument(help="A folder written by join (or an audit bundle), or two or more sheets.")
    ] = None,
    output_format: Annotated[ReportFormat, typer.Option("--format", help="md, json, html or text.")] = ReportFormat.MD,
    rule: RuleOption = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to this file.")] = None,
    bootstrap: Bootstrap = 0,
    seed: Seed = None,
    group: GroupOption = None,
    against: Against = None,
    counts: CountsOption = None,
    id_column: IdColumn = None,
    code_column: CodeColumn = None,
    worksheet: Worksheet = None,
    quiet: Quiet = False,
    limit: LimitOption = None,
) -> None:
    """The whole audit in one document: provenance, units, table, coefficients, disagreements."""
    if output is not None:
        check_outputs([*(inputs or []), rule, *(counts or [])], "--output", files=[output])
    options = _audit_options(bootstrap, seed, group, against)
    document = _audit(
        inputs or [], rule, counts, options, _sheet_options(id_column, code_column, worksheet, limit), quiet
    ).to_dict()
    document.update(bundle_report_sections(inputs or [], document))  # a bundle's adjudication, kept apart
    _emit(document, output_format.value, output)


def _audit(
    inputs: list[Path], rule: Path | None, counts: list[Path] | None, options: Any, choice: SheetOptions, quiet: bool
):
    """The audit report from sheets, a join folder, a bundle, or unit-pattern counts."""
    if counts:
        if inputs:
            raise UsageError(
                "give sheets (or a folder) or --counts, not both.",
                code="usage-counts",
                hint="--counts scores unit-pattern counts on their own.",
            )
        if rule is None:
            raise UsageError(
                "--counts needs the rule the codes belong to.", hint="add --rule RULE.", code="usage-missing-rule"
            )

        loaded = load_rule(rule, choice.limits)
        merged = read_counts(counts, loaded)
        audit = build_counts_report(loaded, merged.coders, merged.patterns, merged.units, merged.sources, options)
        if not quiet:
            units = audit.units
            say(
                f"{units['total']} units from {len(merged.coders)} coders in {len(counts)} counts file(s): "
                f"{units['fully_coded']} fully coded.",
                err=True,
            )
        return audit
    if not inputs:
        raise UsageError(
            "nothing to score.",
            hint="pass a join folder, two or more sheets with --rule, or --counts.",
            code="usage-no-input",
        )

    with steps(wanted(quiet)) as progress:
        result = _join_inputs(inputs, rule, choice, progress=progress)
        bootstrap = f", bootstrap of {options.n_boot} replicates" if options.n_boot else ""
        progress.step(f"scoring {len(result.units):,} units{bootstrap}")
        audit = build_report(result, options)
    if not quiet:
        _tell(result)
    return dataclasses.replace(audit, sample=_sample_section(inputs))


def _sample_section(inputs: list[Path]) -> dict[str, Any] | None:
    """What the report shows of the sample behind a join folder or a bundle, if any."""
    if len(inputs) != 1:
        return None
    if is_join_dir(inputs[0]):
        return read_join_sample_report(inputs[0])
    frozen_sample = inputs[0] / "sample"
    if (inputs[0] / "manifest.json").is_file() and (frozen_sample / "sample.json").is_file():
        return read_sample(frozen_sample).report
    return None


def _audit_options(bootstrap: int, seed: int | None, group: str | None, against: str | None):
    if against is not None and group is None:
        raise UsageError(
            "--against needs --group.", hint="for example --group humans=ann,ben --against model.", code="usage-group"
        )
    if seed is not None and seed < 0:
        raise UsageError(
            f"--seed {seed} is negative.", hint="the bootstrap's seed is a whole number from 0 up.", code="usage-seed"
        )
    check_audit_size(0, 0, bootstrap)  # too many replicates: refused before any sheet is read
    return AuditOptions(n_boot=bootstrap, seed=seed, group=GroupSpec.parse(group, against) if group else None)


def _tell(result: Any) -> None:
    """The one-line summary and any warnings, on stderr (control characters from the sheets shown as escapes)."""
    say(result.summary_line())
    for warning in result.warnings:
        say(f"warning: {warning}")


def _emit(document: dict[str, Any], output_format: str, output: Path | None) -> None:
    if output_format == "text" and output is None:
        print_report(document, Console(width=None if sys.stdout.isatty() else 80))
        return
    if output_format == "json":
        text = render_json(document)
    elif output_format == "md":
        text = render_markdown(document)
    elif output_format == "text":
        console = Console(width=80, record=True, file=io.StringIO())
        console.print(render_console(document))
        text = console.export_text()
    else:  # html
        text = render_html(document)
    if output is None:
        sys.stdout.write(text)
        return

    write_text_atomic(output, text)
