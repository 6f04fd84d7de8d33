"""The audit report: one model (report.model: what an audit found, as data) and its
renderers, which all say the same thing: JSON (canonical, byte-stable), Markdown,
HTML and the console."""
