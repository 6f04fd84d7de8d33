"""Every rendered output escapes what it did not write: Markdown, HTML, JSON, the terminal, CSV and XLSX.

The Markdown checks render through cmark-gfm (GitHub's own renderer, with its extensions: tables,
autolinks, strikethrough, tag filter), since a pull request is where the Markdown report is read.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from irr_audit.cli import app
from irr_audit.errors import IrrAuditError
from irr_audit.io.display import visible
from irr_audit.report.markdown import md_text

ROOT = Path(__file__).resolve().parents[1]
RULE = ROOT / "rules" / "explicit_current_failure" / "v1.yaml"

# Text a hostile sheet, decisions file or command line can carry.
LINK = "[x](javascript:alert(1))"
AUTOLINK = "<javascript:alert(2)>"
SCRIPT = "<script>alert(3)</script>"
IMAGE = "![i](https://example.invalid/i.png)"
TERMINAL = "\x1b]0;pwned\x07\x1b[2J\rover\x08\x9b31m\u202etxt.exe"
BIDI = "\u202etxt.exe\u2066"  # not a control character: an id may hold it, and reports show it escaped
# Ids cannot hold control characters or line breaks, nor codes line breaks (the sheet reader
# refuses them); bodies, notes and file names can, and carry TERMINAL.
TERMINAL_CODE = TERMINAL.replace("\r", "")
HOSTILE_IDS = [
    LINK,
    SCRIPT,
    "a|b c",
    "*em* _em_ ~~del~~",
    AUTOLINK,
    BIDI,
    "ok1",
    IMAGE,
    "https://example.invalid/x www.example.invalid",
    "`code` &lt;b&gt; $x$",
    "# heading",
    "- item",
]
UNICODE = "café 漢字 😀 עברית"
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def run(*args: object):
    return CliRunner().invoke(app, [str(arg) for arg in args], catch_exceptions=False)


def write_sheet(path: Path, coder: str, codes: list[str]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(["comment_id", "code", "body", "coder"])
        for comment_id, code in zip(HOSTILE_IDS, codes):
            writer.writerow([comment_id, code, f"{SCRIPT} {LINK} | {UNICODE} {TERMINAL}", coder])
    return path


@pytest.fixture(scope="module")
def hostile_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A frozen audit of sheets full of hostile text, adjudicated with hostile decisions."""
    folder = tmp_path_factory.mktemp("hostile")
    first = write_sheet(folder / "ann.csv", "<b>ann</b> " + BIDI, ["yes", "no"] * 5 + [TERMINAL_CODE, "no"])
    opposite = ["no", "yes"] * 3 + ["yes"] + ["yes", "no"] * 2 + ["yes"]  # every unit but ok1 disagrees
    second = write_sheet(folder / "bob.csv", LINK + " " + UNICODE, opposite)
    frozen = run("freeze", first, second, "--rule", RULE, "--into", folder / "audits")
    assert frozen.exit_code == 0, frozen.stderr
    bundle = Path(frozen.stdout.strip().split("  ", 1)[1])  # sha256:<digest>  <bundle>
    template = folder / "template.csv"
    assert run("adjudicate", bundle, "--output", template).exit_code == 0
    rows = list(csv.reader(template.open(newline="", encoding="utf-8")))
    code, note = rows[0].index("code"), rows[0].index("note")
    for row in rows[1:]:
        row[code] = "yes"
        row[note] = f"{LINK} {AUTOLINK} {SCRIPT} | pipe\nnew line *em* {IMAGE} {TERMINAL} {UNICODE}"
    decisions = folder / "decisions.csv"
    with decisions.open("w", newline="", encoding="utf-8") as stream:
        csv.writer(stream).writerows(rows)
    recorded = run("adjudicate", bundle, "--decisions", decisions, "--by", f"{SCRIPT} {LINK} | me")
    assert recorded.exit_code == 0, recorded.stderr
    return bundle


# --- the terminal ---------------------------------------------------------------------------


