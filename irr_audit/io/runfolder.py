"""Output folders that hold one run or nothing (`join --out`, `sample --out`).

A run's folder is built as a hidden sibling, flushed to disk, then swapped in: the
old folder is renamed aside, the new one renamed into its place, and the old one
deleted. A kill at any point leaves the old folder whole, the new folder whole, or
no folder and the old one whole beside it under a leftover name:

    .<name>.partial-<hex>    a folder being built (whole only once it is renamed)
    .<name>.replaced-<hex>   the old folder, set aside until the new one is in place

The folder's record file (join's summary.json, sample's sample.json) carries the
run record: the sha256 of every other file the run wrote and a run id derived from
them. A reader checks each file against it, so a folder that mixes two runs is refused.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import shutil
import stat
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import FIRST_COMPLETED, FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path, PureWindowsPath
from typing import Any

from irr_audit._threads import Workers
from irr_audit.errors import IrrAuditError, OutputError
from irr_audit.io.display import listed
from irr_audit.io.files import check_usable, read_bounded, sha256_file
from irr_audit.io.limits import load_json

RUN_KEY = "run"
PARTIAL_MARK = ".partial-"
REPLACED_MARK = ".replaced-"
# The record file of each folder irr-audit writes, named here once.
JOIN_RECORD = "summary.json"
SAMPLE_RECORD = "sample.json"
IMPORT_RECORD = "import.json"
BUNDLE_MANIFEST = "manifest.json"
BUNDLE_SHEETS = "sheets"
BUNDLE_RULE = "rule"
CODEBOOK_BUNDLE_FORMAT = "irr-audit-codebook-bundle/1"  # manifest.json's format in the bundle of a codebook
RECORD_FILES = {JOIN_RECORD: "join", SAMPLE_RECORD: "sample", IMPORT_RECORD: "import"}
RUN_ID_OF = "sha256 of the lines '<file>\\t<sha256>\\n' of every other file, sorted by file"
SHA256 = re.compile(r"[0-9a-f]{64}")
# What a file manager leaves in a folder someone opened: replaced with the folder, never a reason to refuse it.
FILE_MANAGER_FILES = frozenset({".DS_Store", "Thumbs.db", "desktop.ini"})


# --- the run record -------------------------------------------------------------------


def record_of(digests: Mapping[str, str]) -> dict[str, Any]:
    """The run record of files known by their sha256 (name -> hex digest). Pure.

    The id is derived from the files' content, so the same inputs give the same
    bytes; two runs that wrote different files have different ids.

    >>> from irr_audit.io.files import sha256_hex
    >>> record = record_of({"b.csv": sha256_hex(b"1"), "a.csv": sha256_hex(b"")})
    >>> list(record["files"]), record["id"][:12]
    (['a.csv', 'b.csv'], '964f90ee8abf')
    """
    ordered = {name: digests[name] for name in sorted(digests)}
    listing = "".join(f"{name}\t{digest}\n" for name, digest in ordered.items())
    return {"id": hashlib.sha256(listing.encode("utf-8")).hexdigest(), "of": RUN_ID_OF, "files": ordered}


def recorded_files(record: Any) -> dict[str, str] | None:
    """name -> sha256 from a record file's JSON, or None when it holds no valid run record."""
    run = record.get(RUN_KEY) if isinstance(record, dict) else None
    files = run.get("files") if isinstance(run, dict) else None
    if not (isinstance(run, dict) and isinstance(run.get("id"), str) and isinstance(files, dict)):
        return None
    if not all(
        member_path_problem(name) is None and isinstance(digest, str) and SHA256.fullmatch(digest)
        for name, digest in files.items()
    ):
        return None
    return dict(files)


def member_path_problem(text: object) -> str | None:
    """Why a path read from a manifest or a run record may not name a file inside its folder, or None.

    >>> member_path_problem("sheets/alice smith.csv") is None
    True
    >>> member_path_problem("sheets/../../etc/passwd")
    "has a '..', '.' or empty part"
    """
    if not isinstance(text, str) or not text:
        return "is not a non-empty text path"
    if "\\" in text or "\x00" in text:
        return "contains a backslash or NUL"
    if text.startswith("/") or PureWindowsPath(text).drive:
        return "is absolute"
    if any(part in ("", ".", "..") for part in text.split("/")):
        return "has a '..', '.' or empty part"
    return None


def read_record(path: Path) -> Any:
    """A record file's JSON (read within the limits, as every JSON file), or None when it is
    missing or not JSON."""
    try:
        return load_json(read_bounded(path, f"{path}"), f"{path}", own_file=True)
    except (IrrAuditError, ValueError):  # not JSON: a ValueError, as from json.loads
        return None


