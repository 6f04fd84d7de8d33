"""`irr-audit rules check | lock | diff`: the CI check on rule revisions.

Exit codes: 0 clean; 1 the check found problems (one line each on stdout); 2 bad
usage or unreadable input (one message on stderr).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from irr_audit.cli.shared import FOLDER, PATH, app, check_outputs, output_file, reports_errors, say, to_stdout
from irr_audit.errors import UsageError
from irr_audit.io.display import visible

if TYPE_CHECKING:
    from irr_audit.rules.revisions import Gates

rules_app = typer.Typer(
    name="rules",
    help="Check, lock and compare the versions of coding rules kept under rules/.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)
app.add_typer(rules_app, name="rules")

RulesDir = Annotated[Path, typer.Argument(metavar="RULES_DIR", help="The folder holding <rule>/v<version>.yaml files.")]
CodebooksOption = Annotated[
    Path | None,
    typer.Option(
        "--codebooks",
        metavar=FOLDER,
        help="The folder holding <codebook>/v<version>.yaml files (default: codebooks beside RULES_DIR, if any).",
    ),
]
LockOption = Annotated[Path | None, typer.Option("--lock", help="The lock file (default: RULES_DIR/rules.lock).")]
# the lock `rules lock` writes: text, as a Path would drop the trailing separator of a folder's name
LockOutput = Annotated[
    str | None, typer.Option("--lock", metavar=PATH, help="The lock file (default: RULES_DIR/rules.lock).")
]


@rules_app.command("check")
@reports_errors
def check(
    rules_dir: RulesDir = Path("rules"),
    base: Annotated[
        str | None,
        typer.Option(
            "--base",
            help="Git ref holding the released versions, e.g. origin/main in a pull "
            "request. Without it the lock file is used.",
        ),
    ] = None,
    audits: Annotated[
        Path | None, typer.Option("--audits", metavar=FOLDER, help="Folder of audit bundles (irr-audit freeze --into).")
    ] = None,
    lock: LockOption = None,
    min_kappa: Annotated[
        float | None,
        typer.Option(
            "--min-kappa", help="Fail when the newest validation audit's kappa is below this (needs --audits)."
        ),
    ] = None,
    min_alpha: Annotated[
        float | None,
        typer.Option(
            "--min-alpha",
            help="Fail when the newest validation audit's Krippendorff's alpha is below this (needs --audits).",
        ),
    ] = None,
    use_ci_lower: Annotated[
        bool, typer.Option("--use-ci-lower", help="Apply the gates to the lower end of the confidence interval.")
    ] = False,
    codebooks: CodebooksOption = None,
) -> None:
    """Check rule revisions (read-only; exit 1 with one line per problem).

    Released versions stay unchanged, and versions run 1, 2, 3 ...

    A new version has a changelog, and a code map when its codes change.

    A new version is validated on a new sample, or on an explicitly re-coded one.

    Codebooks (codebooks/<name>/v<version>.yaml beside RULES_DIR, or --codebooks DIR) are
    checked the same way, and a released codebook's rule versions stay as released.
    """
    from irr_audit.rules.codebook_revisions import check_codebooks
    from irr_audit.rules.repository import gather_check_inputs, label_of
    from irr_audit.rules.revisions import check_rules

    gates = gates_from_options(min_kappa, min_alpha, use_ci_lower, audits)
    inputs = gather_check_inputs(rules_dir, base, lock, audits, codebooks)
    label = label_of(rules_dir)
    manifests = inputs.manifests if audits is not None else None  # None: no audits were asked about
    result = check_rules(inputs.current, inputs.baselines, manifests, gates, label)
    codebook_problems = check_codebooks(
        inputs.codebooks, inputs.current, inputs.codebook_baselines, inputs.pins, inputs.codebooks_label, label
    )
    for note in [*inputs.notes, *result.notes]:
        say(f"note: {note}")
    for problem in [*result.problems, *codebook_problems]:
        say(problem.render(), err=False)
    where = f"{result.files_checked} rule file{'s' if result.files_checked != 1 else ''}"
    if inputs.codebooks:
        where += f" and {len(inputs.codebooks)} codebook file{'s' if len(inputs.codebooks) != 1 else ''}"
    where += f"; {inputs.compared_with}"
    if result.clean and not codebook_problems:
        say(f"rules check: {label} is clean ({where}).")
        return
    count = len(result.problems) + len(codebook_problems)
    say(f"rules check: {count} problem{'s' if count != 1 else ''} in {label} ({where}).")
    raise typer.Exit(1)


def gates_from_options(
    min_kappa: float | None, min_alpha: float | None, use_ci_lower: bool, audits: Path | None
) -> Gates:
    from irr_audit.rules.revisions import Gates

    for option, value in (("--min-kappa", min_kappa), ("--min-alpha", min_alpha)):
        if value is not None and not (math.isfinite(value) and -1 <= value <= 1):
            raise UsageError(
                f"{option} {value:g} is outside -1 to 1, where kappa and alpha live.",
                hint=f"pass a threshold such as {option} 0.667.",
                code="usage-gate",
            )
    gates = Gates(min_kappa=min_kappa, min_alpha=min_alpha, use_ci_lower=use_ci_lower)
    if use_ci_lower and not gates.active:
        raise UsageError(
            "--use-ci-lower changes how a gate is applied, and no gate was given.",
            hint="add --min-kappa X or --min-alpha X.",
            code="usage-gate",
        )
    if gates.active and audits is None:
        raise UsageError(
            "a score gate needs the audit bundles to read the scores from.",
            hint="add --audits DIR (the folder given to irr-audit freeze --into).",
            code="usage-gate",
        )
    return gates


@rules_app.command("lock")
@reports_errors
def lock(rules_dir: RulesDir = Path("rules"), lock: LockOutput = None, codebooks: CodebooksOption = None) -> None:
    """Record every version under RULES_DIR as released: rule id, version, sha256.

    Codebook versions are recorded too, each with the sha256 of every rule file it pins.

    Refuses (exit 1) while `rules check` finds problems: a lock never records an edit.
    """
    from irr_audit.rules.codebook_revisions import check_codebooks
    from irr_audit.rules.lock import codebook_lock_entries, lock_entries, render_lock
    from irr_audit.rules.repository import (
        default_lock_path,
        gather_codebooks,
        label_of,
        read_lock,
        read_rule_files,
        rule_folder_files,
        write_lock,
    )
    from irr_audit.rules.revisions import check_rules

    lock_path = output_file(lock, "--lock", "rules.lock") or default_lock_path(rules_dir)
    # the rule files, as read_rule_files reads them
    check_outputs(rule_folder_files(rules_dir), "--lock", files=[lock_path])
    current = read_rule_files(rules_dir)
    existing = read_lock(lock_path)
    result = check_rules(current, [existing] if existing else [], rules_label=label_of(rules_dir))
    found = gather_codebooks(rules_dir, codebooks, lock_path) or ({}, [], {}, "")
    book_files, released, pins, books_label = found
    problems = [
        *result.problems,
        *check_codebooks(book_files, current, released, pins, books_label, label_of(rules_dir)),
    ]
    if problems:
        for problem in problems:
            say(problem.render(), err=False)
        say(
            f"rules lock: {label_of(lock_path)} not written: a version is locked only once "
            f"`irr-audit rules check` passes; fix the {len(problems)} problem(s) above."
        )
        raise typer.Exit(1)
    entries = lock_entries(current)
    newly = [entry for entry in entries if existing is None or entry.file not in existing.digests]
    versions = (
        f"{len(entries)} version{'s' if len(entries) != 1 else ''} of "
        f"{len({e.rule for e in entries})} rule{'s' if len({e.rule for e in entries}) != 1 else ''}"
    )
    books = codebook_lock_entries(book_files, current)
    if books:
        versions += f" and {len(books)} codebook version{'s' if len(books) != 1 else ''}"
    if not write_lock(lock_path, render_lock(entries, books)):
        say(f"rules lock: {label_of(lock_path)} is up to date ({versions}).")
        return
    added = ", ".join(f"{entry.rule} v{entry.version}" for entry in newly) or "none"
    say(f"rules lock: wrote {label_of(lock_path)} ({versions}; newly recorded: {added}).")


@rules_app.command("diff")
@reports_errors
def diff(
    old: Annotated[Path, typer.Argument(metavar="OLD", help="The older rule file, e.g. rules/my_rule/v1.yaml.")],
    new: Annotated[Path, typer.Argument(metavar="NEW", help="The newer rule file, e.g. rules/my_rule/v2.yaml.")],
) -> None:
    """Show what changed between two versions of a rule, for a reviewer.

    Codes, definitions, examples, scale, missing codes, aliases; paste it into a ```diff block.
    """
    from irr_audit.rules.diff import render_rule_diff
    from irr_audit.rules.load import load_rule

    diff = render_rule_diff(load_rule(old), load_rule(new))
    to_stdout("\n".join(visible(line) for line in diff.split("\n")))  # the rules' text, shown safely
