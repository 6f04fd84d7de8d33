"""A text file in UTF-16 or UTF-32 is refused by every reader naming the encoding its byte-order
mark gives, and the fix (save it again as UTF-8), not as "byte 0 is not UTF-8"
(irr_audit.io.encodings). The coding sheets' reader reads UTF-16 and names UTF-32 (test_join)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import irr_audit
from irr_audit.bundle.anchor import read_digest_list
from irr_audit.bundle.verify import manifest_read_problem
from irr_audit.bundle.workflow import read_decisions_file
from irr_audit.errors import IrrAuditError
from irr_audit.importers.common import json_document, json_records
from irr_audit.io.collector import read_dataset, read_run_record
from irr_audit.io.encodings import byte_order_mark, foreign_mark
from irr_audit.io.limits import DEFAULT_LIMITS, load_json
from irr_audit.join.folder import read_join_summary
from irr_audit.rules.codebook import load_codebook
from irr_audit.rules.lock import parse_lock, parse_lock_codebooks
from irr_audit.rules.revisions import parse_manifest
from irr_audit.sample.folder import _ledger_contexts
from irr_audit.warehouse.duckdb_counts import _reader

ROOT = Path(__file__).resolve().parents[1]
RULE = ROOT / "rules" / "explicit_current_failure" / "v1.yaml"

# (Python's codec, the name irr-audit gives it)
MARKED = {
    "UTF-16 LE": ("utf-16-le", "UTF-16 (little-endian)"),
    "UTF-16 BE": ("utf-16-be", "UTF-16 (big-endian)"),
    "UTF-32 LE": ("utf-32-le", "UTF-32 (little-endian)"),
    "UTF-32 BE": ("utf-32-be", "UTF-32 (big-endian)"),
}


def marked(text: str, codec: str) -> bytes:
    return ("\ufeff" + text).encode(codec)


def written(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def refused(work: Callable[[], Any]) -> str:
    """The message (and the code) of the refusal ``work`` raises."""
    with pytest.raises(IrrAuditError) as error:
        work()
    assert "Traceback" not in error.value.render()
    return f"[{error.value.code}] {error.value.message} {error.value.hint}"


def in_folder(tmp_path: Path, name: str, data: bytes) -> Path:
    folder = tmp_path / "folder"
    folder.mkdir()
    written(folder, name, data)
    return folder


# reader -> (what it reads, in UTF-8; its refusal of those bytes in another encoding, as text)
READERS: dict[str, tuple[str, Callable[[Path, bytes], str]]] = {
    "rule file": (
        RULE.read_text(encoding="utf-8"),
        lambda t, d: refused(lambda: irr_audit.load_rule(written(t, "v1.yaml", d))),
    ),
    "codebook file": (
        "codebook: c\nversion: 1\nrules: []\n",
        lambda t, d: refused(lambda: load_codebook(written(t, "v1.yaml", d))),
    ),
    "collector dataset (JSON)": (
        '[{"id": "a", "body": "x"}]',
        lambda t, d: refused(lambda: read_dataset(written(t, "data.json", d))),
    ),
    "collector dataset (JSON Lines)": (
        '{"id": "a", "body": "x"}\n',
        lambda t, d: refused(lambda: read_dataset(written(t, "data.jsonl", d))),
    ),
    "collector dataset (CSV)": (
        "id,body\na,x\n",
        lambda t, d: refused(lambda: read_dataset(written(t, "data.csv", d))),
    ),
    "collector run record": (
        '{"OUTPUT": {}}',
        lambda t, d: refused(lambda: read_run_record(written(t, "run.json", d))),
    ),
    "import export (JSON Lines)": ('{"id": 1}\n', lambda t, d: refused(lambda: json_records(d, "labels.jsonl"))),
    "import export (JSON)": ('[{"id": 1}]', lambda t, d: refused(lambda: json_document(d, "export.json"))),
    "decisions file": (
        "comment_id,decision\na,yes\n",
        lambda t, d: refused(lambda: read_decisions_file(written(t, "decisions.csv", d))),
    ),
    "digest list": ("", lambda t, d: refused(lambda: read_digest_list(written(t, "DIGESTS", d)))),
    "sample ledger": (
        '{"comment_id": "a"}\n',
        lambda t, d: refused(lambda: _ledger_contexts(d, written(t, "ledger.jsonl", d), DEFAULT_LIMITS, {"a"})),
    ),
    "join summary": ("{}", lambda t, d: refused(lambda: read_join_summary(in_folder(t, "summary.json", d)))),
    "long table (counts)": (
        "comment_id,coder,code\n",
        lambda t, d: refused(lambda: _reader(None, written(t, "t.csv", d), d, None)),
    ),
    "rules lock file": ("{}", lambda t, d: refused(lambda: parse_lock(d, "rules.lock"))),
    "rules lock file's codebooks": ("{}", lambda t, d: refused(lambda: parse_lock_codebooks(d, "rules.lock"))),
    "bundle manifest (verify)": ("{}", lambda t, d: _raised_by_load_json(d, manifest_read_problem)),
    "re-coded bundle's manifest": ("{}", lambda t, d: _value_error(lambda: parse_manifest(d, "manifest.json"))),
}


def _raised_by_load_json(data: bytes, problem: Callable[[Exception], str]) -> str:
    with pytest.raises(ValueError) as error:
        load_json(data, "manifest.json", own_file=True)
    return problem(error.value)


def _value_error(work: Callable[[], Any]) -> str:
    with pytest.raises(ValueError) as error:
        work()
    return str(error.value)


@pytest.mark.parametrize("encoding", MARKED.values(), ids=MARKED.keys())
@pytest.mark.parametrize("reader", READERS.values(), ids=READERS.keys())
def test_every_reader_names_the_encoding_of_a_byte_order_mark(
    tmp_path: Path, reader: tuple[str, Callable[[Path, bytes], str]], encoding: tuple[str, str]
) -> None:
    text, read = reader
    codec, named = encoding
    message = read(tmp_path, marked(text, codec))
    assert f"it starts with the byte-order mark of {named}, which irr-audit does not read" in message


@pytest.mark.parametrize("reader", ["rule file", "codebook file", "decisions file", "collector run record"])
def test_a_refusal_in_another_encoding_says_to_save_again_as_utf8(tmp_path: Path, reader: str) -> None:
    text, read = READERS[reader]
    message = read(tmp_path, marked(text, "utf-16-le"))
    assert "is not UTF-8 text: it starts with the byte-order mark of UTF-16 (little-endian)" in message
    assert "save it again as UTF-8" in message


def test_the_marks_are_told_apart() -> None:
    for codec, named in MARKED.values():
        assert byte_order_mark(marked("x", codec)) == named
    assert byte_order_mark(b"\xef\xbb\xbfx") is None  # UTF-8's own mark: read
    assert foreign_mark(b"plain") is None and foreign_mark(b"") is None


def test_a_utf8_file_with_its_byte_order_mark_is_still_read(tmp_path: Path) -> None:
    rule = irr_audit.load_rule(written(tmp_path, "v1.yaml", b"\xef\xbb\xbf" + RULE.read_bytes()))
    assert rule.id == "explicit_current_failure"
    assert read_run_record(written(tmp_path, "run.json", b'\xef\xbb\xbf{"OUTPUT": {}}')) is not None
