"""What the commands share: the Typer app, the options several commands take, how a
command turns bad input into one message and exit code 2, and how it speaks.
"""

from __future__ import annotations

import errno
import functools
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar, overload

import typer

from irr_audit._version import __version__
from irr_audit.errors import IrrAuditError, OutputError
from irr_audit.io.display import visible

if TYPE_CHECKING:
    from irr_audit.io.limits import Limits

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

    return wrapper  # type: ignore[return-value]


RuleOption = Annotated[Path | None, typer.Option("--rule", help="The rule file the sheets were coded under.")]
# a join folder or a bundle keeps its rule: --rule given with one is a check, not an input
KEPT_RULE_HELP = (
    "The rule file the sheets were coded under (with {}: optional, and refused unless it is the rule kept there)."
)
AuditRuleOption = Annotated[
    Path | None, typer.Option("--rule", help=KEPT_RULE_HELP.format("a join folder or an audit bundle"))
]
FreezeRuleOption = Annotated[Path | None, typer.Option("--rule", help=KEPT_RULE_HELP.format("a join folder"))]
IdColumn = Annotated[
    str | None, typer.Option("--id-column", help="Column holding the comment id (default: comment_id).")
]
CodeColumn = Annotated[str | None, typer.Option("--code-column", help="Column holding the code (default: code).")]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No summary on stderr.")]
# join, score, report and freeze also keep their warnings off stderr with --quiet: the help says so
QuietWarnings = Annotated[bool, typer.Option("--quiet", "-q", help="No summary and no warnings on stderr.")]
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


AliasOption = Annotated[
    list[str] | None,
    typer.Option(
        "--alias",
        metavar="RAW=CODE",
        help="Read the value RAW as the rule's CODE in this run, e.g. --alias 1=yes (repeatable; "
        "recorded in summary.json and the report).",
    ),
]
# counts writes neither summary.json nor a report: its help must not promise a record
CountsAliasOption = Annotated[
    list[str] | None,
    typer.Option(
        "--alias",
        metavar="RAW=CODE",
        help="Read the value RAW as the rule's CODE in this run, e.g. --alias 1=yes (repeatable).",
    ),
]


DelimiterOption = Annotated[
    str | None,
    typer.Option(
        "--delimiter",
        metavar="CHAR",
        help="The delimiter of .csv sheets: , ; tab or | (default: detected from the header and first lines).",
    ),
]


DELIMITER_HELP = "The delimiter of {}: , ; tab or | (default: detected from the header and first lines)."
# sample and counts split one file that is not a sheet: their help names it
DatasetDelimiterOption = Annotated[
    str | None, typer.Option("--delimiter", metavar="CHAR", help=DELIMITER_HELP.format("a .csv dataset"))
]
TableDelimiterOption = Annotated[
    str | None, typer.Option("--delimiter", metavar="CHAR", help=DELIMITER_HELP.format("a .csv table"))
]


def parse_aliases(values: list[str] | None) -> dict[str, str]:
    """--alias RAW=CODE options -> the library's {raw: code} (irr_audit.rules.runaliases)."""
    from irr_audit.rules.runaliases import parse_alias_options

    return parse_alias_options(values)


def tell_problems(problems: list[dict[str, Any]]) -> None:
    """Each problem of an audit on stderr, quiet or not: a failed check is never silent."""
    from irr_audit.join.problems import problem_lines

    for line in problem_lines(problems):
        say(line)


def say(text: str, *, err: bool = True) -> None:
    """A line for people, on stderr unless asked: text from files and paths shown with its
    control characters as escapes (irr_audit.io.display), so that no file can drive the terminal."""
    if err:
        typer.echo(visible(text), err=True)
    else:
        to_stdout(visible(text) + "\n")


