"""The join folder's files as the chunked writers make them (irr_audit.join.writers) are,
byte for byte, what the previous writers make of the same join: frame_csv_text of the
joined frame, of the log frame and of the pattern counts, and json_line of each log row;
on random joins whose ids, codes, categories, sheet and coder names are hostile text
(quotes, commas, line breaks, CR, tabs, control and bidi characters, non-ASCII, emoji,
formula prefixes, empty and very long values), cut into chunks of every size."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from irr_audit.cli import app
from irr_audit.io.arrowtext import string_array
from irr_audit.io.framecsv import frame_csv_text
from irr_audit.io.outputs import csv_field, csv_text, json_line, spreadsheet_original, spreadsheet_safe
from irr_audit.io.runfolder import build_folder, replace_folder
from irr_audit.io.sheets import Sheet
from irr_audit.io.textcolumns import json_literal, json_string_bodies, text_fields
from irr_audit.join.counts import pattern_counts
from irr_audit.join.folder import log_jsonl, log_jsonl_rows
from irr_audit.join.join import JoinResult, LogEntries, join_sheets, log_parts, unit_keys
from irr_audit.join.writers import counts_csv_text, joined_csv_chunks, json_lines, log_csv_chunks, log_jsonl_chunks
from irr_audit.rules.model import Code, Rule
from irr_audit.rules.scale import Scale

HOSTILE = [
    "",
    " ",
    '"',
    'a"b',
    '""',
    ",",
    "a,b",
    "\n",
    "a\nb",
    "\r",
    "a\rb",
    "\r\n",
    "\t",
    "\tx",
    "=1+1",
    "+cmd",
    "-x",
    "-1",
    "+1.5e3",
    "@SUM(A1)",
    "'quoted",
    "''=a",
    "\\",
    "a\\nb",
    "\x00",
    "\x1b[2J",
    "\x7f",
    "\x85",
    "\x9b31m",
    "\u061c",
    "\u200e",
    "\u202etxt.exe",
    "\u2028",
    "\u2029",
    "\u2066x\u2069",
    "café",
    "漢字",
    "😀",
    "עברית",
    "-\u0663",  # a non-ASCII digit after a formula prefix
    "€",
    "–",
    "x" * 5000,
    "null",
    "True",
    "t1_00001",
]
# Any text a pyarrow string can hold (no lone surrogates), and the hostile ones above.
TEXT = st.one_of(st.sampled_from(HOSTILE), st.text(st.characters(exclude_categories=("Cs",)), max_size=12))
LENIENT = settings(max_examples=settings().max_examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def make_rule(categories: list[str], missing: list[str]) -> Rule:
    return Rule(
        id="hostile",
        version=1,
        scale=Scale.NOMINAL,
        codes=tuple(Code(code) for code in categories),
        missing_codes=tuple(missing),
        source_name="hostile/v1.yaml",
    )


def make_sheet(name: str, coder: str, ids: list[str], codes: list[str]) -> Sheet:
    """A sheet as a reader makes it, with text no reader would let through (control characters, line breaks)."""
    return Sheet(
        path=Path(name),
        name=name,
        coder=coder,
        sha256="0" * 64,
        size=0,
        columns=("comment_id", "code"),
        row_numbers=np.arange(2, len(ids) + 2, dtype=np.int64),
        comment_ids=string_array(ids),
        codes=string_array(codes),
        rule_versions=None,
        texts=None,
        empty_rows=0,
    )


@st.composite
def hostile_joins(draw: st.DrawFn) -> JoinResult:
    categories = draw(st.lists(TEXT.filter(lambda code: code.strip() != ""), min_size=1, max_size=4, unique=True))
    rule = make_rule(categories, draw(st.lists(st.sampled_from(["unknown", "?", "n/a"]), max_size=2, unique=True)))
    pool = draw(st.lists(TEXT, min_size=1, max_size=12))  # ids repeat: duplicates and conflicts
    coders = draw(
        st.lists(
            TEXT.filter(lambda name: name not in ("comment_id", "fully_coded")), min_size=2, max_size=4, unique=True
        )
    )
    sheets = []
    for number, coder in enumerate(coders):
        size = draw(st.integers(0, 25))
        ids = draw(st.lists(st.sampled_from(pool), min_size=size, max_size=size))
        codes = draw(st.lists(st.one_of(st.sampled_from(categories), TEXT), min_size=size, max_size=size))
        sheets.append(make_sheet(f"{coder}{number}.csv", coder, ids, codes))
    sample = draw(st.one_of(st.none(), st.lists(st.sampled_from(pool), unique=True)))
    return join_sheets(sheets, rule, sample_ids=sample)


def previous_joined_csv(join: JoinResult) -> bytes:
    return frame_csv_text(join.joined_frame()).encode("utf-8")


def previous_log_csv(join: JoinResult) -> bytes:
    return frame_csv_text(join.log).encode("utf-8")


def previous_log_jsonl(join: JoinResult) -> bytes:
    return log_jsonl(join.log).encode("utf-8")


def previous_counts_csv(join: JoinResult) -> str:
    return frame_csv_text(pattern_counts(join))


@LENIENT
@given(join=hostile_joins(), chunk_rows=st.sampled_from([1, 2, 3, 7, 1 << 18]))
def test_every_file_is_what_the_previous_writers_wrote(join: JoinResult, chunk_rows: int) -> None:
    assert b"".join(joined_csv_chunks(join, chunk_rows)) == previous_joined_csv(join)
    assert b"".join(log_csv_chunks(join, chunk_rows)) == previous_log_csv(join)
    assert b"".join(log_jsonl_chunks(join, chunk_rows)) == previous_log_jsonl(join)
    assert counts_csv_text(join) == previous_counts_csv(join)


def hostile_join(size: int = 400, seed: int = 7) -> JoinResult:
    """Every hostile value as an id, a code, a category and in the names, with duplicates,
    conflicts, rows without ids, absent cells and rows outside a sample."""
    random = np.random.default_rng(seed)
    categories = ["yes", "=no", 'a"b', "c,d", "e\nf", "😀", "-\u0663", "'q", "x" * 300]
    rule = make_rule(categories, ["unknown"])
    ids = [*HOSTILE, *(f"t1_{number:05d}" for number in range(size))]
    raw = [*categories, *HOSTILE, "unknown", " YES "]
    sheets = []
    for number, coder in enumerate(["=alice", 'bob "b"', "carol,c", "dé😀\u202e"]):
        chosen = [ids[int(at)] for at in random.integers(0, len(ids), size)]
        codes = [raw[int(at)] for at in random.integers(0, len(raw), size)]
        sheets.append(make_sheet(f"sheet{number} {coder}.csv", coder, chosen, codes))
    return join_sheets(sheets, rule, sample_ids=ids[: len(ids) * 3 // 4])


@pytest.mark.parametrize("chunk_rows", [1, 5, 64, 1 << 18])
def test_a_large_hostile_join_is_written_as_before_in_chunks_of_any_size(chunk_rows: int) -> None:
    join = hostile_join()
    reasons = set(join.log["reason"])
    assert {"duplicate", "conflict", "missing_id", "not_in_sample", "absent", "invalid", "blank", "unknown"} <= reasons
    assert b"".join(joined_csv_chunks(join, chunk_rows)) == previous_joined_csv(join)
    assert b"".join(log_csv_chunks(join, chunk_rows)) == previous_log_csv(join)
    assert b"".join(log_jsonl_chunks(join, chunk_rows)) == previous_log_jsonl(join)
    assert counts_csv_text(join) == previous_counts_csv(join)


def test_the_files_read_back_as_the_join_and_the_log() -> None:
    """Each JSON line is the log row, verbatim; each CSV the row-by-row csv_text of the same rows."""
    join = hostile_join(size=60)
    lines = b"".join(log_jsonl_chunks(join)).decode("utf-8").split("\n")
    assert lines[-1] == ""
    expected = join.log.astype(object).where(join.log.notna(), None).to_dict("records")
    assert [json.loads(line) for line in lines[:-1]] == expected
    rows = [["" if cell is pd.NA else cell for cell in row] for row in join.log.astype(object).values.tolist()]
    assert b"".join(log_csv_chunks(join, 7)).decode("utf-8") == csv_text(list(join.log.columns), rows)
    joined = join.joined_frame()
    assert b"".join(joined_csv_chunks(join, 7)).decode("utf-8") == csv_text(
        list(joined.columns), joined.astype(object).values.tolist()
    )


@LENIENT
@given(text=TEXT, start=st.sampled_from(["", "-", "+", "=", "@", "'", "\t", "\r", "-\u0663", "+\uff11", "-1"]))
def test_spreadsheet_safe_neutralises_as_the_column_wise_writers(text: str, start: str) -> None:
    """The row-by-row writers (csv_text) and the column-wise ones neutralise the same texts: a
    number is ASCII digits, so '-\u0663' (an Arabic-Indic three) starts a formula for both; and
    spreadsheet_original undoes exactly what either wrote."""
    value = start + text
    assert text_fields(string_array([value])).to_pylist() == [csv_field(spreadsheet_safe(value))]
    assert spreadsheet_original(spreadsheet_safe(value)) == value


def test_a_code_with_a_non_ascii_digit_reads_back_from_counts_csv_as_joined(tmp_path: Path) -> None:
    """counts.csv writes '-\u0663' neutralised, and read_counts undoes it: score --counts
    counts that code's units as score does on the same join (they were left out before)."""
    (tmp_path / "rule.yaml").write_text(
        'rule: digits\nversion: 1\nscale: nominal\ncodes:\n  - {code: "-\u0663"}\n  - {code: "no"}\n',
        encoding="utf-8",
    )
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    first.write_text("comment_id,code\n1,-\u0663\n2,no\n3,-\u0663\n4,no\n", encoding="utf-8")
    second.write_text("comment_id,code\n1,-\u0663\n2,-\u0663\n3,-\u0663\n4,no\n", encoding="utf-8")
    runner = CliRunner()
    out, rule = tmp_path / "out", str(tmp_path / "rule.yaml")
    assert runner.invoke(app, ["join", str(first), str(second), "--rule", rule, "--out", str(out), "-q"]).exit_code == 0
    assert "'-\u0663,'-\u0663,2" in (out / "counts.csv").read_text(encoding="utf-8")
    whole = json.loads(runner.invoke(app, ["score", str(out), "--format", "json", "-q"]).stdout)
    counts = ["--counts", str(out / "counts.csv"), "--rule", rule]
    counted = runner.invoke(app, ["score", *counts, "--format", "json", "-q"])
    assert counted.exit_code == 0, counted.output
    for key in ("table", "metrics", "available_case", "pairs", "categories"):
        assert json.loads(counted.stdout)[key] == whole[key], key


