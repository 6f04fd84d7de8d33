"""Coding sheets from the tools people annotate in (Label Studio, Prodigy, doccano, Argilla)
and from a model's labels: `irr-audit import FORMAT EXPORT --rule RULE --out DIR`.

One module per format turns the export's bytes into annotations (model.ParsedExport, pure);
build applies the rule and resolves repeats (pure); folder writes the sheets, the import
log and import.json as one run. The package sits beside sample in the layout: like
sample, it makes the coding sheets that join reads, and it uses only io and rules (and
sample's coder-name check) below it.

One rule codes one question of an export (``ImportOptions.question``: Label Studio's
from_name, Argilla's question name). A codebook (several rules) will map each question
to its rule and call the same parser once per question on the same bytes, one
ParsedExport and one build per rule: nothing here assumes one question per export.
"""
