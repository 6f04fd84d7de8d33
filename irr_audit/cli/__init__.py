"""The command line: parse -> call the library -> render -> exit code.

Exit codes: 0 success; 1 a check failed; 2 bad input or usage (one clean message
on stderr, never a traceback); 70 an internal error (a bug); 71 the system refused the
memory or a thread the run needed (neither a bug nor bad input).

Start-up: the command modules import only typer and the light modules (errors, display)
at their top, and the library inside each command, when it runs; the library in turn
imports what a command uses when it uses it (README, "Speed at scale": the figures, and
benchmarks/startup.py, which measures them). Typer reads every command's options from
the signatures, so --help shows them all without importing the library; a run of one
command hands typer that command alone (:func:`app_for`).
"""

from __future__ import annotations

import copy
import os
import sys
import traceback
from collections.abc import Sequence

import typer
from typer.main import get_command_name

from irr_audit._version import __version__

# Each command group registers its commands on `app` when imported.
from irr_audit.cli import audit, bundle, imports, plan, rules, sample, warehouse  # noqa: F401
from irr_audit.cli.helptext import use_plain_help
from irr_audit.cli.shared import app

use_plain_help(app)  # --help in words, not Python types (every command registered above)

INTERNAL_ERROR = 70  # EX_SOFTWARE: not 1 (a check failed) and not 2 (bad input)
SYSTEM_REFUSED = 71  # EX_OSERR: out of memory, or no thread could be started


def main() -> None:
    try:
        app_for(sys.argv[1:])()
        sys.stdout.flush()
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        # The reader went away (`| head`): the output could not all be written. As Python's
        # documentation advises, stdout is pointed at devnull so the final flush stays quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    except Exception as error:  # a bug: say so, show the details, exit with a code of its own
        _exit_if_broken_install(error)
        _exit_if_refused(error)
        traceback.print_exc()
        typer.echo(
            f"\nirr-audit {__version__} hit an internal error: this is a bug in irr-audit, not a problem with "
            "your input.\nPlease report it with the command you ran and the details above.",
            err=True,
        )
        sys.exit(INTERNAL_ERROR)


def app_for(args: Sequence[str]) -> typer.Typer:
    """The app that runs ``args``: for one of the top-level commands, a copy of ``app`` holding
    only that command (typer reads the options of every command it holds at each run, 25 ms for
    all of them, and a run needs one command's); ``app`` itself for anything else (help, the
    version, a group such as `rules`, a name that is no command)."""
    named = [command for command in app.registered_commands if args and _name(command) == args[0]]
    if len(named) != 1:
        return app
    single = copy.copy(app)
    single.registered_commands = named
    single.registered_groups = []
    return single


def _name(command: typer.models.CommandInfo) -> str | None:
    if command.name:
        return command.name
    return get_command_name(command.callback.__name__) if command.callback else None


def _exit_if_refused(error: Exception) -> None:
    """Memory or a thread the system refused is no bug and no fault of the input: one message
    saying so and how to find the limit, and exit 71. Every output is written whole or not at
    all, so nothing is left half-written."""
    from irr_audit._threads import thread_refused
    from irr_audit.io.display import printable

    if isinstance(error, MemoryError):  # numpy's and pyarrow's own errors for this are MemoryErrors
        # what was asked for, as the library says it ("Unable to allocate 7.45 GiB for an array ..."):
        # an absurd size would be a bug to report, not a limit to raise
        asked = printable(str(error), 200)
        what = "ran out of memory" + (f" ({asked})" if asked else "")
    elif thread_refused(error):
        what = "could not start a thread"
    else:
        return
    typer.echo(
        f"Error [system-refused]: irr-audit {what}: the system refused it, so the command stopped. A file "
        "it writes is written whole or not at all: none is left half-written.\n  Hint: free memory, or raise "
        "this shell's limit on a process's memory (`ulimit -v` shows it, in KiB) or threads, and run it again.",
        err=True,
    )
    sys.exit(SYSTEM_REFUSED)


def _exit_if_broken_install(error: Exception) -> None:
    """A dependency that fails to import is not a bug of irr-audit: one message naming the
    packages, their versions and the fix, and exit 2."""
    from irr_audit.cli.dependencies import dependency_message, failed_dependency

    name = failed_dependency(error)
    if name is None:
        return
    message, hint = dependency_message(name, error)
    typer.echo(f"Error [dependency-import]: {message}\n  Hint: {hint}", err=True)
    sys.exit(2)


if __name__ == "__main__":
    main()
