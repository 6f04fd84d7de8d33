"""A codebook's sheets and counts as a confused coder or user writes them (`join`, `score`,
`report --codebook`): each refused with one message naming the file, the row or column, and
the fix, or audited with every cell accounted for."""

from __future__ import annotations

from cases_codebooks import FAILURE, SEVERITY, book
from kit import Case

GOOD = book("{rule: failure, version: 1}", "{rule: severity, version: 1}")
RULES = {"codebook.yaml": GOOD, "rules/failure/v1.yaml": FAILURE, "rules/severity/v1.yaml": SEVERITY}
WIDE_A = "comment_id,failure,severity\na,yes,low\nb,no,\nc,yes,high\nd,no,low\n"
WIDE_B = "comment_id,failure,severity\na,yes,low\nb,no,\nc,no,\nd,no,\n"
SCORE = "score alice.csv bob.csv --codebook codebook.yaml"


def sheets(alice: str = WIDE_A, bob: str = WIDE_B, **more: str) -> dict[str, str]:
    return {**RULES, "alice.csv": alice, "bob.csv": bob, **more}


CASES = [
    Case(
        "codebook audit: wide sheets score, the skipped and wrongly coded cells logged",
        SCORE + " --format json",
        sheets(),
        exit=0,
        shows=('"coded_when_not_applicable": 1', '"condition_disagreement": 1'),
    ),
    Case(
        "codebook audit: a sheet both long and wide",
        SCORE,
        sheets(alice="comment_id,variable,code,failure\na,failure,yes,yes\n"),
        exit=2,
        code="sheet-codebook-shape",
        says=("alice.csv", "both long"),
    ),
    Case(
        "codebook audit: a sheet of neither shape (one rule's sheet)",
        SCORE,
        sheets(bob="comment_id,code\na,yes\n"),
        exit=2,
        code="sheet-codebook-shape",
        says=("bob.csv", "failure, severity"),
    ),
    Case(
        "codebook audit: a wide sheet without one variable's column",
        SCORE,
        sheets(bob="comment_id,failure\na,yes\n"),
        exit=2,
        code="sheet-missing-column",
        says=("bob.csv", "none for severity"),
    ),
    Case(
        "codebook audit: a variable's column twice",
        SCORE,
        sheets(bob="comment_id,failure,severity,Severity\na,yes,low,low\n"),
        exit=2,
        code="sheet-duplicate-column",
        says=("bob.csv", "severity"),
    ),
    Case(
        "codebook audit: a long sheet naming a variable the codebook lacks",
        SCORE + " --format json",
        sheets(alice="comment_id,variable,code\na,failure,yes\na,severity,low\na,severty,low\nb,failure,no\n"),
        exit=0,
        shows=('"unknown_variable": 1',),
    ),
    Case(
        "codebook audit: --rule and --codebook together",
        SCORE + " --rule rules/failure/v1.yaml",
        sheets(),
        exit=2,
        code="usage-rule-or-codebook",
        says=("--rule", "--codebook"),
    ),
    Case(
        "codebook audit: a gate naming no variable",
        SCORE + " --gate severe=0.8",
        sheets(),
        exit=2,
        code="usage-gate",
        says=("severe",),
    ),
    Case(
        "codebook audit: a gate that is no number",
        SCORE + " --gate severity=high",
        sheets(),
        exit=2,
        code="usage-gate",
        says=("severity=high",),
    ),
    Case(
        "codebook audit: a gate failed names the variable",
        SCORE + " --gate 0.99",
        sheets(),
        exit=1,
        shows=("gate failed: failure",),
    ),
    Case(
        "codebook audit: a rule's counts scored as a codebook's",
        "score --counts counts.csv --codebook codebook.yaml",
        {**RULES, "counts.csv": "alice,bob,units\nyes,yes,3\n"},
        exit=2,
        code="counts-columns",
        says=("counts.csv", "variable"),
    ),
    Case(
        "codebook audit: counts of a variable the codebook lacks",
        "score --counts counts.csv --codebook codebook.yaml",
        {**RULES, "counts.csv": "variable,alice,bob,units\nfailure,yes,yes,3\nsarcasm,no,no,1\n"},
        exit=2,
        code="counts-variable",
        says=("counts.csv", "row 3", "sarcasm"),
    ),
    Case(
        "codebook audit: join --out over a sheet's folder",
        "join alice.csv bob.csv --codebook codebook.yaml --out .",
        sheets(),
        exit=2,
        code="output-overwrites-input",
    ),
    Case(
        "codebook audit: --sample names no folder",
        "join alice.csv bob.csv --codebook codebook.yaml --out joined --sample sample",
        sheets(),
        exit=2,
        code="sample-dir-not-found",
        says=("sample",),
    ),
    Case(
        "codebook audit: --sample names a folder that is no sample",
        "join alice.csv bob.csv --codebook codebook.yaml --out joined --sample rules",
        sheets(),
        exit=2,
        code="usage-not-a-sample-dir",
        says=("rules",),
    ),
]
