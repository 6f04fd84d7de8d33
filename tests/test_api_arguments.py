"""The public API used as a notebook uses it: an argument of the wrong type is refused with the
project's own error naming the argument and the fix, never a TypeError or AttributeError from
deep inside; the right type in another form (a Rule, a numpy array) is read as the documented one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import irr_audit

ROOT = Path(__file__).resolve().parents[1]
RULE = str(ROOT / "rules" / "explicit_current_failure" / "v1.yaml")
EXAMPLE = [str(ROOT / "examples" / "sheets" / name) for name in ("alice.csv", "bob.csv")]
CODEBOOK = str(ROOT / "codebooks" / "comment_study" / "v1.yaml")
CODED = [str(ROOT / "examples" / "codebook" / "sheets" / f"{coder}.csv") for coder in ("alice", "bob", "carol")]
EXPORT = str(ROOT / "tests" / "fixtures" / "importers" / "label_studio" / "export.json")


@pytest.mark.parametrize(
    ("options", "option"),
    [
        ({"id_column": 3}, "--id-column"),
        ({"code_column": ["code"]}, "--code-column"),
        ({"worksheet": 0}, "--worksheet"),
        ({"windows": 2, "order_column": 1}, "--order-column"),
    ],
)
def test_a_column_or_worksheet_that_is_not_text_is_refused_by_name(options: dict[str, object], option: str) -> None:
    with pytest.raises(irr_audit.UsageError) as refused:
        irr_audit.audit(EXAMPLE, RULE, **options)  # type: ignore[arg-type]
    assert refused.value.code == "usage-option-text"
    assert refused.value.message.startswith(f"{option} ") and "not text" in refused.value.message
    assert refused.value.hint


@pytest.mark.parametrize("options", [{"id_column": 3}, {"worksheet": 0}])
def test_a_codebook_audit_refuses_a_column_or_worksheet_that_is_not_text(options: dict[str, object]) -> None:
    with pytest.raises(irr_audit.UsageError) as refused:
        irr_audit.audit_codebook(CODED, CODEBOOK, **options)  # type: ignore[arg-type]
    assert refused.value.code == "usage-option-text"


def test_join_folder_refuses_a_column_that_is_not_text(tmp_path: Path) -> None:
    with pytest.raises(irr_audit.UsageError) as refused:
        irr_audit.join_folder(EXAMPLE, RULE, tmp_path / "joined", id_column=3)  # type: ignore[arg-type]
    assert refused.value.code == "usage-option-text"
    assert not (tmp_path / "joined").exists()


def test_a_delimiter_that_is_not_text_is_refused_as_any_other_delimiter() -> None:
    with pytest.raises(irr_audit.UsageError) as refused:
        irr_audit.audit(EXAMPLE, RULE, delimiter=1)  # type: ignore[arg-type]
    assert refused.value.code == "usage-delimiter" and refused.value.message.startswith("--delimiter 1 ")


@pytest.mark.parametrize("given", [5, None, ["a"]])
def test_a_path_argument_of_another_type_is_refused_by_its_name(tmp_path: Path, given: object) -> None:
    calls = {
        "out": [
            lambda: irr_audit.join_folder(EXAMPLE, RULE, given),  # type: ignore[arg-type]
            lambda: irr_audit.join_codebook_folder(CODED, CODEBOOK, given),  # type: ignore[arg-type]
            lambda: irr_audit.import_export("label-studio", EXPORT, RULE, given),  # type: ignore[arg-type]
        ],
        "path": [lambda: irr_audit.audit_table(given, RULE)],  # type: ignore[arg-type]
        "bundle": [lambda: irr_audit.labels(given)],  # type: ignore[arg-type]
    }
    if given is not None:  # None is the default of these: no sample, the rules beside the codebook
        calls["sample"] = [
            lambda: irr_audit.audit(EXAMPLE, RULE, sample=given),  # type: ignore[arg-type]
            lambda: irr_audit.join_folder(EXAMPLE, RULE, tmp_path / "j", sample=given),  # type: ignore[arg-type]
            lambda: irr_audit.audit_codebook(CODED, CODEBOOK, sample=given),  # type: ignore[arg-type]
        ]
        calls["rules_dir"] = [lambda: irr_audit.audit_codebook(CODED, CODEBOOK, rules_dir=given)]  # type: ignore[arg-type]
    for name, named_calls in calls.items():
        for call in named_calls:
            with pytest.raises(irr_audit.UsageError) as refused:
                call()
            assert refused.value.code == "data-form"
            assert refused.value.message == f"{name} is a path (a str or a pathlib.Path), not a {type(given).__name__}."
            assert "pathlib.Path" in (refused.value.hint or "")
    assert list(tmp_path.iterdir()) == []


def test_a_missing_sample_with_dataframes_is_named_as_missing() -> None:
    import pandas as pd

    frames = {
        "ann": pd.DataFrame({"comment_id": ["a", "b"], "code": ["yes", "no"]}),
        "ben": pd.DataFrame({"comment_id": ["a", "b"], "code": ["yes", "yes"]}),
    }
    with pytest.raises(irr_audit.UsageError) as refused:
        irr_audit.audit(frames, RULE, sample="no_such_sample")
    assert refused.value.code == "sample-dir-not-found"  # as with sheet files, not "has no sample.json"


def test_join_folder_takes_a_loaded_rule_as_every_other_function_does(tmp_path: Path) -> None:
    by_path = irr_audit.join_folder(EXAMPLE, RULE, tmp_path / "by_path")
    by_rule = irr_audit.join_folder(EXAMPLE, irr_audit.load_rule(RULE), tmp_path / "by_rule")
    assert by_rule.summary_line == by_path.summary_line
    assert (tmp_path / "by_rule" / "rule.yaml").read_bytes() == Path(RULE).read_bytes()
    assert irr_audit.audit(tmp_path / "by_rule").to_dict() == irr_audit.audit(tmp_path / "by_path").to_dict()
    with pytest.raises(irr_audit.UsageError) as refused:
        irr_audit.join_folder(EXAMPLE, 5, tmp_path / "by_int")  # type: ignore[arg-type]
    assert refused.value.code == "data-form" and not (tmp_path / "by_int").exists()


@pytest.mark.parametrize("width", [0, -1, "80", 80.0, True])
def test_a_text_width_that_is_no_number_of_columns_is_refused(width: object) -> None:
    result = irr_audit.audit(EXAMPLE, RULE)
    compared = irr_audit.compare(result, result, bootstrap=100, seed=1)
    study = irr_audit.audit_codebook(CODED, CODEBOOK)
    for render in (result.to_text, compared.to_text, study.to_text):
        with pytest.raises(irr_audit.UsageError) as refused:
            render(width)  # type: ignore[arg-type]
        assert refused.value.code == "usage-width" and refused.value.message.startswith(f"width={width!r} ")


def test_a_numpy_width_is_a_width() -> None:
    result = irr_audit.audit(EXAMPLE, RULE)
    assert result.to_text(np.int64(60)) == result.to_text(60)  # type: ignore[arg-type]


def test_with_comparison_refuses_what_is_not_a_comparison() -> None:
    result = irr_audit.audit(EXAMPLE, RULE)
    for other in (None, 5, result):
        with pytest.raises(irr_audit.UsageError) as refused:
            result.with_comparison(other)  # type: ignore[arg-type]
        assert refused.value.code == "usage-compare" and "takes a Comparison" in refused.value.message


def test_an_import_format_that_is_not_text_is_no_format(tmp_path: Path) -> None:
    with pytest.raises(irr_audit.UsageError) as refused:
        irr_audit.import_export(None, EXPORT, RULE, tmp_path / "imported")  # type: ignore[arg-type]
    assert refused.value.code == "usage-import-format"


def test_shares_and_rates_are_read_from_a_numpy_array_and_refused_as_text() -> None:
    assert irr_audit.plan_kappa(0.6, 0.4, shares=np.array([0.5, 0.5])).units == (
        irr_audit.plan_kappa(0.6, 0.4, shares=[0.5, 0.5]).units
    )
    assert irr_audit.plan_kappa(0.7, 0.85, rates=np.array([0.5, 0.5])).units == 96
    for options in ({"shares": "0.5,0.5"}, {"rates": "0.5,0.5"}, {"shares": 5}):
        with pytest.raises(irr_audit.UsageError) as refused:
            irr_audit.plan_kappa(0.7, 0.85, **options)  # type: ignore[arg-type]
        assert refused.value.code == "usage-plan" and "not a list of numbers" in refused.value.message


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({"windows": 11}, "--windows 11 cuts the 20 windowed units into windows of fewer than 2 units."),
        ({"windows": 100}, "--windows 100 cuts the 20 windowed units into windows of fewer than 2 units."),
        ({"window_size": 20}, "--window-size 20 leaves the 20 windowed units fewer than 2 windows to compare."),
    ],
)
def test_drift_windows_of_fewer_than_two_units_or_one_window_are_refused(options: dict[str, int], said: str) -> None:
    # README, "Limits": drift windows are 2 or more, of 2 units or more; they were made empty or alone
    with pytest.raises(irr_audit.UsageError) as refused:
        irr_audit.audit(EXAMPLE, RULE, seed=1, **options)  # type: ignore[arg-type]
    assert (refused.value.code, refused.value.message) == ("usage-drift", said)
    assert refused.value.hint and "10" in refused.value.hint


def test_drift_windows_at_the_edge_are_scored() -> None:
    assert [w["units"] for w in irr_audit.audit(EXAMPLE, RULE, seed=1, windows=10).drift["group"]["windows"]] == [
        2
    ] * 10  # type: ignore[index]
    by_size = irr_audit.audit(EXAMPLE, RULE, seed=1, window_size=11).drift
    assert [w["units"] for w in by_size["group"]["windows"]] == [11, 9]  # type: ignore[index]


def test_alpha_min_is_read_from_a_numpy_array() -> None:
    as_array = irr_audit.audit(EXAMPLE, RULE, bootstrap=20, seed=1, alpha_min=np.array([0.5, 0.8]))
    assert as_array.to_json() == irr_audit.audit(EXAMPLE, RULE, bootstrap=20, seed=1, alpha_min=[0.5, 0.8]).to_json()


@pytest.mark.parametrize("options", [{"question": 5}, {"question": "failure", "id_field": 5}, {"text_field": 1}])
def test_an_export_field_that_is_not_text_is_refused(tmp_path: Path, options: dict[str, object]) -> None:
    # a number matched no key of the export: every record was dropped, and the import said nothing was wrong
    with pytest.raises(irr_audit.UsageError) as refused:
        irr_audit.import_export("label-studio", EXPORT, RULE, tmp_path / "imported", **options)  # type: ignore[arg-type]
    assert refused.value.code == "usage-option-text" and "not text" in refused.value.message
    assert not (tmp_path / "imported").exists()


def test_a_delimiter_with_dataframes_is_refused_as_a_worksheet_is() -> None:
    import pandas as pd

    frames = {coder: pd.DataFrame({"comment_id": ["a", "b"], "code": ["yes", "no"]}) for coder in ("ann", "ben")}
    long = pd.DataFrame({"comment_id": ["a", "a"], "coder": ["ann", "ben"], "code": ["yes", "no"]})
    coded = {coder: pd.read_csv(path, dtype=str, keep_default_na=False) for coder, path in zip("abc", CODED)}
    for call in (
        lambda: irr_audit.audit(frames, RULE, delimiter=";"),
        lambda: irr_audit.audit(long, RULE, delimiter="tab"),
        lambda: irr_audit.audit_codebook(coded, CODEBOOK, delimiter=";"),
    ):
        with pytest.raises(irr_audit.UsageError) as refused:
            call()
        assert refused.value.code == "data-form" and refused.value.message.startswith("delimiter splits the lines")


class PolarsLikeFrame:
    """What a polars DataFrame offers here (polars is not a dependency): its class name and to_pandas."""

    def to_pandas(self) -> object:
        import pandas as pd

        return pd.DataFrame({"comment_id": ["a"], "code": ["yes"]})


PolarsLikeFrame.__name__ = "DataFrame"
PolarsLikeFrame.__module__ = "polars.dataframe.frame"


def test_a_table_of_another_library_is_named_with_its_library_and_to_pandas() -> None:
    import pyarrow as pa

    arrow = pa.table({"comment_id": ["a"], "code": ["yes"]})
    cases = [
        (PolarsLikeFrame(), "cannot audit a polars DataFrame."),
        ([PolarsLikeFrame(), PolarsLikeFrame()], "cannot audit a list holding a polars DataFrame."),
        (arrow, "cannot audit a pyarrow Table."),
        ({"ann": arrow, "ben": arrow}, "the data for coder 'ann' is a pyarrow Table, not a pandas DataFrame."),
    ]
    for data, said in cases:
        with pytest.raises(irr_audit.UsageError) as refused:
            irr_audit.audit(data, RULE)  # type: ignore[arg-type]
        assert (refused.value.code, refused.value.message) == ("data-form", said)
        assert "to_pandas()" in (refused.value.hint or "")


def _as_workbook(sheet: str, out: Path) -> str:
    """The CSV sheet saved as an XLSX workbook, as a coder's spreadsheet program would save it."""
    import csv

    from openpyxl import Workbook

    book = Workbook()
    with open(sheet, newline="", encoding="utf-8") as rows:
        for row in csv.reader(rows):
            book.active.append(row)
    book.save(out)
    return str(out)


