"""The HTML report in a real browser: headless Chromium, driven by selenium through Debian's
chromium-driver (`apt-get install chromium chromium-driver`; `.ci/run` installs both when it can).

The layout is read from the page's own geometry (bounding boxes and computed styles, by JavaScript
in the page), at 1280 and 390 px wide and under print media at the width of an A4 page, for 2, 3
and 5 coders and 2, 4 and 6 codes (the sheets are made here, seeded): nothing but a scrolling table
is wider than the screen, no two blocks overlap, text stays readable. Printed to PDF, no page ends on
a heading and a sha256 is never cut into pieces. The screenshots and PDFs are kept in
tests/artifacts/ (CI's artefacts). Skipped, saying why, when Chromium, its driver or selenium is
missing.
"""

from __future__ import annotations

import base64
import copy
import io
import random
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from irr_audit.io.sheets import ColumnChoice, read_sheet
from irr_audit.join.join import join_sheets
from irr_audit.report.format import format_interval, format_metric
from irr_audit.report.html import render_html
from irr_audit.report.model import AuditOptions, build_report
from irr_audit.rules.load import load_rule

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install -e '.[test]')")
pypdf = pytest.importorskip("pypdf", reason="pypdf is not installed (pip install -e '.[test]')")

from selenium.common.exceptions import WebDriverException  # noqa: E402  (after the skip above)
from selenium.webdriver.chrome.options import Options  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.print_page_options import PrintOptions  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "tests" / "artifacts"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
DESKTOP, PHONE = 1280, 390
A4_WIDTH_CM, A4_HEIGHT_CM, MARGIN_CM = 21.0, 29.7, 1.2
PRINT_WIDTH = round((A4_WIDTH_CM - 2 * MARGIN_CM) / 2.54 * 96)  # CSS px between the page's side margins
SMALLEST_TEXT = {"screen": 11.0, "print": 8 * 96 / 72}  # px: 11 px on a screen, 8 pt on paper

pytestmark = pytest.mark.skipif(
    CHROMIUM is None or CHROMEDRIVER is None,
    reason="Chromium and its driver are not installed (apt-get install chromium chromium-driver)",
)

# Every problem of the layout, as text, read from the page. Folded details are opened first, so that
# what they hold is checked too. Allowed: a table wider than the screen inside a .scroll box (the box
# scrolls), and the marks of a coefficient plot (its bands, gridlines, whiskers and dot), which are
# drawn over each other on purpose.
LAYOUT_JS = r"""
const smallest = arguments[0];
const problems = [];
const view = document.documentElement.clientWidth;
document.querySelectorAll("details").forEach(d => { d.open = true; });
const describe = el => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "")
  + (el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\s+/).join(".") : "");
const shown = el => {
  const style = getComputedStyle(el);
  const box = el.getBoundingClientRect();
  return style.display !== "none" && style.visibility !== "hidden" && box.width > 0 && box.height > 0;
};
if (document.documentElement.scrollWidth > view) {
  problems.push("the page is " + document.documentElement.scrollWidth + " px wide in a " + view + " px view");
}
const all = Array.from(document.body.querySelectorAll("*")).filter(el => !el.closest("svg, script") && shown(el));
for (const el of all) {
  const box = el.getBoundingClientRect();
  let scroller = el.parentElement && el.parentElement.closest(".scroll");
  if (scroller && !["auto", "scroll"].includes(getComputedStyle(scroller).overflowX)) { scroller = null; }
  if (!scroller && (box.right > view + 0.5 || box.left < -0.5)) {
    problems.push(describe(el) + " sticks out: " + Math.round(box.left) + ".." + Math.round(box.right) + " of " + view);
  }
  if (scroller && scroller.getBoundingClientRect().right > view + 0.5) {
    problems.push("a scroll box is wider than the view");
  }
  const style = getComputedStyle(el);
  if (!scroller && style.display !== "inline" && style.overflowX === "visible" && el.clientWidth > 0
      && el.scrollWidth > el.clientWidth + 1 && !el.matches(".plot")) {
    problems.push(describe(el) + "'s content runs over its box: " + el.scrollWidth + " > " + el.clientWidth);
  }
  const text = Array.from(el.childNodes).some(node => node.nodeType === 3 && node.textContent.trim());
  const size = parseFloat(getComputedStyle(el).fontSize);
  if (text && size < smallest - 0.01) {
    problems.push(describe(el) + " has " + size + " px text: " + el.textContent.trim().slice(0, 40));
  }
}
const marks = ".chart-row:not(.chart-head):not(.chart-axis) > .plot";
for (const parent of all) {
  if (parent.matches(marks)) { continue; }
  const boxes = Array.from(parent.children)
    .filter(el => shown(el) && getComputedStyle(el).display !== "inline" && !el.matches("br, script"))
    .map(el => [el, el.getBoundingClientRect()])
    .sort((a, b) => a[1].top - b[1].top);
  for (let i = 0; i < boxes.length; i++) {
    const [a, p] = boxes[i];
    for (let j = i + 1; j < boxes.length && boxes[j][1].top < p.bottom - 1; j++) {
      const [b, q] = boxes[j];
      const width = Math.min(p.right, q.right) - Math.max(p.left, q.left);
      const height = Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top);
      if (width > 1 && height > 1) {
        problems.push(describe(a) + " overlaps " + describe(b) + " in " + describe(parent)
                      + " (" + Math.round(width) + " x " + Math.round(height) + " px)");
      }
    }
  }
}
return problems;
"""


