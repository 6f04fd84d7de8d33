"""The csv module's readers, with room for a long comment.

The csv module refuses a field longer than its ``field_size_limit`` (128 KiB unless set), and
that limit is one setting for every reader in the process. A comment body can be longer, and
irr-audit bounds what it reads by its own limits (irr_audit.io.limits), so its reads run with
the limit raised, and the limit is put back after each one: importing or using irr-audit
leaves the csv readers of other code as they were. Reads that overlap (irr-audit's own
threads) take turns, and each read is done whole inside its turn. A limit that another thread
sets while irr-audit reads is the one left in force (the limit is not put back over it).
"""

from __future__ import annotations

import csv
import io
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

FIELD_SIZE = 2**31 - 1  # what a field may hold while irr-audit reads: a file's size is bounded before
_TURN = threading.RLock()  # one raised limit at a time; a read inside a read keeps it raised


@contextmanager
def long_fields() -> Iterator[None]:
    """The csv module's field limit raised to FIELD_SIZE while the block runs, then put back."""
    with _TURN:
        previous = csv.field_size_limit(FIELD_SIZE)
        try:
            yield
        finally:
            if csv.field_size_limit() == FIELD_SIZE:  # else another thread set its own limit meanwhile: keep it
                csv.field_size_limit(previous)


def csv_rows(source: str | Iterable[str], **options: Any) -> list[list[str]]:
    """Every record of CSV text (or of lines) read by ``csv.reader(..., **options)``."""
    with long_fields():
        return list(csv.reader(_lines(source), **options))


def first_csv_row(source: str | Iterable[str], **options: Any) -> list[str] | None:
    """The first record of CSV text (or of lines), or None when there is none."""
    with long_fields():
        return next(csv.reader(_lines(source), **options), None)


def _lines(source: str | Iterable[str]) -> Iterable[str]:
    return io.StringIO(source, newline="") if isinstance(source, str) else source
