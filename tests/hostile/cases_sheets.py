"""Coding sheets as an attacker or a confused coder makes them: CSV, TSV, JSON Lines
and XLSX, read by join and score (tests/corpus/ holds the everyday bad sheets)."""

from __future__ import annotations

import json

from kit import (
    GOOD_XLSX_ROWS,
    HEADER_ROW,
    Case,
    Outcome,
    big_int,
    csv_rows,
    deep_json,
    fifo,
    folder_of,
    inline_row,
    link,
    patched_xlsx,
    sheet,
    sheet_xml,
    xlsx,
    xlsx_bomb_cell,
    zip_bytes,
)

JOIN = "join alice.csv bob.csv --rule rule.yaml --out out"
SCORE = "score alice.csv bob.csv --rule rule.yaml --format json"
JOIN_JSONL = "join alice.csv bob.jsonl --rule rule.yaml --out out"
JOIN_XLSX = "join alice.csv bob.xlsx --rule rule.yaml --out out"
OPEN_QUOTE = 'comment_id,code\na,yes\nb,"no\nc,no\nd,no\n'


def jsonl(*objects: object) -> str:
    return "".join((entry if isinstance(entry, str) else json.dumps(entry)) + "\n" for entry in objects)


def units(expected: int):
    def check(outcome: Outcome) -> None:
        summary = json.loads((outcome.folder / "out" / "summary.json").read_text(encoding="utf-8"))
        assert summary["units"]["total"] == expected, summary["units"]

    return check


