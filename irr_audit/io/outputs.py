"""Writing files: atomically (a kill leaves the old file or the new one, never half),
as byte-stable JSON, and safely for spreadsheets (text that Excel would run as a
formula is neutralised); and refusing an output that would overwrite an input.
A whole DataFrame as CSV is irr_audit.io.framecsv (pandas and pyarrow, which
nothing here needs: commands that only check and write small files stay light)."""

from __future__ import annotations

import io
import json
import os
import re
import secrets
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from irr_audit.errors import OutputError
from irr_audit.io.display import UNSHOWN_BUT_WHITESPACE
from irr_audit.io.files import check_usable, resolved
from irr_audit.io.runfolder import RECORD_FILES, files_read, is_bundle, read_record, recorded_files

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
FORMULA_PATTERN = r"[=+\-@\t\r]"
# ASCII digits only, as a spreadsheet reads a number (and as pyarrow's RE2 reads this pattern in
# the column-wise writers): "-\u0663" is text that starts like a formula, and is neutralised.
PLAIN_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?", re.ASCII)
QUOTE = "'"


def spreadsheet_safe(text: str) -> str:
    """Prefix a quote to text a spreadsheet would read as a formula (OWASP CSV injection),
    and to text that already starts with a quote, so that no two texts come out the same
    (``=a`` and ``'=a`` stay two coders) and :func:`spreadsheet_original` undoes it exactly.

    Plain numbers such as "-1" are left alone: they are data, not formulas.

    >>> spreadsheet_safe("=HYPERLINK(1)"), spreadsheet_safe("'=a"), spreadsheet_safe("-1"), spreadsheet_safe("ok")
    ("'=HYPERLINK(1)", "''=a", '-1', 'ok')
    """
    if text.startswith(QUOTE) or (text.startswith(FORMULA_TRIGGERS) and not PLAIN_NUMBER.fullmatch(text)):
        return QUOTE + text
    return text


def spreadsheet_original(text: str) -> str:
    """The text that :func:`spreadsheet_safe` made ``text`` from: its inverse on everything it writes.
    Text it never writes (a quote before ordinary text) is returned as it is.

    >>> spreadsheet_original("'=HYPERLINK(1)"), spreadsheet_original("''=a"), spreadsheet_original("'ok")
    ('=HYPERLINK(1)', "'=a", "'ok")
    """
    if text.startswith(QUOTE) and spreadsheet_safe(text[1:]) == text:
        return text[1:]
    return text


# A field holding any of these is quoted. The csv module (Python 3.11) leaves a lone carriage
# return bare when lines end with "\n", and every CSV reader then splits the row there.
CSV_SPECIAL = ',"\n\r'


def csv_field(text: str) -> str:
    """One CSV field, quoted only when it must be (as the csv module's QUOTE_MINIMAL, and a lone CR too)."""
    if any(character in text for character in CSV_SPECIAL):
        return '"' + text.replace('"', '""') + '"'
    return text


def csv_line(cells: Sequence[str]) -> str:
    if len(cells) == 1 and not cells[0]:  # a lone empty field is quoted, or the line would read as blank
        return '""\n'
    return ",".join(map(csv_field, cells)) + "\n"


@dataclass(frozen=True)
class Same:
    """A column with the same cell on every row (a coder's name in that coder's sheet): what
    irr_audit.io.csvtables.table_csv_columns takes beside columns of cells."""

    cell: object


def csv_text(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """CSV for people and spreadsheets: every cell as text, formulas neutralised."""
    lines = [csv_line([spreadsheet_safe(str(cell)) for cell in header])]
    lines += [csv_line(["" if cell is None else spreadsheet_safe(str(cell)) for cell in row]) for row in rows]
    return "".join(lines)


def render_json(document: dict[str, Any]) -> str:
    """Byte-stable JSON: sorted keys, fixed indentation, a trailing newline, and nothing raw
    that a terminal would obey or a reader take for a line break (:func:`_escaped_json`)."""
    encoder = json.JSONEncoder(indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)
    buffer = io.StringIO()  # what json.dumps writes, without holding every piece of it at once
    for chunk in encoder.iterencode(document):
        buffer.write(chunk)
    buffer.write("\n")
    return _escaped_json(buffer.getvalue())


def json_line(record: Mapping[str, Any], *, compact: bool = False) -> str:
    """One JSON object on one line of JSON Lines, escaped as :func:`render_json` escapes.

    >>> json_line({"id": "a\\u2028b\\x85", "row": 2}), json_line({"row": None}, compact=True)
    ('{"id": "a\\\\u2028b\\\\u0085", "row": 2}\\n', '{"row":null}\\n')
    """
    return jsonl_text([record], compact=compact)


def jsonl_text(records: Iterable[Mapping[str, Any]], *, compact: bool = False) -> str:
    """JSON Lines: :func:`json_line` of each record (keys in their order; ``compact``
    without spaces after ``,`` and ``:``)."""
    separators = (",", ":") if compact else (", ", ": ")
    encoder = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=separators)
    return _escaped_json("".join(encoder.encode(record) + "\n" for record in records))


