"""Orchestration: joined sheets (or unit-pattern counts) -> the audit report model,
which every renderer shows. Pure: no files, no clock.
"""

from __future__ import annotations

import dataclasses
import numbers
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

import numpy as np

from irr_audit._readonly import read_only
from irr_audit._version import __version__
from irr_audit.errors import UsageError
from irr_audit.io.arrowtext import from_numpy
from irr_audit.io.display import listed, shortened
from irr_audit.join.join import JoinResult, across_columns, read_only_array
from irr_audit.metrics import group_vs_reference, summarise
from irr_audit.metrics.alpha_bootstrap import DEFAULT_ALPHA_MIN, krippendorff_bootstrap
from irr_audit.metrics.consensus import REASONS
from irr_audit.metrics.extended import KALPHA_STREAM, extended_sections
from irr_audit.metrics.intervals import IntervalSpec
from irr_audit.metrics.krippendorff import scale_values
from irr_audit.metrics.patterns import compress
from irr_audit.metrics.plan import resolve_weights
from irr_audit.report.headline import (
    ALPHA,
    HEADLINE_BOOTSTRAP,
    HEADLINE_SEED,
    coefficient_rows,
    headline_block,
    headline_metric,
    paradox_explanation,
)
from irr_audit.rules.model import Rule


@dataclass(frozen=True)
class GroupSpec:
    """`--group humans=ann,ben,cat --against model`: a group's consensus scored against one coder."""

    name: str
    members: tuple[str, ...]
    reference: str

    @classmethod
    def parse(cls, group: str, against: str | None) -> GroupSpec:
        name, _, members = group.partition("=")
        coders = tuple(member.strip() for member in members.split(",") if member.strip())
        if not name.strip() or len(coders) < 2 or against is None:
            raise UsageError(
                f"--group {shortened(group, 200)!r} is not NAME=CODER,CODER[,...] with --against CODER.",
                hint="for example --group humans=ann,ben,cat --against model.",
                code="usage-group",
            )
        return cls.of(name.strip(), coders, against.strip())

    @classmethod
    def of(cls, name: str, members: tuple[str, ...], reference: str) -> GroupSpec:
        """The group of these coders (two or more), each named once, scored against ``reference``."""
        twice = [coder for coder, n in Counter(members).items() if n > 1]
        if twice:  # a coder counted twice would outvote the others: a wrong consensus
            raise UsageError(
                f"--group names {_listed(twice)} more than once.",
                hint="name every coder of the group once.",
                code="usage-group",
            )
        return cls(name, members, reference)


def _listed(names: list[str]) -> str:
    """Coders' names for a message: a --group can name thousands."""
    return listed(repr(shortened(name, 60)) for name in names)


# What one audit scores: every limit names itself in its message (README, "Limits").
MAX_CODERS = 100  # every pair of coders gets its own table and coefficients: 4,950 pairs
MAX_TABLE_CELLS = 25_000_000  # K x K cells for the table and each pair's (int64: 200 MB at most)
MAX_BOOTSTRAP = 100_000  # replicates; the 2.5 and 97.5 percentiles need no more than a few thousand
MAX_REPLICATE_VALUES = 50_000_000  # replicates x bootstrapped quantities, kept for the percentiles (~450 MB)