CASES = [
    # --- quotes: no row may vanish into another (issue: rows 3 and 4 swallowed into row 2) ----
    Case(
        "csv: a quote left open swallows no row",
        JOIN,
        {"bob.csv": OPEN_QUOTE},
        exit=2,
        code="sheet-unclosed-quote",
        says=("bob.csv", "line 3"),
    ),
    Case(
        "csv: a quote left open, scored",
        SCORE,
        {"bob.csv": OPEN_QUOTE},
        exit=2,
        code="sheet-unclosed-quote",
        says=("bob.csv", "line 3"),
    ),
    Case(
        "csv: a quote left open, through the console command",
        JOIN,
        {"bob.csv": OPEN_QUOTE},
        exit=2,
        code="sheet-unclosed-quote",
        says=("bob.csv", "line 3"),
        process=True,
    ),
    Case(
        "csv: a quote left open in the last row",
        JOIN,
        {"bob.csv": 'comment_id,code\na,yes\nb,no\nc,no\nd,"no\n'},
        exit=2,
        code="sheet-unclosed-quote",
        says=("bob.csv", "line 5"),
    ),
    Case(
        "csv: a quote left open in the header",
        JOIN,
        {"bob.csv": '"comment_id,code\na,yes\nb,no\n'},
        exit=2,
        says=("bob.csv",),
    ),
    Case(
        "csv: a quote left open in a body cell of a large sheet",
        "join big.csv bob.csv --rule rule.yaml --out out",
        {"big.csv": lambda: csv_rows(20_000, lambda i: "yes")().replace(b"u100,yes", b'u100,"yes', 1)},
        exit=2,
        code="sheet-unclosed-quote",
        says=("big.csv", "line 102"),
    ),
    Case(
        "csv: text after a closing quote",
        JOIN,
        {"bob.csv": 'comment_id,code\na,"yes"x\nb,no\n'},
        exit=0,
        shows=("1 invalid",),
    ),
    Case("csv: a quote inside an unquoted cell is text", JOIN, {"bob.csv": sheet('a,ye"s', "b,no")}),
    Case(
        "csv: a quoted cell with a line break in the id",
        JOIN,
        {"bob.csv": sheet('"a\nb",yes', "c,no")},
        exit=2,
        code="sheet-unclosed-quote",
        says=("bob.csv", "line 2"),
    ),
    Case(
        "csv: a quoted header name with a line break",
        JOIN,
        {"bob.csv": '"comment\n_id",code\na,yes\n'},
        exit=2,
        code="sheet-missing-column",
        says=("bob.csv",),
    ),
    Case("csv: doubled quotes in a cell", JOIN, {"bob.csv": sheet('"a""b",yes', "c,no")}),
    # --- separators and shapes ------------------------------------------------------------
    Case(
        "csv: semicolons, as European Excel writes (the delimiter is detected)",
        JOIN,
        {"bob.csv": "comment_id;code\na;yes\nb;no\n"},
        exit=0,
        shows=("2 fully coded",),
    ),
    Case(
        "csv: tab-separated text named .csv (the delimiter is detected)",
        JOIN,
        {"bob.csv": "comment_id\tcode\na\tyes\n"},
        exit=0,
        shows=("1 fully coded",),
    ),
    Case(
        "tsv: comma-separated text named .tsv",
        "join alice.csv bob.tsv --rule rule.yaml --out out",
        {"bob.tsv": sheet("a,yes")},
        exit=2,
        code="sheet-missing-column",
        says=("bob.tsv", "looks ,-delimited"),
    ),
    Case(
        "tsv: a plain TSV sheet",
        "join alice.csv bob.tsv --rule rule.yaml --out out",
        {"bob.tsv": "comment_id\tcode\na\tyes\nb\tno\n"},
    ),
    Case(
        "tab: the .tab suffix",
        "join alice.csv bob.tab --rule rule.yaml --out out",
        {"bob.tab": "comment_id\tcode\na\tyes\nb\tno\n"},
    ),
    Case(
        "tsv: a quote left open",
        "join alice.csv bob.tsv --rule rule.yaml --out out",
        {"bob.tsv": 'comment_id\tcode\na\t"yes\nb\tno\nc\tno\n'},
        exit=2,
        code="sheet-unclosed-quote",
        says=("bob.tsv", "line 2"),
    ),
    Case(
        "csv: ten thousand columns",
        JOIN,
        {
            "bob.csv": lambda: (
                ",".join(["comment_id", "code", *(f"x{i}" for i in range(10_000))]) + "\na,yes" + "," * 10_000 + "\n"
            ).encode()
        },
        exit=2,
        code="limit-columns",
        says=("bob.csv", "columns"),
    ),
    Case("csv: a one-megabyte id", JOIN, {"bob.csv": sheet("x" * 1_000_000 + ",yes", "a,no")}),
    Case("csv: only line breaks", JOIN, {"bob.csv": "\n\n\n\r\n"}, exit=2, code="sheet-empty", says=("bob.csv",)),
    Case("csv: a BOM and nothing else", JOIN, {"bob.csv": b"\xef\xbb\xbf"}, exit=2, says=("bob.csv",)),
    Case(
        "csv: a BOM and a header",
        JOIN,
        {"bob.csv": b"\xef\xbb\xbfcomment_id,code\n"},
        exit=2,
        code="sheet-empty",
        says=("bob.csv",),
    ),
    Case(
        "csv: empty header names around the columns", JOIN, {"bob.csv": sheet(",a,,yes,", header=",comment_id,,code,")}
    ),
    Case("csv: header names in other case and padded", JOIN, {"bob.csv": sheet("a,yes", header=" Comment_ID , CODE ")}),
    Case(
        "csv: the id column twice in different case",
        JOIN,
        {"bob.csv": sheet("a,yes,a", header="comment_id,code,COMMENT_ID")},
        exit=2,
        code="sheet-duplicate-column",
        says=("bob.csv",),
    ),
    Case("csv: ids all blank, codes given", JOIN, {"bob.csv": sheet(",yes", ",no", " ,yes")}),
    Case("csv: rows of whitespace only", JOIN, {"bob.csv": sheet("a,yes", " , ", "\t,\t", "b,no")}),
    Case(
        "csv: a hundred thousand blank lines before the last row",
        JOIN,
        {"bob.csv": lambda: b"comment_id,code\na,yes\n" + b"\n" * 100_000 + b"b,no\n"},
    ),
    Case("csv: a BOM inside an id", JOIN, {"bob.csv": sheet("\ufeffa,yes", "b,no")}),
    Case(
        "csv: a surrogate encoded in UTF-8 bytes",
        JOIN,
        {"bob.csv": b"comment_id,code\na,\xed\xa0\x80\n"},
        exit=2,
        code="sheet-encoding",
        says=("bob.csv", "line 2"),
    ),
    Case(
        "csv: an overlong UTF-8 encoding",
        JOIN,
        {"bob.csv": b"comment_id,code\na,\xc0\xafyes\n"},
        exit=2,
        code="sheet-encoding",
        says=("bob.csv",),
    ),
    Case(
        "csv: UTF-16 big-endian with its BOM",
        JOIN,
        {"bob.csv": b"\xfe\xff" + sheet("a,yes", "b,no").encode("utf-16-be")},
    ),
    Case(
        "csv: UTF-16 without a BOM",
        JOIN,
        {"bob.csv": sheet("a,yes").encode("utf-16-le")},
        exit=2,
        code="sheet-binary",
        says=("bob.csv",),
    ),
    Case("csv: UTF-32 with its BOM", JOIN, {"bob.csv": sheet("a,yes").encode("utf-32")}, exit=2, says=("bob.csv",)),
    Case(
        "csv: UTF-16 BOM then odd bytes",
        JOIN,
        {"bob.csv": b"\xff\xfec\x00o\x00m"},
        exit=2,
        code="sheet-encoding",
        says=("bob.csv",),
    ),
    Case(
        "csv: Shift-JIS text",
        JOIN,
        {"bob.csv": "comment_id,code\n\u30b3,yes\n".encode("shift_jis")},
        exit=2,
        code="sheet-encoding",
        says=("bob.csv", "line 2"),
    ),
    Case(
        "csv: a row wider than the header",
        JOIN,
        {"bob.csv": sheet("a,yes", "b,no,extra")},
        exit=2,
        code="sheet-ragged",
        says=("bob.csv", "row 3"),
    ),
    Case("csv: a row wider than the header with empty extras", JOIN, {"bob.csv": sheet("a,yes,,", "b,no")}),
    Case("csv: a carriage return inside an unquoted cell", JOIN, {"bob.csv": "comment_id,code\na,ye\rs\nb,no\n"}),
    Case("csv: CRLF inside a quoted cell", JOIN, {"bob.csv": 'comment_id,code,body\r\na,yes,"x\r\ny"\r\nb,no,z\r\n'}),
    Case("csv: a form feed and vertical tab in cells", JOIN, {"bob.csv": sheet("a,\x0cyes", "b\x0b,no")}),
    Case(
        "csv: 199 ids that differ only in trailing spaces are one unit",
        JOIN,
        {"bob.csv": lambda: (sheet(*(f"a{' ' * i},yes" for i in range(1, 200)))).encode()},
    ),
    # --- the rule_version and coder columns -------------------------------------------------
    Case(
        "csv: rule_version of another version",
        JOIN,
        {"bob.csv": sheet("a,yes,2", header="comment_id,code,rule_version")},
        exit=2,
        code="sheet-rule-version",
        says=("bob.csv", "row 2"),
    ),
    Case(
        "csv: rule_version of 5,000 digits",
        JOIN,
        {"bob.csv": sheet(f"a,yes,v{big_int(5000)}", header="comment_id,code,rule_version")},
        exit=2,
        code="sheet-rule-version",
        says=("bob.csv", "row 2"),
    ),
    Case(
        "csv: rule_version in words",
        JOIN,
        {"bob.csv": sheet("a,yes,first", header="comment_id,code,rule_version")},
        exit=2,
        says=("bob.csv", "row 2"),
    ),
    Case(
        "csv: rule_version 01 and V1",
        JOIN,
        {"bob.csv": sheet("a,yes,01", "b,no,V1", header="comment_id,code,rule_version")},
    ),
    Case(
        "csv: two coders in the coder column",
        JOIN,
        {"bob.csv": sheet("a,yes,bob", "b,no,carol", header="comment_id,code,coder")},
        exit=2,
        code="sheet-several-coders",
        says=("bob.csv", "row 2", "row 3"),
    ),
    Case(
        "csv: the coder column names the other sheet's coder",
        JOIN,
        {"bob.csv": sheet("a,yes,alice", header="comment_id,code,coder")},
        exit=2,
        says=("alice",),
    ),
    Case(
        "csv: a formula as the coder's name",
        JOIN,
        {"bob.csv": sheet("a,yes,=cmd|' /C calc'!A0", "b,no,=cmd|' /C calc'!A0", header="comment_id,code,coder")},
        never=("\n=cmd", ",=cmd"),
    ),
    # --- which sheets ---------------------------------------------------------------------
    Case(
        "sheets: the same sheet twice", "join alice.csv alice.csv --rule rule.yaml --out out", exit=2, says=("alice",)
    ),
    Case(  # one coder's codes would be scored as two coders agreeing perfectly (docs/contract.md)
        "sheets: the same sheet through a symlink",
        "join alice.csv again.csv --rule rule.yaml --out out",
        setup=link("again.csv", "alice.csv"),
        exit=2,
        code="usage-same-sheet",
        says=("alice.csv", "again.csv", "one file"),
    ),
    Case(
        "sheets: two sheets with one name in two folders",
        "join x/alice.csv y/alice.csv --rule rule.yaml --out out",
        {"x/alice.csv": sheet("a,yes"), "y/alice.csv": sheet("a,no")},
        exit=2,
        says=("alice",),
    ),
    Case("sheets: one sheet", "join alice.csv --rule rule.yaml --out out", exit=2, code="usage-one-sheet"),
    Case(
        "sheets: fifty coders",
        "join " + " ".join(f"c{i}.csv" for i in range(50)) + " --rule rule.yaml --out out",
        {f"c{i}.csv": sheet("a,yes", f"b,{'no' if i % 3 else 'yes'}") for i in range(50)},
    ),
    Case(
        "sheets: a folder named like a sheet",
        JOIN,
        {"bob.csv": None},
        setup=folder_of("bob.csv"),
        exit=2,
        code="sheet-not-a-file",
        says=("bob.csv",),
    ),
    Case("sheets: a missing sheet", JOIN, {"bob.csv": None}, exit=2, code="sheet-not-found", says=("bob.csv",)),
    Case(
        "sheets: a dangling symlink",
        JOIN,
        {"bob.csv": None},
        setup=link("bob.csv", "gone.csv"),
        exit=2,
        code="sheet-not-found",
        says=("bob.csv",),
    ),
    Case(
        "sheets: a symlink loop", JOIN, {"bob.csv": None}, setup=link("bob.csv", "bob.csv"), exit=2, says=("bob.csv",)
    ),
    Case(
        "sheets: a symlink to /dev/zero",
        JOIN,
        {"bob.csv": None},
        setup=link("bob.csv", "/dev/zero"),
        exit=2,
        code="sheet-not-a-file",
        says=("bob.csv",),
        process=True,
    ),
    Case(
        "sheets: a named pipe",
        JOIN,
        {"bob.csv": None},
        setup=fifo("bob.csv"),
        exit=2,
        code="sheet-not-a-file",
        says=("bob.csv",),
        process=True,
    ),
    Case(
        "sheets: a file name longer than the system allows",
        "join alice.csv " + "b" * 300 + ".csv --rule rule.yaml --out out",
        exit=2,
        says=("bbbb",),
    ),
    Case(
        "sheets: a file name that is not UTF-8",
        "join alice.csv 'b\udce9.csv' --rule rule.yaml --out out",
        {"b\udce9.csv": sheet("a,yes", "b,no")},
        exit=2,
        code="path-not-utf8",
        process=True,
    ),
    Case(
        "sheets: a file name with a line break",
        "join alice.csv 'bo\nb.csv' --rule rule.yaml --out out",
        {"bo\nb.csv": sheet("a,yes", "b,no")},
        exit=2,
        code="sheet-control-character",
    ),
    Case(
        "sheets: a file name with a terminal escape",
        "join alice.csv '\x1b[2Jbob.csv' --rule rule.yaml --out out",
        {"\x1b[2Jbob.csv": sheet("a,yes", "b,no")},
        exit=2,
        code="sheet-control-character",
        never_shown=("\x1b[2J",),
    ),
    Case(
        "sheets: a text file",
        "join alice.csv bob.txt --rule rule.yaml --out out",
        {"bob.txt": sheet("a,yes")},
        exit=2,
        code="sheet-unsupported-type",
        says=("bob.txt",),
    ),
    Case(
        "sheets: an upper-case suffix", "join alice.csv BOB.CSV --rule rule.yaml --out out", {"BOB.CSV": sheet("a,yes")}
    ),
    Case(
        "sheets: no suffix",
        "join alice.csv bob --rule rule.yaml --out out",
        {"bob": sheet("a,yes")},
        exit=2,
        code="sheet-unsupported-type",
        says=("bob",),
    ),
    Case(
        "sheets: a gzipped CSV",
        "join alice.csv bob.csv.gz --rule rule.yaml --out out",
        {"bob.csv.gz": b"\x1f\x8b\x08\x00" + bytes(20)},
        exit=2,
        code="sheet-unsupported-type",
        says=("bob.csv.gz",),
    ),
    Case(
        "sheets: a JSON array where a sheet should be",
        "join alice.csv bob.json --rule rule.yaml --out out",
        {"bob.json": '[{"comment_id": "a", "code": "yes"}]'},
        exit=2,
        code="sheet-unsupported-type",
        says=("bob.json",),
    ),
    Case(
        "sheets: the rule file given as a sheet",
        "join alice.csv rule.yaml --rule rule.yaml --out out",
        exit=2,
        code="sheet-unsupported-type",
        says=("rule.yaml",),
    ),
    Case("sheets: ids that differ only in case are two units", JOIN, {"bob.csv": sheet("A,yes", "a,no")}),
    Case(
        "columns: --id-column that does not exist",
        JOIN + " --id-column nope",
        exit=2,
        code="sheet-missing-column",
        says=("alice.csv", "nope"),
    ),
    Case("columns: --id-column empty means the default", JOIN + " --id-column ''", exit=0, shows=("4 fully coded",)),
    Case(
        "columns: --code-column naming the id column is refused",
        JOIN + " --code-column comment_id",
        exit=2,
        code="sheet-same-column",
    ),
    Case(  # no sheet has a worksheet to choose: passed over, the option would seem applied
        "columns: --worksheet with CSV sheets is refused",
        JOIN + " --worksheet Codes",
        exit=2,
        code="data-form",
        says=("worksheet", "leave out worksheet"),
    ),
    # --- JSON Lines ---------------------------------------------------------------------------
    Case(
        "jsonl: nested 100,000 deep",
        JOIN_JSONL,
        {
            "bob.jsonl": jsonl(
                {"comment_id": "a", "code": "yes"}, '{"comment_id": "b", "code": ' + deep_json(100_000) + "}"
            )
        },
        exit=2,
        says=("bob.jsonl", "line 2"),
    ),
    Case(
        "jsonl: an integer of 5,000 digits",
        JOIN_JSONL,
        {"bob.jsonl": jsonl({"comment_id": "a", "code": "yes"}, '{"comment_id": ' + big_int(5000) + ', "code": "no"}')},
        exit=2,
        says=("bob.jsonl", "line 2"),
    ),
    Case(
        "jsonl: NaN and Infinity",
        JOIN_JSONL,
        {"bob.jsonl": jsonl('{"comment_id": "a", "code": NaN}', '{"comment_id": "b", "code": Infinity}')},
        exit=0,
        shows=("2 invalid",),
    ),
    Case(
        "jsonl: numeric ids keep their text",
        JOIN_JSONL,
        {
            "bob.jsonl": jsonl(
                '{"comment_id": 1.10, "code": "yes"}',
                '{"comment_id": 1.1, "code": "no"}',
                '{"comment_id": 1e400, "code": "no"}',
                '{"comment_id": 2e400, "code": "yes"}',
            )
        },
        check=units(8),
    ),
    Case(
        "jsonl: a key given twice in one object",
        JOIN_JSONL,
        {"bob.jsonl": jsonl('{"comment_id": "a", "code": "yes", "code": "no"}')},
        exit=2,
        says=("bob.jsonl", "line 1"),
    ),
    Case(
        "jsonl: a line that is an array",
        JOIN_JSONL,
        {"bob.jsonl": jsonl(["a", "yes"])},
        exit=2,
        code="sheet-malformed",
        says=("bob.jsonl", "line 1"),
    ),
    Case(
        "jsonl: a line that is a string",
        JOIN_JSONL,
        {"bob.jsonl": jsonl({"comment_id": "a", "code": "yes"}, "x")},
        exit=2,
        code="sheet-malformed",
        says=("bob.jsonl", "line 2"),
    ),
    Case(
        "jsonl: a truncated last line",
        JOIN_JSONL,
        {"bob.jsonl": jsonl({"comment_id": "a", "code": "yes"}) + '{"comment_id": "b", "co'},
        exit=2,
        code="sheet-malformed",
        says=("bob.jsonl", "line 2"),
    ),
    Case(
        "jsonl: blank and whitespace lines",
        JOIN_JSONL,
        {
            "bob.jsonl": "\n  \n"
            + jsonl({"comment_id": "a", "code": "yes"})
            + "\t\n"
            + jsonl({"comment_id": "b", "code": "no"})
        },
    ),
    Case(
        "jsonl: a line separator inside a string",
        JOIN_JSONL,
        {"bob.jsonl": jsonl({"comment_id": "a\u2028b", "code": "yes"}, {"comment_id": "c", "code": "no"})},
    ),
    Case("jsonl: keys in other case", JOIN_JSONL, {"bob.jsonl": jsonl({"Comment_ID": "a", "CODE": "yes"})}),
    Case(
        "jsonl: objects with different keys",
        JOIN_JSONL,
        {"bob.jsonl": jsonl({"comment_id": "a", "code": "yes"}, {"comment_id": "b"}, {"code": "no"})},
    ),
    Case(
        "jsonl: a code that is an object", JOIN_JSONL, {"bob.jsonl": jsonl({"comment_id": "a", "code": {"x": [1, 2]}})}
    ),
    Case(
        "jsonl: ids true, false and null",
        JOIN_JSONL,
        {
            "bob.jsonl": jsonl(
                {"comment_id": True, "code": "yes"},
                {"comment_id": False, "code": "no"},
                {"comment_id": None, "code": "no"},
            )
        },
    ),
    Case(
        "jsonl: an escaped NUL in an id",
        JOIN_JSONL,
        {"bob.jsonl": jsonl({"comment_id": "a\u0000b", "code": "yes"})},
        exit=2,
        code="sheet-control-character",
        says=("bob.jsonl", "row 1"),
    ),
    Case(
        "jsonl: a lone surrogate in an id",
        JOIN_JSONL,
        {"bob.jsonl": jsonl('{"comment_id": "a\\ud800", "code": "yes"}', {"comment_id": "b", "code": "no"})},
        exit=2,
        code="sheet-malformed",
        says=("bob.jsonl",),
    ),
    Case(
        "jsonl: ten thousand keys",
        JOIN_JSONL,
        {
            "bob.jsonl": lambda: jsonl(
                {"comment_id": "a", "code": "yes", **{f"k{i}": i for i in range(10_000)}}
            ).encode()
        },
        exit=2,
        code="limit-columns",
        says=("bob.jsonl", "columns"),
    ),
    Case(
        "jsonl: the .ndjson suffix with a BOM",
        "join alice.csv bob.ndjson --rule rule.yaml --out out",
        {"bob.ndjson": "\ufeff" + jsonl({"comment_id": "a", "code": "yes"})},
    ),
    Case(
        "jsonl: not UTF-8",
        JOIN_JSONL,
        {"bob.jsonl": b'{"comment_id": "\xe9", "code": "yes"}\n'},
        exit=2,
        code="sheet-encoding",
        says=("bob.jsonl",),
    ),
    Case(
        "jsonl: a 5,000-digit number as a code",
        JOIN_JSONL,
        {"bob.jsonl": '{"comment_id": "a", "code": 1e' + big_int(5) + "}\n"},
        exit=0,
        shows=("1 invalid",),
    ),
    # --- XLSX -------------------------------------------------------------------------------
    Case(
        "xlsx: malformed XML",
        JOIN_XLSX,
        {"bob.xlsx": patched_xlsx({"xl/worksheets/sheet1.xml": b"<worksheet><sheetData><row>"})},
        exit=2,
        says=("bob.xlsx",),
    ),
    Case(
        "xlsx: an entity-expansion bomb",
        JOIN_XLSX,
        {
            "bob.xlsx": patched_xlsx(
                {
                    "xl/worksheets/sheet1.xml": sheet_xml(
                        HEADER_ROW + b'<row r="2"><c r="A2" t="inlineStr"><is><t>&lol9;</t></is></c></row>',
                        before=b'<!DOCTYPE worksheet [<!ENTITY lol "lol">'
                        + b"".join(
                            f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">'.encode()
                            for i in range(1, 10)
                        )
                        + b"]>",
                    )
                }
            )
        },
        exit=2,
        says=("bob.xlsx",),
        process=True,
    ),
    Case(
        "xlsx: an external entity",
        JOIN_XLSX,
        {
            "bob.xlsx": patched_xlsx(
                {
                    "xl/worksheets/sheet1.xml": sheet_xml(
                        HEADER_ROW + b'<row r="2"><c r="A2" t="inlineStr"><is><t>&x;</t></is></c>'
                        b'<c r="B2" t="inlineStr"><is><t>yes</t></is></c></row>',
                        before=b'<!DOCTYPE worksheet [<!ENTITY x SYSTEM "file:///etc/passwd">]>',
                    )
                }
            )
        },
        exit=2,
        says=("bob.xlsx",),
        never=("root:",),
    ),
    Case("xlsx: only a chartsheet", JOIN_XLSX, {"bob.xlsx": lambda: _chartsheet_only()}, exit=2, says=("bob.xlsx",)),
    Case(
        "xlsx: the worksheet part is missing",
        JOIN_XLSX,
        {"bob.xlsx": patched_xlsx({"xl/worksheets/sheet1.xml": None})},
        exit=2,
        says=("bob.xlsx",),
    ),
    Case(
        "xlsx: a shared-string index out of range",
        JOIN_XLSX,
        {
            "bob.xlsx": patched_xlsx(
                {"xl/worksheets/sheet1.xml": sheet_xml(HEADER_ROW + b'<row r="2"><c r="A2" t="s"><v>999</v></c></row>')}
            )
        },
        exit=2,
        says=("bob.xlsx",),
    ),
    Case(
        "xlsx: a cell at the far corner XFD1048576",
        JOIN_XLSX,
        {
            "bob.xlsx": patched_xlsx(
                {
                    "xl/worksheets/sheet1.xml": sheet_xml(
                        HEADER_ROW
                        + inline_row(2, "a", "yes")
                        + b'<row r="1048576"><c r="XFD1048576" t="inlineStr"><is><t>x</t></is>'
                        b"</c></row>"
                    )
                }
            )
        },
        exit=2,
        says=("bob.xlsx",),
        process=True,
        memory_mb=768,
    ),
    Case(
        "xlsx: a zip bomb of 2 GB in one cell",
        JOIN_XLSX,
        {"bob.xlsx": xlsx_bomb_cell(2 * 1024**3)},
        exit=2,
        says=("bob.xlsx",),
        process=True,
        memory_mb=768,
    ),
    Case(
        "xlsx: a cell of 20 MB",
        JOIN_XLSX,
        {"bob.xlsx": xlsx_bomb_cell(20 * 1024**2)},
        process=True,
        # read and logged: the value is in the chunks of the log's two files, which are made side by
        # side (each chunk's text several times while it is escaped and joined: a peak of about 480 MB
        # resident); 1.5 GB of address space ran out in one run of four
        memory_mb=2048,
    ),
    Case(
        "xlsx: a dimension that claims a million rows",
        JOIN_XLSX,
        {
            "bob.xlsx": patched_xlsx(
                {
                    "xl/worksheets/sheet1.xml": sheet_xml(
                        HEADER_ROW + inline_row(2, "a", "yes"), dimension=b'<dimension ref="A1:B1048576"/>'
                    )
                }
            )
        },
    ),
    Case(
        "xlsx: a dimension that claims one cell",
        JOIN_XLSX,
        {
            "bob.xlsx": patched_xlsx(
                {
                    "xl/worksheets/sheet1.xml": sheet_xml(
                        HEADER_ROW + inline_row(2, "a", "yes") + inline_row(3, "b", "no"),
                        dimension=b'<dimension ref="A1"/>',
                    )
                }
            )
        },
    ),
    Case(
        "xlsx: rows out of order",
        JOIN_XLSX,
        {
            "bob.xlsx": patched_xlsx(
                {
                    "xl/worksheets/sheet1.xml": sheet_xml(
                        HEADER_ROW + inline_row(3, "b", "no") + inline_row(2, "a", "yes")
                    )
                }
            )
        },
    ),
    Case(
        "xlsx: a row number given twice",
        JOIN_XLSX,
        {
            "bob.xlsx": patched_xlsx(
                {
                    "xl/worksheets/sheet1.xml": sheet_xml(
                        HEADER_ROW + inline_row(2, "a", "yes") + inline_row(2, "b", "no")
                    )
                }
            )
        },
        exit=0,
        shows=("1 fully coded",),
    ),
    Case(
        "xlsx: not a zip at all",
        JOIN_XLSX,
        {"bob.xlsx": sheet("a,yes")},
        exit=2,
        code="sheet-malformed",
        says=("bob.xlsx",),
    ),
    Case(
        "xlsx: a zip without a workbook",
        JOIN_XLSX,
        {"bob.xlsx": lambda: zip_bytes({"hello.txt": b"hi"})},
        exit=2,
        says=("bob.xlsx",),
    ),
    Case(
        "xlsx: an old binary .xls renamed",
        JOIN_XLSX,
        {"bob.xlsx": b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504)},
        exit=2,
        says=("bob.xlsx",),
    ),
    Case(
        "xlsx: a zip with a member outside the archive's folder",
        JOIN_XLSX,
        {"bob.xlsx": patched_xlsx({"../../escaped.txt": b"x"})},
        check=lambda o: _nothing_escaped(o),
    ),
    Case(
        "xlsx: --worksheet that does not exist",
        JOIN_XLSX + " --worksheet Nope",
        {"bob.xlsx": xlsx(GOOD_XLSX_ROWS)},
        exit=2,
        code="sheet-no-worksheet",
        says=("bob.xlsx", "Codes"),
    ),
    Case(
        "xlsx: the first worksheet is hidden",
        JOIN_XLSX,
        {"bob.xlsx": xlsx([["instructions"]], more={"Codes": GOOD_XLSX_ROWS}, hidden_first=True)},
        exit=2,
        code="sheet-missing-column",
        says=("bob.xlsx",),
    ),
    Case(
        "xlsx: ids as huge numbers, booleans and errors are refused",
        JOIN_XLSX,
        {"bob.xlsx": xlsx([["comment_id", "code"], [1e20, "yes"], [True, "no"], ["#N/A", "yes"], [-0.0, "no"]])},
        exit=2,
        code="sheet-number-id",
        says=("bob.xlsx", "rows 2, 5"),
    ),
    Case(
        "xlsx: a cell of 32,767 characters",
        JOIN_XLSX,
        {"bob.xlsx": xlsx([["comment_id", "code"], ["a" * 32767, "yes"]])},
    ),
    Case(
        "xlsx: an empty first row",
        JOIN_XLSX,
        {"bob.xlsx": xlsx([[None, None], *GOOD_XLSX_ROWS])},
        exit=2,
        code="sheet-missing-column",
        says=("bob.xlsx",),
    ),
    Case("xlsx: an empty workbook", JOIN_XLSX, {"bob.xlsx": xlsx([])}, exit=2, code="sheet-empty", says=("bob.xlsx",)),
    Case(
        "xlsx: a formula without a cached value as the code",
        JOIN_XLSX,
        {"bob.xlsx": xlsx([["comment_id", "code"], ["a", '=IF(TRUE,"yes","no")'], ["b", "no"]])},
        exit=2,
        code="sheet-formula-unsaved",  # it would read as blank: a code the coder entered, logged as missing
        says=("bob.xlsx", 'row 2: =IF(TRUE,"yes","no")'),
    ),
    Case(
        "xlsx: a formula without a cached value as an id",
        JOIN_XLSX,
        {"bob.xlsx": xlsx([["comment_id", "code"], ['="a"', "yes"], ["b", "no"]])},
        exit=2,
        code="sheet-formula-unsaved",
        says=("bob.xlsx", "comment_id"),
    ),
    Case(
        "xlsx: a formula without a cached value in a column not read",
        JOIN_XLSX,
        {"bob.xlsx": xlsx([["comment_id", "code", "note"], ["a", "yes", "=NOW()"], ["b", "no", ""]])},
    ),
    Case(
        "xlsx: a workbook saved as .xlsm",
        "join alice.csv bob.xlsm --rule rule.yaml --out out",
        {"bob.xlsm": xlsx(GOOD_XLSX_ROWS)},
    ),
    Case(
        "xlsx: a header cell that is a number",
        JOIN_XLSX,
        {"bob.xlsx": xlsx([["comment_id", "code", 3.5], ["a", "yes", 1]])},
    ),
    Case("xlsx: an empty file", JOIN_XLSX, {"bob.xlsx": b""}, exit=2, code="sheet-empty", says=("bob.xlsx",)),
    Case(
        "xlsx: a truncated workbook",
        JOIN_XLSX,
        {"bob.xlsx": lambda: xlsx(GOOD_XLSX_ROWS)()[:2000]},
        exit=2,
        code="sheet-malformed",
        says=("bob.xlsx",),
    ),
    Case(
        "xlsx: a shared-strings part that is not XML",
        JOIN_XLSX,
        {"bob.xlsx": patched_xlsx({"xl/sharedStrings.xml": b"\x00\x01garbage"})},
        exit=0,
        shows=("4 fully coded",),
    ),
    Case(
        "xlsx: a workbook part that is not XML",
        JOIN_XLSX,
        {"bob.xlsx": patched_xlsx({"xl/workbook.xml": b"<nope"})},
        exit=2,
        says=("bob.xlsx",),
    ),
    Case(
        "xlsx: a styles part that is not XML",
        JOIN_XLSX,
        {"bob.xlsx": patched_xlsx({"xl/styles.xml": b"<<<"})},
        exit=2,
        code="sheet-malformed",
        says=("bob.xlsx",),
    ),
    Case(
        "xlsx: a row of 16,384 cells",
        JOIN_XLSX,
        {"bob.xlsx": lambda: xlsx([["comment_id", "code"], ["a", "yes", *[None] * 16_000, "x"]])()},
        exit=2,
        code="limit-columns",
        says=("bob.xlsx", "columns"),
    ),
    Case(
        "xlsx: a cell with an ESC character read back",
        JOIN_XLSX,
        {
            "bob.xlsx": patched_xlsx(
                {"xl/worksheets/sheet1.xml": sheet_xml(HEADER_ROW + inline_row(2, "a_x001B_[2J", "maybe"))}
            )
        },
        never_shown=("\x1b[2J",),
    ),
]


