"""`counts`: the unit-pattern counts of a long table (comment_id, coder, code), made by DuckDB
in bounded memory (irr_audit.warehouse.duckdb_counts), written as join's counts.csv."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from irr_audit.cli.shared import (
    FOLDER,
    PATH,
    CodeColumn,
    CountsAliasOption,
    IdColumn,
    Quiet,
    TableDelimiterOption,
    app,
    check_outputs,
    output_file,
    parse_aliases,
    reports_errors,
    say,
)
from irr_audit.errors import UsageError


@app.command()
@reports_errors
def counts(
    table: Annotated[
        Path, typer.Argument(help="A long table, one row per code: comment_id, coder, code (CSV or Parquet).")
    ],
    out_text: Annotated[
        str, typer.Option("--out", metavar=PATH, help="The counts file to write (join's counts.csv format).")
    ],
    rule: Annotated[
        Path | None, typer.Option("--rule", help="The rule file the codes were given under (required).")
    ] = None,
    coders: Annotated[
        str | None,
        typer.Option("--coders", help="A,B,...: the coders to count, in this order (default: all, sorted by name)."),
    ] = None,
    id_column: IdColumn = None,
    code_column: CodeColumn = None,
    coder_column: Annotated[
        str | None, typer.Option("--coder-column", help="Column holding the coder (default: coder).")
    ] = None,
    delimiter: TableDelimiterOption = None,
    alias: CountsAliasOption = None,
    summary_text: Annotated[
        str | None,
        typer.Option("--summary", metavar=PATH, help="Also write the account of every row (JSON) to this file."),
    ] = None,
    log_text: Annotated[
        str | None,
        typer.Option(
            "--log",
            metavar=PATH,
            help="Also write the missingness log (JSON Lines: record, coder, comment_id, raw_value, reason).",
        ),
    ] = None,
    memory_limit: Annotated[
        str,
        typer.Option("--memory-limit", help="DuckDB's memory limit; beyond it, DuckDB spills to disk."),
    ] = "4GB",
    temp_directory: Annotated[
        Path | None,
        typer.Option(
            "--temp-directory",
            metavar=FOLDER,
            help="Where DuckDB spills (default: a new temporary folder, deleted after).",
        ),
    ] = None,
    quiet: Quiet = False,
) -> None:
    """Count a long table's units by pattern of codes through DuckDB (pip install "irr-audit[warehouse]").

    Codes are classified as join classifies them; score the file with irr-audit score --counts FILE --rule RULE."""
    from irr_audit.api import load_rule
    from irr_audit.io.files import check_exist
    from irr_audit.io.outputs import refuse_shared_outputs, render_json, write_text_atomic
    from irr_audit.rules.runaliases import with_run_aliases
    from irr_audit.warehouse.duckdb_counts import duckdb_counts
    from irr_audit.warehouse.longtable import LongTableColumns

    check_exist([(table, "table"), (rule, "rule")])
    out = output_file(out_text, "--out", "counts.csv")
    summary, log = output_file(summary_text, "--summary", "summary.json"), output_file(log_text, "--log", "log.jsonl")
    if rule is None:
        raise UsageError("counts needs the rule.", hint="pass --rule rules/<rule>/v<version>.yaml.", code="usage-rule")
    refuse_shared_outputs([("--out", out), ("--summary", summary), ("--log", log)])
    for option, path in (("--out", out), ("--summary", summary), ("--log", log)):
        if path is not None:  # each refusal names the option that named the file
            check_outputs([table, rule], option, files=[path])
    wanted = [name.strip() for name in coders.split(",")] if coders is not None else None
    result = duckdb_counts(
        table,
        with_run_aliases(load_rule(rule), parse_aliases(alias)),
        columns=LongTableColumns(
            id_column=id_column or "comment_id", coder_column=coder_column or "coder", code_column=code_column or "code"
        ),
        coders=wanted,
        memory_limit=memory_limit,
        temp_directory=temp_directory,
        delimiter=delimiter,
        log=log,
    )
    write_text_atomic(out, result.csv_text())
    if summary is not None:
        write_text_atomic(summary, render_json({"coders": list(result.coders), **result.summary}))
    if not quiet:
        say(result.summary_line())
        say("wrote " + ", ".join(str(path) for path in (out, summary, log) if path))