def test_visible_escapes_controls_and_keeps_unicode() -> None:
    assert visible(TERMINAL) == "\\x1b]0;pwned\\x07\\x1b[2J\\rover\\x08\\x9b31m\\u202etxt.exe"
    assert visible(UNICODE) == UNICODE
    assert visible("a\tb\nc\u2028d\u200fe") == "a\\tb\\nc\\u2028d\\u200fe"
    assert visible("a\tb\nc\x1b", keep_whitespace=True) == "a\tb\nc\\x1b"


@given(st.text())
def test_visible_leaves_no_control_character(text: str) -> None:
    shown = visible(text)
    assert not CONTROL.search(shown) and "\n" not in shown and "\r" not in shown
    if not CONTROL.search(text) and not any(c in text for c in "\t\n\r\u2028\u2029\u061c\u200e\u200f"):
        assert shown == text


def test_error_messages_show_control_characters_as_escapes() -> None:
    error = IrrAuditError(f"sheet {TERMINAL}.csv is bad.\n  Columns found: {UNICODE}", hint=f"fix {TERMINAL}")
    text = error.render()
    assert not CONTROL.search(text)
    assert text.splitlines() == [
        f"Error [irr-audit-error]: sheet {visible(TERMINAL)}.csv is bad.",
        f"  Columns found: {UNICODE}",
        f"  Hint: fix {visible(TERMINAL)}",
    ]
    assert "\n" not in IrrAuditError("a\nError [fake]: b").render()  # a line break of the data forges no line


def test_a_missing_sheet_named_with_escapes_is_reported_with_visible_escapes(tmp_path: Path) -> None:
    result = run("score", tmp_path / f"{TERMINAL}.csv", tmp_path / "b.csv", "--rule", RULE)
    assert result.exit_code == 2
    assert not CONTROL.search(result.stderr) and "\\x1b]0;pwned" in result.stderr


def test_summary_line_and_warnings_show_escapes(tmp_path: Path) -> None:
    first = write_sheet(tmp_path / "ann.csv", "ann", ["yes"] * 12)
    second = tmp_path / "bob.csv"
    second.write_text(
        "comment_id,code\n" + "".join(f"{n},yes\n" for n in range(5)) + f"{BIDI}\u200b,{TERMINAL_CODE}\n",
        encoding="utf-8",
    )
    result = run("score", first, second, "--rule", RULE)
    assert result.exit_code == 1  # the sheets share no id: nothing to score, and the problem names their ids
    assert "warning:" in result.stderr and "problem:" in result.stderr and not CONTROL.search(result.stderr)


def test_console_report_shows_escapes_and_unicode(hostile_bundle: Path) -> None:
    result = run("report", hostile_bundle, "--format", "text")
    assert result.exit_code == 0
    assert not CONTROL.search(result.stdout) and not CONTROL.search(result.stderr)
    assert "\\x1b]0;pwned" in result.stdout and "😀" in result.stdout


def test_json_keeps_every_value_and_prints_no_control_character(hostile_bundle: Path) -> None:
    result = run("report", hostile_bundle, "--format", "json")
    assert result.exit_code == 0 and not CONTROL.search(result.stdout)
    document = json.loads(result.stdout)
    assert {item["comment_id"] for item in document["disagreements"]} <= set(HOSTILE_IDS)
    assert BIDI in {item["comment_id"] for item in document["disagreements"]}


# --- Markdown -------------------------------------------------------------------------------


def github_html(markdown: str) -> str:
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