def _chartsheet_only() -> bytes:
    """A workbook whose only sheet is a chartsheet: openpyxl finds no worksheet in it."""
    from kit import zip_members

    members = zip_members(xlsx(GOOD_XLSX_ROWS)())
    workbook = members["xl/workbook.xml"].decode()
    members["xl/workbook.xml"] = workbook.encode()
    relations = (
        members["xl/_rels/workbook.xml.rels"]
        .decode()
        .replace("relationships/worksheet", "relationships/chartsheet")
        .replace("worksheets/sheet1.xml", "chartsheets/sheet1.xml")
    )
    members["xl/_rels/workbook.xml.rels"] = relations.encode()
    types = (
        members["[Content_Types].xml"]
        .decode()
        .replace("/xl/worksheets/sheet1.xml", "/xl/chartsheets/sheet1.xml")
        .replace("spreadsheetml.worksheet+xml", "spreadsheetml.chartsheet+xml")
    )
    members["[Content_Types].xml"] = types.encode()
    del members["xl/worksheets/sheet1.xml"]
    members["xl/chartsheets/sheet1.xml"] = (
        b'<?xml version="1.0" encoding="UTF-8"?><chartsheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/'
        b'2006/main"><sheetViews><sheetView workbookViewId="0"/></sheetViews></chartsheet>'
    )
    return zip_bytes(members)


def _nothing_escaped(outcome: Outcome) -> None:
    assert not (outcome.folder.parent / "escaped.txt").exists()
    assert not (outcome.folder.parent.parent / "escaped.txt").exists()
