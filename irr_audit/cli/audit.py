"""The audit commands: `join` (sheets -> a join folder), `score` and `report` (sheets,
a join folder, a bundle or unit-pattern counts -> the audit report, rendered). Each
parses its options, calls the library (irr_audit.api), renders and exits."""

from __future__ import annotations

import shutil
import sys
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from irr_audit.cli.codebook_options import CodebookOption, RulesFolderOption, one_of_rule_or_codebook
from irr_audit.cli.shared import (
    FOLDER,
    PATH,
    AliasOption,
    AuditRuleOption,
    CodeColumn,
    DelimiterOption,
    IdColumn,
    LimitOption,
    QuietWarnings,
    RuleOption,
    Worksheet,
    app,
    check_outputs,
    output_file,
    parse_aliases,
    parse_limits,
    reports_errors,
    say,
    tell_problems,
    to_stdout,
)
from irr_audit.errors import UsageError
from irr_audit.io.display import shown_against

if TYPE_CHECKING:
    from collections.abc import Iterator

    from irr_audit.api import Audit, CodebookAudit


class ScoreFormat(str, Enum):
    TEXT = "text"
    JSON = "json"


class ReportFormat(str, Enum):
    MD = "md"
    JSON = "json"
    HTML = "html"
    TEXT = "text"
    METHODS = "methods"


Bootstrap = Annotated[
    int, typer.Option("--bootstrap", min=0, help="Bootstrap replicates over units for every coefficient (0: none).")
]
Seed = Annotated[
    int | None,
    typer.Option("--seed", help="Seed of the bootstrap, for reproducible intervals (drawn and shown when absent)."),
]
GroupOption = Annotated[
    str | None,
    typer.Option("--group", help="NAME=CODER,CODER,...: score this group's consensus against --against."),
]
Against = Annotated[str | None, typer.Option("--against", help="The coder the --group consensus is scored against.")]
Windows = Annotated[
    int | None,
    typer.Option(
        "--windows",
        help="Drift: agreement in N consecutive windows of the coding order (N >= 2; its intervals: --bootstrap "
        "replicates, 1000 when 0).",
    ),
]
WindowSize = Annotated[
    int | None, typer.Option("--window-size", help="Drift: windows of U units each (instead of --windows).")
]
OrderColumn = Annotated[
    str | None,
    typer.Option(
        "--order-column",
        help="Drift: the sheets' column giving when a row was coded (default: each sheet's row order).",
    ),
]
CompareWith = Annotated[
    Path | None,
    typer.Option(
        "--compare",
        metavar=FOLDER,
        help="A join folder or bundle of an earlier audit: add each coefficient's difference (its interval: "
        "--bootstrap replicates, 2000 when 0).",
    ),
]
CiLevel = Annotated[float, typer.Option("--ci-level", help="Confidence level of every interval.")]
IntervalOption = Annotated[str, typer.Option("--interval", help="normal (large-sample) or t (n - 1 df, as irrCAC).")]
TestAgainst = Annotated[
    float | None,
    typer.Option("--test-against", help="C: also test H0: coefficient <= C (one-sided p-value, e.g. 0.6)."),
]
WeightsOption = Annotated[
    str | None,
    typer.Option("--weights", help="identity, linear, quadratic, ordinal, radical, ratio, circular or bipolar."),
]
AlphaMin = Annotated[
    list[float] | None,
    typer.Option(
        "--alpha-min",
        help="With --bootstrap: the probability that alpha is below this minimum (Krippendorff's bootstrap); "
        "repeat for several (default: 0.667 and 0.8).",
    ),
]
TableOption = Annotated[
    Path | None,
    typer.Option(
        "--table", help="Score a K x K agreement table (rows the first coder; the rule's categories as labels)."
    ),
]
CategoryCountsOption = Annotated[
    Path | None,
    typer.Option(
        "--category-counts",
        help="Score a subjects x categories count matrix (Fleiss 1971's layout; a first column `unit` optional).",
    ),
]
GateOption = Annotated[
    list[str] | None,
    typer.Option(
        "--gate",
        metavar="[VARIABLE=]VALUE",
        help="With --codebook: the least each variable's recommended coefficient must reach (exit 1 naming "
        "those below); a VALUE alone for every variable, VARIABLE=VALUE for one (repeatable).",
    ),
]
CountsOption = Annotated[
    list[Path] | None,
    typer.Option("--counts", help="Score unit-pattern counts (join's counts.csv, or made in SQL); repeat to merge."),
]


