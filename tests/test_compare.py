"""`irr-audit compare A B` and irr_audit.compare: each coefficient's difference (B - A) with a
bootstrap interval, checked against a direct computation of every replicate, and its coverage
of a known true difference in a simulation (docs/statistics.md, "Two audits compared")."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score
from typer.testing import CliRunner

import irr_audit
from irr_audit.cli import app
from irr_audit.metrics import difference
from irr_audit.metrics.difference import Side, compare_sides, replicate_weights, strata
from irr_audit.report.comparison import relation
from irr_audit.rules.scale import Scale

ROOT = Path(__file__).resolve().parents[1]
RULE = ROOT / "rules" / "explicit_current_failure" / "v1.yaml"
ALICE, BOB = ROOT / "examples" / "sheets" / "alice.csv", ROOT / "examples" / "sheets" / "bob.csv"
BINARY = ("0", "1")


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def true_kappa(prevalence: float, accuracy: float) -> float:
    """Cohen's kappa of the population: a unit is 1 with probability ``prevalence``, and each of
    two coders gives its true class with probability ``accuracy``, independently."""
    p1 = prevalence * accuracy + (1 - prevalence) * (1 - accuracy)
    po = accuracy**2 + (1 - accuracy) ** 2
    pe = p1**2 + (1 - p1) ** 2
    return (po - pe) / (1 - pe)


def coded(rng: np.random.Generator, truth: np.ndarray, accuracy: float) -> np.ndarray:
    return np.where(rng.random(len(truth)) < accuracy, truth, 1 - truth)


def ids(prefix: str, n: int, start: int = 0) -> np.ndarray:
    return np.array([f"{prefix}{i}" for i in range(start, start + n)], dtype=object)


def two_audits(
    rng: np.random.Generator, n: int, paired: bool, accuracy: tuple[float, float] = (0.8, 0.9), prevalence: float = 0.4
) -> tuple[Side, Side]:
    truth_a = (rng.random(n) < prevalence).astype(np.int64)
    truth_b = truth_a if paired else (rng.random(n) < prevalence).astype(np.int64)
    a = np.c_[coded(rng, truth_a, accuracy[0]), coded(rng, truth_a, accuracy[0])]
    b = np.c_[coded(rng, truth_b, accuracy[1]), coded(rng, truth_b, accuracy[1])]
    return (
        Side(a, ids("u", n), BINARY, Scale.NOMINAL),
        Side(b, ids("u" if paired else "v", n), BINARY, Scale.NOMINAL),
    )


def expanded(patterns_rows: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The units a replicate drew, one row each: every pattern repeated as often as drawn."""
    return np.repeat(patterns_rows, weights.astype(np.int64), axis=0)


# --- against a direct computation --------------------------------------------------------


@pytest.mark.parametrize("paired", [True, False])
def test_interval_is_the_percentile_of_directly_computed_replicate_differences(paired: bool) -> None:
    a, b = two_audits(np.random.default_rng(7), 50, paired)
    n_boot, seed = 300, 11
    found = compare_sides(a, b, n_boot=n_boot, seed=seed)["differences"]["cohen_kappa"]
    patterns_a, patterns_b, chunks = replicate_weights(a, b, strata(a.ids, b.ids), n_boot, seed)
    differences = []
    for weights_a, weights_b in chunks:
        for row_a, row_b in zip(weights_a, weights_b):
            units_a, units_b = expanded(patterns_a.rows, row_a), expanded(patterns_b.rows, row_b)
            assert len(units_a) == len(a.ids) and len(units_b) == len(b.ids)  # every stratum at its size
            kappa_a = cohen_kappa_score(units_a[:, 0], units_a[:, 1])
            kappa_b = cohen_kappa_score(units_b[:, 0], units_b[:, 1])
            differences.append(kappa_b - kappa_a)
    assert len(differences) == n_boot
    assert found["ci"] == pytest.approx(list(np.percentile(differences, [2.5, 97.5])), abs=1e-12)
    assert found["a"] == pytest.approx(cohen_kappa_score(a.codes[:, 0], a.codes[:, 1]), abs=1e-12)
    assert found["b"] == pytest.approx(cohen_kappa_score(b.codes[:, 0], b.codes[:, 1]), abs=1e-12)
    assert found["difference"] == pytest.approx(found["b"] - found["a"], abs=1e-12)
    assert ("paired" if paired else "independent") in found["method"]


