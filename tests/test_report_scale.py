"""The report at scale: the disagreements are made into dicts only when a renderer reads them
(the HTML and Markdown pages list the first LISTED_DISAGREEMENTS), and the JSON report encodes
every one from the join's arrays (irr_audit.report.jsonreport). Both write exactly what the
simple way wrote: every dict made, and the whole document through render_json."""

from __future__ import annotations

import csv
import random
from collections import Counter
from collections.abc import Iterator
from json.encoder import encode_basestring
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from irr_audit import audit, audit_codebook
from irr_audit.io.outputs import escaped_json, render_json, write_bytes_atomic
from irr_audit.metrics.consensus import TIE, TOO_FEW, consensus_codes
from irr_audit.report.html import render_html
from irr_audit.report.jsonreport import PLAIN, RAW, disagreements_json, items_json, render_report_json
from irr_audit.report.markdown import render_markdown
from irr_audit.report.model import Disagreements, disagreement_list
from irr_audit.report.reliability import codebook_html, codebook_markdown, codebook_text
from tests.conftest import run

ROOT = Path(__file__).resolve().parents[1]
# Pieces of ids, texts and codes a sheet can hold: what JSON, HTML, CSV or a spreadsheet treats apart.
HOSTILE = [
    '"',
    "'",
    ",",
    "\\",
    "\n",
    "\r\n",
    "\t",
    "=SUM(A1)",
    "+1",
    "-2",
    "@x",
    "é",
    "日本",
    "\U0001f600",
    "\u202e",
    "\u2028",
    "\x85",
    "\x7f",
    "<b>",
    "&amp;",
    "</script>",
    " ",
]


IN_IDS = [piece for piece in HOSTILE if piece.isprintable()]  # an id with a control character is refused


def _hostile(rng: random.Random, plain: str, pieces_from: list[str] = HOSTILE) -> str:
    """Mostly plain text (what the fast path quotes as it is), else plain text with hostile pieces."""
    if rng.random() < 0.6:
        return plain
    pieces = [rng.choice(pieces_from) for _ in range(rng.randint(1, 4))]
    if rng.random() < 0.05:
        pieces.append("long " * 2000)  # a very long value
    return plain + "".join(pieces) + plain


def _rule(folder: Path, codes: list[str]) -> Path:
    rule = folder / "rule.yaml"
    listed = "\n".join(
        f"  - {{code: {code!r}, label: {code!r}, definition: 'Code {n}.'}}" for n, code in enumerate(codes)
    )
    rule.write_text(
        f"rule: hostile\nversion: 1\nquestion: Which code?\nscale: nominal\ncodes:\n{listed}\n"
        "missing_codes: [unknown]\nchangelog: First version.\n",
        encoding="utf-8",
    )
    return rule


def _sheets(
    folder: Path, rng: random.Random, coders: list[str], units: int, codes: list[str], text: bool
) -> list[Path]:
    """One sheet per coder: shared ids (some hostile, every id once), random codes (some blank),
    and a text column with hostile values when ``text``."""
    ids = list(dict.fromkeys(_hostile(rng, f"u{n}", IN_IDS) for n in range(units)))
    paths = []
    for coder in coders:
        path = folder / f"{coder}.csv"
        with path.open("w", encoding="utf-8", newline="") as stream:
            writer = csv.writer(stream)
            writer.writerow(["comment_id", "code", *(["text"] if text else [])])
            for unit in ids:
                code = rng.choice(codes) if rng.random() > 0.05 else ""
                body = [_hostile(rng, "") if rng.random() < 0.7 else ""] if text else []
                writer.writerow([unit, code, *body])
        paths.append(path)
    return paths