@dataclass(frozen=True)
class Mismatch:
    """A file of the run record that is not as the run wrote it."""

    file: str
    detail: str


def run_mismatches(folder: Path, files: Mapping[str, str], read: Mapping[str, str] | None = None) -> list[Mismatch]:
    """The files of ``folder`` that are not as its run record says (missing, a link, other bytes).
    ``read`` gives the sha256 of files the caller has already read, which are not read again."""
    found = []
    for name, recorded in sorted(files.items()):
        path = folder.joinpath(*name.split("/"))
        link = next((part for part in _prefixes(folder, name) if part.is_symlink()), None)
        if link is not None:
            found.append(Mismatch(name, f"{link.relative_to(folder).as_posix()} is a symbolic link"))
        elif not path.is_file():
            found.append(Mismatch(name, "is missing"))
        else:
            digest = (read or {}).get(name) or sha256_file(path)
            if digest != recorded:
                found.append(Mismatch(name, f"has sha256 {digest[:12]}..., the run record says {recorded[:12]}..."))
    return found


def _prefixes(folder: Path, name: str) -> list[Path]:
    parts = name.split("/")
    return [folder.joinpath(*parts[: end + 1]) for end in range(len(parts))]


# --- what an output folder holds --------------------------------------------------------


@dataclass(frozen=True)
class Occupants:
    """What an existing output folder holds besides the previous run's files, as
    relative POSIX paths."""

    changed: list[str] = field(default_factory=list)  # the previous run wrote them; changed since
    foreign: list[str] = field(default_factory=list)  # files (and links) no run of the command wrote
    folders: list[str] = field(default_factory=list)  # folders no run of the command wrote

    @property
    def files(self) -> list[str]:
        return sorted(self.changed + self.foreign)


def refuse_unowned_folders(out: Path, found: Occupants, command: str) -> None:
    """A run replaces its --out folder as a whole: a folder in it the command did not write is
    refused, never deleted."""
    if found.folders:
        raise OutputError(
            f"--out {out} holds the folder {listed(found.folders)}, which {command} did not write; {command} "
            "replaces its output folder as a whole and never deletes a folder it did not write.",
            hint="move the folder out, or choose another --out folder.",
            code="output-folder-not-ours",
        )


def refuse_strays(out: Path, found: Occupants, command: str, force: bool) -> list[str]:
    """Refuse an --out folder holding what no run of ``command`` wrote (unless ``force``: those
    files are then deleted with the folder, and listed in the return value)."""
    refuse_unowned_folders(out, found, command)
    strays = [f"{name} (changed since {command} wrote it)" for name in found.changed] + found.foreign
    if strays and not force:
        raise OutputError(
            f"--out {out} holds {len(strays)} file{'s' if len(strays) != 1 else ''} {command} did not write: "
            f"{listed(strays)}.",
            hint="move the files out or choose another --out folder; --force replaces the folder and deletes them.",
            code="output-folder-not-ours",
        )
    return found.files


def occupants(folder: Path, claimed: Mapping[str, str | None]) -> Occupants:
    """What ``folder`` holds that is not a file ``claimed`` lists: claimed maps each
    file the previous run wrote to its sha256 (None: whatever its bytes)."""
    if not folder.is_dir() or folder.is_symlink():
        return Occupants()
    owned_folders = {"/".join(name.split("/")[:end]) for name in claimed for end in range(1, name.count("/") + 1)}
    result = Occupants()
    for root, folders, names in os.walk(folder):
        at = Path(root).relative_to(folder)
        for name in sorted(folders):
            relative = (at / name).as_posix()
            if relative not in owned_folders or (Path(root) / name).is_symlink():
                folders.remove(name)
                (result.foreign if (Path(root) / name).is_symlink() else result.folders).append(relative)
        for name in sorted(names):
            relative = (at / name).as_posix()
            path = Path(root) / name
            if name in FILE_MANAGER_FILES and path.is_file() and not path.is_symlink():
                continue
            if relative not in claimed or path.is_symlink() or not path.is_file():
                result.foreign.append(relative)
            elif claimed[relative] is not None and sha256_file(path) != claimed[relative]:
                result.changed.append(relative)
    return result


# --- writing a folder as one run ----------------------------------------------------------


@dataclass(frozen=True)
class Replacement:
    """What writing a run's folder did: the files written (under their final names) and the
    files of the old folder that the run did not write identically, replaced or deleted
    (only with --force; relative POSIX paths)."""

    written: list[Path]
    removed: list[str] = field(default_factory=list)