def test_paired_replicates_draw_the_same_units_in_both_audits() -> None:
    """B is A with the coders' columns swapped and the units in another order: the same units
    drawn in both give the same kappa, so every paired difference is 0."""
    a, _ = two_audits(np.random.default_rng(3), 40, True)
    order = np.random.default_rng(4).permutation(40)
    b = Side(a.codes[order][:, ::-1], a.ids[order], BINARY, Scale.NOMINAL)
    found = compare_sides(a, b, n_boot=200, seed=1)["differences"]
    assert found["cohen_kappa"]["difference"] == pytest.approx(0, abs=1e-12)
    assert found["cohen_kappa"]["ci"] == pytest.approx([0, 0], abs=1e-12)
    assert found["po"]["ci"] == pytest.approx([0, 0], abs=1e-12)


def test_overlapping_units_are_paired_where_shared_and_independent_elsewhere() -> None:
    rng = np.random.default_rng(5)
    a, b = two_audits(rng, 60, True)
    b = Side(b.codes, ids("u", 60, start=20), BINARY, Scale.NOMINAL)  # u20..u79: 40 shared
    n_boot, seed = 200, 2
    found = compare_sides(a, b, n_boot=n_boot, seed=seed)
    assert found["units"] == {"a": 60, "b": 60, "shared": 40, "a_only": 20, "b_only": 20}
    assert "stratified" in found["method"]
    split = strata(a.ids, b.ids)
    patterns_a, patterns_b, chunks = replicate_weights(a, b, split, n_boot, seed)
    chunks = list(chunks)
    for weights_a, weights_b in chunks:
        assert (weights_a.sum(axis=1) == 60).all() and (weights_b.sum(axis=1) == 60).all()
    differences = [
        cohen_kappa_score(*expanded(patterns_b.rows, wb).T) - cohen_kappa_score(*expanded(patterns_a.rows, wa).T)
        for weights_a, weights_b in chunks
        for wa, wb in zip(weights_a, weights_b)
    ]
    kappa = found["differences"]["cohen_kappa"]
    assert kappa["ci"] == pytest.approx(list(np.percentile(differences, [2.5, 97.5])), abs=1e-12)


def test_per_category_differences_match_each_category_against_the_rest() -> None:
    a, b = two_audits(np.random.default_rng(9), 60, True)
    found = compare_sides(a, b, n_boot=100, seed=0)["per_category"]
    assert set(found) == {"0", "1"}
    for category in BINARY:
        k = BINARY.index(category)
        direct_a = cohen_kappa_score(a.codes[:, 0] == k, a.codes[:, 1] == k)
        direct_b = cohen_kappa_score(b.codes[:, 0] == k, b.codes[:, 1] == k)
        assert found[category]["kappa"]["difference"] == pytest.approx(direct_b - direct_a, abs=1e-12)
        assert set(found[category]) >= {"kappa", "specific_agreement"}


# --- coverage of a known true difference ---------------------------------------------------


@pytest.mark.parametrize(("paired", "low"), [(True, 0.90), (False, 0.92)])
def test_interval_covers_the_true_difference_at_about_its_nominal_rate(paired: bool, low: float) -> None:
    """300 runs of 80 units (seeds 0..299), 200 replicates each: the 95% interval of the kappa
    difference covered the true difference in 92.3% (paired) and 95.0% (independent) of them;
    a longer run is in docs/statistics.md. The percentile interval runs a little short for kappa
    on 80 units, paired."""
    accuracy, prevalence = (0.8, 0.9), 0.4
    truth = true_kappa(prevalence, accuracy[1]) - true_kappa(prevalence, accuracy[0])
    runs, covered = 300, 0
    for run in range(runs):
        a, b = two_audits(np.random.default_rng(10_000 + run), 80, paired, accuracy, prevalence)
        ci = compare_sides(a, b, n_boot=200, seed=run, names=("cohen_kappa",))["differences"]["cohen_kappa"]["ci"]
        covered += ci is not None and ci[0] <= truth <= ci[1]
    assert low <= covered / runs <= 0.98


# --- the audits, the API and the command line ------------------------------------------------


