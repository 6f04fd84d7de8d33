"""The methods paragraph in good English on every scale and for a codebook's conditional
variables, with the counts the example codebook's independent oracle gives
(examples/codebook/expected.json, from examples/codebook/oracle.py)."""

from __future__ import annotations

import json
from pathlib import Path

import irr_audit
from irr_audit.report.methods import condition_sentence, methods_paragraph

ROOT = Path(__file__).resolve().parents[1]
CODEBOOK = ROOT / "codebooks" / "comment_study" / "v1.yaml"
SHEETS = [ROOT / "examples" / "codebook" / "sheets" / f"{coder}.csv" for coder in ("alice", "bob", "carol")]


def test_each_scale_takes_its_article_and_many_codes_are_counted() -> None:
    audit = irr_audit.audit_codebook(SHEETS, CODEBOOK)
    severity = audit.audits["severity"].to_methods()
    assert "with the codes 'minor', 'moderate', 'major' and 'critical' on an ordinal scale" in severity
    assert "on a nominal scale" in audit.audits["sarcasm"].to_methods()
    document = audit.audits["product_area"].to_dict()
    many = {**document, "categories": [f"c{number}" for number in range(12)]}
    assert "with 12 codes on a nominal scale" in methods_paragraph(many)


def test_a_conditional_variable_says_where_it_was_asked_with_the_oracles_counts() -> None:
    expected = json.loads((ROOT / "examples" / "codebook" / "expected.json").read_text(encoding="utf-8"))["severity"]
    coders = len(SHEETS)
    not_applicable = len(expected["not_applicable_units"]) * coders
    not_comparable = len(expected["condition_disagreement_units"]) * coders
    text = irr_audit.audit_codebook(SHEETS, CODEBOOK).to_methods()
    assert text.startswith("The codebook comment_study v1 (4 variables) was coded")
    assert (
        f"The variable severity was asked only where a coder coded explicit_current_failure as 'yes': "
        f"{not_applicable} cells where it did not apply were not applicable (neither missing nor disagreements), "
        f"and the {not_comparable} cells of units on which the coders disagreed about explicit_current_failure "
        "were left out." in text
    )
    assert text.count("The variable ") == 1  # only the conditional variable


def test_one_cell_is_said_in_the_singular() -> None:
    sentence = condition_sentence("v", "p", ["a", "b"], {"not_applicable": 1, "not_comparable": 0})
    assert sentence == (
        "The variable v was asked only where a coder coded p as 'a' or 'b': 1 cell where it did not apply "
        "was not applicable (neither missing nor disagreements)."
    )