def test_a_delimiter_with_only_workbooks_is_refused_and_applies_to_the_csv_sheets_among_them(tmp_path: Path) -> None:
    # it was passed over silently, as if the workbooks had been split on it
    workbooks = [_as_workbook(sheet, tmp_path / f"{Path(sheet).stem}.xlsx") for sheet in EXAMPLE]
    coded = [_as_workbook(sheet, tmp_path / f"{Path(sheet).stem}_coded.xlsx") for sheet in CODED]
    for call in (
        lambda: irr_audit.audit(workbooks, RULE, delimiter=";"),
        lambda: irr_audit.join_folder(workbooks, RULE, tmp_path / "joined", delimiter=";"),
        lambda: irr_audit.audit_codebook(coded, CODEBOOK, delimiter=";"),
        lambda: irr_audit.join_codebook_folder(coded, CODEBOOK, tmp_path / "book", delimiter=";"),
    ):
        with pytest.raises(irr_audit.UsageError) as refused:
            call()
        assert refused.value.code == "data-form" and refused.value.message.startswith("delimiter splits the lines")
        assert "every sheet given is an XLSX workbook" in refused.value.message
        assert refused.value.hint == "leave out delimiter (--delimiter)."
    assert not (tmp_path / "joined").exists() and not (tmp_path / "book").exists()
    mixed = irr_audit.audit([workbooks[0], EXAMPLE[1]], RULE, delimiter=",")
    assert mixed.metrics.equals(irr_audit.audit(EXAMPLE, RULE).metrics)
    with pytest.raises(irr_audit.SheetError):  # the CSV sheet is split on ";": it has no comment_id column then
        irr_audit.audit([workbooks[0], EXAMPLE[1]], RULE, delimiter=";")


