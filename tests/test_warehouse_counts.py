"""`irr-audit counts`: a long table counted by DuckDB gives join's counts.csv byte for byte, and
`score --counts` on it gives what `score` gives on the same rows as sheets."""

from __future__ import annotations

import csv
import json
import os as os_module
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from irr_audit.cli import app
from irr_audit.errors import IrrAuditError

pytest.importorskip("duckdb", reason="the warehouse extra (DuckDB) is not installed")

NOMINAL = """rule: failure
version: 1
scale: nominal
codes: ["yes", "no", "maybe"]
missing_codes: [unknown, "n/a"]
aliases: {y: "yes", n: "no", "?": unknown}
"""
ORDINAL = """rule: level
version: 1
scale: ordinal
codes: ["0", "1", "2", "3"]
missing_codes: [unknown]
aliases: {none: "0", severe: "3"}
"""
RAW = {
    "nominal": [
        "yes",
        "YES",
        " Yes ",
        "y",
        "Y",
        "no",
        "No",
        "n",
        "maybe",
        "unknown",
        "Unknown",
        "n/a",
        "?",
        "",
        "  ",
        "\u3000",
        "perhaps",
        "ｙｅｓ",
        "=1",
        "'no",
    ],
    "ordinal": ["0", "1", "2", "3", " 2", "none", "NONE", "severe", "unknown", "", " ", "4", "x", "-1", "１"],
}
COMPARED = ("metrics", "available_case", "gwet_missing", "table", "categories", "coders", "pairs")
NAMES = ["ann", "ben", "cat", "dan", "eve"]


def run(*args: str):
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def long_rows(seed: int, scale: str) -> tuple[list[str], list[tuple[str, str, str]]]:
    """Random long rows with aliases, case and width variants, blanks, missing and invalid codes,
    repeats (the same code again, another spelling of it, or another code), absent cells,
    ids with surrounding whitespace, rows without an id, and rows of no coder."""
    rng = random.Random(seed)
    coders = NAMES[: rng.randint(2, 5)]
    raw = RAW[scale]
    valid = raw[:9] if scale == "nominal" else raw[:8]
    rows: list[tuple[str, str, str]] = []
    for unit in range(rng.randint(20, 120)):
        unit_id = f"t1_{unit:04x}"
        truth = rng.choice(valid)
        for coder in coders:
            if rng.random() < 0.1:
                continue  # absent
            code = truth if rng.random() < 0.6 else rng.choice(raw)
            spelled = rng.choice([unit_id, unit_id, unit_id, f" {unit_id}", f"{unit_id}\u3000", f"\t{unit_id} "])
            rows.append((spelled, rng.choice([coder, coder, f" {coder} "]), code))
            if rng.random() < 0.15:  # a repeat: the same text, another spelling of the code, or any code
                rows.append((unit_id, coder, rng.choice([code, code.upper(), rng.choice(raw)])))
    for _ in range(rng.randint(0, 4)):
        rows.append((rng.choice(["", " "]), rng.choice(coders), rng.choice(raw)))  # no id (or an empty row)
    for _ in range(rng.randint(0, 2)):
        rows.append((f"t1_{rng.randint(0, 200):04x}", rng.choice(["", "  "]), rng.choice(raw)))  # no coder
    rng.shuffle(rows)
    return coders, rows


def write_long_csv(path: Path, rows: list[tuple[str, str, str]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream, lineterminator="\n")
        writer.writerow(["comment_id", "coder", "code"])
        writer.writerows(rows)


def write_sheets(folder: Path, coders: list[str], rows: list[tuple[str, str, str]]) -> list[str]:
    """The same rows as one sheet per coder (its name the file's), in the table's order."""
    folder.mkdir()
    paths = []
    for coder in coders:
        path = folder / f"{coder}.csv"
        with open(path, "w", newline="", encoding="utf-8") as stream:
            writer = csv.writer(stream, lineterminator="\n")
            writer.writerow(["comment_id", "code"])
            writer.writerows((unit, code) for unit, name, code in rows if name.strip() == coder)
        paths.append(str(path))
    return paths


def score_json(*args: str) -> dict:
    result = run("score", *args, "--format", "json", "-q")
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("scale", ["nominal", "ordinal"])
@pytest.mark.parametrize("seed", range(6))
def test_counts_of_a_long_table_are_joins_counts(tmp_path: Path, seed: int, scale: str) -> None:
    coders, rows = long_rows(seed, scale)
    rule = tmp_path / "rule.yaml"
    rule.write_text(NOMINAL if scale == "nominal" else ORDINAL)
    write_long_csv(tmp_path / "long.csv", rows)
    pq.write_table(
        pa.table({name: [row[at] for row in rows] for at, name in enumerate(["comment_id", "coder", "code"])}),
        tmp_path / "long.parquet",
    )
    sheets = write_sheets(tmp_path / "sheets", sorted(coders), rows)
    assert run("join", *sheets, "--rule", str(rule), "--out", str(tmp_path / "joined"), "-q").exit_code == 0
    joined = (tmp_path / "joined" / "counts.csv").read_bytes()
    join_summary = json.loads((tmp_path / "joined" / "summary.json").read_text())
    for table in ("long.csv", "long.parquet"):
        out, summary = tmp_path / f"{table}.counts.csv", tmp_path / f"{table}.summary.json"
        result = run(
            "counts", str(tmp_path / table), "--rule", str(rule), "--out", str(out), "--summary", str(summary), "-q"
        )
        assert result.exit_code == 0, result.output
        assert out.read_bytes() == joined
        account = json.loads(summary.read_text())
        assert account["units"] == join_summary["units"]
        assert account["cells"] == join_summary["cells"]
        logged = {reason: count for reason, count in account["log_rows"].items() if reason != "no_coder"}
        assert logged == join_summary["log_rows"]
        no_coder = sum(1 for unit, coder, _ in rows if unit.strip() and not coder.strip())
        assert account["log_rows"].get("no_coder", 0) == no_coder
        assert account["rows"] == len(rows)
    whole = score_json(*sheets, "--rule", str(rule))
    counted = score_json("--counts", str(tmp_path / "long.csv.counts.csv"), "--rule", str(rule))
    assert {key: counted[key] for key in COMPARED} == {key: whole[key] for key in COMPARED}


def write_csv(path: Path, header: list[str], rows: list[tuple[str, ...]], **shape) -> None:
    with open(path, "w", newline="", encoding="utf-8-sig" if shape.pop("bom", False) else "utf-8") as stream:
        csv.writer(stream, **shape).writerows([header, *rows])


@pytest.mark.parametrize(
    "shape",
    [
        {"lineterminator": "\r\n"},
        {"lineterminator": "\n", "quoting": csv.QUOTE_ALL, "bom": True},
        {"lineterminator": "\r\n", "delimiter": ";", "quoting": csv.QUOTE_ALL},
        {"lineterminator": "\n", "delimiter": "\t"},
        {"lineterminator": "\r", "quoting": csv.QUOTE_ALL},  # old Mac line ends: reading the header was a traceback
    ],
    ids=["crlf", "quoted-bom", "semicolon-crlf-quoted", "tab", "cr"],
)
def test_counts_read_the_csv_shapes_people_have(tmp_path: Path, shape: dict) -> None:
    """CRLF, a BOM, quoted fields and headers, ; and tab delimiters, and a note column whose
    quoted values hold line breaks and delimiters: the same counts as join's on the same sheets."""
    coders, rows = long_rows(7, "nominal")
    notes = ["", "a note, with a comma", "two\nlines; and a semicolon", 'a "quoted" word\r\nand a tab\t']
    noted = [(*row, notes[at % len(notes)]) for at, row in enumerate(rows)]
    rule = tmp_path / "rule.yaml"
    rule.write_text(NOMINAL)
    write_csv(tmp_path / "long.csv", ["comment_id", "coder", "code", "note"], noted, **dict(shape))
    (tmp_path / "sheets").mkdir()
    sheets = []
    for coder in sorted(coders):
        sheet = tmp_path / "sheets" / f"{coder}.csv"
        mine = [(unit, code, note) for unit, name, code, note in noted if name.strip() == coder]
        write_csv(sheet, ["comment_id", "code", "note"], mine, **dict(shape))
        sheets.append(str(sheet))
    assert run("join", *sheets, "--rule", str(rule), "--out", str(tmp_path / "joined"), "-q").exit_code == 0
    result = run("counts", str(tmp_path / "long.csv"), "--rule", str(rule), "--out", str(tmp_path / "c.csv"), "-q")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "c.csv").read_bytes() == (tmp_path / "joined" / "counts.csv").read_bytes()


