"""Each command's --help says what the option does in that command, not in another one."""

from __future__ import annotations

import re
from enum import Enum
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from irr_audit.cli import app
from irr_audit.cli.helptext import is_argument, param_help
from tests.conftest import run


def help_of(*command: str) -> str:
    """The --help text with its line wrapping undone, so a phrase is found across lines."""
    result = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


def test_import_help_names_every_format() -> None:
    text = help_of("import")
    for name in ("label-studio,", "label-studio-min", "label-studio-csv", "prodigy", "doccano", "argilla", "model."):
        assert name in text


def test_adjudicate_digests_appends_the_record_not_the_bundle() -> None:
    text = help_of("adjudicate")
    assert "append the new adjudication record's digest" in text
    assert "append this bundle's digest" not in text
    assert "append this bundle's digest" in help_of("freeze")


def test_counts_alias_promises_no_record_counts_does_not_write() -> None:
    text = help_of("counts")
    alias = "--alias RAW=CODE Read the value RAW as the rule's CODE in this run, e.g. --alias 1=yes (repeatable)."
    assert alias in text
    assert "summary.json" not in text


@pytest.mark.parametrize(("command", "files"), [("sample", "a .csv dataset"), ("counts", "a .csv table")])
def test_delimiter_help_names_the_file_it_splits(command: str, files: str) -> None:
    text = help_of(command)
    assert f"The delimiter of {files}:" in text
    assert ".csv sheets" not in text


# --- every Markdown output: one blank line between blocks, one newline at the end --------------

ROOT = Path(__file__).resolve().parents[1]
RULE = ROOT / "rules" / "explicit_current_failure" / "v1.yaml"
CODEBOOK = ["--codebook", str(ROOT / "codebooks" / "comment_study" / "v1.yaml"), "--rules", str(ROOT / "rules")]
TABLES = ROOT / "tests" / "fixtures" / "tables"


def stdout_of(*args: object) -> str:
    result = run(*args)
    assert result.exit_code == 0, result.output
    return result.stdout


def bundle_of(into: Path, *args: object) -> str:
    """The bundle freeze made (the path on its digest line)."""
    return stdout_of("freeze", *args, "--into", into, "-q").split()[1]


