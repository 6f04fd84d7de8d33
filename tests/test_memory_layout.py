"""How a read sheet and a join hold their columns to keep a large audit's memory down,
and that every result is the same as with the plain layout: a sheet's code column is
kept as its distinct values and a byte a row (``compact_codes``)."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from irr_audit.io.arrowtext import key_packers, plain_text
from irr_audit.io.sheets import CODES_ENCODED_UP_TO, Sheet, compact_codes, read_sheet
from irr_audit.io.tables import parse_pool
from irr_audit.join.factorize import factorize
from irr_audit.join.join import join_sheets
from irr_audit.join.problems import invalid_values
from irr_audit.rules.load import load_rule

RULE = """rule: layout
version: 1
question: Is it so?
scale: nominal
codes:
  - {code: "yes", label: "yes", definition: "It is."}
  - {code: "no", label: "no", definition: "It is not."}
  - {code: "maybe", label: "maybe", definition: "It may be."}
missing_codes: [unknown]
aliases: {"Y": "yes"}
changelog: First version.
"""
RAW_CODES = ["yes", "no", "maybe", " yes", "YES", "Y", "unknown", "", "  ", "nope", "n/a", "yes ", "no\u00a0"]


def _write_sheets(folder: Path, coders: int, units: int, seed: int, empty_rows: bool = True) -> list[Path]:
    """Sheets with every kind of row a join logs: unknown, blank, invalid and aliased codes, ids
    repeated with the same code and with another one, rows without an id, empty rows."""
    chooser = random.Random(seed)
    paths = []
    for coder in range(coders):
        lines = ["comment_id,code"]
        for unit in range(units):
            if chooser.random() < 0.1:
                continue  # absent here
            lines.append(f"c{unit},{chooser.choice(RAW_CODES)}")
            if chooser.random() < 0.05:
                lines.append(f"c{unit},{chooser.choice(RAW_CODES)}")
        lines += [",yes", f" c{units + coder} ,no"] + ([","] if empty_rows else [])
        chooser.shuffle(lines[1:])
        path = folder / f"coder{coder}.csv"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


def _plain(sheet: Sheet) -> Sheet:
    return dataclasses.replace(sheet, codes=plain_text(sheet.codes))


def test_a_code_column_is_kept_as_its_distinct_values_and_a_byte_a_row(tmp_path: Path) -> None:
    (path,) = _write_sheets(tmp_path, 1, 300, seed=1)
    sheet = read_sheet(path)
    typed = [line.split(",", 1)[1] for line in path.read_text(encoding="utf-8").splitlines()[1:] if line != ","]
    assert isinstance(sheet.codes, pa.DictionaryArray) and sheet.codes.type.index_type == pa.int8()
    assert sheet.codes.to_pylist() == typed  # the text as typed, row for row
    assert plain_text(sheet.codes).type == pa.string() and plain_text(sheet.codes).to_pylist() == typed


def test_a_code_column_of_many_distinct_values_stays_text() -> None:
    many = pa.array([f"value {at}" for at in range(CODES_ENCODED_UP_TO + 1)] * 2, type=pa.string())
    assert compact_codes(many) is many
    few = pa.array([f"value {at}" for at in range(CODES_ENCODED_UP_TO)] * 2, type=pa.string())
    assert compact_codes(few).to_pylist() == few.to_pylist()
    assert plain_text(many) is many


@pytest.mark.parametrize("seed", range(4))
def test_a_join_of_encoded_codes_is_the_join_of_their_text(tmp_path: Path, seed: int) -> None:
    rule_path = tmp_path / "rule.yaml"
    rule_path.write_text(RULE, encoding="utf-8")
    rule = load_rule(rule_path)
    sheets = [read_sheet(path) for path in _write_sheets(tmp_path, 3, 400, seed)]
    assert all(isinstance(sheet.codes, pa.DictionaryArray) for sheet in sheets)
    encoded, plain = join_sheets(sheets, rule), join_sheets([_plain(sheet) for sheet in sheets], rule)
    assert (encoded.codes == plain.codes).all() and (encoded.status == plain.status).all()
    assert encoded.summary() == plain.summary() and encoded.warnings == plain.warnings
    assert invalid_values(encoded, range(3)) == invalid_values(plain, range(3)) != {}
    assert encoded.log.equals(plain.log)
    assert encoded.log["raw_value"].map(type).eq(str).all()


def test_rows_are_kept_only_when_some_row_was_dropped(tmp_path: Path) -> None:
    whole, gapped, tail = tmp_path / "whole.csv", tmp_path / "gapped.csv", tmp_path / "tail.csv"
    whole.write_text("comment_id,code\na,yes\nb,no\nc,yes\n", encoding="utf-8")
    gapped.write_text("comment_id,code\na,yes\n,\nb,no\n\nc,yes\n", encoding="utf-8")
    tail.write_text("comment_id,code\na,yes\nb,no\n,\n", encoding="utf-8")
    read = read_sheet(whole)
    assert read.row_numbers is None and read.rows.tolist() == [2, 3, 4] and read.row_count == 3
    assert read.rows_at(np.array([2, 0])).tolist() == [4, 2] and int(read.rows_at(1)) == 3
    dropped = read_sheet(gapped)
    assert dropped.row_numbers is not None and dropped.rows.tolist() == [2, 4, 6] and dropped.empty_rows == 2
    assert dropped.rows_at(np.array([2, 1])).tolist() == [6, 4] and int(dropped.rows_at(1)) == 4
    assert read.rows_at(np.array([2, 0])).dtype == read.rows.dtype == dropped.rows_at(np.array([1])).dtype
    last_dropped = read_sheet(tail)  # the rows left are 2 and 3 all the same
    assert last_dropped.row_numbers is None and last_dropped.rows.tolist() == [2, 3]


def test_a_join_names_the_same_rows_whether_or_not_they_were_kept(tmp_path: Path) -> None:
    rule_path = tmp_path / "rule.yaml"
    rule_path.write_text(RULE, encoding="utf-8")
    rule = load_rule(rule_path)
    sheets = [read_sheet(path) for path in _write_sheets(tmp_path, 3, 300, seed=7, empty_rows=False)]
    assert all(sheet.row_numbers is None for sheet in sheets)
    kept = [dataclasses.replace(sheet, row_numbers=sheet.rows) for sheet in sheets]
    assert join_sheets(sheets, rule).log.equals(join_sheets(kept, rule).log)


@pytest.mark.parametrize("lengths", [(9,), (4, 7, 11)])
def test_ids_packed_a_block_at_a_time_are_numbered_as_all_at_once(lengths: tuple[int, ...]) -> None:
    """Matching groups each sheet's packed ids a block of rows at a time (one length: a byte matrix;
    several: read at their offsets): the numbers are those of one dictionary encoding of all ids."""
    rng = np.random.default_rng(11)
    texts = [f"t1_{value:x}"[: rng.choice(lengths)] for value in rng.integers(1 << 40, 1 << 44, size=3_000)]
    columns = [pa.array([*rng.permutation(texts)[:2_000], ""], type=pa.string()) for _ in range(3)]
    packers = key_packers(columns)
    assert packers is not None
    whole = [pack() for pack in packers]
    assert all(np.array_equal(pack.rows(5, 1_234), keys[5:1_234]) for pack, keys in zip(packers, whole))
    expected = pa.chunked_array([pa.array(keys) for keys in whole]).dictionary_encode()
    for block in (1, 7, 500, 1 << 20):
        indices, distinct = factorize(packers, bits=4, block=block)
        assert distinct.tolist() == expected.chunk(0).dictionary.to_pylist()
        assert [found.tolist() for found in indices] == [chunk.indices.to_pylist() for chunk in expected.chunks]


def test_sheets_read_the_same_with_or_without_jemalloc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """CSV sheets are parsed with pyarrow's jemalloc where the wheel has it (io.tables.parse_pool),
    else with its default pool: the same columns either way."""
    paths = _write_sheets(tmp_path, 2, 400, seed=5, empty_rows=True)
    as_read = [read_sheet(path) for path in paths]
    try:
        pa.jemalloc_memory_pool()
    except NotImplementedError:
        assert parse_pool().backend_name == pa.default_memory_pool().backend_name
    else:
        assert parse_pool().backend_name == "jemalloc"

    def no_jemalloc() -> pa.MemoryPool:
        raise NotImplementedError("built without jemalloc")

    monkeypatch.setenv("ARROW_DEFAULT_MEMORY_POOL", "system")  # the user's choice of pool is kept
    assert parse_pool().backend_name == pa.default_memory_pool().backend_name
    monkeypatch.delenv("ARROW_DEFAULT_MEMORY_POOL")
    monkeypatch.setattr(pa, "jemalloc_memory_pool", no_jemalloc)
    assert parse_pool().backend_name == pa.default_memory_pool().backend_name
    without = [read_sheet(path) for path in paths]
    for one, other in zip(as_read, without):
        assert one.comment_ids.equals(other.comment_ids) and one.codes.equals(other.codes)
        assert np.array_equal(one.rows, other.rows)
