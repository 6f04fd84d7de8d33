"""A codebook's variables joined in one run: wide and long sheets, conditional variables,
the one log with a variable column, and every input cell accounted for."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from irr_audit.errors import SheetError, UsageError
from irr_audit.io.sheets import SheetOptions, read_sheets
from irr_audit.join.join import CONFLICT, VALID, join_sheets
from irr_audit.join.missingness import LOG_COLUMNS
from irr_audit.join.variables import (
    CODEBOOK_LOG_COLUMNS,
    CodebookJoin,
    codebook_log,
    join_variables,
    log_counts,
    read_variable_sheets,
)
from irr_audit.rules.load import rule_from_mapping
from irr_audit.rules.model import Rule

FAILURE = {"rule": "failure", "version": 1, "scale": "nominal", "codes": [{"code": "yes"}, {"code": "no"}]}
SEVERITY = {
    "rule": "severity",
    "version": 1,
    "scale": "ordinal",
    "codes": [{"code": "low"}, {"code": "mid"}, {"code": "high"}],
    "missing_codes": ["unknown"],
    "applies_when": {"rule": "failure", "codes": ["yes"]},
}
AREA = {"rule": "area", "version": 1, "scale": "nominal", "codes": [{"code": "app"}, {"code": "sync"}]}


def rules(*mappings: dict) -> list[Rule]:
    return [rule_from_mapping(mapping) for mapping in mappings]


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def joined(paths: list[Path], codebook: list[Rule]):
    views = read_variable_sheets(paths, codebook, SheetOptions())
    variables = join_variables(views, codebook)
    return variables, codebook_log(variables, views.rests)


def test_wide_and_long_sheets_join_alike(tmp_path: Path) -> None:
    codebook = rules(FAILURE, AREA)
    wide = [
        write(tmp_path, "alice.csv", "comment_id,failure,area\n1,yes,app\n2,no,sync\n3,yes,\n"),
        write(tmp_path, "bob.csv", "comment_id,failure,area\n1,yes,sync\n2,no,sync\n3,no,app\n"),
    ]
    (tmp_path / "long").mkdir()
    long = [
        write(
            tmp_path / "long",
            "alice.csv",
            "comment_id,variable,code\n1,failure,yes\n1,area,app\n2,failure,no\n2,area,sync\n3,failure,yes\n3,area,\n",
        ),
        write(
            tmp_path / "long",
            "bob.csv",
            "comment_id,variable,code\n1,failure,yes\n2,failure,no\n3,failure,no\n1,area,sync\n2,area,sync\n3,area,app\n",
        ),
    ]
    by_wide, log_wide = joined(wide, codebook)
    by_long, log_long = joined(long, codebook)
    for rule_id in ("failure", "area"):
        assert by_wide[rule_id].join.unit_ids.tolist() == by_long[rule_id].join.unit_ids.tolist()
        assert np.array_equal(by_wide[rule_id].join.codes, by_long[rule_id].join.codes)
        assert by_wide[rule_id].join.summary_line() == by_long[rule_id].join.summary_line()
    assert list(log_wide.columns) == list(CODEBOOK_LOG_COLUMNS)
    assert log_wide[["variable", "coder", "comment_id", "reason"]].values.tolist() == [["area", "alice", "3", "blank"]]
    assert log_long[["variable", "coder", "comment_id", "reason"]].values.tolist() == [["area", "alice", "3", "blank"]]


def test_a_variable_is_joined_as_its_single_rule_is(tmp_path: Path) -> None:
    """A wide sheet's variable is a view of the sheet: the same join as reading that column as the code."""
    codebook = rules(FAILURE, AREA)
    paths = [
        write(tmp_path, "alice.csv", "comment_id,failure,area\n1,yes,app\n2,no,x\n2,no,x\n4,,app\n"),
        write(tmp_path, "bob.csv", "comment_id,failure,area\n1,yes,sync\n2,maybe,sync\n3,no,app\n"),
    ]
    variables, log = joined(paths, codebook)
    for rule in codebook:
        single = join_sheets(read_sheets(paths, SheetOptions(code_column=rule.id)), rule)
        mine = variables[rule.id].join
        assert np.array_equal(mine.codes, single.codes) and np.array_equal(mine.status, single.status)
        assert mine.summary() == single.summary()
        assert mine.log.equals(single.log)  # the single-rule log keeps its columns
        assert list(single.log.columns) == list(LOG_COLUMNS)
        assert log[log["variable"] == rule.id].drop(columns="variable").reset_index(drop=True).equals(single.log)