def test_many_coders_and_codes_are_written_in_groups_of_combinations() -> None:
    """Twelve coders with twenty codes have more combinations than one piece of text can hold:
    the codes are joined in groups, with the same bytes."""
    random = np.random.default_rng(3)
    categories = [f"c{number}" for number in range(20)] + ["=f", "g,h"]
    rule = make_rule(categories, ["unknown"])
    ids = [f"u{number}" for number in range(300)]
    sheets = []
    for number in range(12):
        chosen = [ids[int(at)] for at in random.choice(len(ids), 280, replace=False)]
        codes = [[*categories, "", "bad"][int(at)] for at in random.integers(0, len(categories) + 2, 280)]
        sheets.append(make_sheet(f"coder{number}.csv", f"coder{number}", chosen, codes))
    join = join_sheets(sheets, rule)
    assert b"".join(joined_csv_chunks(join, 17)) == previous_joined_csv(join)
    assert counts_csv_text(join) == previous_counts_csv(join)


def test_json_string_bodies_escape_every_character_as_json_line_does() -> None:
    """Every code point a pyarrow string can hold, one value each: the fast escaping of a whole
    column gives exactly what json_line writes of each value."""
    characters = [chr(point) for point in range(0x110000) if not 0xD800 <= point <= 0xDFFF]
    bodies = json_string_bodies(string_array(characters))
    assert bodies is not None
    expected: list[str] = []
    for start in range(0, len(characters), 4096):  # a block json_line leaves as it is holds no escape
        block = characters[start : start + 4096]
        if json_literal("".join(block)) == '"' + "".join(block) + '"':
            expected += block
        else:
            expected += [json_literal(character)[1:-1] for character in block]
    assert bodies.to_pylist() == expected
    # the quote, the backslash, C0, DEL, C1, U+061C, U+200E-F, U+202A-E, U+2066-9, U+2028-9
    assert (
        sum(body != character for body, character in zip(expected, characters)) == 2 + 32 + 1 + 32 + 1 + 2 + 5 + 4 + 2
    )