# A file's bytes, whole or as chunks made one at a time (a large file is never whole in memory).
FileData = bytes | Iterable[bytes | memoryview]
FileSource = Mapping[str, bytes] | Iterable[tuple[str, FileData]]


FILES_AT_ONCE = 3  # files given as chunks that are written at the same time


def build_folder(
    target: Path,
    files: FileSource,
    record: Callable[[dict[str, str]], Mapping[str, bytes]] | None = None,
    *,
    read_only: bool = False,
) -> tuple[Path, list[str]]:
    """Build a new folder beside ``target`` under a hidden name (``.<name>.partial-<hex>``),
    holding exactly ``files`` (relative POSIX path -> bytes, or pairs made one at a time so
    that only one is in memory, each file's bytes whole or as chunks), then the files
    ``record`` makes from the sha256 of those (the run record), all flushed to disk: nothing
    carries ``target``'s name yet. Returns the folder and the names written. On any failure
    the partial folder is removed and the error raised (an OSError as it is).

    Whole files are written in their order; files given as chunks are written beside them,
    up to FILES_AT_ONCE at a time (a new file's pages cost the system more than the bytes
    cost to make: files side by side spread that over the cores)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    building = target.parent / f".{target.name}{PARTIAL_MARK}{secrets.token_hex(6)}"
    building.mkdir()  # not mkdtemp: the folder gets the usual permissions
    stop = threading.Event()  # set on a failure: the files still being written stop at their next chunk
    try:
        with Workers(max_workers=FILES_AT_ONCE) as writers:
            try:
                digests = _write_files(building, files.items() if isinstance(files, Mapping) else files, writers, stop)
            except BaseException:
                stop.set()
                raise
        last = record(dict(digests)) if record else {}
        for name, data in last.items():
            _write_new_file(building.joinpath(*name.split("/")), data)
        if read_only:
            _make_read_only(building)
        _fsync_tree(building)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    return building, sorted([*digests, *last])


def _write_files(
    building: Path,
    files: Iterable[tuple[str, FileData]],
    writers: ThreadPoolExecutor,
    stop: threading.Event,
) -> dict[str, str]:
    """Write ``files`` into ``building``; returns their sha256 (in the order of ``files``).
    Whole files are written here, chunked ones on ``writers``, at most FILES_AT_ONCE at a time.
    The first file to fail raises at once (the caller stops the others)."""
    written: dict[str, str | Future[str]] = {}
    for name, data in files:
        _raise_any_failure(written)
        path = building.joinpath(*name.split("/"))
        if isinstance(data, bytes):
            written[name] = _write_new_file(path, data)
            continue
        while len(_running(written)) >= FILES_AT_ONCE:
            wait(_running(written), return_when=FIRST_COMPLETED)
        written[name] = writers.submit(_write_new_file, path, _until(stop, data))
    wait(_chunked(written), return_when=FIRST_EXCEPTION)  # (at once when one has failed already)
    _raise_any_failure(written)
    return {name: step.result() if isinstance(step, Future) else step for name, step in written.items()}


def _chunked(written: Mapping[str, str | Future[str]]) -> list[Future[str]]:
    return [step for step in written.values() if isinstance(step, Future)]


def _running(written: Mapping[str, str | Future[str]]) -> list[Future[str]]:
    return [step for step in _chunked(written) if not step.done()]


def _raise_any_failure(written: Mapping[str, str | Future[str]]) -> None:
    """Raise the error of a file that failed, if one has (whether or not it was waited for)."""
    for step in _chunked(written):
        if step.done():
            step.result()


class _Stopped(Exception):
    """Another file of the folder failed: this one stops (the folder is removed)."""


def _until(stop: threading.Event, chunks: Iterable[bytes | memoryview]) -> Iterator[bytes | memoryview]:
    for chunk in chunks:
        if stop.is_set():
            raise _Stopped
        yield chunk


def replace_folder(
    out: Path, files: FileSource, record: Callable[[dict[str, str]], Mapping[str, bytes]] | None = None
) -> list[Path]:
    """Make ``out`` hold exactly ``files`` (as ``build_folder`` takes them), replacing any
    folder there as a whole: the new folder is built beside it, then swapped in.
    Returns the paths written, under their final names.

    The caller has checked that whatever the old folder holds may go."""
    try:
        building, names = build_folder(out, files, record)
    except OSError as exc:
        raise _unwritable(out, exc) from None
    aside = out.parent / f".{out.name}{REPLACED_MARK}{secrets.token_hex(6)}"
    moved_aside = False
    try:
        if out.exists() or out.is_symlink():
            os.rename(out, aside)
            moved_aside = True
        os.rename(building, out)
        fsync_folder(out.parent)
    except BaseException as exc:
        shutil.rmtree(building, ignore_errors=True)
        if moved_aside and not out.exists():
            os.rename(aside, out)  # the old folder back, as it was
        if isinstance(exc, OSError):
            raise _unwritable(out, exc) from None
        raise
    if moved_aside:
        shutil.rmtree(aside, ignore_errors=True)
    return [out.joinpath(*name.split("/")) for name in names]


def _write_new_file(path: Path, data: FileData) -> str:
    """Write a new file, whole or chunk by chunk, and return its sha256 (hex), hashed as written.
    (Chunks are best made ahead on other threads, as join's are: this thread only writes and hashes.)"""
    path.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    with open(path, "xb") as stream:
        for chunk in [data] if isinstance(data, bytes) else data:
            stream.write(chunk)
            digest.update(chunk)
        stream.flush()
        os.fsync(stream.fileno())
    return digest.hexdigest()


def _make_read_only(folder: Path) -> None:
    read_only = stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH
    for root, _, names in os.walk(folder):
        for name in names:
            os.chmod(Path(root) / name, read_only)


def _fsync_tree(folder: Path) -> None:
    for root, _, _ in os.walk(folder, topdown=False):
        fsync_folder(Path(root))


def fsync_folder(folder: Path) -> None:
    """Flush a folder's entries (a rename into it) to disk, where the system allows it."""
    try:
        handle = os.open(folder, os.O_RDONLY)
    except OSError:
        return  # some systems cannot open a folder; the rename is still atomic there
    try:
        os.fsync(handle)
    except OSError:
        pass
    finally:
        os.close(handle)


def _unwritable(out: Path, exc: OSError) -> OutputError:
    return OutputError(
        f"cannot write into {out}: {exc.strerror or exc}.",
        hint="choose an output folder you can write to (its parent folder too: the new folder is built beside it).",
        code="output-unwritable",
    )


# --- the folders irr-audit writes -----------------------------------------------------------


def is_bundle(path: Path) -> bool:
    """An audit bundle as freeze makes it: manifest.json beside sheets/ or rule/ (a manifest.json
    alone, as a web project has, makes no bundle)."""
    return (
        path.is_dir()
        and (path / BUNDLE_MANIFEST).is_file()
        and any((path / part).is_dir() for part in (BUNDLE_SHEETS, BUNDLE_RULE))
    )


def is_run_folder(path: Path) -> bool:
    """A folder irr-audit wrote: a join or sample folder (its record file), or an audit bundle."""
    return path.is_dir() and (is_bundle(path) or any((path / name).is_file() for name in RECORD_FILES))


# --- the files a command reads ---------------------------------------------------------------


def files_read(paths: Iterable[Path | None]) -> list[Path]:
    """Every file a command reads from these arguments, for the output checks: a file
    itself; for a folder irr-audit wrote (a join or sample folder, an audit bundle)
    every file in it, and the sheets and sample a join folder names."""
    paths = list(paths)
    check_usable(paths)
    found: list[Path] = []
    for path in paths:
        if path is None:
            continue
        if not path.is_dir():
            found.append(path)
        elif is_run_folder(path):
            found += _files_below(path)
            found += _join_folder_sources(path)
        else:
            found += [child for child in _children(path) if child.is_file()]
    return found


def _files_below(folder: Path) -> list[Path]:
    return [Path(root) / name for root, _, names in os.walk(folder) for name in names]


def _children(folder: Path) -> list[Path]:
    try:
        return list(folder.iterdir())
    except OSError:
        return []


def _join_folder_sources(folder: Path) -> list[Path]:
    """The sheets (and sample folder) a join folder's summary names; nothing when it names none."""
    summary = read_record(folder / JOIN_RECORD)
    if not isinstance(summary, dict):
        return []
    sheets = summary.get("sheets")
    found = []
    for record in sheets if isinstance(sheets, list) else []:
        if isinstance(record, dict):
            found += [
                Path(record[key]) if key == "path" else folder / record[key]
                for key in ("path", "relative_path")
                if isinstance(record.get(key), str)
            ]
    sample = summary.get("sample")
    if isinstance(sample, dict) and isinstance(sample.get("folder"), str) and Path(sample["folder"]).is_dir():
        found += _files_below(Path(sample["folder"]))
    return found
