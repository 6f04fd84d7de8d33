"""What leaves an audit with nothing (or little) to score, said as a problem rather than as
a clean-looking result: no unit fully coded, one coder's cells mostly not codes of the rule,
two sheets that share no comment id. Each problem is a dict with the stable keys ``kind``,
``message``, ``values`` (the raw values seen, with their counts) and ``fix``; every command
shows them on stderr, in summary.json and at the top of every report.

Also the comment ids that matched nothing but lie one edit away from an id they could have
meant (a likely typo), found with lookups of each such id's one-edit variants, never by
comparing all pairs of ids.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from irr_audit.io.arrowtext import from_numpy, plain_text, string_array, to_numpy
from irr_audit.io.display import printable, shortened
from irr_audit.join.fullnames import reddit_keys
from irr_audit.join.missingness import Reason
from irr_audit.rules.model import CodeStatus, Rule

if TYPE_CHECKING:
    from irr_audit.io.sheets import Sheet

JoinResult = Any  # irr_audit.join.join.JoinResult, which imports this module

STATUSES = tuple(CodeStatus)  # as join.py stores a cell's status: its index here
ABSENT = STATUSES.index(CodeStatus.ABSENT)

VALUES_KEPT = 20  # distinct raw values a problem names, the most frequent
VALUE_CHARACTERS = 100  # each cut to this many characters
NO_FULLY_CODED = "no-fully-coded"
MOSTLY_INVALID = "mostly-invalid"
NO_SHARED_ID = "no-shared-id"
SHOWN_IDS = 3  # ids named per sheet when two sheets share none
NEAR_MISS_CHECKED = 200  # unmatched ids looked at for a near miss (the first ones; 10 are named)
NEAR_MISS_MAX_LENGTH = 64  # longer ids are not looked at: their variants grow with length
NEAR_MISS_SHOWN = 10
NEAR_MISS_SHARE = 4  # looked for only when at most 1 in 4 of the units' ids matched nothing
NEAR_MISS_MIN_LENGTH = 3  # shorter ids are one edit from too many others to be named


def audit_problems(join: JoinResult) -> list[dict[str, Any]]:
    """The problems of a join, the one that leaves nothing to score first. Pure."""
    invalid_status = STATUSES.index(CodeStatus.INVALID)
    present = [join.status[:, column] != ABSENT for column in range(len(join.sheets))]
    problems: list[dict[str, Any]] = []
    for column, sheet in enumerate(join.sheets):
        cells = int(np.count_nonzero(present[column]))
        invalid = int(np.count_nonzero(join.status[:, column] == invalid_status))
        if cells and invalid * 2 > cells:
            values = invalid_values(join, [column])
            problems.append(
                problem(
                    MOSTLY_INVALID,
                    f"{invalid} of the {cells} cells of coder {sheet.coder} ({sheet.name}) are not codes of "
                    f"{join.rule.label}: {shown_values(values)}.",
                    values,
                    alias_fix(join.rule, values),
                )
            )
    for first in range(len(join.sheets)):
        for second in range(first + 1, len(join.sheets)):
            a, b = present[first], present[second]
            if a.any() and b.any() and not (a & b).any():
                named = [_first_ids(join, mask) for mask in (a, b)]
                problems.append(
                    problem(
                        NO_SHARED_ID,
                        f"sheets {join.sheets[first].name} (ids {named[0]}) and {join.sheets[second].name} "
                        f"(ids {named[1]}) share no comment id: no unit was coded by both.",
                        {},
                        _no_shared_id_fix(join, a, b),
                    )
                )
    if not int(join.fully_coded.sum()):
        values = invalid_values(join, range(len(join.sheets)))
        if values:
            fix = alias_fix(join.rule, values)
        elif any(item["kind"] == NO_SHARED_ID for item in problems):
            fix = "join sheets that code the same units."
        else:
            fix = "check that every coder coded the units, and that --code-column names the column of the codes."
        problems.insert(
            0,
            problem(
                NO_FULLY_CODED,
                f"no unit is fully coded: none of the {len(join.units)} units has a code of {join.rule.label} "
                "from every coder, so there is nothing to score."
                + (f" Values that are not codes: {shown_values(values)}." if values else ""),
                values,
                fix,
            ),
        )
    return problems


def problem(kind: str, message: str, values: dict[str, int], fix: str) -> dict[str, Any]:
    return {"kind": kind, "message": message, "values": values, "fix": fix}


def problem_lines(problems: list[dict[str, Any]]) -> list[str]:
    """Each problem as the lines people read: the message, then the fix."""
    return [line for item in problems for line in (f"problem: {item['message']}", f"  fix: {item['fix']}")]


def invalid_values(join: JoinResult, columns: Any) -> dict[str, int]:
    """The raw values of the cells logged invalid in these sheets, with their counts, most frequent
    first: at most VALUES_KEPT of them, each cut to VALUE_CHARACTERS (a cell may hold megabytes;
    the missingness log keeps every value whole)."""
    invalid = list(Reason).index(Reason.INVALID)
    counts: Counter[str] = Counter()
    for column in columns:
        mine = (join.entries.sheet == column) & (join.entries.reason == invalid)
        positions = join.entries.position[mine]
        if len(positions):
            found = pc.value_counts(plain_text(join.sheets[column].codes.take(from_numpy(positions))))
            counts.update(dict(zip(found.field("values").to_pylist(), found.field("counts").to_pylist())))
    cut: Counter[str] = Counter()
    for value, count in counts.items():
        cut[shortened(value, VALUE_CHARACTERS)] += count
    return dict(sorted(cut.items(), key=lambda item: (-item[1], item[0]))[:VALUES_KEPT])


def shown_values(values: dict[str, int], most: int = 10) -> str:
    shown = ", ".join(f"{printable(value, 40)!r} ({count})" for value, count in list(values.items())[:most])
    return shown + (f" and {len(values) - most} more" if len(values) > most else "")


def alias_fix(rule: Rule, values: dict[str, int]) -> str:
    example = printable(next(iter(values), "RAW"), 40)
    return (
        f"map each value to a code of the rule ({', '.join(rule.categories)}): add it to the rule's aliases "
        f"(aliases: {{{example!r}: CODE}}, a new version of the rule), or pass --alias RAW=CODE for this run "
        f"(e.g. --alias {example}=CODE; the run records it); or correct the sheets."
    )


def _no_shared_id_fix(join: JoinResult, first: np.ndarray, second: np.ndarray) -> str:
    """What to do when two sheets share no id; when they share some once a Reddit type prefix
    is left out (t1_abc in one, abc in the other), that is said: outside --sample ids are
    matched exactly, so the two spellings are two units."""
    keys = [reddit_keys(join.units.filter(pa.array(mask))) for mask in (first, second)]
    if pc.any(pc.is_in(keys[0], value_set=keys[1])).as_py():
        return (
            "the ids match once Reddit's type prefix is left out (t1_abc in one sheet, abc in the other): "
            "write the ids of every sheet alike, or join with --sample (the ledger of irr-audit sample), "
            "which matches t1_abc and abc."
        )
    return (
        "check that both sheets code the same sample, and that the id column is the one "
        "with the comment ids (--id-column); ids are matched as text, exactly."
    )


def _first_ids(join: JoinResult, mask: np.ndarray) -> str:
    at = np.flatnonzero(mask)
    ids = join.units.take(from_numpy(at[:SHOWN_IDS])).to_pylist()
    return ", ".join(repr(printable(unit, 40)) for unit in ids) + (", ..." if len(at) > SHOWN_IDS else "")


# --- near misses ------------------------------------------------------------------------


def near_miss_warnings(join: JoinResult, sample_mode: bool) -> list[str]:
    """Ids that matched nothing but are one edit (a character changed, added, removed, or two
    swapped) from an id the same sheet lacks: a unit of another sheet, or of the sample. Bounded:
    only ids that matched nothing are looked at (the first NEAR_MISS_CHECKED), each through a
    lookup of its variants in the units, never all pairs."""
    if len(join.sheets) < 2 or not len(join.units):
        return []
    unmatched: list[tuple[str, int]] = []  # (id, sheet)
    present = _present_count(join.status)
    if sample_mode:
        outside = list(Reason).index(Reason.NOT_IN_SAMPLE)
        mine = join.entries.reason == outside
        for column in range(len(join.sheets)):
            positions = join.entries.position[mine & (join.entries.sheet == column)]
            if len(positions):
                ids = _unit_keys(join.sheets[column]).take(from_numpy(positions[:NEAR_MISS_CHECKED]))
                unmatched += [(text, column) for text in dict.fromkeys(ids.to_pylist())]
    else:
        alone = np.flatnonzero(present == 1)[:NEAR_MISS_CHECKED]
        if len(alone):
            columns = np.argmax(join.status[alone] != ABSENT, axis=1)
            unmatched = list(zip(join.units.take(from_numpy(alone)).to_pylist(), columns.tolist()))
    if not unmatched or len(unmatched) * NEAR_MISS_SHARE > len(join.units):
        return []  # typos are few: many unmatched ids are another sample, or a part left uncoded
    unmatched = [
        (text, column) for text, column in unmatched if NEAR_MISS_MIN_LENGTH <= len(text) <= NEAR_MISS_MAX_LENGTH
    ]
    if not unmatched:
        return []
    alphabet = sorted(set("".join(text for text, _ in unmatched)) | set("".join(join.units[:1000].to_pylist())))
    variants: list[str] = []
    owners: list[int] = []
    for index, (text, _) in enumerate(unmatched):
        found = one_edit_variants(text, alphabet)
        variants += found
        owners += [index] * len(found)
    # only units some sheet lacks can be meant; they are looked up among the variants (of at most
    # NEAR_MISS_CHECKED ids), which are hashed: a table of those units would hold a million at 10^7
    lacking = np.flatnonzero(present < join.status.shape[1])
    candidates = join.units.take(from_numpy(lacking))
    variant_texts = string_array(variants)
    meant = pc.is_in(candidates, value_set=variant_texts)
    hit_units = lacking[to_numpy(pc.indices_nonzero(meant))]
    # the variants that are such units (a few), in the order they were made, as each was looked at
    looked_up = pc.index_in(variant_texts, value_set=candidates.filter(meant))
    hit = pc.is_valid(looked_up)
    hits: dict[int, list[str]] = {}
    for at, unit_at in zip(to_numpy(pc.indices_nonzero(hit)).tolist(), to_numpy(looked_up.filter(hit)).tolist()):
        owner, variant, unit = owners[at], variants[at], int(hit_units[unit_at])
        text, column = unmatched[owner]
        if join.status[unit, column] == ABSENT:  # the id it may have meant is missing from that sheet
            target = variant
            mirrored = any(unmatched[other][0] == target and text in found for other, found in hits.items())
            if not mirrored and target not in hits.setdefault(owner, []):  # a pair of typos is named once
                hits[owner].append(target)
    lines = [
        f"sheet {join.sheets[unmatched[owner][1]].name}: comment id {unmatched[owner][0]!r} "
        f"{'is not in the sample' if sample_mode else 'is in no other sheet'} but is one edit from "
        f"{' or '.join(repr(target) for target in sorted(targets))}, which this sheet lacks: likely a typo."
        for owner, targets in sorted(hits.items())
        if targets
    ]
    more = len(lines) - NEAR_MISS_SHOWN
    return lines[:NEAR_MISS_SHOWN] + ([f"{more} more ids are one edit from an id they may mean."] if more > 0 else [])


def _present_count(status: np.ndarray) -> np.ndarray:
    """How many sheets have a row for each unit, a column at a time (the matrix is column-major:
    a reduction along its rows would stride through memory)."""
    count = np.zeros(status.shape[0], dtype=np.int16)
    for column in range(status.shape[1]):
        count += status[:, column] != ABSENT
    return count


def _unit_keys(sheet: Sheet) -> pa.Array:
    return sheet.unit_keys if sheet.unit_keys is not None else pc.utf8_trim_whitespace(sheet.comment_ids)


def one_edit_variants(text: str, alphabet: list[str]) -> list[str]:
    """Every text one edit from ``text`` over ``alphabet``: a character removed, changed or
    added, or two neighbours swapped. Each once, in an order fixed by ``text`` and ``alphabet``."""
    found: list[str] = []
    for at in range(len(text) + 1):
        head, tail = text[:at], text[at:]
        if tail:
            found.append(head + tail[1:])
            if len(tail) > 1:
                found.append(head + tail[1] + tail[0] + tail[2:])
            rest = tail[1:]
            found += [head + letter + rest for letter in alphabet]
        found += [head + letter + tail for letter in alphabet]
    unique = dict.fromkeys(found)
    unique.pop(text, None)
    return list(unique)
