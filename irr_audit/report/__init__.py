"""The audit report: one model (report.model: what an audit found, as data) and its
renderers, which all say the same thing: JSON (canonical, byte-stable), Markdown,
HTML and the console."""

from irr_audit.io.outputs import render_json
from irr_audit.report.model import AuditOptions, AuditReport, build_counts_report, build_report

__all__ = ["AuditOptions", "AuditReport", "build_counts_report", "build_report", "render_json"]
