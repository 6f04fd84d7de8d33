"""Orchestration: joined sheets -> the audit report model. Pure: no files, no clock."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from irr_audit import __version__, metrics
from irr_audit.join import JoinResult
from irr_audit.rules import Rule


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
    disagreements: tuple[dict[str, Any], ...]
    warnings: tuple[str, ...] = ()

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
            "disagreement_count": len(self.disagreements),
            "warnings": list(self.warnings),
        }
        if include_disagreements:
            out["disagreements"] = list(self.disagreements)
        return out


def build_report(join: JoinResult) -> AuditReport:
    fully = join.fully_coded
    return AuditReport(
        tool_version=__version__,
        rule=join.rule,
        sheets=tuple(_sheet_info(join, column) for column in range(len(join.sheets))),
        coders=join.coders,
        units=join.summary()["units"],
        missingness=_missingness(join),
        agreement=agreement(join.codes[fully], len(join.rule.categories), join.coders),
        disagreements=tuple(_disagreements(join)),
        warnings=join.warnings,
    )


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
    log = join.log
    by_coder = {
        coder: {reason: int(count) for reason, count in log[log["coder"] == coder]["reason"].value_counts().items()}
        for coder in join.coders
    }
    return {"log_rows": len(log), "by_reason": join.summary()["log_rows"], "by_coder": by_coder}


def pair_table(first: np.ndarray, second: np.ndarray, n_categories: int) -> np.ndarray:
    """The K x K agreement table: rows the first coder's code, columns the second's."""
    cells = np.bincount(first * n_categories + second, minlength=n_categories * n_categories)
    return cells.reshape(n_categories, n_categories)


def agreement(codes: np.ndarray, n_categories: int, coders: tuple[str, ...]) -> dict[str, Any]:
    """Two-coder agreement on fully coded units: the table, po, pe and Cohen's kappa,
    and the same for every coder pair."""
    pairs = []
    for first, second in combinations(range(len(coders)), 2):
        table = pair_table(codes[:, first], codes[:, second], n_categories)
        pairs.append(
            {
                "coders": [coders[first], coders[second]],
                "n": int(table.sum()),
                "table": table.tolist(),
                "metrics": _cohen_metrics(table),
            }
        )
    overall = pairs[0] if len(coders) == 2 else None
    return {
        "table": overall["table"] if overall else None,
        "metrics": overall["metrics"] if overall else {},
        "pairs": pairs,
    }


def _cohen_metrics(table: np.ndarray) -> dict[str, Any]:
    return {
        "po": metrics.observed_agreement(table).to_dict(),
        "pe": metrics.chance_agreement(table).to_dict(),
        "cohen_kappa": metrics.cohen_kappa(table).to_dict(),
    }


def _disagreements(join: JoinResult) -> list[dict[str, Any]]:
    """Fully coded units on which the coders did not all give the same code."""
    fully = join.fully_coded
    codes = join.codes
    differ = fully & (codes != codes[:, :1]).any(axis=1)
    categories = join.rule.categories
    return [
        {
            "comment_id": join.unit_ids[unit],
            "codes": {coder: categories[codes[unit, column]] for column, coder in enumerate(join.coders)},
        }
        for unit in np.flatnonzero(differ)
    ]
