"""The audit as one self-contained HTML page: heat maps, coefficient bars, the unit flow.

A view of the same report model as JSON, Markdown and the console: the tables come
from `metric_sections`, so the views say the same thing. This module only adds what
a page needs to draw (colours, positions on an axis) as small pure helpers, and a
Jinja2 template with autoescaping on renders it. No clock, no network, no external
file: the same report gives the same bytes, and the page opens from a USB stick.
"""

from __future__ import annotations

import base64
import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, Template
from markupsafe import Markup, escape

from irr_audit.io.display import visible
from irr_audit.report.comparison import extra_sections
from irr_audit.report.format import (
    LISTED_DISAGREEMENTS,
    NO_CODER,
    format_metric,
    format_number,
    level_label,
    missing_units,
    readable,
    unlisted_disagreements,
)
from irr_audit.report.headline import (
    ALPHA_LIKE,
    KAPPA_LIKE,
    coefficient_rows,
    headline_block,
    paradox_explanation,
)
from irr_audit.report.methods import methods_paragraph
from irr_audit.report.sections import (
    Section,
    code_split,
    coefficients_section,
    glossary_section,
    headline_facts,
    metric_sections,
)

# ColorBrewer YlGnBu (sequential, colour-blind safe) for counts, light = few.
SEQUENTIAL = ("#ffffd9", "#edf8b1", "#c7e9b4", "#7fcdbb", "#41b6c4", "#1d91c0", "#225ea8", "#253494", "#081d58")
# ColorBrewer PuOr reversed: orange below 0, white at 0, purple-blue above (colour-blind safe) for kappa.
DIVERGING = ("#b35806", "#e08214", "#fdb863", "#fee0b6", "#f7f7f7", "#d8daeb", "#b2abd2", "#8073ac", "#542788")
# Okabe & Ito (2008): categorical colours distinguishable with every common colour-vision deficiency.
CATEGORICAL = ("#E69F00", "#D55E00", "#CC79A7", "#56B4E9", "#009E73", "#F0E442", "#999999")
KEPT = "#0072B2"
LOGGED = "#999999"
NEUTRAL = "#eeeeee"

LANDIS_KOCH_BANDS = (
    (-1.0, 0.0, "poor"),
    (0.0, 0.2, "slight"),
    (0.2, 0.4, "fair"),
    (0.4, 0.6, "moderate"),
    (0.6, 0.8, "substantial"),
    (0.8, 1.0, "almost perfect"),
)
KRIPPENDORFF_BANDS = ((-1.0, 0.667, "below 0.667"), (0.667, 0.8, "tentative"), (0.8, 1.0, "reliable"))
LANDIS_KOCH_NOTE = (
    "Landis & Koch (1977) bands: poor < 0, slight 0-0.20, fair 0.21-0.40, moderate 0.41-0.60, "
    "substantial 0.61-0.80, almost perfect 0.81-1. A convention, not a test."
)
KRIPPENDORFF_NOTE = (
    "Krippendorff (2004) guideline: rely on data with alpha >= 0.800; 0.667-0.800 for tentative "
    "conclusions only. A convention, not a test."
)

# A coefficient chart is HTML (a grid of rows: name, plot, value), its marks placed in percent of the
# plot's width: the text keeps its size on a phone, where a scaled drawing's text would shrink.
PLOT_PERCENT = 100.0


# --- colours ---------------------------------------------------------------------------------


def _rgb(colour: str) -> tuple[int, int, int]:
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


def ramp_colour(ramp: tuple[str, ...], fraction: float) -> str:
    """The colour at `fraction` (0..1) along a ramp, linearly interpolated in RGB.

    >>> ramp_colour(("#000000", "#ffffff"), 0.5)
    '#808080'
    """
    fraction = min(1.0, max(0.0, fraction))
    position = fraction * (len(ramp) - 1)
    low = min(int(position), len(ramp) - 2)
    share = position - low
    start, end = _rgb(ramp[low]), _rgb(ramp[low + 1])
    channels = (round(a + (b - a) * share) for a, b in zip(start, end))
    return "#" + "".join(f"{channel:02x}" for channel in channels)


