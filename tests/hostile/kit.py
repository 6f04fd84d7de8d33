"""The hostile corpus's vocabulary: a Case, the files every case starts from, and
builders for what cannot be written inline (XLSX workbooks, zip bombs, deep JSON,
bundles, join folders, sample folders).

A case is one command run in a fresh folder. The folder starts with BASE
(rule.yaml, alice.csv, bob.csv); ``files`` adds or replaces files (None deletes
one), ``setup`` builds the rest. The command line is written as a shell would
take it and runs with the folder as the working directory, so messages name
files as the case names them. ``{bundle}`` in a command is the path of the
frozen bundle that ``frozen`` makes, ``{digest}`` the sha256 of its manifest as
frozen.

Every case is checked by tests/test_hostile.py: exit code 0, 1 or 2 and the one
expected (one code per case: a refusal is exit 2, what the tool rightly accepts exit 0),
no traceback, one message for exit 2 (with ``code`` and ``says``),
every file that existed before byte-identical after (``changes`` lists old
outputs a command may replace), and units conserved for sheets. A case that
fails today because the fix is under way elsewhere is ``pending`` with the area
that fixes it: readers, outputs, anchor, render (escaping and memory bounds),
or unowned.
"""

from __future__ import annotations

import io
import json
import os
import shlex
import shutil
import struct
import zipfile
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
AREAS = ("readers", "outputs", "anchor", "render", "unowned")

Content = str | bytes | Callable[[], bytes] | None


@dataclass(frozen=True)
class Outcome:
    """What a case's command did."""

    exit: int
    stdout: str = field(repr=False)
    stderr: str = field(repr=False)
    folder: Path


@dataclass(frozen=True)
class Case:
    name: str
    command: str  # as typed in a shell, run in the case's folder
    files: Mapping[str, Content] = field(default_factory=dict, repr=False)
    exit: int | tuple[int, ...] = 0  # with copies > 1, a tuple: the exit of each copy, in any order
    code: str | None = None  # the error code of an exit-2 message
    says: tuple[str, ...] = ()  # text the message holds, when the command refuses (exit 2)
    shows: tuple[str, ...] = ()  # text stdout or stderr holds, when it does not (exit 0 or 1)
    stdout: tuple[str, ...] = ()  # text stdout holds
    never: tuple[str, ...] = ()  # text no output holds: stdout, stderr, or a file the command wrote
    never_shown: tuple[str, ...] = ()  # text stdout and stderr do not hold (a terminal's escape sequences)
    pending: str | None = None  # the area whose fix makes it pass (AREAS)
    setup: Callable[[Path], None] | None = None
    check: Callable[[Outcome], None] | None = None  # more assertions
    process: bool = False  # run `python -m irr_audit` in a child process, capped in memory and time
    # the child's cap: a case that fails today by exhausting it fails sooner with less. Not below 768:
    # at 512 MB the threads numpy and pyarrow start are now and then refused (README, "Memory and threads")
    memory_mb: int = 1024
    copies: int = 1  # start this many child processes at once (a race); each must end as the case says
    seconds: int = 60  # the child's time limit (a command that hangs today fails sooner with less)
    changes: tuple[str, ...] = ()  # glob patterns of existing files the command may replace

    @property
    def argv(self) -> list[str]:
        return shlex.split(self.command)

    @property
    def command_name(self) -> str:
        words = self.argv
        return " ".join(words[:2]) if words[0] == "rules" else words[0]

    @property
    def exits(self) -> tuple[int, ...]:
        return self.exit if isinstance(self.exit, tuple) else (self.exit,)


# --- the starting files --------------------------------------------------------------

RULE = """\
rule: demo
version: 1
question: Does the comment state a current failure?
scale: nominal
codes:
  - {code: "yes", label: "Yes"}
  - {code: "no", label: "No"}
missing_codes: [unknown]
aliases: {y: "yes", n: "no"}
changelog: First version.
"""
ORDINAL_RULE = """\
rule: severity
version: 1
scale: ordinal
codes: [low, mid, high]
missing_codes: [unknown]
"""
ALICE = "comment_id,code,body\na,yes,It crashes.\nb,no,Nice.\nc,yes,Broken again.\nd,no,Fine.\n"
BOB = "comment_id,code,body\na,yes,It crashes.\nb,no,Nice.\nc,no,Broken again.\nd,no,Fine.\n"
BASE: dict[str, Content] = {"rule.yaml": RULE, "alice.csv": ALICE, "bob.csv": BOB}
SHEETS = "alice.csv bob.csv --rule rule.yaml"