@app.command()
@reports_errors
def join(
    sheets: Annotated[list[Path], typer.Argument(help="Two or more coding sheets (CSV, TSV, XLSX, JSONL).")],
    out: Annotated[
        Path, typer.Option("--out", metavar=FOLDER, help="Folder for the joined table, the log and the summary.")
    ],
    rule: RuleOption = None,
    codebook: CodebookOption = None,
    rules_dir: RulesFolderOption = None,
    sample: Annotated[
        Path | None,
        typer.Option("--sample", metavar=FOLDER, help="The folder irr-audit sample wrote: join exactly its units."),
    ] = None,
    force: Annotated[
        bool,
        typer.Option("--force", help="Replace an --out folder that holds files join did not write (they are deleted)."),
    ] = False,
    id_column: IdColumn = None,
    code_column: CodeColumn = None,
    worksheet: Worksheet = None,
    delimiter: DelimiterOption = None,
    alias: AliasOption = None,
    limit: LimitOption = None,
    quiet: QuietWarnings = False,
) -> None:
    """Join coding sheets on comment id; route every missing code into the missingness log.

    When no unit is fully coded the folder is written and the problem named (score and report exit 1)."""
    from irr_audit.api import join_folder
    from irr_audit.cli.progress import steps, wanted

    check_outputs([*sheets, rule, sample, codebook], "--out", folders=[out])
    _one_of_rule_and_codebook(rule, codebook, rules_dir)  # neither: join_folder names a missing input first
    if codebook is not None:
        _refuse_with_codebook({"--code-column": code_column, "--alias": alias})
        _join_codebook(sheets, codebook, out, rules_dir, sample, force, id_column, worksheet, limit, delimiter, quiet)
        return
    with steps(wanted(quiet)) as progress:
        joined = join_folder(
            sheets,
            rule,
            out,
            sample=sample,
            force=force,
            id_column=id_column,
            code_column=code_column,
            worksheet=worksheet,
            limits=parse_limits(limit),
            progress=progress.step,
            aliases=parse_aliases(alias),
            delimiter=delimiter,
        )
    for note in joined.notes:
        say(note)
    if not quiet:
        _tell(joined.summary_line, joined.warnings)
        say(f"wrote {', '.join(str(path) for path in joined.written)}")
        if joined.replaced:
            say(f"replaced {out} (--force): deleted {', '.join(joined.replaced)}")
    tell_problems(joined.problems)  # the folder is written to be read; score and report are the check


