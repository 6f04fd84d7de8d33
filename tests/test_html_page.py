"""The HTML page leads with the answer: its order, the headline block, the drawn coefficient table,
heat maps shaded by row share that filter the disagreement list, and that list (the split for three
or more coders, codes as chips, no text column when no unit has text). Read from the page's markup;
tests/test_browser.py reads the same pages' geometry in Chromium."""

from __future__ import annotations

import html
import re
from pathlib import Path

from irr_audit.report.html import (
    ROW_SHARE_LEGEND,
    SEQUENTIAL,
    count_heatmap,
    disagreement_rows,
    ramp_colour,
    render_html,
)
from irr_audit.report.sections import Section
from tests.test_html import EXAMPLE_RULE, Page, case, report_of

ROOT = Path(__file__).resolve().parents[1]


def sheets(folder: Path, codes: dict[str, list[str]], text: bool = False) -> list[Path]:
    paths = []
    for coder, column in codes.items():
        lines = ["comment_id,body,code" if text else "comment_id,code"]
        lines += [
            f"u{unit},words of unit {unit},{code}" if text else f"u{unit},{code}" for unit, code in enumerate(column)
        ]
        path = folder / f"{coder}.csv"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


def paradox_report(folder: Path) -> dict:
    """Two coders, 'no' on 46 of 50 units: raw agreement 0.92, kappa low (the kappa paradox)."""
    first = ["no"] * 46 + ["yes", "no", "yes", "no"]
    second = ["no"] * 46 + ["no", "yes", "yes", "no"]
    first[0], second[1] = "yes", "yes"
    return report_of(sheets(folder, {"ann": first, "ben": second}), EXAMPLE_RULE)


def section_ids(page: str) -> list[str]:
    return re.findall(r'<section id="([^"]+)"', page)


def test_the_answer_comes_first_details_are_folded_provenance_last(tmp_path: Path) -> None:
    page = render_html(
        report_of(sheets(tmp_path, {"a": ["yes", "no"] * 10, "b": ["yes", "no"] * 9 + ["no", "no"]}), EXAMPLE_RULE)
    )
    ids = section_ids(page)
    assert ids[:3] == ["headline", "coefficients", "table"] and ids[-1] == "provenance"
    assert ids.index("details") < ids.index("disagreements") < ids.index("provenance")
    folded = re.findall(r'<details id="([^"]+)">', page)
    assert {"units", "raw", "chance-corrected", "uncertainty", "glossary"} <= set(folded)
    assert page.index("Rule digest") > page.index('id="disagreements"')  # hashes at the end, not first


def test_the_headline_block_has_the_interval_units_raw_agreement_and_band(tmp_path: Path) -> None:
    report = paradox_report(tmp_path)
    page = render_html(report)
    block = page[page.index('<section id="headline"') : page.index("</section>", page.index('<section id="headline"'))]
    headline = report["headline"]
    low, high = headline["interval"]["low"], headline["interval"]["high"]
    assert f'<strong class="headline-value">{headline["value"]:.4f}</strong>' in block
    assert f"95% CI [{low:.4f}, {high:.4f}]" in block
    assert f"{headline['units']['fully_coded']} fully coded of {headline['units']['total']}" in block
    assert "of codes agree (no allowance for chance)" in block
    assert "(a convention, not a test)" in html.unescape(block)
    assert html.unescape(f'<p class="paradox-warning">{headline["warning"]}</p>') in html.unescape(block)


def test_the_paradox_explained_leads_when_it_applies_and_is_folded_when_not(tmp_path: Path) -> None:
    applies = render_html(paradox_report(tmp_path))
    assert '<section id="paradox" class="keep">' in applies
    assert section_ids(applies).index("paradox") < section_ids(applies).index("details")
    calm = render_html(case("A_fictional_audit"))
    assert '<details id="paradox">' in calm and '<section id="paradox"' not in calm


def test_an_undefined_headline_is_no_number_and_has_no_interval() -> None:
    report = case("C_undefined_kappa")
    page = render_html(report)
    reason = report["metrics"]["cohen_kappa"]["reason"]
    assert f'<strong class="headline-value">undefined: {html.escape(reason)}</strong>' in page
    assert '<span class="headline-interval">' not in page
    row = re.search(r'<div class="chart-row headline-row">.*?</div>\n\s*</div>', page, re.S)
    assert row and "undefined" in row.group(0) and 'class="point"' not in row.group(0)


def test_the_coefficient_table_draws_each_row_with_its_interval_and_band() -> None:
    report = case("E_three_raters")
    page = render_html(report)
    values = re.findall(r'<span class="value">([^<]+)</span>(?: <span class="interval">([^<]+)</span>)?', page)
    rows = [row for row in report["coefficients"] if row["defined"]]
    assert [value for value, _ in values[: len(rows)]] == [f"{row['value']:.4f}" for row in rows]
    for (_, interval), row in zip(values, rows):
        if row["interval"]:
            star = "*" if row["interval"]["clipped"] else ""
            assert interval == f"[{row['interval']['low']:.4f}, {row['interval']['high']:.4f}]{star}"
    assert page.count('<span class="recommended">recommended</span>') == 1