class Tree(HTMLParser):
    """Every element (tag, attributes, text inside it) of a rendered page."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.cells: list[list[str]] = []  # the text of every table cell, row by row
        self.items: list[str] = []  # the text of every list item
        self._open: list[list[str]] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))
        if tag == "tr":
            self.cells.append([])
        if tag in ("td", "th", "li"):
            self._open.append([])

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th"):
            self.cells[-1].append("".join(self._open.pop()))
        if tag == "li":
            self.items.append("".join(self._open.pop()))

    def handle_data(self, data: str) -> None:
        for part in self._open:
            part.append(data)


MARKUP_TAGS = {
    "a",
    "img",
    "script",
    "em",
    "strong",
    "del",
    "code",
    "h1",
    "h2",
    "h3",
    "ul",
    "ol",
    "li",
    "hr",
    "b",
    "blockquote",
    "pre",
    "span",
    "math-renderer",
    "input",
    "sup",
    "section",
}


def shown(text: str) -> str:
    """What a reader must see for ``text``: its words (spaces, tabs and line breaks fold into one
    space, as in any Markdown), every other control character or separator as an escape."""
    return visible(re.sub(r"[ \t\r\n]+", " ", text).strip(" "))


# Any text a sheet can hold (no surrogates: UTF-8 files cannot), e-mail addresses aside.
SHEET_TEXT = st.text(alphabet=st.characters(exclude_characters="@", exclude_categories=("Cs",)))


@given(SHEET_TEXT)
def test_md_text_in_a_table_cell_is_one_cell_of_plain_text(text: str) -> None:
    tree = Tree(github_html(f"| h | i |\n|---|---|\n| {md_text(text)} | end |\n"))
    assert tree.cells == [["h", "i"], [shown(text), "end"]]
    assert {tag for tag, _ in tree.elements} <= {"table", "thead", "tbody", "tr", "th", "td"}


@given(SHEET_TEXT)
def test_md_text_in_a_list_item_is_one_item_of_plain_text(text: str) -> None:
    tree = Tree(github_html(f"- {md_text(text)}\n- end\n"))
    assert tree.items == [shown(text), "end"]
    assert {tag for tag, _ in tree.elements} <= {"ul", "li"}


def test_an_email_address_is_the_only_thing_github_still_links() -> None:
    """GitHub links a bare e-mail address after parsing, whatever its escapes: the one link that stays
    is mailto: with the address as its text (documented in the README)."""
    tree = Tree(github_html(f"- {md_text('mail a@example.invalid or xmpp:b@example.invalid now')}\n"))
    links = [attributes["href"] for tag, attributes in tree.elements if tag == "a"]
    assert links == ["mailto:a@example.invalid", "xmpp:b@example.invalid"]
    assert tree.items == ["mail a@example.invalid or xmpp:b@example.invalid now"]


def test_markdown_report_of_a_hostile_adjudicated_bundle(hostile_bundle: Path) -> None:
    result = run("report", hostile_bundle, "--format", "md")
    assert result.exit_code == 0
    markdown = result.stdout
    assert not CONTROL.search(markdown)
    tree = Tree(github_html(markdown))
    tags = [tag for tag, _ in tree.elements]
    assert not {"a", "img", "script", "em", "strong", "del", "blockquote"} & set(tags)
    assert tags.count("code") == 4  # the rule's digest, the two sheets' digests and the bundle's, nothing else
    for table in re.split(r"\n\n", markdown):
        if table.startswith("| "):
            rows = Tree(github_html(table)).cells
            assert len({len(row) for row in rows}) == 1, table  # no cell split or lost
    adjudicated = [row for row in tree.cells if len(row) == 7 and row[5] != "decided at"]
    assert adjudicated and {row[4] for row in adjudicated} == {shown(f"{SCRIPT} {LINK} | me")}
    note = f"{LINK} {AUTOLINK} {SCRIPT} | pipe\nnew line *em* {IMAGE} {TERMINAL} {UNICODE}"
    assert {row[6] for row in adjudicated} == {shown(note)}
    assert {row[0] for row in adjudicated} <= {shown(comment_id) for comment_id in HOSTILE_IDS}


def test_markdown_of_values_from_an_edited_record_and_manifest_is_escaped() -> None:
    """decided_at, the bundle's creation time and the digests come from files a user can write."""
    from irr_audit.report.markdown import adjudication_lines

    report = {
        "coders": ["a", "b"],
        "bundle": {"name": "n", "created": SCRIPT, "tool_version": LINK, "recodes": None, "sample": None},
        "adjudication": {
            "title": "t",
            "statement": "s",
            "decided": 1,
            "disagreements": 1,
            "undecided": [],
            "decisions": [
                {
                    "comment_id": "1",
                    "codes": {"a": "yes", "b": "no"},
                    "final_code": "yes",
                    "decided_by": "x",
                    "decided_at": AUTOLINK,
                    "note": "",
                }
            ],
        },
    }
    tree = Tree(github_html("\n".join(adjudication_lines(report))))
    assert not {"a", "script"} & {tag for tag, _ in tree.elements}
    from irr_audit.report.markdown import md_digest

    assert md_digest("sha256:" + "ab" * 32).startswith("`") and md_digest("`x` <b>") == "\\`x\\` \\<b\\>"