# json escapes the C0 controls itself; these it leaves raw: DEL and the C1 controls, the
# bidi controls, the line and paragraph separators (line breaks to some JSON Lines readers)
# and lone surrogates (from file names that were not UTF-8, which no UTF-8 file can hold).
# Outside strings JSON has none of them, so escaping them keeps every value as it was.
_JSON_RAW_CONTROL = UNSHOWN_BUT_WHITESPACE
_JSON_RAW_ASCII = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # those of them that are ASCII


def _escaped_json(text: str) -> str:
    # all-ASCII text (most logs) can hold only the ASCII ones: a plain character class scans
    # it several times faster than the pattern with its look-ahead
    pattern = _JSON_RAW_ASCII if text.isascii() else _JSON_RAW_CONTROL
    return pattern.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def escaped_json(text: str) -> str:
    """JSON text (or a piece of it: a string json encoded) with what json leaves raw escaped, as
    :func:`render_json` escapes it."""
    return _escaped_json(text)


def refuse_column_collisions(columns: Sequence[tuple[str, str]], output: str) -> None:
    """The columns of a CSV, as written (neutralised), must all differ: a coder named like another
    column (``units``, say) would overwrite or shadow it. ``columns`` are (name, where it comes
    from: a sheet, or irr-audit itself)."""
    seen: dict[str, tuple[str, str]] = {}
    for name, origin in columns:
        written = spreadsheet_safe(name)
        if written in seen:
            first = seen[written]
            raise OutputError(
                f"{output} would have two columns named {written!r}: {first[0]!r} ({first[1]}) "
                f"and {name!r} ({origin}).",
                hint="give the coder another name (the sheet's coder column or its file name); "
                "comment_id, fully_coded and units name columns of irr-audit's files.",
                code="output-column-collision",
            )
        seen[written] = (name, origin)


def output_file_path(text: str, option: str, example: str = "audit.html") -> Path:
    """An output file's path as given (``text``) as a Path, refused when its spelling names a
    folder (`out/`, `out/.`): a Path forgets the trailing separator, and the file would be
    written as `out`."""
    if text and os.path.split(text)[1] in ("", ".", ".."):
        named = os.path.normpath(text)
        raise OutputError(
            f"{option} {text!r} names a folder (the path ends in a separator, '.' or '..'), and {option} "
            "writes a file.",
            hint=f"name the file, e.g. {option} {os.path.join(named, example)}.",
            code="output-is-a-folder",
        )
    return Path(text)


def _refuse_folder(path: Path) -> None:
    if path.is_dir():
        raise OutputError(
            f"cannot write {path}: it is a folder.",
            hint="give a file name, e.g. audit.html.",
            code="output-is-a-folder",
        )


def write_bytes_atomic(path: Path, data: bytes | Iterable[bytes]) -> None:
    """Write to a temporary file in the same folder, flush it to disk, then rename.
    A symlink is refused, not replaced (refuse_unsafe_outputs says so before a command runs).
    ``data`` may come in pieces, written as they come (a failure on the way leaves no file)."""
    folder = path.parent
    _refuse_symlink(path)
    _refuse_folder(path)
    if folder.exists() and not folder.is_dir():
        raise OutputError(
            f"cannot write into {folder}: it is a file, not a folder.",
            hint="choose an output folder that does not exist yet or is a folder.",
            code="output-unwritable",
        )
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, temporary = _new_temporary(folder, path.name)
    except OSError as exc:
        raise OutputError(
            f"cannot write into {folder}: {exc.strerror}.",
            hint="choose an output folder you can write to.",
            code="output-unwritable",
        ) from None
    try:
        with os.fdopen(handle, "wb") as stream:
            for piece in [data] if isinstance(data, bytes) else data:
                stream.write(piece)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except OSError as exc:
        Path(temporary).unlink(missing_ok=True)
        raise OutputError(
            f"cannot write {path}: {exc.strerror}.",
            hint="check the folder's permissions and free space.",
            code="output-unwritable",
        ) from None
    except BaseException:  # the pieces' maker failed (or the run was stopped): no half file left
        Path(temporary).unlink(missing_ok=True)
        raise