def test_coders_asked_for_are_counted_in_their_order_and_the_others_logged(tmp_path: Path) -> None:
    coders, rows = long_rows(0, "ordinal")  # five coders
    rule = tmp_path / "rule.yaml"
    rule.write_text(ORDINAL)
    write_long_csv(tmp_path / "long.csv", rows)
    asked = ["eve", "ann", "cat"]
    sheets = write_sheets(tmp_path / "sheets", asked, rows)
    assert run("join", *sheets, "--rule", str(rule), "--out", str(tmp_path / "joined"), "-q").exit_code == 0
    out, summary = tmp_path / "c.csv", tmp_path / "s.json"
    result = run(
        "counts", str(tmp_path / "long.csv"), "--rule", str(rule), "--out", str(out), "--summary", str(summary),
        "--coders", "eve, ann,cat",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == (tmp_path / "joined" / "counts.csv").read_bytes()
    others = sum(1 for unit, coder, _ in rows if unit.strip() and coder.strip() in ("ben", "dan"))
    assert others and json.loads(summary.read_text())["log_rows"]["other_coder"] == others
    assert "other_coder" in result.stderr


@pytest.mark.parametrize(
    ("content", "options", "code"),
    [
        ("comment_id,coder,code\na,ann,1\n", ["--memory-limit", "lots"], "usage-memory-limit"),
        ("id,coder,code\na,ann,1\na,ben,1\n", [], "table-missing-column"),
        ("comment_id,coder,code\na,ann,1\nb,ann,2\n", [], "table-one-coder"),
        ("comment_id,coder,code\na\x1b,ann,1\na,ben,1\n", [], "table-control-character"),
        ("comment_id,coder,code\na,ann,1\na,b\x07en,1\n", [], "table-control-character"),
        ("comment_id,coder,code\na,ann,1,extra\na,ben,1\n", [], "table-unreadable"),
        ("comment_id,coder,code\na,ann,1\na,units,1\n", [], "output-column-collision"),
        ("comment_id,coder,code\na,ann,1\na,comment_id,1\n", [], "table-reserved-coder"),
        ("comment_id,coder,code\na,ann,1\na,ben,1\n", ["--coders", "ann,ann"], "usage-coders"),
        ("comment_id,coder,code\na,ann,1\na,ben,1\na,,2\n", ["--coders", "ann,,ben"], "usage-coders"),
        ("comment_id,coder,code\na,ann,1\na,ben,1\na,,2\n", ["--coders", "ann,ben,"], "usage-coders"),
        ("comment_id,coder,code\na,ann,1\na,ben,1\n", ["--coders", "ann,bne"], "usage-coders"),
        ("comment_id,coder,code\na,ann,1\na,ben,1\n", ["--memory-limit", "0.0001KB"], "table-memory"),
        ("comment_id,coder,code\na,ann,1\na,ben,1\n", ["--temp-directory", "/nonexistent/x"], "usage-temp-directory"),
        ("comment_id,coder,code\na,ann,\xff\na,ben,1\n", [], "table-unreadable"),
        ("comment_id,coder,code,rule_version\na,ann,1,1\na,ben,1,v2\n", [], "table-rule-version"),
        ("comment_id,coder,code,rule_version\na,ann,1,1\na,ben,1,one\n", [], "table-rule-version"),
        ('{"comment_id": "a", "coder": "ann", "code": "1"}\n', [], "table-format"),
    ],
)
def test_bad_tables_are_refused_with_one_message(tmp_path: Path, content: str, options: list[str], code: str) -> None:
    (tmp_path / "rule.yaml").write_text(ORDINAL)
    (tmp_path / "long.csv").write_bytes(content.encode("utf-8", errors="surrogateescape").replace(b"\xc3\xbf", b"\xff"))
    result = run(
        "counts", str(tmp_path / "long.csv"), "--rule", str(tmp_path / "rule.yaml"), "--out", str(tmp_path / "c.csv"),
        *options,
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"Error [{code}]"), result.stderr
    assert "Traceback" not in result.output
    assert not (tmp_path / "c.csv").exists()


def test_a_floating_point_id_column_is_refused(tmp_path: Path) -> None:
    (tmp_path / "rule.yaml").write_text(ORDINAL)
    pq.write_table(pa.table({"comment_id": [1.5, 2.0], "coder": ["ann", "ben"], "code": ["1", "1"]}), tmp_path / "t.pq")
    result = run("counts", str(tmp_path / "t.pq"), "--rule", str(tmp_path / "rule.yaml"), "--out", str(tmp_path / "c"))
    assert result.exit_code == 2 and result.stderr.startswith("Error [table-id-type]"), result.stderr


@pytest.mark.parametrize(
    ("column", "values"),
    [
        ("code", pa.array([1.0, 1.0])),  # pandas makes integers with a gap floats: 1.0 was an invalid code
        ("code", pa.array([["1"], ["1"]])),
        ("code", pa.array(["é".encode(), b"1"])),
        ("coder", pa.array([{"name": "ann"}, {"name": "ben"}])),
    ],
    ids=["float-code", "list-code", "bytes-code", "struct-coder"],
)
def test_a_coder_or_code_column_of_values_that_are_not_text_is_refused(
    tmp_path: Path, column: str, values: pa.Array
) -> None:
    """They were cast to text no sheet holds (1.0, [1], \\xC3\\xA9, {'name': ann}): every code invalid, exit 0."""
    (tmp_path / "rule.yaml").write_text(ORDINAL)
    pq.write_table(
        pa.table({"comment_id": ["a", "a"], "coder": ["ann", "ben"], "code": ["1", "1"], column: values}),
        tmp_path / "t.pq",
    )
    result = run("counts", str(tmp_path / "t.pq"), "--rule", str(tmp_path / "rule.yaml"), "--out", str(tmp_path / "c"))
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"Error [table-column-type]: table t.pq: its {column} column '{column}' holds "), (
        result.stderr
    )
    assert not (tmp_path / "c").exists()


