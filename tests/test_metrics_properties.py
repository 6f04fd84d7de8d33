"""Hypothesis properties: oracles from other packages, invariants, fast path vs naive."""

from __future__ import annotations

import itertools
import warnings

import krippendorff
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from irr_audit.metrics import (
    cohen_kappa,
    conger_kappa,
    consensus_codes,
    fleiss_kappa,
    group_vs_reference,
    krippendorff_alpha,
    scott_pi,
    summarise,
)
from irr_audit.metrics import patterns as patterns_module
from irr_audit.metrics.bootstrap import replicate_counts
from irr_audit.metrics.krippendorff import Scale
from irr_audit.metrics.patterns import compress, merge_coders, pair_tables
from irr_audit.metrics.plan import multi_coder_plan, per_category_plan, two_coder_plan

CHANCE_CORRECTED = (
    "cohen_kappa",
    "scott_pi",
    "fleiss_kappa",
    "conger_kappa",
    "gwet_ac1",
    "gwet_ac2",
    "brennan_prediger",
    "krippendorff_alpha",
    "weighted_kappa_linear",
    "weighted_kappa_quadratic",
    "pabak",
    "max_kappa",
)


@st.composite
def coded(draw, min_coders=2, max_coders=5, missing=False, min_units=2, max_units=40):
    k = draw(st.integers(2, 5))
    r = draw(st.integers(min_coders, max_coders))
    n = draw(st.integers(min_units, max_units))
    cells = st.integers(-1 if missing else 0, k - 1)
    codes = np.array(draw(st.lists(st.lists(cells, min_size=r, max_size=r), min_size=n, max_size=n)), dtype=np.int64)
    return codes, k


def table_of(codes: np.ndarray, k: int) -> np.ndarray:
    table = np.zeros((k, k), dtype=np.int64)
    np.add.at(table, (codes[:, 0], codes[:, 1]), 1)
    return table


# --- oracles -------------------------------------------------------------------------


@given(coded(2, 2))
def test_cohen_kappa_matches_sklearn(data):
    codes, k = data
    s = summarise(codes, k, "ordinal")
    labels = list(range(k))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, weights in (
            ("cohen_kappa", None),
            ("weighted_kappa_linear", "linear"),
            ("weighted_kappa_quadratic", "quadratic"),
        ):
            expected = cohen_kappa_score(codes[:, 0], codes[:, 1], labels=labels, weights=weights)
            metric = s.metrics[name]
            if metric.defined:
                assert metric.value == pytest.approx(expected, abs=1e-9)
            else:
                assert len(set(codes.ravel())) == 1 and "pe = 1" in metric.reason