# --- sheets made here, seeded ----------------------------------------------------------------

CODE_NAMES = ("yes", "no", "complaint about price", "question", "praise", "a-long-unbroken-category-name")
WORDS = "the app crashes again after update sync fails battery fine love it support never answers".split()


def write_rule(folder: Path, codes: tuple[str, ...]) -> Path:
    rule = folder / "rule.yaml"
    listed = "".join(f'  - code: "{code}"\n    label: {code}\n    definition: It is {code}.\n' for code in codes)
    rule.write_text(
        "rule: layout_check\nversion: 1\nquestion: Which kind of comment is it?\nscale: nominal\n"
        f"codes:\n{listed}missing_codes: [unknown]\nchangelog: First version.\n",
        encoding="utf-8",
    )
    return rule


def write_sheets(
    folder: Path, n_coders: int, n_codes: int, units: int = 48, seed: int = 7, prefix: str = "coder_"
) -> list[Path]:
    """Sheets of `n_coders` coders: one rare code, most units agreed, some blank cells, long ids, and
    (except with four codes: a list without text) long texts and one unbroken run of characters (a link)."""
    rng = random.Random(seed * 100 + n_coders * 10 + n_codes)
    codes = CODE_NAMES[:n_codes]
    weights = [0.1] + [0.9 / (n_codes - 1)] * (n_codes - 1)
    truth = rng.choices(codes, weights, k=units)
    coders = [f"{prefix}{chr(97 + index)}" for index in range(n_coders)]
    texts = [" ".join(rng.choices(WORDS, k=rng.randint(3, 40))) for _ in range(units)]
    texts[3] = "https://example.invalid/" + "x" * 180
    with_text = n_codes != 4
    paths = []
    for coder in coders:
        lines = ["comment_id,body,code" if with_text else "comment_id,code"]
        for unit, (true, text) in enumerate(zip(truth, texts)):
            draw = rng.random()
            code = true if draw < 0.75 else ("" if draw > 0.97 else rng.choice(codes))
            body = f"{text}," if with_text else ""
            lines.append(f"t1_{unit:04d}_a_long_comment_identifier,{body}{code}")
        path = folder / f"{coder}.csv"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