def check_audit_size(n_coders: int, n_categories: int, n_boot: int) -> None:
    """Refuse an audit whose memory would not be bounded by the data: too many coders (pairs),
    categories (K x K tables) or bootstrap replicates. Raises UsageError naming the limit."""
    pairs = n_coders * (n_coders - 1) // 2
    if n_coders > MAX_CODERS:
        raise UsageError(
            f"the audit has {n_coders:,} coders; irr-audit scores at most {MAX_CODERS} (every pair of coders "
            f"gets its own table and coefficients: {pairs:,} pairs).",
            hint="score groups of coders apart, or form a consensus with --group.",
            code="audit-too-many-coders",
        )
    cells = (pairs + 1) * n_categories * n_categories
    if cells > MAX_TABLE_CELLS:
        raise UsageError(
            f"the rule has {n_categories:,} codes and the audit {n_coders} coders: the agreement tables would "
            f"have {cells:,} cells (K x K for the whole and for each pair of coders, {pairs:,}); "
            f"irr-audit makes at most {MAX_TABLE_CELLS:,}.",
            hint="merge codes into fewer categories in a revised rule, or score fewer coders at once.",
            code="audit-too-many-codes",
        )
    if n_boot > MAX_BOOTSTRAP:
        raise UsageError(
            f"--bootstrap {n_boot:,} is more than the {MAX_BOOTSTRAP:,} replicates irr-audit draws: every "
            "replicate's value of every coefficient is kept for the percentile interval, and a few thousand "
            "replicates already fix the 95% interval to the digits the report shows.",
            hint="use --bootstrap 2000 (or up to 100000).",
            code="usage-bootstrap",
        )
    values = n_boot * bootstrapped_quantities(n_coders, n_categories)
    if values > MAX_REPLICATE_VALUES:
        most = MAX_REPLICATE_VALUES // bootstrapped_quantities(n_coders, n_categories)
        raise UsageError(
            f"--bootstrap {n_boot:,} with {n_categories:,} codes and {n_coders} coders would keep {values:,} "
            f"replicate values (every coefficient, per category and per pair); irr-audit keeps at most "
            f"{MAX_REPLICATE_VALUES:,}.",
            hint=f"use --bootstrap {most} or fewer.",
            code="usage-bootstrap",
        )


def bootstrapped_quantities(n_coders: int, n_categories: int) -> int:
    """An upper bound of the quantities the bootstrap keeps a value of in every replicate: the
    coefficients (at most 16) and the per-category ones on both bases, per category, and per pair."""
    per_basis = 16 + n_categories
    pairs = n_coders * (n_coders - 1) // 2
    return 2 * per_basis + 3 * n_categories + 2 * pairs * per_basis


@dataclass(frozen=True)
class AuditOptions:
    """What an audit computes beyond the counts; checked when made (UsageError), so that a
    library caller gets the same refusal as the CLI (numpy integers are whole numbers too)."""

    n_boot: int = 0
    seed: int | None = None
    group: GroupSpec | None = None
    list_disagreements: bool = True  # `score` only counts them; `report` lists them with their text
    intervals: IntervalSpec = field(default_factory=IntervalSpec)
    weights: str | tuple[tuple[float, ...], ...] | None = None  # None: the rule's own, if it names any
    alpha_min: tuple[float, ...] = DEFAULT_ALPHA_MIN  # Krippendorff's bootstrap: q(alpha < each)

    def __post_init__(self) -> None:
        if not _whole(self.n_boot) or self.n_boot < 0:
            raise UsageError(
                f"--bootstrap {self.n_boot!r} is not a number of replicates (a whole number from 0 up).",
                hint="use 0 (no bootstrap) or a number such as 2000.",
                code="usage-bootstrap",
            )
        if self.seed is not None and not _whole(self.seed):
            raise UsageError(
                f"--seed {self.seed!r} is not a whole number.",
                hint="the bootstrap's seed is a whole number from 0 up.",
                code="usage-seed",
            )
        if self.seed is not None and self.seed < 0:
            raise UsageError(
                f"--seed {self.seed} is negative.",
                hint="the bootstrap's seed is a whole number from 0 up.",
                code="usage-seed",
            )
        check_audit_size(0, 0, int(self.n_boot))  # too many replicates: refused before any sheet is read
        object.__setattr__(self, "n_boot", int(self.n_boot))
        object.__setattr__(self, "seed", None if self.seed is None else int(self.seed))


def _whole(number: object) -> bool:
    return isinstance(number, numbers.Integral) and not isinstance(number, bool)