@pytest.fixture(scope="module")
def markdown_outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Every Markdown document the CLI writes: a report of sheets, a join folder, a bundle with an
    adjudication, counts, a table, a count matrix, a codebook (sheets, bundle) and both comparisons."""
    work = tmp_path_factory.mktemp("markdown")
    sheets = sorted((ROOT / "examples" / "sheets").glob("*.csv"))
    book_sheets = sorted((ROOT / "examples" / "codebook" / "sheets").glob("*.csv"))
    stdout_of("join", *sheets, "--rule", RULE, "--out", work / "joined", "-q")
    bundle = bundle_of(work / "audits", *sheets, "--rule", RULE)
    decisions = ROOT / "examples" / "walkthrough" / "decisions.csv"
    stdout_of("adjudicate", bundle, "--decisions", decisions, "--by", "alice and bob", "-q")
    book_bundle = bundle_of(work / "book_audits", *book_sheets, *CODEBOOK)
    report = ("report", "--format", "md", "-q")
    blank = [work / "ann.csv", work / "ben.csv"]
    for sheet in blank:
        sheet.write_text("comment_id,code\na,\nb,\n", encoding="utf-8")
    nothing = run(*report, *blank, "--rule", RULE)
    assert nothing.exit_code == 1, nothing.output  # written, and the problem named
    one_column = ["--rule", RULE, "--code-column", "explicit_current_failure"]
    return {
        "nothing fully coded": nothing.stdout,
        "three coders, a group": stdout_of(
            *report, *book_sheets, *one_column, "--group", "two=alice,bob", "--against", "carol"
        ),
        "sheets": stdout_of(*report, *sheets, "--rule", RULE),
        "join folder, bootstrap, drift, compared": stdout_of(
            *report, work / "joined", "--bootstrap", "100", "--seed", "1", "--windows", "2", "--compare", bundle
        ),
        "bundle": stdout_of(*report, bundle),
        "counts": stdout_of(*report, "--counts", work / "joined" / "counts.csv", "--rule", RULE),
        "table": stdout_of(
            *report, "--table", TABLES / "abstractors_table.csv", "--rule", TABLES / "abstractors_rule.yaml"
        ),
        "count matrix": stdout_of(
            *report,
            "--category-counts",
            TABLES / "fleiss1971_category_counts.csv",
            "--rule",
            TABLES / "fleiss1971_rule.yaml",
        ),
        "codebook": stdout_of(*report, *book_sheets, *CODEBOOK),
        "codebook bundle": stdout_of(*report, book_bundle),
        "compare": stdout_of("compare", work / "joined", bundle, "--format", "md", "--bootstrap", "100", "--seed", "1"),
        "codebook compare": stdout_of(
            "compare", book_bundle, book_bundle, "--format", "md", "--bootstrap", "100", "--seed", "1"
        ),
    }


@pytest.mark.parametrize(
    "name",
    [
        "nothing fully coded",
        "three coders, a group",
        "sheets",
        "join folder, bootstrap, drift, compared",
        "bundle",
        "counts",
        "table",
        "count matrix",
        "codebook",
        "codebook bundle",
        "compare",
        "codebook compare",
    ],
)
def test_markdown_has_single_blank_lines_and_one_final_newline(markdown_outputs: dict[str, str], name: str) -> None:
    text = markdown_outputs[name]
    lines = text.split("\n")
    doubled = [number for number, line in enumerate(lines[:-2], 1) if line == lines[number] == ""]
    assert doubled == [], f"{name}: a doubled blank line after line(s) {doubled[:5]}"
    assert text.endswith("\n") and not text.endswith("\n\n"), f"{name}: not one final newline"
    assert not text.startswith("\n")
    assert [line for line in lines if line != line.rstrip()] == [], f"{name}: trailing spaces"


# --- every default said once, and truly ---------------------------------------------------------


def every_command() -> list[tuple[str, Any, Any]]:
    """(name, command, context) of every command and subcommand, as --help renders them."""
    found = []

    def walk(command: Any, name: str, parent: Any) -> None:
        context = command.context_class(command, info_name=name, parent=parent)
        found.append((name, command, context))
        for child in getattr(command, "commands", {}).values():
            walk(child, f"{name} {child.name}", context)

    walk(typer.main.get_command(app), "irr-audit", None)
    return found


def shown_default(param: Any) -> Any:
    """What typer shows after ``[default: ``, or None."""
    default = param.default.value if isinstance(param.default, Enum) else param.default
    return None if default in (None, False, [], ()) or param.show_default is False else default


COMMANDS = every_command()


@pytest.mark.parametrize(("name", "command", "context"), COMMANDS, ids=[name for name, _, _ in COMMANDS])
def test_every_default_is_said_once_and_truly(name: str, command: Any, context: Any) -> None:
    for param in command.get_params(context):
        said = param.help or ""
        rendered = param_help(param)
        label = f"{name} {param.opts[0] if param.opts else param.name}"
        if shown_default(param) is not None:
            assert f"[default: {shown_default(param)}]" in rendered, f"{label}: its default is not shown"
            assert "default" not in said.lower(), f"{label}: the help states the default typer also prints"
        elif param.default not in (None, False, [], ()):
            raise AssertionError(f"{label}: a default ({param.default}) the page does not show")
        # a default the library decides is stated one way everywhere: "(default: X)"
        assert re.search(r"\(default [^:]|Default", said) is None, f"{label}: not worded '(default: X)'"


def test_plan_pilot_rule_is_a_check_on_the_folder() -> None:
    text = help_of("plan", "pilot")
    assert "the rule file the sheets were coded under" not in text.lower()
    assert "refuse DIR unless it was coded under this rule file" in text


def test_plan_pilot_refuses_a_rule_the_folder_does_not_keep(tmp_path: Path) -> None:
    sheets = sorted((ROOT / "examples" / "sheets").glob("*.csv"))
    stdout_of("join", *sheets, "--rule", RULE, "--out", tmp_path / "joined", "-q")
    other = ROOT / "rules" / "sarcasm" / "v1.yaml"
    refused = run("plan", "pilot", tmp_path / "joined", "--half-width", "0.1", "--rule", other)
    assert refused.exit_code == 2
    assert "usage-rule-mismatch" in refused.output


@pytest.mark.parametrize("command", ["score", "report", "freeze"])
def test_rule_help_says_a_kept_rule_is_checked(command: str) -> None:
    assert "refused unless it is the rule kept there" in help_of(command)


def test_report_help_gives_the_replicates_of_compare_and_drift_without_bootstrap() -> None:
    text = help_of("report")
    assert "(its interval: --bootstrap replicates, 2000 when 0)" in text
    assert "its intervals: --bootstrap replicates, 1000 when 0)" in text


@pytest.mark.parametrize("command", ["check", "lock"])
def test_rules_dir_argument_shows_its_default(command: str) -> None:
    assert "RULES_DIR The folder holding <rule>/v<version>.yaml files. [default: rules]" in help_of("rules", command)


# --- the same option in the same words; what to pass named as it is ------------------------------


def options_of(name: str) -> dict[str, Any]:
    """A command's options by their first name (`--quiet`), from the walk of every command."""
    (context, command) = next((context, command) for found, command, context in COMMANDS if found == name)
    return {param.opts[0]: param for param in command.get_params(context) if not is_argument(param)}


@pytest.mark.parametrize(
    ("command", "wording"),
    [
        ("irr-audit join", "No summary and no warnings on stderr."),
        ("irr-audit score", "No summary and no warnings on stderr."),
        ("irr-audit report", "No summary and no warnings on stderr."),
        ("irr-audit freeze", "No summary and no warnings on stderr."),
        ("irr-audit labels", "No summary on stderr."),
        ("irr-audit adjudicate", "No summary on stderr."),
        ("irr-audit import", "No summary on stderr."),
        ("irr-audit sample", "No summary on stderr."),
        ("irr-audit counts", "No summary on stderr."),
    ],
)
def test_quiet_is_worded_alike_and_names_the_warnings_it_hides(command: str, wording: str) -> None:
    assert options_of(command)["--quiet"].help == wording


@pytest.mark.parametrize(
    ("command", "option"),
    [
        ("irr-audit join", "--out"),
        ("irr-audit join", "--sample"),
        ("irr-audit join", "--rules"),
        ("irr-audit report", "--compare"),
        ("irr-audit freeze", "--into"),
        ("irr-audit freeze", "--recodes"),
        ("irr-audit freeze", "--sample"),
        ("irr-audit import", "--out"),
        ("irr-audit sample", "--out"),
        ("irr-audit counts", "--temp-directory"),
        ("irr-audit rules check", "--audits"),
        ("irr-audit rules check", "--codebooks"),
        ("irr-audit rules lock", "--codebooks"),
    ],
)
def test_an_option_taking_a_folder_says_folder(command: str, option: str) -> None:
    assert options_of(command)[option].metavar == "<folder>"


@pytest.mark.parametrize("command", ["report", "labels", "adjudicate"])
def test_output_says_it_replaces_standard_output(command: str) -> None:
    assert "to this file, not to standard output." in options_of(f"irr-audit {command}")["--output"].help


@pytest.mark.parametrize(
    ("command", "usage"),
    [
        (["join"], "join [OPTIONS] SHEETS..."),
        (["score"], "score [OPTIONS] [INPUTS...]"),
        (["compare"], "compare [OPTIONS] A B"),
        (["import"], "import [OPTIONS] FORMAT EXPORT..."),
        (["verify"], "verify [OPTIONS] BUNDLE"),
        (["plan", "pilot"], "pilot [OPTIONS] DIR"),
        (["rules", "check"], "check [OPTIONS] [RULES_DIR]"),
    ],
)
def test_usage_line_names_arguments_as_the_arguments_section_does(command: list[str], usage: str) -> None:
    page = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "200", "NO_COLOR": "1"}).output
    first = page.split("\n")[0]
    assert first.endswith(usage) and "{" not in first