@app.command()
@reports_errors
def score(
    inputs: Annotated[
        list[Path] | None, typer.Argument(help="A folder written by join (or an audit bundle), or two or more sheets.")
    ] = None,
    rule: AuditRuleOption = None,
    codebook: CodebookOption = None,
    rules_dir: RulesFolderOption = None,
    counts: CountsOption = None,
    table: TableOption = None,
    category_counts: CategoryCountsOption = None,
    output_format: Annotated[
        ScoreFormat, typer.Option("--format", help="text or json.", case_sensitive=False)
    ] = ScoreFormat.TEXT,
    bootstrap: Bootstrap = 0,
    seed: Seed = None,
    ci_level: CiLevel = 0.95,
    interval: IntervalOption = "normal",
    test_against: TestAgainst = None,
    weights: WeightsOption = None,
    alpha_min: AlphaMin = None,
    group: GroupOption = None,
    against: Against = None,
    gate: GateOption = None,
    id_column: IdColumn = None,
    code_column: CodeColumn = None,
    worksheet: Worksheet = None,
    delimiter: DelimiterOption = None,
    alias: AliasOption = None,
    limit: LimitOption = None,
    quiet: QuietWarnings = False,
) -> None:
    """Score agreement on the fully coded units: the table, po, pe, kappa and every standard coefficient.

    Exit 1 when no unit is fully coded: there is nothing to score (with --codebook: in some variable,
    or some variable fails its --gate)."""
    statistics = {"ci_level": ci_level, "interval": interval, "test_against": test_against}
    if _is_codebook_audit(inputs, rule, codebook, rules_dir, gate):
        _refuse_with_codebook(
            {
                "--group": group,
                "--against": against,
                "--code-column": code_column,
                "--weights": weights,
                "--table": table,
                "--category-counts": category_counts,
                "--alias": alias,
            }
        )
        scored = _audit_codebook(
            inputs or [],
            codebook,
            rules_dir,
            gate,
            counts,
            quiet,
            False,
            bootstrap,
            seed,
            id_column,
            worksheet,
            limit,
            statistics,
            alpha_min,
            delimiter,
        )
        _emit(scored, output_format.value, None, include_disagreements=False)
        _exit_codebook(scored)
        return
    result = _audit(
        inputs or [],
        rule,
        counts,
        quiet,
        list_disagreements=False,
        bootstrap=bootstrap,
        seed=seed,
        group=group,
        against=against,
        id_column=id_column,
        code_column=code_column,
        worksheet=worksheet,
        limit=limit,
        statistics={"ci_level": ci_level, "interval": interval, "test_against": test_against, "weights": weights},
        alpha_min=alpha_min,
        table=table,
        category_counts=category_counts,
        alias=alias,
        delimiter=delimiter,
    )
    _emit(result, output_format.value, None, include_disagreements=False)
    if result.failed:
        raise typer.Exit(1)


@app.command()
@reports_errors
def report(
    inputs: Annotated[
        list[Path] | None, typer.Argument(help="A folder written by join (or an audit bundle), or two or more sheets.")
    ] = None,
    rule: AuditRuleOption = None,
    codebook: CodebookOption = None,
    rules_dir: RulesFolderOption = None,
    counts: CountsOption = None,
    table: TableOption = None,
    category_counts: CategoryCountsOption = None,
    output_format: Annotated[
        ReportFormat,
        typer.Option(
            "--format", help="md, json, html, text or methods (the methods paragraph to paste).", case_sensitive=False
        ),
    ] = ReportFormat.MD,
    output_text: Annotated[
        str | None,
        typer.Option("--output", "-o", metavar=PATH, help="Write the report to this file, not to standard output."),
    ] = None,
    bootstrap: Bootstrap = 0,
    seed: Seed = None,
    ci_level: CiLevel = 0.95,
    interval: IntervalOption = "normal",
    test_against: TestAgainst = None,
    weights: WeightsOption = None,
    alpha_min: AlphaMin = None,
    group: GroupOption = None,
    against: Against = None,
    gate: GateOption = None,
    compare_with: CompareWith = None,
    windows: Windows = None,
    window_size: WindowSize = None,
    order_column: OrderColumn = None,
    id_column: IdColumn = None,
    code_column: CodeColumn = None,
    worksheet: Worksheet = None,
    delimiter: DelimiterOption = None,
    alias: AliasOption = None,
    limit: LimitOption = None,
    quiet: QuietWarnings = False,
) -> None:
    """The whole audit in one document: provenance, units, table, coefficients, disagreements.

    Exit 1 (the report written) when no unit is fully coded: there is nothing to score (with --codebook:
    in some variable, or some variable fails its --gate)."""
    output = output_file(output_text, "--output", {"text": "audit.txt"}.get(output_format.value, "audit.md"))
    if output is not None:
        check_outputs(
            [*(inputs or []), rule, *(counts or []), compare_with, table, category_counts, codebook],
            "--output",
            files=[output],
        )
    if _is_codebook_audit(inputs, rule, codebook, rules_dir, gate):
        _refuse_with_codebook(
            {
                "--group": group,
                "--against": against,
                "--code-column": code_column,
                "--weights": weights,
                "--table": table,
                "--category-counts": category_counts,
                "--alias": alias,
                "--compare": compare_with,
                "--windows": windows,
                "--window-size": window_size,
                "--order-column": order_column,
            }
        )
        statistics = {"ci_level": ci_level, "interval": interval, "test_against": test_against}
        audited = _audit_codebook(
            inputs or [],
            codebook,
            rules_dir,
            gate,
            counts,
            quiet,
            True,
            bootstrap,
            seed,
            id_column,
            worksheet,
            limit,
            statistics,
            alpha_min,
            delimiter,
        )
        _emit(audited, output_format.value, output)
        _exit_codebook(audited)
        return
    drift = {"windows": windows, "window_size": window_size, "order_column": order_column}
    if counts and any(value is not None for value in drift.values()):
        raise UsageError(
            "drift needs the sheets' order; --counts carry none.",
            hint="give the sheets or a join folder for --windows.",
            code="usage-drift",
        )
    result = _audit(
        inputs or [],
        rule,
        counts,
        quiet,
        list_disagreements=True,
        bootstrap=bootstrap,
        seed=seed,
        group=group,
        against=against,
        id_column=id_column,
        code_column=code_column,
        worksheet=worksheet,
        limit=limit,
        drift=drift,
        statistics={"ci_level": ci_level, "interval": interval, "test_against": test_against, "weights": weights},
        alpha_min=alpha_min,
        table=table,
        category_counts=category_counts,
        alias=alias,
        delimiter=delimiter,
    )
    if compare_with is not None:
        from irr_audit.api import compare

        result = result.with_comparison(
            compare(compare_with, result, bootstrap=bootstrap or 2000, seed=seed, limits=parse_limits(limit))
        )
    _emit(result, output_format.value, output)  # a bundle's adjudication comes with it, kept apart
    if result.failed:
        raise typer.Exit(1)