@pytest.mark.parametrize(
    "values", [pa.array([1, 1]), pa.array(["1", "1"]).dictionary_encode(), pa.array([None, None], pa.null())]
)
def test_integer_dictionary_and_null_code_columns_are_read_as_text(tmp_path: Path, values: pa.Array) -> None:
    (tmp_path / "rule.yaml").write_text(ORDINAL)
    pq.write_table(pa.table({"comment_id": ["a", "a"], "coder": ["ann", "ben"], "code": values}), tmp_path / "t.pq")
    result = run("counts", str(tmp_path / "t.pq"), "--rule", str(tmp_path / "rule.yaml"), "--out", str(tmp_path / "c"))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "c").read_text() == ("ann,ben,units\n,,1\n" if values.null_count else "ann,ben,units\n1,1,1\n")


@pytest.mark.parametrize("second", ["code", "CODE", " Code "])
def test_a_parquet_code_column_named_twice_is_refused(tmp_path: Path, second: str) -> None:
    """DuckDB renames the second column code_1: the first was counted, the other never looked at."""
    (tmp_path / "rule.yaml").write_text(ORDINAL)
    columns = [pa.array(["a", "a"]), pa.array(["ann", "ben"]), pa.array(["1", "1"]), pa.array(["2", "3"])]
    pq.write_table(pa.Table.from_arrays(columns, names=["comment_id", "coder", "code", second]), tmp_path / "t.pq")
    result = run("counts", str(tmp_path / "t.pq"), "--rule", str(tmp_path / "rule.yaml"), "--out", str(tmp_path / "c"))
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith('Error [table-duplicate-column]: table t.pq has 2 columns named "code".')
    assert not (tmp_path / "c").exists()


@pytest.mark.parametrize("table", ["t.csv", "t.parquet"])
def test_columns_without_a_name_are_read(tmp_path: Path, table: str) -> None:
    """pandas' to_csv writes its index under an empty name: the SQL named the column "", a parser error."""
    (tmp_path / "rule.yaml").write_text(ORDINAL)
    if table == "t.csv":
        (tmp_path / table).write_text(",comment_id,coder,,code\n0,a,ann,x,1\n1,a,ben,y,2\n")
    else:
        columns = [pa.array(["0", "1"]), pa.array(["a", "a"]), pa.array(["ann", "ben"]), pa.array(["1", "2"])]
        pq.write_table(pa.Table.from_arrays(columns, names=["", "comment_id", "coder", "code"]), tmp_path / table)
    out = tmp_path / "c.csv"
    result = run("counts", str(tmp_path / table), "--rule", str(tmp_path / "rule.yaml"), "--out", str(out), "-q")
    assert result.exit_code == 0, result.output
    assert out.read_text() == "ann,ben,units\n1,2,1\n"


def test_a_long_text_column_is_read_as_a_sheets(tmp_path: Path) -> None:
    """A row over DuckDB's default of 2,000,000 bytes (a long comment beside the codes) was unreadable."""
    (tmp_path / "rule.yaml").write_text(ORDINAL)
    (tmp_path / "t.csv").write_text(f"comment_id,coder,code,body\na,ann,1,{'x' * 3_000_000}\na,ben,1,\n")
    out = tmp_path / "c.csv"
    result = run("counts", str(tmp_path / "t.csv"), "--rule", str(tmp_path / "rule.yaml"), "--out", str(out), "-q")
    assert result.exit_code == 0, result.output
    assert out.read_text() == "ann,ben,units\n1,1,1\n"


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"comment_id,coder,code\na,ann,1\na,b\xe9n,1\n", "Line: 3: Invalid unicode (byte sequence mismatch)"),
        (b'comment_id,coder,code\na,ann,"1"x\na,ben,1\n', "Line: 2: Value with unterminated quote found."),
        (b"comment_id,coder,code\na,ann,1\na,ben," + b"1" * 2000 + b"\n", "Line: 3: Maximum line size of 1000 bytes"),
    ],
    ids=["latin-1", "stray-quote", "row-over-the-limit"],
)
def test_an_unreadable_csv_row_is_named_with_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: bytes, reason: str
) -> None:
    """DuckDB's first line alone was "CSV Error on Line: 3", without the reason (its next lines)."""
    import irr_audit.warehouse.duckdb_counts as duckdb_counts

    monkeypatch.setattr(duckdb_counts, "MAX_ROW_BYTES", 1000)
    (tmp_path / "rule.yaml").write_text(ORDINAL)
    (tmp_path / "t.csv").write_bytes(content)
    result = run("counts", str(tmp_path / "t.csv"), "--rule", str(tmp_path / "rule.yaml"), "--out", str(tmp_path / "c"))
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("Error [table-unreadable]: table t.csv cannot be read: "), result.stderr
    assert reason in result.stderr