def test_a_sheet_of_both_shapes_or_neither_is_refused(tmp_path: Path) -> None:
    codebook = rules(FAILURE, AREA)
    other = write(tmp_path, "bob.csv", "comment_id,failure,area\n1,yes,app\n")
    both = write(tmp_path, "alice.csv", "comment_id,variable,code,failure\n1,failure,yes,yes\n")
    with pytest.raises(SheetError) as error:
        joined([both, other], codebook)
    assert error.value.code == "sheet-codebook-shape" and "both long" in error.value.message
    neither = write(tmp_path, "carol.csv", "comment_id,label\n1,yes\n")
    with pytest.raises(SheetError) as error:
        joined([neither, other], codebook)
    assert error.value.code == "sheet-codebook-shape" and "failure, area" in error.value.message
    half = write(tmp_path, "dave.csv", "comment_id,failure\n1,yes\n")
    with pytest.raises(SheetError) as error:
        joined([half, other], codebook)
    assert error.value.code == "sheet-missing-column" and "none for area" in error.value.message


def test_a_long_row_of_no_variable_is_logged(tmp_path: Path) -> None:
    codebook = rules(FAILURE)
    paths = [
        write(tmp_path, "alice.csv", "comment_id,variable,code\n1,failure,yes\n1,falure,no\n2,failure,no\n"),
        write(tmp_path, "bob.csv", "comment_id,variable,code\n1,failure,yes\n2,failure,no\n"),
    ]
    variables, log = joined(paths, codebook)
    assert variables["failure"].join.summary()["units"] == {"total": 2, "fully_coded": 2, "missing": 0}
    assert log[["variable", "row", "comment_id", "raw_value", "reason"]].values.tolist() == [
        ["falure", 3, "1", "no", "unknown_variable"]
    ]


@pytest.mark.parametrize("spelled", ["Failure", "FAILURE", " failure ", "fAiLuRe\t"])
def test_a_long_variable_is_matched_as_a_wide_column_is(tmp_path: Path, spelled: str) -> None:
    """A variable's name differing from its rule id in case or surrounding space is that variable
    (as a wide sheet's column `Failure` is): its rows are used, not logged as unknown_variable."""
    codebook = rules(FAILURE, AREA)
    exact = [
        write(tmp_path, "alice.csv", "comment_id,variable,code\n1,failure,yes\n1,area,app\n2,failure,no\n"),
        write(tmp_path, "bob.csv", "comment_id,variable,code\n1,failure,yes\n2,failure,yes\n2,area,sync\n"),
    ]
    (tmp_path / "spelled").mkdir()
    alice = f"comment_id,variable,code\n1,{spelled},yes\n1,area,app\n2,{spelled},no\n"
    bob = f"comment_id,variable,code\n1,failure,yes\n2,{spelled.upper()},yes\n2,AREA,sync\n"
    spelled_paths = [write(tmp_path / "spelled", "alice.csv", alice), write(tmp_path / "spelled", "bob.csv", bob)]
    by_exact, log_exact = joined(exact, codebook)
    by_spelled, log_spelled = joined(spelled_paths, codebook)
    for rule_id in ("failure", "area"):
        assert np.array_equal(by_exact[rule_id].join.codes, by_spelled[rule_id].join.codes)
        assert by_exact[rule_id].join.summary() == by_spelled[rule_id].join.summary()
    assert "unknown_variable" not in set(log_spelled["reason"])
    assert log_exact.values.tolist() == log_spelled.values.tolist()


def test_a_one_variable_codebook_reads_a_rule_sheet(tmp_path: Path) -> None:
    codebook = rules(FAILURE)
    paths = [
        write(tmp_path, "alice.csv", "comment_id,code\n1,yes\n2,no\n"),
        write(tmp_path, "bob.csv", "comment_id,code\n1,yes\n2,yes\n"),
    ]
    variables, _ = joined(paths, codebook)
    single = join_sheets(read_sheets(paths), codebook[0])
    assert np.array_equal(variables["failure"].join.codes, single.codes)


CONDITIONAL_ALICE = "comment_id,failure,severity\n1,yes,low\n2,no,\n3,yes,high\n4,yes,mid\n5,,low\n6,no,high\n7,yes,\n"
CONDITIONAL_BOB = "comment_id,failure,severity\n1,yes,low\n2,no,\n3,no,\n4,yes,high\n5,yes,mid\n6,no,\n7,yes,low\n"


