"""Renderers of the one audit report model: JSON (canonical), Markdown, console."""

from __future__ import annotations

import json
from typing import Any

METRIC_LABELS = {
    "po": "observed agreement (po)",
    "pe": "chance agreement (pe)",
    "cohen_kappa": "Cohen's kappa",
}


def render_json(document: dict[str, Any]) -> str:
    """Byte-stable JSON: sorted keys, fixed indentation, a trailing newline."""
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def format_number(value: float | None, digits: int = 4) -> str:
    if value is None:
        return "undefined"
    text = f"{value:.{digits}f}"
    return "0.0000" if text == "-0.0000" else text


def format_metric(metric: dict[str, Any], digits: int = 4) -> str:
    """One metric for people: its value, or 'undefined' and why."""
    if not metric.get("defined"):
        return f"undefined: {metric.get('reason', 'no reason given')}"
    return format_number(metric["value"], digits)


def format_interval(metric: dict[str, Any], digits: int = 4) -> str:
    ci = metric.get("ci")
    if not ci:
        return ""
    text = f"[{format_number(ci[0], digits)}, {format_number(ci[1], digits)}]"
    if metric.get("ci_clipped"):
        text += " clipped"
    return text


def metric_label(name: str) -> str:
    return METRIC_LABELS.get(name, name.replace("_", " "))