def text_colour(background: str) -> str:
    """Black or white text, whichever reads better on `background` (WCAG relative luminance).

    >>> text_colour("#081d58"), text_colour("#ffffd9")
    ('#ffffff', '#111111')
    """

    def linear(channel: int) -> float:
        c = channel / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    red, green, blue = (linear(channel) for channel in _rgb(background))
    luminance = 0.2126 * red + 0.7152 * green + 0.0722 * blue
    return "#ffffff" if luminance < 0.22 else "#111111"


# --- heat maps -------------------------------------------------------------------------------


@dataclass(frozen=True)
class HeatCell:
    text: str
    background: str = ""
    foreground: str = ""
    kind: str = "cell"  # cell, diagonal, margin, empty
    # what a click on the cell narrows the disagreement list to: the codes of the row and the column
    # (and their coders, for a table of two coders), or the two coders of a pairwise-kappa cell
    row_code: str = ""
    column_code: str = ""
    row_coder: str = ""
    column_coder: str = ""

    @property
    def filters(self) -> bool:
        return bool(self.row_code or self.row_coder)


@dataclass(frozen=True)
class HeatMap:
    key: str
    title: str
    corner: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, tuple[HeatCell, ...]], ...]
    notes: tuple[str, ...]
    legend: str


def _coloured(text: str, background: str, kind: str, **filters: str) -> HeatCell:
    return HeatCell(text, background, text_colour(background), kind, **filters)


ROW_SHARE_LEGEND = (
    "Colour: row share (the cell's count over its row's total), from light (0%) to dark (100%); "
    "the count is written in each cell and the diagonal is outlined. "
    "Click a cell off the diagonal to list its disagreements."
)


def count_heatmap(
    section: Section, corner: str, coders: tuple[str, str] | None = None, legend: str = ROW_SHARE_LEGEND
) -> HeatMap:
    """An agreement table or coincidence matrix: the section's text in every cell, coloured by its share
    of the row (how one coder's, or one code's, uses were coded by the other), so that agreement on a
    rare category shows as dark as on a common one; the marginals (its last row and column) stay
    uncoloured. `coders`: the two coders of the rows and columns; None for a coincidence matrix."""
    assert section.matrix is not None
    size = len(section.matrix)
    categories = [row[0] for row in section.rows[:size]]
    rows = []
    for index, row in enumerate(section.rows):
        cells = []
        row_total = sum(section.matrix[index]) if index < size else 0.0
        for column, text in enumerate(row[1:]):
            if index == size or column == size:
                cells.append(HeatCell(text, kind="margin"))
                continue
            value = section.matrix[index][column]
            share = value / row_total if row_total > 0 else 0.0
            kind = "diagonal" if index == column else "cell"
            filters = {}
            if kind == "cell" and value > 0:
                filters = {"row_code": categories[index], "column_code": categories[column]}
                if coders is not None:
                    filters |= {"row_coder": coders[0], "column_coder": coders[1]}
            cells.append(_coloured(text, ramp_colour(SEQUENTIAL, share), kind, **filters))
        rows.append((row[0], tuple(cells)))
    return HeatMap(
        section.key,
        section.title,
        corner,
        section.columns[1:],
        tuple(rows),
        section.notes,
        legend,
    )


def kappa_heatmap(section: Section) -> HeatMap:
    """The pairwise kappa matrix, coloured on a diverging scale from -1 (orange) through 0 to 1 (purple)."""
    assert section.matrix is not None
    coders = [row[0] for row in section.rows]
    rows = []
    for index, row in enumerate(section.rows):
        cells = []
        for column, text in enumerate(row[1:]):
            value = section.matrix[index][column]
            if math.isnan(value):
                cells.append(HeatCell(text, kind="empty"))
            else:
                filters = {"row_coder": coders[index], "column_coder": coders[column]}
                cells.append(_coloured(text, ramp_colour(DIVERGING, (value + 1) / 2), "cell", **filters))
        rows.append((row[0], tuple(cells)))
    return HeatMap(
        section.key,
        section.title,
        "",
        section.columns[1:],
        tuple(rows),
        section.notes,
        "Colour: kappa, orange below 0, white at 0, purple towards 1. "
        "Click a cell to list the disagreements of that pair of coders.",
    )


