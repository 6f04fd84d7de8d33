"""`irr-audit import`: an annotation tool's export (or a model's labels) -> one coding sheet
per annotator, the import log and import.json, ready for `irr-audit join`."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from irr_audit.cli.codebook_options import CodebookOption, RulesFolderOption, one_of_rule_or_codebook
from irr_audit.cli.shared import FOLDER, LimitOption, Quiet, app, check_outputs, parse_limits, reports_errors, say


class ExportFormat(str, Enum):
    """The formats of irr_audit.importers.formats.FORMATS, named here so that --help needs no
    import of the importers (tests/test_importers.py checks they agree)."""

    LABEL_STUDIO = "label-studio"
    LABEL_STUDIO_MIN = "label-studio-min"
    LABEL_STUDIO_CSV = "label-studio-csv"
    PRODIGY = "prodigy"
    DOCCANO = "doccano"
    ARGILLA = "argilla"
    MODEL = "model"


# --help names the formats: the argument's metavar alone would hide them
FORMAT_HELP = "The tool the export comes from: " + ", ".join(f.value for f in ExportFormat) + "."


@app.command("import")
@reports_errors
def import_command(
    export_format: Annotated[ExportFormat, typer.Argument(metavar="FORMAT", help=FORMAT_HELP, case_sensitive=False)],
    exports: Annotated[
        list[Path], typer.Argument(metavar="EXPORT...", help="The export file (doccano: one file per user).")
    ],
    out: Annotated[
        Path, typer.Option("--out", metavar=FOLDER, help="Folder for sheets/, the import log and import.json.")
    ],
    rule: Annotated[Path | None, typer.Option("--rule", help="The rule file the annotations are coded under.")] = None,
    codebook: CodebookOption = None,
    rules: RulesFolderOption = None,
    question: Annotated[
        str | None,
        typer.Option(
            "--question",
            help="The question the rule codes: Label Studio's from_name (the column of a JSON-MIN or CSV "
            "export), Argilla's question name, a model file's label key (default: the only one).",
        ),
    ] = None,
    id_field: Annotated[
        str | None,
        typer.Option(
            "--id-field",
            help="The key holding the comment id (default: comment_id, in the task's data, meta or fields); "
            "e.g. _input_hash for Prodigy's hash, only when you ask for it.",
        ),
    ] = None,
    text_field: Annotated[
        str | None, typer.Option("--text-field", help="The key holding the comment's text (default: text, then body).")
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Replace an --out folder holding files import did not write.")
    ] = False,
    limit: LimitOption = None,
    quiet: Quiet = False,
) -> None:
    """Turn an annotation tool's export into coding sheets for join, with a log of every annotation.

    With --codebook, each variable is the tool's question named as its rule id (Label Studio's
    from_name, Argilla's question, a model file's key), and each annotator's sheet has a column per variable.
    """
    from irr_audit.importers.model import ImportOptions
    from irr_audit.importers.run import import_exports
    from irr_audit.io.files import check_exist
    from irr_audit.rules.load import load_rule

    one_of_rule_or_codebook(rule, codebook, rules)
    check_exist(
        [*((path, "export") for path in exports), (rule, "rule"), (codebook, "codebook"), (rules, "rules folder")]
    )
    if codebook is not None:
        _import_codebook(
            export_format.value, exports, codebook, rules, out, question, id_field, text_field, force, quiet, limit
        )
        return
    assert rule is not None  # one_of_rule_or_codebook
    check_outputs([*exports, rule], "--out", folders=[out])
    limits = parse_limits(limit)
    loaded = load_rule(rule, limits)
    run = import_exports(
        export_format.value,
        exports,
        loaded,
        out,
        ImportOptions(question, id_field, text_field),
        inputs=[rule],
        force=force,
        limits=limits,
    )
    if not quiet:
        say(run.result.summary_line())
        say(f"wrote {len(run.written)} files into {out}")
        if run.replaced:
            say(f"replaced {out} (--force): deleted {', '.join(run.replaced)}")


def _import_codebook(
    export_format: str,
    exports: list[Path],
    codebook: Path,
    rules: Path | None,
    out: Path,
    question: str | None,
    id_field: str | None,
    text_field: str | None,
    force: bool,
    quiet: bool,
    limit: list[str] | None,
) -> None:
    from irr_audit.importers.codebook import check_codebook_format, import_codebook_exports
    from irr_audit.importers.model import ImportOptions
    from irr_audit.rules.codebook import default_rules_dir, load_codebook

    options = ImportOptions(question, id_field, text_field)
    check_codebook_format(export_format, options)
    check_outputs([*exports, codebook], "--out", folders=[out])
    limits = parse_limits(limit)
    loaded = load_codebook(codebook, rules, limits)
    folder = rules if rules is not None else default_rules_dir(codebook)
    rule_files = [folder / f"{rule.id}/v{rule.version}.yaml" for rule in loaded.rules]
    run = import_codebook_exports(
        export_format, exports, loaded, out, options, inputs=[codebook, *rule_files], force=force, limits=limits
    )
    if not quiet:
        say(run.result.summary_line())
        say(f"wrote {len(run.written)} files into {out}")
        if run.replaced:
            say(f"replaced {out} (--force): deleted {', '.join(run.replaced)}")