SHAPES = [  # (coders, codes, with a text column)
    (["ann", "ben"], ["yes", "no"], False),
    (["ann", "ben", "cat", "dan", "eve"], ["yes", "no", "maybe"], True),
    (["zoë", 'b"o\\b', "\U0001f600", "=cmd", "a,b"], ["ja", 'qu"ote', "日本", "=1+1", "back\\slash"], True),
    ([f"c{n:02d}" for n in range(28)], ["a", "b", "c", "d", "e"], False),  # 5**28 patterns: not one int64 key
]


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("shape", range(len(SHAPES)))
def test_reports_equal_what_the_simple_writers_wrote(tmp_path: Path, shape: int, seed: int) -> None:
    coders, codes, text = SHAPES[shape]
    rng = random.Random(seed * 100 + shape)
    sheets = _sheets(tmp_path, rng, coders, 60 if len(coders) > 5 else 400, codes, text)
    result = audit(sheets, _rule(tmp_path, codes), bootstrap=0, seed=1)
    simple = result.to_dict()  # every disagreement a dict, in a list
    assert isinstance(simple["disagreements"], list) and len(simple["disagreements"]) > 10
    assert result.to_json() == render_json(simple)
    assert result.to_html() == render_html(simple)
    assert result.to_markdown() == render_markdown(simple)


def _joined(tmp_path: Path, units: int = 300) -> Disagreements:
    rng = random.Random(7)
    coders, codes = ["ann", "ben", "cat"], ["yes", "no", 'm"aybe']
    result = audit(_sheets(tmp_path, rng, coders, units, codes, True), _rule(tmp_path, codes))
    listed = result.report.disagreements
    assert isinstance(listed, Disagreements)
    return listed


def test_the_lazy_disagreements_read_as_the_list(tmp_path: Path) -> None:
    listed = _joined(tmp_path)
    every = disagreement_list(listed.join)
    assert len(listed) == len(every) > 50
    assert list(listed) == every and listed == every and listed == listed
    assert listed[:7] == every[:7] and listed[5:40:3] == every[5:40:3] and listed[len(every) :] == []
    assert listed[0] == every[0] and listed[-1] == every[-1] and listed[13] == every[13]
    with pytest.raises(IndexError):
        listed[len(every)]
    assert listed != every[:-1]


@pytest.mark.parametrize("chunk", [1, 7, 10_000])
def test_the_array_writer_in_chunks_writes_what_json_writes(tmp_path: Path, chunk: int) -> None:
    listed = _joined(tmp_path)
    assert disagreements_json(listed, chunk=chunk) == items_json(disagreement_list(listed.join))


def test_a_report_without_disagreements_writes_an_empty_list(tmp_path: Path) -> None:
    rule = _rule(tmp_path, ["yes", "no"])
    for coder in ("ann", "ben"):
        (tmp_path / f"{coder}.csv").write_text("comment_id,code\nc1,yes\nc2,no\n", encoding="utf-8")
    result = audit([tmp_path / "ann.csv", tmp_path / "ben.csv"], rule)
    assert len(result.report.disagreements or ()) == 0
    document = result.to_dict()
    assert document["disagreements"] == [] and result.to_json() == render_json(document)
    assert render_report_json(document) == render_json(document)  # a plain list: the simple writer


def test_the_json_report_in_pieces_is_the_json_report(tmp_path: Path) -> None:
    listed = _joined(tmp_path)
    result = audit(sorted(tmp_path.glob("*.csv")), tmp_path / "rule.yaml")
    assert len(result.report.disagreements or ()) == len(listed)
    chunks = list(result.to_json_chunks())
    assert len(chunks) >= 3 and all(isinstance(chunk, bytes) for chunk in chunks)
    assert b"".join(chunks).decode("utf-8") == result.to_json() == render_json(result.to_dict())
    out = tmp_path / "out" / "report.json"
    args = ("report", *sorted(tmp_path.glob("*.csv")), "--rule", tmp_path / "rule.yaml", "--format", "json", "-q")
    written, shown = run(*args, "--output", out), run(*args)
    assert written.exit_code == 0 and shown.exit_code == 0, (written.stderr, shown.stderr)
    assert out.read_text(encoding="utf-8") == shown.stdout == result.to_json()