@pytest.mark.parametrize("given", ["no", "False", 0, 1, None])
def test_a_yes_or_no_argument_that_is_not_a_bool_is_refused_by_name(tmp_path: Path, given: object) -> None:
    # its truth value was taken: list_disagreements="no" listed them, force="no" replaced a folder
    result, study = irr_audit.audit(EXAMPLE, RULE), irr_audit.audit_codebook(CODED, CODEBOOK)
    renders = (result.to_dict, result.to_json, result.to_json_chunks, result.console_report, study.to_dict)
    renders += (study.to_json, study.console_report)
    calls = {
        "list_disagreements": [
            lambda: irr_audit.audit(EXAMPLE, RULE, list_disagreements=given),  # type: ignore[arg-type]
            lambda: irr_audit.audit_codebook(CODED, CODEBOOK, list_disagreements=given),  # type: ignore[arg-type]
        ],
        "force": [
            lambda: irr_audit.join_folder(EXAMPLE, RULE, tmp_path / "joined", force=given),  # type: ignore[arg-type]
            lambda: irr_audit.join_codebook_folder(CODED, CODEBOOK, tmp_path / "book", force=given),  # type: ignore[arg-type]
            lambda: irr_audit.import_export("label-studio", EXPORT, RULE, tmp_path / "imported", force=given),  # type: ignore[arg-type]
        ],
        "include_disagreements": [
            *(lambda render=render: render(given) for render in renders),
            lambda: result.to_text(80, given),  # type: ignore[arg-type]
            lambda: study.to_text(80, given),  # type: ignore[arg-type]
        ],
    }
    for name, named_calls in calls.items():
        for call in named_calls:
            with pytest.raises(irr_audit.UsageError) as refused:
                call()
            assert refused.value.code == "usage-yes-no"
            assert refused.value.message == f"{name}={given!r} is not True or False."
            assert refused.value.hint == f"pass {name}=True or {name}=False."
    assert list(tmp_path.iterdir()) == []