def pair_heatmaps(report: dict[str, Any]) -> list[HeatMap]:
    """For three or more coders, each pair's agreement table (as Markdown's "Coder pairs")."""
    if len(report["coders"]) <= 2:
        return []
    categories = report["categories"]
    maps = []
    for pair in report.get("pairs") or []:
        first, second = pair["coders"]
        table = pair["table"]
        rows = [
            (category, *map(format_count, counts), format_count(sum(counts)))
            for category, counts in zip(categories, table)
        ]
        totals = [sum(column) for column in zip(*table)]
        rows.append(("total", *map(format_count, totals), format_count(sum(totals))))
        kappa = format_metric(pair["metrics"].get("cohen_kappa", {}))
        section = Section(
            "pair",
            f"{first} (rows) x {second} (columns), n = {pair['n']}",
            ("", *categories, "total"),
            tuple(rows),
            (f"Cohen's kappa: {kappa}",),
            matrix=tuple(tuple(float(v) for v in row) for row in table),
        )
        maps.append(count_heatmap(section, f"{first} \\ {second}", (first, second), legend=""))  # said once above
    return maps


def format_count(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}"


# --- the one coefficient table, drawn ---------------------------------------------------------


@dataclass(frozen=True)
class Band:
    x: float
    width: float
    label: str
    fill: str


@dataclass(frozen=True)
class Whisker:
    x: float
    width: float
    kind: str  # analytic or bootstrap


@dataclass(frozen=True)
class Bar:
    """One row of the coefficient table: the estimate (a dot), its interval (a whisker) over the
    bands of its convention, and the same in words beside it."""

    label: str
    text: str  # the value as the tables write it, or "undefined: reason"
    band_label: str
    x: float | None  # None: undefined, drawn as text, never as a number
    whiskers: tuple[Whisker, ...]
    interval: str  # the interval as the tables write it, "" when there is none
    headline: bool = False  # the report's recommended coefficient
    what: str = ""  # what it is for, in a few words
    bands: tuple[Band, ...] = ()  # the bands of its convention, drawn behind it


@dataclass(frozen=True)
class Tick:
    x: float
    label: str


@dataclass(frozen=True)
class CoefficientChart:
    title: str
    notes: tuple[str, ...]
    ticks: tuple[Tick, ...]
    grid: tuple[float, ...]
    bars: tuple[Bar, ...]
    has_analytic: bool
    has_bootstrap: bool
    description: str
    level: str = "95%"  # the level of its intervals (--ci-level), in the column's head


def axis_low(lows: list[float]) -> float:
    """The left end of the axis: 0, or lower in steps of 0.2 to show every value and interval.

    >>> axis_low([0.3, 0.7]), axis_low([-0.05]), axis_low([-3.0])
    (0.0, -0.2, -1.0)
    """
    low = min([0.0, *lows])
    return max(-1.0, math.floor(round(low / 0.2, 9)) * 0.2)


def axis_x(value: float, low: float) -> float:
    """Where `value` sits on the plot, in percent of its width, for an axis from `low` to 1.

    >>> axis_x(0.5, 0.0), axis_x(-2.0, -1.0), axis_x(0.0, -0.2)
    (50.0, 0.0, 16.67)
    """
    clipped = min(1.0, max(low, value))
    return round((clipped - low) / (1.0 - low) * PLOT_PERCENT, 2)


def axis_grid(low: float) -> tuple[float, ...]:
    """Where the gridlines go: every 0.2 from `low` to 1, in percent of the plot."""
    return tuple(axis_x(low + 0.2 * step, low) for step in range(round((1.0 - low) / 0.2) + 1))


def axis_ticks(low: float) -> tuple[Tick, ...]:
    """The axis labels: every 0.2 on an axis of up to six steps, every 0.5 on a longer one, so that the
    labels never run into each other on a phone.

    >>> [tick.label for tick in axis_ticks(-0.6)], [tick.label for tick in axis_ticks(0.0)]
    (['-0.5', '0.0', '0.5', '1.0'], ['0.0', '0.2', '0.4', '0.6', '0.8', '1.0'])
    """
    steps = round((1.0 - low) / 0.2)
    if steps <= 6:
        values = [low + 0.2 * step for step in range(steps + 1)]
    else:
        values = [half / 2 for half in range(math.ceil(round(low * 2, 9)), 3)]
    return tuple(Tick(axis_x(value, low), f"{value:.1f}".replace("-0.0", "0.0")) for value in values)