# --- HTML -----------------------------------------------------------------------------------

HTML_TAGS = {
    "html",
    "head",
    "meta",
    "title",
    "style",
    "body",
    "header",
    "h1",
    "h2",
    "h3",
    "p",
    "main",
    "section",
    "dl",
    "dt",
    "dd",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "ul",
    "li",
    "svg",
    "rect",
    "text",
    "line",
    "circle",
    "figure",
    "figcaption",
    "span",
    "br",
    "form",
    "label",
    "input",
    "select",
    "option",
    "strong",
    "footer",
    "script",
    "div",
    "details",
    "summary",
    "code",
    "button",
}


def test_html_report_of_a_hostile_bundle_runs_only_its_own_script(hostile_bundle: Path) -> None:
    result = run("report", hostile_bundle, "--format", "html")
    assert result.exit_code == 0
    page = result.stdout
    tree = Tree(page)
    assert {tag for tag, _ in tree.elements} <= HTML_TAGS
    for _, attributes in tree.elements:
        assert not any(name.startswith("on") or name in ("href", "src", "action") for name in attributes)
    assert not CONTROL.search(page.replace("\r", " "))  # a carriage return is white space in HTML
    scripts = re.findall(r"<script>(.*?)</script>", page, re.S)
    assert len(scripts) == 1 and "alert" not in scripts[0]
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode("utf-8")).digest()).decode()
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page).group(1)
    directives = dict(directive.strip().split(" ", 1) for directive in policy.split(";"))
    assert directives["script-src"] == f"'sha256-{digest}'" and directives["default-src"] == "'none'"
    assert "\\x1b]0;pwned" in page and UNICODE in page
    assert SCRIPT.replace("<", "&lt;").replace(">", "&gt;") in page


# --- CSV ------------------------------------------------------------------------------------

FORMULA_RULE = """rule: formulas
version: 1
scale: nominal
codes: ["=SUM(1)", "@cmd", "'quoted", "+2", "plain"]
missing_codes: [unknown]
"""
FORMULA_CODERS = ["=a", "'=a", "@b", "-c"]
PLAIN_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def formula_sheets(folder: Path) -> list[Path]:
    """Four coders whose names and codes start like formulas; ``=a`` and ``'=a`` differ only by the quote."""
    folder.mkdir(parents=True, exist_ok=True)
    codes = ["=SUM(1)", "@cmd", "'quoted", "+2", "plain"]
    paths = []
    for offset, coder in enumerate(FORMULA_CODERS):
        path = folder / f"coder{offset}.csv"
        with path.open("w", newline="", encoding="utf-8") as stream:
            writer = csv.writer(stream)
            writer.writerow(["comment_id", "code", "coder", "note"])
            for unit in range(40):
                writer.writerow(
                    [
                        f"=id{unit}" if unit % 7 == 0 else f"u{unit}",
                        codes[(unit * (offset + 1)) % 5] if unit % 9 else "",
                        coder,
                        '=HYPERLINK("http://x")',
                    ]
                )
        paths.append(path)
    return paths


