"""Progress on stderr for long work (reading large sheets, the bootstrap).

Shown only when stderr is a terminal and --quiet is off, and always on stderr,
so it never mixes into `--format json` on stdout. Transient: it leaves nothing behind.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.progress import TaskID


class Steps:
    """Named steps of a command; a no-op unless a live display is attached."""

    def __init__(self, progress: Any = None) -> None:
        self._progress = progress
        self._task: TaskID | None = None

    def step(self, description: str) -> None:
        if self._progress is None:
            return
        if self._task is not None:
            self._progress.update(self._task, completed=1)
        self._task = self._progress.add_task(description, total=1)


def wanted(quiet: bool) -> bool:
    return not quiet and sys.stderr.isatty()


@contextmanager
def steps(enabled: bool) -> Iterator[Steps]:
    if not enabled:
        yield Steps()
        return

    # rich is loaded only for a live display (a terminal): a piped or quiet run goes without it
    from rich.console import Console  # noqa: PLC0415
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn  # noqa: PLC0415

    columns = (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        yield Steps(progress)