def _convention_bands(name: str, low: float) -> tuple[Band, ...]:
    """The bands a coefficient is read against: Landis & Koch for the kappa-like, Krippendorff's
    guideline for alpha, none for raw agreement and the others."""
    bands = LANDIS_KOCH_BANDS if name in KAPPA_LIKE else KRIPPENDORFF_BANDS if name in ALPHA_LIKE else ()
    return tuple(
        Band(
            axis_x(max(start, low), low),
            round(axis_x(end, low) - axis_x(max(start, low), low), 2),
            label,
            "#f3f3f3" if position % 2 == 0 else "#e2e2e2",
        )
        for position, (start, end, label) in enumerate(bands)
        if end > low
    )


def _interval_words(interval: dict[str, Any] | None) -> str:
    if not interval:
        return ""
    text = f"[{format_number(interval['low'])}, {format_number(interval['high'])}]"
    return text + ("*" if interval.get("clipped") else "")


def coefficient_chart(
    rows: list[dict[str, Any]], title: str, notes: tuple[str, ...], level: str = "95%"
) -> CoefficientChart:
    """The one coefficient table (rows as `coefficient_rows` gives them: the headline first) drawn:
    each estimate and interval on one axis, over the bands of its own convention."""
    lows = [
        bound
        for row in rows
        if row["defined"]
        for bound in (row["value"], *((row["interval"]["low"],) if row.get("interval") else ()))
    ]
    low = axis_low(lows)
    bars = tuple(_bar(row, low) for row in rows)
    ticks = axis_ticks(low)
    grid = axis_grid(low)
    described = "; ".join(f"{bar.label}: {bar.text}" + (f" {bar.interval}" if bar.interval else "") for bar in bars)
    return CoefficientChart(
        title,
        notes,
        ticks,
        grid,
        bars,
        _has_whisker(bars, "analytic"),
        _has_whisker(bars, "bootstrap"),
        described,
        level,
    )


def _has_whisker(bars: tuple[Bar, ...], kind: str) -> bool:
    return any(whisker.kind == kind for bar in bars for whisker in bar.whiskers)


def _bar(row: dict[str, Any], low: float) -> Bar:
    what = row.get("what_it_is_for", "")
    if not row["defined"]:
        text = f"undefined: {row.get('reason', 'no reason given')}"
        return Bar(row["label"], text, "", None, (), "", row["headline"], what)
    interval = row.get("interval")
    whiskers: tuple[Whisker, ...] = ()
    if interval:
        start = axis_x(interval["low"], low)
        whiskers = (Whisker(start, round(axis_x(interval["high"], low) - start, 2), interval["kind"]),)
    band = row.get("band") or {}
    return Bar(
        row["label"],
        format_number(row["value"]),
        band.get("label", ""),
        axis_x(row["value"], low),
        whiskers,
        _interval_words(interval),
        row["headline"],
        what,
        _convention_bands(row["metric"], low),
    )


def coefficients_view(report: dict[str, Any]) -> CoefficientChart:
    """The report's one coefficient table, with the notes of its Section (how each interval was
    obtained, why one is missing, the conventions) and what the shading is."""
    rows = report.get("coefficients")
    rows = coefficient_rows(report) if rows is None else rows
    kinds = {row["metric"] for row in rows}
    shading = [
        note for note, names in ((LANDIS_KOCH_NOTE, KAPPA_LIKE), (KRIPPENDORFF_NOTE, ALPHA_LIKE)) if kinds & names
    ]
    # the conventions are named with their bands in the shading notes
    said = tuple(note for note in coefficients_section(report).notes if not note.startswith("Band: "))
    notes = (*said, *(f"Shading: {note}" for note in shading))
    return coefficient_chart(rows, "Coefficients", notes, level_label(report))


def group_chart(report: dict[str, Any]) -> CoefficientChart:
    """A group comparison's coefficients (the consensus of a group against a reference), drawn."""
    group = report["group_comparison"]
    against = group["against_reference"]
    pseudo = {
        "coders": [group["name"], group["reference"]],
        "rule": report["rule"],
        "metrics": against.get("metrics") or {},
        "intervals": report.get("intervals"),
    }
    title = f"Consensus of {group['name']} vs {group['reference']}"
    return coefficient_chart(coefficient_rows(pseudo), title, (), level_label(report))