def assert_no_formula(path: Path) -> list[list[str]]:
    """Every cell of a CSV irr-audit wrote: nothing a spreadsheet would run."""
    records = list(csv.reader(path.open(newline="", encoding="utf-8-sig")))
    for record in records:
        for cell in record:
            if cell[:1] in ("=", "+", "-", "@", "\t", "\r"):
                assert PLAIN_NUMBER.fullmatch(cell), (path.name, cell)
    return records


def test_every_csv_of_join_is_neutralised_and_counts_read_back_exactly(tmp_path: Path) -> None:
    (tmp_path / "rule.yaml").write_text(FORMULA_RULE)
    sheets = formula_sheets(tmp_path / "sheets")
    out = tmp_path / "out"
    assert run("join", *sheets, "--rule", tmp_path / "rule.yaml", "--out", out, "-q").exit_code == 0
    for name in ("joined.csv", "missingness_log.csv", "counts.csv"):
        records = assert_no_formula(out / name)
        assert len(set(records[0])) == len(records[0]), name
    assert list(csv.reader((out / "joined.csv").open(newline="")))[0] == [
        "comment_id",
        "'=a",
        "''=a",
        "'@b",
        "'-c",
        "fully_coded",
    ]
    whole = json.loads(run("score", out, "--format", "json", "-q").stdout)
    counted = json.loads(
        run("score", "--counts", out / "counts.csv", "--rule", tmp_path / "rule.yaml", "--format", "json", "-q").stdout
    )
    assert counted["coders"] == whole["coders"] == FORMULA_CODERS
    for key in ("table", "metrics", "available_case", "pairs", "categories"):
        assert counted[key] == whole[key], key


@pytest.mark.parametrize(
    ("coder", "code"),
    [
        ("comment_id", "usage-reserved-coder"),
        ("fully_coded", "usage-reserved-coder"),
        ("units", "output-column-collision"),
    ],
)
def test_a_coder_named_like_a_column_is_refused_before_anything_is_written(
    tmp_path: Path, coder: str, code: str
) -> None:
    first = tmp_path / "a.csv"
    first.write_text(f"comment_id,code,coder\n1,yes,{coder}\n2,no,{coder}\n")
    second = tmp_path / "b.csv"
    second.write_text("comment_id,code\n1,yes\n2,yes\n")
    result = run("join", first, second, "--rule", RULE, "--out", tmp_path / "out")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error [{code}]: ") and "a.csv" in result.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_adjudication_template_and_decisions_round_trip_formula_text(tmp_path: Path) -> None:
    from irr_audit.io.outputs import spreadsheet_original, spreadsheet_safe

    for text in ["=a", "'=a", "''=a", "'ok", "-1", "-x", "@", "'", "", "plain", "\t=x", "+1e5"]:
        assert spreadsheet_original(spreadsheet_safe(text)) == text
    assert len({spreadsheet_safe(text) for text in ["=a", "'=a", "''=a"]}) == 3


# --- counts files -------------------------------------------------------------------------------

COUNTS_RULE = """rule: level
version: 1
scale: nominal
codes: ["0", "1"]
"""


@pytest.mark.parametrize(
    "units",
    [
        "inf",
        "nan",
        "1e30",
        "-1",
        "2.5",
        "9007199254740992",
        "",
        "0x10",
        "1_000",
        "\u0661\u0662",
        "99999999999999999999999",
    ],
)
def test_counts_with_absurd_units_are_refused_naming_file_row_and_value(tmp_path: Path, units: str) -> None:
    (tmp_path / "rule.yaml").write_text(COUNTS_RULE)
    (tmp_path / "counts.csv").write_text(f"a,b,units\n0,0,3\n1,1,{units}\n", encoding="utf-8")
    result = run("score", "--counts", tmp_path / "counts.csv", "--rule", tmp_path / "rule.yaml")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error [counts-units]: counts file counts.csv row 3 has units {units!r}")