def report_for(folder: Path, n_coders: int, n_codes: int, units: int = 48, prefix: str = "coder_") -> dict[str, Any]:
    rule = load_rule(write_rule(folder, CODE_NAMES[:n_codes]))
    paths = write_sheets(folder, n_coders, n_codes, units, prefix=prefix)
    sheets = [read_sheet(path, ColumnChoice()) for path in paths]
    return build_report(join_sheets(sheets, rule), AuditOptions()).to_dict()


def with_adjudication(report: dict[str, Any]) -> dict[str, Any]:
    """The report as `report BUNDLE` shows it once disagreements were decided: the box print keeps whole."""
    report = copy.deepcopy(report)
    listed = report["disagreements"][:3]
    report["adjudication"] = {
        "title": "Adjudicated labels (after the independent coding; not part of the agreement statistics)",
        "statement": "These final codes were decided after the coders disagreed; they change no coefficient above.",
        "decided": len(listed),
        "disagreements": len(report["disagreements"]),
        "undecided": [item["comment_id"] for item in report["disagreements"][3:6]],
        "decisions": [
            {
                "comment_id": item["comment_id"],
                "codes": item["codes"],
                "final_code": report["categories"][0],
                "decided_by": "carol",
                "decided_at": "2024-05-02T09:00:00Z",
                "note": "Decided on the rule's second example.",
            }
            for item in listed
        ],
    }
    return report


# --- the browser -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    options = Options()
    options.binary_location = CHROMIUM or ""
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER or ""))
    except WebDriverException as error:  # a driver that does not match the browser, a browser that cannot start
        pytest.skip(f"Chromium could not be started by chromedriver: {error.msg}")
    try:
        yield driver
    finally:
        driver.quit()


def open_page(driver: Any, page: Path, width: int, media: str = "screen") -> None:
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 500},
    )
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": media})
    driver.get_log("browser")  # what an earlier page logged is not this page's
    driver.get(page.as_uri())


def errors(driver: Any) -> list[str]:
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def screenshot(driver: Any, name: str, height: int | None = None) -> Path:
    size = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
    shot = driver.execute_cdp_cmd(
        "Page.captureScreenshot",
        {
            "format": "png",
            "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": size["width"], "height": height or size["height"], "scale": 1},
        },
    )
    ARTIFACTS.mkdir(exist_ok=True)
    target = ARTIFACTS / name
    target.write_bytes(base64.b64decode(shot["data"]))
    return target


def print_pdf(driver: Any, name: str) -> bytes:
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})  # the page's own print styles
    options = PrintOptions()
    options.page_width, options.page_height = A4_WIDTH_CM, A4_HEIGHT_CM
    options.margin_left = options.margin_right = options.margin_top = options.margin_bottom = MARGIN_CM
    options.background = True
    pdf = base64.b64decode(driver.print_page(options))
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / name).write_bytes(pdf)
    return pdf


def write_page(folder: Path, report: dict[str, Any]) -> Path:
    page = folder / "audit.html"
    page.write_text(render_html(report), encoding="utf-8")
    return page


# --- the layout holds ------------------------------------------------------------------------

MATRIX = [(coders, codes) for coders in (2, 3, 5) for codes in (2, 4, 6)]


@pytest.mark.parametrize(("n_coders", "n_codes"), MATRIX, ids=[f"{c}coders-{k}codes" for c, k in MATRIX])
def test_layout_holds_on_screen_and_for_print(browser: Any, tmp_path: Path, n_coders: int, n_codes: int) -> None:
    page = write_page(tmp_path, with_adjudication(report_for(tmp_path, n_coders, n_codes)))
    for width, media in ((DESKTOP, "screen"), (PHONE, "screen"), (PRINT_WIDTH, "print")):
        open_page(browser, page, width, media)
        problems = browser.execute_script(LAYOUT_JS, SMALLEST_TEXT[media])
        assert not problems, f"{width} px, {media}:\n" + "\n".join(problems[:20])
        assert errors(browser) == []
        if media == "print":
            hidden = browser.execute_script(
                "return Array.from(document.querySelectorAll('details > :not(summary)'))"
                ".filter(el => el.getBoundingClientRect().height === 0).length"
            )
            assert hidden == 0, "print shows what the details fold"
        screenshot(browser, f"layout-{n_coders}coders-{n_codes}codes-{width}-{media}.png")