class CompareFormat(str, Enum):
    TEXT = "text"
    JSON = "json"
    MD = "md"


@app.command()
@reports_errors
def compare(
    a: Annotated[Path, typer.Argument(help="The earlier audit: a join folder or a bundle.")],
    b: Annotated[Path, typer.Argument(help="The later audit: a join folder or a bundle.")],
    output_format: Annotated[
        CompareFormat, typer.Option("--format", help="text, json or md.", case_sensitive=False)
    ] = CompareFormat.TEXT,
    bootstrap: Annotated[
        int, typer.Option("--bootstrap", help="Bootstrap replicates for the intervals (100 to 100000).")
    ] = 2000,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Seed of the bootstrap (drawn and shown when absent).")
    ] = None,
    limit: LimitOption = None,
) -> None:
    """Each coefficient of B minus A's, with a bootstrap interval (paired over shared units), per category too."""
    from irr_audit.api import compare as compare_audits

    compared = compare_audits(a, b, bootstrap=bootstrap, seed=seed, limits=parse_limits(limit))
    if output_format == CompareFormat.JSON:
        to_stdout(compared.to_json())
    elif output_format == CompareFormat.MD:
        to_stdout(compared.to_markdown())
    else:  # a terminal's width, or whole lines into a pipe or a file
        to_stdout(compared.to_text(width=shutil.get_terminal_size().columns if sys.stdout.isatty() else None))