def test_heat_maps_are_shaded_by_row_share_with_the_count_written() -> None:
    """A rare code agreed on 9 times in 10 is as dark as a common one agreed on 90 times in 100."""
    section = Section(
        "table",
        "Agreement table",
        ("", "rare", "common", "total"),
        (("rare", "9", "1", "10"), ("common", "10", "90", "100"), ("total", "19", "91", "110")),
        matrix=((9.0, 1.0), (10.0, 90.0)),
    )
    heat = count_heatmap(section, "a \\ b", ("a", "b"))
    (_, rare), (_, common), _ = heat.rows
    assert rare[0].background == common[1].background == ramp_colour(SEQUENTIAL, 0.9)
    assert rare[1].background == common[0].background == ramp_colour(SEQUENTIAL, 0.1)
    assert [cell.text for cell in rare] == ["9", "1", "10"] and rare[2].kind == "margin"
    assert "row share" in heat.legend and heat.legend == ROW_SHARE_LEGEND
    # the off-diagonal cells filter the list: coder a said 'rare' where coder b said 'common'
    assert (rare[1].row_coder, rare[1].row_code, rare[1].column_coder, rare[1].column_code) == (
        "a",
        "rare",
        "b",
        "common",
    )
    assert not rare[0].filters  # agreement: no disagreement to list


def test_a_coincidence_matrix_says_where_its_fractions_come_from() -> None:
    page = render_html(case("E_three_raters"))
    report = case("E_three_raters")
    units = report["units"]["fully_coded"]
    assert "each fully coded unit has 3 codes and so 6 ordered pairs of codes; each pair counts 1/2" in page
    assert f"sums to the {3 * units} codes ({units} units x 3 coders)" in page
    assert re.search(
        r'<td class="cell filters"[^>]*data-row-code="[^"]+" data-column-code="[^"]+" data-row-coder=""', page
    )


def test_pairwise_kappa_cells_filter_by_their_two_coders() -> None:
    page = render_html(case("E_three_raters"))
    figure = page[page.index('data-heatmap="pairwise"') :]
    figure = figure[: figure.index("</figure>")]
    assert 'data-row-coder="r1" data-column-coder="r2"' in figure
    assert figure.count("filters") == 6  # every cell off the diagonal; the diagonal '-' is not a link


def test_three_or_more_coders_show_the_split_with_codes_as_chips(tmp_path: Path) -> None:
    codes = {"a": ["yes", "yes", "no", "no"], "b": ["yes", "no", "no", "no"], "c": ["no", "no", "yes", "no"]}
    report = report_of(sheets(tmp_path, codes), EXAMPLE_RULE)
    assert [row.split for row in disagreement_rows(report)] == ["2 yes - 1 no", "2 no - 1 yes", "2 no - 1 yes"]
    page = render_html(report)
    table = Page(page).tables["disagreement-table"]
    assert table[0] == ["comment_id", "a", "b", "c", "split"]  # no text column: no unit has text
    assert table[1] == ["u0", "yes", "yes", "no", "2 yes - 1 no"]
    assert page.count("No text: neither the sheets nor a sample's ledger carry") == 1
    assert "(no text in the sheets)" not in page
    assert (
        '<td class="code" data-coder="a" data-code="yes" data-label="a"><span class="code-chip c0">yes</span></td>'
        in page
    )
    assert '<option value="2 no - 1 yes">2 no - 1 yes</option>' in page


def test_two_coders_have_no_split_column_and_show_text_when_there_is_some(tmp_path: Path) -> None:
    report = report_of(sheets(tmp_path, {"a": ["yes", "no", "no"], "b": ["no", "no", "yes"]}, text=True), EXAMPLE_RULE)
    table = Page(render_html(report)).tables["disagreement-table"]
    assert table[0] == ["comment_id", "a", "b", "text"]
    assert table[1:] == [["u0", "yes", "no", "words of unit 0"], ["u2", "no", "yes", "words of unit 2"]]


def test_digests_are_kept_whole_in_a_box_two_lines_wide() -> None:
    report = case("A_fictional_audit")
    page = render_html(report)
    assert f'<code class="digest prefixed">{report["rule"]["digest"]}</code>' in page
    for sheet in report["sheets"]:
        assert f'<code class="digest">{sheet["sha256"]}</code>' in page
    css = (ROOT / "irr_audit/report/templates/report.css").read_text(encoding="utf-8")
    assert ".digest { display: inline-block; max-width: 32.5ch;" in css  # 64 hex digits: two lines of 32
