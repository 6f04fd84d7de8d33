"""A small fingerprint of a set of unit ids, kept in a bundle's manifest, from which two
audits' overlap is estimated without their ids (`rules check --audits`: was a revised
rule validated on largely the same units as an earlier version?).

The sketch (made by irr_audit.io.fingerprints) is the bottom-k of the ids' hashes (a KMV
sketch; Broder 1997, Cohen & Kaplan 2007): the SKETCH_SIZE smallest of the first 16 hex
digits of each id's sha256. Two sets
of at most SKETCH_SIZE ids have their whole hash sets in the sketch, so their overlap is
exact; for larger sets the Jaccard index is estimated from the union's bottom-k, with a
standard error of about sqrt(J(1-J)/k).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

SKETCH_SIZE = 128
HASH_DIGITS = 16


def sketch_jaccard(a: Sequence[str], b: Sequence[str]) -> float | None:
    """The Jaccard index of the two sets the sketches stand for (exact when both sets are
    smaller than the sketch), or None when either is empty.

    >>> from irr_audit.io.fingerprints import units_sketch
    >>> sketch_jaccard(units_sketch("abcd"), units_sketch("abce"))
    0.6
    """
    if not a or not b:
        return None
    own_a, own_b = set(a), set(b)
    union = heapq.nsmallest(min(SKETCH_SIZE, len(own_a | own_b)), own_a | own_b)
    if len(a) < SKETCH_SIZE and len(b) < SKETCH_SIZE:
        union = sorted(own_a | own_b)  # both sets whole: the overlap is exact
    return sum(1 for value in union if value in own_a and value in own_b) / len(union)


def is_sketch(value: object) -> bool:
    """A list of up to SKETCH_SIZE hex hashes, ascending."""
    return (
        isinstance(value, list)
        and len(value) <= SKETCH_SIZE
        and all(
            isinstance(item, str) and len(item) == HASH_DIGITS and all(c in "0123456789abcdef" for c in item)
            for item in value
        )
        and value == sorted(set(value))
    )
