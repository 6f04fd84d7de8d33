"""The `irr-audit` console command, kept apart from the CLI so that it can act
before typer and the commands are even imported.

It starts reading the sheets the command line names (irr_audit.prefetch) and,
once they are parsed, matching their ids while typer parses the options; runs
the CLI, then ends the process at once: after a million-unit audit, tearing the
interpreter down frees hundreds of MB of arrays one object at a time (about
0.1 s), while the operating system reclaims them at once. Everything irr-audit
writes is closed before the CLI returns and the standard streams are flushed
here, so nothing is lost.
"""

from __future__ import annotations

import os
import sys


def run() -> None:
    from irr_audit import prefetch

    prefetch.start(sys.argv[1:])
    prefetch.settle()  # typer would slow the parses down; it runs while the ids are matched
    from irr_audit.cli import main

    try:
        main()
        code = 0
    except SystemExit as exit:
        code = _exit_status(exit.code)
    try:
        sys.stdout.flush()
    except OSError:  # a closed pipe (`| head`): the output could not all be written
        code = code or 1
    try:
        sys.stderr.flush()
    except OSError:
        pass
    os._exit(code)


def _exit_status(code: object) -> int:
    """What ``sys.exit(code)`` would make the exit status (a message is printed, then 1)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1