def test_shards_add_up_when_a_coder_coded_no_unit_of_one(tmp_path: Path) -> None:
    """A shard without a row of one coder was refused with --coders ("who has no row"), and counted
    without that coder the shards' files could not be merged: shards of such a corpus did not add up."""
    coders, rows = long_rows(3, "nominal")
    rows = [row for row in rows if row[0].strip() and row[1].strip()]
    units = sorted({unit.strip() for unit, _, _ in rows})
    first = set(units[: len(units) // 2])
    last = coders[-1]
    rows = [row for row in rows if not (row[0].strip() in first and row[1].strip() == last)]  # none in shard a
    rule = tmp_path / "rule.yaml"
    rule.write_text(NOMINAL)
    shards = {
        "a": [row for row in rows if row[0].strip() in first],
        "b": [row for row in rows if row[0].strip() not in first],
    }
    for name, shard in shards.items():
        write_long_csv(tmp_path / f"{name}.csv", shard)
        result = run(
            "counts", str(tmp_path / f"{name}.csv"), "--rule", str(rule), "--out", str(tmp_path / f"{name}.counts.csv"),
            "--coders", ",".join(sorted(coders)), "-q",
        )  # fmt: skip
        assert result.exit_code == 0, result.output
    sheets = write_sheets(tmp_path / "sheets", sorted(coders), rows)
    whole = score_json(*sheets, "--rule", str(rule))
    merged = score_json(
        "--counts", str(tmp_path / "a.counts.csv"), "--counts", str(tmp_path / "b.counts.csv"), "--rule", str(rule)
    )
    assert {key: merged[key] for key in COMPARED} == {key: whole[key] for key in COMPARED}


@pytest.mark.skipif(os_module.name == "nt", reason="Windows names hold no * or ?")
@pytest.mark.parametrize(
    ("name", "other"), [("x*.csv", "xy.csv"), ("q?.csv", "qz.csv"), ("p[1].parquet", "p1.parquet")]
)
def test_a_table_named_like_a_glob_is_read_alone(tmp_path: Path, name: str, other: str) -> None:
    """DuckDB took the path for a glob: x*.csv was counted with xy.csv, and p[1].parquet was p1.parquet."""
    (tmp_path / "rule.yaml").write_text(ORDINAL)
    for path, code in ((tmp_path / name, "1"), (tmp_path / other, "2")):
        columns = {"comment_id": [f"u{code}"] * 2, "coder": ["ann", "ben"], "code": [code] * 2}
        if path.suffix == ".parquet":
            pq.write_table(pa.table(columns), path)
        else:
            write_long_csv(path, list(zip(*columns.values())))
    out = tmp_path / "c.csv"
    result = run("counts", str(tmp_path / name), "--rule", str(tmp_path / "rule.yaml"), "--out", str(out), "-q")
    assert result.exit_code == 0, result.output
    assert out.read_text() == "ann,ben,units\n1,1,1\n"


def test_a_quote_never_closed_is_refused_naming_its_line(tmp_path: Path) -> None:
    """DuckDB read the value it opens to the end of the file as a null: units c and d were lost, exit 0."""
    (tmp_path / "rule.yaml").write_text(ORDINAL)
    table = tmp_path / "t.csv"
    table.write_text('comment_id,coder,code\na,ann,1\na,ben,1\nb,ann,2\nb,ben,2\nc,ann,"1\nc,ben,2\nd,ann,1\nd,ben,3\n')
    result = run("counts", str(table), "--rule", str(tmp_path / "rule.yaml"), "--out", str(tmp_path / "c"))
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("Error [table-unclosed-quote]: table t.csv: the quote opened on line 6 is never")
    assert not (tmp_path / "c").exists()


def test_a_quote_inside_an_unquoted_value_is_text(tmp_path: Path) -> None:
    """As DuckDB and join read it (O"Brien): not a quote left open."""
    (tmp_path / "rule.yaml").write_text(ORDINAL)
    table = tmp_path / "t.csv"
    table.write_text('comment_id,coder,code,note\na,ann,1,O"Brien\na,ben,1,"said ""hi"""\n')
    out = tmp_path / "c.csv"
    result = run("counts", str(table), "--rule", str(tmp_path / "rule.yaml"), "--out", str(out), "-q")
    assert result.exit_code == 0, result.output
    assert out.read_text() == "ann,ben,units\n1,1,1\n"


@pytest.mark.parametrize("size", [1, 2, 3, 7, 1 << 20])
def test_a_quote_left_open_is_found_across_chunks(size: int) -> None:
    from irr_audit.warehouse.tablefile import unclosed_quote_line

    def line(text: str) -> int | None:
        data = text.encode()
        return unclosed_quote_line([data[at : at + size] for at in range(0, len(data), size)], b",")

    assert line('h\na,"x""y"\nc,"d\ne"\n') is None  # "" inside a quoted value, a line break inside one
    assert line('h\na,""""\nb,O"Brien\n') is None
    assert line('h\na,"x""\nc,d\n') == 2  # "" is a quote of the text: the value is still open
    assert line('"h"\n"a","b"\n"c","d') == 3
    assert line('h\na,O"Brien\nc,"d\n') == 3


def test_the_table_is_never_the_output(tmp_path: Path) -> None:
    (tmp_path / "rule.yaml").write_text(ORDINAL)
    table = tmp_path / "long.csv"
    table.write_text("comment_id,coder,code\na,ann,1\na,ben,1\n")
    before = table.read_bytes()
    result = run("counts", str(table), "--rule", str(tmp_path / "rule.yaml"), "--out", str(table))
    assert result.exit_code == 2 and table.read_bytes() == before


@pytest.mark.parametrize("option", ["--summary", "--log"])
@pytest.mark.parametrize("spelling", ["dot", "symlink", "hardlink", "rule"])
def test_an_output_onto_an_input_is_refused_naming_its_option(tmp_path: Path, option: str, spelling: str) -> None:
    """The refusal said --out whichever option named the input."""
    (tmp_path / "rule.yaml").write_text(ORDINAL)
    table = tmp_path / "long.csv"
    table.write_text("comment_id,coder,code\na,ann,1\na,ben,1\n")
    (tmp_path / "link.csv").symlink_to(table)
    os_module.link(table, tmp_path / "hard.csv")
    target = {"dot": f"{tmp_path}/./long.csv", "symlink": str(tmp_path / "link.csv")}.get(spelling)
    target = target or str(tmp_path / ("hard.csv" if spelling == "hardlink" else "rule.yaml"))
    before = table.read_bytes(), (tmp_path / "rule.yaml").read_bytes()
    out = tmp_path / "c.csv"
    result = run("counts", str(table), "--rule", str(tmp_path / "rule.yaml"), "--out", str(out), option, target)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"Error [output-overwrites-input]: {option}: writing "), result.stderr
    assert (table.read_bytes(), (tmp_path / "rule.yaml").read_bytes()) == before and not out.exists()


def test_a_log_in_a_folder_not_made_yet_is_written_as_the_counts_are(tmp_path: Path) -> None:
    """--out and --summary make their folder; --log failed there, after the whole count."""
    (tmp_path / "rule.yaml").write_text(ORDINAL)
    table = tmp_path / "long.csv"
    table.write_text("comment_id,coder,code\na,ann,1\na,ben,x\n")
    log = tmp_path / "new" / "folder" / "log.jsonl"
    result = run(
        "counts", str(table), "--rule", str(tmp_path / "rule.yaml"), "--out", str(tmp_path / "new" / "c.csv"),
        "--log", str(log), "-q",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert [json.loads(line)["reason"] for line in log.read_text().splitlines()] == ["invalid"]


@pytest.mark.parametrize("spelling", ["same", "dot", "symlink"])
def test_the_function_never_writes_its_log_onto_the_table(tmp_path: Path, spelling: str) -> None:
    """duckdb_counts(table, rule, log=table) replaced the table with the log (the CLI checked, the function not)."""
    from irr_audit.api import load_rule
    from irr_audit.warehouse.duckdb_counts import duckdb_counts

    (tmp_path / "rule.yaml").write_text(ORDINAL)
    table = tmp_path / "long.csv"
    table.write_text("comment_id,coder,code\na,ann,1\na,ben,1\n")
    (tmp_path / "link.csv").symlink_to(table)
    log = {"same": table, "dot": Path(f"{tmp_path}/./long.csv"), "symlink": tmp_path / "link.csv"}[spelling]
    before = table.read_bytes()
    with pytest.raises(IrrAuditError) as raised:
        duckdb_counts(table, load_rule(tmp_path / "rule.yaml"), log=log)
    assert raised.value.code == "output-overwrites-input"
    assert table.read_bytes() == before


def test_a_missing_table_is_named(tmp_path: Path) -> None:
    (tmp_path / "rule.yaml").write_text(ORDINAL)
    result = run("counts", str(tmp_path / "nope.csv"), "--rule", str(tmp_path / "rule.yaml"), "--out", "c.csv")
    assert result.exit_code == 2 and result.stderr.startswith("Error [table-not-found]: table ")
    assert "nope.csv does not exist" in result.stderr


def test_without_duckdb_the_extra_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "duckdb", None)  # `import duckdb` now raises ImportError
    (tmp_path / "rule.yaml").write_text(ORDINAL)
    (tmp_path / "long.csv").write_text("comment_id,coder,code\na,ann,1\na,ben,1\n")
    result = run("counts", str(tmp_path / "long.csv"), "--rule", str(tmp_path / "rule.yaml"), "--out", "c.csv")
    assert result.exit_code == 2
    assert result.stderr.startswith("Error [dependency-missing]")
    assert 'pip install "irr-audit[warehouse]"' in result.stderr


def test_short_rows_and_blank_lines_are_read_as_a_sheets_are(tmp_path: Path) -> None:
    (tmp_path / "rule.yaml").write_text(ORDINAL)
    (tmp_path / "long.csv").write_text("comment_id,coder,code\na,ann\na,ben,1\n\nb,ann,1\nb,ben,1\n,\nc,ben\n")
    (tmp_path / "ann.csv").write_text("comment_id,code\na\n\nb,1\n")
    (tmp_path / "ben.csv").write_text("comment_id,code\na,1\nb,1\n,\nc\n")
    rule = str(tmp_path / "rule.yaml")
    sheets = [str(tmp_path / "ann.csv"), str(tmp_path / "ben.csv")]
    assert run("join", *sheets, "--rule", rule, "--out", str(tmp_path / "joined"), "-q").exit_code == 0
    result = run("counts", str(tmp_path / "long.csv"), "--rule", rule, "--out", str(tmp_path / "c.csv"), "-q")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "c.csv").read_text() == (tmp_path / "joined" / "counts.csv").read_text()
    # a: ann's code blank (a short row); b: both 1; c: ben's code blank, ann absent; the rest empty rows
    assert (tmp_path / "c.csv").read_text() == "ann,ben,units\n,,1\n,1,1\n1,1,1\n"