def test_long_unbroken_coder_names_stay_inside_a_phone(browser: Any, tmp_path: Path) -> None:
    prefix = "a_coder_whose_name_runs_on_without_a_single_place_to_break_it_"
    page = write_page(tmp_path, with_adjudication(report_for(tmp_path, 3, 6, prefix=prefix)))
    for width, media in ((PHONE, "screen"), (PRINT_WIDTH, "print")):
        open_page(browser, page, width, media)
        problems = browser.execute_script(LAYOUT_JS, SMALLEST_TEXT[media])
        assert not problems, f"{width} px, {media}:\n" + "\n".join(problems[:20])
    screenshot(browser, "layout-long-names-print.png")


def page_texts(pdf: bytes) -> list[str]:
    return [page.extract_text() or "" for page in pypdf.PdfReader(io.BytesIO(pdf)).pages]


def page_fill(page: Any) -> float:
    """How far down a page its text reaches, as a share of the page's height."""
    height = float(page.mediabox.height)
    reached = [0.0]

    def visit(text: str, cm: list[float], tm: list[float], font: Any, size: Any) -> None:
        if text.strip():
            baseline = cm[3] * tm[5] + cm[5]  # in the page's space (Chromium's PDF: no rotation)
            reached.append((height - baseline) / height)

    page.extract_text(visitor_text=visit)
    return max(reached)


def page_fills(pdf: bytes) -> list[float]:
    return [page_fill(page) for page in pypdf.PdfReader(io.BytesIO(pdf)).pages]


@pytest.mark.parametrize(("n_coders", "n_codes"), [(2, 2), (5, 6)])
def test_a4_print_keeps_headings_with_what_follows_and_hashes_whole(
    browser: Any, tmp_path: Path, n_coders: int, n_codes: int
) -> None:
    report = with_adjudication(report_for(tmp_path, n_coders, n_codes))
    page = write_page(tmp_path, report)
    open_page(browser, page, DESKTOP)
    headings = browser.execute_script(
        "return Array.from(document.querySelectorAll('h2, h3, summary'), el => el.textContent.trim())"
    )
    pdf = print_pdf(browser, f"report-{n_coders}coders-{n_codes}codes-a4.pdf")
    pages = page_texts(pdf)
    assert len(pages) > 1
    fills = page_fills(pdf)
    box = report["adjudication"]["title"][:40]  # a box kept whole may leave the page before it short
    for number, fill in enumerate(fills[:-1]):
        moved = pages[number + 1].lstrip().startswith(box)
        assert fill > (0.5 if moved else 0.7), f"page {number + 1} is left empty from {fill:.0%} down"
    for number, text in enumerate(pages[:-1], start=1):
        last = [line.strip() for line in text.splitlines() if line.strip()][-1]
        stranded = [heading for heading in headings if heading.startswith(last)]
        assert not stranded, f"page {number} ends on the heading {stranded[0]!r}"
    whole = "\n".join(pages)
    assert "Missingness log by coder" in whole and "Rows of the log; these units" in whole  # the details, unfolded
    for digest in [sheet["sha256"] for sheet in report["sheets"]] + [report["rule"]["digest"].removeprefix("sha256:")]:
        assert f"{digest[:32]}\n{digest[32:]}\n" in whole, "a sha256 is printed in two lines of 32, not cut in pieces"


# --- what the page does ----------------------------------------------------------------------


