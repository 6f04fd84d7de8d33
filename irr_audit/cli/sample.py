"""`irr-audit sample`: the collector's output -> a ledger, a missingness log, a
completeness verdict, a reproducible draw and one blank coding sheet per coder."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from irr_audit.cli.codebook_options import CodebookOption, RulesFolderOption, one_of_rule_or_codebook
from irr_audit.cli.shared import (
    FOLDER,
    DatasetDelimiterOption,
    LimitOption,
    Quiet,
    app,
    check_outputs,
    parse_limits,
    reports_errors,
    say,
)


class SheetFormatChoice(str, Enum):
    """The choices of --sheet-format: the values of irr_audit.sample.sheets.SheetFormat, named
    here so that --help needs no import of the sample code (tests/test_startup.py checks they agree)."""

    CSV = "csv"
    XLSX = "xlsx"


@app.command("sample")
@reports_errors
def sample(
    dataset: Annotated[
        Path, typer.Argument(help="The collector's dataset: a JSON array (.json), JSON Lines (.jsonl) or CSV.")
    ],
    coders: Annotated[str, typer.Option("--coders", help="Two or more coder names, e.g. alice,bob.")],
    out: Annotated[
        Path, typer.Option("--out", metavar=FOLDER, help="Folder for the ledger, the log, sample.json and sheets/.")
    ],
    rule: Annotated[Path | None, typer.Option("--rule", help="The rule file the coders will code under.")] = None,
    codebook: CodebookOption = None,
    rules: RulesFolderOption = None,
    run_record: Annotated[
        Path | None,
        typer.Option("--run-record", help="The collector's run record (OUTPUT), to judge completeness."),
    ] = None,
    size: Annotated[int | None, typer.Option("--size", help="Draw this many units (needs --seed).")] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Seed of the draw and of --shuffle.")] = None,
    shuffle: Annotated[
        bool, typer.Option("--shuffle", help="Give each coder the units in their own order (needs --seed).")
    ] = False,
    sheet_format: Annotated[
        SheetFormatChoice,
        typer.Option("--sheet-format", help="csv, or xlsx with a code list in the sheet.", case_sensitive=False),
    ] = SheetFormatChoice.CSV,
    field: Annotated[
        list[str] | None,
        typer.Option(
            "--field",
            metavar="FIELD=NAME",
            help="Read a field from the export's column or key NAME, e.g. --field comment_id=id (repeatable; "
            "the fields are in the README).",
        ),
    ] = None,
    delimiter: DatasetDelimiterOption = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Replace an --out folder holding files this sample would not write "
            "identically (filled sheets too; they are deleted).",
        ),
    ] = False,
    limit: LimitOption = None,
    quiet: Quiet = False,
) -> None:
    """Build the working ledger and one blank coding sheet per coder from the collector's output.

    With --codebook instead of --rule, every sheet has one column per variable of the codebook.
    """
    from irr_audit.io.collector import parse_field_options, read_dataset, read_run_record
    from irr_audit.io.delimiter import parse_delimiter
    from irr_audit.io.files import check_exist
    from irr_audit.rules.codebook import default_rules_dir, load_codebook
    from irr_audit.rules.load import load_rule
    from irr_audit.sample.build import SampleRequest, build_codebook_sample, build_sample, summary_lines
    from irr_audit.sample.folder import write_sample_dir
    from irr_audit.sample.sheets import SheetFormat, parse_coders

    one_of_rule_or_codebook(rule, codebook, rules)
    instrument = rule if rule is not None else codebook
    inputs = [dataset, *([instrument] if instrument else []), *([run_record] if run_record else [])]
    check_exist(
        [
            (dataset, "dataset"),
            (rule, "rule"),
            (codebook, "codebook"),
            (rules, "rules folder"),
            (run_record, "run record"),
        ]
    )
    check_outputs(inputs, "--out", folders=[out])
    request = SampleRequest(
        coders=tuple(parse_coders(coders)),
        size=size,
        seed=seed,
        shuffle=shuffle,
        sheet_format=SheetFormat(sheet_format.value),
    )
    limits = parse_limits(limit)
    loaded_rule = load_rule(rule, limits) if rule is not None else None
    loaded_codebook = load_codebook(codebook, rules, limits) if codebook is not None else None
    if loaded_codebook is not None:  # the rule files are inputs too: never written
        folder = rules if rules is not None else default_rules_dir(codebook or Path())
        inputs += [folder / f"{r.id}/v{r.version}.yaml" for r in loaded_codebook.rules]
    record = None if run_record is None else read_run_record(run_record, limits)
    fields = parse_field_options(field)
    read = read_dataset(dataset, limits, fields=fields, delimiter=parse_delimiter(delimiter))
    if loaded_codebook is not None:
        built = build_codebook_sample(read, record, loaded_codebook, request)
    else:
        assert loaded_rule is not None  # one_of_rule_or_codebook
        built = build_sample(read, record, loaded_rule, loaded_rule.source, request)
    written = write_sample_dir(built, out, inputs, force)
    if not quiet:
        for line in summary_lines(built):
            say(line)
        say(f"wrote {len(written.written)} files into {out}")
        if written.removed:
            say(f"replaced {out} (--force): replaced or deleted {', '.join(written.removed)}")