def _new_temporary(folder: Path, name: str) -> tuple[int, str]:
    """A new, hidden file beside the output, created exclusively with mode 0666 so that the
    system applies the umask (mkstemp's 0600 would leave outputs unreadable to the group)."""
    for _ in range(100):
        temporary = str(folder / f".{name}.{secrets.token_hex(6)}.tmp")
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
            return os.open(temporary, flags, 0o666), temporary
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {name} in {folder}")


def write_text_atomic(path: Path, text: str) -> None:
    write_bytes_atomic(path, text.encode("utf-8"))


def refuse_unsafe_outputs(inputs: Iterable[Path], files: Iterable[Path] = (), folders: Iterable[Path] = ()) -> None:
    """Refuse, before anything is read or written, an output that could change what a
    command reads or what an audit bundle froze.

    ``inputs`` are every file the command reads (runfolder.files_read expands the
    folders among its arguments); ``files`` the files it will replace (report
    --output); ``folders`` the output folders it replaces as a whole (join --out).
    Paths are compared after following symlinks, and by device and inode, so a hard
    link or a case-insensitive spelling of an input is an input too.
    """
    files, folders = list(files), list(folders)
    check_usable([*files, *folders])
    known = _Inputs.of(inputs)
    for path in files:
        _check_output_file(path, known)
    for folder in folders:
        _check_output_folder(folder, known)


def check_outputs(
    inputs: Iterable[Path | None], option: str, files: Iterable[Path] = (), folders: Iterable[Path] = ()
) -> None:
    """:func:`refuse_unsafe_outputs` for a command's arguments as given (None skipped, the
    folders irr-audit wrote expanded to the files in them, runfolder.files_read); the message
    starts with the option that named the output."""
    try:
        refuse_unsafe_outputs(files_read(inputs), files=files, folders=folders)
    except OutputError as error:
        if error.message.startswith(option):
            raise
        raise OutputError(f"{option}: {error.message}", hint=error.hint, code=error.code) from None


def refuse_shared_outputs(outputs: Iterable[tuple[str, Path | None]]) -> None:
    """Refuse two outputs of one command that are one file (the same path, ``./x`` and ``x``,
    a symbolic or a hard link): the second written would silently replace the first.
    ``outputs``: (the option that names it, the path), None for an output not asked for."""
    seen: list[tuple[str, Path]] = []
    for option, path in outputs:
        if path is None:
            continue
        earlier = _Inputs.of([given for _, given in seen]).same_as(path)
        if earlier is not None:
            first = next(name for name, given in seen if given == earlier)
            raise OutputError(
                f"{first} {earlier} and {option} {path} are one file; the second written would replace the first.",
                hint=f"give {option} another path.",
                code="output-same-file",
            )
        seen.append((option, path))


class _Inputs:
    """The inputs by resolved path and by (device, inode)."""

    def __init__(self, by_path: dict[Path, Path], by_inode: dict[tuple[int, int], Path]):
        self.by_path = by_path
        self.by_inode = by_inode

    @classmethod
    def of(cls, inputs: Iterable[Path]) -> _Inputs:
        by_path: dict[Path, Path] = {}
        by_inode: dict[tuple[int, int], Path] = {}
        for path in inputs:
            by_path.setdefault(resolved(path), path)
            identity = _identity(path)
            if identity is not None:
                by_inode.setdefault(identity, path)
        return cls(by_path, by_inode)

    def same_as(self, path: Path) -> Path | None:
        """The input that ``path`` is (the same file, by any name), or None."""
        found = self.by_path.get(resolved(path))
        identity = _identity(path)
        return found if found is not None else self.by_inode.get(identity) if identity else None

    def inside(self, folder: Path) -> Path | None:
        """An input that lies inside ``folder`` (after following symlinks), or None."""
        real = resolved(folder)
        return next((given for path, given in self.by_path.items() if path.is_relative_to(real)), None)


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        status = path.stat()
    except (OSError, ValueError):
        return None
    return (status.st_dev, status.st_ino) if stat.S_ISREG(status.st_mode) else None


def _check_output_file(path: Path, inputs: _Inputs) -> None:
    same = inputs.same_as(path)
    if same is not None:
        also = "" if str(same) == str(path) else f" ({same})"
        raise OutputError(
            f"writing {path} would overwrite an input file{also}.",
            hint="choose another output path; irr-audit never writes the files it reads.",
            code="output-overwrites-input",
        )
    _refuse_bundle(path, resolved(path).parent)
    _refuse_run_file(path)
    _refuse_symlink(path)
    _refuse_folder(path)
    if path.exists():
        mode = path.stat().st_mode
        if not stat.S_ISREG(mode):
            raise OutputError(
                f"cannot write {path}: it is not a regular file.",
                hint="give the name of a new or an ordinary file.",
                code="output-not-a-file",
            )
        if not mode & stat.S_IWUSR:
            raise OutputError(
                f"{path} is read-only; irr-audit does not replace a file that was made read-only.",
                hint="choose another file, or make it writable (chmod u+w) if it may be replaced.",
                code="output-read-only",
            )
    _refuse_unwritable(path.parent)