@dataclass(frozen=True)
class AuditReport:
    """Everything an audit shows. ``to_dict()`` is the canonical (JSON) form;
    Markdown, HTML and the console are views of it."""

    tool_version: str
    rule: Rule
    sheets: tuple[dict[str, Any], ...]
    coders: tuple[str, ...]
    units: dict[str, int | None]  # None: not determined by the input (a K x K table's missing units)
    missingness: dict[str, Any]
    agreement: dict[str, Any]
    disagreements: Sequence[dict[str, Any]] | None  # None: counted, not listed (a join's: Disagreements)
    disagreement_count: int
    # why the disagreements cannot be listed at all (counts and tables hold no unit ids), else None
    disagreements_unlisted: str | None = None
    warnings: tuple[str, ...] = ()
    group: dict[str, Any] | None = None
    sample: dict[str, Any] | None = None  # where the units came from, when the audit began with `sample`
    problems: tuple[dict[str, Any], ...] = ()  # what leaves the audit with nothing (or little) to score
    # Krippendorff's bootstrap of a headline alpha with no formula for its SE (None: not needed)
    headline_bootstrap: dict[str, Any] | None = None

    @property
    def categories(self) -> tuple[str, ...]:
        return self.rule.categories

    def to_dict(self, *, include_disagreements: bool = True, listed: bool = True) -> dict[str, Any]:
        """The canonical document. ``listed=False`` leaves the disagreements a lazy sequence (the
        renderers read the first few of millions, and the JSON writer encodes them without dicts)."""
        out: dict[str, Any] = {
            "tool": {"name": "irr-audit", "version": self.tool_version},
            "rule": {
                "id": self.rule.id,
                "version": self.rule.version,
                "scale": self.rule.scale.value,
                "digest": self.rule.digest,
                "question": self.rule.question,
            },
            "sheets": list(self.sheets),
            "coders": list(self.coders),
            "units": dict(self.units),
            "missingness": self.missingness,
            "categories": list(self.categories),
            **self.agreement,
            "warnings": [*self.warnings, *self.agreement.get("warnings", [])],
            "disagreement_count": self.disagreement_count,
        }
        if self.rule.run_aliases:
            out["rule"]["run_aliases"] = dict(self.rule.run_aliases)
        if self.problems:
            out["problems"] = [dict(problem) for problem in self.problems]
        if self.group is not None:
            out["group_comparison"] = self.group
        if self.sample is not None:
            out["sample"] = self.sample
        if include_disagreements and self.disagreements is not None:
            out["disagreements"] = list(self.disagreements) if listed else self.disagreements
        if include_disagreements and self.disagreements_unlisted is not None:
            out["disagreements_unlisted"] = self.disagreements_unlisted
        out["headline"] = headline_block(out, self.headline_bootstrap)
        out["coefficients"] = coefficient_rows(out, self.headline_bootstrap)
        out["paradox"] = paradox_explanation(out)
        return out


REPORT_DATA = ("sheets", "units", "missingness", "agreement", "group", "sample", "problems", "headline_bootstrap")


def read_only_report(report: AuditReport) -> AuditReport:
    """``report`` with its data read-only at every depth (irr_audit._readonly): what an Audit
    holds, so that no value of it can be changed after the fact. The disagreements are left as
    they are: a join's are read from its arrays as they are shown."""
    return dataclasses.replace(report, **{name: read_only(getattr(report, name)) for name in REPORT_DATA})


def build_report(join: JoinResult, options: AuditOptions = AuditOptions()) -> AuditReport:
    rule = join.rule
    check_audit_size(len(join.coders), len(rule.categories), options.n_boot)
    agreement, counted = _agreement(rule, join.coders, join.codes, None, options)
    disagreeing = disagreement_units(join)
    return AuditReport(
        tool_version=__version__,
        rule=rule,
        sheets=tuple(_sheet_info(join, column) for column in range(len(join.sheets))),
        coders=join.coders,
        units={
            **join.summary()["units"],
            "available_case": counted["available_case"],
            "gwet_missing": counted["gwet_missing"],
        },
        missingness=_missingness(join),
        agreement=agreement,
        disagreements=Disagreements(join, disagreeing) if options.list_disagreements else None,
        disagreement_count=len(disagreeing),
        warnings=join.warnings,
        group=_group_comparison(join, options) if options.group else None,
        problems=tuple(join.problems),
        headline_bootstrap=headline_bootstrap(rule, join.coders, join.codes, None, agreement, options),
    )