# --- the unit flow ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Segment:
    label: str
    count: int
    colour: str
    x: float
    width: float


@dataclass(frozen=True)
class FlowStep:
    label: str
    count: int
    segments: tuple[Segment, ...]
    note: str = ""


FLOW_BAR_WIDTH = 400


def unit_flow(report: dict[str, Any]) -> list[FlowStep]:
    """From collected to fully coded. The collected and excluded part only when the report carries
    sample information (`sample` with the counts of `irr-audit sample`, or `bundle.sample`)."""
    units = report["units"]
    steps: list[tuple[str, int, list[tuple[str, int, str]], str]] = []
    sample = report.get("sample") or {}
    counts = sample.get("counts") or {}
    if counts:
        excluded = counts.get("log_rows") or {}
        parts = [
            ("usable", counts["usable_units"], KEPT),
            *(
                (f"excluded: {reason}", n, CATEGORICAL[i % len(CATEGORICAL)])
                for i, (reason, n) in enumerate(excluded.items())
            ),
        ]
        steps.append(("collected", counts["items"], parts, "Exclusions count rows of the sample's log."))
        steps.append(
            (
                "sampled",
                counts["sampled_units"],
                [("sampled", counts["sampled_units"], KEPT)],
                f"drawn from {counts['usable_units']} usable units",
            )
        )
    bundle_sample = (report.get("bundle") or {}).get("sample") or {}
    if not counts and bundle_sample.get("ids"):
        sampled = bundle_sample["ids"]["count"]
        steps.append(("sampled", sampled, [("sampled", sampled, KEPT)], "the audit bundle's frozen sample"))
    steps.append(
        (
            "units joined",
            units["total"],
            [("fully coded", units["fully_coded"], KEPT)]
            + ([] if units["missing"] is None else [(missing_units(report)[0], units["missing"], LOGGED)]),
            "" if units["missing"] is not None else f"units not fully coded: {missing_units(report)[1]}",
        )
    )
    by_reason = report["missingness"]["by_reason"]
    if by_reason:
        reasons = [(reason, n, CATEGORICAL[i % len(CATEGORICAL)]) for i, (reason, n) in enumerate(by_reason.items())]
        steps.append(
            (
                "missingness log",
                sum(by_reason.values()),
                reasons,
                "rows of the log, by reason (a unit can have several)",
            )
        )
    steps.append(
        (
            "fully coded",
            units["fully_coded"],
            [("fully coded", units["fully_coded"], KEPT)],
            "the audit's basis: every coder coded it validly",
        )
    )
    largest = max(count for _, count, _, _ in steps) or 1
    return [FlowStep(label, count, _segments(parts, largest), note) for label, count, parts, note in steps]


def _segments(parts: list[tuple[str, int, str]], largest: int) -> tuple[Segment, ...]:
    segments, x = [], 0.0
    for label, count, colour in parts:
        width = round(count / largest * FLOW_BAR_WIDTH, 2)
        segments.append(Segment(label, count, colour, round(x, 2), width))
        x += width
    return tuple(segment for segment in segments if segment.count)


# --- the headline ----------------------------------------------------------------------------


@dataclass(frozen=True)
class HeadlineView:
    label: str  # the recommended coefficient, e.g. "Cohen's kappa"
    value: str  # its value, or "undefined: reason"
    interval: str  # "95% CI [a, b]", "" when there is none
    facts: tuple[tuple[str, str], ...]  # (what, text): why, the interval's method, units, raw agreement, band
    warning: str  # a plain warning when the kappa paradox applies, else ""


def headline_view(report: dict[str, Any]) -> HeadlineView:
    """The answer first, from the report's headline: the recommended coefficient with its interval,
    and the facts beside it (why this one, the units, raw agreement, the band as a convention)."""
    headline = report.get("headline") or headline_block(report)
    interval = headline.get("interval")
    if headline.get("defined"):
        value = format_number(headline["value"])
    else:
        value = f"undefined: {headline.get('reason', 'no reason given')}"
    shown = f"{100 * interval['level']:g}% CI {_interval_words(interval)}" if interval else ""
    _, facts = headline_facts(report)
    return HeadlineView(
        headline["label"],
        value,
        shown,
        tuple((what, text) for what, text in facts if what != "warning"),
        headline.get("warning") or "",
    )