def _audit(
    inputs: list[Path],
    rule: Path | None,
    counts: list[Path] | None,
    quiet: bool,
    *,
    list_disagreements: bool,
    bootstrap: int,
    seed: int | None,
    group: str | None,
    against: str | None,
    id_column: str | None,
    code_column: str | None,
    worksheet: str | None,
    limit: list[str] | None,
    statistics: dict[str, Any],
    drift: dict[str, Any] | None = None,
    alpha_min: list[float] | None = None,
    table: Path | None = None,
    category_counts: Path | None = None,
    alias: list[str] | None = None,
    delimiter: str | None = None,
) -> Audit:
    """The audit of sheets, a join folder, a bundle, (--counts) unit-pattern counts, or a published
    table (--table, --category-counts)."""
    from irr_audit.api import audit, audit_counts, audit_table
    from irr_audit.cli.progress import steps, wanted

    tables = [(flag, path) for flag, path in (("--table", table), ("--category-counts", category_counts)) if path]
    if tables:
        if len(tables) > 1 or inputs or counts:
            raise UsageError(
                "give one input: sheets (or a folder), --counts, --table or --category-counts.",
                code="usage-counts",
                hint="a table is scored on its own.",
            )
        flag, path = tables[0]
        sheet_options = _sheet_options(id_column, code_column, worksheet, delimiter)
        drift_options = {f"--{name.replace('_', '-')}": value for name, value in (drift or {}).items()}
        _refuse_without_sheets(flag, {**sheet_options, "--alias": alias, **drift_options})
        if group is not None:
            raise UsageError(
                "--group needs the sheets, not a table.", hint="run score on the sheets.", code="usage-group"
            )
        scored = audit_table(
            path,
            rule,
            kind="table" if flag == "--table" else "category_counts",
            bootstrap=bootstrap,
            seed=seed,
            limits=parse_limits(limit),
            alpha_min=alpha_min,
            **statistics,  # --ci-level, --interval, --test-against and --weights were ignored here
        )
        if not quiet:
            say(scored.summary_line)
        return scored

    if counts:
        if inputs:
            raise UsageError(
                "give sheets (or a folder) or --counts, not both.",
                code="usage-counts",
                hint="--counts scores unit-pattern counts on their own.",
            )
        _refuse_without_sheets("--counts", _sheet_options(id_column, code_column, worksheet, delimiter))
        scored = audit_counts(
            counts,
            rule,
            bootstrap=bootstrap,
            seed=seed,
            group=group,
            against=against,
            limits=parse_limits(limit),
            **statistics,
            alpha_min=alpha_min,
        )
        if alias:
            raise UsageError(
                "--alias maps raw values of sheets; counts hold codes already.",
                hint="leave out --alias with --counts.",
                code="usage-alias",
            )
        if not quiet:
            say(scored.summary_line)
        tell_problems(scored.problems)
        return scored
    with steps(wanted(quiet)) as progress:
        result = audit(
            inputs,
            rule,
            bootstrap=bootstrap,
            seed=seed,
            group=group,
            against=against,
            id_column=id_column,
            code_column=code_column,
            worksheet=worksheet,
            limits=parse_limits(limit),
            list_disagreements=list_disagreements,
            progress=progress.step,
            aliases=parse_aliases(alias),
            delimiter=delimiter,
            **(drift or {}),
            **statistics,
            alpha_min=alpha_min,
        )
    if not quiet:
        _tell(result.summary_line, result.input_warnings)
    tell_problems(result.problems)
    return result


def _sheet_options(
    id_column: str | None, code_column: str | None, worksheet: str | None, delimiter: str | None
) -> dict[str, Any]:
    return {"--id-column": id_column, "--code-column": code_column, "--worksheet": worksheet, "--delimiter": delimiter}


def _refuse_without_sheets(source: str, options: dict[str, Any]) -> None:
    """Options that read sheets (a column, a worksheet, a delimiter, raw values, the coding order)
    have nothing to read in counts or a table: refused, as they would otherwise be ignored."""
    given = [name for name, value in options.items() if value not in (None, [], False)]
    if given:
        raise UsageError(
            f"{', '.join(given)} {'reads' if len(given) == 1 else 'read'} sheets, and {source} gives none.",
            hint=f"leave {'it' if len(given) == 1 else 'them'} out, or audit the sheets (or their join folder).",
            code="usage-sheet-option",
        )


def _tell(summary_line: str, warnings: tuple[str, ...]) -> None:
    """The one-line summary and any warnings, on stderr (control characters from the sheets shown as escapes)."""
    say(summary_line)
    for warning in warnings:
        say(f"warning: {warning}")