def test_example_report_leads_with_the_answer(browser: Any, tmp_path: Path) -> None:
    sheets = [ROOT / "examples/sheets/alice.csv", ROOT / "examples/sheets/bob.csv"]
    rule = load_rule(ROOT / "rules/explicit_current_failure/v1.yaml")
    joined = join_sheets([read_sheet(path, ColumnChoice()) for path in sheets], rule)
    report = build_report(joined).to_dict()
    page = write_page(tmp_path, report)
    open_page(browser, page, DESKTOP)
    dom = browser.execute_script("""return {
        title: document.title,
        headline: document.querySelector("#headline .headline-number").textContent.trim(),
        headlineTop: document.getElementById("headline").getBoundingClientRect().top,
        firstTable: document.querySelector("table").closest("section").id,
        kappaRows: Array.from(document.querySelectorAll("main > section:not(#details, #headline) :is(th, .name)"))
            .filter(el => el.offsetParent !== null && el.textContent === "Cohen's kappa")
            .map(el => el.closest(".chart-row, tr").querySelector(".chart-value, td:last-child").textContent.trim()),
        heat: Array.from(document.querySelectorAll('#table [data-heatmap] tbody td'), td => td.textContent),
        charts: document.querySelectorAll(".chart .point").length,
        rows: document.querySelectorAll("#disagreement-table tbody tr").length,
    }""")
    assert dom["title"] == "Inter-coder reliability audit: explicit_current_failure v1"
    kappa = report["metrics"]["cohen_kappa"]
    assert dom["headline"] == f"Cohen's kappa {format_metric(kappa)} 95% CI {format_interval(kappa)}"
    assert dom["headlineTop"] < 200 and dom["firstTable"] == "table"
    # beside the headline, kappa is in one row of the main view (the coefficient chart), its interval beside it
    assert dom["kappaRows"] == [f"{format_metric(kappa)} {format_interval(kappa)}"]
    assert dom["heat"] == ["8", "2", "10", "1", "9", "10", "9", "11", "20"]
    assert dom["charts"] == sum(row["defined"] for row in report["coefficients"])  # each coefficient has its dot
    assert dom["rows"] == 3
    assert screenshot(browser, "report-example.png").stat().st_size > 10_000
    assert errors(browser) == []


def test_heat_map_cells_filter_and_headers_sort_the_disagreements(browser: Any, tmp_path: Path) -> None:
    report = report_for(tmp_path, 2, 4)
    page = write_page(tmp_path, report)
    open_page(browser, page, DESKTOP)
    wanted = [
        item["comment_id"]
        for item in report["disagreements"]
        if item["codes"]["coder_a"] == "no" and item["codes"]["coder_b"] == "question"
    ]
    shown = browser.execute_script("""
        const cell = document.querySelector('#table td[data-row-code="no"][data-column-code="question"]');
        cell.click();
        return [Array.from(document.querySelectorAll("#disagreement-table tbody tr:not([hidden]) th"),
                           th => th.textContent),
                document.getElementById("disagreement-shown").textContent];
    """)
    assert wanted and shown == [wanted, f"{len(wanted)} of {len(report['disagreements'])} shown"]
    narrowed = browser.execute_script("""
        document.getElementById("disagreement-clear").click();
        const form = document.getElementById("disagreement-filter");
        form.querySelector("select[name=coder]").value = "coder_b";
        form.querySelector("select[name=code]").value = "yes";
        form.querySelector("select[name=code]").dispatchEvent(new Event("change"));
        const shown = document.querySelectorAll("#disagreement-table tbody tr:not([hidden]) th");
        return Array.from(shown, th => th.textContent);
    """)
    assert narrowed == [item["comment_id"] for item in report["disagreements"] if item["codes"]["coder_b"] == "yes"]
    order = browser.execute_script("""
        document.getElementById("disagreement-clear").click();
        const head = document.querySelectorAll("#disagreement-table thead th")[1];
        head.click(); head.click();
        return Array.from(document.querySelectorAll("#disagreement-table tbody tr td.code:first-of-type"),
                          td => td.textContent);
    """)
    assert order == sorted((item["codes"]["coder_a"] for item in report["disagreements"]), reverse=True)
    assert errors(browser) == []


