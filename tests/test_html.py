"""The HTML report: one self-contained page, a view of the same report model, safe with hostile text."""

from __future__ import annotations

import copy
import html
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

from irr_audit.cli import app
from irr_audit.io.sheets import ColumnChoice, read_sheet
from irr_audit.join.join import join_sheets
from irr_audit.report.headline import ALPHA_LIKE, KAPPA_LIKE
from irr_audit.report.html import render_html
from irr_audit.report.model import build_report
from irr_audit.rules.load import load_rule

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_RULE = ROOT / "rules" / "explicit_current_failure" / "v1.yaml"
EXAMPLE_SHEETS = [ROOT / "examples" / "sheets" / "alice.csv", ROOT / "examples" / "sheets" / "bob.csv"]
CASES = ROOT / "tests" / "examples"
HOSTILE = '<script>alert("x")</script></td></table>\' & "quoted"'


def report_of(sheets: list[Path], rule: Path, **options) -> dict:
    from irr_audit.report.model import AuditOptions

    joined = join_sheets([read_sheet(path, ColumnChoice()) for path in sheets], load_rule(rule))
    return build_report(joined, AuditOptions(**options)).to_dict()


def case(name: str) -> dict:
    folder = CASES / name
    return report_of(sorted((folder / "sheets").glob("*.csv")), folder / "rule.yaml")


@pytest.fixture(scope="module")
def example() -> dict:
    return report_of(EXAMPLE_SHEETS, EXAMPLE_RULE)


@pytest.fixture(scope="module")
def example_html(example: dict) -> str:
    return render_html(example)