def join(tmp_path: Path, name: str, sheets: list[Path], rule: Path = RULE) -> Path:
    out = tmp_path / name
    code, _, err = cli("join", *map(str, sheets), "--rule", str(rule), "--out", str(out), "-q")
    assert code == 0, err
    return out


def recoded_bob(tmp_path: Path, fixes: int) -> Path:
    """bob's sheet with his first ``fixes`` disagreements with alice re-coded to alice's code."""
    alice = {row["comment_id"]: row["code"] for row in csv.DictReader(ALICE.open(encoding="utf-8"))}
    rows = list(csv.DictReader(BOB.open(encoding="utf-8")))
    left = fixes
    for row in rows:
        theirs = alice.get(row["comment_id"])
        if left and row["code"] in ("yes", "no") and theirs in ("yes", "no") and row["code"] != theirs:
            row["code"], left = theirs, left - 1
    folder = tmp_path / f"recoded{fixes}"
    folder.mkdir()
    with (folder / "bob.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return folder / "bob.csv"


def test_compare_of_a_recoding_is_paired_and_matches_each_audit(tmp_path: Path) -> None:
    first = join(tmp_path, "A", [ALICE, BOB])
    second = join(tmp_path, "B", [ALICE, recoded_bob(tmp_path, 2)])
    compared = irr_audit.compare(first, second, bootstrap=300, seed=4)
    document = compared.to_dict()
    a, b = irr_audit.audit(first), irr_audit.audit(second)
    for name, entry in document["differences"].items():
        assert entry["a"] == pytest.approx(float(a.metrics.loc[name, "value"]), abs=1e-12)
        assert entry["b"] == pytest.approx(float(b.metrics.loc[name, "value"]), abs=1e-12)
        assert set(entry) >= {"a", "b", "difference", "ci", "method"}
    assert document["differences"]["cohen_kappa"]["difference"] == pytest.approx(0.2, abs=1e-12)
    assert document["units"]["relation"] == "same"
    assert document["units"]["fully_coded"]["shared"] == 20
    assert "paired" in document["bootstrap"]["method"]
    assert document["rules"]["same"] is True
    assert compared.differences.loc["cohen_kappa", "difference"] == pytest.approx(0.2, abs=1e-12)
    # the command line prints the same document, and the same seed gives the same bytes
    code, out, err = cli("compare", str(first), str(second), "--bootstrap", "300", "--seed", "4", "--format", "json")
    assert code == 0, err
    assert json.loads(out) == document and out == compared.to_json()
    code, text, _ = cli("compare", str(first), str(second), "--bootstrap", "300", "--seed", "4")
    assert code == 0 and "Cohen's kappa" in text and "paired percentile bootstrap" in text


def test_seed_is_drawn_and_recorded_when_absent(tmp_path: Path) -> None:
    first = join(tmp_path, "A", [ALICE, BOB])
    compared = irr_audit.compare(first, first, bootstrap=200)
    seed = compared.to_dict()["bootstrap"]["seed"]
    assert isinstance(seed, int) and seed >= 0
    again = irr_audit.compare(first, first, bootstrap=200, seed=seed)
    assert again.to_json() == compared.to_json()


def test_a_revised_rule_on_a_new_sample_is_compared_independently_with_its_diff(tmp_path: Path) -> None:
    rows = list(csv.DictReader(ALICE.open(encoding="utf-8")))
    bob = {row["comment_id"]: row["code"] for row in csv.DictReader(BOB.open(encoding="utf-8"))}
    folder = tmp_path / "new"
    folder.mkdir()
    for coder, codes in (("alice", {r["comment_id"]: r["code"] for r in rows}), ("bob", bob)):
        with (folder / f"{coder}.csv").open("w", newline="", encoding="utf-8") as handle:
            handle.write("comment_id,code\n")
            handle.writelines(f"new-{unit},{code}\n" for unit, code in codes.items())
    revised = tmp_path / "v2.yaml"
    revised.write_text(
        RULE.read_text(encoding="utf-8")
        .replace("version: 1", "version: 2")
        .replace("changelog: First version.", "changelog: Second version."),
        encoding="utf-8",
    )
    first = join(tmp_path, "A", [ALICE, BOB])
    second = join(tmp_path, "B", [folder / "alice.csv", folder / "bob.csv"], revised)
    document = irr_audit.compare(first, second, bootstrap=200, seed=1).to_dict()
    assert document["units"]["relation"] == "disjoint"
    assert document["units"]["shared"] == 0 and document["units"]["b_only"] == document["b"]["units"]["total"]
    assert document["bootstrap"]["method"].startswith("independent")
    assert document["rules"]["same"] is False
    assert "v1 -> v2" in document["rules"]["diff"]
    # the same codes on other units: the same coefficients, and an interval around 0
    kappa = document["differences"]["cohen_kappa"]
    assert kappa["difference"] == pytest.approx(0, abs=1e-12)
    assert kappa["ci"][0] < 0 < kappa["ci"][1]


def test_report_of_b_carries_the_comparison_with_a(tmp_path: Path) -> None:
    first = join(tmp_path, "A", [ALICE, BOB])
    second = join(tmp_path, "B", [ALICE, recoded_bob(tmp_path, 1)])
    code, out, err = cli("report", str(second), "--compare", str(first), "--seed", "3", "--format", "json", "-q")
    assert code == 0, err
    report, direct = json.loads(out)["comparison"], irr_audit.compare(first, second, seed=3).to_dict()
    assert report["b"].pop("source") == "explicit_current_failure v1, coders alice, bob"  # B is the audit reported
    direct["b"].pop("source")
    assert report == direct
    for output_format, marker in (("md", "## Compared with an earlier audit"), ("html", 'id="comparison"')):
        code, page, err = cli("report", str(second), "--compare", str(first), "--seed", "3", "--format", output_format)
        assert code == 0, err
        assert marker in page and "B - A" in page


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["--bootstrap", "99"], "usage-bootstrap"),
        (["--bootstrap", "100001"], "usage-bootstrap"),
        (["--seed", "-1"], "usage-seed"),
    ],
)
def test_bad_options_are_refused_by_name(tmp_path: Path, args: list[str], code: str) -> None:
    first = join(tmp_path, "A", [ALICE, BOB])
    exit_code, _, err = cli("compare", str(first), str(first), *args)
    assert exit_code == 2 and f"Error [{code}]" in err