def build_counts_report(
    rule: Rule,
    coders: tuple[str, ...],
    patterns: np.ndarray,
    counts: np.ndarray,
    sources: tuple[dict[str, Any], ...],
    options: AuditOptions = AuditOptions(),
) -> AuditReport:
    """The report from unit-pattern counts (`score --counts`): every coefficient, no unit-level lists."""
    if options.group is not None:
        raise UsageError(
            "--group needs the sheets, not counts.",
            hint="run score on the sheets or a join folder.",
            code="usage-group",
        )
    check_audit_size(len(coders), len(rule.categories), options.n_boot)
    agreement, counted = _agreement(rule, coders, patterns, counts, options)
    total = int(counts.sum())
    return AuditReport(
        tool_version=__version__,
        rule=rule,
        sheets=sources,
        coders=coders,
        units={
            "total": total,
            "fully_coded": counted["fully_coded"],
            "missing": total - counted["fully_coded"],
            "available_case": counted["available_case"],
            "gwet_missing": counted["gwet_missing"],
        },
        missingness={
            "log_rows": None,
            "by_reason": {},
            "by_coder": {},
            "note": "scored from unit-pattern counts: the missingness log stays with the sheets",
        },
        agreement=agreement,
        disagreements=None,  # the counts say how many units disagree, not which
        disagreement_count=disagreeing_count(patterns, counts),
        disagreements_unlisted=COUNTS_UNLISTED,
        warnings=("scored from unit-pattern counts: no missingness log and no list of disagreeing units",),
        headline_bootstrap=headline_bootstrap(rule, coders, patterns, counts, agreement, options),
    )


def headline_bootstrap(
    rule: Rule,
    coders: tuple[str, ...],
    codes: np.ndarray,
    counts: np.ndarray | None,
    agreement: dict[str, Any],
    options: AuditOptions,
) -> dict[str, Any] | None:
    """Krippendorff's bootstrap of the headline alpha on the fully coded units, when alpha is the
    headline and has no analytic interval (ordinal alpha): --bootstrap's replicates and --seed, else
    HEADLINE_BOOTSTRAP and HEADLINE_SEED. The same stream as the `krippendorff_bootstrap` section, so
    with --bootstrap and --seed at the 95% level the two agree. None when not needed."""
    chosen = headline_metric({"coders": list(coders), "rule": {"scale": rule.scale.value}, **agreement})
    metric = chosen.metric or {}
    if chosen.name != ALPHA or not metric.get("defined") or metric.get("ci"):
        return None
    n_boot = options.n_boot or HEADLINE_BOOTSTRAP
    seed = options.seed if options.seed is not None else HEADLINE_SEED
    patterns = compress(codes, len(rule.categories), counts)
    full = patterns.select(patterns.n_valid == patterns.n_coders)
    values = scale_values(rule.scale, len(rule.categories), _values(rule))
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(KALPHA_STREAM,)))
    drawn = krippendorff_bootstrap(full, rule.scale, values, n_boot, rng, options.alpha_min, options.intervals.level)
    return {**drawn, "seed": seed}


