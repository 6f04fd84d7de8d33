"""Parse the sheets named on the command line while the command line itself is parsed.

Before a command runs, typer checks its options (importing pydantic) and irr-audit
imports its modules: about 0.1 s on one core, while the other could already be
parsing large CSV sheets. ``start`` guesses which arguments are sheets (existing
CSV or TSV files after `score`, `report` or `join`) and parses them on two
background threads; ``take`` hands a parse over only if the file is the same file,
unchanged (device, inode, size and modification time), and parsed without error.
Otherwise the sheet is read as usual, so a wrong guess costs only the background
work and an unreadable sheet is reported as always.

Only the console command (irr_audit.console) starts a prefetch, before it imports
typer and the commands. The background threads run code that is already imported
(the codecs a sheet may need included), so they never race the main thread's imports.
"""

from __future__ import annotations

import codecs
import os
import stat
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

COMMANDS = ("score", "report", "join")
TEXT_SUFFIXES = (".csv", ".tsv", ".tab")  # their parse does not depend on any option

_pending: dict[tuple[str, tuple[int, ...]], Future] = {}


def start(arguments: list[str]) -> None:
    """Start parsing the CSV/TSV files among ``arguments`` (a command line without the program)."""
    if not arguments or arguments[0] not in COMMANDS:
        return
    candidates: dict[tuple[str, tuple[int, ...]], Path] = {}
    for argument in arguments[1:]:
        path = Path(argument)
        identity = _identity(path) if path.suffix.lower() in TEXT_SUFFIXES else None
        if identity is not None:
            candidates[(str(path), identity)] = path
    if not candidates:
        return
    from irr_audit import lazy_pandas, sheets  # numpy and pyarrow, imported here on the main thread

    for codec in ("utf-8", "utf-16", "cp1252"):  # what reading a sheet may decode with, imported here too
        codecs.lookup(codec)
    sheets.use_lean_memory_pool()  # before pyarrow's first allocation, which fixes its decay time
    lazy_pandas.defer()
    pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="irr-audit-prefetch")
    for key, path in candidates.items():
        _pending[key] = pool.submit(sheets.read_and_parse, path)
    pool.shutdown(wait=False)


def take(path: Path) -> Any | None:
    """The prefetched parse of ``path`` (a ParsedFile) if it is still the file that was parsed, else None."""
    if not _pending:
        return None
    future = _pending.pop((str(path), _identity(path)), None)
    if future is None:
        return None
    try:
        return future.result()
    except Exception:  # read it again the usual way, which reports the problem properly
        return None


def _identity(path: Path) -> tuple[int, ...] | None:
    try:
        status = os.stat(path)
    except (OSError, ValueError):  # ValueError: a NUL byte in the argument
        return None
    if not stat.S_ISREG(status.st_mode):
        return None
    return (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)
