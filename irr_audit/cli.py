"""The command line: parse -> call the library -> render -> exit code.

Exit codes: 0 success; 1 a check failed; 2 bad input or usage (one clean message
on stderr, never a traceback).
"""

from __future__ import annotations

import dataclasses
import functools
import io
import os
import sys
from collections.abc import Callable, Sequence
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from irr_audit import __version__
from irr_audit.display import visible
from irr_audit.errors import IrrAuditError, UsageError

if TYPE_CHECKING:  # the sheet reader pulls in numpy and pyarrow: only when a command runs
    from irr_audit.sheets import SheetOptions

app = typer.Typer(
    name="irr-audit",
    help="Audit inter-coder reliability of hand-coded comment samples, honestly.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    add_completion=False,
)

F = TypeVar("F", bound=Callable[..., Any])


def reports_errors(command: F) -> F:
    """Turn IrrAuditError into its message on stderr and exit code 2."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except IrrAuditError as error:
            typer.echo(error.render(), err=True)
            raise typer.Exit(2) from None
        except OSError as error:
            if error.filename is None:
                raise
            typer.echo(unusable_path(error).render(), err=True)
            raise typer.Exit(2) from None

    return wrapper  # type: ignore[return-value]


def unusable_path(error: OSError) -> IrrAuditError:
    """A path the system refused to look at (a name too long, a link that loops, a folder that
    cannot be entered): bad input, named, rather than a crash."""
    return IrrAuditError(
        f"{error.filename} cannot be used: {error.strerror}.",
        hint="check the path, its length and the permissions of the folders on it.",
        code="path-unusable",
    )


class ScoreFormat(str, Enum):
    TEXT = "text"
    JSON = "json"


class ReportFormat(str, Enum):
    MD = "md"
    JSON = "json"
    HTML = "html"
    TEXT = "text"


RuleOption = Annotated[Path | None, typer.Option("--rule", help="The rule file the sheets were coded under.")]
IdColumn = Annotated[
    str | None, typer.Option("--id-column", help="Column holding the comment id (default comment_id).")
]
CodeColumn = Annotated[str | None, typer.Option("--code-column", help="Column holding the code (default code).")]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No summary line on stderr.")]
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
Worksheet = Annotated[
    str | None, typer.Option("--worksheet", help="XLSX sheets: the worksheet to read (default: the first).")
]
LimitOption = Annotated[
    list[str] | None,
    typer.Option(
        "--limit",
        metavar="NAME=VALUE",
        help="Change a limit on what is read, e.g. xlsx_cells=50M or file_bytes=8GiB (repeatable; the "
        "limits and their defaults are in the README).",
    ),
]


def say(text: str, *, err: bool = True) -> None:
    """A line for people, on stderr unless asked: text from files and paths shown with its
    control characters as escapes (irr_audit.display), so that no file can drive the terminal."""
    typer.echo(visible(text), err=err)


def _version_callback(show: bool) -> None:
    if show:
        typer.echo(f"irr-audit {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    version: Annotated[
        bool, typer.Option("--version", callback=_version_callback, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    """Audit inter-coder reliability of hand-coded comment samples, honestly."""


def _join_inputs(
    inputs: list[Path],
    rule_path: Path | None,
    options: SheetOptions,
    sample_ids: list[str] | None = None,
    progress: Any = None,
):
    """Sheets + rule (restricted to a sample's ids when given), a folder written by
    `join`, or an audit bundle, joined in memory."""
    from irr_audit.join import join_sheets
    from irr_audit.joindir import is_join_dir, read_join_dir, read_join_sample_ids
    from irr_audit.rules import load_rule
    from irr_audit.sheets import limits_of, read_sheets

    if len(inputs) == 1 and inputs[0].is_dir():
        folder = inputs[0]
        if (folder / "manifest.json").is_file():  # an audit bundle (irr-audit freeze)
            from irr_audit.bundle import join_bundle

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
    from irr_audit.limits import parse_limit_options
    from irr_audit.sheets import SheetOptions

    return SheetOptions(id_column, code_column, worksheet, parse_limit_options(limit))


def _check_same_rule(rule_path: Path | None, used: Any, folder: Path, limits: Any) -> None:
    """A --rule given with a folder must be the rule the folder was made with."""
    if rule_path is None:
        return
    from irr_audit.rules import load_rule

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
    from irr_audit.joindir import check_join_out, write_join_dir
    from irr_audit.progress import steps, wanted
    from irr_audit.sampling import sample_ids_for_join

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
    from irr_audit.adjudication import bundle_report_sections

    if output is not None:
        check_outputs([*(inputs or []), rule, *(counts or [])], "--output", files=[output])
    options = _audit_options(bootstrap, seed, group, against)
    document = _audit(
        inputs or [], rule, counts, options, _sheet_options(id_column, code_column, worksheet, limit), quiet
    ).to_dict()
    document.update(bundle_report_sections(inputs or [], document))  # a bundle's adjudication, kept apart
    _emit(document, output_format.value, output)


def check_outputs(
    inputs: Sequence[Path | None], option: str, files: Sequence[Path] = (), folders: Sequence[Path] = ()
) -> None:
    """Refuse, before the command reads anything, an output that would write an input or a
    bundle; the message starts with the option that named the output."""
    from irr_audit.errors import OutputError
    from irr_audit.outputs import refuse_unsafe_outputs
    from irr_audit.runfolder import files_read

    try:
        refuse_unsafe_outputs(files_read(inputs), files=files, folders=folders)
    except OutputError as error:
        if error.message.startswith(option):
            raise
        raise OutputError(f"{option}: {error.message}", hint=error.hint, code=error.code) from None


def _audit(
    inputs: list[Path], rule: Path | None, counts: list[Path] | None, options: Any, choice: SheetOptions, quiet: bool
):
    """The audit report from sheets, a join folder, a bundle, or unit-pattern counts."""
    from irr_audit.audit import build_counts_report, build_report

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
        from irr_audit.counts import read_counts
        from irr_audit.rules import load_rule

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
    from irr_audit.progress import steps, wanted

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
    from irr_audit.joindir import is_join_dir, read_join_sample_report

    if len(inputs) != 1:
        return None
    if is_join_dir(inputs[0]):
        return read_join_sample_report(inputs[0])
    frozen_sample = inputs[0] / "sample"
    if (inputs[0] / "manifest.json").is_file() and (frozen_sample / "sample.json").is_file():
        from irr_audit.sampling import read_sample

        return read_sample(frozen_sample).report
    return None


def _audit_options(bootstrap: int, seed: int | None, group: str | None, against: str | None):
    from irr_audit.audit import AuditOptions, GroupSpec, check_audit_size

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
    from irr_audit.report import render_json

    if output_format == "text" and output is None:
        from rich.console import Console

        from irr_audit.report.console import print_report

        print_report(document, Console(width=None if sys.stdout.isatty() else 80))
        return
    if output_format == "json":
        text = render_json(document)
    elif output_format == "md":
        from irr_audit.report.markdown import render_markdown

        text = render_markdown(document)
    elif output_format == "text":
        from rich.console import Console

        from irr_audit.report.console import render_console

        console = Console(width=80, record=True, file=io.StringIO())
        console.print(render_console(document))
        text = console.export_text()
    else:  # html
        from irr_audit.report.html import render_html

        text = render_html(document)
    if output is None:
        sys.stdout.write(text)
        return
    from irr_audit.outputs import write_text_atomic

    write_text_atomic(output, text)


# Commands that live in modules of their own register themselves on `app` when
# imported here; their heavy imports stay inside the command functions.
# (one line per module, below)
from irr_audit import cli_bundle, cli_rules, cli_sample  # noqa: E402,F401

INTERNAL_ERROR = 70  # EX_SOFTWARE: not 1 (a check failed) and not 2 (bad input)


def main() -> None:
    try:
        app()
        sys.stdout.flush()
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        # The reader went away (`| head`): the output could not all be written. As Python's
        # documentation advises, stdout is pointed at devnull so the final flush stays quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    except Exception:  # a bug: say so, show the details, exit with a code of its own
        import traceback

        traceback.print_exc()
        typer.echo(
            f"\nirr-audit {__version__} hit an internal error: this is a bug in irr-audit, not a problem with "
            "your input.\nPlease report it with the command you ran and the details above.",
            err=True,
        )
        sys.exit(INTERNAL_ERROR)


if __name__ == "__main__":
    main()