def _agreement(
    rule: Rule, coders: tuple[str, ...], codes: np.ndarray, counts: np.ndarray | None, options: AuditOptions
) -> tuple[dict[str, Any], dict[str, int]]:
    weights = options.weights if options.weights is not None else rule.weights
    try:
        resolve_weights(weights, rule.scale, len(rule.categories), _values(rule))
    except ValueError as error:
        raise UsageError(
            f"weights for rule {rule.id}: {error}.",
            hint="a matrix has one row and one column per code of the rule, in its order; "
            "ratio weights need values above 0.",
            code="usage-weights",
        ) from None
    patterns = compress(codes, len(rule.categories), counts)  # the units grouped once, for both calls
    summary = summarise(
        codes,
        len(rule.categories),
        rule.scale.value,
        _values(rule),
        n_boot=options.n_boot,
        seed=options.seed,
        counts=counts,
        intervals=options.intervals,
        weights=weights,
        patterns=patterns,
    )
    agreement = summary.to_dict(list(rule.categories), list(coders))
    counted = agreement.pop("units")
    agreement.pop("scale", None)
    agreement.update(
        extended_sections(
            codes,
            len(rule.categories),
            rule.scale.value,
            _values(rule),
            list(coders),
            agreement["metrics"],
            counts=counts,
            n_boot=options.n_boot,
            seed=options.seed,
            alpha_min=options.alpha_min,
            patterns=patterns,
            level=options.intervals.level,
        )
    )
    return agreement, counted


def _values(rule: Rule) -> np.ndarray | None:
    return np.array(rule.values) if rule.values is not None else None


def _sheet_info(join: JoinResult, column: int) -> dict[str, Any]:
    sheet = join.sheets[column]
    return {
        "name": sheet.name,
        "coder": sheet.coder,
        "sha256": sheet.sha256,
        "size": sheet.size,
        "rows": sheet.row_count,
        "empty_rows": sheet.empty_rows,
    }


def _missingness(join: JoinResult) -> dict[str, Any]:
    return {"log_rows": len(join.entries), "by_reason": join.log_counts(), "by_coder": join.log_counts_by_coder()}


def _group_comparison(join: JoinResult, options: AuditOptions) -> dict[str, Any]:
    spec = options.group
    assert spec is not None
    index = {coder: column for column, coder in enumerate(join.coders)}
    unknown = [coder for coder in (*spec.members, spec.reference) if coder not in index]
    if unknown:
        raise UsageError(
            f"--group/--against name {_listed(unknown)}, which {'is' if len(unknown) == 1 else 'are'} "
            "no coder of this audit.",
            hint=f"the coders are {', '.join(join.coders)}.",
            code="usage-group",
        )
    if spec.reference in spec.members:
        raise UsageError(
            f"--against {spec.reference!r} is also in the group.",
            code="usage-group",
            hint="the reference must be a coder outside the group.",
        )
    rule = join.rule
    members = [index[coder] for coder in spec.members]
    comparison = group_vs_reference(
        join.codes,
        len(rule.categories),
        rule.scale.value,
        members,
        index[spec.reference],
        _values(rule),
        n_boot=options.n_boot,
        seed=options.seed,
        intervals=options.intervals,
        weights=options.weights if options.weights is not None else rule.weights,
    )
    out = comparison.to_dict(list(rule.categories), list(spec.members), spec.reference)
    out["name"] = spec.name
    undecided = comparison.consensus.undecided
    units = np.flatnonzero(undecided)
    ids = join.units.take(from_numpy(units)).to_pylist()  # only these units' ids, not every unit's
    out["undecided_units"] = [
        {"comment_id": comment_id, "reason": REASONS[index]}
        for comment_id, index in zip(ids, undecided[units].tolist())
    ]
    return out


COUNTS_UNLISTED = "not available from unit-pattern counts, which carry no unit ids"


def disagreeing_count(patterns: np.ndarray, counts: np.ndarray) -> int:
    """How many fully coded units the coders did not all code the same, from unit patterns (one
    row per pattern, MISSING for no valid code) and how many units show each: the count
    :func:`disagreement_units` gives a join, known from counts though the units are not.

    >>> disagreeing_count(np.array([[0, 0], [0, 1], [1, -1]]), np.array([5, 3, 2]))
    3
    """
    codes = np.asarray(patterns)
    if codes.size == 0:
        return 0
    full = (codes >= 0).all(axis=1)
    differs = (codes != codes[:, :1]).any(axis=1)
    return int(np.asarray(counts)[full & differs].sum())


