"""Every reader keeps its limits: size, nesting depth, digits, XLSX size and extent.

Each limit exceeded is exit 2 with one message that names the limit, the file,
the place, and `--limit NAME=N`; hostile files (XML bombs, zip bombs, a cell at
the far corner of a worksheet, JSON nested thousands deep) are refused quickly,
never with a traceback. The hostile XLSX files are built here with zipfile.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import time
import zipfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from irr_audit.cli import app
from irr_audit.errors import IrrAuditError, LimitError
from irr_audit.io.collector import parse_dataset, parse_run_record
from irr_audit.io.limits import (
    DEFAULT_LIMITS,
    Limits,
    _first_too_deep,
    json_lines,
    load_json,
    load_json_records,
    parse_limit_options,
)
from irr_audit.io.sheets import SheetOptions, parse_sheet
from irr_audit.rules.load import parse_rule

HERE = Path(__file__).parent
RULE = HERE.parent / "rules" / "explicit_current_failure" / "v1.yaml"
PARTNER = "comment_id,code\na,yes\nb,no\n"
RULE_HEAD = "rule: r\nversion: 1\nscale: nominal\ncodes: [a, b]\n"


def run(*args: object):
    return CliRunner().invoke(app, [str(arg) for arg in args])


def refused(result, code: str, *fragments: str) -> str:
    """The run ended with exit 2 and one message with this error code and text, no traceback."""
    output = result.stderr if hasattr(result, "stderr") else result.output
    assert result.exit_code == 2, output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert f"Error [{code}]" in output, output
    for fragment in fragments:
        assert fragment in output, output
    assert "Traceback" not in output
    return output


def join_with_partner(tmp_path: Path, name: str, data: bytes | str, *extra: str):
    sheet = tmp_path / name
    sheet.write_bytes(data.encode() if isinstance(data, str) else data)
    partner = tmp_path / "partner.csv"
    partner.write_text(PARTNER)
    return run("score", sheet, partner, "--rule", RULE, *extra)


# --- the Limits and the option ------------------------------------------------------


def test_defaults_fit_a_million_row_sheet_and_are_documented() -> None:
    limits = Limits()
    assert limits == DEFAULT_LIMITS
    assert limits.file_bytes >= 1 << 30 and limits.xlsx_rows >= 1_000_000
    assert limits.xlsx_cells >= 5 * 1_000_000  # a million rows of five columns
    readme = (HERE.parent / "README.md").read_text()
    for name in Limits.__dataclass_fields__:
        assert f"`{name}`" in readme, name


def test_limit_option_syntax() -> None:
    limits = parse_limit_options(["xlsx-cells=50M", "file_bytes=8GiB", "depth=1_00"])
    assert (limits.xlsx_cells, limits.file_bytes, limits.depth) == (50_000_000, 8 << 30, 100)
    for bad in ("nothing=1", "depth", "depth=0", "depth=-3", "depth=2.5", "depth=100000"):
        with pytest.raises(IrrAuditError) as caught:
            parse_limit_options([bad])
        assert caught.value.code == "usage-limit"


def test_a_bad_limit_option_is_a_usage_error(tmp_path: Path) -> None:
    result = join_with_partner(tmp_path, "a.csv", PARTNER, "--limit", "xlsx_cels=5")
    refused(result, "usage-limit", "xlsx_cells")


def test_file_bytes_names_itself_and_can_be_raised(tmp_path: Path) -> None:
    sheet = "comment_id,code,note\n" + "".join(f"a{i},yes,{'x' * 50}\n" for i in range(20))
    result = join_with_partner(tmp_path, "big.csv", sheet, "--limit", "file_bytes=1000")
    refused(result, "limit-file-bytes", "big.csv", "the limit file_bytes is 1,000", "--limit file_bytes=N")
    raised = join_with_partner(tmp_path, "big.csv", sheet, "--limit", "file_bytes=1M")
    assert raised.exit_code == 1 and "no unit is fully coded" in raised.stderr  # read: it shares no id with its partner


# --- JSON, JSON Lines -----------------------------------------------------------------


def reference_depth(raw: bytes, per_line: bool) -> list[int]:
    """The level after each byte, the slow and obvious way (strings restart on each line)."""
    levels, level, inside, escaped = [], 0, False, False
    for byte in raw:
        character = chr(byte)
        if character == "\n":
            inside, escaped = False, False
            level = 0 if per_line else level
        elif inside:
            if escaped:
                escaped = False
            elif character == "\\":
                escaped = True
            elif character == '"':
                inside = False
        elif character == '"':
            inside = True
        elif character in "[{":
            level += 1
        elif character in "]}":
            level -= 1
        levels.append(level)
    return levels


JSON_TEXT = st.text(alphabet='[]{}"\\\n,: ab', max_size=6)
JSON_VALUES = st.recursive(
    st.none() | st.integers() | JSON_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(JSON_TEXT, inner, max_size=3),
    max_leaves=30,
)


@settings(derandomize=True, max_examples=400, deadline=None)
@given(st.lists(JSON_VALUES, min_size=1, max_size=3), st.integers(1, 6), st.booleans(), st.booleans())
def test_depth_scan_equals_a_plain_reading(values: list, limit: int, per_line: bool, indent: bool) -> None:
    """On JSON (one document, or JSON Lines) the vectorised scan finds what a reading byte by byte finds."""
    if per_line:
        text = "\n".join(json.dumps(value) for value in values)
    else:
        text = json.dumps(values, indent=1 if indent else None)
    raw = text.encode()
    levels = reference_depth(raw, per_line)
    expected = next((at for at, level in enumerate(levels) if level > limit), None)
    assert _first_too_deep(raw, limit, per_line) == expected


def test_deep_json_is_refused_before_parsing() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    with pytest.raises(LimitError) as caught:
        load_json(deep, "manifest.json")
    assert caught.value.code == "limit-depth"
    assert "manifest.json nests deeper than 64 levels at line 1, column 65" in caught.value.message
    assert "--limit depth=N" in caught.value.hint
    assert load_json("[" * 60 + "]" * 60, "x") is not None


def test_a_number_of_5000_digits_names_the_digit_limit() -> None:
    with pytest.raises(LimitError) as caught:
        load_json('{"a": 1,\n "b": ' + "7" * 5000 + "}", "record.json")
    assert caught.value.code == "limit-number-digits"
    assert "record.json has a number of 5,000 digits at line 2, column 7" in caught.value.message
    assert load_json('{"id": "' + "7" * 5000 + '"}', "x")["id"] == "7" * 5000  # text is no number


def test_nan_infinity_and_overflow_are_not_json() -> None:
    for text in ('{"v": NaN}', '{"v": -Infinity}', '{"v": 1e400}'):
        with pytest.raises(ValueError):
            load_json(text, "x")


def test_json_lines_name_the_line() -> None:
    data = '{"a": 1}\n\n' + "[" * 70 + "]" * 70 + "\n"
    with pytest.raises(LimitError) as caught:
        list(json_lines(data, "sheet s.jsonl"))
    assert "sheet s.jsonl line 3 nests deeper" in caught.value.message
    with pytest.raises(LimitError) as caught:
        list(json_lines('{"a": "' + "x" * 2000 + '"}\n', "d.jsonl", Limits(line_bytes=1000)))
    assert caught.value.code == "limit-line-bytes" and "line 1 is 2,009 bytes" in caught.value.message
    with pytest.raises(IrrAuditError) as caught:
        load_json_records('{"a": 1}\nnot json\n', "ledger.jsonl")
    assert caught.value.code == "json-lines-invalid" and "ledger.jsonl line 2" in caught.value.message


def test_jsonl_sheet_nested_deep_exits_2_and_the_limit_can_be_raised(tmp_path: Path) -> None:
    nested = '{"comment_id": "a", "code": "yes", "x": ' + "[" * 100 + "]" * 100 + "}\n"
    sheet = nested + '{"comment_id": "b", "code": "no"}\n'
    refused(join_with_partner(tmp_path, "deep.jsonl", sheet), "limit-depth", "deep.jsonl line 1", "--limit depth=N")
    assert join_with_partner(tmp_path, "deep.jsonl", sheet, "--limit", "depth=200").exit_code == 0
    bomb = '{"comment_id": "a", "code": "yes", "x": ' + "[" * 50_000 + "]" * 50_000 + "}\n"
    refused(join_with_partner(tmp_path, "bomb.jsonl", bomb), "limit-depth")


def test_jsonl_sheet_digits(tmp_path: Path) -> None:
    sheet = '{"comment_id": ' + "1" * 5000 + ', "code": "yes"}\n'
    refused(join_with_partner(tmp_path, "digits.jsonl", sheet), "limit-number-digits", "digits.jsonl line 1")


def test_collector_files_within_limits() -> None:
    with pytest.raises(LimitError):
        parse_dataset(("[" * 5000 + "]" * 5000).encode(), "items.json")
    with pytest.raises(LimitError):
        parse_dataset(b'{"commentId": "a"}\n' + b'{"x": ' + b"[" * 5000 + b"]" * 5000 + b"}\n", "items.jsonl")
    with pytest.raises(LimitError) as caught:
        parse_dataset(b'[{"commentId": ' + b"9" * 5000 + b"}]", "items.json")
    assert caught.value.code == "limit-number-digits"
    items = parse_dataset(b'[{"commentId": 7.50e1, "body": "b", "status": "ok"}]', "items.json").items
    assert items[0].comment_id == "7.50e1"  # numbers stay as written
    with pytest.raises(LimitError):
        parse_run_record(b'{"OUTPUT": ' + b"[" * 3000 + b"]" * 3000 + b"}", "run.json")
    for bad in (b'{"commentsSaved": 1e400}', b'{"commentsSaved": 9007199254740993}', b'"a string"', b"[1]"):
        with pytest.raises(IrrAuditError):
            parse_run_record(bad, "run.json")


# --- rules --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "code", "fragment"),
    [
        (RULE_HEAD + "x_deep: " + "[" * 2000 + "]" * 2000 + "\n", "limit-depth", "nests deeper than 64 levels"),
        (RULE_HEAD + "x_big: " + "1" * 5000 + "\n", "limit-number-digits", "a number of 5,000 digits at line 5"),
        (
            "rule: r\nversion: 1\nscale: nominal\ncodes: [" + ", ".join(f"c{i}" for i in range(1001)) + "]\n",
            "limit-rule-codes",
            "key codes has 1,001 entries",
        ),
        (
            "rule: r\nversion: 1\nscale: interval\ncodes: [{code: a, value: .inf}, {code: b, value: 1}]\n",
            "rule-invalid",
            "codes[0].value must be a finite number (got inf)",
        ),
        (
            "rule: r\nversion: 1\nscale: interval\ncodes: [{code: a, value: 0}, {code: b, value: .nan}]\n",
            "rule-invalid",
            "codes[1].value must be a finite number (got nan)",
        ),
        (
            "rule: r\nversion: 1\nscale: interval\ncodes: [{code: a, value: 0}, {code: b, value: 1.0e+999}]\n",
            "rule-invalid",
            "codes[1].value must be a finite number",
        ),
        (RULE_HEAD + "aliases: {Y: a, y: b}\n", "rule-invalid", "alias 'Y', the same once case"),
        (RULE_HEAD + "aliases: {'Ａ': b}\n", "rule-invalid", "is already a code of this rule ('a' once case"),
        (RULE_HEAD + "aliases: {' A ': b}\n", "rule-invalid", "is already a code of this rule"),
    ],
    ids=[
        "deep",
        "digits",
        "codes",
        "inf",
        "nan",
        "overflow",
        "aliases collide",
        "alias is a code (NFKC)",
        "alias is a code (spaces)",
    ],
)
def test_rule_limits_and_finite_numbers(text: str, code: str, fragment: str) -> None:
    with pytest.raises(IrrAuditError) as caught:
        parse_rule(text.encode(), "r/v1.yaml")
    assert caught.value.code == code
    assert fragment in caught.value.message
    assert "r/v1.yaml" in caught.value.message


def test_aliases_that_agree_are_fine() -> None:
    rule = parse_rule((RULE_HEAD + "aliases: {Y: a, y: a}\n").encode(), "r.yaml")
    assert rule.classify("Y")[1] == "a"


def test_deep_rule_through_the_cli_and_raised(tmp_path: Path) -> None:
    rule = tmp_path / "v1.yaml"
    rule.write_text("rule: r\nversion: 1\nscale: nominal\ncodes: [yes, no]\nx_deep: " + "[" * 100 + "]" * 100 + "\n")
    sheet = tmp_path / "a.csv"
    sheet.write_text(PARTNER)
    refused(run("score", sheet, sheet, "--rule", rule), "limit-depth", "v1.yaml")
    assert run("score", sheet, sheet, "--rule", rule, "--limit", "depth=200").exit_code in (0, 2)


# --- files irr-audit wrote, read back -----------------------------------------------------


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    examples = HERE.parent / "examples" / "sheets"
    result = run("freeze", examples / "alice.csv", examples / "bob.csv", "--rule", RULE, "--into", tmp_path / "audits")
    assert result.exit_code == 0, result.output
    return Path(result.stdout.strip().split("  ", 1)[1])  # sha256:<digest>  <bundle>


def no_traceback(result) -> None:
    assert result.exit_code in (1, 2), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)


def rewrite(path: Path, text: str) -> None:
    os.chmod(path, 0o644)
    os.chmod(path.parent, 0o755)
    path.write_text(text)


@pytest.mark.parametrize(
    "content", ["[" * 5000 + "]" * 5000, '{"format": NaN}', '{"n": ' + "1" * 5000 + "}"], ids=["deep", "nan", "digits"]
)
def test_hostile_manifest_is_no_traceback(bundle: Path, content: str) -> None:
    rewrite(bundle / "manifest.json", content)
    no_traceback(run("verify", bundle))
    no_traceback(run("report", bundle))


def test_hostile_adjudication_record_is_no_traceback(bundle: Path) -> None:
    folder = bundle / "adjudication"
    os.chmod(bundle, 0o755)
    folder.mkdir(exist_ok=True)
    for name, content in (("a.json", "[" * 5000 + "]" * 5000), ("b.json", '{"created": NaN}')):
        (folder / name).write_text(content)
    no_traceback(run("verify", bundle))
    no_traceback(run("report", bundle))


def test_hostile_join_summary_is_no_traceback(tmp_path: Path) -> None:
    examples = HERE.parent / "examples" / "sheets"
    out = tmp_path / "joined"
    assert run("join", examples / "alice.csv", examples / "bob.csv", "--rule", RULE, "--out", out).exit_code == 0
    (out / "summary.json").write_text("[" * 5000 + "]" * 5000)
    refused(run("score", out), "limit-depth", "summary.json")


def test_sample_ledger_with_a_non_json_line(tmp_path: Path) -> None:
    import hashlib

    dataset = HERE / "fixtures" / "collector"
    items = next(path for path in sorted(dataset.iterdir()) if path.suffix == ".json" and "run" not in path.name)
    folder = tmp_path / "sample"
    made = run("sample", items, "--rule", RULE, "--coders", "a,b", "--out", folder)
    if made.exit_code != 0:
        pytest.fail(made.output)
    record = json.loads((folder / "sample.json").read_text())
    ledger = folder / record["ledger"]["file"]
    ledger.write_bytes(ledger.read_bytes() + b"not json\n")
    record["ledger"]["sha256"] = hashlib.sha256(ledger.read_bytes()).hexdigest()
    (folder / "sample.json").write_text(json.dumps(record))
    sheets = folder / "sheets"
    result = run("join", *sorted(sheets.iterdir()), "--rule", RULE, "--sample", folder, "--out", tmp_path / "j")
    refused(result, "sample-dir-invalid", "is not a JSON object with a comment_id")


# --- XLSX -------------------------------------------------------------------------------

CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/xl/workbook.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
    '<Override PartName="/xl/worksheets/sheet1.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
    "</Types>"
)
ROOT_RELS = (
    '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
    'relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
    'relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>'
)
WORKBOOK = (
    '<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
    ' xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets>'
    '<sheet name="Codes" sheetId="1" r:id="rId1"/></sheets></workbook>'
)
WORKBOOK_RELS = (
    '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
    'relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
    'relationships/worksheet" Target="worksheets/sheet1.xml"/>{extra}</Relationships>'
)
SHARED_RELATION = (
    '<Relationship Id="rId9" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
    'sharedStrings" Target="sharedStrings.xml"/>'
)
MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"


def inline_row(number: int, *values: str) -> str:
    cells = "".join(
        f'<c r="{chr(65 + at)}{number}" t="inlineStr"><is><t>{value}</t></is></c>' for at, value in enumerate(values)
    )
    return f'<row r="{number}">{cells}</row>'


def worksheet(rows: str, dimension: str = "", prolog: str = "") -> str:
    dimension_tag = f'<dimension ref="{dimension}"/>' if dimension else ""
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>{prolog}<worksheet xmlns="{MAIN}">{dimension_tag}'
        f"<sheetData>{rows}</sheetData></worksheet>"
    )


GOOD_ROWS = inline_row(1, "comment_id", "code") + inline_row(2, "a", "yes") + inline_row(3, "b", "no")


def xlsx(parts: dict[str, str | bytes], drop: tuple[str, ...] = ()) -> bytes:
    import io

    every = {
        "[Content_Types].xml": CONTENT_TYPES,
        "_rels/.rels": ROOT_RELS,
        "xl/workbook.xml": WORKBOOK,
        "xl/_rels/workbook.xml.rels": WORKBOOK_RELS.format(extra=""),
        "xl/worksheets/sheet1.xml": worksheet(GOOD_ROWS),
        **parts,
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in every.items():
            if name not in drop:
                archive.writestr(name, content)
    return buffer.getvalue()


def test_openpyxl_parses_with_defusedxml() -> None:
    import openpyxl

    assert openpyxl.DEFUSEDXML is True


def test_the_minimal_workbook_reads(tmp_path: Path) -> None:
    assert join_with_partner(tmp_path, "a.xlsx", xlsx({})).exit_code == 0


BILLION_LAUGHS = (
    '<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">'
    '<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">'
    '<!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">]>'
)
EXTERNAL = '<!DOCTYPE x [<!ENTITY ext SYSTEM "file:///etc/passwd">]>'
SHARED_STRINGS = f'<?xml version="1.0" encoding="UTF-8"?><sst xmlns="{MAIN}" count="1"><si><t>only</t></si></sst>'
CHARTSHEET_WORKBOOK = WORKBOOK.replace('r:id="rId1"', 'r:id="rId2"')
CHARTSHEET_RELS = WORKBOOK_RELS.format(extra="").replace("relationships/worksheet", "relationships/chartsheet")

HOSTILE_XLSX = {
    "malformed xml": ({"xl/worksheets/sheet1.xml": "<worksheet><sheetData><row>"}, (), "sheet-malformed"),
    "entity expansion bomb": (
        {"xl/worksheets/sheet1.xml": worksheet(inline_row(1, "comment_id", "&lol4;"), prolog=BILLION_LAUGHS)},
        (),
        "sheet-malformed",
    ),
    "external entity": (
        {"xl/worksheets/sheet1.xml": worksheet(inline_row(1, "comment_id", "&ext;"), prolog=EXTERNAL)},
        (),
        "sheet-malformed",
    ),
    "chartsheet only": (
        {
            "xl/workbook.xml": WORKBOOK.replace("<sheet ", '<sheet state="visible" '),
            "xl/_rels/workbook.xml.rels": CHARTSHEET_RELS,
            "xl/chartsheets/sheet1.xml": f'<chartsheet xmlns="{MAIN}"/>',
        },
        ("xl/worksheets/sheet1.xml",),
        "sheet-no-worksheet",
    ),
    "missing worksheet part": ({}, ("xl/worksheets/sheet1.xml",), "sheet-no-worksheet"),
    "shared string out of range": (
        {
            "xl/sharedStrings.xml": SHARED_STRINGS,
            "xl/_rels/workbook.xml.rels": WORKBOOK_RELS.format(extra=SHARED_RELATION),
            "xl/worksheets/sheet1.xml": worksheet(
                '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>99</v></c></row>'
            ),
        },
        (),
        "sheet-malformed",
    ),
    "not a zip at all": (None, (), "sheet-malformed"),
}


@pytest.mark.parametrize("case", list(HOSTILE_XLSX), ids=list(HOSTILE_XLSX))
def test_hostile_xlsx_exits_2(tmp_path: Path, case: str) -> None:
    parts, drop, code = HOSTILE_XLSX[case]
    data = b"PK\x03\x04 truncated" if parts is None else xlsx(parts, drop)
    started = time.monotonic()
    result = join_with_partner(tmp_path, "h.xlsx", data)
    output = refused(result, code, "h.xlsx")
    assert "passwd" not in output.split("Hint")[0] or case != "external entity"
    assert time.monotonic() - started < 10


def test_a_single_cell_at_the_far_corner_is_refused_fast(tmp_path: Path) -> None:
    far = GOOD_ROWS + '<row r="1048576"><c r="XFD1048576" t="inlineStr"><is><t>x</t></is></c></row>'
    started = time.monotonic()
    output = refused(
        join_with_partner(tmp_path, "far.xlsx", xlsx({"xl/worksheets/sheet1.xml": worksheet(far)})),
        "limit-columns",
        "far.xlsx",
        "XFD1048576",
        "--limit columns=N",
    )
    assert "1,048,576 rows x 16,384 columns" in output
    assert time.monotonic() - started < 10


def test_a_declared_dimension_is_checked_before_parsing(tmp_path: Path) -> None:
    declared = xlsx({"xl/worksheets/sheet1.xml": worksheet(GOOD_ROWS, dimension="A1:ZZ900000")})
    refused(
        join_with_partner(tmp_path, "dim.xlsx", declared),
        "limit-xlsx-cells",
        "declares",
        "ZZ900000",
        "900,000 rows x 702 columns",
    )
    # a real sheet with a true dimension reads
    honest = xlsx({"xl/worksheets/sheet1.xml": worksheet(GOOD_ROWS, dimension="A1:B3")})
    assert join_with_partner(tmp_path, "ok.xlsx", honest).exit_code == 0


def test_cells_and_extent_can_be_raised(tmp_path: Path) -> None:
    wide = GOOD_ROWS + '<row r="4"><c r="E4" t="inlineStr"><is><t></t></is></c></row>'
    data = xlsx({"xl/worksheets/sheet1.xml": worksheet(wide)})
    refused(
        join_with_partner(tmp_path, "w.xlsx", data, "--limit", "xlsx_cells=12"),
        "limit-xlsx-cells",
        "4 rows x 5 columns) = 20 cells",
    )
    assert join_with_partner(tmp_path, "w.xlsx", data, "--limit", "xlsx_cells=20").exit_code == 0


def test_a_zip_bomb_is_refused_by_its_ratio_and_size(tmp_path: Path) -> None:
    padding = "<!--" + "0" * 80_000_000 + "-->"  # past the size from which the ratio is checked
    bomb = xlsx({"xl/worksheets/sheet1.xml": worksheet(GOOD_ROWS, prolog=padding)})
    assert len(bomb) < 200_000
    refused(join_with_partner(tmp_path, "bomb.xlsx", bomb), "limit-xlsx-ratio", "sheet1.xml", "zip bomb")
    refused(
        join_with_partner(tmp_path, "bomb.xlsx", bomb, "--limit", "xlsx_ratio=100000", "--limit", "xlsx_bytes=10M"),
        "limit-xlsx-bytes",
        "unpacks to more than 10,000,000 bytes",
    )


def test_a_long_cell_of_repeated_text_is_no_zip_bomb(tmp_path: Path) -> None:
    long_cell = GOOD_ROWS + inline_row(4, "d", "yes").replace("<t>d</t>", "<t>" + "d" * 20_000_000 + "</t>", 1)
    data = xlsx({"xl/worksheets/sheet1.xml": worksheet(long_cell)})
    assert join_with_partner(tmp_path, "long.xlsx", data).exit_code == 0


def test_columns_of_every_format(tmp_path: Path) -> None:
    wide = ",".join(f"c{at}" for at in range(1001)).replace("c0", "comment_id").replace("c1,", "code,", 1)
    refused(join_with_partner(tmp_path, "wide.csv", wide + "\n"), "limit-columns", "1,001 columns")
    keys = "".join(json.dumps({"comment_id": "a", "code": "yes", f"k{line}": 1}) + "\n" for line in range(1000))
    refused(join_with_partner(tmp_path, "keys.jsonl", keys), "limit-columns", "1,001 different keys by line 999")
    assert join_with_partner(tmp_path, "keys.jsonl", keys, "--limit", "columns=2000").exit_code == 0


def test_too_many_cells_before_openpyxl_builds_them(tmp_path: Path) -> None:
    rows = GOOD_ROWS + "".join(inline_row(number, f"x{number}", "yes") for number in range(4, 60))
    data = xlsx({"xl/worksheets/sheet1.xml": worksheet(rows)})
    refused(
        join_with_partner(tmp_path, "many.xlsx", data, "--limit", "xlsx_cells=50"),
        "limit-xlsx-cells",
        "more than 50 cells in its worksheets",
    )


# --- file names that are not UTF-8 ------------------------------------------------------

NOT_UTF8 = os.fsdecode(b"caf\xe9.csv")


@pytest.mark.skipif(os.name == "nt", reason="POSIX file names are bytes")
@pytest.mark.parametrize("command", ["join", "freeze", "score"])
def test_a_file_name_that_is_not_utf8(tmp_path: Path, command: str) -> None:
    sheet = tmp_path / NOT_UTF8
    sheet.write_text(PARTNER)
    partner = tmp_path / "partner.csv"
    partner.write_text(PARTNER)
    extra = {"join": ("--out", tmp_path / "out"), "freeze": ("--into", tmp_path / "audits"), "score": ()}[command]
    refused(run(command, sheet, partner, "--rule", RULE, *extra), "path-not-utf8", "caf\\xe9.csv")


@pytest.mark.skipif(os.name == "nt", reason="POSIX file names are bytes")
def test_a_rule_and_dataset_name_that_is_not_utf8(tmp_path: Path) -> None:
    rule = tmp_path / os.fsdecode(b"r\xff.yaml")
    shutil.copy(RULE, rule)
    sheet = tmp_path / "a.csv"
    sheet.write_text(PARTNER)
    refused(run("score", sheet, sheet, "--rule", rule), "path-not-utf8", "r\\xff.yaml")
    dataset = tmp_path / os.fsdecode(b"d\xff.json")
    dataset.write_text("[]")
    refused(run("sample", dataset, "--rule", RULE, "--coders", "a,b", "--out", tmp_path / "s"), "path-not-utf8")


# --- rules check and symlinks ---------------------------------------------------------------


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_rules_check_follows_an_unchanged_symlink(tmp_path: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-C", str(tmp_path), "-c", "user.email=t@t", "-c", "user.name=t", *args],
            check=True,
            capture_output=True,
        )

    git("init", "-q")
    (tmp_path / "shared").mkdir()
    (tmp_path / "rules" / "r").mkdir(parents=True)
    (tmp_path / "shared" / "r1.yaml").write_text(RULE_HEAD)
    (tmp_path / "rules" / "r" / "v1.yaml").symlink_to(Path("../../shared/r1.yaml"))
    git("add", "-A")
    git("commit", "-qm", "one")
    result = run("rules", "check", tmp_path / "rules", "--base", "HEAD")
    assert result.exit_code == 0, result.output
    (tmp_path / "shared" / "r1.yaml").write_text(RULE_HEAD + "question: changed\n")
    result = run("rules", "check", tmp_path / "rules", "--base", "HEAD")
    assert result.exit_code == 1 and "released-edited" in result.output


def test_options_carry_limits_to_the_library() -> None:
    deep = ('{"comment_id": "a", "code": "yes", "x": ' + "[" * 70 + "]" * 70 + "}\n").encode()
    with pytest.raises(LimitError):
        parse_sheet(deep, Path("s.jsonl"))
    sheet = parse_sheet(deep, Path("s.jsonl"), SheetOptions(limits=Limits(depth=100)))
    assert sheet.comment_ids.to_pylist() == ["a"]


def test_a_raised_limit_reaches_join_folders_and_bundles(tmp_path: Path) -> None:
    """A sheet that needs a raised limit is read with it everywhere it is read again:
    score of the join folder, freeze, score and verify of the bundle, adjudicate."""
    extra = ",".join(f"x{n}" for n in range(DEFAULT_LIMITS.columns))
    wide = tmp_path / "wide.csv"
    padding = "," * DEFAULT_LIMITS.columns
    wide.write_text(f"comment_id,code,{extra}\na,yes{padding}\nb,no{padding}\n")
    (tmp_path / "partner.csv").write_text(PARTNER)
    sheets = [wide, tmp_path / "partner.csv"]
    raised = ("--limit", "columns=2000")
    refused(run("join", *sheets, "--rule", RULE, "--out", tmp_path / "j"), "limit-columns", "--limit columns=N")
    assert run("join", *sheets, "--rule", RULE, "--out", tmp_path / "j", *raised).exit_code == 0
    refused(run("score", tmp_path / "j"), "limit-columns")
    assert run("score", tmp_path / "j", *raised).exit_code == 0
    frozen = run("freeze", tmp_path / "j", "--into", tmp_path / "audits", *raised)
    assert frozen.exit_code == 0, frozen.output
    bundle = Path(frozen.stdout.strip().split("  ", 1)[1])
    assert run("score", bundle, *raised).exit_code == 0
    refused(run("score", bundle), "limit-columns")
    assert run("verify", bundle, *raised).exit_code == 0
    assert run("verify", bundle).exit_code == 1  # the sheet cannot be read within the default limits
    assert run("adjudicate", bundle, *raised).exit_code == 0


# --- the scans of a whole file: the same answers as the pattern and the count per line -------------

scanned_bytes = st.lists(
    st.sampled_from([b"1", b"23", b"4567", b"e", b"E", b"+", b"-", b"x", b"\n", b'"', b"{", b"["]), max_size=120
).map(b"".join)


@settings(max_examples=400, deadline=None)
@given(raw=scanned_bytes, digits=st.integers(min_value=2, max_value=6), chunk=st.sampled_from([5, 8, 64, 1 << 22]))
def test_the_number_scan_finds_the_lines_the_pattern_finds(raw: bytes, digits: int, chunk: int) -> None:
    """A whole file's scan (as arrays, in chunks that overlap) flags exactly the lines where the
    pattern matches, and a file has a long number where the pattern says so."""
    from unittest.mock import patch

    from irr_audit.io import limits as limits_module

    limits = dataclasses.replace(DEFAULT_LIMITS, number_digits=digits)
    pattern = limits_module._long_number_pattern(digits)
    expected = {number for number, line in enumerate(raw.split(b"\n"), start=1) if pattern.search(line)}
    with patch.object(limits_module, "_SCAN_CHUNK", chunk):
        assert limits_module.number_check_lines(raw, limits) == expected
        assert (len(limits_module._long_number_starts(raw, digits)) > 0) == (pattern.search(raw) is not None)
        most = max((line.count(b"{") + line.count(b"[") for line in raw.split(b"\n")), default=0)
        assert limits_module._most_opened_on_a_line(raw) == most


def test_a_json_lines_file_checks_numbers_only_on_its_flagged_lines() -> None:
    """Ids that look like exponents (07e285) make a line checked, not the file refused; a number
    past the limit is still refused on its line."""
    limits = dataclasses.replace(DEFAULT_LIMITS, number_digits=5)
    lines = [json.dumps({"comment_id": f"07e{number:03d}", "n": number}) for number in range(3000)]
    assert [value["n"] for _, value in load_json_records("\n".join(lines), "ledger.jsonl", limits)] == list(range(3000))
    lines[2500] = '{"comment_id": "a", "n": 1234567}'
    with pytest.raises(LimitError, match="line 2501"):
        load_json_records("\n".join(lines), "ledger.jsonl", limits)