def _emit(
    result: Audit | CodebookAudit, output_format: str, output: Path | None, include_disagreements: bool = True
) -> None:
    """The audit in the format asked for, on stdout or into ``output`` (atomically)."""
    from irr_audit.api import Audit
    from irr_audit.io.outputs import write_text_atomic

    if output_format == "text" and output is None and sys.stdout.isatty():
        from rich.console import Console

        console = Console()  # fitted to the terminal's width, boxes drawn in what its encoding has
        with console.capture() as captured:
            console.print(result.console_report(include_disagreements))
        to_stdout(captured.get())  # a character the terminal's encoding lacks shown as an escape
        return
    if output_format == "json" and isinstance(result, Audit):  # in pieces: millions of disagreements
        _emit_chunks(result.to_json_chunks(include_disagreements), output)
        return
    if output_format == "json":
        text = result.to_json(include_disagreements)
    elif output_format == "md":
        text = result.to_markdown()
    elif output_format == "methods":
        text = result.to_methods()
    elif output_format == "text":  # a pipe or a file: whole lines, headers intact
        text = result.to_text(width=None, include_disagreements=include_disagreements)
    else:  # html
        text = result.to_html()
    if output is None:
        to_stdout(text)
        return
    write_text_atomic(output, text)


def _emit_chunks(chunks: Iterator[bytes], output: Path | None) -> None:
    """UTF-8 pieces of whole characters, on stdout or into ``output`` (atomically)."""
    from irr_audit.io.outputs import write_bytes_atomic

    if output is None:
        for chunk in chunks:
            to_stdout(chunk)
        return
    write_bytes_atomic(output, chunks)


# --- a codebook: every variable in one run ---------------------------------------------------


def _one_of_rule_and_codebook(rule: Path | None, codebook: Path | None, rules_dir: Path | None) -> None:
    """Not both --rule and --codebook, and --rules only with --codebook (with neither, the library
    asks for the rule once it has found every input)."""
    if rule is not None or rules_dir is not None:
        one_of_rule_or_codebook(rule, codebook, rules_dir)


def _refuse_with_codebook(options: dict[str, Any]) -> None:
    given = [name for name, value in options.items() if value not in (None, [], False)]
    if given:
        raise UsageError(
            f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} not taken with a codebook.",
            hint="leave them out, or audit one variable with --rule (docs/codebook_audit.md).",
            code="usage-codebook-option",
        )


def _is_codebook_audit(
    inputs: list[Path] | None, rule: Path | None, codebook: Path | None, rules_dir: Path | None, gate: Any
) -> bool:
    """--codebook, or a folder join --codebook wrote or a bundle freeze --codebook made (each keeps its
    codebook). --gate needs one of them."""
    _one_of_rule_and_codebook(rule, codebook, rules_dir)
    alone = inputs[0] if rule is None and inputs and len(inputs) == 1 else None
    found = codebook is not None or (alone is not None and _keeps_codebook(alone))
    if gate and not found:
        raise UsageError(
            "--gate gates the variables of a codebook.",
            hint="add --codebook CODEBOOK; for one rule, rules check --min-kappa / --min-alpha gate its bundles.",
            code="usage-gate",
        )
    return found


def _keeps_codebook(folder: Path) -> bool:
    """A folder join --codebook wrote or a bundle freeze --codebook made (loaded only for a folder:
    scoring sheets imports no codebook machinery). A path the system cannot look up is none: the
    command names it when it reads it."""
    try:
        if not folder.is_dir():
            return False
    except OSError:
        return False
    from irr_audit.bundle.codebook import is_codebook_bundle
    from irr_audit.join.codebook_folder import is_codebook_join_dir

    return is_codebook_join_dir(folder) or is_codebook_bundle(folder)