def test_json_string_bodies_of_plain_text_are_the_text_itself() -> None:
    plain = string_array(["t1_abc", "café", "漢字 😀", ""])
    assert json_string_bodies(plain) is plain
    sliced = string_array(['"', "a", "\n", "b"])[1:4:2]
    assert json_string_bodies(sliced).to_pylist() == ["a", "b"]
    assert json_string_bodies(string_array(["a", '"']).take(np.array([1, 0]))).to_pylist() == ['\\"', "a"]


def test_the_joins_large_files_load_no_pandas(tmp_path: Path) -> None:
    """join writes its folder from arrays: pandas (0.3 s to import) is never loaded."""
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    first.write_text("comment_id,code\n1,yes\n2,no\n3,\n", encoding="utf-8")
    second.write_text("comment_id,code\n1,yes\n2,yes\n4,maybe\n", encoding="utf-8")
    rule = Path(__file__).resolve().parents[1] / "rules" / "explicit_current_failure" / "v1.yaml"
    code = (
        "import sys\nfrom irr_audit.cli import main\nsys.argv = ['irr-audit', 'join', *sys.argv[1:]]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\nprint('pandas' in sys.modules)\n"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            str(first),
            str(second),
            "--rule",
            str(rule),
            "--out",
            str(tmp_path / "out"),
            "-q",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip().splitlines()[-1] == "False", done.stderr
    assert (tmp_path / "out" / "missingness_log.jsonl").is_file()


def test_a_file_written_in_chunks_is_recorded_by_the_sha256_of_all_its_bytes(tmp_path: Path) -> None:
    chunks = [b"comment_id,code\n", memoryview(b"1,yes\n2,no\n"), b"", b"3,\xc3\xa9\n"]
    whole = b"".join(chunks)
    seen: dict[str, str] = {}

    def record(digests: dict[str, str]) -> dict[str, bytes]:
        seen.update(digests)
        return {"summary.json": json.dumps(digests).encode("utf-8")}

    written = replace_folder(tmp_path / "out", [("a.csv", iter(chunks)), ("b.csv", whole)], record)
    assert (tmp_path / "out" / "a.csv").read_bytes() == whole == (tmp_path / "out" / "b.csv").read_bytes()
    assert seen == {"a.csv": hashlib.sha256(whole).hexdigest(), "b.csv": hashlib.sha256(whole).hexdigest()}
    assert sorted(path.name for path in written) == ["a.csv", "b.csv", "summary.json"]


def test_a_failing_chunk_leaves_no_folder_and_the_old_one_whole(tmp_path: Path) -> None:
    """An output folder is all one run or none: an error while a file's chunks are made
    removes the partial folder, and the folder there before is untouched."""
    out = tmp_path / "out"
    replace_folder(out, {"joined.csv": b"old\n"})

    def failing() -> Iterator[bytes]:
        yield b"new 1\n"
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        replace_folder(out, [("joined.csv", failing())])
    assert (out / "joined.csv").read_bytes() == b"old\n"
    assert [path.name for path in tmp_path.iterdir()] == ["out"]
    with pytest.raises(RuntimeError):
        build_folder(tmp_path / "other", [("x.csv", failing())])
    assert [path.name for path in tmp_path.iterdir()] == ["out"]


def test_files_written_side_by_side_are_each_whole_and_in_order(tmp_path: Path) -> None:
    """Files given as chunks are written at the same time: each one's bytes (and sha256) are
    its chunks in order, whatever the other files do meanwhile."""
    chunked = {f"f{index}.csv": [f"{index}:{chunk}\n".encode() for chunk in range(500)] for index in range(5)}
    files = [("whole.csv", b"whole\n"), *((name, iter(chunks)) for name, chunks in chunked.items())]
    folder, names = build_folder(tmp_path / "out", files, lambda digests: {"record.json": repr(digests).encode()})
    expected = {"whole.csv": b"whole\n", **{name: b"".join(chunks) for name, chunks in chunked.items()}}
    assert names == sorted([*expected, "record.json"])
    for name, data in expected.items():
        assert (folder / name).read_bytes() == data
    record = (folder / "record.json").read_text()
    assert record == repr({name: hashlib.sha256(data).hexdigest() for name, data in expected.items()})


def test_a_file_failing_stops_the_files_written_beside_it(tmp_path: Path) -> None:
    """A chunked file that fails while others are being written: no folder is left, and a file
    still being made stops at its next chunk (unstopped, it would make ten million)."""
    failed = threading.Event()
    made = {"chunks": 0}

    def endless() -> Iterator[bytes]:
        yield b"first\n"
        failed.wait(timeout=60)  # (the files are written side by side: the other one fails meanwhile)
        while made["chunks"] < 10**7:  # the writer stops asking long before this
            made["chunks"] += 1
            yield b"more\n"

    def failing() -> Iterator[bytes]:
        yield b"new 1\n"
        failed.set()
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError, match="interrupted"):
        build_folder(tmp_path / "out", [("endless.csv", endless()), ("failing.csv", failing())])
    assert list(tmp_path.iterdir()) == []
    assert made["chunks"] < 10**7


