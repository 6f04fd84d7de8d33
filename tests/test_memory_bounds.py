"""Memory is bounded by the data, not by what a file claims: many codes, many coders, many replicates.

The numeric core keeps per-pattern quantities sparse (a pattern has at most one code per coder),
so nothing it allocates grows with units x categories or categories^2 x patterns. The tests
compare the sparse forms with the dense definitions on random data, and run the large cases in
a child process whose address space is capped, so that an allocation of GiBs fails the test
instead of the machine.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from typer.testing import CliRunner

from irr_audit.cli import app
from irr_audit.metrics.consensus import consensus_codes
from irr_audit.metrics.krippendorff import coincidence_diagonal, coincidence_matrix
from irr_audit.metrics.multi_coder import RatingCounts
from irr_audit.metrics.patterns import Grouping, Patterns, pair_tables
from irr_audit.metrics.two_coder import collapse_to_category, collapse_to_each_category
from irr_audit.metrics.weights import identity_weights
from irr_audit.report.model import MAX_CODERS, MAX_TABLE_CELLS

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_RULE = ROOT / "rules" / "explicit_current_failure" / "v1.yaml"
EXAMPLE_SHEETS = [ROOT / "examples" / "sheets" / "alice.csv", ROOT / "examples" / "sheets" / "bob.csv"]


def dense_consensus(codes: np.ndarray, n_categories: int, scale: str, min_codes: int = 2):
    """The per-unit x category definition: counts of each code, then the mode or the median."""
    counts = (codes[:, :, None] == np.arange(n_categories)).sum(axis=1)
    m = counts.sum(axis=1)
    if scale == "nominal":
        top = counts.max(axis=1, initial=0)
        tie = (counts == top[:, None]).sum(axis=1) > 1
        decided = counts.argmax(axis=1) if n_categories else np.zeros(len(m), int)
    else:
        cumulative = np.cumsum(counts, axis=1)
        lower = (cumulative < ((m + 1) // 2)[:, None]).sum(axis=1)
        upper = (cumulative < (m // 2 + 1)[:, None]).sum(axis=1)
        decided, tie = lower, lower != upper
    too_few = m < max(min_codes, 1)
    return np.where(too_few | tie, -1, decided), too_few, tie & ~too_few


@st.composite
def group_codes(draw):
    k = draw(st.integers(1, 6))
    width = draw(st.integers(1, 6))
    codes = draw(arrays(np.int64, st.tuples(st.integers(0, 30), st.just(width)), elements=st.integers(-1, k - 1)))
    return codes, k


@settings(max_examples=300)
@given(group_codes(), st.sampled_from(["nominal", "ordinal"]), st.integers(1, 3))
def test_consensus_from_sorted_codes_equals_the_dense_definition(data, scale: str, min_codes: int) -> None:
    codes, k = data
    result = consensus_codes(codes, k, scale, list(range(codes.shape[1])), min_codes=min_codes)
    expected, too_few, tie = dense_consensus(codes, k, scale, min_codes)
    assert result.codes.tolist() == expected.tolist()
    assert list(result.reasons) == ["too_few_codes" if f else "tie" if t else None for f, t in zip(too_few, tie)]


# --- the sparse forms equal the dense definitions ------------------------------------------------


@st.composite
def patterns_data(draw, max_coders: int = 5):
    k = draw(st.integers(1, 6))
    coders = draw(st.integers(1, max_coders))
    rows = draw(arrays(np.int64, st.tuples(st.integers(1, 25), st.just(coders)), elements=st.integers(-1, k - 1)))
    counts = draw(arrays(np.int64, st.just(len(rows)), elements=st.integers(0, 50)))
    return Patterns(rows, counts, k)


def dense_category_counts(patterns: Patterns) -> np.ndarray:
    return (patterns.rows[:, :, None] == np.arange(patterns.n_categories)).sum(axis=1)


def dense_coincidences(patterns: Patterns, units: np.ndarray) -> np.ndarray:
    n_uk = dense_category_counts(patterns)
    m = n_uk.sum(axis=1)
    n_uk = np.where((m >= 2)[:, None], n_uk, 0)
    pairs = n_uk[:, :, None] * n_uk[:, None, :] - np.einsum("pk,kl->pkl", n_uk, np.eye(patterns.n_categories))
    per = np.where((m >= 2)[:, None, None], pairs / np.maximum(m - 1, 1)[:, None, None], 0.0)
    return np.einsum("bp,pkl->bkl", units, per)


@settings(max_examples=200)
@given(patterns_data(), st.integers(1, 4), st.randoms(use_true_random=False))
def test_sparse_sums_equal_the_dense_ones(patterns: Patterns, batch: int, random) -> None:
    units = np.array([[random.randint(0, 9) for _ in patterns.counts] for _ in range(batch)], dtype=np.float64)
    r = dense_category_counts(patterns)
    assert np.array_equal(patterns.category_totals(units), units @ r)
    assert np.array_equal(patterns.category_totals(patterns.counts), patterns.counts @ r)
    categories, counts = patterns.slots
    rebuilt = np.zeros_like(r)
    for slot in range(categories.shape[1]):
        used = counts[:, slot] > 0
        rebuilt[np.flatnonzero(used), categories[used, slot]] += counts[used, slot]
    assert np.array_equal(rebuilt, r)
    expected = dense_coincidences(patterns, units)
    assert np.allclose(coincidence_matrix(patterns, units), expected, rtol=1e-12, atol=1e-9)
    assert np.allclose(coincidence_diagonal(patterns, units), np.diagonal(expected, axis1=1, axis2=2), atol=1e-9)
    if patterns.n_coders >= 2:
        cells = np.where(
            (patterns.rows[:, 0] >= 0) & (patterns.rows[:, 1] >= 0),
            patterns.rows[:, 0] * patterns.n_categories + patterns.rows[:, 1],
            -1,
        )
        indicator = np.zeros((len(cells), patterns.n_categories**2))
        indicator[np.flatnonzero(cells >= 0), cells[cells >= 0]] = 1
        dense_tables = (units @ indicator).reshape(batch, patterns.n_categories, patterns.n_categories)
        assert np.array_equal(pair_tables(patterns, 0, 1, units), dense_tables)


@settings(max_examples=200)
@given(patterns_data(), st.randoms(use_true_random=False))
def test_agreement_per_unit_equals_the_dense_definition(patterns: Patterns, random) -> None:
    k = patterns.n_categories
    weights = np.array([[1.0 if a == b else random.random() for b in range(k)] for a in range(k)])
    weights = (weights + weights.T) / 2
    counts = RatingCounts.of(patterns)
    r = dense_category_counts(counts.patterns)
    m = r.sum(axis=1)
    for w in (weights, identity_weights(k)):
        sum_q = (r * (r @ w.T - 1)).sum(axis=1)
        dense = np.where(m >= 2, sum_q / np.maximum(m * (m - 1), 1), 0.0)
        assert np.allclose(counts.agreement_per_unit(w), dense, rtol=1e-12, atol=1e-12)
    assert np.allclose(counts.at_codes(np.arange(k, dtype=float)), r @ np.arange(k))


@given(
    st.integers(1, 5).flatmap(
        lambda k: arrays(np.int64, st.tuples(st.integers(1, 3), st.just(k), st.just(k)), elements=st.integers(0, 20))
    )
)
def test_every_category_collapsed_at_once_equals_one_at_a_time(tables: np.ndarray) -> None:
    each = collapse_to_each_category(tables)
    for category in range(tables.shape[-1]):
        assert np.array_equal(each[:, category], collapse_to_category(tables, category))


@given(
    arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(0, 30)), elements=st.integers(0, 9)),
    st.integers(1, 6),
    st.randoms(use_true_random=False),
)
def test_grouped_sums_equal_adding_one_at_a_time(values: np.ndarray, n_keys: int, random) -> None:
    keys = np.array([random.randint(-1, n_keys - 1) for _ in range(values.shape[1])], dtype=np.int64)
    expected = np.zeros((values.shape[0], n_keys))
    for entry, key in enumerate(keys):
        if key >= 0:
            expected[:, key] += values[:, entry]
    grouping = Grouping(keys, n_keys)
    assert np.array_equal(grouping.sums(values), expected)
    assert np.array_equal(grouping.sums(values[0]), expected[0])


# --- large inputs, in a child process with its address space capped ------------------------------

CAP_BYTES = 2_500_000_000  # what the imports reserve (~0.6 GB) and the data; the dense forms asked for TiB


def run_capped(script: str, cap_bytes: int = CAP_BYTES) -> subprocess.CompletedProcess:
    """``script`` in a fresh interpreter that cannot map more than ``cap_bytes``: an allocation the
    data does not justify fails there (MemoryError), not on the machine."""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap_bytes, cap_bytes))

    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        preexec_fn=cap,
        timeout=600,
        check=False,
    )


def test_a_thousand_codes_on_many_units_stay_within_the_cap() -> None:
    """Two coders and a rule of 1,000 codes: the tables are K x K, nothing is units x K or patterns x K^2."""
    result = run_capped("""
        import numpy as np
        from irr_audit.metrics import summarise
        from irr_audit.metrics.consensus import consensus_codes
        k, n = 1000, 60_000
        rng = np.random.default_rng(7)
        truth = rng.integers(0, k, n)
        codes = np.column_stack([np.where(rng.random(n) < 0.7, truth, rng.integers(0, k, n)) for _ in range(3)])
        codes[rng.random(codes.shape) < 0.05] = -1
        two = summarise(codes[:, :2], k, "nominal", n_boot=4, seed=1)
        table = two.table
        n_full = table.sum()
        po = np.trace(table) / n_full
        pe = (table.sum(axis=0) @ table.sum(axis=1)) / n_full**2
        assert abs(two.metrics["cohen_kappa"].value - (po - pe) / (1 - pe)) < 1e-12
        assert two.metrics["cohen_kappa"].extra["bootstrap"]["n_boot"] == 4
        three = summarise(np.where(codes < 300, codes, -1), 300, "ordinal")  # coincidences: K^2 x patterns before
        assert np.isfinite(three.metrics["krippendorff_alpha"].value)
        assert len(consensus_codes(codes, k, "nominal", [0, 1, 2]).codes) == n
        print("ok")
    """)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "ok"


def test_many_replicates_are_drawn_and_scored_in_bounded_memory() -> None:
    """Chunks of replicates are scored as they are drawn and dropped: 20,000 replicates of 900
    patterns in 1.3 GB (holding every draw, and every pair's replicates on the 900 cells, did not fit)."""
    result = run_capped(
        """
        import numpy as np
        from irr_audit.report.model import MAX_BOOTSTRAP
        from irr_audit.metrics import summarise
        rng = np.random.default_rng(5)
        k, n = 30, 3_000
        truth = rng.integers(0, k, n)
        codes = np.column_stack([np.where(rng.random(n) < 0.6, truth, rng.integers(0, k, n)) for _ in range(2)])
        summary = summarise(codes, k, "nominal", n_boot=20_000, seed=3)
        assert summary.metrics["cohen_kappa"].extra["bootstrap"]["n_boot"] == 20_000
        example = np.array([[0, 0]] * 8 + [[0, 1]] * 2 + [[1, 0]] + [[1, 1]] * 9 + [[-1, 0], [1, -1]])
        assert summarise(example, 2, n_boot=MAX_BOOTSTRAP, seed=3).metrics["po"].extra["bootstrap"]["defined"]
        print("ok")
    """,
        cap_bytes=1_300_000_000,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "ok"


# --- what no audit can be asked for: refused, naming the limit -------------------------------------

RULE = """rule: many
version: 1
scale: nominal
codes: [{codes}]
"""


def run(*args: object):
    return CliRunner().invoke(app, [str(arg) for arg in args], catch_exceptions=False)


def test_counts_of_more_coders_than_scored_are_refused(tmp_path: Path) -> None:
    (tmp_path / "rule.yaml").write_text(RULE.format(codes='"a", "b"'))
    coders = [f"c{number}" for number in range(MAX_CODERS + 1)]
    (tmp_path / "counts.csv").write_text(",".join([*coders, "units"]) + "\n" + ",".join(["a"] * len(coders)) + ",5\n")
    result = run("score", "--counts", tmp_path / "counts.csv", "--rule", tmp_path / "rule.yaml")
    assert result.exit_code == 2
    assert result.stderr.startswith(
        f"Error [audit-too-many-coders]: the audit has {MAX_CODERS + 1} coders; irr-audit scores at most {MAX_CODERS}"
    )


def test_a_rule_with_more_codes_than_tables_hold_is_refused(tmp_path: Path) -> None:
    k = int(MAX_TABLE_CELLS**0.5 / 1.4) + 1  # two coders: the table and the one pair's
    (tmp_path / "rule.yaml").write_text(RULE.format(codes=", ".join(f'"c{n}"' for n in range(k))))
    (tmp_path / "counts.csv").write_text("a,b,units\nc0,c1,3\n")
    result = run(
        "score", "--counts", tmp_path / "counts.csv", "--rule", tmp_path / "rule.yaml", "--limit", f"rule_codes={k}"
    )  # past the rule reader's own limit on codes
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error [audit-too-many-codes]: the rule has {k:,} codes")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--bootstrap", "1000000"], "Error [usage-bootstrap]: --bootstrap 1,000,000 is more than the 100,000"),
        (["--bootstrap", "10", "--seed", "-1"], "Error [usage-seed]: --seed -1 is negative."),
        (
            ["--group", "g=alice,alice,bob", "--against", "bob"],
            "Error [usage-group]: --group names 'alice' more than once.",
        ),
    ],
)
def test_options_that_would_be_wrong_or_unbounded_are_refused(options: list[str], message: str) -> None:
    result = run("score", *EXAMPLE_SHEETS, "--rule", EXAMPLE_RULE, *options)
    assert result.exit_code == 2
    assert result.stderr.startswith(message)


def test_a_huge_group_is_refused_with_a_short_message() -> None:
    names = ",".join(f"coder{number}" for number in range(100_000))
    result = run("score", *EXAMPLE_SHEETS, "--rule", EXAMPLE_RULE, "--group", f"g={names}", "--against", "bob")
    assert result.exit_code == 2
    assert "and 99,995 more, which are no coder of this audit" in result.stderr
    assert len(result.stderr) < 1000


def test_a_large_bootstrap_keeps_fewer_values_than_the_limit(tmp_path: Path) -> None:
    k = 1000
    (tmp_path / "rule.yaml").write_text(RULE.format(codes=", ".join(f'"c{n}"' for n in range(k))))
    (tmp_path / "counts.csv").write_text("a,b,units\nc0,c1,3\nc1,c1,4\n")
    result = run(
        "score",
        "--counts",
        tmp_path / "counts.csv",
        "--rule",
        tmp_path / "rule.yaml",
        "--bootstrap",
        "20000",
        "--seed",
        "1",
    )
    assert result.exit_code == 2
    assert "replicate values" in result.stderr and "Hint: use --bootstrap" in result.stderr