def sheet(*rows: str, header: str = "comment_id,code") -> str:
    """A CSV sheet from its lines: sheet("a,yes", "b,no")."""
    return "\n".join((header, *rows)) + "\n"


# --- builders of binary or large files -------------------------------------------------


def xlsx(
    rows: list[list[object]],
    *,
    title: str = "Codes",
    more: Mapping[str, list[list[object]]] | None = None,
    hidden_first: bool = False,
) -> Callable[[], bytes]:
    """A workbook made by openpyxl: ``rows`` in the first worksheet, ``more`` after it."""

    def build() -> bytes:
        from openpyxl import Workbook

        book = Workbook()
        first = book.active
        first.title = title
        for row in rows:
            first.append(row)
        for name, extra in (more or {}).items():
            added = book.create_sheet(name)
            for row in extra:
                added.append(row)
        if hidden_first:
            first.sheet_state = "hidden"
        buffer = io.BytesIO()
        book.save(buffer)
        return buffer.getvalue()

    return build


GOOD_XLSX_ROWS: list[list[object]] = [["comment_id", "code"], ["a", "yes"], ["b", "no"], ["c", "yes"], ["d", "no"]]


def patched_xlsx(changes: Mapping[str, bytes | None], rows: list[list[object]] | None = None) -> Callable[[], bytes]:
    """A valid workbook with members replaced (bytes), added, or removed (None)."""

    def build() -> bytes:
        members = zip_members(xlsx(rows or GOOD_XLSX_ROWS)())
        for name, data in changes.items():
            if data is None:
                members.pop(name, None)
            else:
                members[name] = data
        return zip_bytes(members)

    return build