def test_inputs_that_cannot_be_compared_are_refused(tmp_path: Path) -> None:
    first = join(tmp_path, "A", [ALICE, BOB])
    code, _, err = cli("compare", str(first), str(tmp_path / "missing"))
    assert code == 2 and "Error [path-not-found]" in err and "missing does not exist" in err
    counted = irr_audit.audit_counts(first / "counts.csv", RULE)
    with pytest.raises(irr_audit.UsageError) as raised:
        irr_audit.compare(counted, first)
    assert raised.value.code == "usage-compare"


def test_what_cannot_be_compared_is_named() -> None:
    """A: two coders under a yes/no rule; B: three coders under a rule that adds "maybe". Only
    the coefficients both report are compared, per category only the categories both have."""
    rule_a = {"rule": "r", "version": 1, "scale": "nominal", "codes": [{"code": "yes"}, {"code": "no"}]}
    rule_b = {**rule_a, "version": 2, "codes": [*rule_a["codes"], {"code": "maybe"}], "changelog": "adds maybe"}
    units = [f"u{i}" for i in range(12)]
    codes = ["yes", "no", "yes", "no", "yes", "yes", "no", "no", "yes", "no", "maybe", "yes"]

    def frame(shift: int, allowed: tuple[str, ...]) -> pd.DataFrame:
        shifted = [code if code in allowed else "yes" for code in codes[shift:] + codes[:shift]]
        return pd.DataFrame({"comment_id": units, "code": shifted})

    a = irr_audit.audit({"ann": frame(0, ("yes", "no")), "ben": frame(1, ("yes", "no"))}, rule_a)
    every = ("yes", "no", "maybe")
    b = irr_audit.audit({"ann": frame(0, every), "ben": frame(0, every), "cy": frame(2, every)}, rule_b)
    document = irr_audit.compare(a, b, bootstrap=100, seed=0).to_dict()
    assert "cohen_kappa" not in document["differences"]  # two coders' own coefficient
    # Fleiss' and Conger's kappa are reported for two coders as for three: compared
    assert {"po", "fleiss_kappa", "conger_kappa", "krippendorff_alpha", "gwet_ac1"} <= set(document["differences"])
    assert set(document["per_category"]) == {"yes", "no"}
    notes = " | ".join(document["notes"])
    assert "the coders differ" in notes
    assert "reported by A only, not compared: " in notes and "cohen_kappa" in notes
    assert "categories of B's rule only, not compared per category: maybe" in notes
    assert document["rules"]["same"] is False and "+ maybe" in document["rules"]["diff"]


