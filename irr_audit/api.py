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
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard, Union, cast

import numpy as np

from irr_audit._lazy import LazyModule
from irr_audit._readonly import read_only
from irr_audit.errors import UsageError
from irr_audit.io.delimiter import parse_delimiter
from irr_audit.io.files import check_exist
from irr_audit.io.limits import DEFAULT_LIMITS, Limits, parse_limit_options
from irr_audit.io.outputs import refuse_unsafe_outputs, render_json
from irr_audit.io.runfolder import JOIN_RECORD, files_read, is_bundle
from irr_audit.io.sheets import ColumnChoice, SheetOptions, read_sheets, refuse_non_text_options
from irr_audit.join.join import JoinResult, join_sheets, read_only_join
from irr_audit.join.missingness import LOG_COLUMNS
from irr_audit.join.problems import NO_FULLY_CODED, problem
from irr_audit.metrics.alpha_bootstrap import DEFAULT_ALPHA_MIN
from irr_audit.metrics.intervals import IntervalSpec
from irr_audit.report.jsonreport import render_report_json, report_json_chunks
from irr_audit.report.model import (
    MAX_BOOTSTRAP,
    AuditOptions,
    AuditReport,
    GroupSpec,
    build_counts_report,
    build_report,
    read_only_report,
)
from irr_audit.rules.codebook import Codebook, load_codebook
from irr_audit.rules.load import MAPPING_NAME, rule_of
from irr_audit.rules.model import Rule
from irr_audit.rules.runaliases import with_run_aliases
from irr_audit.rules.weights import WEIGHT_NAMES

if TYPE_CHECKING:
    import pandas as pd

    from irr_audit.bundle.manifest import Manifest
    from irr_audit.importers import run as importers_run
    from irr_audit.join import variables as codebook_join
    from irr_audit.join.variables import CodebookJoin, VariableJoin
    from irr_audit.metrics import samplesize
    from irr_audit.sample.folder import SampleRef
else:  # what the public functions' and classes' annotations name, imported when typing.get_type_hints reads them
    pd = LazyModule("pandas")
    importers_run = LazyModule("irr_audit.importers.run")
    codebook_join = LazyModule("irr_audit.join.variables")
    samplesize = LazyModule("irr_audit.metrics.samplesize")

# Only what `score` and `join` on sheets need is imported here: the renderers (rich, jinja2),
# pandas (the DataFrames of this API, the DataFrame input, the log as a frame), bundles,
# samples, importers and comparisons are imported by the functions that use them, so that a
# command loads what it needs (README, "Speed at scale": start-up).
PathLike = str | os.PathLike[str]
RuleSource = Rule | PathLike | Mapping[str, Any]
# pandas named, not imported: Union takes the name as text
Data = Union[PathLike, Sequence[PathLike], Mapping[str, "pd.DataFrame"], "pd.DataFrame"]  # noqa: UP007
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
TABLE_KINDS = ("table", "category_counts")
SHEET_OPTIONS = ("--id-column", "--code-column", "--worksheet", "--delimiter")  # how sheets are read


# --- rules -------------------------------------------------------------------------


def load_rule(source: RuleSource, *, limits: LimitsLike = None) -> Rule:
    """A coding rule from a rule file (a path) or a mapping with the keys of a rule file.

    A mapping is validated exactly as a file is: it is written as YAML with sorted keys
    (``irr_audit.rules.load.rule_yaml``) and those bytes are read as a rule file's; the
    rule's digest is ``"sha256:"`` and the hex sha256 of those bytes. A :class:`Rule` is
    returned as it is. Raises :class:`~irr_audit.errors.RuleError` (or ``LimitError``)
    naming the key and the fix.
    """
    return source if isinstance(source, Rule) else rule_of(source, _limits(limits))


# --- the audit -----------------------------------------------------------------------


# eq=False (as Audit): the generated == compared the DataFrames field by field, whose truth value
# pandas refuses (ValueError: `pair in pairs` failed), and hash() failed on them; identity is kept
@dataclass(frozen=True, eq=False)
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

    def __post_init__(self) -> None:
        # read-only at every depth: to_dict() and every renderer show the report's data and these
        # sections as they are, so a value changed in them would be shown as the audit's own
        object.__setattr__(self, "report", read_only_report(self.report))
        object.__setattr__(self, "sections", read_only(dict(self.sections)))
        if self.join is not None:
            read_only_join(self.join)  # the disagreements are listed from its arrays

    def __setstate__(self, state: dict[str, Any]) -> None:
        # a deep copy copies the read-only data as plain dicts and lists: made read-only again
        self.__dict__.update(state, report=read_only_report(state["report"]), sections=read_only(state["sections"]))

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
    def units(self) -> dict[str, int | None]:
        """total, fully_coded, missing and available_case units (missing None from a K x K table)."""
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
        import pandas as pd  # noqa: PLC0415 (loaded on use)

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
        if not isinstance(comparison, Comparison):
            raise UsageError(
                f"with_comparison takes a Comparison, not a {type(comparison).__name__}.",
                hint="pass what irr_audit.compare(a, b) returns, this audit as b.",
                code="usage-compare",
            )
        if "variables" in comparison.document:  # its report draws one rule's comparison
            raise UsageError(
                "a comparison of two codebook bundles, variable by variable, is not put into one audit's report.",
                hint="show it on its own: irr-audit compare A B (Comparison.to_text() or to_markdown()).",
                code="usage-compare",
            )
        return dataclasses.replace(self, sections={**self.sections, "comparison": comparison.to_dict()})

    def to_dict(self, include_disagreements: bool = True) -> dict[str, Any]:
        """The report as data: exactly the document of `irr-audit report --format json`, or
        with ``include_disagreements=False`` of `irr-audit score --format json`. A copy:
        changing it changes nothing in the audit."""
        return copy.deepcopy(self._document(include_disagreements, listed=True))

    def to_json(self, include_disagreements: bool = True) -> str:
        """:meth:`to_dict` as the byte-stable JSON text the command line writes."""
        return render_report_json(self._document(include_disagreements))

    def to_json_chunks(self, include_disagreements: bool = True) -> Iterator[bytes]:
        """:meth:`to_json` in UTF-8, in pieces to write one after the other: a report listing
        millions of disagreements is never held whole (what `report --format json` writes)."""
        return report_json_chunks(self._document(include_disagreements))

    def to_markdown(self) -> str:
        """The Markdown report of `report --format md`."""
        from irr_audit.report.markdown import render_markdown  # noqa: PLC0415 (loaded on use)

        return render_markdown(self._document())

    def to_methods(self) -> str:
        """The methods paragraph of `report --format methods`: the audit in the sentences a published
        content analysis reports its reliability in (docs/statistics.md, "The methods paragraph")."""
        from irr_audit.report.methods import methods_paragraph  # noqa: PLC0415 (loaded on use)

        return methods_paragraph(self._document()) + "\n"

    def to_html(self) -> str:
        """The self-contained HTML page of `report --format html`."""
        from irr_audit.report.html import render_html  # noqa: PLC0415 (loaded on use)

        return render_html(self._document())

    def to_text(self, width: int | None = 80, include_disagreements: bool = True) -> str:
        """The console report as plain text of ``width`` columns; None wraps no line (what
        `report --format text` writes into a file or a pipe)."""
        width = text_width(width)
        if width is None:  # what rich writes at unlimited width, without loading rich's console
            from irr_audit.report.plaintext import render_plain  # noqa: PLC0415 (loaded on use)

            return render_plain(self._document(include_disagreements))
        from irr_audit.report.console import render_text  # noqa: PLC0415 (loaded on use)

        return render_text(self._document(include_disagreements), width)

    def console_report(self, include_disagreements: bool = True) -> Any:
        """The console report as a rich renderable, for a terminal (``rich.console.Console.print``)."""
        from irr_audit.report.console import render_console  # noqa: PLC0415 (loaded on use)

        return render_console(self._document(include_disagreements))

    def _repr_html_(self) -> str:
        """The HTML report in a notebook (:func:`framed_report`)."""
        return framed_report(self.to_html())

    def _document(self, include_disagreements: bool = True, *, listed: bool = False) -> dict[str, Any]:
        """The document every renderer shows; its values are the report's own (to_dict copies them),
        the disagreements a lazy sequence unless ``listed``."""
        include_disagreements = _yes_or_no(include_disagreements, "include_disagreements")
        document = self.report.to_dict(include_disagreements=include_disagreements, listed=listed)
        if include_disagreements:
            document.update(self.sections)
        return document

    def _table_axes(self) -> tuple[str, str]:
        if self.table_kind == "pair":
            return self.coders[0], self.coders[1]
        return "category", "category"


