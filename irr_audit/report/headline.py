"""The one coefficient an audit is summed up by (docs/statistics.md, "The headline
coefficient"): Cohen's kappa for two coders on a nominal rule, Krippendorff's alpha at
the rule's level of measurement otherwise. Every place that names one number for an
audit (verify's verdict, a report's headline) takes it from :func:`headline_metric`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from irr_audit.report.format import format_metric, metric_label

KAPPA = "cohen_kappa"
ALPHA = "krippendorff_alpha"


@dataclass(frozen=True)
class Headline:
    """The headline coefficient of a report: its key in ``metrics``, a label for people,
    why it was chosen, and the report's entry for it (None when the report has none)."""

    name: str
    label: str
    why: str
    metric: Mapping[str, Any] | None

    @property
    def shown(self) -> str:
        """Its value for people, 'undefined: <reason>', or 'not in the score'."""
        if not isinstance(self.metric, Mapping):
            return "not in the score"
        return format_metric(dict(self.metric))

    def to_dict(self) -> dict[str, Any]:
        metric = self.metric if isinstance(self.metric, Mapping) else {}
        return {
            "metric": self.name,
            "label": self.label,
            "why": self.why,
            "value": metric.get("value"),
            "defined": bool(metric.get("defined", False)),
            **({"reason": metric["reason"]} if "reason" in metric else {}),
        }


def headline_metric(report: Mapping[str, Any]) -> Headline:
    """The recommended coefficient for the report's design (its coders and the rule's
    scale), read from a report dict as `irr-audit report --format json` writes it or as
    a bundle's manifest froze it. Pure; a report missing parts gets alpha, which is
    defined for any number of coders and every scale.

    >>> headline_metric({"coders": ["a", "b"], "rule": {"scale": "nominal"}, "metrics": {}}).name
    'cohen_kappa'
    >>> headline_metric({"coders": ["a", "b", "c"], "rule": {"scale": "nominal"}, "metrics": {}}).label
    "Krippendorff's alpha (nominal)"
    """
    coders = report.get("coders")
    rule = report.get("rule")
    scale = rule.get("scale") if isinstance(rule, Mapping) else None
    metrics = report.get("metrics")
    metrics = metrics if isinstance(metrics, Mapping) else {}
    two = isinstance(coders, list) and len(coders) == 2
    if two and scale == "nominal":
        return Headline(KAPPA, metric_label(KAPPA), "two coders, a nominal rule", metrics.get(KAPPA))
    level = scale if isinstance(scale, str) else "nominal"
    count = f"{len(coders)} coders" if isinstance(coders, list) else "the coders"
    return Headline(ALPHA, f"{metric_label(ALPHA)} ({level})", f"{count}, a {level} rule", metrics.get(ALPHA))
