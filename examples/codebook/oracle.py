"""The expected values of the example codebook, computed without irr-audit.

Reads the three wide sheets with the csv module, applies the conditional-variable
convention of docs/statistics.md ("Conditional variables") in a few plain lines, and
computes every coefficient with other libraries: Fleiss' kappa with statsmodels,
Krippendorff's alpha with the krippendorff package, Cohen's kappa with scikit-learn.
Run from the repository root:

    python examples/codebook/oracle.py > examples/codebook/EXPECTED.md

It writes examples/codebook/expected.json beside it (the numbers the tests read).
"""

from __future__ import annotations

import csv
import json
from itertools import combinations
from pathlib import Path

import krippendorff
import numpy as np
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

HERE = Path(__file__).parent
CODERS = ("alice", "bob", "carol")
# The codebook's variables, their codes in the rules' order, missing codes, aliases and scale
# (copied by hand from rules/<id>/v1.yaml).
VARIABLES = {
    "explicit_current_failure": (("yes", "no"), ("unknown",), {"y": "yes", "n": "no"}, "nominal"),
    "product_area": (("app", "sync", "billing", "support", "other"), ("unknown",), {}, "nominal"),
    "severity": (("minor", "moderate", "major", "critical"), ("unknown",), {}, "ordinal"),
    "sarcasm": (("yes", "no"), ("unknown",), {"y": "yes", "n": "no"}, "nominal"),
}
CONDITIONS = {"severity": ("explicit_current_failure", ("yes",))}


def read_sheets() -> tuple[list[str], dict[str, dict[str, dict[str, str]]]]:
    """unit ids in first-seen order; coder -> unit -> variable -> raw cell."""
    sheets: dict[str, dict[str, dict[str, str]]] = {}
    units: list[str] = []
    for coder in CODERS:
        with (HERE / "sheets" / f"{coder}.csv").open(newline="", encoding="utf-8") as stream:
            rows = list(csv.DictReader(stream))
        sheets[coder] = {row["comment_id"].strip(): row for row in rows}
        units += [row["comment_id"].strip() for row in rows if row["comment_id"].strip() not in units]
    return units, sheets


def classify(variable: str, raw: str | None) -> tuple[str, str | None]:
    """(status, code): valid, unknown, blank, invalid or absent."""
    codes, missing, aliases, _ = VARIABLES[variable]
    if raw is None:
        return "absent", None
    text = aliases.get(raw.strip().lower(), raw.strip().lower())
    if text == "":
        return "blank", None
    if text in codes:
        return "valid", text
    if text in missing:
        return "unknown", None
    return "invalid", None


def cells(variable: str, unit: str, sheets: dict) -> dict[str, tuple[str, str | None]]:
    """coder -> (status, code) of one unit, with the condition applied: a cell whose condition
    fails is not_applicable (whatever it holds), one whose parent is not a valid code is
    condition_undecided."""
    result = {}
    for coder in CODERS:
        row = sheets[coder].get(unit)
        raw = None if row is None else row[variable]
        status, code = classify(variable, raw)
        if variable in CONDITIONS and status != "absent":  # a coder without a row for the unit is absent
            parent, allowed = CONDITIONS[variable]
            parent_status, parent_code = cells(parent, unit, sheets)[coder]
            if parent_status != "valid":
                status, code = "condition_undecided", None
            elif parent_code not in allowed:
                status, code = "not_applicable", None
        result[coder] = (status, code)
    return result


def unit_kind(per_coder: dict[str, tuple[str, str | None]]) -> str:
    """not_applicable (no coder's condition holds), condition_disagreement (it holds for one
    coder and fails for another), or in (the unit is one of the variable's units). An absent
    coder (no row) decided nothing."""
    statuses = [status for status, _ in per_coder.values()]
    holds = [status not in ("not_applicable", "condition_undecided", "absent") for status in statuses]
    if not any(holds):
        return "not_applicable"
    if "not_applicable" in statuses:
        return "condition_disagreement"
    return "in"


