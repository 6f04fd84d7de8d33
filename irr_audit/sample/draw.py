"""The draw (docs/procedure.md, step 2): a simple random sample without replacement,
reproducible from a seed, and the order of units in each coder's sheet.

Units are ranked by sha256 of the seed and the comment id: the same ranks on
every machine and Python version.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from irr_audit.errors import UsageError


def _rank(*parts: object) -> str:
    # SHA-256 of the seed and the id: the same on every machine and Python version,
    # unlike random.sample or numpy's streams, which may change between releases.
    return hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Draw:
    ids: tuple[str, ...]  # the sampled ids, in ledger (dataset) order
    record: dict[str, Any] = field(default_factory=dict)


def draw_sample(population: Sequence[str], size: int | None, seed: int | None) -> Draw:
    """A simple random sample without replacement, reproducible from ``seed``.

    Units are ranked by sha256(seed, comment id) and the first ``size`` taken.
    Without ``size`` every unit is taken (no draw).
    """
    if size is None:
        record = {
            "method": "all usable units (no draw)",
            "seed": seed,
            "size_requested": None,
            "size": len(population),
            "population": len(population),
        }
        return Draw(tuple(population), record)
    if seed is None:
        raise UsageError(
            "--size draws a random sample, which needs --seed to be reproducible.",
            hint="add --seed with any whole number, e.g. --seed 20240601, and keep it with the audit.",
            code="usage-size-needs-seed",
        )
    if size < 1:
        raise UsageError(
            f"--size must be at least 1 (got {size}).", hint="pass --size N with N >= 1.", code="usage-size"
        )
    chosen = set(sorted(population, key=lambda comment_id: _rank(seed, comment_id))[:size])
    record = {
        "method": "simple random sample without replacement: units ranked by sha256(seed, comment_id), "
        "the first `size` taken, listed in dataset order",
        "seed": seed,
        "size_requested": size,
        "size": len(chosen),
        "population": len(population),
    }
    if size > len(population):
        record["note"] = f"--size {size} is more than the {len(population)} usable units: every unit is in the sample"
    return Draw(tuple(comment_id for comment_id in population if comment_id in chosen), record)


def coder_order(ids: Sequence[str], coder: str, seed: int | None, shuffle: bool) -> list[str]:
    """The order of units in one coder's sheet: the ledger's, or shuffled per coder from the seed."""
    if not shuffle:
        return list(ids)
    return sorted(ids, key=lambda comment_id: _rank(seed, coder, comment_id))
