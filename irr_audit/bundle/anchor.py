"""Anchors: what ties a bundle to the one that was frozen, from outside the bundle.

A bundle's manifest carries its own integrity hash, and verify re-hashes every file
against it; that proves the bundle is consistent, not that it is the one frozen:
whoever can write the folder can change a sheet and re-hash everything. The
bundle's digest, the sha256 of manifest.json's bytes, names the whole frozen audit
(the manifest holds the sha256 of every file and the score), so a digest kept
somewhere the forger cannot write (a commit, a message, a lab notebook) anchors it.

A digest list (e.g. ``audits/DIGESTS``, committed to the repository) holds one line
per anchored item, appended and never rewritten:

    sha256:<64 hex digits>  <name>

where the name is a bundle's name, or ``<bundle name>/adjudication/<record file>``
for an adjudication record. Blank lines and lines starting with ``#`` are ignored.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from irr_audit.errors import IrrAuditError, OutputError, UsageError
from irr_audit.io.encodings import refuse_foreign_mark
from irr_audit.io.files import DIGEST_PREFIX, read_bounded
from irr_audit.io.outputs import check_outputs

DIGEST_TEXT = re.compile(r"(?:sha256:)?([0-9a-fA-F]{64})")
LIST_LINE = re.compile(r"(?:sha256:)?([0-9a-fA-F]{64})[ \t]+(\S+)[ \t]*")
# A digest list grows by one short line per freeze or adjudication: 16 MiB is some
# 150,000 lines, far beyond any project, and keeps a wrong file from being read whole.
DIGEST_LIST_MAX_BYTES = 16 * 1024 * 1024


class DigestListError(IrrAuditError):
    code = "digests-invalid"


def parse_digest(text: str, option: str = "--expect") -> str:
    """A digest typed by a user, as sha256:<hex> (the prefix and letter case are optional).

    >>> parse_digest("SHA256:" + "AB" * 32) == "sha256:" + "ab" * 32
    True
    """
    candidate = text.strip()
    if candidate[:7].lower() == DIGEST_PREFIX:
        candidate = DIGEST_PREFIX + candidate[7:]
    match = DIGEST_TEXT.fullmatch(candidate)
    if match is None:
        raise UsageError(
            f"{option} {text!r} is not a bundle digest.",
            hint="pass the line freeze printed, sha256: and 64 hexadecimal digits.",
            code="usage-expect",
        )
    return DIGEST_PREFIX + match.group(1).lower()


def digest_line(digest: str, name: str) -> str:
    """One line of a digest list, without its newline."""
    return f"{digest}  {name}"


@dataclass(frozen=True)
class DigestEntry:
    digest: str
    name: str
    line: int


@dataclass(frozen=True)
class DigestList:
    """A digest list as read: where it came from and its entries in file order."""

    source: str
    entries: tuple[DigestEntry, ...]

    def lookup(self, name: str) -> tuple[DigestEntry, ...]:
        return tuple(entry for entry in self.entries if entry.name == name)


@dataclass(frozen=True)
class Anchors:
    """What verify checks a bundle against from outside it; none of them by default."""

    expect: str | None = None  # a digest, sha256:<hex>
    digests: DigestList | None = None
    allowed_signers: Path | None = None
    identity: str | None = None  # the signer allowed_signers must name; any listed signer when None

    @property
    def given(self) -> bool:
        return self.expect is not None or self.digests is not None or self.allowed_signers is not None


def parse_digest_list(text: str, source: str) -> DigestList:
    """The entries of a digest list. Raises DigestListError naming the first bad line. Pure."""
    entries = []
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = LIST_LINE.fullmatch(line)
        if match is None:
            shown = line if len(line) <= 60 else line[:57] + "..."
            raise DigestListError(
                f"digest list {source}, line {number}, is not '<digest>  <name>': {shown!r}.",
                hint="each line is sha256:<64 hex digits>, two spaces and a bundle name, as freeze --digests "
                "writes it; restore the line from the repository's history.",
            )
        entries.append(DigestEntry(DIGEST_PREFIX + match.group(1).lower(), match.group(2), number))
    return DigestList(source, tuple(entries))


def read_digest_list(path: Path, *, missing_ok: bool = False) -> DigestList:
    """A digest list from disk, read with a size limit. A missing file is an error
    unless ``missing_ok`` (freeze creates the list)."""
    if missing_ok and not path.exists() and not path.is_symlink():
        return DigestList(str(path), ())
    try:
        data = read_bounded(
            path,
            f"digest list {path}",
            code="digests",
            missing_hint="pass the file freeze --digests appended to, e.g. audits/DIGESTS.",
            max_bytes=DIGEST_LIST_MAX_BYTES,
            max_hint="pass the list freeze --digests writes; it grows by one short line per bundle.",
        )
    except IrrAuditError as error:
        code = error.code if error.code == "digests-not-found" else DigestListError.code
        raise DigestListError(error.message, hint=error.hint, code=code) from None
    refuse_foreign_mark(data, f"digest list {path}", code=DigestListError.code, error=DigestListError)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DigestListError(
            f"digest list {path} is not UTF-8 (byte {exc.start}).", hint="pass the list freeze --digests writes."
        ) from None
    return parse_digest_list(text, str(path))


def listed_problem(digests: DigestList, name: str, digest: str) -> str | None:
    """Why ``digest`` is not the one the list anchors for ``name``, or None. Pure."""
    entries = digests.lookup(name)
    if not entries:
        return f"{name} is not in the digest list {digests.source}"
    if len({entry.digest for entry in entries}) > 1:
        lines = ", ".join(str(entry.line) for entry in entries)
        return (
            f"the digest list {digests.source} gives {name} different digests (lines {lines}); "
            "a line was added later: see the list's history"
        )
    if entries[0].digest != digest:
        return (
            f"its digest {digest} is not the one anchored for {name} in {digests.source} "
            f"(line {entries[0].line}: {entries[0].digest})"
        )
    return None


def check_list_target(path: Path, inputs: Iterable[Path | None]) -> DigestList:
    """Before a command writes anything: the digest list it will append to passes the output
    check (never a file the command reads, in a folder it reads or in a bundle: io.outputs)
    and is a digest list (never another file). ``inputs`` are the command's arguments as
    given. Returns the list."""
    check_outputs(inputs, "--digests", files=[path])
    return read_digest_list(path, missing_ok=True)


def append_digest(path: Path, digest: str, name: str) -> int:
    """Append one line to a digest list, creating the list (and its folder) if missing;
    earlier lines are never rewritten. Returns the new line's number."""
    current = read_digest_list(path, missing_ok=True)
    problem = listed_problem(current, name, digest)
    if current.lookup(name) and problem is None:
        return current.lookup(name)[0].line  # already anchored with this very digest
    if current.lookup(name):
        raise DigestListError(
            f"{problem}; the line for the new one was not added.",
            hint=f"add it by hand if it is right: {digest_line(digest, name)}",
            code="digests-conflict",
        )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            size = os.lseek(descriptor, 0, os.SEEK_END)
            lead = b"\n" if size and not _ends_with_newline(path) else b""
            _append_whole(descriptor, size, lead + (digest_line(digest, name) + "\n").encode("utf-8"))
        finally:
            os.close(descriptor)
    except OSError as exc:
        raise OutputError(
            f"cannot append to the digest list {path}: {exc.strerror or exc}.",
            hint=f"add this line to it by hand: {digest_line(digest, name)}",
            code="output-unwritable",
        ) from None
    return read_digest_list(path).lookup(name)[-1].line


def _append_whole(descriptor: int, size: int, line: bytes) -> None:
    """Append the line and flush it to disk, or cut the list back to ``size``: half a line (a full
    disk, a stopped run) would leave a list that no verify can read."""
    try:
        written = 0
        while written < len(line):
            written += os.write(descriptor, line[written:])
        os.fsync(descriptor)
    except BaseException:
        os.ftruncate(descriptor, size)
        raise


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as stream:
        stream.seek(-1, os.SEEK_END)
        return stream.read(1) == b"\n"
