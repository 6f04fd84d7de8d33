"""The options of a command that takes a codebook instead of a rule: `--codebook FILE` and
`--rules DIR` (the folder of its rule files), and the check that exactly one of `--rule` and
`--codebook` is given."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from irr_audit.errors import UsageError

CodebookOption = Annotated[
    Path | None,
    typer.Option(
        "--codebook",
        help="A codebook file (codebooks/<name>/v<version>.yaml): several rules coded together, one column each.",
    ),
]
RulesFolderOption = Annotated[
    Path | None,
    typer.Option(
        "--rules",
        metavar="<folder>",  # cli.shared.FOLDER; this light module imports nothing of the CLI
        help="The folder of the codebook's rule files, <rule>/v<version>.yaml (default: rules/ of the "
        "codebook's repository, see docs/codebooks.md).",
    ),
]


def one_of_rule_or_codebook(rule: Path | None, codebook: Path | None, rules: Path | None) -> None:
    """Exactly one of --rule and --codebook; --rules only with --codebook."""
    if rule is not None and codebook is not None:
        raise UsageError(
            "--rule and --codebook were both given; a run audits one rule or one codebook.",
            hint="pass --codebook FILE alone: it names every rule it holds.",
            code="usage-rule-or-codebook",
        )
    if rule is None and codebook is None:
        raise UsageError(
            "no rule: pass --rule RULE or --codebook CODEBOOK.",
            hint="for example --rule rules/explicit_current_failure/v1.yaml.",
            code="usage-rule-or-codebook",
        )
    if rules is not None and codebook is None:
        raise UsageError(
            "--rules names the folder of a codebook's rules, and no --codebook was given.",
            hint="add --codebook FILE, or leave out --rules.",
            code="usage-rule-or-codebook",
        )