def test_conditional_variable(tmp_path: Path) -> None:
    codebook = rules(FAILURE, SEVERITY)
    paths = [write(tmp_path, "alice.csv", CONDITIONAL_ALICE), write(tmp_path, "bob.csv", CONDITIONAL_BOB)]
    variables, log = joined(paths, codebook)
    severity = variables["severity"]
    # 2 and 6: failure no for both, so severity does not apply (6: alice coded it anyway);
    # 3: the coders disagree on failure, so severity is not comparable; 5: alice's failure is blank
    assert severity.join.unit_ids.tolist() == ["1", "4", "5", "7"]
    assert severity.join.fully_coded.tolist() == [True, True, False, False]
    rows = log[log["variable"] == "severity"][["coder", "comment_id", "raw_value", "reason"]].values.tolist()
    assert rows == [
        ["alice", "5", "low", "condition_undecided"],
        ["alice", "7", "", "blank"],
        ["alice", "6", "high", "coded_when_not_applicable"],
        ["", "3", "alice=yes; bob=no", "condition_disagreement"],
    ]
    assert "failure in (yes)" in log[log["reason"] == "condition_disagreement"]["detail"].iloc[0]
    assert severity.not_applicable.tolist() == [False, True, False, False, False, True, False]
    assert severity.not_comparable.tolist() == [False, False, True, False, False, False, False]
    assert severity.cell_counts() == {"cells": 14, "used": 6, "logged": 2, "not_applicable": 4, "not_comparable": 2}
    # what is scored: the variable's own units, never the not-applicable or not-comparable ones
    assert severity.join.summary()["units"] == {"total": 4, "fully_coded": 2, "missing": 2}


def test_a_chain_of_conditions_follows_each_coder(tmp_path: Path) -> None:
    """A child of a child: where the middle variable does not apply to a coder, nor does the last."""
    detail = {
        "rule": "detail",
        "version": 1,
        "scale": "nominal",
        "codes": [{"code": "a"}, {"code": "b"}],
        "applies_when": {"rule": "severity", "codes": ["high"]},
    }
    codebook = rules(FAILURE, SEVERITY, detail)
    paths = [
        write(tmp_path, "alice.csv", "comment_id,failure,severity,detail\n1,yes,high,a\n2,no,,b\n3,yes,high,a\n"),
        write(tmp_path, "bob.csv", "comment_id,failure,severity,detail\n1,yes,high,a\n2,no,,\n3,yes,low,\n"),
    ]
    variables, log = joined(paths, codebook)
    assert variables["detail"].join.unit_ids.tolist() == ["1"]
    rows = log[log["variable"] == "detail"][["coder", "comment_id", "reason"]].values.tolist()
    assert rows == [["alice", "2", "coded_when_not_applicable"], ["", "3", "condition_disagreement"]]


def test_a_condition_on_no_variable_of_the_codebook_is_refused(tmp_path: Path) -> None:
    from irr_audit.join.variables import Condition

    codebook = rules(FAILURE, {**SEVERITY, "applies_when": None})
    paths = [write(tmp_path, "alice.csv", CONDITIONAL_ALICE), write(tmp_path, "bob.csv", CONDITIONAL_BOB)]
    sheets = read_variable_sheets(paths, codebook, SheetOptions())
    with pytest.raises(UsageError) as error:
        join_variables(sheets, codebook, conditions={"severity": Condition("failur", ("yes",))})
    assert error.value.code == "codebook-condition"
    with pytest.raises(UsageError) as error:
        join_variables(sheets, codebook, conditions={"severity": Condition("failure", ("maybe",))})
    assert error.value.code == "codebook-condition" and "maybe" in error.value.message


PARENT_CELL = st.sampled_from(["yes", "no", "", "maybe", None])  # None: no row
CHILD_CELL = st.sampled_from(["low", "high", "", "unknown", "x", None])