@pytest.mark.parametrize("table", ["long.csv", "long.parquet"])
def test_the_log_is_joins_and_numbers_the_tables_rows(tmp_path: Path, table: str) -> None:
    coders, rows = long_rows(3, "nominal")
    rule = tmp_path / "rule.yaml"
    rule.write_text(NOMINAL)
    write_long_csv(tmp_path / "long.csv", rows)
    columns = ["comment_id", "coder", "code"]
    pq.write_table(pa.table({name: [row[at] for row in rows] for at, name in enumerate(columns)}), tmp_path / table)
    sheets = write_sheets(tmp_path / "sheets", sorted(coders), rows)
    assert run("join", *sheets, "--rule", str(rule), "--out", str(tmp_path / "joined"), "-q").exit_code == 0
    log, summary = tmp_path / "log.jsonl", tmp_path / "s.json"
    result = run(
        "counts", str(tmp_path / table), "--rule", str(rule), "--out", str(tmp_path / "c.csv"), "--log", str(log),
        "--summary", str(summary), "-q",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    joined = [json.loads(line) for line in (tmp_path / "joined" / "missingness_log.jsonl").read_text().splitlines()]
    fields = ("coder", "comment_id", "raw_value", "reason")
    ours = sorted(tuple(entry[key] for key in fields) for entry in logged if entry["reason"] != "no_coder")
    assert ours == sorted(tuple(entry[key] for key in fields) for entry in joined)
    counted = {}
    for entry in logged:
        counted[entry["reason"]] = counted.get(entry["reason"], 0) + 1
    assert counted == json.loads(summary.read_text())["log_rows"]
    for entry in logged:
        if entry["record"] is not None:  # the table's row it names
            unit, coder, code = rows[entry["record"] - 1]
            assert (unit.strip(), coder.strip(), code) == (entry["comment_id"], entry["coder"], entry["raw_value"])
    # a duplicate is a later row than the one kept, as join keeps the first
    assert any(entry["reason"] == "duplicate" for entry in logged)


def test_a_rule_version_column_naming_the_rules_version_is_read(tmp_path: Path) -> None:
    (tmp_path / "rule.yaml").write_text(ORDINAL)
    (tmp_path / "long.csv").write_text("comment_id,coder,code,rule_version\na,ann,1,v1\na,ben,1,\nb,ann,2, 1\n")
    result = run(
        "counts", str(tmp_path / "long.csv"), "--rule", str(tmp_path / "rule.yaml"), "--out", str(tmp_path / "c")
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "c").read_text() == "ann,ben,units\n2,,1\n1,1,1\n"


@pytest.mark.parametrize(
    ("first", "second"), [("--out", "--summary"), ("--summary", "--log"), ("--out", "--log")], ids=str
)
@pytest.mark.parametrize("spelling", ["same", "dot", "symlink", "hardlink"])
def test_two_outputs_on_one_file_are_refused(tmp_path: Path, first: str, second: str, spelling: str) -> None:
    """--out, --summary and --log naming one file: the second written silently replaced the first."""
    (tmp_path / "rule.yaml").write_text(ORDINAL)
    table = tmp_path / "long.csv"
    table.write_text("comment_id,coder,code\na,ann,1\na,ben,1\n")
    one = tmp_path / "x.out"
    other = {"same": one, "dot": tmp_path / "." / "x.out", "symlink": tmp_path / "link", "hardlink": tmp_path / "hard"}
    if spelling in ("symlink", "hardlink"):
        one.write_text("old\n")
        (other[spelling].symlink_to if spelling == "symlink" else other[spelling].hardlink_to)(one)
    paths = {
        "--out": str(tmp_path / "c.csv"),
        "--summary": str(tmp_path / "s.json"),
        "--log": str(tmp_path / "l.jsonl"),
    }
    paths.update({first: str(one), second: str(other[spelling])})

    result = run("counts", str(table), "--rule", str(tmp_path / "rule.yaml"), *(x for kv in paths.items() for x in kv))

    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"Error [output-same-file]: {first} ") and f"and {second} " in result.stderr
    assert not (tmp_path / "c.csv").exists() or first != "--out"