def framed_report(page: str) -> str:
    """An HTML report as a notebook shows it, in a frame of its own: its styles and its search
    script stay inside it, and the page's Content-Security-Policy still applies."""
    return (
        f'<iframe title="irr-audit report" srcdoc="{html.escape(page, quote=True)}" '
        'sandbox="allow-scripts" style="width: 100%; height: 640px; border: 1px solid #ccc"></iframe>'
    )


def text_width(width: object) -> int | None:
    """A plain-text report's width: a whole number of columns from 1 up, or None (no line wrapped).
    rich takes any value as given: 0 or less renders an empty report, a float or a str fails inside it."""
    if width is None:
        return None
    if _whole(width) and int(cast(int, width)) >= 1:  # a numpy integer too
        return int(cast(int, width))
    raise UsageError(
        f"width={width!r} is not a number of columns (a whole number from 1 up).",
        hint="for example to_text(width=100), or to_text(width=None) to wrap no line.",
        code="usage-width",
    )


def _yes_or_no(value: object, name: str) -> bool:
    """A yes/no argument as a bool (a numpy bool too). Anything else is refused: its truth value would
    be taken, and the text "no" or "false" is true."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise UsageError(
        f"{name}={value!r} is not True or False.",
        hint=f"pass {name}=True or {name}=False.",
        code="usage-yes-no",
    )


def metric_frame(metrics: Mapping[str, Any]) -> pd.DataFrame:
    """Coefficients (as in the report's ``metrics``) as a DataFrame indexed by name.

    A coefficient given per category (``specific_agreement``) gives one row per category,
    named ``specific_agreement[yes]``. An undefined value is ``<NA>`` with ``defined``
    False and the ``reason``: never a number, never NaN."""
    import pandas as pd  # noqa: PLC0415 (loaded on use)

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
    import pandas as pd  # noqa: PLC0415 (loaded on use)

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
    audit bundle (``rule`` optional; when given it must be the one the folder was made with;
    ``id_column``, ``code_column``, ``worksheet`` and ``delimiter`` are refused there: it keeps
    how its sheets were read),
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
    sample = _optional_path(sample, "sample")
    checked = _limits(limits)
    columns = SheetOptions(id_column, code_column, worksheet, parse_delimiter(delimiter), limits=checked)
    step = _progress(progress)
    folder: Path | None = None
    folder_sample: dict[str, Any] | None = None  # what a join folder or a bundle keeps of its sample
    manifest: Manifest | None = None  # a bundle's
    if _is_frame(data) or isinstance(data, Mapping):
        from irr_audit.io.dataframes import frame_sheets, long_frame_sheets  # noqa: PLC0415 (loaded on use)

        check_exist(_named(_path_of(sample), "sample"))  # a mistyped sample is named as missing, as with sheets
        loaded = with_run_aliases(_required_rule(rule, checked), aliases)
        reference, notes = _sample_reference(sample, loaded, checked)
        step("reading the DataFrames")
        sheets = (
            long_frame_sheets(data, columns)
            if _is_frame(data)
            else frame_sheets(cast(Mapping[str, Any], data), columns)
        )
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
        if folder is not None:  # it keeps how its sheets were read
            from irr_audit.join.folder import refuse_sheet_options  # noqa: PLC0415 (loaded on use)

            given = (id_column, code_column, worksheet, delimiter)
            refuse_sheet_options(folder, dict(zip(SHEET_OPTIONS, given, strict=True)))
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
    section = _sample_section(reference, result.rule) if reference else folder_sample
    report = dataclasses.replace(build_report(result, options), sample=section)
    sections = {}
    if folder is not None and manifest is not None and options.list_disagreements:  # its provenance and adjudication
        from irr_audit.bundle.adjudication import bundle_report_sections  # noqa: PLC0415 (loaded on use)

        sections = bundle_report_sections(folder, manifest, report.to_dict(listed=False))
    if drift_options is not None:
        step("scoring the drift over the coding order")
        sections["drift"] = _drift(result, drift_options, bootstrap, options.seed, columns)
    warnings = (*result.warnings, *(note.removeprefix("warning: ") for note in notes))
    return Audit(report, result, result.summary_line() + seed_note, warnings, sections)


def _is_frame(data: object) -> TypeGuard[pd.DataFrame]:
    """Whether ``data`` is a pandas DataFrame (one exists only once pandas is imported: a
    sheets' audit does not import it to find out). pandas is in sys.modules from the start of
    its import, without DataFrame yet; ``import`` waits for an import another thread is running."""
    if "pandas" not in sys.modules:
        return False
    import pandas  # noqa: PLC0415 (imported already, or being imported)

    return isinstance(data, pandas.DataFrame)


def _sample_section(reference: SampleRef, rule: Rule) -> dict[str, Any]:
    from irr_audit.sample.folder import sample_report_for  # noqa: PLC0415 (loaded on use)

    return sample_report_for(reference, rule)


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
    from irr_audit.join.counts import read_counts  # noqa: PLC0415 (loaded on use)

    options, seed_note = _seeded(_audit_options(bootstrap, seed, group, against, True, alpha_min))
    options = _with_statistics(options, ci_level, interval, test_against, weights)
    files = _paths(paths, "pass the counts files' paths (join's counts.csv, or shards of it).", "score")
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
    refuse_non_text_options({"--order-column": order_column})
    if order_column is not None and (_is_frame(data) or isinstance(data, Mapping)):
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
    from irr_audit.io.ordercolumn import order_values  # noqa: PLC0415 (loaded on use)
    from irr_audit.report.comparison import drift_of_join  # noqa: PLC0415 (loaded on use)

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


@dataclass(frozen=True, eq=False, repr=False)
class Comparison:
    """Two audits compared (:func:`compare`): ``to_dict()`` is the document of
    `irr-audit compare A B --format json` (docs/api.md)."""

    document: Mapping[str, Any]

    def __post_init__(self) -> None:
        # read-only at every depth, as an Audit's report: to_json(), to_markdown(), the DataFrames and
        # Audit.with_comparison all read this document, so a value changed in it would be shown as computed
        object.__setattr__(self, "document", read_only(dict(self.document)))

    def __setstate__(self, state: dict[str, Any]) -> None:
        # a deep copy copies the read-only document as plain dicts and lists: made read-only again
        self.__dict__.update(state, document=read_only(state["document"]))

    def __repr__(self) -> str:
        # one line, as Audit's: the generated repr printed the whole document where a notebook shows it
        if "variables" in self.document:
            return f"<Comparison of codebook bundles: {', '.join(self.document['variables'])}>"
        a, b = (f"{self.document[side]['rule']['id']} v{self.document[side]['rule']['version']}" for side in "ab")
        units, coefficients = self.document["units"]["relation"], len(self.document["differences"])
        return f"<Comparison A {a} -> B {b}: units {units}, {coefficients} coefficients>"

    @property
    def differences(self) -> pd.DataFrame:
        """One row per coefficient: a, b, difference (b - a), ci_low, ci_high, method."""
        rows = {
            prefix + name: _difference_row(entry)
            for prefix, part in self._parts()
            for name, entry in part["differences"].items()
        }
        return _difference_frame(rows)

    @property
    def per_category(self) -> pd.DataFrame:
        """One row per (category, coefficient), named ``kappa[yes]``, as :attr:`differences`."""
        rows = {
            f"{prefix}{name}[{category}]": _difference_row(entry)
            for prefix, part in self._parts()
            for category, entries in part["per_category"].items()
            for name, entry in entries.items()
        }
        return _difference_frame(rows)

    def to_dict(self) -> dict[str, Any]:
        return copy.deepcopy(dict(self.document))

    def to_json(self) -> str:
        return render_json(dict(self.document))

    def to_markdown(self) -> str:
        from irr_audit.report.markdown import section_lines  # noqa: PLC0415 (loaded on use)

        lines = ["# Two audits compared"]
        for section in self._sections():
            lines += section_lines(section)
        return "\n".join(lines) + "\n"

    def to_text(self, width: int | None = 80) -> str:
        """The comparison as plain text of ``width`` columns; None wraps no line."""
        from irr_audit.report.console import plain_text, section_table  # noqa: PLC0415 (loaded on use)
        from irr_audit.report.richimport import Group  # noqa: PLC0415 (loaded on use)

        return plain_text(Group(*(section_table(s) for s in self._sections())), text_width(width))

    def _sections(self) -> list[Any]:
        from irr_audit.report.comparison import (  # noqa: PLC0415 (loaded on use)
            codebook_comparison_sections,
            comparison_sections,
        )

        if "variables" in self.document:  # two codebook audits, variable by variable
            return codebook_comparison_sections(dict(self.document))
        return comparison_sections({"comparison": self.document})

    def _parts(self) -> list[tuple[str, Mapping[str, Any]]]:
        """(prefix of a row's name, comparison): one rule's, or each variable's as '<variable>: '."""
        if "variables" in self.document:
            return [(f"{variable}: ", part) for variable, part in self.document["variables"].items()]
        return [("", self.document)]


def _difference_row(entry: Mapping[str, Any]) -> list[Any]:
    ci = entry.get("ci") or (None, None)
    return [entry.get("a"), entry.get("b"), entry.get("difference"), ci[0], ci[1], entry.get("reason"), entry["method"]]


def _difference_frame(rows: Mapping[str, list[Any]]) -> pd.DataFrame:
    import pandas as pd  # noqa: PLC0415 (loaded on use)

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
    from irr_audit.report.comparison import compare_joins  # noqa: PLC0415 (loaded on use)

    if not _whole(bootstrap) or not MIN_COMPARE_BOOTSTRAP <= bootstrap <= MAX_BOOTSTRAP:
        raise UsageError(
            f"--bootstrap {bootstrap!r} is not a number of replicates from {MIN_COMPARE_BOOTSTRAP} "
            f"to {MAX_BOOTSTRAP:,}.",
            hint="the comparison's intervals are percentile intervals of the replicates: use 2000, say.",
            code="usage-bootstrap",
        )
    _audit_options(0, seed, None, None, False)  # the seed's checks
    check_exist([(Path(side), "input") for side in (a, b) if isinstance(side, (str, os.PathLike))])
    if any(_is_codebook_bundle(side) for side in (a, b)):
        return _compare_codebooks(a, b, bootstrap=int(bootstrap), seed=_seed_or_drawn(seed), limits=limits)
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


def _is_codebook_bundle(side: Audit | PathLike) -> bool:
    from irr_audit.bundle.codebook import is_codebook_bundle  # noqa: PLC0415 (loaded on use)

    return isinstance(side, (str, os.PathLike)) and is_codebook_bundle(Path(side))


def _compare_codebooks(
    a: Audit | PathLike, b: Audit | PathLike, *, bootstrap: int, seed: int, limits: LimitsLike
) -> Comparison:
    """Two codebook bundles compared variable by variable (report.comparison.compare_codebook_joins);
    a codebook bundle is compared with another codebook bundle only."""
    from irr_audit.bundle.codebook import read_codebook_bundle  # noqa: PLC0415 (loaded on use)
    from irr_audit.report.comparison import compare_codebook_joins  # noqa: PLC0415 (loaded on use)

    for name, side, other in (("A", a, b), ("B", b, a)):
        if not _is_codebook_bundle(side):
            shown = str(side) if isinstance(side, (str, os.PathLike)) else "the audit"
            raise UsageError(
                f"{name} ({shown}) is not the bundle of a codebook audit, and {other} is: a codebook bundle is "
                "compared with another codebook bundle, variable by variable.",
                hint="pass two bundles irr-audit freeze --codebook made.",
                code="usage-compare",
            )
    joins, books = [], []
    for side in (a, b):
        _, codebook, variables = read_codebook_bundle(Path(cast(PathLike, side)), _limits(limits))
        joins.append({variable: joined.join for variable, joined in variables.items()})
        books.append(
            {"source": str(side), "name": codebook.name, "version": codebook.version, "digest": codebook.digest}
        )
    document = compare_codebook_joins(
        joins[0], joins[1], codebooks=(books[0], books[1]), n_boot=bootstrap, seed=seed, sources=(str(a), str(b))
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
    ci_level: float = 0.95,
    interval: str = "normal",
    test_against: float | None = None,
    weights: str | Sequence[Sequence[float]] | None = None,
) -> Audit:
    """Audit a published table: ``kind="table"`` (a K x K agreement table, rows the first coder,
    `score --table`) or ``kind="category_counts"`` (subjects x categories, Fleiss 1971's layout,
    `score --category-counts`). The report has the structure of every report; what the table does
    not determine is undefined with the reason "not determined by a table" and listed under
    ``input.not_determined`` (docs/statistics.md, "Tables as input")."""
    from irr_audit.join.table_input import read_agreement_table, read_category_counts  # noqa: PLC0415 (loaded on use)
    from irr_audit.report.table_report import build_table_report  # noqa: PLC0415 (loaded on use)

    if kind not in TABLE_KINDS:
        raise UsageError(
            f"kind={kind!r} is not a table kind.", hint="use kind='table' or kind='category_counts'.", code="data-form"
        )
    options, seed_note = _seeded(_audit_options(bootstrap, seed, None, None, True, alpha_min))
    options = _with_statistics(options, ci_level, interval, test_against, weights)  # as every other input
    if rule is None:
        flag = "--table" if kind == "table" else "--category-counts"
        raise UsageError(
            f"{flag} needs the rule the codes belong to.", hint="add --rule RULE.", code="usage-missing-rule"
        )
    loaded = load_rule(rule, limits=limits)
    table = (read_agreement_table if kind == "table" else read_category_counts)(_path_argument(path, "path"), loaded)
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
    from irr_audit.bundle.labels import bundle_labels  # noqa: PLC0415 (loaded on use)

    return bundle_labels(_path_argument(bundle, "bundle"), _limits(limits))


# --- the folder `join` writes ------------------------------------------------------------


@dataclass(frozen=True, repr=False, eq=False)  # eq=False: as Pair, its join holds arrays
class JoinFolder:
    """What :func:`join_folder` wrote: the join (``result``), the files, the files of the
    folder it replaced that were not a join's (``replaced``, with ``force``) and notes for people."""

    result: JoinResult
    written: tuple[Path, ...]
    replaced: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def __repr__(self) -> str:
        # one line, as Audit's: the generated repr printed the whole join where a notebook shows it
        return (
            f"<JoinFolder {self.result.rule.label}: {', '.join(self.result.coders)}; {len(self.written)} files written>"
        )

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
    rule: RuleSource | None,
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
    from irr_audit.join.folder import write_join_dir  # noqa: PLC0415 (loaded on use)
    from irr_audit.report.sections import recoding_sentence  # noqa: PLC0415 (loaded on use)
    from irr_audit.sample.folder import recoding_of, sample_report_for  # noqa: PLC0415 (loaded on use)

    checked = _limits(limits)
    force = _yes_or_no(force, "force")  # "no" is true: a folder would be replaced unasked
    out_path = _path_argument(out, "out")
    sample = _optional_path(sample, "sample")
    inputs = _paths(sheets, JOINED, "join")
    check_exist([*_named(inputs, "sheet"), *_named(_path_of(rule), "rule"), *_named(_path_of(sample), "sample")])
    if rule is None:
        raise UsageError(
            "join needs the rule the sheets were coded under.", hint="add --rule RULE.", code="usage-missing-rule"
        )
    rule_files = _path_of(rule)  # a mapping or a Rule has no file to keep from being overwritten
    sample_folder = sample
    refuse_unsafe_outputs(files_read([*inputs, *rule_files, sample_folder]), folders=[out_path])
    loaded = with_run_aliases(load_rule(rule, limits=checked), aliases)
    reference, notes = _sample_reference(sample_folder, loaded, checked)
    sample_ids = list(reference.ids) if reference else None
    columns = SheetOptions(id_column, code_column, worksheet, parse_delimiter(delimiter), limits=checked)
    result = joined_inputs(inputs, loaded, columns, sample_ids, _progress(progress)).join
    written = write_join_dir(
        result,
        loaded.source,  # the bytes parsed, read once
        out_path,
        columns,
        sample=sample_folder,
        sample_ids=sample_ids,
        sample_report=sample_report_for(reference, loaded) if reference else None,
        sample_ledger_sha256=reference.ledger_sha256 if reference else None,
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
) -> importers_run.ImportRun:
    """Turn an annotation tool's export into coding sheets (`irr-audit import`, README "Import"):
    ``format`` is one of label-studio, label-studio-min, label-studio-csv, prodigy, doccano,
    argilla, model; ``exports`` one file or several of that format (doccano: one per user);
    ``out`` receives sheets/<coder>.csv, import_log.csv, import_log.jsonl and import.json, as
    one run. ``question`` names the question the rule codes (Label Studio's from_name,
    Argilla's question); ``id_field`` the key of the comment id (default comment_id).
    Returns the run: ``.result.sheets``, ``.result.log``, ``.result.outcomes``, the files written."""
    from irr_audit.importers.model import ImportOptions  # noqa: PLC0415 (loaded on use)
    from irr_audit.importers.run import import_exports  # noqa: PLC0415 (loaded on use)

    checked = _limits(limits)
    force = _yes_or_no(force, "force")  # "no" is true: a folder would be replaced unasked
    named = {"--question": question, "--id-field": id_field, "--text-field": text_field}
    refuse_non_text_options(named, EXPORT_FIELDS)  # a number matches no key: every record would be dropped
    paths = _paths(exports, "pass the export file's path, or a list of paths.", "import")
    rule_files = [Path(rule)] if isinstance(rule, (str, os.PathLike)) else []
    out_path = _path_argument(out, "out")
    check_exist([*((path, "export") for path in paths), *((path, "rule") for path in rule_files)])
    return import_exports(
        format,
        paths,
        load_rule(rule, limits=checked),
        out_path,
        ImportOptions(question, id_field, text_field),
        inputs=rule_files,
        force=force,
        limits=checked,
    )


EXPORT_FIELDS = (
    "a question and a field are named as the export spells them.",
    "pass the name as text, e.g. question='failure', id_field='comment_id'.",
)

# --- inputs -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Joined:
    """Audit input joined in memory, with what a report shows of the sample behind a join
    folder or a bundle (None: no sample) and a bundle's manifest (None: not a bundle)."""

    join: JoinResult
    sample_report: dict[str, Any] | None = None
    manifest: Manifest | None = None


def _nothing_to_score(option: str) -> UsageError:
    return UsageError(
        "nothing to score.",
        hint=f"pass a join folder, two or more sheets with {option}, or --counts.",
        code="usage-no-input",
    )


def joined_inputs(
    inputs: list[Path],
    rule: RuleSource | None,
    columns: SheetOptions,
    sample_ids: list[str] | None = None,
    progress: Progress | None = None,
) -> Joined:
    """Sheets + rule (restricted to a sample's ids when given), a folder written by
    `join`, or an audit bundle, joined in memory."""
    step = _progress(progress)
    if not inputs:
        raise _nothing_to_score("--rule")
    if len(inputs) == 1 and inputs[0].is_dir():
        folder = inputs[0]
        from irr_audit.join.codebook_folder import is_codebook_join_dir  # noqa: PLC0415 (loaded on use)
        from irr_audit.join.folder import is_join_dir, read_join_dir  # noqa: PLC0415 (loaded on use)
        from irr_audit.sample.folder import with_ledger  # noqa: PLC0415 (loaded on use)

        if is_bundle(folder):  # an audit bundle (irr-audit freeze)
            from irr_audit.bundle.read import read_bundle  # noqa: PLC0415 (loaded on use)

            frozen = read_bundle(folder, columns.limits)
            section = _sample_section(frozen.sample, frozen.join.rule) if frozen.sample else None
            found = Joined(frozen.join, section, frozen.manifest)
        elif is_codebook_join_dir(folder):
            raise UsageError(
                f"{folder} is the join of a codebook, with one table per variable: it is audited as a whole.",
                hint="irr-audit score DIR or report DIR, without --rule (irr_audit.audit_codebook(DIR) in Python).",
                code="usage-codebook-folder",
            )
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


PATH_HINTS = {
    "out": "pass the output folder as a str or a pathlib.Path.",
    "sample": "pass the folder irr-audit sample --out wrote, as a str or a pathlib.Path, or leave sample out.",
    "path": "pass the table file's path as a str or a pathlib.Path.",
    "bundle": "pass the bundle folder irr-audit freeze made, as a str or a pathlib.Path.",
    "rules_dir": "pass the folder of the codebook's rules as a str or a pathlib.Path, or leave rules_dir out.",
}


def _path_argument(value: object, name: str) -> Path:
    """An argument that is one path (``name`` a key of PATH_HINTS), as a Path; anything else is
    refused by name: pathlib's own TypeError names neither the argument nor the fix."""
    if isinstance(value, (str, os.PathLike)):
        return Path(value)
    raise UsageError(
        f"{name} is a path (a str or a pathlib.Path), not a {type(value).__name__}.",
        hint=PATH_HINTS[name],
        code="data-form",
    )


def _optional_path(value: object, name: str) -> Path | None:
    """As _path_argument, None (not given) kept."""
    return None if value is None else _path_argument(value, name)


AUDITED = (
    "pass sheet paths, a join folder, a bundle, a mapping {coder: DataFrame} or one long DataFrame "
    "(comment_id, coder, code)."
)
JOINED = (
    "pass the sheets' paths: the folder keeps each sheet file. To audit DataFrames, irr_audit.audit(frames, rule); "
    "to join them, write each as <coder>.csv first (frame.to_csv(path, index=False))."
)


def _paths(data: Any, takes: str = AUDITED, verb: str = "audit") -> list[Path]:
    """``data`` as paths (one, or a sequence); anything else refused, named, with ``takes`` (what the
    function takes) as the hint."""
    if isinstance(data, (str, os.PathLike)):
        return [Path(data)]
    items = list(data) if isinstance(data, Sequence) and not isinstance(data, (bytes, bytearray)) else [data]
    if all(isinstance(item, (str, os.PathLike)) for item in items):
        return [Path(item) for item in items]
    other = next(item for item in items if not isinstance(item, (str, os.PathLike)))
    if isinstance(other, (bytes, bytearray)):
        raise UsageError(
            f"cannot {verb} the path {bytes(other)[:80]!r}: it is bytes, and a path is text.",
            hint="pass it as text or a pathlib.Path: os.fsdecode(path).",
            code="data-form",
        )
    if callable(getattr(other, "to_pandas", None)):  # a polars DataFrame or a pyarrow Table: named as such
        from irr_audit.io.dataframes import TO_PANDAS_HINT, other_table  # noqa: PLC0415 (loaded on use)

        shown = other_table(other) or type(other).__name__
        found = shown if other is data else f"{type(data).__name__} holding a {shown}"
        raise UsageError(f"cannot {verb} a {found}.", hint=f"{TO_PANDAS_HINT} Or: {takes}", code="data-form")
    found = type(data).__name__ if other is data else f"{type(data).__name__} holding a {type(other).__name__}"
    raise UsageError(f"cannot {verb} a {found}.", hint=takes, code="data-form")


def _progress(progress: Progress | None) -> Progress:
    """The progress callback, or one that says nothing; anything not callable is refused by name."""
    if progress is None:
        return _no_progress
    if not callable(progress):
        raise UsageError(
            f"progress is a {type(progress).__name__}, not a function: it is called with the name of each step.",
            hint="pass a function of one str, e.g. progress=print, or leave progress out.",
            code="usage-progress",
        )
    return progress


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
        named = f"--rule {rule}" if isinstance(rule, (str, os.PathLike)) else _rule_named(given)
        raise UsageError(
            f"{named} ({given.label}, {given.digest[:19]}...) is not the rule {folder} was made with "
            f"({used.label}, {used.digest[:19]}...).",
            hint="leave --rule out: the folder keeps its own copy of the rule.",
            code="usage-rule-mismatch",
        )


def _rule_named(rule: Rule) -> str:
    """A rule given as a mapping or a Rule, as a message names it: "the rule mapping" (its source_name
    is "rule mapping": "the rule rule mapping" was said), else the file it was loaded from."""
    return "the rule mapping" if rule.source_name == MAPPING_NAME else f"the rule {rule.source_name}"


def _sample_reference(
    sample: PathLike | None, rule: RuleSource | None, limits: Limits = DEFAULT_LIMITS
) -> tuple[SampleRef | None, list[str]]:
    """The sample (`join --sample`) the units are restricted to, checked against the rule, and notes."""
    if sample is None:
        return None, []
    from irr_audit.sample.folder import check_sample_rule, read_sample  # noqa: PLC0415 (loaded on use)

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
        list_disagreements=_yes_or_no(list_disagreements, "list_disagreements"),
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
    given: object = alpha_min
    if isinstance(given, np.ndarray):  # not a Sequence, but its values are the minimums, in order
        given = given.tolist()
    if isinstance(given, (str, bytes)) or not isinstance(given, Sequence):
        given = [given]
    out: list[float] = []
    for item in given:
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
    from irr_audit.metrics import samplesize  # noqa: PLC0415 (loaded on use: only the planning commands)

    return samplesize.alpha_units(minimum, level, codes=codes, smallest_share=smallest_share)


def plan_kappa(
    expected: float,
    minimum: float,
    *,
    prevalence: float | None = None,
    shares: Sequence[float] | None = None,
    rates: Sequence[float] | None = None,
    level: float = 0.05,
    power: float = 0.80,
) -> samplesize.SampleSize:
    """Units for a test of kappa = ``minimum`` that finds ``expected`` with ``power``
    (`irr-audit plan kappa`): Donner & Eliasziw (1992), two-sided, for a binary rule's
    ``prevalence`` or K codes' ``shares``; Cantor (1996), one-sided, when the two coders'
    ``rates`` of a binary code differ."""
    from irr_audit.metrics import samplesize  # noqa: PLC0415 (loaded on use: only the planning commands)

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
    from irr_audit.metrics import samplesize  # noqa: PLC0415 (loaded on use: only the planning commands)

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
    have no analytic one; a bootstrap without a ``seed`` draws one, kept in the plan (``seed``,
    and a note): passing it back repeats the answer exactly."""
    from irr_audit.metrics import samplesize  # noqa: PLC0415 (loaded on use: only the planning commands)

    samplesize.pilot_units(1, {}, half_width)  # the half-width is checked before anything is read
    # drawn here, not inside audit(): the plan must hold the seed its SEs came from
    options, _ = _seeded(_audit_options(bootstrap, seed, None, None, False))
    pilot = audit(data, rule, bootstrap=options.n_boot, seed=options.seed, limits=limits, list_disagreements=False)
    frame = pilot.metrics
    standard_errors = {
        str(name): (_number(row["value"]), _number(row["se"]), _number(row["bootstrap_se"]))
        for name, row in frame.iterrows()
    }
    tabular = _is_frame(data) or isinstance(data, Mapping)
    source = "" if tabular else ", ".join(os.fspath(path) for path in _paths(data))
    return samplesize.pilot_plan(
        int(pilot.units["fully_coded"] or 0),
        standard_errors,
        half_width,
        source,
        bootstrap=options.n_boot,
        seed=options.seed,
        seed_drawn=seed is None,
    )


def _number(value: Any) -> float | None:
    import pandas as pd  # noqa: PLC0415 (loaded on use)

    return None if value is None or pd.isna(value) else float(value)


# --- a codebook: many variables in one audit (docs/codebook_audit.md) -------------------------

CodebookSource = Codebook | PathLike
GatesLike = float | Mapping[str, float] | None


@dataclass(frozen=True, eq=False, repr=False)
class CodebookAudit:
    """The audit of every variable of a codebook (:func:`audit_codebook`): ``audits`` maps each
    rule id to that variable's single-rule :class:`Audit` (its ``to_dict()`` exactly what
    `report --rule` gives for that variable), ``missingness`` is the one log of every variable
    (a first column ``variable``; empty for counts), ``gates`` each variable's gate on its
    recommended coefficient, and ``cells`` each variable's cells: used, logged, not applicable and
    not comparable. ``joined`` is every variable's join (None for counts)."""

    codebook: Codebook
    audits: Mapping[str, Audit]
    joined: codebook_join.CodebookJoin | None  # None for counts
    gates: Mapping[str, float]
    summary_line: str = ""
    input_warnings: tuple[str, ...] = ()
    # `report BUNDLE` of a codebook bundle: the bundle's provenance, the `bundle` section of a
    # rule's bundle's report (name, digest, created, tool_version, recodes, sample); else None
    bundle: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        # read-only, as each Audit is: every report of the codebook is made from these
        object.__setattr__(self, "audits", read_only(dict(self.audits)))
        object.__setattr__(self, "gates", read_only(dict(self.gates)))
        if self.bundle is not None:
            object.__setattr__(self, "bundle", read_only(copy.deepcopy(dict(self.bundle))))

    @property
    def missingness(self) -> pd.DataFrame:
        """The one log of every variable: a first column ``variable``, then the single-rule log's columns.
        A copy on each access, as every DataFrame of an Audit: a change to it changes nothing here."""
        return self._missingness.copy()

    @cached_property
    def _missingness(self) -> pd.DataFrame:
        import pandas as pd  # noqa: PLC0415 (loaded on use)

        from irr_audit.join.variables import CODEBOOK_LOG_COLUMNS  # noqa: PLC0415 (loaded on use)

        if self.joined is None:
            return pd.DataFrame(columns=list(CODEBOOK_LOG_COLUMNS))
        return self.joined.log.copy()

    @property
    def cells(self) -> dict[str, dict[str, int]]:
        """Each variable's (unit, coder) cells: used, logged, not applicable, not comparable (empty for counts)."""
        return {} if self.joined is None else self.joined.cells()

    def __repr__(self) -> str:
        return f"<CodebookAudit {self.codebook.label}: {', '.join(self.audits)}>"

    @property
    def reliability(self) -> list[dict[str, Any]]:
        """The reliability table: one row per variable (docs/codebook_audit.md, "The reliability table")."""
        from irr_audit.report.reliability import reliability_rows  # noqa: PLC0415 (loaded on use)

        return reliability_rows({key: audit.to_dict(False) for key, audit in self.audits.items()}, self.gates)

    @property
    def failed_gates(self) -> list[str]:
        """The variables whose recommended coefficient does not meet its gate (undefined never does)."""
        from irr_audit.report.reliability import failed_gates  # noqa: PLC0415 (loaded on use)

        return failed_gates(self.reliability)

    @property
    def failed(self) -> bool:
        """True when some variable has no unit fully coded, or fails its gate (`score` and `report` exit 1)."""
        return bool(self.failed_gates) or any(audit.failed for audit in self.audits.values())

    def to_dict(self, include_disagreements: bool = True) -> dict[str, Any]:
        """The document of `report --codebook --format json` (with ``include_disagreements=False``,
        of `score --codebook --format json`): ``codebook``, ``reliability``, ``variables`` (rule id ->
        the single-rule document), ``missingness`` and ``cells``."""
        return self._document(include_disagreements, copied=True)

    def _document(self, include_disagreements: bool = True, *, copied: bool = False) -> dict[str, Any]:
        """The document the renderers show: each variable's own (its disagreements a lazy sequence),
        or with ``copied`` each variable's :meth:`Audit.to_dict` (a copy, every disagreement listed)."""
        from irr_audit.join.codebook_folder import codebook_record  # noqa: PLC0415 (loaded on use)
        from irr_audit.report.reliability import reliability_rows  # noqa: PLC0415 (loaded on use)

        include_disagreements = _yes_or_no(include_disagreements, "include_disagreements")
        variables = {
            key: audit.to_dict(include_disagreements) if copied else audit._document(include_disagreements)
            for key, audit in self.audits.items()
        }
        document = {
            "codebook": codebook_record(self.codebook),
            "reliability": reliability_rows(variables, self.gates),
            "variables": variables,
            "missingness": self._log_counts(),
            "cells": self.cells,
            "summary": self.summary_line,
        }
        if self.bundle is not None and include_disagreements:  # a report's, as a rule's bundle's; not score's
            document["bundle"] = copy.deepcopy(self.bundle) if copied else self.bundle
        return document

    def _log_counts(self) -> dict[str, Any]:
        counts = {} if self.joined is None else self.joined.log_counts()
        return {"log_rows": sum(sum(found.values()) for found in counts.values()), "by_variable": counts}

    def to_json(self, include_disagreements: bool = True) -> str:
        return render_json(self.to_dict(include_disagreements))

    def to_markdown(self) -> str:
        from irr_audit.report.reliability import codebook_markdown  # noqa: PLC0415 (loaded on use)

        return codebook_markdown(self._document())

    def to_methods(self) -> str:
        """`report --codebook --format methods`: the codebook named, then each variable's methods
        paragraph (reliability is reported per variable, each on its own units)."""
        from irr_audit.io.display import prose  # noqa: PLC0415 (loaded on use)
        from irr_audit.report.methods import condition_sentence  # noqa: PLC0415 (loaded on use)

        first = (
            f"The codebook {prose(self.codebook.label)} ({len(self.audits)} variables) was coded; reliability is "
            "reported for each variable on its own fully coded units"
        )
        if self.bundle is not None:  # as a rule's bundle's methods name it
            first += (
                f"; the sheets, the rules, the codebook and the scores are kept in the audit bundle "
                f"{prose(str(self.bundle['name']))} (digest {self.bundle['digest']})"
            )
        first += ".\n"
        paragraphs = []
        for rule in self.codebook.rules:
            paragraph = self.audits[rule.id].to_methods()
            if rule.applies_when is not None and rule.id in self.cells:
                condition = rule.applies_when
                sentence = condition_sentence(rule.id, condition.rule, condition.codes, self.cells[rule.id])
                paragraph = paragraph.rstrip("\n") + " " + sentence + "\n"
            paragraphs.append(f"\n{rule.id}: {paragraph}")
        return first + "".join(paragraphs)

    def to_html(self) -> str:
        from irr_audit.report.reliability import codebook_html  # noqa: PLC0415 (loaded on use)

        return codebook_html(self._document())

    def _repr_html_(self) -> str:
        """The HTML report of the codebook in a notebook, as an Audit's (:func:`framed_report`)."""
        return framed_report(self.to_html())

    def to_text(self, width: int | None = 80, include_disagreements: bool = True) -> str:
        from irr_audit.report.reliability import codebook_text  # noqa: PLC0415 (loaded on use)

        return codebook_text(self._document(include_disagreements), text_width(width))

    def console_report(self, include_disagreements: bool = True) -> Any:
        from irr_audit.report.reliability import codebook_console  # noqa: PLC0415 (loaded on use)

        return codebook_console(self._document(include_disagreements))


def load_codebook_source(
    codebook: CodebookSource, *, rules_dir: PathLike | None = None, limits: LimitsLike = None
) -> Codebook:
    """A codebook file (its rules found as load_codebook finds them, or in ``rules_dir``), or a Codebook as it is."""
    if isinstance(codebook, Codebook):
        return codebook
    if isinstance(codebook, (str, os.PathLike)):
        check_exist([(Path(codebook), "codebook")])
        return load_codebook(Path(codebook), rules_dir=_optional_path(rules_dir, "rules_dir"), limits=_limits(limits))
    raise UsageError(
        f"a codebook is a path to a codebook file, not a {type(codebook).__name__}.",
        hint="pass codebooks/<name>/v<version>.yaml.",
        code="data-form",
    )


def codebook_gates(gates: GatesLike, codebook: Codebook) -> dict[str, float]:
    """Each variable's gate: one number for every variable, or rule id -> number (a key
    ``"*"`` for the others). Each a number from -1 to 1, for a variable of the codebook."""
    if gates is None:
        return {}
    given = {"*": gates} if not isinstance(gates, Mapping) else dict(gates)
    found: dict[str, float] = {}
    for key, value in given.items():
        number = _real(value)
        if number is None or not -1 <= number <= 1:
            raise UsageError(
                f"--gate {key}={value!r} is not a value a coefficient can take (a number from -1 to 1).",
                hint="for example --gate 0.667 (every variable) or --gate severity=0.8.",
                code="usage-gate",
            )
        if key != "*" and key not in codebook.rule_ids:
            raise UsageError(
                f"--gate {key}={value} names no variable of {codebook.label}.",
                hint=f"use one of {', '.join(codebook.rule_ids)}, or give a number alone for every variable.",
                code="usage-gate",
            )
        found[key] = number
    every = found.pop("*", None)
    chosen = {rule_id: found.get(rule_id, every) for rule_id in codebook.rule_ids}
    return {rule_id: value for rule_id, value in chosen.items() if value is not None}


def parse_gate_options(values: Sequence[str] | None) -> dict[str, float] | None:
    """`--gate 0.8` (every variable) and `--gate VAR=0.8` (one variable) as a mapping for :func:`audit_codebook`.
    A variable, or every variable, given two different gates is refused: the order of the
    options would decide which one held."""
    if not values:
        return None
    gates: dict[str, float] = {}
    typed: dict[str, str] = {}  # each gate's key -> its option as given, to name both of two that differ
    for value in values:
        key, equals, number = value.rpartition("=")
        if equals and not key.strip():
            raise UsageError(
                f"--gate {value!r} names no variable before '='.",
                hint="give a number alone for every variable (--gate 0.667) or VARIABLE=NUMBER for one "
                "(--gate severity=0.8).",
                code="usage-gate",
            )
        try:
            threshold = float(number)
        except ValueError:
            raise UsageError(
                f"--gate {value!r} is not NUMBER or VARIABLE=NUMBER.",
                hint="for example --gate 0.667 or --gate severity=0.8.",
                code="usage-gate",
            ) from None
        variable = key.strip() or "*"
        if variable in gates and not _same_number(gates[variable], threshold):
            whose = "every variable" if variable == "*" else f"variable {variable}"
            raise UsageError(
                f"--gate {value} contradicts --gate {typed[variable]}: {whose} has one gate.",
                hint="keep the one you mean (a number alone is every variable's gate; VARIABLE=NUMBER "
                "sets one variable's beside it).",
                code="usage-gate",
            )
        gates[variable], typed[variable] = threshold, value
    return gates


def _same_number(first: float, second: float) -> bool:
    return first == second or (math.isnan(first) and math.isnan(second))  # nan is refused later, once


def _variable_audits(joined: CodebookJoin, options: AuditOptions, step: Progress) -> dict[str, Audit]:
    sections = _bundle_sections(joined) if options.list_disagreements else {}
    audits = {}
    for rule_id, variable in joined.variables.items():
        step(f"scoring {rule_id}: {len(variable.join.units):,} units")
        result = variable.join
        report = dataclasses.replace(build_report(result, options), sample=joined.sample)
        audits[rule_id] = Audit(report, result, result.summary_line(), result.warnings, sections.get(rule_id, {}))
    return audits


def _bundle_sections(joined: CodebookJoin) -> dict[str, dict[str, Any]]:
    """A codebook bundle's adjudication, variable by variable, as `report BUNDLE` of a rule's
    bundle shows it (nothing for sheets or a join folder; `score` leaves the records unread)."""
    if joined.bundle is None:
        return {}
    from irr_audit.bundle.adjudication import codebook_report_sections  # noqa: PLC0415 (loaded on use)

    folder, manifest = joined.bundle
    joins = {rule_id: found.join for rule_id, found in joined.variables.items()}
    return codebook_report_sections(folder, manifest, joins)


def _bundle_provenance(joined: CodebookJoin) -> dict[str, Any] | None:
    """A codebook bundle's name, digest and freezing, as a rule's bundle's report names its own
    (None for sheets or a join folder)."""
    if joined.bundle is None:
        return None
    from irr_audit.bundle.adjudication import bundle_provenance  # noqa: PLC0415 (loaded on use)

    return bundle_provenance(joined.bundle[1])


def codebook_joined(
    data: Data,
    codebook: CodebookSource | None,
    *,
    rules_dir: PathLike | None = None,
    id_column: str | None = None,
    worksheet: str | None = None,
    delimiter: str | None = None,
    limits: LimitsLike = None,
    progress: Progress | None = None,
    sample: PathLike | None = None,
) -> tuple[Codebook, CodebookJoin]:
    """Sheets (with a codebook, restricted to a sample's units when given) or a codebook join
    folder or bundle, every variable joined."""
    from irr_audit.bundle.codebook import is_codebook_bundle, read_codebook_audit  # noqa: PLC0415 (loaded on use)
    from irr_audit.join.codebook_folder import (  # noqa: PLC0415 (loaded on use)
        check_unchanged,
        is_codebook_join_dir,
        read_codebook_join_dir,
        sheet_options,
    )
    from irr_audit.join.folder import refuse_sheet_options  # noqa: PLC0415 (loaded on use)
    from irr_audit.join.variables import CodebookJoin, join_variables, read_variable_sheets  # noqa: PLC0415 (loaded on use)
    from irr_audit.sample.folder import read_sample, with_ledger  # noqa: PLC0415 (loaded on use)

    checked = _limits(limits)
    step = _progress(progress)
    sample = _optional_path(sample, "sample")
    if _is_frame(data) or isinstance(data, Mapping):
        if sample is not None:
            raise UsageError(
                "sample restricts a codebook's sheet files to a sample's units.",
                hint="pass the sheet files, or restrict the DataFrames yourself.",
                code="usage-sample",
            )
        return _codebook_of_frames(data, codebook, rules_dir, id_column, worksheet, checked, delimiter)
    inputs = _paths(data)
    check_exist(
        [*_named(inputs, "sheet"), *_named(_path_of(codebook), "codebook"), *_named(_path_of(sample), "sample")]
    )
    if not inputs:
        raise _nothing_to_score("--codebook")
    if sample is not None and len(inputs) == 1 and inputs[0].is_dir():
        raise UsageError(
            f"{inputs[0]} keeps its own units; sample restricts sheets to a sample's.",
            hint="leave out --sample, or pass the sheets themselves.",
            code="usage-sample",
        )
    if len(inputs) == 1 and inputs[0].is_dir():  # a join folder or a bundle keeps how its sheets were read
        reading = {"--id-column": id_column, "--worksheet": worksheet, "--delimiter": delimiter}
        refuse_sheet_options(inputs[0], reading)
    if len(inputs) == 1 and is_codebook_bundle(inputs[0]):  # freeze --codebook made it: read and checked
        manifest, frozen, variables, frozen_sample = read_codebook_audit(inputs[0], checked)
        _check_same_codebook(codebook, rules_dir, frozen, inputs[0], checked)
        shown = frozen_sample.report if frozen_sample is not None else None  # as a rule's bundle shows its sample
        return frozen, CodebookJoin(variables, sample=shown, bundle=(inputs[0], manifest))
    if len(inputs) == 1 and inputs[0].is_dir():
        if not is_codebook_join_dir(inputs[0]):
            raise UsageError(
                f"{inputs[0]} is not a folder written by irr-audit join --codebook.",
                hint="pass the folder given to join --codebook --out, or the sheets themselves with --codebook.",
                code="usage-not-a-join-dir",
            )
        kept = read_codebook_join_dir(inputs[0], checked)
        _check_same_codebook(codebook, rules_dir, kept.codebook, inputs[0], checked)
        loaded, paths, options = kept.codebook, list(kept.sheet_paths), sheet_options(kept, checked)
    else:
        if codebook is None:
            raise UsageError(
                "sheets need the codebook they were coded under.",
                hint="add --codebook codebooks/<name>/v<version>.yaml.",
                code="usage-missing-rule",
            )
        loaded = load_codebook_source(codebook, rules_dir=rules_dir, limits=checked)
        paths, options = inputs, SheetOptions(id_column, None, worksheet, parse_delimiter(delimiter), limits=checked)
        kept = None
    reference = read_sample(Path(sample), checked, codebook=loaded) if sample is not None else None
    step(f"reading {len(paths)} sheets")
    views = read_variable_sheets(paths, loaded.rules, options)
    if kept is not None:
        check_unchanged(kept, views.bases)
    step(f"joining {len(loaded.rules)} variables")
    sample_ids = list(reference.ids) if reference else (kept.sample_ids if kept else None)
    variables = join_variables(views, loaded.rules, sample_ids=sample_ids)
    if reference is not None:
        return loaded, CodebookJoin(_with_context(variables, reference.joined), tuple(views.rests), reference.report)
    if kept is not None and kept.sample_ids is not None:
        first_id = next(iter(variables))
        found = with_ledger(variables[first_id].join, kept.sample_folder, kept.sample_ids, checked, codebook=loaded)
        variables = _with_context(variables, lambda join: dataclasses.replace(join, context=found.context))
        variables[first_id] = dataclasses.replace(variables[first_id], join=found)  # a ledger gone: said once
        return loaded, CodebookJoin(variables, tuple(views.rests), kept.sample_report)
    return loaded, CodebookJoin(variables, tuple(views.rests))


def _with_context(
    variables: dict[str, VariableJoin], joined: Callable[[JoinResult], JoinResult]
) -> dict[str, VariableJoin]:
    """Each variable's scored join with the sample's ledger text beside its units."""
    return {rule_id: dataclasses.replace(found, join=joined(found.join)) for rule_id, found in variables.items()}


def _check_same_codebook(
    codebook: CodebookSource | None, rules_dir: PathLike | None, kept: Codebook, folder: Path, limits: Limits
) -> None:
    """A codebook given with a folder or a bundle must be the one it keeps."""
    if codebook is None:
        return
    given = load_codebook_source(codebook, rules_dir=rules_dir, limits=limits)
    if given.digest != kept.digest:
        raise UsageError(
            f"--codebook {given.source_name} ({given.label}) is not the codebook {folder} was made with "
            f"({kept.label}, {kept.digest[:19]}...).",
            hint="leave --codebook out: the folder keeps its own copy of the codebook.",
            code="usage-codebook-mismatch",
        )


def _codebook_of_frames(
    data: pd.DataFrame | Mapping[str, pd.DataFrame],
    codebook: CodebookSource | None,
    rules_dir: PathLike | None,
    id_column: str | None,
    worksheet: str | None,
    limits: Limits,
    delimiter: str | None = None,
) -> tuple[Codebook, CodebookJoin]:
    """DataFrames of a codebook: a mapping coder -> DataFrame, or one long DataFrame with a coder
    column; each coder's frame wide (a column per variable) or long (variable, code)."""
    from irr_audit.io.dataframes import check_frame_coder, frame_tables, long_frame_tables  # noqa: PLC0415 (loaded on use)
    from irr_audit.join.variables import CodebookJoin, join_variables, views_of_tables  # noqa: PLC0415 (loaded on use)

    if codebook is None:
        raise UsageError(
            "DataFrames need the codebook they were coded under.",
            hint="pass codebook='codebooks/<name>/v<version>.yaml'.",
            code="usage-missing-rule",
        )
    loaded = load_codebook_source(codebook, rules_dir=rules_dir, limits=limits)
    options = SheetOptions(id_column, None, worksheet, parse_delimiter(delimiter), limits=limits)  # refused there
    code_columns = [*loaded.rule_ids, "code"]
    if _is_frame(data):
        tables = long_frame_tables(data, options, code_columns)
    else:
        tables = frame_tables(cast(Mapping[str, Any], data), options, code_columns)
    views = views_of_tables([(parsed, Path(f"{name}.csv")) for name, parsed in tables], loaded.rules, options)
    if not _is_frame(data):
        for (name, _), base in zip(tables, views.bases):
            check_frame_coder(base, name)
    return loaded, CodebookJoin(join_variables(views, loaded.rules), tuple(views.rests))


def audit_codebook(
    data: Data,
    codebook: CodebookSource | None = None,
    *,
    rules_dir: PathLike | None = None,
    gates: GatesLike = None,
    bootstrap: int = 0,
    seed: int | None = None,
    id_column: str | None = None,
    worksheet: str | None = None,
    limits: LimitsLike = None,
    list_disagreements: bool = True,
    progress: Progress | None = None,
    ci_level: float = 0.95,
    interval: str = "normal",
    test_against: float | None = None,
    alpha_min: Sequence[float] | None = None,
    delimiter: str | None = None,
    sample: PathLike | None = None,
) -> CodebookAudit:
    """Audit every variable of a codebook in one run (docs/codebook_audit.md): ``data`` is the
    coders' sheets (wide: a column per variable; or long: comment_id, variable, code) or a
    folder `join --codebook` wrote; ``codebook`` a codebook file (optional with a folder, which
    keeps its own). Each variable is joined and scored as :func:`audit` does a rule, after its
    condition (``applies_when``) is applied. ``gates``: a number for every variable or rule id ->
    number; a variable whose recommended coefficient is below its gate (or undefined) is named in
    :attr:`CodebookAudit.failed_gates`. The other options are :func:`audit`'s, for every variable."""
    options, seed_note = _seeded(_audit_options(bootstrap, seed, None, None, list_disagreements, alpha_min))
    options = _with_statistics(options, ci_level, interval, test_against, None)
    loaded, joined = codebook_joined(
        data,
        codebook,
        rules_dir=rules_dir,
        id_column=id_column,
        worksheet=worksheet,
        delimiter=delimiter,
        limits=limits,
        progress=progress,
        sample=sample,
    )
    chosen = codebook_gates(gates, loaded)
    audits = _variable_audits(joined, options, _progress(progress))
    line = joined.summary_line(loaded.label) + seed_note
    frozen = _bundle_provenance(joined) if options.list_disagreements else None
    return CodebookAudit(loaded, audits, joined, chosen, line, joined.warnings, frozen)


def audit_codebook_counts(
    paths: PathLike | Sequence[PathLike],
    codebook: CodebookSource,
    *,
    rules_dir: PathLike | None = None,
    gates: GatesLike = None,
    bootstrap: int = 0,
    seed: int | None = None,
    limits: LimitsLike = None,
    ci_level: float = 0.95,
    interval: str = "normal",
    test_against: float | None = None,
    alpha_min: Sequence[float] | None = None,
) -> CodebookAudit:
    """Audit a codebook's unit-pattern counts (`join --codebook`'s counts.csv, a first column
    ``variable``; several files are shards and add up), each variable as :func:`audit_counts` does."""
    from irr_audit.join.counts import read_variable_counts  # noqa: PLC0415 (loaded on use)

    options, seed_note = _seeded(_audit_options(bootstrap, seed, None, None, True, alpha_min))
    options = _with_statistics(options, ci_level, interval, test_against, None)
    files = _paths(paths, "pass the counts files' paths (join's counts.csv, or shards of it).", "score")
    check_exist([*_named(files, "counts"), *_named(_path_of(codebook), "codebook")])
    if not files:
        raise UsageError("no counts file to score.", hint="pass one or more counts files.", code="usage-no-input")
    checked = _limits(limits)
    loaded = load_codebook_source(codebook, rules_dir=rules_dir, limits=checked)
    chosen = codebook_gates(gates, loaded)
    merged = read_variable_counts(files, loaded.rules, checked)
    audits = {}
    for rule in loaded.rules:
        counts = merged[rule.id]
        report = build_counts_report(rule, counts.coders, counts.patterns, counts.units, counts.sources, options)
        if not report.units["fully_coded"]:
            nothing = problem(
                NO_FULLY_CODED,
                f"no unit is fully coded: the counts hold no unit with a code of {rule.label} from every coder.",
                {},
                "check that the counts files are those of this audit and codebook.",
            )
            report = dataclasses.replace(report, problems=(nothing,))
        audits[rule.id] = Audit(report, None, "")
    coders = merged[loaded.rules[0].id].coders
    line = (
        f"Codebook {loaded.label}: {len(loaded.rules)} variables from {len(coders)} coders "
        f"in {len(files)} counts file(s)."
    )
    return CodebookAudit(loaded, audits, None, chosen, line + seed_note)


@dataclass(frozen=True, repr=False, eq=False)  # eq=False: as Pair, its joins hold arrays
class CodebookJoinFolder:
    """What :func:`join_codebook_folder` wrote: every variable's join (``joined``), the files."""

    codebook: Codebook
    joined: codebook_join.CodebookJoin
    written: tuple[Path, ...]
    replaced: tuple[str, ...] = ()
    summary_line: str = ""

    def __repr__(self) -> str:
        # one line, as CodebookAudit's: the generated repr printed every variable's join (100 KB for 24 units)
        variables = ", ".join(self.variables)
        return f"<CodebookJoinFolder {self.codebook.label}: {variables}; {len(self.written)} files written>"

    @property
    def variables(self) -> Mapping[str, codebook_join.VariableJoin]:
        return self.joined.variables

    @property
    def missingness(self) -> pd.DataFrame:
        return self.joined.log.copy()

    @property
    def warnings(self) -> tuple[str, ...]:
        return self.joined.warnings

    @property
    def problems(self) -> list[dict[str, Any]]:
        """Each variable's problems (as :attr:`Audit.problems`), with a ``variable`` key."""
        return [
            {**found, "variable": rule_id}
            for rule_id, joined in self.variables.items()
            for found in copy.deepcopy(joined.join.problems)
        ]


def join_codebook_folder(
    sheets: Sequence[PathLike],
    codebook: CodebookSource,
    out: PathLike,
    *,
    rules_dir: PathLike | None = None,
    force: bool = False,
    id_column: str | None = None,
    worksheet: str | None = None,
    limits: LimitsLike = None,
    progress: Progress | None = None,
    delimiter: str | None = None,
    sample: PathLike | None = None,
) -> CodebookJoinFolder:
    """Join the sheets of every variable of a codebook and write the folder `join --codebook --out`
    writes (docs/codebook_audit.md), as one run."""
    from irr_audit.join.codebook_folder import write_codebook_join_dir  # noqa: PLC0415 (loaded on use)

    checked = _limits(limits)
    force = _yes_or_no(force, "force")  # "no" is true: a folder would be replaced unasked
    out_path = _path_argument(out, "out")
    sample_folder = _optional_path(sample, "sample")
    inputs = _paths(sheets, JOINED, "join")
    check_exist(
        [*_named(inputs, "sheet"), *_named(_path_of(codebook), "codebook"), *_named(_path_of(sample), "sample")]
    )
    codebook_files = _path_of(codebook)
    refuse_unsafe_outputs(files_read([*inputs, *codebook_files, sample_folder]), folders=[out_path])
    loaded, joined = codebook_joined(
        sheets,
        codebook,
        rules_dir=rules_dir,
        id_column=id_column,
        worksheet=worksheet,
        delimiter=delimiter,
        limits=checked,
        progress=progress,
        sample=sample_folder,
    )
    columns = ColumnChoice(id_column, None, worksheet, parse_delimiter(delimiter))
    line = joined.summary_line(loaded.label)
    written = write_codebook_join_dir(
        loaded,
        joined,
        line,
        out_path,
        columns,
        force=force,
        inputs=codebook_files,
        sample=sample_folder,
        sample_ids=list(next(iter(joined.variables.values())).full.unit_ids) if sample_folder else None,
    )
    return CodebookJoinFolder(loaded, joined, tuple(written.written), tuple(written.removed), line)