def _check_output_folder(folder: Path, inputs: _Inputs) -> None:
    _refuse_file_as_folder(folder, folder)
    inside = inputs.inside(folder)
    if inside is None:
        inside = next((found for entry in _entries(folder) if (found := inputs.same_as(entry)) is not None), None)
    if inside is not None:
        raise OutputError(
            f"writing {folder} would overwrite an input file: the folder holds {inside}.",
            hint="choose another --out folder; the output folder is replaced as a whole, and irr-audit never "
            "writes the files it reads.",
            code="output-overwrites-input",
        )
    _refuse_bundle(folder, resolved(folder))
    _refuse_symlink(folder)
    working = _working_folder()
    if working is not None and working.is_relative_to(resolved(folder)):
        raise OutputError(
            f"--out {folder} is the folder you are working in (or holds it); the output folder is replaced as a whole.",
            hint="choose another --out folder, e.g. a new folder inside this one.",
            code="output-folder-in-use",
        )
    _refuse_unwritable(folder.parent)


def _working_folder() -> Path | None:
    try:
        return resolved(Path.cwd())
    except OSError:  # the folder we run in was deleted: no output folder holds it
        return None


def _entries(folder: Path) -> list[Path]:
    """What an existing output folder holds, two levels deep (a run's folder has no deeper
    files; a deeper one is in a folder the run did not write, which is refused anyway)."""
    if not folder.is_dir() or folder.is_symlink():
        return []
    found = []
    for child in _listing(folder):
        found.append(child)
        if child.is_dir() and not child.is_symlink():
            found += _listing(child)
    return found


def _listing(folder: Path) -> list[Path]:
    try:
        return sorted(folder.iterdir())
    except OSError:
        return []


def _refuse_bundle(path: Path, start: Path) -> None:
    """An audit bundle at or above ``start`` is never written."""
    for folder in (start, *start.parents):
        if is_bundle(folder):
            where = "is the audit bundle" if resolved(path) == folder else "is inside the audit bundle"
            raise OutputError(
                f"{path} {where} {folder}; a bundle's files are never changed.",
                hint="write it outside the bundle (a bundle only gains adjudication records, "
                "through irr-audit adjudicate).",
                code="output-in-bundle",
            )


def _refuse_run_file(path: Path) -> None:
    """A file that a join or sample run wrote is replaced only by a new run of the
    whole folder: replacing it alone would mix two runs."""
    real = resolved(path)
    for folder in real.parents[:2]:  # sample sheets live one folder down
        for record_name, command in RECORD_FILES.items():
            if not (folder / record_name).is_file():
                continue
            relative = real.relative_to(folder).as_posix()
            files = recorded_files(read_record(folder / record_name)) or {}
            if relative == record_name or relative in files:
                raise OutputError(
                    f"{path} is the file {relative} of the {command} run in {folder}; replacing it alone would "
                    "mix two runs in one folder.",
                    hint=f"write it elsewhere, or run irr-audit {command} again to replace the whole folder.",
                    code="output-in-run-folder",
                )


def _refuse_symlink(path: Path) -> None:
    if path.is_symlink():
        raise OutputError(
            f"{path} is a symbolic link (to {os.readlink(path)}); irr-audit does not write through or replace a link.",
            hint="give the path of a real file or folder, or remove the link.",
            code="output-symlink",
        )


def _refuse_file_as_folder(folder: Path, existing: Path) -> None:
    """``existing`` (``folder`` or the nearest existing folder on the way to it) must not be a file."""
    if existing.exists() and not existing.is_dir():
        which = "it" if existing == folder else str(existing)
        raise OutputError(
            f"cannot write into {folder}: {which} is a file, not a folder.",
            hint="choose an output folder that does not exist yet or is a folder.",
            code="output-unwritable",
        )


def _refuse_unwritable(folder: Path) -> None:
    """The nearest existing folder on the way to ``folder`` must be a folder we may write."""
    existing = next((candidate for candidate in (folder, *folder.parents) if candidate.exists()), None)
    if existing is None:
        return
    _refuse_file_as_folder(folder, existing)
    if not os.access(existing, os.W_OK | os.X_OK):
        raise OutputError(
            f"cannot write into {folder}: {existing} is not writable (permission denied).",
            hint="choose an output folder you can write to.",
            code="output-unwritable",
        )