def test_five_coders_show_the_split_and_filter_by_it(browser: Any, tmp_path: Path) -> None:
    report = report_for(tmp_path, 5, 2)
    page = write_page(tmp_path, report)
    open_page(browser, page, PHONE)
    splits = browser.execute_script(
        "return Array.from(document.querySelectorAll('#disagreement-table td.split'), td => td.textContent)"
    )
    assert len(splits) == len(report["disagreements"]) and all(" - " in split for split in splits)
    first = splits[0]
    shown = browser.execute_script(f"""
        const split = document.querySelector("#disagreement-filter select[name=split]");
        split.value = {first!r};
        split.dispatchEvent(new Event("change"));
        return document.querySelectorAll("#disagreement-table tbody tr:not([hidden])").length;
    """)
    assert shown == splits.count(first)
    pairwise = browser.execute_script("""
        document.getElementById("disagreement-clear").click();
        document.querySelectorAll("details").forEach(d => { d.open = true; });
        document.querySelector('#pairwise td[data-row-coder="coder_a"][data-column-coder="coder_b"]').click();
        return document.querySelectorAll("#disagreement-table tbody tr:not([hidden])").length;
    """)
    assert pairwise == sum(item["codes"]["coder_a"] != item["codes"]["coder_b"] for item in report["disagreements"])
    assert errors(browser) == []


def test_a_long_list_is_shown_fifty_rows_at_a_time_and_printed_whole(browser: Any, tmp_path: Path) -> None:
    report = report_for(tmp_path, 3, 2, units=400)
    total = len(report["disagreements"])
    assert total > 100
    page = write_page(tmp_path, report)
    open_page(browser, page, PHONE)
    count = "return document.querySelectorAll('#disagreement-table tbody tr:not([hidden])').length"
    state = "return ['disagreement-shown', 'disagreement-more'].map(id => document.getElementById(id).textContent)"
    assert browser.execute_script(count) == 50
    assert browser.execute_script(state) == [f"50 of {total} shown ({total} match)", "show 50 more"]
    browser.execute_script("document.getElementById('disagreement-more').click()")
    assert browser.execute_script(count) == 100
    assert browser.execute_script(LAYOUT_JS, SMALLEST_TEXT["screen"]) == []
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    printed = browser.execute_script(
        "return Array.from(document.querySelectorAll('#disagreement-table tbody tr'))"
        ".filter(row => row.getBoundingClientRect().height > 0).length"
    )
    assert printed == total  # paper shows every row the page lists
    assert errors(browser) == []


def test_the_error_check_sees_errors(browser: Any, tmp_path: Path) -> None:
    """A control: a page that logs an error and asks for an external image fails the check above."""
    page = tmp_path / "broken.html"
    page.write_text(
        """<!DOCTYPE html><html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'">
<title>broken</title></head><body><img src="http://example.invalid/x.png" alt="">
<script>console.error("deliberate");</script></body></html>""",
        encoding="utf-8",
    )
    open_page(browser, page, DESKTOP)
    found = errors(browser)
    assert any("deliberate" in error for error in found)
    assert any("Content Security Policy" in error or "example.invalid" in error for error in found), found


def test_the_layout_check_sees_overlaps_and_overflow(browser: Any, tmp_path: Path) -> None:
    """A control: two tables drawn over each other, a box wider than a phone and tiny text are found."""
    page = tmp_path / "overlap.html"
    page.write_text(
        """<!DOCTYPE html><html><head><meta charset="utf-8"><title>overlap</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head><body>
<div style="display:flex"><table style="margin-right:-60px"><tr><td>a long cell here</td></tr></table>
<table><tr><td>next table</td></tr></table></div>
<div style="width:600px">wide</div><p style="font-size:6px">tiny</p></body></html>""",
        encoding="utf-8",
    )
    open_page(browser, page, PHONE)
    problems = browser.execute_script(LAYOUT_JS, SMALLEST_TEXT["screen"])
    assert any("overlaps" in problem for problem in problems), problems
    assert any("sticks out" in problem for problem in problems), problems
    assert any("6 px text" in problem for problem in problems), problems
