"""Orchestration: joined sheets -> the audit report model. Pure: no files, no clock.

Only commands that score import this module, before they read the sheets: the
metrics are imported with it (not at the first coefficient), so that a large
audit imports them while its ids are still being matched.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from irr_audit import __version__
from irr_audit.errors import UsageError
from irr_audit.join import JoinResult, across_columns
from irr_audit.metrics import group_vs_reference, summarise
from irr_audit.rules import Rule


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
                f"--group {group!r} is not NAME=CODER,CODER[,...] with --against CODER.",
                hint="for example --group humans=ann,ben,cat --against model.",
                code="usage-group",
            )
        return cls(name.strip(), coders, against.strip())


@dataclass(frozen=True)
class AuditOptions:
    n_boot: int = 0
    seed: int | None = None
    group: GroupSpec | None = None
    list_disagreements: bool = True  # `score` only counts them; `report` lists them with their text


@dataclass(frozen=True)
class AuditReport:
    """Everything an audit shows. ``to_dict()`` is the canonical (JSON) form;
    Markdown, HTML and the console are views of it."""

    tool_version: str
    rule: Rule
    sheets: tuple[dict[str, Any], ...]
    coders: tuple[str, ...]
    units: dict[str, int]
    missingness: dict[str, Any]
    agreement: dict[str, Any]
    disagreements: tuple[dict[str, Any], ...] | None  # None: counted, not listed
    disagreement_count: int
    warnings: tuple[str, ...] = ()
    group: dict[str, Any] | None = None
    sample: dict[str, Any] | None = None  # where the units came from, when the audit began with `sample`

    @property
    def categories(self) -> tuple[str, ...]:
        return self.rule.categories

    def to_dict(self, *, include_disagreements: bool = True) -> dict[str, Any]:
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
        if self.group is not None:
            out["group_comparison"] = self.group
        if self.sample is not None:
            out["sample"] = self.sample
        if include_disagreements and self.disagreements is not None:
            out["disagreements"] = list(self.disagreements)
        return out


def build_report(join: JoinResult, options: AuditOptions = AuditOptions()) -> AuditReport:
    rule = join.rule
    agreement, counted = _agreement(rule, join.coders, join.codes, None, options)
    return AuditReport(
        tool_version=__version__,
        rule=rule,
        sheets=tuple(_sheet_info(join, column) for column in range(len(join.sheets))),
        coders=join.coders,
        units={**join.summary()["units"], "available_case": counted["available_case"]},
        missingness=_missingness(join),
        agreement=agreement,
        disagreements=tuple(_disagreements(join)) if options.list_disagreements else None,
        disagreement_count=len(disagreement_units(join)),
        warnings=join.warnings,
        group=_group_comparison(join, options) if options.group else None,
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
        raise UsageError("--group needs the sheets, not counts.", hint="run score on the sheets or a join folder.",
                         code="usage-group")
    agreement, counted = _agreement(rule, coders, patterns, counts, options)
    total = int(counts.sum())
    return AuditReport(
        tool_version=__version__,
        rule=rule,
        sheets=sources,
        coders=coders,
        units={"total": total, "fully_coded": counted["fully_coded"], "missing": total - counted["fully_coded"],
               "available_case": counted["available_case"]},
        missingness={"log_rows": None, "by_reason": {}, "by_coder": {},
                     "note": "scored from unit-pattern counts: the missingness log stays with the sheets"},
        agreement=agreement,
        disagreements=(),
        disagreement_count=0,
        warnings=("scored from unit-pattern counts: no missingness log and no list of disagreeing units",),
    )


def _agreement(
    rule: Rule, coders: tuple[str, ...], codes: np.ndarray, counts: np.ndarray | None, options: AuditOptions
) -> tuple[dict[str, Any], dict[str, int]]:
    summary = summarise(codes, len(rule.categories), rule.scale.value, _values(rule), n_boot=options.n_boot,
                        seed=options.seed, counts=counts)
    agreement = summary.to_dict(list(rule.categories), list(coders))
    counted = agreement.pop("units")
    agreement.pop("scale", None)
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
            f"--group/--against name {', '.join(map(repr, unknown))}, which is no coder of this audit.",
            hint=f"the coders are {', '.join(join.coders)}.",
            code="usage-group",
        )
    if spec.reference in spec.members:
        raise UsageError(f"--against {spec.reference!r} is also in the group.", code="usage-group",
                         hint="the reference must be a coder outside the group.")
    rule = join.rule
    members = [index[coder] for coder in spec.members]
    comparison = group_vs_reference(join.codes, len(rule.categories), rule.scale.value, members,
                                    index[spec.reference], _values(rule), n_boot=options.n_boot,
                                    seed=options.seed)
    out = comparison.to_dict(list(rule.categories), list(spec.members), spec.reference)
    out["name"] = spec.name
    out["undecided_units"] = [
        {"comment_id": str(join.unit_ids[unit]), "reason": reason}
        for unit, reason in enumerate(comparison.consensus.reasons)
        if reason is not None
    ]
    return out


def disagreement_units(join: JoinResult) -> np.ndarray:
    """Fully coded units on which the coders did not all give the same code."""
    codes = join.codes
    differs = across_columns(codes, lambda column: column != codes[:, 0], np.logical_or)
    return np.flatnonzero(join.fully_coded & differs)


def _disagreements(join: JoinResult) -> list[dict[str, Any]]:
    """The disagreements for post-hoc review, with the comment's text when a sheet
    carries it (a body or text column)."""
    units = disagreement_units(join)
    categories = np.array(join.rule.categories, dtype=object)
    named = categories[join.codes[units]].tolist()
    coders = join.coders
    ids = join.unit_ids[units].tolist()
    texts = join.texts_for(units)
    return [
        {"comment_id": comment_id, "codes": dict(zip(coders, row)), "text": text}
        for comment_id, row, text in zip(ids, named, texts)
    ]