# --- the strata and the patterns, against their plain definitions ------------------------------


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from([f"u{n}" for n in range(30)] + ["", " u1", "ü"]), unique=True, max_size=25),
    st.lists(st.sampled_from([f"u{n}" for n in range(30)] + ["", " u1", "ü"]), unique=True, max_size=25),
)
def test_the_strata_are_the_ids_matched_one_by_one(ids_a: list[str], ids_b: list[str]) -> None:
    split = strata(np.array(ids_a, dtype=object), np.array(ids_b, dtype=object))
    where_b = {unit: at for at, unit in enumerate(ids_b)}
    shared = [at for at, unit in enumerate(ids_a) if unit in where_b]
    assert split.shared_a.tolist() == shared
    assert split.shared_b.tolist() == [where_b[ids_a[at]] for at in shared]
    assert split.only_a.tolist() == [at for at, unit in enumerate(ids_a) if unit not in where_b]
    assert split.only_b.tolist() == sorted(set(range(len(ids_b))) - set(split.shared_b.tolist()))
    assert all(array.dtype == np.int64 for array in (split.shared_a, split.shared_b, split.only_a, split.only_b))


IDS = st.lists(st.sampled_from([f"u{n}" for n in range(30)] + ["", " u1", "ü"]), unique=True, max_size=25)
AS_TEXT = st.sampled_from(
    [
        lambda ids: np.array(ids, dtype=object),
        lambda ids: pa.array(ids, type=pa.string()),
        lambda ids: pa.array(ids, type=pa.large_string()),
    ]
)


@settings(max_examples=150, deadline=None)
@given(IDS, IDS, AS_TEXT, AS_TEXT)
def test_the_strata_and_the_relation_are_those_of_the_ids_as_sets(ids_a, ids_b, as_a, as_b) -> None:
    """Ids held as numpy or pyarrow texts (a join's own), of either pyarrow width, match alike."""
    a, b = set(ids_a), set(ids_b)
    kind = "same" if a == b else ("disjoint" if not a & b else "overlapping")
    expected = {"relation": kind, "shared": len(a & b), "a_only": len(a - b), "b_only": len(b - a)}
    assert relation(as_a(ids_a), as_b(ids_b)) == expected
    split = strata(as_a(ids_a), as_b(ids_b))
    assert [ids_a[at] for at in split.shared_a] == [ids_b[at] for at in split.shared_b] == [u for u in ids_a if u in b]
    assert len(split.only_a) == len(a - b) and len(split.only_b) == len(b - a)


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 6), st.integers(1, 5), st.integers(0, 60), st.integers(0, 2**32 - 1))
def test_the_patterns_are_np_uniques_rows_in_its_order(coders: int, categories: int, units: int, seed: int) -> None:
    codes = np.random.default_rng(seed).integers(0, categories, size=(units, coders)).astype(np.int8)
    patterns, inverse = difference._patterns(codes, categories)
    if not units:
        assert len(patterns.counts) == 0 and len(inverse) == 0
        return
    rows, expected_inverse, counts = np.unique(codes.astype(np.int64), axis=0, return_inverse=True, return_counts=True)
    assert patterns.rows.tolist() == rows.tolist() and patterns.counts.tolist() == counts.tolist()
    assert inverse.tolist() == expected_inverse.reshape(-1).tolist()


def test_patterns_too_wide_for_a_number_are_np_uniques_rows_too() -> None:
    codes = np.random.default_rng(4).integers(0, 5, size=(50, 40))  # 6^40 rows: no 64-bit key
    patterns, inverse = difference._patterns(codes, 5)
    rows, expected_inverse = np.unique(codes, axis=0, return_inverse=True)
    assert patterns.rows.tolist() == rows.tolist() and inverse.tolist() == expected_inverse.reshape(-1).tolist()