def disagreement_units(join: JoinResult) -> np.ndarray:
    """Fully coded units on which the coders did not all give the same code."""
    codes = join.codes
    differs = across_columns(codes, lambda column: column != codes[:, 0], np.logical_or)
    return np.flatnonzero(join.fully_coded & differs)


def disagreement_list(join: JoinResult) -> list[dict[str, Any]]:
    """The disagreements for post-hoc review, with the comment's text: from the sample's
    ledger when the join has one (the text every coder was given; a sheet's copy may have
    been edited), else from a sheet's body or text column. What a report lists, without
    scoring anything."""
    return list(Disagreements(join, disagreement_units(join)))


class Disagreements(Sequence[dict[str, Any]]):
    """The disagreements of a join (:func:`disagreement_list`), each unit's dict made only when
    it is read: the HTML and Markdown pages show the first few thousand of what can be millions,
    and the JSON writer encodes all of them from the join's arrays (irr_audit.report.jsonreport)."""

    CHUNK = 65_536  # units made into dicts at a time when iterated

    def __init__(self, join: JoinResult, units: np.ndarray) -> None:
        self.join = join
        self.units = read_only_array(units)  # indices of the disagreeing units, in unit order

    def __len__(self) -> int:
        return len(self.units)

    def comment_ids(self) -> list[str]:
        """The disagreeing units' comment ids, in order, without making their dicts."""
        ids: list[str] = self.join.units.take(from_numpy(self.units)).to_pylist()
        return ids

    def coder_codes(self) -> dict[str, list[str]]:
        """Each coder's codes of every disagreement, in order, as the dicts name them (no dict made)."""
        categories = np.array(self.join.rule.categories, dtype=object)
        return {
            coder: categories[self.join.codes[self.units, column]].tolist()
            for column, coder in enumerate(self.join.coders)
        }

    def have_texts(self) -> bool:
        """Whether any disagreement can have a text or link: a ledger, or a sheet with a text column."""
        return self.join.context is not None or any(sheet.texts is not None for sheet in self.join.sheets)

    def codes_at(self, index: int) -> dict[str, str]:
        """The coders' codes of the index-th disagreement, as its dict has them (no text looked up)."""
        categories = self.join.rule.categories
        return dict(zip(self.join.coders, (categories[code] for code in self.join.codes[self.units[index]].tolist())))

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(index, slice):
            return disagreement_items(self.join, self.units[index])
        return disagreement_items(self.join, self.units[[index]])[0]  # IndexError when out of range

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for start in range(0, len(self.units), self.CHUNK):
            yield from disagreement_items(self.join, self.units[start : start + self.CHUNK])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Disagreements):
            return self.join is other.join and np.array_equal(self.units, other.units)
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Disagreements({len(self)} units)"


def disagreement_items(join: JoinResult, units: np.ndarray) -> list[dict[str, Any]]:
    """The dicts of these disagreeing units (indices), with their text and, for a sampled join,
    the ledger's text, link and context."""
    categories = np.array(join.rule.categories, dtype=object)
    named = categories[join.codes[units]].tolist()
    coders = join.coders
    ids = join.units.take(from_numpy(units)).to_pylist()  # only these units' ids, not every unit's
    texts = join.texts_for(units)
    listed = [
        {"comment_id": comment_id, "codes": dict(zip(coders, row)), "text": text}
        for comment_id, row, text in zip(ids, named, texts)
    ]
    if join.context is None:
        return listed
    for item in listed:
        context = join.context.get(item["comment_id"])
        if context is not None:
            item["text"] = context.text or item["text"]
        item["link"] = context.link if context else ""
        item["parent_text"] = context.parent_text if context else ""
        item["thread_title"] = context.thread_title if context else ""
    return listed