def test_a_log_that_cannot_be_written_is_named_not_the_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The log's last step failing (here its rename; a full disk in its write) blamed the table
    ("cannot be read", check the input's format): the output is named."""
    import errno
    import os

    (tmp_path / "rule.yaml").write_text(ORDINAL)
    table = tmp_path / "long.csv"
    table.write_text("comment_id,coder,code\na,ann,1\na,ben,1\n")
    real = os.replace

    def full(source: str | Path, target: str | Path) -> None:
        if Path(target).name == "log.jsonl":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(source, target)

    monkeypatch.setattr(os, "replace", full)
    log = tmp_path / "log.jsonl"
    result = run(
        "counts", str(table), "--rule", str(tmp_path / "rule.yaml"), "--out", str(tmp_path / "c.csv"), "--log", str(log)
    )

    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"Error [output-unwritable]: --log {log} cannot be written: No space left")
    assert not log.exists() and [p.name for p in tmp_path.iterdir() if p.name.startswith(".log")] == []


@pytest.mark.skipif(not hasattr(os_module, "geteuid") or os_module.geteuid() != 0, reason="mounts a small tmpfs")
def test_a_log_onto_a_full_disk_is_named_not_the_table(tmp_path: Path) -> None:
    import subprocess

    (tmp_path / "rule.yaml").write_text(ORDINAL)
    table = tmp_path / "long.csv"
    table.write_text("comment_id,coder,code\n" + "".join(f"u{i},ann,maybe\nu{i},ben,nope\n" for i in range(20000)))
    full = tmp_path / "full"
    full.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(full)], check=False).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        result = run(
            "counts",
            str(table),
            "--rule",
            str(tmp_path / "rule.yaml"),
            "--out",
            str(tmp_path / "c.csv"),
            "--log",
            str(full / "log.jsonl"),
        )
    finally:
        subprocess.run(["umount", str(full)], check=False)

    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"Error [output-unwritable]: --log {full / 'log.jsonl'} cannot be written")
    assert "No space left on device" in result.stderr


def spilling_table(path: Path) -> None:
    """A Parquet long table that DuckDB spills to disk under a memory limit of 60MB on one thread."""
    import duckdb

    duckdb.sql(
        "COPY (SELECT 'u' || (i // 2)::VARCHAR AS comment_id, 'c' || (i % 2)::VARCHAR AS coder, "
        f"((i * 7) % 4)::VARCHAR AS code FROM range(500000) t(i)) TO '{path}' (FORMAT parquet)"
    )


def count_spilling(table: Path, temp_directory: Path) -> IrrAuditError:
    """The error of counting ``table`` on one thread (its memory, hence its spill, as on any machine)."""
    from irr_audit.api import load_rule
    from irr_audit.warehouse.duckdb_counts import duckdb_counts

    (table.parent / "rule.yaml").write_text(ORDINAL)
    with pytest.raises(IrrAuditError) as raised:
        duckdb_counts(
            table, load_rule(table.parent / "rule.yaml"), memory_limit="60MB", threads=1, temp_directory=temp_directory
        )
    return raised.value