class Page(HTMLParser):
    """The parts of a page the tests read: element ids, heat-map cells, table cell text, every tag."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.heatmaps: dict[str, list[list[str]]] = {}
        self.tables: dict[str, list[list[str]]] = {}
        self._heatmap: str | None = None
        self._table: str | None = None
        self._cell: list[str] | None = None
        self._rows: list[list[str]] | None = None
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        self.tags.append((tag, attributes))
        if attributes.get("id"):
            self.ids.append(attributes["id"] or "")
        if tag == "figure" and attributes.get("data-heatmap"):
            self._heatmap = attributes["data-heatmap"]
            self.heatmaps.setdefault(self._heatmap, [])
        if tag == "table" and attributes.get("id"):
            self._table = attributes["id"]
            self.tables[self._table] = []
        if tag == "tr":
            self._rows = []
        if tag in ("td", "th") and self._rows is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._rows is not None:
            self._rows.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._rows is not None:
            if self._heatmap is not None:
                self.heatmaps[self._heatmap].append(self._rows)
            if self._table is not None:
                self.tables[self._table].append(self._rows)
            self._rows = None
        elif tag == "figure":
            self._heatmap = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def test_sections_present_in_reading_order(example_html: str) -> None:
    ids = Page(example_html).ids
    expected = [
        "headline",
        "coefficients",
        "table",
        "methods",
        "details",
        "units",
        "missingness",
        "raw",
        "per-category",
        "chance-corrected",
        "uncertainty",
        "confusions",
        "disagreements",
        "provenance",
    ]
    assert [section for section in ids if section in expected] == expected


def test_example_numbers_appear(example_html: str) -> None:
    assert "<p>n = 20 fully coded units.</p>" in example_html
    page = Page(example_html)
    assert page.tables["flow-table"][-1][:2] == ["fully coded", "20"]
    assert ["observed agreement (po)", "0.8500", "0.8500"] in page.tables["raw-table"]
    assert page.tables["chance-corrected-table"][1][:2] == ["Cohen's kappa", "0.7000"]
    assert '<span class="point" style="left:70.0%"></span>' in example_html  # kappa's dot at 0.70 on [0, 1]


def test_agreement_heatmap_carries_every_count_and_the_marginals(example_html: str) -> None:
    rows = Page(example_html).heatmaps["table"]
    assert rows == [
        ["alice \\ bob", "yes", "no", "total"],
        ["yes", "8", "2", "10"],
        ["no", "1", "9", "10"],
        ["total", "9", "11", "20"],
    ]
    cell = r'<td class="(?:cell|diagonal)[^"]*" style="background:#[0-9a-f]{6};color:#[0-9a-f]{6}"[^>]*>(\d+)</td>'
    coloured = re.findall(cell, example_html)
    assert coloured == ["8", "2", "1", "9"]


def test_provenance_names_rule_digest_sheets_and_tool(example: dict, example_html: str) -> None:
    assert example["rule"]["digest"] in example_html
    assert "irr-audit 0.1.0" in example_html or f"irr-audit {example['tool']['version']}" in example_html
    for sheet in example["sheets"]:
        assert sheet["sha256"] in example_html and sheet["name"] in example_html


def test_missingness_by_reason_and_by_coder(example_html: str) -> None:
    page = Page(example_html)
    header, *rows = page.tables["missingness-table"]
    counts = {row[0]: dict(zip(header[1:], row[1:])) for row in rows}
    assert counts == {
        "alice": {"blank": "0", "unknown": "1", "total": "1"},
        "bob": {"blank": "1", "unknown": "0", "total": "1"},
    }
    assert ["units joined", "22"] == page.tables["flow-table"][1][:2]


def test_disagreements_listed_with_their_text_and_a_filter_that_degrades(example_html: str) -> None:
    rows = Page(example_html).tables["disagreement-table"]
    assert rows[0] == ["comment_id", "alice", "bob", "text"]
    assert ["kq41s6t", "yes", "no", "Doesn't work for me."] in rows
    assert '<form id="disagreement-filter" hidden>' in example_html  # shown only when the script runs


def test_bands_are_labelled_as_conventions(example: dict, example_html: str) -> None:
    assert "A convention, not a test." in example_html
    for band in ("slight", "fair", "moderate", "substantial", "almost perfect", "0.667", "0.800"):
        assert band in example_html
    bands = [html.unescape(band) for band in re.findall(r'<span class="chart-band">([^<]*)</span>', example_html)]
    expected = [row["band"]["label"] if row["band"] else "" for row in example["coefficients"]]
    assert bands == ["band", *expected] and expected[0] == "substantial"  # the headline, Cohen's kappa 0.70
    banded = [row for row in example["coefficients"] if row["metric"] in KAPPA_LIKE | ALPHA_LIKE]
    assert len(banded) >= 6 and all(row["band"] for row in banded)


def test_undefined_coefficient_is_drawn_as_undefined_never_a_number() -> None:
    report = case("C_undefined_kappa")
    html = render_html(report)
    reason = report["metrics"]["cohen_kappa"]["reason"]
    assert f'<div class="plot undefined"><span class="undefined">undefined: {reason}</span></div>' in html
    kappa_row = next(row for row in Page(html).tables["chance-corrected-table"] if row[0] == "Cohen's kappa")
    assert kappa_row[1] == f"undefined: {reason}"


def test_three_coders_get_the_pairwise_kappa_matrix_and_the_coincidence_matrix() -> None:
    report = case("E_three_raters")
    html = render_html(report)
    page = Page(html)
    assert set(page.heatmaps) == {"table", "pairwise", "pair"}
    pairwise = page.heatmaps["pairwise"]
    assert pairwise[0] == ["", "r1", "r2", "r3"]
    assert [row[0] for row in pairwise[1:]] == ["r1", "r2", "r3"]
    assert pairwise[1][1] == "-" and re.fullmatch(r"-?\d\.\d{4}", pairwise[1][2])
    assert "Coincidence matrix" in html
    assert len(re.findall(r'data-heatmap="pair"', html)) == 3  # r1-r2, r1-r3, r2-r3
    assert "Fleiss&#39; kappa" in html


def test_bootstrap_and_group_comparison_draw_their_intervals(tmp_path: Path) -> None:
    folder = CASES / "E_three_raters"
    from irr_audit.report.model import GroupSpec

    report = report_of(
        sorted((folder / "sheets").glob("*.csv")),
        folder / "rule.yaml",
        n_boot=50,
        seed=1,
        group=GroupSpec("pair", ("r1", "r2"), "r3"),
    )
    html = render_html(report)
    assert 'class="whisker bootstrap"' in html and "bootstrap interval" in html
    assert 'id="group-bars"' in html and "Consensus of pair vs r3" in html


def test_byte_stable(example: dict, example_html: str, tmp_path: Path) -> None:
    assert render_html(copy.deepcopy(example)) == example_html
    outputs = []
    for name in ("one.html", "two.html"):
        result = CliRunner().invoke(
            app,
            [
                "report",
                *map(str, EXAMPLE_SHEETS),
                "--rule",
                str(EXAMPLE_RULE),
                "--format",
                "html",
                "--output",
                str(tmp_path / name),
                "-q",
            ],
            catch_exceptions=False,
        )
        assert result.exit_code == 0, result.output
        outputs.append((tmp_path / name).read_bytes())
    assert outputs[0] == outputs[1] == example_html.encode()


def test_cli_writes_html_to_stdout_without_output(example_html: str) -> None:
    result = CliRunner().invoke(
        app,
        ["report", *map(str, EXAMPLE_SHEETS), "--rule", str(EXAMPLE_RULE), "--format", "html", "-q"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0
    assert result.stdout == example_html


def test_self_contained_no_network(example_html: str) -> None:
    assert not re.search(r"https?://", example_html)
    for tag, attributes in Page(example_html).tags:
        assert "src" not in attributes, tag
        assert not (attributes.get("href") or "").startswith(("//", "http")), tag
        assert tag not in ("link", "img", "iframe", "object", "embed"), tag
    assert "url(" not in example_html and "@import" not in example_html
    assert "default-src 'none'" in example_html  # the page may not load anything, even if asked
    assert example_html.count("<script>") == 1 and example_html.count("<style>") == 1


def hostile_report(example: dict) -> dict:
    report = copy.deepcopy(example)
    report["rule"]["question"] = HOSTILE
    report["sheets"][0]["name"] = HOSTILE + ".csv"
    report["coders"] = [HOSTILE, "bob"]
    report["warnings"] = [HOSTILE]
    for item in report["disagreements"]:
        item["codes"] = {HOSTILE: item["codes"]["alice"], "bob": HOSTILE}
        item["text"] = HOSTILE
    report["missingness"]["by_coder"] = {HOSTILE: {"unknown": 1}, "bob": {"blank": 1}}
    report["categories"] = [HOSTILE, "no"]
    return report


def test_hostile_text_is_escaped_and_shows_literally(example: dict) -> None:
    html = render_html(hostile_report(example))
    assert html.count("<script") == 1  # only the page's own filter script
    assert "</td></table>'" not in html and 'alert("x")' not in html
    escaped = "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&lt;/td&gt;&lt;/table&gt;&#39; &amp; &#34;quoted&#34;"
    assert escaped in html
    page = Page(html)
    rows = page.tables["disagreement-table"]
    assert rows[0] == ["comment_id", HOSTILE, "bob", "text"]
    assert all(row[-1] == HOSTILE and row[2] == HOSTILE for row in rows[1:])
    assert page.tables["sheets-table"][1][0] == HOSTILE + ".csv"
    assert page.heatmaps["table"][1][0] == HOSTILE
    assert page.tables["missingness-table"][1][0] == HOSTILE


def test_hostile_comment_body_from_a_sheet_end_to_end(tmp_path: Path) -> None:
    body = HOSTILE.replace('"', '""')
    (tmp_path / "ann.csv").write_text(f'comment_id,body,code\nc1,"{body}",yes\nc2,fine,no\nc3,ok,yes\n')
    (tmp_path / "ben.csv").write_text(f'comment_id,body,code\nc1,"{body}",no\nc2,fine,no\nc3,ok,yes\n')
    out = tmp_path / "audit.html"
    result = CliRunner().invoke(
        app,
        [
            "report",
            str(tmp_path / "ann.csv"),
            str(tmp_path / "ben.csv"),
            "--rule",
            str(EXAMPLE_RULE),
            "--format",
            "html",
            "-o",
            str(out),
            "-q",
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0
    html = out.read_text()
    assert html.count("<script") == 1
    assert Page(html).tables["disagreement-table"][1] == ["c1", "yes", "no", HOSTILE]


def test_adjudication_comes_after_the_independent_statistics_and_apart(example: dict) -> None:
    report = copy.deepcopy(example)
    report["bundle"] = {
        "name": "pilot",
        "created": "2024-05-01T10:00:00Z",
        "tool_version": "0.1.0",
        "recodes": None,
        "sample": {"files": ["sample/sample.json"], "ids": {"count": 22}},
    }
    report["adjudication"] = {
        "title": "Adjudicated labels (after the independent coding; not part of the agreement statistics)",
        "statement": "These final codes were decided after the coders disagreed; they do not change any "
        "coefficient above.",
        "decided": 1,
        "disagreements": 3,
        "undecided": ["kq40r2s", "kq41s6t"],
        "decisions": [
            {
                "comment_id": "kq3z1q7",
                "codes": {"alice": "yes", "bob": "no"},
                "final_code": "yes",
                "decided_by": "carol",
                "decided_at": "2024-05-02T09:00:00Z",
                "note": HOSTILE,
            }
        ],
    }
    html = render_html(report)
    page = Page(html)
    assert page.ids.index("adjudication") > page.ids.index("disagreements") > page.ids.index("uncertainty")
    assert page.tables["adjudication-table"][1][:4] == ["kq3z1q7", "yes", "no", "yes"]
    assert page.tables["adjudication-table"][1][-1] == HOSTILE
    assert "Not yet decided: kq40r2s, kq41s6t." in html
    assert page.tables["flow-table"][1][:2] == ["sampled", "22"]  # the bundle's frozen sample opens the flow


def test_flow_starts_at_collection_when_the_report_carries_sample_counts(example: dict) -> None:
    report = copy.deepcopy(example)
    report["sample"] = {
        "counts": {"items": 30, "usable_units": 25, "sampled_units": 22, "log_rows": {"deleted": 3, "duplicate": 2}}
    }
    rows = Page(render_html(report)).tables["flow-table"]
    assert [row[:2] for row in rows[1:]] == [
        ["collected", "30"],
        ["sampled", "22"],
        ["units joined", "22"],
        ["missingness log", "2"],
        ["fully coded", "20"],
    ]
    assert "3 excluded: deleted" in rows[1][3] and "2 excluded: duplicate" in rows[1][3]


def test_print_stylesheet_targets_a4(example_html: str) -> None:
    assert "@page { size: A4;" in example_html
    assert "@media print" in example_html and "break-inside: avoid" in example_html
    assert "position: sticky" not in example_html and "position: fixed" not in example_html


def test_long_disagreement_lists_are_cut_in_html_and_markdown_not_json(tmp_path):
    import json

    from typer.testing import CliRunner

    from irr_audit.cli import app
    from irr_audit.report.format import LISTED_DISAGREEMENTS

    total = LISTED_DISAGREEMENTS + 5
    alice, bob = tmp_path / "alice.csv", tmp_path / "bob.csv"
    alice.write_text("comment_id,code\n" + "".join(f"u{i},yes\n" for i in range(total)))
    bob.write_text("comment_id,code\n" + "".join(f"u{i},no\n" for i in range(total)))
    rule = str(Path(__file__).resolve().parents[1] / "rules" / "explicit_current_failure" / "v1.yaml")
    runner = CliRunner()
    outputs = {
        fmt: runner.invoke(
            app, ["report", str(alice), str(bob), "--rule", rule, "--format", fmt, "-q"], catch_exceptions=False
        ).stdout
        for fmt in ("json", "md", "html")
    }
    assert len(json.loads(outputs["json"])["disagreements"]) == total
    assert f"The first {LISTED_DISAGREEMENTS} are listed" in outputs["md"]
    assert len(re.findall(r"^\| u\d+ \|", outputs["md"], re.MULTILINE)) == LISTED_DISAGREEMENTS
    assert f"lists all {total}" in outputs["html"]
    assert len(re.findall(r'<th scope="row" class="id">u\d+<', outputs["html"])) == LISTED_DISAGREEMENTS


def test_disagreement_rows_are_drawn_as_the_template_drew_them() -> None:
    """The rows of the disagreement table are made in Python (irr_audit.report.html.disagreement_rows_html):
    every value shown (control characters and bidi overrides as escapes) and escaped exactly as the
    template printed it, with the splits of three coders and every kind of context. The expected
    bytes are the template's own, from before the rows moved out of it."""
    report = case("E_three_raters")
    second = report["disagreements"][1]
    second.update(
        text="a & b \"q\" 's'", thread_title="line\nbreak\r\n", parent_text="bidi \u202e evil", link="ctl \x07\x1b"
    )
    page = render_html(report)
    start = page.index("<tbody>", page.index('id="disagreement-table"'))
    chip = (
        '<td class="code" data-coder="{0}" data-code="{1}" data-label="{0}">'
        '<span class="code-chip c{2}">{1}</span></td>'
    )
    expected = (
        "<tbody>\n"
        '      <tr><th scope="row" class="id">ticket-2</th>'
        + chip.format("r1", "1", 0)
        + chip.format("r2", "1", 0)
        + chip.format("r3", "0", 1)
        + '<td class="split"><span>2 1</span> - <span>1 0</span></td><td class="body"></td></tr>\n'
        '      <tr><th scope="row" class="id">ticket-4</th>'
        + chip.format("r1", "1", 0)
        + chip.format("r2", "0", 1)
        + chip.format("r3", "0", 1)
        + '<td class="split"><span>2 0</span> - <span>1 1</span></td><td class="body">'
        '<span class="note">in line\nbreak\r\n</span><br>'
        '<span class="note">replying to: bidi \\u202e evil</span><br>'
        "a &amp; b &#34;q&#34; &#39;s&#39;<br>"
        '<span class="note">ctl \\x07\\x1b</span></td></tr>\n'
        "    </tbody>"
    )
    assert page[start : start + len(expected)] == expected