def to_stdout(text: str | bytes) -> None:
    """``text`` (or UTF-8 bytes) on standard output, flushed. In UTF-8, the encoding of every
    format irr-audit writes, whatever the locale says (a report redirected into a file on a
    system whose locale is Latin-1 or ASCII is the file ``--output`` writes); on a terminal, in
    the terminal's encoding, with what it cannot show as escapes. Standard output redirected to
    a disk that is full or failing is the output's problem, said as such (exit 2), not a bug; a
    reader that went away (a broken pipe) is the CLI's main to handle."""
    stream = sys.stdout
    raw = getattr(stream, "buffer", None)
    terminal = stream.isatty()
    try:
        if raw is None:  # a stream of text only (a test's, a host's): it encodes
            stream.write(text if isinstance(text, str) else text.decode("utf-8"))
        else:
            stream.flush()  # what was written as text goes first
            if isinstance(text, bytes) and not terminal:
                write_all(raw, text)
            else:
                shown = text if isinstance(text, str) else text.decode("utf-8")
                write_all(raw, shown.encode((stream.encoding or "utf-8") if terminal else "utf-8", "backslashreplace"))
        stream.flush()
    except BrokenPipeError:
        raise
    except OSError as error:
        raise OutputError(
            f"cannot write to standard output: {error.strerror or error}. What was written there is incomplete.",
            hint="free space where standard output goes (or send it to another disk), and run the command again.",
            code="output-unwritable",
        ) from None


def write_all(raw: Any, data: bytes) -> None:
    """Every byte of ``data`` to ``raw``. Unbuffered (``python -u``, PYTHONUNBUFFERED), standard
    output's binary layer is the file itself, whose write may take only part of the bytes (a disk
    that fills up takes what fits) and says so by its return value, not by an error."""
    view = memoryview(data)
    while view:
        written = raw.write(view)
        if not written:  # None (would block) or 0 (took nothing): never a silent loss
            raise OSError(errno.EIO, f"standard output took {len(data) - len(view)} of {len(data)} bytes")
        view = view[written:]


def show(text: str) -> None:
    """Help or the version on standard output as a command's output goes (:func:`to_stdout`), for
    the places outside a command (click's option callbacks), where no :func:`reports_errors`
    turns a standard output that cannot take it into its message and exit 2."""
    try:
        to_stdout(text)
    except OutputError as error:
        typer.echo(error.render(), err=True)
        raise typer.Exit(2) from None


def _version_callback(value: bool) -> None:
    if value:
        show(f"irr-audit {__version__}\n")
        raise typer.Exit()


@app.callback()
def main_options(
    version: Annotated[
        bool, typer.Option("--version", callback=_version_callback, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    """Audit inter-coder reliability of hand-coded comment samples, honestly."""


def check_outputs(
    inputs: Sequence[Path | None], option: str, files: Sequence[Path] = (), folders: Sequence[Path] = ()
) -> None:
    """Refuse, before the command reads anything, an output that would write an input or a
    bundle; the message starts with the option that named the output (io.outputs.check_outputs)."""
    from irr_audit.io.outputs import check_outputs as refuse

    refuse(inputs, option, files=files, folders=folders)


@overload
def output_file(text: str, option: str, example: str) -> Path: ...
@overload
def output_file(text: None, option: str, example: str) -> None: ...
@overload
def output_file(text: str | None, option: str, example: str) -> Path | None: ...
def output_file(text: str | None, option: str, example: str) -> Path | None:
    """An output file's option as a Path (None when not given), refused when it names a folder
    (`out/`): such options are taken as text, since a Path drops the trailing separator
    (io.outputs.output_file_path)."""
    if text is None:
        return None
    from irr_audit.io.outputs import output_file_path

    return output_file_path(text, option, example)


PATH = "<path>"  # the metavar of an output file's option, taken as text: what typer shows for a Path
FOLDER = "<folder>"  # the metavar of an option that takes a folder only, where <path> would let a file pass


def parse_limits(values: list[str] | None) -> Limits:
    """--limit NAME=VALUE options -> the library's Limits (irr_audit.io.limits)."""
    from irr_audit.io.limits import parse_limit_options

    return parse_limit_options(values)