@pytest.mark.parametrize(("first", "second"), [(0, 1), (1, 0), (0, 2), (2, 2)])
def test_one_unit_is_undefined_where_sklearn_gives_0(first: int, second: int) -> None:
    """A documented difference (docs/statistics.md, "One unit"): scikit-learn's cohen_kappa_score
    gives 0.0 for one disagreeing unit (pe = 0, so 0 / 1) and NaN for one agreeing unit (pe = 1);
    the tool reports both undefined, for the one reason, as every chance-corrected coefficient,
    leave-one-out included. The property test above draws two units or more for this reason."""
    codes = np.array([[first, second]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = cohen_kappa_score(codes[:, 0], codes[:, 1], labels=[0, 1, 2])
    assert theirs == 0.0 if first != second else np.isnan(theirs)
    s = summarise(codes, 3, "ordinal")
    for name in ("cohen_kappa", "weighted_kappa_linear", "pabak", "gwet_ac1", "krippendorff_alpha", "max_kappa"):
        assert not s.metrics[name].defined and s.metrics[name].value is None, name
        assert s.metrics[name].reason == "n = 1: a single unit cannot separate agreement from chance", name
    assert s.metrics["po"].value == float(first == second)
    three = summarise(np.array([[first, second, second]]), 3, "nominal")
    for entry in three.leave_one_out:  # two coders left on the one unit: no number either
        for name in ("fleiss_kappa", "krippendorff_alpha", "gwet_ac1"):
            assert not entry.metrics[name].defined and "n = 1" in str(entry.metrics[name].reason), name


@given(coded(3, 6))
def test_fleiss_matches_statsmodels(data):
    codes, k = data
    assume(len(np.unique(codes)) >= 2)
    table, _ = aggregate_raters(codes, n_cat=k)
    assert fleiss_kappa(codes, k).value == pytest.approx(sm_fleiss_kappa(table), abs=1e-9)


@given(
    coded(2, 5, missing=True),
    st.sampled_from(["nominal", "ordinal", "interval", "ratio"]),
    st.randoms(use_true_random=False),
)
def test_alpha_matches_krippendorff_package(data, level, random):
    codes, k = data
    values = np.array(sorted(random.sample(range(1, 50), k)), dtype=float)
    metric = krippendorff_alpha(codes, k, level, values)
    numeric = np.where(codes >= 0, values[np.clip(codes, 0, None)], np.nan)
    n_pairable = sum(1 for row in codes if (row >= 0).sum() >= 2)
    pairable_values = numeric[[(row >= 0).sum() >= 2 for row in codes]]
    distinct = len(np.unique(pairable_values[~np.isnan(pairable_values)]))
    if n_pairable == 0 or distinct < 2:
        assert not metric.defined and metric.reason
        return
    expected = krippendorff.alpha(numeric.T, level_of_measurement=level, value_domain=values)
    assert metric.value == pytest.approx(expected, abs=1e-9)


# --- invariants ------------------------------------------------------------------------


def defined_values(metrics: dict) -> dict[str, float]:
    return {name: m.value for name, m in metrics.items() if not isinstance(m, dict) and m.defined}


def same_values(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for name in a:
        assert a[name] == pytest.approx(b[name], abs=1e-9), name


@given(coded(2, 4, missing=True), st.randoms(use_true_random=False))
def test_symmetric_in_coders_and_invariant_to_unit_order(data, random):
    codes, k = data
    base = summarise(codes, k, "nominal")
    order = list(range(codes.shape[1]))
    random.shuffle(order)
    units = list(range(len(codes)))
    random.shuffle(units)
    moved = summarise(codes[units][:, order], k, "nominal")
    for before, after in ((base.metrics, moved.metrics), (base.available_case, moved.available_case)):
        # The bias index is signed: (b - c) / n changes sign when the two coders swap.
        a = {n: v for n, v in defined_values(before).items() if n != "bias_index"}
        b = {n: v for n, v in defined_values(after).items() if n != "bias_index"}
        same_values(a, b)


@given(coded(2, 4, missing=True), st.randoms(use_true_random=False))
def test_nominal_coefficients_invariant_to_renaming_categories(data, random):
    codes, k = data
    permutation = list(range(k))
    random.shuffle(permutation)
    renamed = np.where(codes >= 0, np.array(permutation)[np.clip(codes, 0, None)], -1)
    invariant = (
        "po",
        "pe",
        "cohen_kappa",
        "scott_pi",
        "fleiss_kappa",
        "conger_kappa",
        "gwet_ac1",
        "brennan_prediger",
        "krippendorff_alpha",
        "max_kappa",
        "pabak",
    )
    a = summarise(codes, k, "nominal").metrics
    b = summarise(renamed, k, "nominal").metrics
    for name in invariant:
        if name in a:
            assert a[name].defined == b[name].defined
            if a[name].defined:
                assert a[name].value == pytest.approx(b[name].value, abs=1e-9), name


@given(coded(2, 4))
def test_unused_category_changes_no_unweighted_kappa(data):
    codes, k = data
    a = summarise(codes, k, "nominal").metrics
    b = summarise(codes, k + 1, "nominal").metrics
    for name in (
        "po",
        "pe",
        "cohen_kappa",
        "scott_pi",
        "fleiss_kappa",
        "conger_kappa",
        "krippendorff_alpha",
        "max_kappa",
    ):
        if name in a:
            assert a[name].defined == b[name].defined
            if a[name].defined:
                assert a[name].value == pytest.approx(b[name].value, abs=1e-9), name


@given(coded(2, 5, missing=True), st.sampled_from(["nominal", "ordinal", "interval"]))
def test_chance_corrected_within_bounds_and_ci_clipped(data, scale):
    codes, k = data
    s = summarise(codes, k, scale, values=list(range(k)))
    for metrics in (s.metrics, s.available_case):
        for name in CHANCE_CORRECTED:
            metric = metrics.get(name)
            if metric is not None and metric.defined:
                # Gwet's AC2 is the exception: its weighted chance term can exceed 1/2, and
                # then (pa - pe)/(1 - pe) falls below -1 (e.g. codes [[0, 2], [0, 3], [0, 3], [0, 3]]).
                low = -1 - 1e-12 if name != "gwet_ac2" else -np.inf
                assert low <= metric.value <= 1 + 1e-12, name
                if metric.ci is not None:  # clipped to [-1, 1], never so as to exclude the estimate
                    assert min(-1, metric.value) <= metric.ci[0] <= metric.value <= metric.ci[1] <= 1, name


@given(st.integers(2, 5), st.integers(2, 5), st.data())
def test_identical_codes_spanning_two_categories_give_one(k, r, data):
    column = np.array(data.draw(st.lists(st.integers(0, k - 1), min_size=2, max_size=30)))
    assume(len(np.unique(column)) >= 2)
    s = summarise(np.repeat(column[:, None], r, axis=1), k, "ordinal")
    for name in CHANCE_CORRECTED:
        if name in s.metrics and name not in ("pabak",):
            assert s.metrics[name].value == pytest.approx(1.0, abs=1e-12), name


@given(coded(2, 5))
def test_available_case_equals_metrics_without_missing(data):
    codes, k = data
    s = summarise(codes, k, "ordinal")
    assert s.n_available == s.n_fully_coded == len(codes)
    for name, metric in s.metrics.items():
        other = s.available_case[name]
        if isinstance(metric, dict):
            assert {c: m.value for c, m in metric.items()} == {c: m.value for c, m in other.items()}
        else:
            assert (metric.value, metric.se, metric.reason) == (other.value, other.se, other.reason)


@given(coded(2, 2))
def test_conger_is_cohen_and_fleiss_is_scott_for_two_coders(data):
    codes, k = data
    kappa, pi = cohen_kappa(table_of(codes, k)), scott_pi(table_of(codes, k))
    assert conger_kappa(codes, k).defined == kappa.defined
    if kappa.defined:
        assert conger_kappa(codes, k).value == pytest.approx(kappa.value, abs=1e-9)
        assert fleiss_kappa(codes, k).value == pytest.approx(pi.value, abs=1e-9)


# --- the fast path equals a straightforward computation -------------------------------


def naive_fleiss(codes: np.ndarray, k: int) -> float:
    """Fleiss (1971) written per unit, complete data."""
    n, m = codes.shape
    counts = np.array([[sum(1 for c in row if c == j) for j in range(k)] for row in codes])
    p_i = [(sum(c * c for c in row) - m) / (m * (m - 1)) for row in counts]
    p_j = counts.sum(axis=0) / (n * m)
    p_bar, p_e = sum(p_i) / n, float((p_j**2).sum())
    return (p_bar - p_e) / (1 - p_e)


def naive_coincidences(codes: np.ndarray, k: int) -> np.ndarray:
    """Krippendorff (2011): every ordered pair of codes in a unit, weight 1/(m_u - 1)."""
    o = np.zeros((k, k))
    for row in codes:
        valid = [c for c in row if c >= 0]
        m = len(valid)
        if m < 2:
            continue
        for a, b in itertools.permutations(range(m), 2):
            o[valid[a], valid[b]] += 1 / (m - 1)
    return o


@given(coded(3, 5))
def test_fleiss_fast_path_equals_per_unit_formula(data):
    codes, k = data
    assume(len(np.unique(codes)) >= 2)
    assert summarise(codes, k, "nominal").metrics["fleiss_kappa"].value == pytest.approx(
        naive_fleiss(codes, k), abs=1e-9
    )


@given(coded(3, 5, missing=True))
def test_coincidence_matrix_equals_pairwise_count(data):
    codes, k = data
    s = summarise(codes, k, "nominal")
    full = codes[(codes >= 0).all(axis=1)]
    assert np.allclose(s.table, naive_coincidences(full, k))


@given(coded(2, 4, missing=True), st.integers(0, 2**32 - 1), st.sampled_from(["nominal", "ordinal"]))
def test_batched_estimators_equal_point_estimates_on_resampled_units(data, seed, scale):
    codes, k = data
    patterns = compress(codes, k)
    patterns = patterns.select(patterns.n_valid >= 2)
    assume(patterns.n_units >= 2)
    plan = (two_coder_plan if patterns.n_coders == 2 else multi_coder_plan)(patterns, Scale(scale), None)
    draws = next(replicate_counts(patterns.counts, 3, np.random.default_rng(seed)))
    for row in draws:
        assert np.array_equal(row, np.rint(row))  # float64 draws hold exact integers
        expanded = np.repeat(patterns.rows, row.astype(np.int64), axis=0)
        point = summarise(expanded, k, scale).available_case
        for c in plan:
            value, code = c.batch(row[None, :])
            expected = point[c.name]
            if isinstance(expected, dict):
                got = [None if cd else v for v, cd in zip(value[0], code[0], strict=True)]
                want = [m.value for m in expected.values()]
                assert got == pytest.approx(want, abs=1e-9, nan_ok=True)
            elif patterns.n_units and expanded.shape[0] > 1:
                assert (code[0] == 0) == expected.defined, c.name
                if expected.defined:
                    assert value[0] == pytest.approx(expected.value, abs=1e-9), c.name


def test_pair_table_rows_are_the_first_coder():
    codes = np.array([[0, 1], [0, 1], [1, 0]])
    p = compress(codes, 2)
    assert pair_tables(p, 0, 1, p.counts).tolist() == [[0, 2], [1, 0]]


@given(coded(3, 5, missing=True), st.integers(0, 2**32 - 1), st.sampled_from(["nominal", "ordinal"]))
def test_coefficients_blind_to_coders_agree_on_merged_patterns(data, seed, scale):
    """The bootstrap runs every coefficient but Conger's on patterns merged by their codes:
    same values as on the patterns themselves, for any resampled weights."""
    codes, k = data
    patterns = compress(codes, k)
    patterns = patterns.select(patterns.n_valid >= 2)
    assume(patterns.n_units >= 2)
    merged, index = merge_coders(patterns)
    assert merged.n_units == patterns.n_units and len(index) == len(patterns.counts)
    weights = np.random.default_rng(seed).integers(0, 4, size=(3, len(patterns.counts))).astype(float)
    onto = np.zeros((len(index), len(merged.counts)))
    onto[np.arange(len(index)), index] = 1.0
    plans = (
        (multi_coder_plan(patterns, Scale(scale), None), multi_coder_plan(merged, Scale(scale), None)),
        (per_category_plan(patterns), per_category_plan(merged)),
    )
    for plan, merged_plan in plans:
        on_merged = {c.name: c for c in merged_plan}
        for c in plan:
            if c.needs_coders:
                continue
            value, code = c.batch(weights)
            merged_value, merged_code = on_merged[c.name].batch(weights @ onto)
            assert np.array_equal(code, merged_code), c.name
            assert np.allclose(value, merged_value, rtol=0, atol=1e-12, equal_nan=True), c.name


# --- bootstrap ---------------------------------------------------------------------------


def test_replicate_counts_are_chunks_of_spawned_generators() -> None:
    """The replicates are drawn in chunks on threads, each chunk from its own
    generator spawned from the seed: the result is what drawing those chunks one
    after another gives, whatever the threads' timing."""
    counts = np.array([500, 300, 150, 49, 1])
    drawn = list(replicate_counts(counts, 1001, np.random.default_rng(11)))
    assert [len(chunk) for chunk in drawn] == [501, 500]
    generators = np.random.default_rng(11).spawn(2)
    for chunk, generator in zip(drawn, generators, strict=True):
        assert np.array_equal(chunk, generator.multinomial(1000, counts / 1000, size=len(chunk)))
        assert (chunk.sum(axis=1) == 1000).all()


@given(coded(2, 4, missing=True, min_units=5), st.integers(0, 1000))
def test_bootstrap_reproducible_with_same_seed(data, seed):
    codes, k = data
    a = summarise(codes, k, "nominal", n_boot=30, seed=seed).to_dict(
        [str(i) for i in range(k)], [str(i) for i in range(codes.shape[1])]
    )
    b = summarise(codes, k, "nominal", n_boot=30, seed=seed).to_dict(
        [str(i) for i in range(k)], [str(i) for i in range(codes.shape[1])]
    )
    assert a == b


def test_bootstrap_counts_undefined_replicates_and_differs_by_seed():
    # 19 units on which both coders say "yes", 1 on which they differ: many resamples
    # lack the disagreeing unit, so kappa is undefined there (pe = 1).
    codes = np.array([[0, 0]] * 19 + [[0, 1]])
    s = summarise(codes, 2, "nominal", n_boot=500, seed=7)
    boot = s.metrics["cohen_kappa"].extra["bootstrap"]
    assert boot["n_boot"] == 500 and 0 < boot["n_undefined"] < 500
    assert any("bootstrap replicates were undefined" in w for w in s.warnings)
    other = summarise(codes, 2, "nominal", n_boot=500, seed=8)
    assert other.metrics["po"].extra["bootstrap"] != s.metrics["po"].extra["bootstrap"]


def test_bootstrap_interval_is_clipped_and_says_so():
    codes = np.array([[0, 0]] * 10 + [[1, 1]] * 9 + [[0, 1]])
    boot = summarise(codes, 2, "nominal", n_boot=400, seed=1).metrics["cohen_kappa"].extra["bootstrap"]
    assert boot["ci"][1] <= 1.0 and boot["ci_method"].startswith("percentile bootstrap")


# --- where the disagreement is, consensus ----------------------------------------------


def test_distance_profile_and_far_corners():
    codes = np.array([[0, 0], [0, 1], [1, 2], [0, 3], [3, 0], [2, 2]])
    d = summarise(codes, 4, "ordinal").to_dict(["0", "1", "2", "3"], ["a", "b"])["disagreement"]
    assert [x["count"] for x in d["by_distance"]] == [2, 0, 2]
    assert d["far_corners"] == [
        {"cells": [0, 3], "count": 1, "categories": ["0", "3"]},
        {"cells": [3, 0], "count": 1, "categories": ["3", "0"]},
    ]
    assert d["max_distance_observed"] == 3


def test_leave_one_out_names_the_outlying_coder():
    base = np.array([0, 1, 2, 0, 1, 2, 0, 1, 2, 1])
    codes = np.column_stack([base, base, base, (base + 1) % 3])
    d = summarise(codes, 3, "nominal").to_dict(["x", "y", "z"], ["a", "b", "c", "d"])
    changes = {e["left_out"]: e["change"]["krippendorff_alpha"] for e in d["leave_one_out"]}
    assert max(changes, key=changes.get) == "d"
    assert d["leave_one_out"][3]["metrics"]["krippendorff_alpha"]["value"] == 1.0


def test_consensus_majority_median_ties_and_thin_units():
    codes = np.array([[0, 0, 1], [0, 1, -1], [2, -1, -1], [0, 2, 2], [0, 1, 3]])
    nominal = consensus_codes(codes, 4, "nominal", [0, 1, 2])
    assert nominal.codes.tolist() == [0, -1, -1, 2, -1]
    assert nominal.reasons == (None, "tie", "too_few_codes", None, "tie")
    ordinal = consensus_codes(codes, 4, "ordinal", [0, 1, 2])
    assert ordinal.codes.tolist() == [0, -1, -1, 2, 1]
    assert ordinal.reason_counts() == {"tie": 1, "too_few_codes": 1}


def test_group_vs_reference_scores_the_consensus():
    humans = np.array([[0, 0, 1], [1, 1, 1], [2, 2, 1], [0, 1, 2], [2, 2, 2], [1, 1, 0]])
    model = np.array([0, 1, 2, 0, 2, 1])
    result = group_vs_reference(np.column_stack([humans, model]), 3, "ordinal", [0, 1, 2], 3)
    d = result.to_dict(["low", "mid", "high"], ["ann", "ben", "cat"], "model")
    assert d["against_reference"]["units"]["fully_coded"] == 6
    assert d["against_reference"]["metrics"]["cohen_kappa"]["value"] == pytest.approx(
        cohen_kappa(np.array([[1, 0, 0], [1, 2, 0], [0, 0, 2]])).value
    )
    assert d["group_agreement"]["metrics"]["fleiss_kappa"]["defined"] is True


@given(
    st.integers(1, 4).flatmap(
        lambda k: st.tuples(
            st.just(k),
            st.integers(1, 5).flatmap(
                lambda coders: st.lists(st.lists(st.integers(-1, k - 1), min_size=coders, max_size=coders), max_size=40)
            ),
        )
    ),
    st.integers(1, 9),
    st.booleans(),
)
def test_rows_are_grouped_alike_counted_whole_or_a_block_at_a_time(
    case: tuple[int, list[list[int]]], block: int, weighted: bool
) -> None:
    """compress counts row keys a block of rows at a time: each distinct row of codes once (the
    first coder's code the last digit of the order), with its number of rows or sum of weights."""
    k, rows = case
    assume(rows)
    codes = np.array(rows, dtype=np.int8)
    weights = list(range(1, len(rows) + 1)) if weighted else [1] * len(rows)
    expected: dict[tuple[int, ...], int] = {}
    for row, weight in zip(rows, weights):
        expected[tuple(row)] = expected.get(tuple(row), 0) + weight
    in_order = sorted(expected, key=lambda row: row[::-1])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(patterns_module, "COUNT_BLOCK", block)
        found = compress(codes, k, np.array(weights) if weighted else None)
    assert found.rows.tolist() == [list(row) for row in in_order]
    assert found.counts.tolist() == [expected[row] for row in in_order]