@pytest.mark.parametrize(("units", "total"), [("12", 15), (" 0012 ", 15), ("12.0", 15), ("9007199254740991", None)])
def test_counts_accept_whole_numbers_below_2_to_the_53(tmp_path: Path, units: str, total: int | None) -> None:
    (tmp_path / "rule.yaml").write_text(COUNTS_RULE)
    (tmp_path / "counts.csv").write_text(f"a,b,units\n0,0,3\n1,1,{units}\n", encoding="utf-8")
    result = run("score", "--counts", tmp_path / "counts.csv", "--rule", tmp_path / "rule.yaml", "--format", "json")
    if total is None:  # a single pattern count of 2^53 - 1 is whole, but more units than are scored
        assert result.exit_code == 2 and result.stderr.startswith("Error [counts-too-many-units]: ")
        return
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["units"]["total"] == total


def test_counts_that_add_up_past_the_maximum_are_refused(tmp_path: Path) -> None:
    (tmp_path / "rule.yaml").write_text(COUNTS_RULE)
    rows = "".join(f"{a},{b},2000000000\n" for a in "01" for b in "01")
    (tmp_path / "counts.csv").write_text("a,b,units\n" + rows)
    result = run("score", "--counts", tmp_path / "counts.csv", "--rule", tmp_path / "rule.yaml")
    assert result.exit_code == 2
    assert "adds up to 8,000,000,000 units; irr-audit scores at most 3,000,000,000" in result.stderr


# --- the sheets `sample` writes ---------------------------------------------------------------------


def sample_of(tmp_path: Path, ids: list[str], *extra: object):
    items = [{"commentId": comment_id, "body": f'=HYPERLINK("x") {comment_id}', "status": "ok"} for comment_id in ids]
    dataset = tmp_path / "dataset.json"
    dataset.write_text(json.dumps(items), encoding="utf-8")
    out = tmp_path / "sample"
    return run("sample", dataset, "--rule", RULE, "--coders", "alice,bob", "--out", out, *extra), out


def test_an_id_xlsx_would_alter_is_refused_for_xlsx_sheets(tmp_path: Path) -> None:
    result, _ = sample_of(tmp_path, ["_x001B_", "plain"], "--sheet-format", "xlsx")
    assert result.exit_code == 2
    assert result.stderr.startswith("Error [usage-xlsx-id]: comment id '_x001B_' holds the text '_x001B_' (an XLSX ")
    assert "Hint: pass --sheet-format csv" in result.stderr


@pytest.mark.parametrize("sheet_format", ["csv", "xlsx"])
def test_ids_with_control_characters_are_logged_not_given_to_coders(tmp_path: Path, sheet_format: str) -> None:
    from irr_audit.io.sheets import ColumnChoice, read_sheet

    damaged = ["a\x1bb", "cr\rhere", "tab\there", "new\nline", "nul\x00", "c1\x9b"]
    result, out = sample_of(tmp_path, [*damaged, "\u202eabc", "plain"], "--sheet-format", sheet_format)
    assert result.exit_code == 0, result.stderr
    sheet = read_sheet(out / "sheets" / f"alice.{sheet_format}", ColumnChoice())
    assert sorted(sheet.comment_ids.to_pylist()) == sorted(["\u202eabc", "plain"])
    with (out / "missingness_log.csv").open(newline="", encoding="utf-8") as stream:
        logged = [row for row in csv.DictReader(stream) if row["reason"] == "missing_id"]
    assert sorted(row["raw_value"] for row in logged) == sorted(damaged)
    assert all(row["detail"].startswith("commentId holds the control character U+") for row in logged)


def test_xlsx_sheets_store_formula_text_as_text(tmp_path: Path) -> None:
    from openpyxl import load_workbook

    result, out = sample_of(tmp_path, ["=cmd()", "@x", "+1+1", "plain"], "--sheet-format", "xlsx")
    assert result.exit_code == 0, result.stderr
    cells = [cell for row in load_workbook(out / "sheets" / "alice.xlsx").worksheets[0].iter_rows() for cell in row]
    assert not [cell.coordinate for cell in cells if cell.data_type == "f"]
    assert {"=cmd()", "@x", "+1+1"} <= {cell.value for cell in cells}
