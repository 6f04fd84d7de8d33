"""Reading input files safely: one bounded reader for every file irr-audit reads,
and paths that print anywhere.

A path is resolved without failing on a symlink loop, refused when its name is
not UTF-8 (it could not be recorded in an output), and read once, as a regular
file within a size limit: a pipe, a device, a folder, a link that loops or a
name too long are each refused by name.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from irr_audit.errors import IrrAuditError, UsageError
from irr_audit.io.limits import DEFAULT_LIMITS, Limits, limit_error

DIGEST_PREFIX = "sha256:"


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_digest(data: bytes) -> str:
    """A digest as irr-audit prints and records it: sha256:<hex>."""
    return DIGEST_PREFIX + sha256_hex(data)


def sha256_file(path: Path) -> str:
    """A file's sha256 (hex), read in blocks: a large file is hashed, not held in memory."""
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def shown_name(path: Path | str) -> str:
    """A path as text that prints anywhere: bytes that are not UTF-8 as \\xNN escapes."""
    raw = os.fsencode(path)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("utf-8", "backslashreplace")


def resolved(path: Path) -> Path:
    """``path`` with its symbolic links followed as far as they go: a link that loops, or a
    name too long for the system, is left as it is (made absolute) for the reader to refuse."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop (Python < 3.13)
        return Path(os.path.abspath(path))


def file_identity(path: Path) -> tuple[int, int] | None:
    """The file ``path`` leads to, as (device, inode): one value for the file, a symbolic link to
    it, a hard link to it and any other path to it (``./x``, a symlinked folder on the way). None
    when it cannot be looked up, or where the file system gives no inode (0)."""
    try:
        found = os.stat(path)
    except (OSError, ValueError):
        return None
    return (found.st_dev, found.st_ino) if found.st_ino else None


def same_file_key(path: Path) -> object:
    """What two paths to one file share: its (device, inode), so that a hard link is caught as
    well as a symbolic one; its resolved path when it cannot be looked up (the reader refuses it)."""
    return file_identity(path) or resolved(path)


def check_name(path: Path, subject: str) -> None:
    """Refuse a path that is not UTF-8: it could not be shown, nor written into a summary or a report."""
    for candidate in (path, path.absolute()):
        try:
            os.fsencode(candidate).decode("utf-8")
        except UnicodeDecodeError:
            raise UsageError(
                f"{subject} {shown_name(candidate)} has a name that is not UTF-8 text, which irr-audit cannot "
                "record in its outputs.",
                hint="rename the file (or the folder holding it) with UTF-8 characters, e.g. with mv.",
                code="path-not-utf8",
            ) from None


def check_usable(paths: Iterable[Path | None]) -> None:
    """Refuse a path the system cannot even look up: a name too long, a folder on the way that
    cannot be entered, a NUL character. Probes such as ``Path.exists`` raise OSError on these,
    so every path a user gives goes through this first. A path that does not exist (or runs
    through a file), or a link that loops, passes: the reader that wanted it names the problem."""
    for path in paths:
        if path is None:
            continue
        try:
            os.stat(path)
        except ValueError:  # a NUL character: no file system has such a name
            raise UsageError(
                f"{shown_name(str(path).replace(chr(0), chr(0x2400)))} holds a NUL character; no file has such a name.",
                hint="check the path.",
                code="path-unusable",
            ) from None
        except OSError as error:
            if error.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
                continue
            why = "its name is longer than the file system allows" if error.errno == errno.ENAMETOOLONG else None
            raise UsageError(
                f"{shown_name(path)} cannot be used: {why or error.strerror}.",
                hint="check the path, its length and the permissions of the folders on it.",
                code="path-unusable",
            ) from None


# What each kind of input is called when it does not exist: (subject, error code, hint).
MISSING_INPUTS = {
    "input": ("{}", "path-not-found", "check the path: a join folder, an audit bundle, or two or more sheets."),
    "sheet": ("sheet {}", "sheet-not-found", "check the sheet's path."),
    "rule": ("rule file {}", "rule-not-found", "pass --rule rules/<rule>/v<version>.yaml."),
    "sample": ("sample folder {}", "sample-dir-not-found", "pass the folder irr-audit sample --out wrote."),
    "counts": ("counts file {}", "sheet-not-found", "check the counts file's path."),
    "dataset": ("dataset {}", "collector-not-found", "check the path of the collector's output."),
    "run record": ("run record {}", "collector-not-found", "check the path of the collector's run record."),
    "bundle": ("{}", "bundle-not-found", "pass a bundle folder made by irr-audit freeze."),
    "export": ("export {}", "import-not-found", "check the path of the export."),
    "table": ("table {}", "table-not-found", "check the path of the long table (CSV or Parquet)."),
    "codebook": ("codebook file {}", "codebook-not-found", "pass --codebook codebooks/<name>/v<version>.yaml."),
    "rules folder": ("rules folder {}", "usage-rules-dir", "pass --rules with the folder of <rule>/v<version>.yaml."),
}


def check_exist(inputs: Iterable[tuple[Path | None, str]]) -> None:
    """Refuse, first and in the order given, an input that does not exist, each given as
    (path, kind of MISSING_INPUTS): a mistyped name is named as such, not as the problem
    some later check would see in it (``score j_typo`` is not "sheets need the rule")."""
    given = [(path, kind) for path, kind in inputs if path is not None]
    check_usable(path for path, _ in given)
    for path, kind in given:
        if not os.path.lexists(path):
            subject, code, hint = MISSING_INPUTS[kind]
            raise UsageError(f"{subject.format(shown_name(path))} does not exist.", hint=hint, code=code)


def read_bounded(
    path: Path,
    subject: str,
    limits: Limits = DEFAULT_LIMITS,
    limit_name: str = "file_bytes",
    code: str = "input",
    missing_hint: str = "check the path.",
    max_bytes: int | None = None,
    max_hint: str = "",
    own_file: bool = False,
) -> bytes:
    """The bytes of the regular file ``path``, within a size limit.

    The file is opened once, without following it blindly: a named pipe (which would
    block), a device such as /dev/zero (which never ends), a folder, a symbolic link
    that loops and a name too long for the system are each refused by name, with the
    error codes ``<code>-not-found``, ``<code>-not-a-file`` and ``<code>-unreadable``.
    Only the file's own size is ever allocated, and a file larger than the limit is
    refused before it is read. ``max_bytes`` is a fixed cap below the limit, for a file
    that is small by nature (a digest list, a signature, a frozen file of known size):
    beyond it the file is refused as ``<code>-too-large`` with ``max_hint``. ``own_file``: a file
    irr-audit wrote, which no option should let grow (io.limits.load_json)."""
    limit = getattr(limits, limit_name)
    try:
        handle = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise _unreadable(subject, exc, code, missing_hint) from None
    try:
        status = os.fstat(handle)
        if not stat.S_ISREG(status.st_mode):
            raise IrrAuditError(
                f"{subject} is {_kind_of(status.st_mode)}, not a file.",
                hint="pass a regular file.",
                code=f"{code}-not-a-file",
            )
        _check_cap(status.st_size, max_bytes, subject, code, max_hint)
        if status.st_size > limit:
            raise limit_error(limit_name, limits, subject, f"is {status.st_size:,} bytes", own_file=own_file)
        with os.fdopen(handle, "rb", closefd=False) as stream:
            data = stream.read(status.st_size + 1)  # one byte more tells a file that grew while read
    except OSError as exc:
        raise _unreadable(subject, exc, code, missing_hint) from None
    finally:
        os.close(handle)
    _check_cap(len(data), max_bytes, subject, code, max_hint)
    if len(data) > limit:
        raise limit_error(limit_name, limits, subject, f"is more than {limit:,} bytes", own_file=own_file)
    return data


def _check_cap(size: int, max_bytes: int | None, subject: str, code: str, hint: str) -> None:
    if max_bytes is not None and size > max_bytes:
        raise IrrAuditError(
            f"{subject} is {size:,} bytes, more than the {max_bytes:,} it may hold.",
            hint=hint,
            code=f"{code}-too-large",
        )


def _kind_of(mode: int) -> str:
    kinds = (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a named pipe"),
        (stat.S_ISCHR, "a device"),
        (stat.S_ISBLK, "a device"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def _unreadable(subject: str, error: OSError, code: str, missing_hint: str) -> IrrAuditError:
    if error.errno in (errno.ENOENT, errno.ENOTDIR):
        return IrrAuditError(f"{subject} does not exist.", hint=missing_hint, code=f"{code}-not-found")
    if error.errno == errno.EISDIR:
        return IrrAuditError(f"{subject} is a folder, not a file.", hint="pass a file.", code=f"{code}-not-a-file")
    why = {
        errno.ELOOP: "it is a symbolic link that leads back to itself",
        errno.ENAMETOOLONG: "its name is longer than the file system allows",
    }.get(error.errno or 0, error.strerror)
    return IrrAuditError(
        f"{subject} cannot be read: {why}.",
        hint="check the path and the file's permissions.",
        code=f"{code}-unreadable",
    )


def unreadable(subject: str, error: OSError, code: str, missing_hint: str) -> IrrAuditError:
    """The error for an input that cannot be opened or read, for a reader of its own (a table
    streamed by DuckDB): ``<code>-not-found``, ``<code>-not-a-file`` or ``<code>-unreadable``."""
    return _unreadable(subject, error, code, missing_hint)