def test_report_and_score_list_rule_before_format() -> None:
    for name in ("irr-audit score", "irr-audit report"):
        order = list(options_of(name))
        assert order.index("--rule") < order.index("--format"), name


def test_plan_pilot_seed_says_a_drawn_seed_is_shown() -> None:
    text = help_of("plan", "pilot")
    assert "drawn and shown when absent" in text
    assert "not shown" not in text


# --- an option that reads sheets is refused where there are none, not ignored ----------------------


@pytest.fixture(scope="module")
def joined(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("joined") / "joined"
    stdout_of("join", *sorted((ROOT / "examples" / "sheets").glob("*.csv")), "--rule", RULE, "--out", folder, "-q")
    return folder


@pytest.mark.parametrize(
    "options",
    [["--id-column", "id"], ["--code-column", "label"], ["--worksheet", "Sheet1"], ["--delimiter", ";"]],
)
def test_counts_refuse_an_option_that_reads_sheets(joined: Path, options: list[str]) -> None:
    refused = run("score", "--counts", joined / "counts.csv", "--rule", RULE, *options)
    assert refused.exit_code == 2
    assert f"Error [usage-sheet-option]: {options[0]} reads sheets, and --counts gives none." in refused.stderr


@pytest.mark.parametrize(
    "options",
    [["--id-column", "id"], ["--delimiter", ";"], ["--alias", "1=yes"], ["--windows", "2"], ["--order-column", "t"]],
)
def test_a_table_refuses_an_option_that_reads_sheets(options: list[str]) -> None:
    table = ["--table", TABLES / "abstractors_table.csv", "--rule", TABLES / "abstractors_rule.yaml"]
    refused = run("report", *table, *options)
    assert refused.exit_code == 2
    assert f"Error [usage-sheet-option]: {options[0]} reads sheets, and --table gives none." in refused.stderr


def test_codebook_counts_refuse_an_option_that_reads_sheets(tmp_path: Path) -> None:
    book_sheets = sorted((ROOT / "examples" / "codebook" / "sheets").glob("*.csv"))
    stdout_of("join", *book_sheets, *CODEBOOK, "--out", tmp_path / "joined", "-q")
    refused = run("score", "--counts", tmp_path / "joined" / "counts.csv", *CODEBOOK, "--worksheet", "Sheet1")
    assert refused.exit_code == 2
    assert "Error [usage-sheet-option]: --worksheet reads sheets, and --counts gives none." in refused.stderr


# --- plan: an option that only shapes another is refused without it ----------------------------


def test_plan_half_width_refuses_simulations_without_seed() -> None:
    refused = run("plan", "half-width", "--half-width", "0.1", "--expected", "0.6", "--prevalence", "0.3",
                  "--simulations", "500")  # fmt: skip
    assert refused.exit_code == 2
    assert "Error [usage-plan]: --simulations goes with --seed, which was not given" in refused.stderr


def test_plan_half_width_simulates_4000_samples_by_default() -> None:
    plan = ("plan", "half-width", "--half-width", "0.1", "--expected", "0.6", "--prevalence", "0.3", "--seed", "1")
    assert stdout_of(*plan) == stdout_of(*plan, "--simulations", "4000")


def test_plan_pilot_refuses_seed_without_bootstrap(joined: Path) -> None:
    refused = run("plan", "pilot", joined, "--half-width", "0.1", "--seed", "3")
    assert refused.exit_code == 2
    assert "Error [usage-plan]: --seed goes with --bootstrap, which was not given" in refused.stderr


@pytest.mark.parametrize(
    ("command", "alternatives"),
    [
        ("irr-audit plan alpha", ["--codes", "--smallest-share"]),
        ("irr-audit plan kappa", ["--prevalence", "--shares", "--rates"]),
    ],
)
def test_plan_options_that_replace_each_other_name_each_other(command: str, alternatives: list[str]) -> None:
    options = options_of(command)
    for option in alternatives:
        others = [other for other in alternatives if other != option]
        assert all(other in options[option].help for other in others), option


# --- options in an order that reads: the inputs, what to compute, how to read, then --quiet --------


@pytest.mark.parametrize("name", [name for name, _, _ in COMMANDS if "--codebook" in options_of(name)])
def test_codebook_and_its_rules_folder_follow_rule(name: str) -> None:
    order = list(options_of(name))
    at = order.index("--rule")
    assert order[at + 1 : at + 3] == ["--codebook", "--rules"]


@pytest.mark.parametrize("name", [name for name, _, _ in COMMANDS if "--quiet" in options_of(name)])
def test_quiet_is_the_last_option(name: str) -> None:
    assert [option for option in options_of(name) if option != "--help"][-1] == "--quiet"


def test_score_and_report_keep_their_inputs_together() -> None:
    for name in ("irr-audit score", "irr-audit report"):
        order = list(options_of(name))
        start = order.index("--rule")
        assert order[start : start + 6] == [
            "--rule",
            "--codebook",
            "--rules",
            "--counts",
            "--table",
            "--category-counts",
        ]


@pytest.mark.parametrize("name", [name for name, command, _ in COMMANDS if getattr(command, "commands", None)])
def test_a_group_lists_each_command_with_a_whole_sentence(name: str) -> None:
    group = next(command for found, command, _ in COMMANDS if found == name)
    for command in group.commands.values():
        short = command.get_short_help_str(limit=150)  # click stops at the first ". " or at the limit
        whole = not short.endswith("...") and short.count("(") == short.count(")")
        assert whole, f"{command.name}: listed as {short!r}"


def test_counts_says_its_rule_is_required() -> None:
    assert options_of("irr-audit counts")["--rule"].help.endswith("(required).")
    refused = run("counts", TABLES / "abstractors_table.csv", "--out", "counts.csv")
    assert refused.exit_code == 2 and "counts needs the rule." in refused.stderr