# --- the disagreement list -------------------------------------------------------------------


@dataclass(frozen=True)
class DisagreementRow:
    comment_id: str
    codes: tuple[tuple[str, str], ...]  # (coder, code), in the coders' order
    split: str  # "4 no - 1 yes" for three or more coders, else ""
    item: dict[str, Any]  # text, link, thread title, parent text

    @property
    def split_parts(self) -> tuple[str, ...]:
        """The split's parts ("4 no", "1 yes"): a line may break between them, never inside one."""
        return tuple(self.split.split(SPLIT_SEPARATOR)) if self.split else ()


SPLIT_SEPARATOR = " - "


def disagreement_rows(report: dict[str, Any]) -> list[DisagreementRow]:
    coders = report["coders"]
    many = len(coders) > 2
    rows = []
    for item in (report.get("disagreements") or [])[:LISTED_DISAGREEMENTS]:
        codes = [str(item["codes"].get(coder, "")) for coder in coders]
        split = code_split(dict(zip(coders, codes)), report["categories"]) if many else ""
        rows.append(DisagreementRow(str(item["comment_id"]), tuple(zip(coders, codes)), split, item))
    return rows


def disagreement_rows_html(
    rows: list[DisagreementRow], categories: Sequence[str], splits: bool, with_text: bool
) -> list[Markup]:
    """The disagreement table's rows, each value shown and escaped as the template prints a value
    (2,000 rows drawn by the template's loops took most of a page's rendering). A coder's code
    cell is made once and reused: the rows share a handful of them."""
    code_cells: dict[tuple[str, str], str] = {}

    def code_cell(coder: str, code: str) -> str:
        if (coder, code) not in code_cells:
            chip = categories.index(code) % 6 if code in categories else 6
            code_cells[coder, code] = (
                f'<td class="code" data-coder="{_printed(coder)}" data-code="{_printed(code)}" '
                f'data-label="{_printed(coder)}"><span class="code-chip c{chip}">{_printed(code)}</span></td>'
            )
        return code_cells[coder, code]

    return [_row_html(row, code_cell, splits, with_text) for row in rows]


def _row_html(row: DisagreementRow, code_cell: Callable[[str, str], str], splits: bool, with_text: bool) -> Markup:
    item = row.item
    parts = ['<tr><th scope="row" class="id">', _printed(row.comment_id), "</th>"]
    parts += [code_cell(coder, code) for coder, code in row.codes]
    if splits:
        spans = " - ".join(f"<span>{_printed(part)}</span>" for part in row.split_parts)
        parts.append(f'<td class="split">{spans}</td>')
    if with_text:
        parts.append('<td class="body">')
        if item.get("thread_title"):
            parts += ['<span class="note">in ', _printed(item["thread_title"]), "</span><br>"]
        if item.get("parent_text"):
            parts += ['<span class="note">replying to: ', _printed(item["parent_text"]), "</span><br>"]
        if item["text"] is not None:
            parts.append(_printed(item["text"]))
        if item.get("link"):
            parts += ['<br><span class="note">', _printed(item["link"]), "</span>"]
        parts.append("</td>")
    parts.append("</tr>")
    return Markup("".join(parts))


def _printed(value: Any) -> str:
    """A value as the template prints one: shown (``_shown``), then escaped."""
    return str(escape(_shown(value)))


def _has_text(item: dict[str, Any]) -> bool:
    return bool(item.get("text") or item.get("thread_title") or item.get("parent_text") or item.get("link"))


# --- the page --------------------------------------------------------------------------------