def _join_codebook(
    sheets: list[Path],
    codebook: Path,
    out: Path,
    rules_dir: Path | None,
    sample: Path | None,
    force: bool,
    id_column: str | None,
    worksheet: str | None,
    limit: list[str] | None,
    delimiter: str | None,
    quiet: bool,
) -> None:
    from irr_audit.api import join_codebook_folder
    from irr_audit.cli.progress import steps, wanted

    with steps(wanted(quiet)) as progress:
        joined = join_codebook_folder(
            sheets,
            codebook,
            out,
            rules_dir=rules_dir,
            force=force,
            id_column=id_column,
            worksheet=worksheet,
            limits=parse_limits(limit),
            progress=progress.step,
            delimiter=delimiter,
            sample=sample,
        )
    if not quiet:
        say(joined.summary_line)
        for rule_id, variable in joined.variables.items():
            say(f"  {rule_id}: {variable.join.summary_line()}")
        for warning in joined.warnings:
            say(f"warning: {warning}")
        say(f"wrote {', '.join(str(path) for path in joined.written)}")
        if joined.replaced:
            say(f"replaced {out} (--force): deleted {', '.join(joined.replaced)}")
    tell_problems(joined.problems)


def _audit_codebook(
    inputs: list[Path],
    codebook: Path | None,
    rules_dir: Path | None,
    gate: list[str] | None,
    counts: list[Path] | None,
    quiet: bool,
    list_disagreements: bool,
    bootstrap: int,
    seed: int | None,
    id_column: str | None,
    worksheet: str | None,
    limit: list[str] | None,
    statistics: dict[str, Any],
    alpha_min: list[float] | None,
    delimiter: str | None,
) -> CodebookAudit:
    """The audit of every variable of a codebook: its sheets, its join folder, or its counts."""
    from irr_audit.api import audit_codebook, audit_codebook_counts, parse_gate_options
    from irr_audit.cli.progress import steps, wanted

    gates = parse_gate_options(gate)
    if counts:
        if inputs:
            raise UsageError(
                "give sheets (or a folder) or --counts, not both.",
                code="usage-counts",
                hint="--counts scores unit-pattern counts on their own.",
            )
        _refuse_without_sheets("--counts", _sheet_options(id_column, None, worksheet, delimiter))
        if codebook is None:
            raise UsageError(
                "--counts needs the codebook the codes belong to.",
                hint="add --codebook CODEBOOK.",
                code="usage-missing-rule",
            )
        scored = audit_codebook_counts(
            counts,
            codebook,
            rules_dir=rules_dir,
            gates=gates,
            bootstrap=bootstrap,
            seed=seed,
            limits=parse_limits(limit),
            alpha_min=alpha_min,
            **statistics,
        )
    else:
        with steps(wanted(quiet)) as progress:
            scored = audit_codebook(
                inputs,
                codebook,
                rules_dir=rules_dir,
                gates=gates,
                bootstrap=bootstrap,
                seed=seed,
                id_column=id_column,
                worksheet=worksheet,
                limits=parse_limits(limit),
                list_disagreements=list_disagreements,
                progress=progress.step,
                alpha_min=alpha_min,
                delimiter=delimiter,
                **statistics,
            )
    if not quiet:
        say(scored.summary_line)
        for warning in scored.input_warnings:
            say(f"warning: {warning}")
    for rule_id, audited in scored.audits.items():
        tell_problems([_variable_problem(rule_id, problem) for problem in audited.problems])
    return scored


def _variable_problem(rule_id: str, problem: dict[str, Any]) -> dict[str, Any]:
    """A variable's problem as said on stderr: named with the variable, and its fix in a codebook's
    terms (a codebook has no --code-column: each variable is read from its own column)."""
    fix = str(problem["fix"]).replace("--code-column names the column of the codes", f"the {rule_id} column is filled")
    return {**problem, "message": f"{rule_id}: {problem['message']}", "fix": fix}


def _exit_codebook(result: CodebookAudit) -> None:
    """Exit 1 naming each variable below its gate, or with nothing to score."""
    for row in result.reliability:
        gate = row["gate"]
        if gate is not None and not gate["passed"]:
            coefficient = row["coefficient"]
            shown, threshold = shown_against(coefficient["value"] if coefficient["defined"] else 0, gate["threshold"])
            shown = shown if coefficient["defined"] else "undefined"
            say(f"gate failed: {row['variable']}: {coefficient['label']} {shown} is below {threshold}")
    if result.failed:
        raise typer.Exit(1)
