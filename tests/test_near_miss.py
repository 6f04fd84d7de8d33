"""Near-miss ids (irr_audit.join.problems.near_miss_warnings) against their definition, checked
by brute force on random sheets: an id in no other sheet is named with every unit it is one edit
from (a character changed, added, removed, or two neighbours swapped) that its own sheet lacks,
a pair of typos of each other once."""

from __future__ import annotations

import random
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from irr_audit.io.dataframes import frame_sheets
from irr_audit.io.sheets import SheetOptions
from irr_audit.join.join import ABSENT, join_sheets
from irr_audit.join.problems import NEAR_MISS_SHOWN, near_miss_warnings
from irr_audit.rules.load import load_rule

RULE = load_rule(Path(__file__).resolve().parents[1] / "rules/explicit_current_failure/v1.yaml")
NAMED = re.compile(r"comment id '([^']*)' is in no other sheet but is one edit from (.*), which this sheet lacks")


def _one_edit(a: str, b: str) -> bool:
    """Whether b is a from one change, addition, removal or swap of neighbours (and not a itself)."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        differ = [at for at in range(len(a)) if a[at] != b[at]]
        swapped = len(differ) == 2 and differ[1] == differ[0] + 1 and a[differ[0]] == b[differ[1]]
        return len(differ) == 1 or (swapped and a[differ[1]] == b[differ[0]])
    shorter, longer = (a, b) if len(a) < len(b) else (b, a)
    return any(longer[:at] + longer[at + 1 :] == shorter for at in range(len(longer)))


def _expected(units: list[str], status: np.ndarray) -> dict[str, list[str]]:
    """The definition, by brute force: each id in exactly one sheet (the first 200, if at most a
    quarter of the units; 3-64 characters) -> the units one edit from it that its sheet lacks."""
    present = (status != ABSENT).sum(axis=1)
    alone = np.flatnonzero(present == 1)[:200]
    if not len(alone) or len(alone) * 4 > len(units):
        return {}
    unmatched = [(units[at], int(np.argmax(status[at] != ABSENT))) for at in alone if 3 <= len(units[at]) <= 64]
    hits: dict[int, list[str]] = {}
    for owner, (text, column) in enumerate(unmatched):
        for at, unit in enumerate(units):
            if status[at, column] != ABSENT or not _one_edit(text, unit):
                continue
            mirrored = any(unmatched[other][0] == unit and text in found for other, found in hits.items())
            if not mirrored:
                hits.setdefault(owner, []).append(unit)
    return {unmatched[owner][0]: sorted(targets) for owner, targets in sorted(hits.items())[:NEAR_MISS_SHOWN]}


def _named(warnings: list[str]) -> dict[str, list[str]]:
    found = {}
    for warning in warnings:
        match = NAMED.search(warning)
        if match:
            found[match.group(1)] = re.findall(r"'([^']*)'", match.group(2))
    return found


@pytest.mark.parametrize("seed", range(40))
def test_near_misses_are_the_units_one_edit_away_that_the_sheet_lacks(seed: int) -> None:
    draw = random.Random(seed)
    letters = draw.choice(["ab", "abc", "ab1_"])
    ids = sorted({"".join(draw.choice(letters) for _ in range(draw.randint(2, 5))) for _ in range(60)})
    frames = {}
    for coder in ("alice", "bob", "carol")[: draw.randint(2, 3)]:
        mine = [unit for unit in ids if draw.random() < 0.93]
        frames[coder] = pd.DataFrame({"comment_id": mine, "code": [draw.choice(["yes", "no"]) for _ in mine]})
    join = join_sheets(frame_sheets(frames, SheetOptions()), RULE)
    expected = _expected(join.units.to_pylist(), join.status)
    assert _named(near_miss_warnings(join, sample_mode=False)) == expected
    assert _named(list(join.warnings)) == expected


def test_a_typo_is_named_with_the_id_it_may_mean() -> None:
    shared = [f"t1_{number:03d}" for number in range(12)]  # typos are few among the ids
    frames = {
        "alice": pd.DataFrame({"comment_id": [*shared, "t1_abc", "t1_abd", "t1_xyz"], "code": "yes"}),
        "bob": pd.DataFrame({"comment_id": [*shared, "t1_abc", "t1_xzy"], "code": "no"}),
    }
    join = join_sheets(frame_sheets(frames, SheetOptions()), RULE)
    # two neighbours swapped: bob lacks t1_xyz, alice lacks t1_xzy (the pair is named once); t1_abd is
    # one edit from t1_abc, which alice has
    assert _named(list(join.warnings)) == {"t1_xyz": ["t1_xzy"]}
