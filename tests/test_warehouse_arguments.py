"""duckdb_counts called from a notebook: the rule in any form the API takes, and an argument of
the wrong type refused with the project's own error, never read as something else (coders="a,b"
letter by letter) or failing inside pathlib or DuckDB."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import irr_audit

pytest.importorskip("duckdb", reason="the warehouse extra (DuckDB) is not installed")

from irr_audit.warehouse.duckdb_counts import duckdb_counts  # noqa: E402 (after the skip)

ROOT = Path(__file__).resolve().parents[1]
RULE = ROOT / "rules" / "explicit_current_failure" / "v1.yaml"
MAPPING = {
    "rule": "explicit_current_failure",
    "version": 1,
    "scale": "nominal",
    "codes": [{"code": "yes"}, {"code": "no"}],
}


@pytest.fixture
def table(tmp_path: Path) -> Path:
    path = tmp_path / "long.csv"
    path.write_text("comment_id,coder,code\na,ann,yes\nb,ann,no\na,ben,yes\nb,ben,yes\n", encoding="utf-8")
    return path


def test_the_rule_is_a_rule_a_file_or_a_mapping(table: Path) -> None:
    counted = duckdb_counts(table, irr_audit.load_rule(RULE)).csv_text()
    assert duckdb_counts(str(table), str(RULE)).csv_text() == counted
    assert duckdb_counts(table, RULE).csv_text() == counted
    assert duckdb_counts(table, MAPPING).coders == ("ann", "ben")
    with pytest.raises(irr_audit.UsageError) as refused:
        duckdb_counts(table, 5)  # type: ignore[arg-type]
    assert refused.value.code == "data-form"


@pytest.mark.parametrize(
    ("options", "code"),
    [
        ({"coders": "ann,ben"}, "usage-coders"),
        ({"coders": [1, 2]}, "usage-coders"),
        ({"threads": 0}, "usage-threads"),
        ({"threads": True}, "usage-threads"),
        ({"threads": "2"}, "usage-threads"),
        ({"memory_limit": 4}, "usage-memory-limit"),
    ],
)
def test_an_option_of_the_wrong_type_is_refused(table: Path, options: dict[str, object], code: str) -> None:
    with pytest.raises(irr_audit.UsageError) as refused:
        duckdb_counts(table, RULE, **options)  # type: ignore[arg-type]
    assert refused.value.code == code and refused.value.hint


def test_a_path_that_is_no_path_is_refused_by_name() -> None:
    with pytest.raises(irr_audit.UsageError) as refused:
        duckdb_counts(5, RULE)  # type: ignore[arg-type]
    assert (refused.value.code, refused.value.message) == (
        "data-form",
        "path is a path (a str or a pathlib.Path), not a int.",
    )


def test_coders_and_threads_in_their_documented_forms_count_as_before(table: Path) -> None:
    counted = duckdb_counts(table, RULE)
    assert duckdb_counts(table, RULE, coders=["ann", "ben"], threads=np.int64(1)).csv_text() == counted.csv_text()