def test_a_file_that_failed_before_the_others_were_waited_for_stops_them(tmp_path: Path) -> None:
    """A chunked file that has failed already when the next is handed over (no writer waits on
    it any more): its error is still raised at once and the next file stops."""
    failed = threading.Event()
    made = {"chunks": 0}

    def failing() -> Iterator[bytes]:
        yield b"new 1\n"
        failed.set()
        raise RuntimeError("interrupted")

    def endless() -> Iterator[bytes]:
        while made["chunks"] < 10**7:  # the writer stops asking long before this
            made["chunks"] += 1
            yield b"more\n"

    def files() -> Iterator[tuple[str, Iterator[bytes]]]:
        yield "failing.csv", failing()
        failed.wait(timeout=60)
        yield "endless.csv", endless()

    with pytest.raises(RuntimeError, match="interrupted"):
        build_folder(tmp_path / "out", files())
    assert list(tmp_path.iterdir()) == []
    assert made["chunks"] < 10**7


def test_the_log_frame_is_the_log_parts_column_by_column() -> None:
    join = hostile_join(size=50)
    parts = log_parts(join)
    frame = join.log
    assert len(frame) == sum(len(part) for part in parts)
    assert frame["row"].dtype == pd.Int64Dtype()
    rows = np.concatenate([part.rows for part in parts])
    assert frame["row"].isna().to_numpy().tolist() == (rows < 0).tolist()
    assert frame["comment_id"].tolist() == [value for part in parts for value in part.comment_ids.to_pylist()]
    assert list(frame.columns) == ["sheet", "coder", "row", "comment_id", "raw_value", "reason", "detail"]
    details = [part.detail_texts[index] for part in parts for index in part.details.tolist()]
    assert frame["detail"].tolist() == details
    assert frame["sheet"].tolist() == [part.sheet for part in parts for _ in range(len(part))]


