"""join: every cell classified, every row and unit accounted for, in every sheet format."""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from irr_audit.cli import app
from irr_audit.io.sheets import read_sheet
from irr_audit.join.join import join_sheets
from irr_audit.rules.load import load_rule

ROOT = Path(__file__).resolve().parents[1]
RULE = ROOT / "rules" / "explicit_current_failure" / "v1.yaml"


def run(*args: str):
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def write(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.write_bytes(text.encode(encoding))
    return path


def read_log(folder: Path) -> list[dict[str, str]]:
    with open(folder / "missingness_log.csv", newline="", encoding="utf-8") as stream:
        return list(csv.DictReader(stream))


def test_example_join_writes_table_log_and_summary(tmp_path: Path) -> None:
    sheets = [ROOT / "examples" / "sheets" / name for name in ("alice.csv", "bob.csv")]
    before = [hashlib.sha256(path.read_bytes()).hexdigest() for path in sheets]
    result = run("join", *map(str, sheets), "--rule", str(RULE), "--out", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    assert "22 units from 2 coders: 20 fully coded, 2 in the missingness log (1 unknown, 1 blank)." in result.stderr
    out = tmp_path / "out"
    joined = list(csv.DictReader(open(out / "joined.csv", newline="")))
    assert list(joined[0]) == ["comment_id", "alice", "bob", "fully_coded"]
    assert len(joined) == 22 and sum(row["fully_coded"] == "True" for row in joined) == 20
    log = read_log(out)
    assert [(r["sheet"], r["coder"], r["row"], r["comment_id"], r["raw_value"], r["reason"]) for r in log] == [
        ("alice.csv", "alice", "22", "kq45w1x", "unknown", "unknown"),
        ("bob.csv", "bob", "8", "kq46x5y", "", "blank"),
    ]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["units"] == {"total": 22, "fully_coded": 20, "missing": 2}
    assert [s["sha256"] for s in summary["sheets"]] == before
    assert [hashlib.sha256(path.read_bytes()).hexdigest() for path in sheets] == before  # originals untouched
    scored = json.loads(run("score", str(out), "--format", "json").stdout)
    assert scored["metrics"]["cohen_kappa"]["value"] == pytest.approx(0.7, abs=1e-12)


def test_every_cell_status_is_classified_and_logged(tmp_path: Path) -> None:
    alice = write(
        tmp_path / "alice.csv",
        "comment_id,code\n007,yes\nc2,no\nc3,unknown\nc4,Yes \nc4,yes\nc5,yes\nc5,no\n,yes\nc7, NO\n",
    )
    bob = write(tmp_path / "bob.csv", "comment_id,code\n007,yes\nc2,\nc3,no\nc4,no\nc6,maybe\n 007 ,yes\nc7,n\n")
    result = join_sheets([read_sheet(alice), read_sheet(bob)], load_rule(RULE))
    assert result.unit_ids.tolist() == ["007", "c2", "c3", "c4", "c5", "c7", "c6"]  # 007 stays text
    reasons = [(row.coder, row.comment_id, row.reason) for row in result.log.itertuples()]
    assert reasons == [
        ("alice", "c3", "unknown"),
        ("alice", "c4", "duplicate"),
        ("alice", "c5", "conflict"),
        ("alice", "c5", "conflict"),
        ("alice", "", "missing_id"),
        ("alice", "c6", "absent"),
        ("bob", "c2", "blank"),
        ("bob", "c6", "invalid"),
        ("bob", "007", "duplicate"),
        ("bob", "c5", "absent"),
    ]
    assert result.fully_coded.tolist() == [True, False, False, True, False, True, False]
    # trailing whitespace, case and the alias n all give the code "no"
    assert result.joined_frame().set_index("comment_id").loc["c7"].tolist() == ["no", "no", True]
    # every unit is fully coded or has a row in the log
    logged = set(result.log["comment_id"])
    assert all(fully or unit in logged for unit, fully in zip(result.unit_ids, result.fully_coded))


def test_log_details_name_the_rows_behind_duplicates_and_conflicts(tmp_path: Path) -> None:
    """Each duplicate names the row it repeats; each conflict lists every row of its id, in order."""
    alice = write(tmp_path / "alice.csv", "comment_id,code\nb,no\na,yes\nb,yes\na,yes\nc,yes\nb,no\na,yes\nc,no\n")
    bob = write(tmp_path / "bob.csv", "comment_id,code\na,no\nb,no\nc,yes\n")
    log = join_sheets([read_sheet(alice), read_sheet(bob)], load_rule(RULE)).log
    details = [(row.row, row.reason, row.detail) for row in log.itertuples() if row.coder == "alice"]
    assert details == [
        (2, "conflict", "comment id is in rows 2, 4, 7 of this sheet with different codes"),
        (4, "conflict", "comment id is in rows 2, 4, 7 of this sheet with different codes"),
        (5, "duplicate", "repeats row 3 with the same code; that row is used"),
        (6, "conflict", "comment id is in rows 6, 9 of this sheet with different codes"),
        (7, "conflict", "comment id is in rows 2, 4, 7 of this sheet with different codes"),
        (8, "duplicate", "repeats row 3 with the same code; that row is used"),
        (9, "conflict", "comment id is in rows 6, 9 of this sheet with different codes"),
    ]


def test_an_invalid_code_that_looks_like_a_code_says_why_it_is_not_one(tmp_path: Path) -> None:
    """The raw value beside it looks like the code: the detail names the invisible character or
    the letter of another script; other invalid codes keep the plain detail."""
    codes = ["ye\u200bs", "\ufeffno", "nо", "УЕs", "unknоwn", "\u200bmaybe", "yés", "maybe"]
    alice = write(tmp_path / "alice.csv", "comment_id,code\n" + "".join(f"u{i},{c}\n" for i, c in enumerate(codes)))
    bob = write(tmp_path / "bob.csv", "comment_id,code\n" + "".join(f"u{i},yes\n" for i in range(len(codes))))
    rule = load_rule(RULE)
    log = join_sheets([read_sheet(alice), read_sheet(bob)], rule).log
    plain = rule.describe_codes()
    assert [(row.reason, row.detail) for row in log.itertuples()] == [
        ("invalid", plain + "; it holds an invisible character: U+200B ZERO WIDTH SPACE; without it, it reads 'yes'"),
        (
            "invalid",
            plain + "; it holds an invisible character: U+FEFF ZERO WIDTH NO-BREAK SPACE; without it, it reads 'no'",
        ),
        ("invalid", plain + "; it looks like 'no', but holds U+043E CYRILLIC SMALL LETTER O"),
        (
            "invalid",
            plain
            + "; it looks like 'YEs', but holds U+0415 CYRILLIC CAPITAL LETTER IE, U+0423 CYRILLIC CAPITAL LETTER U",
        ),
        ("invalid", plain + "; it looks like 'unknown', but holds U+043E CYRILLIC SMALL LETTER O"),
        ("invalid", plain + "; it holds an invisible character: U+200B ZERO WIDTH SPACE"),
        ("invalid", plain),
        ("invalid", plain),
    ]


def test_every_input_row_is_accounted_for_once(tmp_path: Path) -> None:
    alice = write(tmp_path / "alice.csv", "comment_id,code\na,yes\na,yes\na,yes\nb,no\nb,yes\nc,\n,no\n")
    bob = write(tmp_path / "bob.csv", "comment_id,code\na,no\nb,no\nc,yes\n")
    result = join_sheets([read_sheet(alice), read_sheet(bob)], load_rule(RULE))
    rows_in_log = result.log.dropna(subset=["row"])
    alice_log = rows_in_log[rows_in_log["coder"] == "alice"]
    valid_cells_alice = int((result.codes[:, 0] >= 0).sum())
    assert len(alice_log) + valid_cells_alice == 7


@pytest.mark.parametrize("sample", [None, ["a", "b", "c", "d"]])
def test_positions_point_at_the_row_behind_each_cell(tmp_path: Path, sample: list[str] | None) -> None:
    """positions[u, c] is the row (0-based, among the sheet's rows) whose code fills the
    cell, and -1 for an absent or conflicting cell; with repeats, blank ids and ids
    outside the sample around."""
    alice = write(tmp_path / "alice.csv", "comment_id,code\nb,no\na,yes\nb,yes\n,no\na,yes\nd,maybe\nzz,yes\nc,no\n")
    bob = write(tmp_path / "bob.csv", "comment_id,code\nc,yes\na,no\nd,no\n")
    result = join_sheets([read_sheet(alice), read_sheet(bob)], load_rule(RULE), sample_ids=sample)
    units = result.unit_ids.tolist()
    expected = {"alice": {"a": 1, "b": -1, "c": 7, "d": 5, "zz": 6}, "bob": {"a": 1, "c": 0, "d": 2}}
    for column, coder in enumerate(result.coders):
        for unit, position in zip(units, result.positions[:, column].tolist()):
            assert position == expected[coder].get(unit, -1), (coder, unit)


@pytest.mark.parametrize("sample", [["abc1", "abc2", "t1_abc3"], ["T1_abc1", "t1_abc2", "abc3"]])
def test_a_reddit_fullname_and_its_bare_id_are_one_sampled_unit(tmp_path: Path, sample: list[str]) -> None:
    """README: t1_abc and abc are one comment wherever ids are compared; a sheet of fullnames
    against a ledger of bare ids (or the reverse) matched nothing: every row not_in_sample.
    The units keep the ledger's ids as written, the log the sheet's."""
    alice = write(tmp_path / "alice.csv", "comment_id,code\nt1_abc1,yes\nt1_abc2,no\nabc3,yes\nt1_zz,no\n")
    bob = write(tmp_path / "bob.csv", "comment_id,code\nabc1,yes\nabc2,no\nt1_abc3,no\n")
    rule = load_rule(RULE)

    result = join_sheets([read_sheet(alice), read_sheet(bob)], rule, sample_ids=sample)

    assert result.unit_ids.tolist() == sample
    assert result.fully_coded.tolist() == [True, True, True]
    assert result.log["comment_id"].tolist() == ["t1_zz"]
    assert result.log["reason"].tolist() == ["not_in_sample"]
    assert result.log["detail"].tolist() == [
        "comment id is not one of the sample's units (not drawn into the sample, or not in its ledger)"
    ]
    plain = join_sheets([read_sheet(alice), read_sheet(bob)], rule, sample_ids=["t1_", "t3_", "tx_a"])
    assert plain.unit_ids.tolist() == ["t1_", "t3_", "tx_a"]  # no id is left after the prefix: kept whole


@pytest.mark.parametrize("fmt", ["csv", "tsv", "xlsx", "jsonl"])
def test_every_sheet_format(fmt: str, tmp_path: Path) -> None:
    rows = [("007", "yes"), ("c2", "no"), ("c3", "unknown")]
    other = write(tmp_path / "bob.csv", "comment_id,code\n007,yes\nc2,yes\nc3,no\n")
    path = tmp_path / f"alice.{fmt}"
    if fmt == "csv":
        write(path, "comment_id,code\n" + "".join(f"{i},{c}\n" for i, c in rows))
    elif fmt == "tsv":
        write(path, "comment_id\tcode\n" + "".join(f"{i}\t{c}\n" for i, c in rows))
    elif fmt == "jsonl":
        write(path, "".join(json.dumps({"comment_id": i, "code": c}) + "\n" for i, c in rows))
    else:
        from openpyxl import Workbook

        book = Workbook()
        sheet = book.active
        sheet.append(["comment_id", "code"])
        for row in rows:
            sheet.append(list(row))
        book.save(path)
    result = run("score", str(path), str(other), "--rule", str(RULE), "--format", "json")
    assert result.exit_code == 0, result.output
    scored = json.loads(result.stdout)
    assert scored["units"] == {"total": 3, "fully_coded": 2, "missing": 1, "available_case": 2, "gwet_missing": 3}
    assert scored["table"] == [[1, 0], [1, 0]]


def test_bom_at_start_is_read(tmp_path: Path) -> None:
    alice = write(tmp_path / "alice.csv", "\ufeffcomment_id,code\na,yes\nb,no\n")
    bob = write(tmp_path / "bob.csv", "comment_id,code\na,yes\nb,no\n", encoding="utf-16")  # with its BOM
    scored = json.loads(run("score", str(alice), str(bob), "--rule", str(RULE), "--format", "json").stdout)
    assert scored["units"]["fully_coded"] == 2


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl"])
@pytest.mark.parametrize(("encoding", "named"), [("utf-32-le", "little-endian"), ("utf-32-be", "big-endian")])
def test_a_utf32_sheet_is_refused_naming_utf32_not_misread_as_utf16(
    tmp_path: Path, suffix: str, encoding: str, named: str
) -> None:
    """UTF-32's little-endian mark FF FE 00 00 starts with UTF-16's FF FE: the sheet was decoded as
    UTF-16 and refused for a missing column or a ragged row."""
    text = {".csv": "comment_id,code\na,yes\n", ".tsv": "comment_id\tcode\na\tyes\n"}.get(
        suffix, '{"comment_id": "a", "code": "yes"}\n'
    )
    sheet = tmp_path / f"alice{suffix}"
    sheet.write_bytes("\ufeff".encode(encoding) + text.encode(encoding))
    bob = write(tmp_path / "bob.csv", "comment_id,code\na,yes\n")
    result = run("score", str(sheet), str(bob), "--rule", str(RULE))
    assert result.exit_code == 2
    assert result.stderr.startswith(
        f"Error [sheet-encoding]: sheet alice{suffix} is not UTF-8 text: it starts with the byte-order mark of "
        f"UTF-32 ({named})"
    )
    assert "UTF-8" in result.stderr.split("Hint:")[1]


def test_rule_version_column_must_match_the_rule(tmp_path: Path) -> None:
    alice = write(tmp_path / "alice.csv", "comment_id,code,rule_version\na,yes,v1\nb,no,v2\n")
    bob = write(tmp_path / "bob.csv", "comment_id,code,rule_version\na,yes,1\nb,no,1\n")
    result = run("join", str(alice), str(bob), "--rule", str(RULE), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert result.stderr.startswith(
        "Error [sheet-rule-version]: sheet alice.csv was coded under explicit_current_failure version 2 "
        "(row 3), but the rule file"
    )
    assert "is version 1" in result.stderr
    assert not (tmp_path / "out").exists()


def test_output_never_overwrites_an_input(tmp_path: Path) -> None:
    alice = write(tmp_path / "joined.csv", "comment_id,code\na,yes\n")
    bob = write(tmp_path / "bob.csv", "comment_id,code\na,yes\n")
    before = alice.read_bytes()
    result = run("join", str(alice), str(bob), "--rule", str(RULE), "--out", str(tmp_path))
    assert result.exit_code == 2
    assert "would overwrite an input file" in result.stderr
    assert alice.read_bytes() == before


def test_an_id_new_in_two_later_sheets_is_one_unit(tmp_path: Path) -> None:
    # the first sheet lacks x; the second and third both have it: one unit, fully coded
    sheets = [
        write(tmp_path / "a.csv", "comment_id,code\nw,yes\n"),
        write(tmp_path / "b.csv", "comment_id,code\nx,no\nw,yes\n"),
        write(tmp_path / "c.csv", "comment_id,code\nx,no\nw,no\n"),
    ]
    result = join_sheets([read_sheet(path) for path in sheets], load_rule(RULE))
    assert result.unit_ids.tolist() == ["w", "x"]
    assert result.codes.tolist() == [[0, 0, 1], [-1, 1, 1]]
    assert result.log["reason"].tolist() == ["absent"]


def test_units_are_numbered_the_same_by_both_encodings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The shared-dictionary fast path and the one-array fallback give the same units."""
    import pyarrow as pa

    import irr_audit.join.join as join_module

    texts = ["comment_id,code\nb,yes\na,no\n, yes\n", "comment_id,code\nc,no\nb,yes\n", "comment_id,code\na,yes\n"]
    sheets = [read_sheet(write(tmp_path / f"{name}.csv", text)) for name, text in zip("xyz", texts)]
    fast = join_sheets(sheets, load_rule(RULE))
    real = pa.chunked_array

    class PerChunk:  # as if pyarrow gave each chunk a dictionary of its own
        def __init__(self, arrays, type=None):
            self.chunked = real(arrays, type=type)

        def dictionary_encode(self):
            return real([chunk.dictionary_encode() for chunk in self.chunked.chunks])

    monkeypatch.setattr(join_module.pa, "chunked_array", PerChunk)
    slow = join_sheets(sheets, load_rule(RULE))
    assert fast.unit_ids.tolist() == slow.unit_ids.tolist() == ["b", "a", "c"]
    assert fast.codes.tolist() == slow.codes.tolist()
