"""Memory is bounded by the data, not by what a file claims: many codes, many coders, many replicates.

The numeric core keeps per-pattern quantities sparse (a pattern has at most one code per coder),
so nothing it allocates grows with units x categories or categories^2 x patterns. The tests
compare the sparse forms with the dense definitions on random data, and run the large cases in
a child process whose address space is capped, so that an allocation of GiBs fails the test
instead of the machine.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from irr_audit.metrics.consensus import consensus_codes


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