def page_view(report: dict[str, Any]) -> dict[str, Any]:
    """Everything the template draws, computed from the report dict: the answer first (the headline,
    the coefficients with their intervals, the agreement table and the paradox), then the details
    folded, the disagreements, an adjudication, and the provenance last."""
    sections = [*metric_sections(report), *extra_sections(report)]
    coders = report["coders"]
    main: list[dict[str, Any]] = []
    details: list[dict[str, Any]] = []
    for section in sections:
        block_id = section.key.replace("_", "-")
        if section.key == "table":
            two = (coders[0], coders[1]) if len(coders) == 2 else None
            corner = f"{coders[0]} \\ {coders[1]}" if two else ""
            notes = section.notes if two else (_coincidence_note(report),)
            heat = count_heatmap(replace(section, notes=notes), corner, two)
            main.append({"kind": "heatmap", "id": "table", "map": heat})
        elif section.key == "paradox" and (report.get("paradox") or paradox_explanation(report))["applies"]:
            main.append({"kind": "table", "id": block_id, "section": section})  # else among the details
        elif section.key == "pairwise":
            details.append({"kind": "heatmap", "id": "pairwise", "map": kappa_heatmap(section)})
        elif section.key == "group":
            details.append({"kind": "table", "id": block_id, "section": section})
            prefix = f"{section.title}: the coefficients drawn"
            details.append({"kind": "chart", "id": "group-bars", "chart": group_chart(report), "title": prefix})
        elif section.key != "missingness":  # drawn with the unit flow
            details.append({"kind": "table", "id": block_id, "section": section})
    main.insert(0, {"kind": "chart", "id": "coefficients", "chart": coefficients_view(report), "title": "Coefficients"})
    disagreements = disagreement_rows(report) if report.get("disagreements") is not None else None
    with_text = any(_has_text(row.item) for row in disagreements or [])
    splits = sorted({row.split for row in disagreements or [] if row.split})
    return {
        "report": report,
        "title": f"Inter-coder reliability audit: {report['rule']['id']} v{report['rule']['version']}",
        "headline": headline_view(report),
        "methods": methods_paragraph(report),
        "flow": unit_flow(report),
        "missingness": next((section for section in sections if section.key == "missingness"), None),
        "flow_width": FLOW_BAR_WIDTH,
        "warnings": [readable(w) for w in report.get("warnings", []) if not w.startswith("kappa paradox")],
        "glossary": glossary_section(),
        "main": main,
        "details": details,
        "pairs": pair_heatmaps(report),
        "pairs_legend": ROW_SHARE_LEGEND,
        "disagreements": disagreements,
        "disagreement_html": disagreement_rows_html(disagreements or [], report["categories"], bool(splits), with_text),
        "disagreement_text": with_text,
        "disagreement_untexted": sum(not _has_text(row.item) for row in disagreements or []),
        "disagreement_total": len(report.get("disagreements") or []),
        "disagreement_count": report.get("disagreement_count"),
        "disagreements_unlisted": unlisted_disagreements(report),
        "splits": splits,
        "no_coder": NO_CODER,
    }


def _coincidence_note(report: dict[str, Any]) -> str:
    """Where a coincidence matrix's fractions come from, in this report's numbers."""
    coders = len(report["coders"])
    units = (report.get("units") or {}).get("fully_coded", 0)
    return (
        f"Within a unit coded by m coders, each ordered pair of codes counts 1/(m - 1) (Krippendorff). "
        f"Here each fully coded unit has {coders} codes and so {coders * (coders - 1)} ordered pairs "
        f"of codes; each pair counts 1/{coders - 1}, so that the matrix sums to the {units * coders} codes "
        f"({units} units x {coders} coders) and a cell can hold a fraction."
    )


@lru_cache(maxsize=1)
def _template() -> Template:
    environment = Environment(
        loader=PackageLoader("irr_audit.report", "templates"),
        autoescape=True,  # every value is user text until proven otherwise
        finalize=_shown,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    return environment.get_template("report.html.j2")


def _shown(value: Any) -> Any:
    """Every value the template prints, before it is escaped: control characters and bidi overrides
    from the sheets shown as escapes (white space stays: comment bodies keep their lines)."""
    if isinstance(value, str) and not isinstance(value, Markup):  # Markup: a macro's output, already shown
        return visible(value, keep_whitespace=True)
    return value


@lru_cache(maxsize=1)
def filter_script() -> tuple[Any, str]:
    """The page's one script (a file of the package, no user text) and its CSP hash: the page runs
    this script and no other, even if some text were ever to reach the page unescaped."""
    source = (resources.files("irr_audit.report") / "templates" / "filter.js").read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(source.encode("utf-8")).digest()).decode("ascii")
    return Markup(source), f"sha256-{digest}"


def render_html(report: dict[str, Any]) -> str:
    """The report as one self-contained HTML page. Byte-stable for the same report."""
    script, script_hash = filter_script()
    return _template().render(**page_view(report), script=script, script_hash=script_hash)