def test_a_spill_that_fails_names_the_temp_directory_not_the_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DuckDB unable to make its spill folder (here a regular file stands where it goes; a folder
    made read-only or removed does the same) was `table-unreadable`, sending the user to the table."""
    import irr_audit.warehouse.duckdb_counts as duckdb_counts

    spilling_table(tmp_path / "long.parquet")
    spill = tmp_path / "spill"
    spill.mkdir()
    blocker = spill / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setattr(duckdb_counts, "_spill_folder", lambda _: blocker)

    error = count_spilling(tmp_path / "long.parquet", spill)

    assert error.code == "temp-directory-unwritable", error.render()
    assert error.render().startswith(f"Error [temp-directory-unwritable]: --temp-directory {spill}: ")
    assert "long.parquet" not in error.render() and "--memory-limit 60MB" in error.render()


@pytest.mark.skipif(not hasattr(os_module, "geteuid") or os_module.geteuid() != 0, reason="mounts a small tmpfs")
def test_a_spill_onto_a_full_disk_names_the_temp_directory_not_the_table(tmp_path: Path) -> None:
    """DuckDB finding no room left to spill to was `table-memory`, "table ...: DuckDB ran out of memory"."""
    import subprocess

    spilling_table(tmp_path / "long.parquet")
    full = tmp_path / "full"
    full.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(full)], check=False).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        error = count_spilling(tmp_path / "long.parquet", full)
    finally:
        subprocess.run(["umount", str(full)], check=False)

    assert error.render().startswith(f"Error [temp-directory-unwritable]: --temp-directory {full}: "), error.render()
    assert "long.parquet" not in error.render()


def test_a_link_planted_beside_the_log_is_never_followed(tmp_path: Path) -> None:
    """The log was written first to .log.jsonl.<pid>.tmp, a name anyone could predict; DuckDB,
    finding a file there, writes to tmp_<that name> and renames it over: a link planted at both
    (by another user, or left stale) had DuckDB write the log through it, into another file."""
    from irr_audit.api import load_rule
    from irr_audit.warehouse.duckdb_counts import duckdb_counts

    (tmp_path / "rule.yaml").write_text(ORDINAL)
    table = tmp_path / "long.csv"
    table.write_text("comment_id,coder,code\na,ann,1\na,ben,x\n")
    victim = tmp_path / "victim.txt"
    victim.write_text("not the log's\n")
    log = tmp_path / "out" / "log.jsonl"
    log.parent.mkdir()
    planted = [log.with_name(f"{prefix}.{log.name}.{os_module.getpid()}.tmp") for prefix in ("", "tmp_")]
    for link in planted:
        link.symlink_to(victim)

    duckdb_counts(table, load_rule(tmp_path / "rule.yaml"), log=log)

    assert victim.read_text() == "not the log's\n"
    assert not log.is_symlink() and json.loads(log.read_text())["reason"] == "invalid"
    assert sorted(path.name for path in log.parent.iterdir()) == sorted([log.name, *(link.name for link in planted)])


def test_the_summary_records_the_runs_aliases_as_joins_does(tmp_path: Path) -> None:
    """An alias changes what a code is (here `sev` is 3, not invalid), but the summary left it out:
    the counts could not be told from those of a run without it."""
    (tmp_path / "rule.yaml").write_text(ORDINAL)
    table = tmp_path / "long.csv"
    table.write_text("comment_id,coder,code\na,ann,3\na,ben,sev\nb,ann,1\nb,ben,one\n")
    for sheet in ("ann", "ben"):
        lines = [line.split(",") for line in table.read_text().splitlines()[1:]]
        rows = "".join(f"{unit},{code}\n" for unit, coder, code in lines if coder == sheet)
        (tmp_path / f"{sheet}.csv").write_text("comment_id,code\n" + rows)
    aliases = ["--alias", "sev=3", "--alias", "one=1"]
    counted = run(
        "counts", str(table), "--rule", str(tmp_path / "rule.yaml"), "--out", str(tmp_path / "c.csv"),
        "--summary", str(tmp_path / "s.json"), *aliases, "-q",
    )  # fmt: skip
    joined = run(
        "join", str(tmp_path / "ann.csv"), str(tmp_path / "ben.csv"), "--rule", str(tmp_path / "rule.yaml"),
        "--out", str(tmp_path / "joined"), *aliases, "-q",
    )  # fmt: skip
    assert (counted.exit_code, joined.exit_code) == (0, 0), counted.output + joined.output

    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["run_aliases"] == {"one": "1", "sev": "3"}
    assert summary["run_aliases"] == json.loads((tmp_path / "joined" / "summary.json").read_text())["run_aliases"]
    assert summary["cells"]["valid"] == 4


def test_a_summary_without_aliases_has_no_run_aliases(tmp_path: Path) -> None:
    (tmp_path / "rule.yaml").write_text(ORDINAL)
    (tmp_path / "long.csv").write_text("comment_id,coder,code\na,ann,3\na,ben,3\n")
    result = run(
        "counts", str(tmp_path / "long.csv"), "--rule", str(tmp_path / "rule.yaml"), "--out", str(tmp_path / "c.csv"),
        "--summary", str(tmp_path / "s.json"), "-q",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "run_aliases" not in json.loads((tmp_path / "s.json").read_text())


def _float_code(path: Path) -> None:
    pq.write_table(pa.table({"comment_id": ["a", "a"], "coder": ["ann", "ben"], "code": [1.0, 1.0]}), path)


def _list_coder(path: Path) -> None:
    pq.write_table(pa.table({"comment_id": ["a", "a"], "coder": [["ann"], ["ben"]], "code": ["1", "1"]}), path)


def _date_id(path: Path) -> None:
    import datetime

    day = datetime.date(2024, 1, 1)
    pq.write_table(pa.table({"comment_id": [day, day], "coder": ["ann", "ben"], "code": ["1", "1"]}), path)


def _code_twice(path: Path) -> None:
    columns = [pa.array(["a", "a"]), pa.array(["ann", "ben"]), pa.array(["1", "1"]), pa.array(["2", "3"])]
    pq.write_table(pa.Table.from_arrays(columns, names=["comment_id", "coder", "code", "CODE"]), path)


def _csv_code_twice(path: Path) -> None:
    path.write_bytes(b"\xef\xbb\xbfcomment_id,coder,code, Code \r\na,ann,1,2\r\na,ben,1,3\r\n")


def _quote_open(path: Path) -> None:
    path.write_bytes(b'comment_id,coder,code\na,ann,1\na,ben,"1\nb,ann,2\nb,ben,2\n')


@pytest.mark.parametrize(
    ("make", "file_format", "code"),
    [
        (_float_code, "parquet", "table-column-type"),
        (_list_coder, "parquet", "table-column-type"),
        (_date_id, "parquet", "table-id-type"),
        (_code_twice, "parquet", "table-duplicate-column"),
        (_csv_code_twice, "csv", "table-duplicate-column"),
        (_quote_open, "csv", "table-unclosed-quote"),
    ],
    ids=["float-code", "list-coder", "date-id", "code-twice", "csv-code-twice", "quote-open"],
)
def test_the_spark_job_runs_the_checks_duckdb_runs_on_the_file(
    tmp_path: Path, make, file_format: str, code: str
) -> None:
    """The Spark job lacked them: it counted 1.0 as an invalid code, picked one of two `code`
    columns, and read the rows after an open quote as one value. Now both engines run the same
    function on the file before reading it (Spark's part needs no session: it runs first)."""
    from irr_audit.api import load_rule
    from irr_audit.warehouse.duckdb_counts import duckdb_counts
    from irr_audit.warehouse.longtable import LongTableColumns
    from irr_audit.warehouse.spark_counts import spark_counts
    from irr_audit.warehouse.tablefile import check_table_file

    (tmp_path / "rule.yaml").write_text(ORDINAL)
    rule = load_rule(tmp_path / "rule.yaml")
    table = tmp_path / ("t.parquet" if file_format == "parquet" else "t.csv")
    make(table)
    refused = []
    for count in (
        lambda: duckdb_counts(table, rule),
        lambda: spark_counts(None, str(table), rule, file_format=file_format),
        lambda: check_table_file(table, file_format, ",", LongTableColumns()),
    ):
        with pytest.raises(IrrAuditError) as raised:
            count()
        refused.append(raised.value.render())
    assert refused[0].startswith(f"Error [{code}]: table t."), refused[0]
    assert refused[1] == refused[2] == refused[0]


def test_the_file_checks_leave_a_good_table_and_paths_they_cannot_open_to_the_engine(tmp_path: Path) -> None:
    from irr_audit.warehouse.longtable import LongTableColumns
    from irr_audit.warehouse.tablefile import check_table_file

    pq.write_table(
        pa.table({"comment_id": [1, 2], "coder": pa.array(["ann", "ben"]).dictionary_encode(), "code": [True, None]}),
        tmp_path / "t.parquet",
    )
    (tmp_path / "t.csv").write_text('comment_id,coder,code\na,ann,"1"\na,ben,"x""y"\n')
    (tmp_path / "shards").mkdir()
    for path, file_format in ((tmp_path / "t.parquet", "parquet"), (tmp_path / "t.csv", "csv")):
        check_table_file(path, file_format, ",", LongTableColumns())
    for elsewhere in (tmp_path / "shards", "hdfs:///audits/codes.parquet", "s3://bucket/codes/"):
        check_table_file(elsewhere, "parquet", ",", LongTableColumns())  # Spark reads and checks those itself


@pytest.mark.parametrize("size", [1, 2, 3, 7, 1 << 20])
def test_the_open_quotes_line_is_counted_at_every_line_end(size: int) -> None:
    """Lines were counted by \\n alone: in a file with lone-CR line ends (old Mac, some exports)
    every quote was on line 1. \\r\\n is one line end, also when a chunk ends between the two."""
    from irr_audit.warehouse.tablefile import unclosed_quote_line

    def line(text: str) -> int | None:
        data = text.encode()
        return unclosed_quote_line([data[at : at + size] for at in range(0, len(data), size)], b",")

    assert line('h\ra,1\rb,"x\rc,d\r') == 3
    assert line('h\ra,"x\ry"\rb,1\rc,"d\r') == 5  # a closed value's line break counts too
    assert line('h\r\na,1\r\nb,"x\r\nc,d\r\n') == 3
    assert line('h\r\n\r\na\r\r\nb\n"c') == 6
    assert line('h\ra,"x\r\ry"\r') is None


def test_a_quote_never_closed_in_a_lone_cr_file_is_named_on_its_line(tmp_path: Path) -> None:
    (tmp_path / "rule.yaml").write_text(ORDINAL)
    (tmp_path / "t.csv").write_bytes(b'comment_id,coder,code\ra,ann,1\ra,ben,1\rb,ann,"2\rb,ben,2\r')
    result = run("counts", str(tmp_path / "t.csv"), "--rule", str(tmp_path / "rule.yaml"), "--out", str(tmp_path / "c"))
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("Error [table-unclosed-quote]: table t.csv: the quote opened on line 4 is never")


def test_running_out_of_memory_names_the_limit_and_the_fix_first(tmp_path: Path) -> None:
    """The message began "table long.csv: ...", as if the table were at fault."""
    (tmp_path / "rule.yaml").write_text(ORDINAL)
    (tmp_path / "long.csv").write_text("comment_id,coder,code\na,ann,1\na,ben,1\n")
    result = run(
        "counts", str(tmp_path / "long.csv"), "--rule", str(tmp_path / "rule.yaml"), "--out", str(tmp_path / "c.csv"),
        "--memory-limit", "0.0001KB",
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("Error [table-memory]: --memory-limit 0.0001KB is too small: raise it, or give ")
    assert "counting table long.csv" in result.stderr


def test_the_log_is_written_in_a_new_folder_open_to_its_user_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its name is tempfile's (never the same twice, never one a link stands at): nothing
    planted beside the log, whatever its name, is written through."""
    import stat

    import irr_audit.warehouse.duckdb_counts as module
    from irr_audit.api import load_rule

    made = []
    real = module._private_folder_beside

    def spied(path: Path) -> Path:
        folder = real(path)
        made.append((folder, stat.S_IMODE(folder.stat().st_mode)))
        return folder

    monkeypatch.setattr(module, "_private_folder_beside", spied)
    (tmp_path / "rule.yaml").write_text(ORDINAL)
    table = tmp_path / "long.csv"
    table.write_text("comment_id,coder,code\na,ann,1\na,ben,x\n")
    for _ in range(2):
        module.duckdb_counts(table, load_rule(tmp_path / "rule.yaml"), log=tmp_path / "log.jsonl")

    [(first, mode), (second, _)] = made
    assert mode == 0o700 and first.parent == tmp_path and first != second
    assert first.name.startswith(".log.jsonl.") and first.name.endswith(".tmp")
    assert not first.exists() and not second.exists()