@given(
    st.lists(
        st.tuples(st.lists(PARENT_CELL, min_size=3, max_size=3), st.lists(CHILD_CELL, min_size=3, max_size=3)),
        min_size=1,
        max_size=25,
    )
)
def test_every_cell_is_used_logged_or_not_applicable(tmp_path_factory: pytest.TempPathFactory, units) -> None:
    """cells in = used + logged + not applicable + not comparable, and every sheet row ends up once."""
    folder = tmp_path_factory.mktemp("cells")
    codebook = rules(FAILURE, SEVERITY)
    texts = {coder: ["comment_id,variable,code"] for coder in ("a", "b", "c")}
    for unit, (parents, children) in enumerate(units):
        for at, coder in enumerate(texts):
            if parents[at] is not None:
                texts[coder].append(f"u{unit},failure,{parents[at]}")
            if children[at] is not None:
                texts[coder].append(f"u{unit},severity,{children[at]}")
    texts = {coder: lines + ["z,failure,yes", "z,severity,low"] for coder, lines in texts.items()}  # none empty
    paths = [write(folder, f"{coder}.csv", "\n".join(lines) + "\n") for coder, lines in texts.items()]
    variables, log = joined(paths, codebook)
    assert CodebookJoin(variables).log_counts() == log_counts(log)  # counted without the log's text
    cell_reasons = {"unknown", "blank", "invalid", "absent", "condition_undecided"}
    for rule_id, variable in variables.items():
        full, scored = variable.full, variable.join
        counts = variable.cell_counts()
        mine = log[log["variable"] == rule_id]
        assert counts["cells"] == full.status.size == len(full.units) * 3
        assert (
            counts["used"] + counts["logged"] + counts["not_applicable"] + counts["not_comparable"] == counts["cells"]
        )
        # each cell of the variable's units that is not used: one log row, or in conflict (its rows logged)
        ids = set(scored.unit_ids.tolist())
        cells_logged = mine[mine["reason"].isin(cell_reasons) & mine["comment_id"].isin(ids)]
        keys = list(zip(cells_logged["coder"], cells_logged["comment_id"]))
        assert len(keys) == len(set(keys))
        in_conflict = int(np.count_nonzero(scored.status == CONFLICT))
        assert len(keys) + in_conflict == counts["logged"]
        used = {
            (coder, unit)
            for column, coder in enumerate(scored.coders)
            for unit in scored.unit_ids[scored.status[:, column] == VALID].tolist()
        }
        assert not used & set(keys)
        # one row per unit not comparable
        compared = mine[mine["reason"] == "condition_disagreement"]["comment_id"].tolist()
        assert sorted(compared) == sorted(full.unit_ids[variable.not_comparable].tolist())
        # every sheet row: behind a used cell, in the log, blank in a unit not applicable, or in one not comparable
        out = set(full.unit_ids[variable.not_applicable].tolist())
        uncomparable = set(compared)
        for column, sheet in enumerate(full.sheets):
            rows_logged = set(mine[mine["coder"] == sheet.coder]["row"].dropna().astype(int).tolist())
            rows_used = set(sheet.rows[scored.positions[:, column][scored.status[:, column] == VALID]].tolist())
            assert not rows_logged & rows_used
            for row, unit, code in zip(sheet.rows.tolist(), sheet.comment_ids.to_pylist(), sheet.codes.to_pylist()):
                assert (
                    row in rows_used or row in rows_logged or (unit in out and not code.strip()) or unit in uncomparable
                ), (rule_id, sheet.coder, row, unit, code)


def test_a_long_sheet_variable_no_one_coded_is_missing(tmp_path: Path) -> None:
    """Each variable's units are the sheets' units: a variable left out of a long sheet is absent."""
    codebook = rules(FAILURE, SEVERITY, AREA)
    paths = [
        write(tmp_path, "alice.csv", "comment_id,variable,code\n1,failure,yes\n2,failure,no\n1,area,app\n"),
        write(tmp_path, "bob.csv", "comment_id,variable,code\n1,failure,yes\n2,failure,no\n2,area,sync\n"),
    ]
    variables, log = joined(paths, codebook)
    # severity applies to unit 1 (both said yes) and no one coded it; unit 2 is not its (both said no)
    assert variables["severity"].join.unit_ids.tolist() == ["1"]
    assert variables["severity"].not_applicable.tolist() == [False, True]
    assert log[log["variable"] == "severity"][["coder", "comment_id", "reason"]].values.tolist() == [
        ["alice", "1", "absent"],
        ["bob", "1", "absent"],
    ]
    assert variables["area"].join.unit_ids.tolist() == ["1", "2"]
    assert log[log["variable"] == "area"][["coder", "comment_id", "reason"]].values.tolist() == [
        ["alice", "2", "absent"],
        ["bob", "1", "absent"],
    ]