def test_a_codebooks_log_is_written_column_wise_as_row_by_row() -> None:
    """log_jsonl of a log frame (a codebook's: a variable column, missing raw values, rows
    without a number) is json_line of each row; a column that is not text or whole numbers
    is written row by row."""
    join = hostile_join(size=80)
    log = join.log.copy()
    log.insert(0, "variable", ["=v", 'q"', "é😀"] * (len(log) // 3) + ["v"] * (len(log) % 3))
    log["raw_value"] = log["raw_value"].astype(object)
    log.loc[log.index[::7], "raw_value"] = None
    assert log_jsonl(log) == log_jsonl_rows(log)
    assert '"raw_value":null' in log_jsonl(log)
    text = log.astype({"raw_value": "str"})  # a missing text is NaN, which json refuses: null
    assert log_jsonl(text) == log_jsonl(log)
    log["extra"] = 1.5  # a number json writes itself
    assert log_jsonl(log) == log_jsonl_rows(log)
    assert log_jsonl(log.iloc[:0]) == log_jsonl_rows(log.iloc[:0]) == ""


@LENIENT
@given(texts=st.lists(st.one_of(st.none(), TEXT), min_size=1, max_size=30), chunk_rows=st.sampled_from([1, 4, 1 << 18]))
def test_json_lines_of_text_and_numbers_are_json_line_of_each_row(texts: list[str | None], chunk_rows: int) -> None:
    numbers = [None if text is None else len(text) - 3 for text in texts]
    columns = {'a"b': string_array([text or "" for text in texts]), "n": pa.array(numbers, type=pa.int64())}
    columns["t"] = pa.array(texts, type=pa.string())
    written = b"".join(json_lines(columns, chunk_rows)).decode("utf-8")
    expected = "".join(
        json_line({'a"b': text or "", "n": number, "t": text}, compact=True) for text, number in zip(texts, numbers)
    )
    assert written == expected


def test_log_entries_in_any_order_keep_their_ids_and_codes() -> None:
    """A codebook's log lists entries in its own order (absent cells among rows): each entry
    keeps the id and raw value of its row, or of the unit it is missing from."""
    join = hostile_join(size=40)
    order = np.random.default_rng(5).permutation(len(join.entries))
    fields = join.entries.__dataclass_fields__
    shuffled = dataclasses.replace(join, entries=LogEntries(*(getattr(join.entries, name)[order] for name in fields)))
    for column, part in enumerate(log_parts(shuffled)):
        sheet = shuffled.sheets[column]
        mine = shuffled.entries.sheet == column
        ids, raw = part.comment_ids.to_pylist(), part.raw_values.to_pylist()
        keys, codes, units = unit_keys(sheet).to_pylist(), sheet.codes.to_pylist(), shuffled.units.to_pylist()
        for at, (position, unit) in enumerate(zip(shuffled.entries.position[mine], shuffled.entries.unit[mine])):
            assert (ids[at], raw[at]) == ((keys[position], codes[position]) if position >= 0 else (units[unit], ""))
