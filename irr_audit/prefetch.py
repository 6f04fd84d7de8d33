"""Read the sheets named on the command line, and match their ids, while the command
line itself is parsed.

Before a command runs, typer checks its options (importing pydantic) and irr-audit
imports its modules: about 0.2 s of one core. ``start`` guesses which arguments
are sheets (existing CSV or TSV files after `score`, `report` or `join`) and
parses them on two background threads. Each thread also reads a parsed file as a
sheet with the default columns and packs its ids; a thread with no file left to
parse lists the distinct codes of the sheets read so far (but the last). ``settle`` waits for
the parses (typer would only slow them down) and then matches the sheets' ids to
units in the background while typer runs.

Nothing here decides a result. ``take`` hands a parse over only if the file is the
same file, unchanged (device, inode, size and modification time), and parsed
without error; ``early_result`` hands a result over only for the very objects it
was computed from (the sheets handed over, read with the default columns).
Otherwise the command reads and computes as usual, so a wrong guess costs only
background work and an unreadable sheet is reported as always.

Only the console command (irr_audit.console) starts a prefetch, before it imports
typer and the commands. The threads start parsing as soon as irr_audit.tables (numpy
and pyarrow, not pyarrow.compute) and the codecs a sheet may need are loaded; the
modules they use next are imported by the main thread meanwhile (a thread that
needs one first waits for that import to finish).
"""

from __future__ import annotations

import codecs
import importlib
import os
import stat
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

COMMANDS = ("score", "report", "join")
TEXT_SUFFIXES = (".csv", ".tsv", ".tab")  # their parse does not depend on any option
# Options under which the sheets are not read with the default columns, or the ids
# are matched against a sample: only the parses are done early then.
NOT_EARLY = ("--id-column", "--code-column", "--worksheet", "--sample")

_pending: dict[tuple[str, tuple[int, ...]], Future] = {}
_early: dict[tuple[str, tuple[int, ...]], tuple[tuple[Any, ...], Future]] = {}
_pool: ThreadPoolExecutor | None = None


@dataclass(frozen=True)
class Prefetched:
    """A file parsed in the background (a tables.ParsedFile); with the default
    columns, the sheet read from it and its ids packed (each None when not possible)."""

    parsed: Any
    sheet: Any | None = None
    packing: Any | None = None  # an arrowtext.ColumnPacking


def start(arguments: list[str]) -> None:
    """Start parsing the CSV/TSV files among ``arguments`` (a command line without the program)."""
    global _pool
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
    from irr_audit import lazy_pandas, tables  # numpy and pyarrow, imported here on the main thread

    for codec in ("utf-8", "utf-16", "cp1252"):  # what reading a sheet may decode with, imported here too
        codecs.lookup(codec)
    tables.use_lean_memory_pool()  # before pyarrow's first allocation, which fixes its decay time
    lazy_pandas.defer()
    early = not any(argument.startswith(NOT_EARLY) for argument in arguments)
    pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="irr-audit-prefetch")
    for key, path in candidates.items():
        _pending[key] = pool.submit(_read, path, pool if early else None)
    importlib.import_module("irr_audit.join")  # while the first files parse: what the threads run next
    if early:
        _pool = pool
    else:
        pool.shutdown(wait=False)


def settle() -> None:
    """If ``start`` is reading sheets with the default columns: wait for the parses,
    then, if every file is such a sheet, start matching their ids in the background."""
    global _pool
    if _pool is None:
        return
    read = [future.result() if future.exception() is None else None for future in list(_pending.values())]
    pool, _pool = _pool, None
    if len(read) >= 2 and all(prefetched is not None and prefetched.sheet is not None for prefetched in read):
        from irr_audit import join

        keys = tuple(join.unit_keys(prefetched.sheet) for prefetched in read)
        packings = [prefetched.packing for prefetched in read]
        _offer("match_ids", keys, pool.submit(join.match_ids, list(keys), packings))
    pool.shutdown(wait=False)


def take(path: Path) -> Prefetched | None:
    """What was prefetched of ``path`` if it is still the file that was parsed, else None."""
    if not _pending:
        return None
    future = _pending.pop((str(path), _identity(path)), None)
    if future is None:
        return None
    try:
        return future.result()
    except Exception:  # read it again the usual way, which reports the problem properly
        return None


def early_result(work: str, *inputs: Any) -> Any | None:
    """The result of ``work`` started in the background on exactly these objects, or None."""
    if not _early:
        return None
    entry = _early.pop((work, tuple(map(id, inputs))), None)
    if entry is None:
        return None
    try:
        return entry[1].result()
    except Exception:  # computed again, the usual way
        return None


def _read(path: Path, pool: ThreadPoolExecutor | None) -> Prefetched:
    """Parse ``path``; with a pool (the default columns), also read it as a sheet, pack
    its ids, and queue the listing of its codes behind the parses still to do."""
    from irr_audit import tables

    parsed = tables.read_and_parse(path)
    if pool is None:
        return Prefetched(parsed)
    from irr_audit import arrowtext, join, sheets

    try:
        sheet = sheets.sheet_from_parsed(parsed, path)
    except Exception:  # not a sheet with the default columns: the command reads it as it needs
        return Prefetched(parsed)
    if sum(not future.done() for future in list(_pending.values())) > 1:  # (this parse is one of them)
        _offer("distinct_codes", (sheet.codes,), pool.submit(join.distinct_codes, sheet.codes))
    # else the last sheet parsed: its codes would only delay the id matching queued next,
    # and the command lists them itself while it waits for that matching
    return Prefetched(parsed, sheet, arrowtext.pack_column(join.unit_keys(sheet)))


def _offer(work: str, inputs: tuple[Any, ...], result: Future) -> None:
    # the inputs are kept with the result, so that their ids cannot be reused by other objects
    _early[(work, tuple(map(id, inputs)))] = (inputs, result)


def _identity(path: Path) -> tuple[int, ...] | None:
    try:
        status = os.stat(path)
    except (OSError, ValueError):  # ValueError: a NUL byte in the argument
        return None
    if not stat.S_ISREG(status.st_mode):
        return None
    return (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)
