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

Light on purpose (no pandas, no pyarrow): the output checks run before anything else.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from irr_audit.errors import OutputError
from irr_audit.io.files import check_usable

RUN_KEY = "run"
PARTIAL_MARK = ".partial-"
REPLACED_MARK = ".replaced-"
JOIN_RECORD = "summary.json"
SAMPLE_RECORD = "sample.json"
BUNDLE_MANIFEST = "manifest.json"
RECORD_FILES = {JOIN_RECORD: "join", SAMPLE_RECORD: "sample"}
RUN_ID_OF = "sha256 of the lines '<file>\\t<sha256>\\n' of every other file, sorted by file"
SHA256 = re.compile(r"[0-9a-f]{64}")
# What a file manager leaves in a folder someone opened: replaced with the folder, never a reason to refuse it.
FILE_MANAGER_FILES = frozenset({".DS_Store", "Thumbs.db", "desktop.ini"})


# --- the run record -------------------------------------------------------------------


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def run_record(files: Mapping[str, bytes]) -> dict[str, Any]:
    """The run record of a folder's files (all but the record file itself). Pure.

    The id is derived from the files' content, so the same inputs give the same
    bytes; two runs that wrote different files have different ids.

    >>> record = run_record({"b.csv": b"1", "a.csv": b""})
    >>> list(record["files"]), record["id"][:12]
    (['a.csv', 'b.csv'], '964f90ee8abf')
    """
    return record_of({name: hashlib.sha256(data).hexdigest() for name, data in files.items()})


def record_of(digests: Mapping[str, str]) -> dict[str, Any]:
    """The run record of files known by their sha256 (name -> hex digest). Pure."""
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
        member_problem(name) is None and isinstance(digest, str) and SHA256.fullmatch(digest)
        for name, digest in files.items()
    ):
        return None
    return dict(files)


def member_problem(name: object) -> str | None:
    """Why a name from a run record does not name a file inside the folder, or None."""
    if not isinstance(name, str) or not name or "\\" in name or "\x00" in name or name.startswith("/"):
        return "is not a relative path"
    if any(part in ("", ".", "..") for part in name.split("/")):
        return "has a '..', '.' or empty part"
    return None


def read_record(path: Path) -> Any:
    """A record file's JSON, or None when it is missing or not JSON."""
    try:
        return json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return None


@dataclass(frozen=True)
class Mismatch:
    """A file of the run record that is not as the run wrote it."""

    file: str
    detail: str


def run_mismatches(folder: Path, files: Mapping[str, str]) -> list[Mismatch]:
    """The files of ``folder`` that are not as its run record says (missing, a link, other bytes)."""
    found = []
    for name, recorded in sorted(files.items()):
        path = folder.joinpath(*name.split("/"))
        link = next((part for part in _prefixes(folder, name) if part.is_symlink()), None)
        if link is not None:
            found.append(Mismatch(name, f"{link.relative_to(folder).as_posix()} is a symbolic link"))
        elif not path.is_file():
            found.append(Mismatch(name, "is missing"))
        else:
            digest = sha256_file(path)
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


def replace_folder(
    out: Path,
    files: Mapping[str, bytes] | Iterable[tuple[str, bytes]],
    record: Callable[[dict[str, str]], Mapping[str, bytes]] | None = None,
) -> list[Path]:
    """Make ``out`` hold exactly ``files`` (relative POSIX path -> bytes, or pairs made one
    at a time so that only one is in memory), replacing any folder there as a whole.
    ``record``, when given, makes the last files (the run record) from the sha256 of
    those written. Returns the paths written, under their final names.

    The caller has checked that whatever the old folder holds may go."""
    parent = out.parent
    token = secrets.token_hex(6)
    building = parent / f".{out.name}{PARTIAL_MARK}{token}"
    aside = parent / f".{out.name}{REPLACED_MARK}{token}"
    try:
        parent.mkdir(parents=True, exist_ok=True)
        building.mkdir()  # not mkdtemp: the folder gets the usual permissions
    except OSError as exc:
        raise _unwritable(out, exc) from None
    moved_aside = False
    digests: dict[str, str] = {}
    try:
        for name, data in files.items() if isinstance(files, Mapping) else files:
            _write_new_file(building.joinpath(*name.split("/")), data)
            digests[name] = hashlib.sha256(data).hexdigest()
        last = record(dict(digests)) if record else {}
        for name, data in last.items():
            _write_new_file(building.joinpath(*name.split("/")), data)
        _fsync_tree(building)
        if out.exists() or out.is_symlink():
            _rename(out, aside)
            moved_aside = True
        _rename(building, out)
        _fsync_folder(parent)
    except BaseException as exc:
        shutil.rmtree(building, ignore_errors=True)
        if moved_aside and not out.exists():
            os.rename(aside, out)  # the old folder back, as it was
        if isinstance(exc, OSError):
            raise _unwritable(out, exc) from None
        raise
    if moved_aside:
        shutil.rmtree(aside, ignore_errors=True)
    return [out.joinpath(*name.split("/")) for name in sorted([*digests, *last])]


def leftovers(out: Path) -> list[Path]:
    """The leftover folders of replacements of ``out`` that were stopped (killed)."""
    if not out.parent.is_dir():
        return []
    prefix = f".{out.name}."
    return sorted(
        path
        for path in out.parent.iterdir()
        if path.name.startswith(prefix) and (PARTIAL_MARK in path.name or REPLACED_MARK in path.name)
    )


def _write_new_file(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "xb") as stream:
        stream.write(data)
        stream.flush()
        os.fsync(stream.fileno())


def _rename(source: Path, target: Path) -> None:
    os.rename(source, target)


def _fsync_tree(folder: Path) -> None:
    for root, _, _ in os.walk(folder, topdown=False):
        _fsync_folder(Path(root))


def _fsync_folder(folder: Path) -> None:
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
        elif any((path / name).is_file() for name in (JOIN_RECORD, SAMPLE_RECORD, BUNDLE_MANIFEST)):
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
