"""The public Python API (docs/api.md): load a rule, audit the codes of two or more
coders, and read the result as pandas DataFrames or as the report the command line
writes. The command line is one client of these functions: `irr-audit score` and
`irr-audit report` print what :meth:`Audit.to_dict` holds, `irr-audit join` writes
what :func:`join_folder` writes. Every decision is made here or below; nothing
here prints or exits.
"""

from __future__ import annotations

import copy
import dataclasses
import html
import math
import numbers
import os
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from rich.console import Console, Group

from irr_audit.bundle.adjudication import bundle_report_sections
from irr_audit.bundle.labels import bundle_labels
from irr_audit.bundle.manifest import Manifest
from irr_audit.bundle.read import read_bundle
from irr_audit.errors import UsageError
from irr_audit.importers.model import ImportOptions
from irr_audit.importers.run import ImportRun, import_exports
from irr_audit.io.dataframes import frame_sheets, long_frame_sheets
from irr_audit.io.delimiter import parse_delimiter
from irr_audit.io.files import check_exist
from irr_audit.io.limits import DEFAULT_LIMITS, Limits, parse_limit_options
from irr_audit.io.ordercolumn import order_values
from irr_audit.io.outputs import refuse_unsafe_outputs, render_json
from irr_audit.io.runfolder import JOIN_RECORD, files_read, is_bundle
from irr_audit.io.sheets import SheetOptions, read_sheets
from irr_audit.join.counts import read_counts
from irr_audit.join.folder import (
    is_join_dir,
    read_join_dir,
    write_join_dir,
)
from irr_audit.join.join import JoinResult, join_sheets
from irr_audit.join.missingness import LOG_COLUMNS
from irr_audit.join.problems import NO_FULLY_CODED, problem
from irr_audit.join.table_input import read_agreement_table, read_category_counts
from irr_audit.metrics import samplesize
from irr_audit.metrics.alpha_bootstrap import DEFAULT_ALPHA_MIN
from irr_audit.metrics.intervals import IntervalSpec
from irr_audit.report.comparison import compare_joins, comparison_sections, drift_of_join
from irr_audit.report.console import UNWRAPPED, render_console, render_text, section_table
from irr_audit.report.html import render_html
from irr_audit.report.markdown import render_markdown, section_lines
from irr_audit.report.methods import methods_paragraph
from irr_audit.report.model import (
    MAX_BOOTSTRAP,
    AuditOptions,
    AuditReport,
    GroupSpec,
    build_counts_report,
    build_report,
)
from irr_audit.report.sections import recoding_sentence
from irr_audit.report.table_report import build_table_report
from irr_audit.rules.load import load_rule as load_rule_file
from irr_audit.rules.load import rule_from_mapping
from irr_audit.rules.model import Rule
from irr_audit.rules.runaliases import with_run_aliases
from irr_audit.rules.weights import WEIGHT_NAMES
from irr_audit.sample.folder import (
    SampleRef,
    check_sample_rule,
    read_sample,
    recoding_of,
    sample_report_for,
    with_ledger,
)

PathLike = str | os.PathLike[str]
RuleSource = Rule | PathLike | Mapping[str, Any]
Data = PathLike | Sequence[PathLike] | Mapping[str, pd.DataFrame] | pd.DataFrame
LimitsLike = Limits | Mapping[str, int | str] | None
Progress = Callable[[str], None]

METRIC_COLUMNS = (
    "value",
    "defined",
    "reason",
    "se",
    "ci_low",
    "ci_high",
    "ci_method",
    "bootstrap_se",
    "bootstrap_ci_low",
    "bootstrap_ci_high",
    "p_value",
)
NUMBER_COLUMNS = (
    "value",
    "se",
    "ci_low",
    "ci_high",
    "bootstrap_se",
    "bootstrap_ci_low",
    "bootstrap_ci_high",
    "p_value",
)
TABLE_READERS = {"table": read_agreement_table, "category_counts": read_category_counts}


# --- rules -------------------------------------------------------------------------


def load_rule(source: RuleSource, *, limits: LimitsLike = None) -> Rule:
    """A coding rule from a rule file (a path) or a mapping with the keys of a rule file.

    A mapping is validated exactly as a file is: it is written as YAML with sorted keys
    (``irr_audit.rules.load.rule_yaml``) and those bytes are read as a rule file's; the
    rule's digest is ``"sha256:"`` and the hex sha256 of those bytes. A :class:`Rule` is
    returned as it is. Raises :class:`~irr_audit.errors.RuleError` (or ``LimitError``)
    naming the key and the fix.
    """
    if isinstance(source, Rule):
        return source
    checked = _limits(limits)
    if isinstance(source, Mapping):
        return rule_from_mapping(source, checked)
    if isinstance(source, (str, os.PathLike)):
        return load_rule_file(Path(source), checked)
    raise UsageError(
        f"a rule is a path to a rule file or a mapping, not a {type(source).__name__}.",
        hint="pass rules/<rule>/v<version>.yaml, or a dict with the keys rule, version, scale and codes.",
        code="data-form",
    )


# --- the audit -----------------------------------------------------------------------


@dataclass(frozen=True)
class Pair:
    """One pair of coders of an audit: its table (rows the first coder, columns the second)
    and its coefficients on the units both coded (``metrics``, ``n`` units) and on the
    units both gave a valid code (``available_case``, ``n_available``)."""

    coders: tuple[str, str]
    n: int
    n_available: int
    table: pd.DataFrame
    metrics: pd.DataFrame
    available_case: pd.DataFrame


