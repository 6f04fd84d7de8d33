"""The report's tables: one coefficient table with bands for every kappa-like coefficient, the
paradox explained for any number of coders, no table with headers and no rows, no column empty
in every row, numbers right-aligned in Markdown, and no snake_case in the prose."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import irr_audit
from irr_audit.report.headline import ALPHA_LIKE, KAPPA_LIKE
from irr_audit.report.sections import answer_sections, glossary_section, metric_sections

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tests/examples"


def coded(n_coders: int, n_codes: int, seed: int, dominant: bool = False) -> irr_audit.Audit:
    """Sixty units: each coder gives the unit's code, or another at random one time in four; with
    ``dominant`` most units hold the first code (a setting for the kappa paradox). One code missing."""
    rng = np.random.default_rng(seed)
    n = 60
    truth = np.where(rng.random(n) < 0.85, 0, rng.integers(0, n_codes, n)) if dominant else rng.integers(0, n_codes, n)
    frames = {}
    for coder in range(n_coders):
        codes = np.where(rng.random(n) < 0.25, rng.integers(0, n_codes, n), truth)
        labels = [f"c{code}" for code in codes]
        if coder == 0:
            labels[0] = "skip"  # one missing code: the missingness log is not empty
        frames[f"coder{coder}"] = pd.DataFrame({"comment_id": [f"u{i}" for i in range(n)], "code": labels})
    rule = {
        "rule": "topic",
        "version": 1,
        "scale": "nominal",
        "codes": [f"c{k}" for k in range(n_codes)],
        "missing_codes": ["skip"],
    }
    return irr_audit.audit(frames, rule)


DESIGNS = [(m, k, dominant) for m in (2, 3, 5) for k in (2, 4, 6) for dominant in (False, True)]


@pytest.fixture(
    scope="module", params=DESIGNS, ids=lambda d: f"{d[0]}coders-{d[1]}codes-{'dominant' if d[2] else 'even'}"
)
def design(request) -> tuple[irr_audit.Audit, dict]:
    m, k, dominant = request.param
    audit = coded(m, k, seed=10 * m + k, dominant=dominant)
    return audit, audit.to_dict()


def test_no_section_is_a_table_with_headers_and_no_rows(design) -> None:
    audit, report = design
    for section in [*answer_sections(report), *metric_sections(report), glossary_section()]:
        assert section.rows or section.notes or section.paragraphs, section.key
        for at in range(1, len(section.columns)):  # no column empty in every row
            assert any(row[at] for row in section.rows), (section.key, section.columns[at])
    lines = audit.to_markdown().splitlines()
    for at, line in enumerate(lines):
        if re.fullmatch(r"\|(-{3}:?\|)+", line):
            assert lines[at + 1].startswith("| "), lines[at - 1]  # a header is followed by a row


def test_the_paradox_is_explained_for_any_number_of_coders(design) -> None:
    audit, report = design
    paradox = report["paradox"]
    assert sum(paradox["prevalence"].values()) == pytest.approx(1.0)
    assert paradox["chance_agreement"] == report["metrics"]["pe"]["value"]
    assert paradox["max_kappa"]["value"] is not None and paradox["max_kappa"]["value"] <= 1 + 1e-12
    assert paradox["kappa"] <= paradox["max_kappa"]["value"] + 1e-12  # the bound holds
    (section,) = [s for s in answer_sections(report) if s.key == "paradox"]
    assert section.paragraphs == (paradox["sentence"],) and "Coders choosing at random" in paradox["sentence"]
    assert any(row[0].startswith("the largest") for row in section.rows)
    markdown = audit.to_markdown()
    assert paradox["sentence"].split(".")[0].replace("'", "'") in markdown.replace("\\", "")


def test_every_kappa_like_coefficient_has_a_band(design) -> None:
    _, report = design
    for row in report["coefficients"]:
        if row["defined"] and (row["metric"] in KAPPA_LIKE or row["metric"] in ALPHA_LIKE):
            assert row["band"] and row["band"]["label"] and "convention" in row["band"]["convention"], row["metric"]
    (chance,) = [s for s in metric_sections(report) if s.key == "chance_corrected"]
    assert all(row[-1] for row in chance.rows)  # Scott's pi, Conger, Brennan-Prediger, Fleiss, AC1, alpha ...


def test_no_snake_case_in_the_prose(design) -> None:
    audit, _ = design
    markdown = audit.to_markdown()
    prose = [line for line in markdown.splitlines() if not line.startswith("| comment\\_id")]
    assert not [line for line in prose if re.search(r"[a-z]\\_[a-z]", line)]
    text = audit.to_text(width=None)
    assert not [line for line in text.splitlines() if re.search(r"\b[a-z]+_[a-z_]+\b", line)]


def test_markdown_right_aligns_the_columns_of_numbers() -> None:
    markdown = coded(3, 4, seed=1).to_markdown().splitlines()
    after = markdown.index("## Coefficients")
    assert markdown[after + 2] == "| coefficient | estimate | 95% CI | convention band | what it is for |"
    assert markdown[after + 3] == "|---|---:|---:|---|---|"
    raw = markdown.index("## Raw agreement")
    assert markdown[raw + 3] == "|---|---:|---:|"


def test_the_bootstrap_column_shows_only_when_a_bootstrap_ran() -> None:
    def columns(audit: irr_audit.Audit) -> tuple[str, ...]:
        (section,) = [s for s in metric_sections(audit.to_dict()) if s.key == "uncertainty"]
        return section.columns

    assert "bootstrap 95% CI" not in columns(coded(3, 2, seed=2))
    folder = CASES / "A_fictional_audit"
    sheets, rule = sorted((folder / "sheets").glob("*.csv")), folder / "rule.yaml"
    assert "bootstrap 95% CI" in columns(irr_audit.audit(sheets, rule, bootstrap=200, seed=1))


def test_an_interval_of_no_width_says_why() -> None:
    folder = CASES / "C_undefined_kappa"
    report = irr_audit.audit(sorted((folder / "sheets").glob("*.csv")), folder / "rule.yaml").to_dict()
    ac1 = next(row for row in report["coefficients"] if row["metric"] == "gwet_ac1")
    assert (ac1["interval"]["low"], ac1["interval"]["high"]) == (1.0, 1.0)
    assert "the standard error is 0" in ac1["interval_note"]
    (uncertainty,) = [s for s in metric_sections(report) if s.key == "uncertainty"]
    assert any(note.startswith("Gwet's AC1") and "standard error is 0" in note for note in uncertainty.notes)
    kappa = next(row for row in report["coefficients"] if row["metric"] == "cohen_kappa")
    assert kappa["defined"] is False and kappa["interval"] is None and kappa["band"] is None


def test_markdown_lists_how_three_or_more_coders_split() -> None:
    audit = coded(5, 2, seed=4, dominant=True)
    report = audit.to_dict()
    item = report["disagreements"][0]
    counts = sorted(
        ((list(item["codes"].values()).count(code), code) for code in set(item["codes"].values())), reverse=True
    )
    markdown = audit.to_markdown()
    assert "| comment_id | coder0 | coder1 | coder2 | coder3 | coder4 | split |" in markdown
    row = next(line for line in markdown.splitlines() if line.startswith(f"| {item['comment_id']} |"))
    assert row.removesuffix(" |").split(" | ")[6] == " - ".join(f"{n} {code}" for n, code in counts)