def main() -> None:
    units, sheets = read_sheets()
    expected: dict[str, dict] = {}
    print("# Expected values of the example codebook\n")
    print("Computed by `examples/codebook/oracle.py` (no irr-audit code): the convention of")
    print('docs/statistics.md, "Conditional variables", applied in plain Python; Fleiss\' kappa from')
    print("statsmodels (`fleiss_kappa` on `aggregate_raters`), Krippendorff's alpha from the `krippendorff`")
    print("package (`alpha`, nominal or ordinal), Cohen's kappa from scikit-learn (`cohen_kappa_score`).")
    print(f"{len(units)} units, coders {', '.join(CODERS)}.\n")
    for variable, (codes, _, _, scale) in VARIABLES.items():
        kinds = {unit: unit_kind(cells(variable, unit, sheets)) for unit in units}
        inside = [unit for unit in units if kinds[unit] == "in"]
        table = {unit: cells(variable, unit, sheets) for unit in inside}
        full = [unit for unit in inside if all(status == "valid" for status, _ in table[unit].values())]
        index = {code: at for at, code in enumerate(codes)}
        matrix = np.array([[index[table[unit][coder][1]] for coder in CODERS] for unit in full])
        counts, _ = aggregate_raters(matrix, n_cat=len(codes))
        agreeing = (counts * (counts - 1)).sum(axis=1) / (len(CODERS) * (len(CODERS) - 1))
        reliability = np.array(
            [[index[table[u][c][1]] + 1 if table[u][c][0] == "valid" else np.nan for u in inside] for c in CODERS]
        )
        full_reliability = matrix.T.astype(float) + 1
        missing_log: dict[str, int] = {}
        coded_anyway = []
        for unit in units:
            for coder, (status, _) in cells(variable, unit, sheets).items():
                row = sheets[coder].get(unit)
                if status == "not_applicable" and row is not None and row[variable].strip():
                    coded_anyway.append(f"{unit} ({coder}: {row[variable].strip()})")
                if kinds[unit] == "in" and status != "valid":
                    missing_log[status] = missing_log.get(status, 0) + 1
        pairs = {}
        for first, second in combinations(range(len(CODERS)), 2):
            pairs[f"{CODERS[first]}-{CODERS[second]}"] = float(cohen_kappa_score(matrix[:, first], matrix[:, second]))
        entry = {
            "scale": scale,
            "units": len(inside),
            "fully_coded": len(full),
            "not_applicable_units": sorted(unit for unit in units if kinds[unit] == "not_applicable"),
            "condition_disagreement_units": sorted(u for u in units if kinds[u] == "condition_disagreement"),
            "coded_when_not_applicable": coded_anyway,
            "missing_cells": dict(sorted(missing_log.items())),
            "po": float(agreeing.mean()),
            "fleiss_kappa": float(fleiss_kappa(counts, method="fleiss")),
            "krippendorff_alpha": float(krippendorff.alpha(full_reliability, level_of_measurement=scale)),
            "krippendorff_alpha_available_case": float(krippendorff.alpha(reliability, level_of_measurement=scale)),
            "pairwise_cohen_kappa": pairs,
        }
        expected[variable] = entry
        print(f"## {variable} ({scale})\n")
        print(f"- units of the variable: {entry['units']}; fully coded: {entry['fully_coded']}")
        print(f"- not applicable (no coder's condition holds): {', '.join(entry['not_applicable_units']) or 'none'}")
        print(f"- condition disagreement: {', '.join(entry['condition_disagreement_units']) or 'none'}")
        print(f"- coded although not applicable (logged): {', '.join(coded_anyway) or 'none'}")
        print(f"- missing cells among its units: {entry['missing_cells'] or 'none'}")
        print(f"- po (Fleiss' P-bar, fully coded): {entry['po']:.6f}")
        print(f"- Fleiss' kappa (fully coded): {entry['fleiss_kappa']:.6f}")
        print(f"- Krippendorff's alpha, {scale} (fully coded): {entry['krippendorff_alpha']:.6f}")
        print(f"- Krippendorff's alpha, {scale} (available case): {entry['krippendorff_alpha_available_case']:.6f}")
        for pair, value in pairs.items():
            print(f"- Cohen's kappa {pair} (fully coded): {value:.6f}")
        print()
    print("## One number by hand\n")
    print("severity, po over its 11 fully coded units: 4 units on which all three coders agree count 1")
    print("each, the 7 others split 2 to 1 and count 1/3 each (one agreeing pair of three):")
    print("(4 + 7/3) / 11 = 0.575758, as above.")
    (HERE / "expected.json").write_text(json.dumps(expected, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