def test_a_numpy_bool_is_a_yes_or_no() -> None:
    unlisted = irr_audit.audit(EXAMPLE, RULE, list_disagreements=np.bool_(False))
    assert unlisted.to_json() == irr_audit.audit(EXAMPLE, RULE, list_disagreements=False).to_json()
    assert unlisted.to_json(np.True_) == unlisted.to_json(True)  # type: ignore[arg-type]


def test_a_worksheet_with_only_text_sheets_is_refused_and_applies_to_the_workbooks_among_them(tmp_path: Path) -> None:
    # it was passed over silently, as if a worksheet had been chosen
    for call in (
        lambda: irr_audit.audit(EXAMPLE, RULE, worksheet="Sheet1"),
        lambda: irr_audit.join_folder(EXAMPLE, RULE, tmp_path / "joined", worksheet="Sheet1"),
        lambda: irr_audit.audit_codebook(CODED, CODEBOOK, worksheet="Sheet1"),
        lambda: irr_audit.join_codebook_folder(CODED, CODEBOOK, tmp_path / "book", worksheet="Sheet1"),
    ):
        with pytest.raises(irr_audit.UsageError) as refused:
            call()
        assert refused.value.code == "data-form" and refused.value.message.startswith("worksheet chooses a worksheet")
        assert refused.value.hint == "leave out worksheet (--worksheet)."
    assert list(tmp_path.iterdir()) == []
    workbook = _as_workbook(EXAMPLE[0], tmp_path / "alice.xlsx")
    mixed = irr_audit.audit([workbook, EXAMPLE[1]], RULE, worksheet="Sheet")  # openpyxl's first worksheet
    assert mixed.metrics.equals(irr_audit.audit(EXAMPLE, RULE).metrics)