def zip_members(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def zip_bytes(members: Mapping[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


SHEET_XML_HEAD = (
    b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
)


def sheet_xml(body: bytes, *, before: bytes = b"", dimension: bytes = b"") -> bytes:
    """sheet1.xml with ``body`` as its sheetData (``before``: a DOCTYPE, say)."""
    head = SHEET_XML_HEAD if not before else SHEET_XML_HEAD.replace(b"<worksheet", before + b"<worksheet", 1)
    return head + dimension + b"<sheetData>" + body + b"</sheetData></worksheet>"


def inline_row(number: int, *cells: str) -> bytes:
    columns = "ABCDEFGHIJ"
    inner = "".join(
        f'<c r="{columns[i]}{number}" t="inlineStr"><is><t>{cell}</t></is></c>' for i, cell in enumerate(cells)
    )
    return f'<row r="{number}">{inner}</row>'.encode()


HEADER_ROW = inline_row(1, "comment_id", "code")


def xlsx_bomb_cell(size: int) -> Callable[[], bytes]:
    """A workbook whose one cell holds ``size`` bytes of text, deflated about 1000:1: a
    zip bomb. The cell's compressed block is made once and repeated (after a full
    flush a deflate block does not depend on what came before), so it builds in a second."""

    def build() -> bytes:
        chunk = 1 << 20
        head = (
            SHEET_XML_HEAD + b"<sheetData>" + HEADER_ROW + b'<row r="2"><c r="A2" t="inlineStr"><is><t>a</t>'
            b'</is></c><c r="B2" t="inlineStr"><is><t>'
        )
        tail = b"</t></is></c></row></sheetData></worksheet>"
        deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
        start = deflate.compress(head) + deflate.flush(zlib.Z_FULL_FLUSH)
        block = deflate.compress(b"y" * chunk) + deflate.flush(zlib.Z_FULL_FLUSH)
        count = size // chunk
        end = deflate.compress(tail) + deflate.flush()
        crc = zlib.crc32(head)
        ys = b"y" * chunk
        for _ in range(count):
            crc = zlib.crc32(ys, crc)
        crc = zlib.crc32(tail, crc)
        members = [
            (name, data)
            for name, data in zip_members(xlsx(GOOD_XLSX_ROWS)()).items()
            if name != "xl/worksheets/sheet1.xml"
        ]
        bomb = ("xl/worksheets/sheet1.xml", start + block * count + end, crc, len(head) + chunk * count + len(tail))
        return raw_zip(
            [*((name, zlib.compress(data, 9)[2:-4], zlib.crc32(data), len(data)) for name, data in members), bomb]
        )

    return build


def raw_zip(members: list[tuple[str, bytes, int, int]]) -> bytes:
    """A zip archive of already deflated members: (name, raw deflate data, crc32, size)."""
    body, directory = io.BytesIO(), io.BytesIO()
    for name, data, crc, size in members:
        encoded = name.encode()
        offset = body.tell()
        fields = struct.pack("<HHHHHIII", 20, 0, 8, 0, 0x21, crc, len(data), size)
        body.write(struct.pack("<I", 0x04034B50) + fields + struct.pack("<HH", len(encoded), 0) + encoded + data)
        directory.write(
            struct.pack("<IH", 0x02014B50, 20)
            + fields
            + struct.pack("<HHHHHII", len(encoded), 0, 0, 0, 0, 0, offset)
            + encoded
        )
    listing = directory.getvalue()
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(listing), body.tell(), 0)
    return body.getvalue() + listing + end


def deep_json(depth: int, inner: str = "1") -> str:
    return "[" * depth + inner + "]" * depth


def big_int(digits: int) -> str:
    return "9" * digits


def csv_rows(count: int, code: Callable[[int], str], header: str = "comment_id,code") -> Callable[[], bytes]:
    """A large sheet made on demand: ``count`` rows, ids u0, u1, ..., code(i) as the code."""

    def build() -> bytes:
        return (header + "\n" + "".join(f"u{i},{code(i)}\n" for i in range(count))).encode()

    return build


# --- setups: what a case needs besides plain files ------------------------------------

FROZEN_AT = datetime(2024, 5, 1, 12, 0, 0, tzinfo=timezone.utc)
BUNDLE_NAME = "20240501T120000Z_demo_v1"
BUNDLE = f"audits/{BUNDLE_NAME}"


def run_cli(folder: Path, command: str) -> None:
    """Run a command of irr-audit in ``folder`` as part of a setup; it must succeed."""
    from typer.testing import CliRunner

    from irr_audit.cli import app

    here = Path.cwd()
    os.chdir(folder)
    try:
        result = CliRunner().invoke(app, shlex.split(command), catch_exceptions=False)
    finally:
        os.chdir(here)
    assert result.exit_code == 0, f"setup `{command}` failed: {result.stderr}"


def freeze_fixed(
    folder: Path,
    sheets: tuple[str, ...] = ("alice.csv", "bob.csv"),
    rule: str = "rule.yaml",
    into: str = "audits",
    sample: str | None = None,
) -> Path:
    """Freeze at a fixed time, so the bundle's name and manifest bytes are the same every run."""
    from irr_audit.bundle.freeze import collect_source, freeze

    here = Path.cwd()
    os.chdir(folder)
    try:
        source = collect_source(
            [Path(name) for name in sheets], Path(rule), None, None, Path(sample) if sample else None
        )
        return folder / freeze(source, Path(into), FROZEN_AT).path
    finally:
        os.chdir(here)


def frozen(folder: Path) -> None:
    """The standard bundle: BASE frozen into audits/ (``{bundle}`` in a command)."""
    freeze_fixed(folder)


def writable_bundle(folder: Path) -> Path:
    """The bundle's files made writable, as a forger (or root) finds them."""
    bundle = folder / BUNDLE
    for root, _, names in os.walk(bundle):
        for name in names:
            os.chmod(Path(root) / name, 0o644)
    return bundle


def forge(change: Callable[[Path, dict], None], rehash: bool = True) -> Callable[[Path], None]:
    """A setup: freeze, let ``change(bundle, manifest)`` edit files and the manifest, then
    re-hash the manifest's file records and integrity as a careful forger would."""

    def setup(folder: Path) -> None:
        from irr_audit.bundle.manifest import canonical_sha256, sha256_hex
        from irr_audit.io.outputs import render_json

        frozen(folder)
        bundle = writable_bundle(folder)
        manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
        change(bundle, manifest)
        if rehash:
            for record in manifest["files"]:
                member = bundle / record["path"]
                if member.is_file():
                    data = member.read_bytes()
                    record["sha256"], record["size"] = sha256_hex(data), len(data)
            by_path = {record["path"]: record for record in manifest["files"]}
            for entry in manifest["sheets"]:
                if entry["file"] in by_path:
                    entry["sha256"], entry["size"] = by_path[entry["file"]]["sha256"], by_path[entry["file"]]["size"]
            for entry in manifest["score"].get("sheets", []):  # the score names the sheets it was computed from
                record = by_path.get(f"sheets/{entry['name']}")
                if record is not None:
                    entry["sha256"], entry["size"] = record["sha256"], record["size"]
            manifest["integrity"]["sha256"] = canonical_sha256(manifest, "integrity")
        (bundle / "manifest.json").write_text(render_json(manifest), encoding="utf-8")

    return setup


def edit_bundle(change: Callable[[Path], None]) -> Callable[[Path], None]:
    """A setup: freeze, then change the bundle's files (no re-hash: what verify should see)."""

    def setup(folder: Path) -> None:
        frozen(folder)
        change(writable_bundle(folder))

    return setup


def joined(out: str = "out", command: str = f"join {SHEETS}") -> Callable[[Path], None]:
    def setup(folder: Path) -> None:
        run_cli(folder, f"{command} --out {out} --quiet")

    return setup


def chain(*setups: Callable[[Path], None]) -> Callable[[Path], None]:
    def setup(folder: Path) -> None:
        for step in setups:
            step(folder)

    return setup


def link(name: str, target: str) -> Callable[[Path], None]:
    """A symlink ``name`` -> ``target`` (relative to the case's folder unless absolute)."""

    def setup(folder: Path) -> None:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, path)

    return setup


def hardlink(name: str, target: str) -> Callable[[Path], None]:
    def setup(folder: Path) -> None:
        os.link(folder / target, folder / name)

    return setup


def fifo(name: str) -> Callable[[Path], None]:
    def setup(folder: Path) -> None:
        os.mkfifo(folder / name)

    return setup


def folder_of(*names: str) -> Callable[[Path], None]:
    def setup(folder: Path) -> None:
        for name in names:
            (folder / name).mkdir(parents=True, exist_ok=True)

    return setup


def copy(source: str, target: str) -> Callable[[Path], None]:
    def setup(folder: Path) -> None:
        (folder / target).parent.mkdir(parents=True, exist_ok=True)
        if (folder / source).is_dir():
            shutil.copytree(folder / source, folder / target, symlinks=True)
        else:
            shutil.copyfile(folder / source, folder / target)

    return setup


def write(name: str, content: Content) -> Callable[[Path], None]:
    """A setup step that writes one file (after earlier steps made its folder)."""

    def setup(folder: Path) -> None:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if (path.exists() or path.is_symlink()) and not os.access(path, os.W_OK):
            os.chmod(path, 0o644)
        path.write_bytes(materialise(content))

    return setup


def materialise(content: Content) -> bytes:
    if callable(content):
        return content()
    if isinstance(content, str):
        return content.encode("utf-8", "surrogateescape")
    assert content is not None
    return content


def no_file(name: str) -> Callable[[Outcome], None]:
    """A check: the command did not make ``name`` (what an injected command would have made)."""

    def check(outcome: Outcome) -> None:
        assert not (outcome.folder / name).exists(), f"{name} was made"

    return check


def has_file(name: str) -> Callable[[Outcome], None]:
    def check(outcome: Outcome) -> None:
        assert (outcome.folder / name).is_file(), f"{name} was not written"

    return check


# --- collector files -------------------------------------------------------------------


def item(comment_id: object, body: str = "It crashes.", status: str = "ok", post: str = "p1", **more: object) -> dict:
    return {
        "postId": post,
        "commentId": comment_id,
        "body": body,
        "authorName": "u",
        "status": status,
        "statusReason": None,
        "observedAt": "2024-05-01T10:00:00Z",
        **more,
    }


DATASET_ITEMS = [item("c1"), item("c2", "Love it."), item("c3", "Export fails."), item("c4", "Fine.")]
DATASET = json.dumps(DATASET_ITEMS, indent=1)
DATASET_JSONL = "".join(json.dumps(entry) + "\n" for entry in DATASET_ITEMS)
DATASET_CSV = "postId,commentId,body,authorName,status,statusReason,observedAt\n" + "".join(
    f"p1,{entry['commentId']},{entry['body']},u,ok,,2024-05-01T10:00:00Z\n" for entry in DATASET_ITEMS
)
RUN_RECORD = json.dumps(
    {
        "commentsSaved": 4,
        "duplicatesSkipped": 0,
        "hiddenBranchesRemaining": 0,
        "completionReason": "all inputs processed",
        "status": "SUCCEEDED",
        "isComplete": True,
        "inputResults": [
            {
                "postUrl": "https://www.reddit.com/r/x/comments/p1/t/",
                "commentsFound": 4,
                "commentsSaved": 4,
                "status": "complete",
                "reason": None,
            }
        ],
    }
)
SAMPLE = "sample dataset.json --rule rule.yaml --coders ann,ben --out s"


def sampled(command: str = SAMPLE) -> Callable[[Path], None]:
    """A setup: dataset.json (DATASET unless the case gives one) sampled into s/."""

    def setup(folder: Path) -> None:
        if not (folder / "dataset.json").exists():
            (folder / "dataset.json").write_text(DATASET, encoding="utf-8")
        run_cli(folder, command + " --quiet")

    return setup