@dataclass(frozen=True, eq=False, repr=False)
class Audit:
    """The result of :func:`audit` or :func:`audit_counts`: a view of the report model
    (``report``, an :class:`~irr_audit.report.model.AuditReport`) that every renderer shows.

    ``join`` is the joined sheets (None for counts). ``summary_line`` and ``input_warnings``
    are what `irr-audit` prints on stderr; ``sections`` what `report BUNDLE` adds (the
    bundle's provenance and adjudication, kept apart from the independent statistics).
    Every DataFrame attribute is made anew on each access: changing it changes nothing here.
    """

    report: AuditReport
    join: JoinResult | None = None
    summary_line: str = ""
    input_warnings: tuple[str, ...] = ()
    sections: Mapping[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        units = self.report.units
        return (
            f"<Audit {self.rule.label}: {', '.join(self.coders)}; "
            f"{units['fully_coded']} of {units['total']} units fully coded>"
        )

    @property
    def rule(self) -> Rule:
        return self.report.rule

    @property
    def coders(self) -> tuple[str, ...]:
        return self.report.coders

    @property
    def categories(self) -> tuple[str, ...]:
        return self.report.categories

    @property
    def units(self) -> dict[str, int]:
        """total, fully_coded, missing and available_case units."""
        return dict(self.report.units)

    @property
    def warnings(self) -> tuple[str, ...]:
        """Every warning of the report (the input's, then the statistics', such as a kappa paradox)."""
        return tuple(self._document(include_disagreements=False)["warnings"])

    @property
    def table_kind(self) -> str:
        """``"pair"`` (two coders: rows the first, columns the second) or ``"coincidence"`` (three or more)."""
        return str(self.report.agreement["table_kind"])

    @property
    def table(self) -> pd.DataFrame:
        """The agreement table of the fully coded units, labelled with the rule's categories."""
        return _table_frame(self.report.agreement["table"], self.categories, self._table_axes())

    @property
    def metrics(self) -> pd.DataFrame:
        """Every coefficient on the fully coded units, one row each (docs/api.md, "Coefficients")."""
        return metric_frame(self.report.agreement["metrics"])

    @property
    def available_case(self) -> pd.DataFrame:
        """Every coefficient on the units with at least two valid codes (docs/statistics.md)."""
        return metric_frame(self.report.agreement["available_case"])

    @property
    def gwet_missing(self) -> pd.DataFrame:
        """Fleiss, Conger, AC1/AC2 and Brennan-Prediger by Gwet's missing-data convention, on every
        unit with at least one valid code, as irrCAC computes them (docs/statistics.md)."""
        return metric_frame(self.report.agreement["gwet_missing"])

    @property
    def pairs(self) -> tuple[Pair, ...]:
        """Every pair of coders, in the order of the coders."""
        return tuple(
            Pair(
                coders=(pair["coders"][0], pair["coders"][1]),
                n=pair["n"],
                n_available=pair["n_available"],
                table=_table_frame(pair["table"], self.categories, tuple(pair["coders"])),
                metrics=metric_frame(pair["metrics"]),
                available_case=metric_frame(pair["available_case"]),
            )
            for pair in self.report.agreement["pairs"]
        )

    @property
    def missingness(self) -> pd.DataFrame:
        """The missingness log: one row per input row or (unit, coder) cell that is not a valid
        code, with the columns sheet, coder, row, comment_id, raw_value, reason and detail
        (empty for counts, which carry no log)."""
        if self.join is None:
            return pd.DataFrame(
                {column: pd.Series(dtype="Int64" if column == "row" else str) for column in LOG_COLUMNS}
            )
        return self.join.log.copy()

    @property
    def problems(self) -> list[dict[str, Any]]:
        """What leaves this audit with nothing (or little) to score: each with ``kind``
        (no-fully-coded, mostly-invalid, no-shared-id), ``message``, ``values`` (raw value -> count)
        and ``fix``; empty for a sound audit (docs/api.md, "Problems")."""
        return copy.deepcopy(list(self.report.problems))

    @property
    def failed(self) -> bool:
        """True when no unit is fully coded: nothing to score, a failed check (`score` and `report` exit 1)."""
        return any(problem["kind"] == "no-fully-coded" for problem in self.report.problems)

    @property
    def drift(self) -> dict[str, Any] | None:
        """Agreement over windows of the coding order (``audit(..., windows=N)``), or None: the
        report's ``drift`` (docs/statistics.md, "Drift within an audit")."""
        found = self.sections.get("drift")
        return copy.deepcopy(found) if found is not None else None

    def with_comparison(self, comparison: Comparison) -> Audit:
        """This audit with ``comparison`` (this audit as B against an earlier A) in its report,
        under the key ``comparison`` (`irr-audit report B --compare A`)."""
        return dataclasses.replace(self, sections={**self.sections, "comparison": comparison.to_dict()})

    def to_dict(self, include_disagreements: bool = True) -> dict[str, Any]:
        """The report as data: exactly the document of `irr-audit report --format json`, or
        with ``include_disagreements=False`` of `irr-audit score --format json`. A copy:
        changing it changes nothing in the audit."""
        return copy.deepcopy(self._document(include_disagreements))

    def to_json(self, include_disagreements: bool = True) -> str:
        """:meth:`to_dict` as the byte-stable JSON text the command line writes."""
        return render_json(self._document(include_disagreements))

    def to_markdown(self) -> str:
        """The Markdown report of `report --format md`."""
        return render_markdown(self._document())

    def to_methods(self) -> str:
        """The methods paragraph of `report --format methods`: the audit in the sentences a published
        content analysis reports its reliability in (docs/statistics.md, "The methods paragraph")."""
        return methods_paragraph(self._document()) + "\n"

    def to_html(self) -> str:
        """The self-contained HTML page of `report --format html`."""
        return render_html(self._document())

    def to_text(self, width: int | None = 80, include_disagreements: bool = True) -> str:
        """The console report as plain text of ``width`` columns; None wraps no line (what
        `report --format text` writes into a file or a pipe)."""
        return render_text(self._document(include_disagreements), width)

    def console_report(self, include_disagreements: bool = True) -> Any:
        """The console report as a rich renderable, for a terminal (``rich.console.Console.print``)."""
        return render_console(self._document(include_disagreements))

    def _repr_html_(self) -> str:
        """The HTML report in a notebook, in a frame of its own: its styles and its search
        script stay inside it, and the page's Content-Security-Policy still applies."""
        return (
            f'<iframe title="irr-audit report" srcdoc="{html.escape(self.to_html(), quote=True)}" '
            'sandbox="allow-scripts" style="width: 100%; height: 640px; border: 1px solid #ccc"></iframe>'
        )

    def _document(self, include_disagreements: bool = True) -> dict[str, Any]:
        """The document every renderer shows; its values are the report's own (to_dict copies them)."""
        document = self.report.to_dict(include_disagreements=include_disagreements)
        if include_disagreements:
            document.update(self.sections)
        return document

    def _table_axes(self) -> tuple[str, str]:
        if self.table_kind == "pair":
            return self.coders[0], self.coders[1]
        return "category", "category"


def metric_frame(metrics: Mapping[str, Any]) -> pd.DataFrame:
    """Coefficients (as in the report's ``metrics``) as a DataFrame indexed by name.

    A coefficient given per category (``specific_agreement``) gives one row per category,
    named ``specific_agreement[yes]``. An undefined value is ``<NA>`` with ``defined``
    False and the ``reason``: never a number, never NaN."""
    names, rows = [], []
    for name, entry in metrics.items():
        if "defined" in entry:
            names.append(name)
            rows.append(_metric_row(entry))
        else:
            for category, each in entry.items():
                names.append(f"{name}[{category}]")
                rows.append(_metric_row(each))
    frame = pd.DataFrame(rows, columns=list(METRIC_COLUMNS), index=pd.Index(names, name="coefficient", dtype=object))
    dtypes = {column: "Float64" for column in NUMBER_COLUMNS}
    return frame.astype({**dtypes, "defined": bool, "reason": "string", "ci_method": "string"})


def _metric_row(entry: Mapping[str, Any]) -> list[Any]:
    ci = entry.get("ci") or (None, None)
    bootstrap = entry.get("bootstrap") or {}
    boot_ci = bootstrap.get("ci") or (None, None)
    return [
        entry.get("value"),
        bool(entry["defined"]),
        entry.get("reason"),
        entry.get("se"),
        ci[0],
        ci[1],
        entry.get("ci_method"),
        bootstrap.get("se"),
        boot_ci[0],
        boot_ci[1],
        entry.get("p_value"),
    ]


def _table_frame(table: list[list[Any]], categories: tuple[str, ...], axes: tuple[str, str]) -> pd.DataFrame:
    return pd.DataFrame(
        table,
        index=pd.Index(categories, name=axes[0], dtype=object),
        columns=pd.Index(categories, name=axes[1], dtype=object),
    )


def audit(
    data: Data,
    rule: RuleSource | None = None,
    *,
    bootstrap: int = 0,
    seed: int | None = None,
    group: str | Mapping[str, Sequence[str]] | None = None,
    against: str | None = None,
    id_column: str | None = None,
    code_column: str | None = None,
    worksheet: str | None = None,
    limits: LimitsLike = None,
    sample: PathLike | None = None,
    list_disagreements: bool = True,
    progress: Progress | None = None,
    windows: int | None = None,
    window_size: int | None = None,
    order_column: str | None = None,
    ci_level: float = 0.95,
    interval: str = "normal",
    test_against: float | None = None,
    weights: str | Sequence[Sequence[float]] | None = None,
    alpha_min: Sequence[float] | None = None,
    aliases: Mapping[str, str] | None = None,
    delimiter: str | None = None,
) -> Audit:
    """Audit the codes of two or more coders (docs/api.md).

    ``data`` is a list of sheet files (``rule`` needed), a folder `irr-audit join` wrote, an
    audit bundle (``rule`` optional; when given it must be the one the folder was made with),
    a mapping coder -> DataFrame (comment_id, code and any other columns), or one long
    DataFrame (comment_id, coder, code). ``sample`` (a folder `irr-audit sample` wrote)
    restricts sheets or DataFrames to its units, as `join --sample` does.
    ``list_disagreements=False`` counts the disagreements without listing them and leaves
    a bundle's adjudication unread (what `score` does). ``progress`` is called with the name
    of each step. ``windows`` (or ``window_size``) adds the drift over the coding order to the
    report (:attr:`Audit.drift`): each sheet's ``order_column`` (a number or an ISO 8601 time),
    else its row order; it is scored with ``bootstrap`` replicates (1000 when 0) and ``seed``
    (drawn and recorded when None). ``ci_level``, ``interval`` (normal or t), ``test_against``
    and ``weights`` (a name or a K x K matrix; default: the rule's ``weights``) set the
    statistics (docs/statistics.md). ``alpha_min`` are the minimums of Krippendorff's bootstrap
    (with ``bootstrap`` > 0): the report gives q(alpha < each); 0.667 and 0.800 when None.
    A bootstrap without a ``seed`` draws one, records it in the report and says so in
    :attr:`Audit.summary_line`: passing it back repeats the intervals exactly.
    ``aliases`` ({raw: code}) maps values the rule does not know to its codes for this audit
    only (`--alias`), recorded in the report. ``delimiter`` (`,` `;` `tab` `|`) splits `.csv`
    sheets (None: detected, README "Messy sheets").
    Raises an :class:`~irr_audit.errors.IrrAuditError` on bad input.
    """
    options, seed_note = _seeded(_audit_options(bootstrap, seed, group, against, list_disagreements, alpha_min))
    options = _with_statistics(options, ci_level, interval, test_against, weights)
    drift_options = _drift_options(windows, window_size, order_column, data)
    checked = _limits(limits)
    columns = SheetOptions(id_column, code_column, worksheet, parse_delimiter(delimiter), limits=checked)
    step = progress or _no_progress
    folder: Path | None = None
    folder_sample: dict[str, Any] | None = None  # what a join folder or a bundle keeps of its sample
    manifest: Manifest | None = None  # a bundle's
    if isinstance(data, (pd.DataFrame, Mapping)):
        loaded = with_run_aliases(_required_rule(rule, checked), aliases)
        reference, notes = _sample_reference(sample, loaded, checked)
        step("reading the DataFrames")
        sheets = long_frame_sheets(data, columns) if isinstance(data, pd.DataFrame) else frame_sheets(data, columns)
        step(f"joining {len(sheets)} sheets")
        result = join_sheets(sheets, loaded, sample_ids=list(reference.ids) if reference else None)
    else:
        inputs = _paths(data)
        check_exist([*_named(inputs, "sheet"), *_named(_path_of(rule), "rule"), *_named(_path_of(sample), "sample")])
        if len(inputs) == 1 and inputs[0].is_dir():
            folder = inputs[0]
        if folder is not None and aliases:
            raise UsageError(
                f"{folder} keeps the aliases of its run (if any); --alias applies to sheets being joined.",
                hint="join the sheets again with --alias, or add the aliases to the rule file.",
                code="usage-alias",
            )
        if folder is not None and sample is not None:
            raise UsageError(
                f"{folder} keeps its own units; sample restricts sheets to a sample's.",
                hint="leave out sample, or pass the sheets themselves.",
                code="usage-sample",
            )
        if folder is None and rule is not None:
            rule = with_run_aliases(load_rule(rule, limits=checked), aliases)
        reference, notes = _sample_reference(sample, rule, checked)
        joined = joined_inputs(inputs, rule, columns, list(reference.ids) if reference else None, step)
        result, folder_sample, manifest = joined.join, joined.sample_report, joined.manifest
    if reference is not None:
        result = reference.joined(result)  # the ledger's text beside each disagreement
    step(f"scoring {len(result.units):,} units" + (f", bootstrap of {bootstrap} replicates" if bootstrap else ""))
    section = sample_report_for(reference, result.rule) if reference else folder_sample
    report = dataclasses.replace(build_report(result, options), sample=section)
    sections = {}
    if folder is not None and manifest is not None and options.list_disagreements:  # its provenance and adjudication
        sections = bundle_report_sections(folder, manifest, report.to_dict())
    if drift_options is not None:
        step("scoring the drift over the coding order")
        sections["drift"] = _drift(result, drift_options, bootstrap, options.seed, columns)
    warnings = (*result.warnings, *(note.removeprefix("warning: ") for note in notes))
    return Audit(report, result, result.summary_line() + seed_note, warnings, sections)


def audit_counts(
    paths: PathLike | Sequence[PathLike],
    rule: RuleSource | None,
    *,
    bootstrap: int = 0,
    seed: int | None = None,
    group: str | Mapping[str, Sequence[str]] | None = None,
    against: str | None = None,
    limits: LimitsLike = None,
    ci_level: float = 0.95,
    interval: str = "normal",
    test_against: float | None = None,
    weights: str | Sequence[Sequence[float]] | None = None,
    alpha_min: Sequence[float] | None = None,
) -> Audit:
    """Audit unit-pattern counts (`join`'s counts.csv, or counts made in SQL; several files
    are shards and add up): every coefficient, with no missingness log and no list of
    disagreeing units (``join`` is None). ``group`` is refused: it needs the sheets. A bootstrap
    without a ``seed`` draws one, as :func:`audit` does."""
    options, seed_note = _seeded(_audit_options(bootstrap, seed, group, against, True, alpha_min))
    options = _with_statistics(options, ci_level, interval, test_against, weights)
    files = _paths(paths)
    check_exist([*_named(files, "counts"), *_named(_path_of(rule), "rule")])
    if not files:
        raise UsageError("no counts file to score.", hint="pass one or more counts files.", code="usage-no-input")
    if rule is None:
        raise UsageError(
            "--counts needs the rule the codes belong to.", hint="add --rule RULE.", code="usage-missing-rule"
        )
    loaded = load_rule(rule, limits=limits)
    merged = read_counts(files, loaded, _limits(limits))
    report = build_counts_report(loaded, merged.coders, merged.patterns, merged.units, merged.sources, options)
    if not report.units["fully_coded"]:
        nothing = problem(
            NO_FULLY_CODED,
            f"no unit is fully coded: the counts hold no unit with a code of {loaded.label} from every coder, "
            "so there is nothing to score.",
            {},
            "check that the counts files are those of this audit and rule.",
        )
        report = dataclasses.replace(report, problems=(nothing,))
    units = report.units
    line = (
        f"{units['total']} units from {len(merged.coders)} coders in {len(files)} counts file(s): "
        f"{units['fully_coded']} fully coded."
    )
    return Audit(report, None, line + seed_note)


# --- drift within an audit, and two audits compared ------------------------------------------

DRIFT_BOOTSTRAP = 1000  # replicates of the drift's intervals when the audit asks for none
MIN_COMPARE_BOOTSTRAP = 100  # a 95% percentile interval from fewer replicates rests on two or three values


@dataclass(frozen=True)
class DriftOptions:
    windows: int | None
    window_size: int | None
    order_column: str | None


def _drift_options(windows: Any, window_size: Any, order_column: str | None, data: Any) -> DriftOptions | None:
    """The drift asked for, checked before anything is read."""
    if windows is None and window_size is None:
        if order_column is not None:
            raise UsageError(
                "--order-column orders the units for the drift, which needs --windows N or --window-size U.",
                hint="add --windows 4, say, or leave --order-column out.",
                code="usage-drift",
            )
        return None
    if windows is not None and window_size is not None:
        raise UsageError(
            "give --windows or --window-size, not both.",
            hint="--windows N cuts the units into N windows; --window-size U into windows of U units.",
            code="usage-drift",
        )
    for option, value in (("--windows", windows), ("--window-size", window_size)):
        if value is not None and (not _whole(value) or value < 2):
            raise UsageError(
                f"{option} {value!r} is not a whole number of 2 or more.",
                hint="drift compares windows: at least 2 of them, of at least 2 units each.",
                code="usage-drift",
            )
    if order_column is not None and isinstance(data, (pd.DataFrame, Mapping)):
        raise UsageError(
            "order_column reads a column of the sheet files; DataFrames are read in their row order.",
            hint="sort each DataFrame by that column and leave order_column out.",
            code="usage-drift",
        )
    return DriftOptions(
        None if windows is None else int(windows), None if window_size is None else int(window_size), order_column
    )


def _drift(
    result: JoinResult, options: DriftOptions, bootstrap: int, seed: int | None, columns: SheetOptions
) -> dict[str, Any]:
    """The drift document of a join: each coder's order of the units from the order column or
    the sheet's row order."""
    positions = result.positions
    order = np.full(positions.shape, np.nan)
    for column, sheet in enumerate(result.sheets):
        coded = positions[:, column] >= 0
        if options.order_column is None:
            order[coded, column] = positions[coded, column]
        else:
            values = order_values(sheet, options.order_column, columns.worksheet, columns.limits, columns.delimiter)
            order[coded, column] = values[positions[coded, column]]
    return drift_of_join(
        result,
        order,
        order_name=f"column {options.order_column}" if options.order_column else "each sheet's row order",
        n_windows=options.windows,
        window_size=options.window_size,
        n_boot=int(bootstrap) or DRIFT_BOOTSTRAP,
        seed=_seed_or_drawn(seed),
    )


def _seed_or_drawn(seed: int | None) -> int:
    """The seed given, or one drawn now (the output records it, so the run can be repeated)."""
    return int(seed) if seed is not None else secrets.randbelow(2**32)


def _seeded(options: AuditOptions) -> tuple[AuditOptions, str]:
    """A bootstrap always has a seed: the one given, or one drawn now; with a drawn one, the
    sentence the summary line ends with, so that the user can repeat the run."""
    if options.n_boot == 0 or options.seed is not None:
        return options, ""
    seed = _seed_or_drawn(None)
    return dataclasses.replace(options, seed=seed), f" Bootstrap seed {seed} was drawn; --seed {seed} repeats it."


@dataclass(frozen=True, eq=False)
class Comparison:
    """Two audits compared (:func:`compare`): ``to_dict()`` is the document of
    `irr-audit compare A B --format json` (docs/api.md)."""

    document: Mapping[str, Any]

    @property
    def differences(self) -> pd.DataFrame:
        """One row per coefficient: a, b, difference (b - a), ci_low, ci_high, method."""
        rows = {name: _difference_row(entry) for name, entry in self.document["differences"].items()}
        return _difference_frame(rows)

    @property
    def per_category(self) -> pd.DataFrame:
        """One row per (category, coefficient), named ``kappa[yes]``, as :attr:`differences`."""
        rows = {
            f"{name}[{category}]": _difference_row(entry)
            for category, entries in self.document["per_category"].items()
            for name, entry in entries.items()
        }
        return _difference_frame(rows)

    def to_dict(self) -> dict[str, Any]:
        return copy.deepcopy(dict(self.document))

    def to_json(self) -> str:
        return render_json(dict(self.document))

    def to_markdown(self) -> str:
        lines = ["# Two audits compared"]
        for section in comparison_sections({"comparison": self.document}):
            lines += section_lines(section)
        return "\n".join(lines) + "\n"

    def to_text(self, width: int | None = 80) -> str:
        """The comparison as plain text of ``width`` columns; None wraps no line."""
        console = Console(width=UNWRAPPED if width is None else width, record=True, file=StringIO())
        console.print(Group(*(section_table(s) for s in comparison_sections({"comparison": self.document}))))
        return console.export_text()


def _difference_row(entry: Mapping[str, Any]) -> list[Any]:
    ci = entry.get("ci") or (None, None)
    return [entry.get("a"), entry.get("b"), entry.get("difference"), ci[0], ci[1], entry.get("reason"), entry["method"]]


def _difference_frame(rows: Mapping[str, list[Any]]) -> pd.DataFrame:
    columns = ["a", "b", "difference", "ci_low", "ci_high", "reason", "method"]
    frame = pd.DataFrame(
        list(rows.values()), columns=columns, index=pd.Index(list(rows), name="coefficient", dtype=object)
    )
    numbers = {column: "Float64" for column in ("a", "b", "difference", "ci_low", "ci_high")}
    return frame.astype({**numbers, "reason": "string", "method": "string"})


def compare(
    a: Audit | PathLike,
    b: Audit | PathLike,
    *,
    bootstrap: int = 2000,
    seed: int | None = None,
    limits: LimitsLike = None,
) -> Comparison:
    """The difference (B - A) of every coefficient both audits report, per category too, with a
    percentile bootstrap interval: paired over the units both fully coded (matched by comment
    id), independent over the others (docs/statistics.md, "Two audits compared"). ``a`` and ``b``
    are audits or paths of join folders or bundles. ``seed`` is drawn and recorded when None.
    The document also states the units' relation (same, overlapping, disjoint) and what changed
    in the rule (`irr-audit rules diff`). No verdict: numbers and intervals only."""
    if not _whole(bootstrap) or not MIN_COMPARE_BOOTSTRAP <= bootstrap <= MAX_BOOTSTRAP:
        raise UsageError(
            f"--bootstrap {bootstrap!r} is not a number of replicates from {MIN_COMPARE_BOOTSTRAP} "
            f"to {MAX_BOOTSTRAP:,}.",
            hint="the comparison's intervals are percentile intervals of the replicates: use 2000, say.",
            code="usage-bootstrap",
        )
    _audit_options(0, seed, None, None, False)  # the seed's checks
    check_exist([(Path(side), "input") for side in (a, b) if isinstance(side, (str, os.PathLike))])
    sides = [_comparable(side, limits, name) for side, name in ((a, "A"), (b, "B"))]
    joins = [side.join for side, _ in sides]
    if joins[0] is None or joins[1] is None:  # _comparable refused counts already
        raise AssertionError("a compared audit has its join")
    document = compare_joins(
        joins[0],
        joins[1],
        n_boot=int(bootstrap),
        seed=_seed_or_drawn(seed),
        sources=(sides[0][1], sides[1][1]),
    )
    return Comparison(document)


def _comparable(side: Audit | PathLike, limits: LimitsLike, name: str) -> tuple[Audit, str]:
    """An audit with its units (a join folder or bundle is audited), and how to name it."""
    if isinstance(side, Audit):
        if side.join is None:
            raise UsageError(
                f"audit {name} was made from unit-pattern counts, which carry no comment ids to match units by.",
                hint="compare audits of sheets, join folders or bundles.",
                code="usage-compare",
            )
        return side, f"{side.rule.label}, coders {', '.join(side.coders)}"
    if not isinstance(side, (str, os.PathLike)) or not Path(side).is_dir():
        raise UsageError(
            f"{name} ({side}) is not a join folder or an audit bundle.",
            hint="pass the folder irr-audit join --out wrote, or a bundle irr-audit freeze made.",
            code="usage-compare",
        )
    return audit(side, limits=limits, list_disagreements=False), str(side)


def audit_table(
    path: PathLike,
    rule: RuleSource | None,
    *,
    kind: str = "table",
    bootstrap: int = 0,
    seed: int | None = None,
    limits: LimitsLike = None,
    alpha_min: Sequence[float] | None = None,
) -> Audit:
    """Audit a published table: ``kind="table"`` (a K x K agreement table, rows the first coder,
    `score --table`) or ``kind="category_counts"`` (subjects x categories, Fleiss 1971's layout,
    `score --category-counts`). The report has the structure of every report; what the table does
    not determine is undefined with the reason "not determined by a table" and listed under
    ``input.not_determined`` (docs/statistics.md, "Tables as input")."""
    if kind not in TABLE_READERS:
        raise UsageError(
            f"kind={kind!r} is not a table kind.", hint="use kind='table' or kind='category_counts'.", code="data-form"
        )
    options, seed_note = _seeded(_audit_options(bootstrap, seed, None, None, True, alpha_min))
    if rule is None:
        flag = "--table" if kind == "table" else "--category-counts"
        raise UsageError(
            f"{flag} needs the rule the codes belong to.", hint="add --rule RULE.", code="usage-missing-rule"
        )
    loaded = load_rule(rule, limits=limits)
    table = TABLE_READERS[kind](Path(path), loaded)
    report = build_table_report(loaded, table, options)
    units = report.units
    line = f"{units['total']} units from a {'K x K table' if kind == 'table' else 'subjects x categories table'}."
    return Audit(report, None, line + seed_note)


# --- the labels the study goes on to use ---------------------------------------------------


def labels(bundle: PathLike, *, limits: LimitsLike = None) -> pd.DataFrame:
    """The final labels of an audit bundle (`irr-audit labels`, README "Final labels"): one
    row per unit with ``comment_id``, ``coder:<name>`` for each coder (the valid code, else
    empty), ``agreed_code`` (where every coder gave the same valid code),
    ``adjudicated_code`` (the decision on record for a disagreement), ``final_code``, and
    ``final`` (``agreed``, ``adjudicated`` or ``undecided``) with ``why``. A unit without a
    final label is ``undecided``, its ``final_code`` empty and ``why`` saying what is missing.
    The bundle and its adjudication records are checked first, as `adjudicate` checks them."""
    return bundle_labels(Path(bundle), _limits(limits))


# --- the folder `join` writes ------------------------------------------------------------


@dataclass(frozen=True)
class JoinFolder:
    """What :func:`join_folder` wrote: the join (``result``), the files, the files of the
    folder it replaced that were not a join's (``replaced``, with ``force``) and notes for people."""

    result: JoinResult
    written: tuple[Path, ...]
    replaced: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def summary_line(self) -> str:
        return self.result.summary_line()

    @property
    def warnings(self) -> tuple[str, ...]:
        return self.result.warnings

    @property
    def problems(self) -> list[dict[str, Any]]:
        """As :attr:`Audit.problems`: what leaves the join with nothing (or little) to score."""
        return copy.deepcopy(self.result.problems)

    @property
    def failed(self) -> bool:
        """True when no unit is fully coded (`join` writes the folder and names the problem; `score` exits 1)."""
        return any(problem["kind"] == "no-fully-coded" for problem in self.result.problems)


def join_folder(
    sheets: Sequence[PathLike],
    rule: PathLike | Mapping[str, Any] | None,
    out: PathLike,
    *,
    sample: PathLike | None = None,
    force: bool = False,
    id_column: str | None = None,
    code_column: str | None = None,
    worksheet: str | None = None,
    limits: LimitsLike = None,
    progress: Progress | None = None,
    aliases: Mapping[str, str] | None = None,
    delimiter: str | None = None,
) -> JoinFolder:
    """Join coding sheets and write the folder `irr-audit join --out` writes (README, "join"),
    as one run: built beside ``out`` and swapped in whole. ``rule`` is a rule file or a
    mapping (the folder keeps its bytes as rule.yaml). A folder holding files join did not
    write is refused unless ``force``; an output that would overwrite an input, always.
    ``aliases`` ({raw: code}, `--alias`) map values the rule does not know for this run; summary.json
    records them (``run_aliases``) and `score DIR` applies them again. ``delimiter`` as in :func:`audit`."""
    checked = _limits(limits)
    out_path = Path(out)
    check_exist(
        [*_named(_paths(sheets), "sheet"), *_named(_path_of(rule), "rule"), *_named(_path_of(sample), "sample")]
    )
    if rule is None:
        raise UsageError(
            "join needs the rule the sheets were coded under.", hint="add --rule RULE.", code="usage-missing-rule"
        )
    rule_files = [] if isinstance(rule, Mapping) else [Path(rule)]
    sample_folder = Path(sample) if sample is not None else None
    refuse_unsafe_outputs(files_read([*_paths(sheets), *rule_files, sample_folder]), folders=[out_path])
    loaded = with_run_aliases(load_rule(rule, limits=checked), aliases)
    reference, notes = _sample_reference(sample_folder, loaded, checked)
    sample_ids = list(reference.ids) if reference else None
    columns = SheetOptions(id_column, code_column, worksheet, parse_delimiter(delimiter), limits=checked)
    result = joined_inputs(_paths(sheets), loaded, columns, sample_ids, progress or _no_progress).join
    written = write_join_dir(
        result,
        loaded.source,  # the bytes parsed, read once
        out_path,
        columns,
        sample=sample_folder,
        sample_ids=sample_ids,
        sample_report=sample_report_for(reference, loaded) if reference else None,
        force=force,
        inputs=rule_files,
    )
    recoding = recoding_of(reference, loaded) if reference else None
    if recoding:  # said on stderr too: the sample's units, coded again under a revised rule
        notes = [*notes, recoding_sentence(recoding)]
    return JoinFolder(result, tuple(written.written), tuple(written.removed), tuple(notes))


def import_export(
    format: str,
    exports: PathLike | Sequence[PathLike],
    rule: RuleSource,
    out: PathLike,
    *,
    question: str | None = None,
    id_field: str | None = None,
    text_field: str | None = None,
    force: bool = False,
    limits: LimitsLike = None,
) -> ImportRun:
    """Turn an annotation tool's export into coding sheets (`irr-audit import`, README "Import"):
    ``format`` is one of label-studio, label-studio-min, label-studio-csv, prodigy, doccano,
    argilla, model; ``exports`` one file or several of that format (doccano: one per user);
    ``out`` receives sheets/<coder>.csv, import_log.csv, import_log.jsonl and import.json, as
    one run. ``question`` names the question the rule codes (Label Studio's from_name,
    Argilla's question); ``id_field`` the key of the comment id (default comment_id).
    Returns the run: ``.result.sheets``, ``.result.log``, ``.result.outcomes``, the files written."""
    checked = _limits(limits)
    paths = _paths(exports)
    rule_files = [Path(rule)] if isinstance(rule, (str, os.PathLike)) else []
    check_exist([*((path, "export") for path in paths), *((path, "rule") for path in rule_files)])
    return import_exports(
        format,
        paths,
        load_rule(rule, limits=checked),
        Path(out),
        ImportOptions(question, id_field, text_field),
        inputs=rule_files,
        force=force,
        limits=checked,
    )


# --- inputs -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Joined:
    """Audit input joined in memory, with what a report shows of the sample behind a join
    folder or a bundle (None: no sample) and a bundle's manifest (None: not a bundle)."""

    join: JoinResult
    sample_report: dict[str, Any] | None = None
    manifest: Manifest | None = None


def joined_inputs(
    inputs: list[Path],
    rule: RuleSource | None,
    columns: SheetOptions,
    sample_ids: list[str] | None = None,
    progress: Progress | None = None,
) -> Joined:
    """Sheets + rule (restricted to a sample's ids when given), a folder written by
    `join`, or an audit bundle, joined in memory."""
    step = progress or _no_progress
    if not inputs:
        raise UsageError(
            "nothing to score.",
            hint="pass a join folder, two or more sheets with --rule, or --counts.",
            code="usage-no-input",
        )
    if len(inputs) == 1 and inputs[0].is_dir():
        folder = inputs[0]
        if is_bundle(folder):  # an audit bundle (irr-audit freeze)
            frozen = read_bundle(folder, columns.limits)
            section = sample_report_for(frozen.sample, frozen.join.rule) if frozen.sample else None
            found = Joined(frozen.join, section, frozen.manifest)
        elif is_join_dir(folder):
            kept = read_join_dir(folder, columns.limits)
            join = join_sheets(kept.sheets, kept.rule, sample_ids=kept.sample_ids)
            found = Joined(with_ledger(join, kept.sample_folder, kept.sample_ids, columns.limits), kept.sample_report)
        else:
            raise UsageError(
                f"{folder} is a folder but not one written by irr-audit join (it has no {JOIN_RECORD}).",
                hint="pass the folder given to join --out, or the sheets themselves with --rule.",
                code="usage-not-a-join-dir",
            )
        _check_same_rule(rule, found.join.rule, folder, columns.limits)
        return found
    loaded = _required_rule(rule, columns.limits)
    step(f"reading {len(inputs)} sheets")
    sheets = read_sheets(inputs, columns)
    step(f"joining {len(sheets)} sheets")
    return Joined(join_sheets(sheets, loaded, sample_ids=sample_ids))


def _named(paths: list[Path], kind: str) -> list[tuple[Path, str]]:
    """Input paths with their kind, for check_exist: one path alone may be a folder or a bundle."""
    return [(path, "input" if kind == "sheet" and len(paths) == 1 else kind) for path in paths]


def _path_of(source: Any) -> list[Path]:
    """The path a rule or sample argument names, if it is one."""
    return [Path(source)] if isinstance(source, (str, os.PathLike)) else []


def _paths(data: Any) -> list[Path]:
    if isinstance(data, (str, os.PathLike)):
        return [Path(data)]
    if isinstance(data, Sequence) and all(isinstance(item, (str, os.PathLike)) for item in data):
        return [Path(item) for item in data]
    raise UsageError(
        f"cannot audit a {type(data).__name__}.",
        hint="pass sheet paths, a join folder, a bundle, a mapping {coder: DataFrame} or one long DataFrame "
        "(comment_id, coder, code).",
        code="data-form",
    )


def _required_rule(rule: RuleSource | None, limits: Limits) -> Rule:
    if rule is None:
        raise UsageError(
            "sheets need the rule they were coded under.",
            hint="add --rule rules/<rule>/v<version>.yaml.",
            code="usage-missing-rule",
        )
    return load_rule(rule, limits=limits)


def _check_same_rule(rule: RuleSource | None, used: Rule, folder: Path, limits: Limits) -> None:
    """A rule given with a folder must be the rule the folder was made with."""
    if rule is None:
        return
    given = load_rule(rule, limits=limits)
    if given.digest != used.digest:
        named = f"--rule {rule}" if isinstance(rule, (str, os.PathLike)) else f"the rule {given.source_name}"
        raise UsageError(
            f"{named} ({given.label}, {given.digest[:19]}...) is not the rule {folder} was made with "
            f"({used.label}, {used.digest[:19]}...).",
            hint="leave --rule out: the folder keeps its own copy of the rule.",
            code="usage-rule-mismatch",
        )


def _sample_reference(
    sample: PathLike | None, rule: RuleSource | None, limits: Limits = DEFAULT_LIMITS
) -> tuple[SampleRef | None, list[str]]:
    """The sample (`join --sample`) the units are restricted to, checked against the rule, and notes."""
    if sample is None:
        return None, []
    reference = read_sample(Path(sample), limits)
    return reference, check_sample_rule(reference, _required_rule(rule, limits))


def _audit_options(
    bootstrap: int,
    seed: int | None,
    group: Any,
    against: str | None,
    list_disagreements: bool,
    alpha_min: Sequence[float] | None = None,
) -> AuditOptions:
    """The options of an audit, checked before anything is read (AuditOptions checks the bootstrap and seed)."""
    if against is not None and group is None:
        raise UsageError(
            "--against needs --group.", hint="for example --group humans=ann,ben --against model.", code="usage-group"
        )
    if alpha_min is not None and bootstrap == 0:
        raise UsageError(
            "--alpha-min needs --bootstrap: q(alpha < alpha_min) comes from Krippendorff's bootstrap.",
            hint="add --bootstrap 2000 --seed 1 (any seed).",
            code="usage-alpha-min",
        )
    return AuditOptions(
        n_boot=bootstrap,
        seed=seed,
        group=_group(group, against),
        list_disagreements=list_disagreements,
        alpha_min=checked_alpha_min(alpha_min),
    )


def _with_statistics(
    options: AuditOptions, ci_level: object, interval: object, test_against: object, weights: object
) -> AuditOptions:
    """The interval, test and weights options, checked before anything is read (a weights
    matrix is checked against the rule's codes when the rule is known)."""
    try:
        spec = IntervalSpec(ci_level, interval, test_against)  # type: ignore[arg-type]
    except ValueError as error:
        raise UsageError(
            f"{error}.",
            hint="for example ci_level=0.9 (--ci-level 0.9), interval='t' (--interval t), --test-against 0.6.",
            code="usage-interval",
        ) from None
    if isinstance(weights, str):
        if weights not in WEIGHT_NAMES:
            raise UsageError(
                f"--weights {weights!r} is not a weighting.",
                hint=f"use one of {', '.join(WEIGHT_NAMES)} (or a matrix in the rule's weights key).",
                code="usage-weights",
            )
        chosen: str | tuple[tuple[float, ...], ...] | None = weights
    elif weights is None:
        chosen = None
    else:
        try:
            chosen = tuple(tuple(float(cell) for cell in row) for row in weights)  # type: ignore[attr-defined]
        except (TypeError, ValueError):
            raise UsageError(
                f"weights={weights!r} is neither a weighting's name nor a matrix of numbers.",
                hint="for example weights='quadratic' or weights=[[1, 0.5], [0.5, 1]].",
                code="usage-weights",
            ) from None
    return dataclasses.replace(options, intervals=spec, weights=chosen)


def checked_alpha_min(alpha_min: Sequence[float] | None) -> tuple[float, ...]:
    """The minimums of Krippendorff's bootstrap, each a number in [-1, 1], in the order given and
    each once; Krippendorff's 0.667 and 0.800 when none is given."""
    if alpha_min is None:
        return DEFAULT_ALPHA_MIN
    if isinstance(alpha_min, (str, bytes)) or not isinstance(alpha_min, Sequence):
        alpha_min = [alpha_min]  # type: ignore[list-item]
    out: list[float] = []
    for item in alpha_min:
        number = _real(item)
        if number is None or not -1 <= number <= 1:
            raise UsageError(
                f"--alpha-min {item!r} is not a value alpha can take (a number from -1 to 1).",
                hint="for example --alpha-min 0.667 --alpha-min 0.8.",
                code="usage-alpha-min",
            )
        if number not in out:
            out.append(number)
    if not out:
        return DEFAULT_ALPHA_MIN
    return tuple(out)


def _real(item: object) -> float | None:
    if isinstance(item, bool) or not isinstance(item, numbers.Real):
        return None
    number = float(item)
    return number if math.isfinite(number) else None


def _whole(number: object) -> bool:
    return isinstance(number, numbers.Integral) and not isinstance(number, bool)


def _group(group: Any, against: str | None) -> GroupSpec | None:
    if group is None:
        return None
    if isinstance(group, str):
        return GroupSpec.parse(group, against)
    if isinstance(group, Mapping) and len(group) == 1 and isinstance(against, str):
        ((name, members),) = group.items()
        if isinstance(name, str) and name.strip() and not isinstance(members, str) and isinstance(members, Sequence):
            coders = tuple(members)
            if len(coders) >= 2 and all(isinstance(coder, str) for coder in coders):
                return GroupSpec.of(name.strip(), coders, against)
    raise UsageError(
        f"group={group!r} with against={against!r} is not a group of two or more coders against one coder.",
        hint="for example group={'humans': ['ann', 'ben', 'cat']}, against='model' (or group='humans=ann,ben,cat').",
        code="usage-group",
    )


def _limits(limits: LimitsLike) -> Limits:
    """Limits, or a mapping of limit names to values (``{"xlsx_cells": "50M"}``), as --limit takes them."""
    if limits is None:
        return DEFAULT_LIMITS
    if isinstance(limits, Limits):
        return limits
    if isinstance(limits, Mapping):
        return parse_limit_options([f"{name}={value}" for name, value in limits.items()])
    raise UsageError(
        f"limits is a mapping of limit names to values, not a {type(limits).__name__}.",
        hint="for example limits={'xlsx_cells': '50M', 'file_bytes': '8GiB'}.",
        code="usage-limit",
    )


def _no_progress(step: str) -> None:
    """Progress is shown by the caller that asks for it (the command line, on a terminal)."""


# --- planning the sample (before an audit) ----------------------------------------------------


def plan_alpha(
    minimum: float, *, codes: int | None = None, smallest_share: float | None = None, level: float = 0.05
) -> samplesize.SampleSize:
    """Units two coders must code to show Krippendorff's alpha >= ``minimum`` at significance
    ``level``, given ``codes`` equally likely codes or the least frequent code's ``smallest_share``
    (Krippendorff 2019, ch. 12; `irr-audit plan alpha`)."""
    return samplesize.alpha_units(minimum, level, codes=codes, smallest_share=smallest_share)


def plan_kappa(
    expected: float,
    minimum: float,
    *,
    prevalence: float | None = None,
    shares: Sequence[float] | None = None,
    rates: tuple[float, float] | None = None,
    level: float = 0.05,
    power: float = 0.80,
) -> samplesize.SampleSize:
    """Units for a test of kappa = ``minimum`` that finds ``expected`` with ``power``
    (`irr-audit plan kappa`): Donner & Eliasziw (1992), two-sided, for a binary rule's
    ``prevalence`` or K codes' ``shares``; Cantor (1996), one-sided, when the two coders'
    ``rates`` of a binary code differ."""
    if rates is not None:
        if prevalence is not None or shares is not None:
            raise UsageError(
                "--rates replaces --prevalence and --shares.",
                hint="give the two coders' rates of the code, or one shared prevalence.",
                code="usage-plan",
            )
        return samplesize.cantor_kappa_units(expected, minimum, rates=rates, level=level, power=power)
    return samplesize.kappa_units(expected, minimum, prevalence=prevalence, shares=shares, level=level, power=power)


def plan_half_width(
    half_width: float,
    expected: float,
    prevalence: float,
    *,
    level: float = 0.05,
    seed: int | None = None,
    simulations: int = 4000,
) -> samplesize.SampleSize:
    """Units for a (1 - ``level``) interval of Cohen's kappa no wider than +/- ``half_width``: by the
    large-sample SE (Fleiss, Cohen & Everitt 1969), or with a ``seed`` by simulation, whose answer
    carries its Monte Carlo SE (`figures["units_mc_se"]`; `irr-audit plan half-width`)."""
    if seed is None:
        return samplesize.half_width_units(expected, prevalence, half_width, level)
    return samplesize.simulated_half_width_units(
        expected, prevalence, half_width, level, seed=seed, simulations=simulations
    )


def plan_pilot(
    data: Data,
    half_width: float,
    *,
    rule: RuleSource | None = None,
    bootstrap: int = 0,
    seed: int | None = None,
    limits: LimitsLike = None,
) -> samplesize.PilotPlan:
    """A pilot audit (a join folder, a bundle, or sheets with ``rule``): per coefficient, the
    half-width its 95% interval reached and the units to add for ``half_width``
    (`irr-audit plan pilot`). ``bootstrap`` and ``seed`` give an SE to the coefficients that
    have no analytic one."""
    samplesize.pilot_units(1, {}, half_width)  # the half-width is checked before anything is read
    pilot = audit(data, rule, bootstrap=bootstrap, seed=seed, limits=limits, list_disagreements=False)
    frame = pilot.metrics
    standard_errors = {
        str(name): (_number(row["value"]), _number(row["se"]), _number(row["bootstrap_se"]))
        for name, row in frame.iterrows()
    }
    source = (
        ", ".join(os.fspath(path) for path in _paths(data)) if not isinstance(data, (Mapping, pd.DataFrame)) else ""
    )
    return samplesize.pilot_plan(int(pilot.units["fully_coded"]), standard_errors, half_width, source)


def _number(value: Any) -> float | None:
    return None if value is None or pd.isna(value) else float(value)