def test_pieces_that_fail_on_the_way_leave_no_file(tmp_path: Path) -> None:
    def pieces() -> Iterator[bytes]:
        yield b'{"half": '
        raise RuntimeError("the maker failed")

    target = tmp_path / "report.json"
    with pytest.raises(RuntimeError):
        write_bytes_atomic(target, pieces())
    assert list(tmp_path.iterdir()) == []
    write_bytes_atomic(target, iter([b"{", b"}\n"]))
    assert target.read_bytes() == b"{}\n" and [path.name for path in tmp_path.iterdir()] == ["report.json"]


@pytest.mark.parametrize("scale", ["nominal", "ordinal"])
def test_a_consensus_keeps_its_reasons_in_an_array(scale: str) -> None:
    rng = np.random.default_rng(3)
    codes = rng.integers(-1, 3, size=(2_000, 4))
    consensus = consensus_codes(codes, 3, scale, [0, 1, 2, 3])
    assert consensus.undecided.dtype == np.int8 and len(consensus.reasons) == len(codes)
    expected = [
        TOO_FEW if (row >= 0).sum() < 2 else TIE if code < 0 else None
        for row, code in zip(codes, consensus.codes.tolist())
    ]
    assert list(consensus.reasons) == expected
    assert consensus.reason_counts() == dict(sorted(Counter(reason for reason in expected if reason).items()))


def test_the_group_lists_its_undecided_units_by_id(tmp_path: Path) -> None:
    rng = random.Random(11)
    coders, codes = ["ann", "ben", "cat", "dan", "eve"], ["yes", "no"]
    result = audit(
        _sheets(tmp_path, rng, coders, 300, codes, False),
        _rule(tmp_path, codes),
        group="g=ann,ben,cat,dan",
        against="eve",
    )
    listed = result.report.disagreements
    assert isinstance(listed, Disagreements)
    join = listed.join
    comparison = result.to_dict()["group_comparison"]
    reasons = consensus_codes(join.codes, 2, "nominal", [0, 1, 2, 3]).reasons
    expected = [
        {"comment_id": str(join.unit_ids[unit]), "reason": reason}
        for unit, reason in enumerate(reasons)
        if reason is not None
    ]
    assert comparison["undecided_units"] == expected and len(expected) > 20


def test_a_codebook_report_reads_its_variables_disagreements_lazily() -> None:
    examples = ROOT / "examples" / "codebook" / "sheets"
    result = audit_codebook(sorted(examples.glob("*.csv")), ROOT / "codebooks" / "comment_study" / "v1.yaml")
    copied = result.to_dict()
    lazy = [audit.report.disagreements for audit in result.audits.values()]
    assert all(isinstance(listed, Disagreements) for listed in lazy)
    assert sum(len(listed or ()) for listed in lazy) > 5
    assert result.to_html() == codebook_html(copied)
    assert result.to_markdown() == codebook_markdown(copied)
    assert result.to_text(width=None) == codebook_text(copied, None)
    assert result.to_json() == render_json(copied)


def test_an_id_pyarrow_quotes_as_it_is_is_one_json_writes_as_it_is() -> None:
    characters = [chr(code) for code in [*range(0xD800), *range(0xE000, 0x10000), 0x1F600, 0x10FFFF]]
    plain = pc.match_substring_regex(pa.array(characters), PLAIN).to_pylist()
    written = [escaped_json(encode_basestring(character)) == f'"{character}"' for character in characters]
    assert plain == written
    assert pc.match_substring_regex(pa.array(["", "t1_ab c", 'a"b', "ok\u2028"]), PLAIN).to_pylist() == [
        True,
        True,
        False,
        False,
    ]


def test_what_pyarrow_finds_raw_in_an_encoded_text_is_what_escaped_json_escapes() -> None:
    characters = [chr(code) for code in [*range(0xD800), *range(0xE000, 0x10000), 0x1F600, 0x10FFFF]]
    encoded = [encode_basestring(character) for character in characters]
    raw = pc.match_substring_regex(pa.array(encoded), RAW).to_pylist()
    assert raw == [escaped_json(text) != text for text in encoded]
