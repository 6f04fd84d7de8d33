"""The public Python API (docs/api.md): every input kind gives exactly the command line's
document, DataFrames are read as text, errors carry the command line's codes and messages."""

from __future__ import annotations

import csv
import hashlib
import html
import io
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from typer.testing import CliRunner

import irr_audit
from irr_audit.cli import app
from irr_audit.rules.load import rule_yaml

ROOT = Path(__file__).resolve().parents[1]
RULE = str(ROOT / "rules" / "explicit_current_failure" / "v1.yaml")
EXAMPLE = [str(ROOT / "examples" / "sheets" / name) for name in ("alice.csv", "bob.csv")]
THREE = sorted(str(path) for path in (ROOT / "tests" / "examples" / "E_three_raters" / "sheets").iterdir())
THREE_RULE = str(ROOT / "tests" / "examples" / "E_three_raters" / "rule.yaml")
UNDEFINED = sorted(str(path) for path in (ROOT / "tests" / "examples" / "C_undefined_kappa" / "sheets").iterdir())
UNDEFINED_RULE = str(ROOT / "tests" / "examples" / "C_undefined_kappa" / "rule.yaml")
NUMERIC_RULE = {"rule": "numeric_codes", "version": 1, "scale": "nominal", "codes": [{"code": "1"}, {"code": "0"}]}


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def cli_json(*args: str) -> str:
    code, out, err = cli(*args, "--format", "json", "-q")
    assert code == 0, err
    return out


def assert_same_as_cli(result: irr_audit.Audit, *args: str) -> None:
    """report --format json is to_dict(); score --format json is to_dict(include_disagreements=False)."""
    report, score = cli_json("report", *args), cli_json("score", *args)
    assert json.loads(report) == result.to_dict()
    assert json.loads(score) == result.to_dict(include_disagreements=False)
    assert result.to_json() == report
    assert result.to_json(include_disagreements=False) == score


# --- every input kind -----------------------------------------------------------------


def test_sheets_give_the_cli_document() -> None:
    result = irr_audit.audit(EXAMPLE, RULE)
    assert_same_as_cli(result, *EXAMPLE, "--rule", RULE)
    assert (
        result.summary_line == "22 units from 2 coders: 20 fully coded, 2 in the missingness log (1 unknown, 1 blank)."
    )
    assert result.to_markdown() == cli("report", *EXAMPLE, "--rule", RULE, "-q")[1]
    assert result.to_html() == cli("report", *EXAMPLE, "--rule", RULE, "--format", "html", "-q")[1]


def test_a_rule_object_a_path_and_a_str_path_give_the_same_audit() -> None:
    rule = irr_audit.load_rule(RULE)
    assert irr_audit.audit(EXAMPLE, rule).to_json() == irr_audit.audit([Path(p) for p in EXAMPLE], Path(RULE)).to_json()


def test_a_join_folder_and_a_bundle_give_the_cli_document(tmp_path: Path) -> None:
    out = tmp_path / "joined"
    assert cli("join", *EXAMPLE, "--rule", RULE, "--out", str(out), "-q")[0] == 0
    assert_same_as_cli(irr_audit.audit(out), str(out))
    assert_same_as_cli(irr_audit.audit(str(out), RULE), str(out), "--rule", RULE)

    code, printed, err = cli("freeze", *EXAMPLE, "--rule", RULE, "--into", str(tmp_path / "audits"), "-q")
    assert code == 0, err
    bundle = Path(printed.split("  ", 1)[1].strip())
    template = tmp_path / "decide.csv"
    assert cli("adjudicate", str(bundle), "-o", str(template), "-q")[0] == 0
    rows = list(csv.DictReader(io.StringIO(template.read_text())))
    rows[0]["code"], rows[0]["note"] = "yes", "agreed"
    with template.open("w", newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    assert cli("adjudicate", str(bundle), "--decisions", str(template), "--by", "ann and ben", "-q")[0] == 0
    result = irr_audit.audit(bundle)
    assert result.to_dict()["adjudication"]  # the bundle's decisions, kept apart from the statistics
    assert "adjudication" not in result.to_dict(include_disagreements=False)
    assert_same_as_cli(result, str(bundle))
    assert result.to_markdown() == cli("report", str(bundle), "-q")[1]


def test_counts_give_the_cli_document(tmp_path: Path) -> None:
    out = tmp_path / "joined"
    assert cli("join", *EXAMPLE, "--rule", RULE, "--out", str(out), "-q")[0] == 0
    counts = str(out / "counts.csv")
    shard = tmp_path / "shard.csv"  # a second shard: 8 more units both coded yes, 1 more coded by bob only
    shard.write_text("alice,bob,units\nyes,yes,8\n,no,1\n", encoding="utf-8")
    result = irr_audit.audit_counts([counts, shard], RULE, bootstrap=20, seed=4)
    assert_same_as_cli(
        result, "--counts", counts, "--counts", str(shard), "--rule", RULE, "--bootstrap", "20", "--seed", "4"
    )
    assert result.join is None and list(result.missingness.columns) == list(LOG_COLUMNS) and result.missingness.empty
    assert result.summary_line == "31 units from 2 coders in 2 counts file(s): 28 fully coded."


LOG_COLUMNS = ("sheet", "coder", "row", "comment_id", "raw_value", "reason", "detail")


def notebook_frames() -> dict[str, pd.DataFrame]:
    """Frames as a notebook makes them: ids as integers, a missing code as None, a text column."""
    alice = pd.DataFrame(
        {
            "comment_id": [101, 102, 103, 104, 105, 106, 108],
            "code": ["yes", "no", "yes", "unknown", None, "Y", "NA"],
            "body": ["It crashes.", "Nice app", "Broken, again", "?", "", 'Says "fails"', "na"],
        }
    )
    bob = pd.DataFrame(
        {"comment_id": [101, 102, 103, 104, 105, 107, 108], "code": ["yes", "yes", "yes", "no", "no", "maybe", "no"]}
    )
    return {"alice": alice, "bob": bob}


def write_csv(frame: pd.DataFrame, path: Path) -> str:
    frame.to_csv(path, index=False, lineterminator="\n")
    return str(path)


def test_a_mapping_of_dataframes_gives_the_cli_document_of_their_csv(tmp_path: Path) -> None:
    frames = notebook_frames()
    result = irr_audit.audit(frames, RULE)
    sheets = [write_csv(frame, tmp_path / f"{coder}.csv") for coder, frame in frames.items()]
    assert_same_as_cli(result, *sheets, "--rule", RULE)
    record = result.to_dict()["sheets"][0]
    assert record["name"] == "alice.csv"
    assert record["sha256"] == hashlib.sha256(Path(sheets[0]).read_bytes()).hexdigest()
    log = result.missingness
    assert list(log.columns) == list(LOG_COLUMNS)
    na = log[log.comment_id == "108"]
    assert na.raw_value.tolist() == ["NA"] and na.reason.tolist() == ["invalid"]  # "NA" is text, not missing
    blank = log[(log.comment_id == "105") & (log.coder == "alice")]
    assert blank.reason.tolist() == ["blank"] and blank.row.tolist() == [6]  # the row a spreadsheet shows


def test_one_long_dataframe_gives_the_cli_document_of_each_coders_rows(tmp_path: Path) -> None:
    frames = notebook_frames()
    long = pd.concat([frame.assign(coder=coder) for coder, frame in frames.items()], ignore_index=True)
    result = irr_audit.audit(long.sample(frac=1, random_state=3).sort_values("coder", kind="stable"), RULE)
    sheets = [write_csv(long[long.coder == coder], tmp_path / f"{coder}.csv") for coder in frames]
    ordered = irr_audit.audit(long, RULE)
    assert_same_as_cli(ordered, *sheets, "--rule", RULE)
    assert result.metrics.equals(ordered.metrics)  # row order within a coder changes no number
    log = ordered.missingness
    blank = log[(log.comment_id == "105") & (log.coder == "alice")]
    assert blank.row.tolist() == [6]  # the row of the long frame
    bob = log[(log.coder == "bob") & (log.comment_id == "107")]
    assert bob.row.tolist() == [long.index[(long.coder == "bob") & (long.comment_id == 107)][0] + 2]


def test_ids_keep_their_text_and_codes_their_case() -> None:
    frames = {
        "ann": pd.DataFrame({"comment_id": ["007", "7", " 8 "], "code": ["yes", "YES", "no"]}),
        "ben": pd.DataFrame({"comment_id": ["007", "7", "8"], "code": ["Yes", "yes", "no"]}),
    }
    result = irr_audit.audit(frames, RULE)
    assert result.units["total"] == 3 and result.units["fully_coded"] == 3  # "007" and "7" stay two units
    assert result.table.loc["yes", "yes"] == 2


def test_a_float_code_column_is_refused_and_int64_reads_as_its_csv(tmp_path: Path) -> None:
    frames = {
        "ann": pd.DataFrame({"comment_id": ["a", "b", "c", "d"], "code": [1, 0, np.nan, 1]}),
        "ben": pd.DataFrame({"comment_id": ["a", "b", "c", "d"], "code": [1, 1, 0, 1]}),
    }
    assert frames["ann"].code.dtype == np.float64  # what pandas makes of whole numbers and NaN
    with pytest.raises(irr_audit.SheetError) as refused:
        irr_audit.audit(frames, NUMERIC_RULE)
    assert refused.value.code == "data-float"
    assert "column 'code' holds the floating-point number 1.0 (row 2)" in refused.value.message
    assert "astype('Int64')" in refused.value.hint
    fixed = {**frames, "ann": frames["ann"].astype({"code": "Int64"})}
    result = irr_audit.audit(fixed, NUMERIC_RULE)
    rule_file = tmp_path / "numeric.yaml"
    rule_file.write_bytes(rule_yaml(NUMERIC_RULE))
    sheets = [write_csv(frame, tmp_path / f"{coder}.csv") for coder, frame in fixed.items()]
    assert_same_as_cli(result, *sheets, "--rule", str(rule_file))
    assert result.missingness.reason.tolist() == ["blank"]


def test_other_columns_are_read_as_a_csv_export_writes_them(tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {
            "comment_id": pd.Series(["a", "b", "c"], dtype="category"),
            "code": pd.array(["yes", "no", pd.NA], dtype="string"),
            "confidence": [0.9, np.nan, 0.25],
            "checked": [True, False, True],
            "when": pd.to_datetime(["2024-01-02", None, "2024-03-04"]),
        }
    )
    other = pd.DataFrame({"comment_id": ["a", "b", "c"], "code": ["yes", "no", "no"]})
    result = irr_audit.audit({"ann": frame, "ben": other}, RULE)
    sheets = [write_csv(frame, tmp_path / "ann.csv"), write_csv(other, tmp_path / "ben.csv")]
    assert Path(sheets[0]).read_text().splitlines()[1] == "a,yes,0.9,True,2024-01-02"
    assert_same_as_cli(result, *sheets, "--rule", RULE)


# --- the result as DataFrames -------------------------------------------------------------


def test_metrics_are_indexed_by_coefficient_with_fixed_columns() -> None:
    result = irr_audit.audit(EXAMPLE, RULE)
    metrics = result.metrics
    assert list(metrics.columns) == [
        "value",
        "defined",
        "reason",
        "se",
        "ci_low",
        "ci_high",
        "ci_method",
        "bootstrap_se",
        "bootstrap_ci_low",
        "bootstrap_ci_high",
        "p_value",
    ]
    document = result.to_dict()["metrics"]
    assert metrics.loc["cohen_kappa", "value"] == document["cohen_kappa"]["value"]
    assert metrics.loc["cohen_kappa", "ci_low"] == document["cohen_kappa"]["ci"][0]
    assert metrics.loc["specific_agreement[yes]", "value"] == document["specific_agreement"]["yes"]["value"]
    assert metrics.index.name == "coefficient"
    assert list(result.available_case.index) == [
        name if "defined" in entry else f"{name}[{category}]"
        for name, entry in result.to_dict()["available_case"].items()
        for category in (entry if "defined" not in entry else [None])
    ]


def test_an_undefined_coefficient_is_na_with_its_reason_never_a_number() -> None:
    metrics = irr_audit.audit(UNDEFINED, UNDEFINED_RULE).metrics
    kappa = metrics.loc["cohen_kappa"]
    assert not kappa["defined"]
    assert kappa["value"] is pd.NA and kappa["reason"].startswith("pe = 1")
    assert metrics["value"].dtype == "Float64" and not metrics["value"].isna().all()


def test_the_table_is_labelled_with_coders_and_categories() -> None:
    result = irr_audit.audit(EXAMPLE, RULE)
    table = result.table
    assert (table.index.name, table.columns.name) == ("alice", "bob")
    assert list(table.index) == list(table.columns) == ["yes", "no"]
    assert table.to_numpy().tolist() == result.to_dict()["table"] == [[8, 2], [1, 9]]
    three = irr_audit.audit(THREE, THREE_RULE)
    assert three.table_kind == "coincidence" and three.table.index.name == "category"
    assert three.table.to_numpy().tolist() == three.to_dict()["table"]


def test_pairs_are_small_objects_with_their_own_frames() -> None:
    result = irr_audit.audit(THREE, THREE_RULE)
    document = result.to_dict()["pairs"]
    assert [pair.coders for pair in result.pairs] == [tuple(pair["coders"]) for pair in document]
    first = result.pairs[0]
    assert first.n == document[0]["n"] and first.n_available == document[0]["n_available"]
    assert first.table.to_numpy().tolist() == document[0]["table"]
    assert (first.table.index.name, first.table.columns.name) == first.coders
    assert first.metrics.loc["cohen_kappa", "value"] == document[0]["metrics"]["cohen_kappa"]["value"]


def test_the_frames_are_copies_and_the_audit_is_frozen() -> None:
    result = irr_audit.audit(EXAMPLE, RULE)
    metrics, log = result.metrics, result.missingness
    metrics.loc["cohen_kappa", "value"] = 1.0
    log.loc[0, "reason"] = "changed"
    assert result.metrics.loc["cohen_kappa", "value"] == 0.7
    assert result.missingness.loc[0, "reason"] != "changed"
    with pytest.raises(AttributeError):
        result.report = None  # type: ignore[misc]


def test_to_dict_is_a_copy() -> None:
    result = irr_audit.audit(EXAMPLE, RULE)
    document = result.to_dict()
    document["metrics"]["cohen_kappa"]["value"] = 1.0
    document["disagreements"][0]["codes"]["alice"] = "changed"
    assert result.to_dict()["metrics"]["cohen_kappa"]["value"] == 0.7
    assert result.metrics.loc["cohen_kappa", "value"] == 0.7
    assert "changed" not in result.to_json()


def test_dataframe_columns_are_chosen_as_in_sheets(tmp_path: Path) -> None:
    frames = {
        coder: pd.DataFrame({"ID": ["a", "b", "c"], "Label": codes, "code": ["x", "x", "x"]})
        for coder, codes in (("ann", ["yes", "no", "yes"]), ("ben", ["yes", "yes", "yes"]))
    }
    result = irr_audit.audit(frames, RULE, id_column="id", code_column="label")
    sheets = [write_csv(frame, tmp_path / f"{coder}.csv") for coder, frame in frames.items()]
    assert_same_as_cli(result, *sheets, "--rule", RULE, "--id-column", "id", "--code-column", "label")
    with pytest.raises(irr_audit.UsageError) as refused:
        irr_audit.audit(frames, RULE, worksheet="Sheet1")
    assert refused.value.code == "data-form"


def test_numpy_integers_are_whole_numbers_and_other_numbers_are_refused() -> None:
    numpy_ints = irr_audit.audit(EXAMPLE, RULE, bootstrap=np.int64(50), seed=np.int32(5))
    assert numpy_ints.to_json() == irr_audit.audit(EXAMPLE, RULE, bootstrap=50, seed=5).to_json()
    for bootstrap in (True, 2.5, -1):
        with pytest.raises(irr_audit.UsageError) as refused:
            irr_audit.audit(EXAMPLE, RULE, bootstrap=bootstrap)  # type: ignore[arg-type]
        assert refused.value.code == "usage-bootstrap"
    with pytest.raises(irr_audit.UsageError) as refused:
        irr_audit.audit(EXAMPLE, RULE, seed=1.5)  # type: ignore[arg-type]
    assert refused.value.code == "usage-seed"


def test_warnings_are_the_reports() -> None:
    result = irr_audit.audit(THREE, THREE_RULE)
    assert list(result.warnings) == result.to_dict()["warnings"]


def test_repr_html_is_the_report_in_a_frame_of_its_own() -> None:
    result = irr_audit.audit(EXAMPLE, RULE)
    shown = result._repr_html_()
    match = re.fullmatch(
        r'<iframe title="irr-audit report" srcdoc="([^"]*)" sandbox="allow-scripts" .*</iframe>', shown
    )
    assert match is not None
    assert html.unescape(match.group(1)) == result.to_html()
    assert repr(result) == "<Audit explicit_current_failure v1: alice, bob; 20 of 22 units fully coded>"


# --- options ----------------------------------------------------------------------------------


def test_group_against_gives_the_cli_document_in_either_form() -> None:
    as_text = irr_audit.audit(THREE, THREE_RULE, group="pair=r1,r2", against="r3")
    as_mapping = irr_audit.audit(THREE, THREE_RULE, group={"pair": ["r1", "r2"]}, against="r3")
    assert as_text.to_json() == as_mapping.to_json()
    assert as_text.to_dict()["group_comparison"]["name"] == "pair"
    assert_same_as_cli(as_text, *THREE, "--rule", THREE_RULE, "--group", "pair=r1,r2", "--against", "r3")


def test_bootstrap_with_a_seed_is_reproducible_and_is_the_clis() -> None:
    first = irr_audit.audit(EXAMPLE, RULE, bootstrap=200, seed=11)
    again = irr_audit.audit(EXAMPLE, RULE, bootstrap=200, seed=11)
    other = irr_audit.audit(EXAMPLE, RULE, bootstrap=200, seed=12)
    assert first.to_json() == again.to_json()
    assert first.metrics["bootstrap_ci_low"].notna().any()
    assert not first.metrics["bootstrap_ci_low"].equals(other.metrics["bootstrap_ci_low"])
    assert_same_as_cli(first, *EXAMPLE, "--rule", RULE, "--bootstrap", "200", "--seed", "11")


def test_a_sample_restricts_sheets_and_frames_as_join_sample_does(tmp_path: Path) -> None:
    fixtures = ROOT / "tests" / "fixtures" / "collector"
    rule = str(fixtures / "rule_v1.yaml")
    sample = tmp_path / "sample"
    drawn = cli("sample", str(fixtures / "dataset.json"), "--rule", rule, "--coders", "ann,ben", "--out", str(sample))
    assert drawn[0] == 0, drawn[2]
    sheets = [sample / "sheets" / "ann.csv", sample / "sheets" / "ben.csv"]
    for path, codes in zip(sheets, (("yes", "no"), ("no", "no"))):
        frame = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")
        frame["code"] = [codes[at % 2] for at in range(len(frame))]
        frame.to_csv(path, index=False, lineterminator="\n")
    joined = tmp_path / "joined"
    assert cli("join", *map(str, sheets), "--rule", rule, "--sample", str(sample), "--out", str(joined), "-q")[0] == 0
    from_folder = irr_audit.audit(joined)
    assert from_folder.to_dict()["sample"]
    assert irr_audit.audit(sheets, rule, sample=sample).to_dict() == from_folder.to_dict()
    frames = {path.stem: pd.read_csv(path, dtype=str, keep_default_na=False) for path in sheets}
    from_frames = irr_audit.audit(frames, rule, sample=sample)
    assert from_frames.to_dict()["sample"] == from_folder.to_dict()["sample"]
    assert from_frames.metrics.equals(from_folder.metrics)


def test_join_folder_writes_what_the_cli_writes(tmp_path: Path) -> None:
    written = irr_audit.join_folder(EXAMPLE, RULE, tmp_path / "api")
    assert cli("join", *EXAMPLE, "--rule", RULE, "--out", str(tmp_path / "cli"), "-q")[0] == 0
    for name in ("joined.csv", "missingness_log.csv", "missingness_log.jsonl", "counts.csv", "rule.yaml"):
        assert (tmp_path / "api" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes()
    assert {path.name for path in written.written} >= {"joined.csv", "summary.json"}
    assert written.summary_line == irr_audit.audit(EXAMPLE, RULE).summary_line
    assert irr_audit.audit(tmp_path / "api").to_json() == irr_audit.audit(tmp_path / "cli").to_json()


def test_join_folder_never_writes_over_its_inputs_and_a_sample_is_checked(tmp_path: Path) -> None:
    sheets = [str(tmp_path / "alice.csv"), str(tmp_path / "bob.csv")]
    for source, copy in zip(EXAMPLE, sheets):
        Path(copy).write_bytes(Path(source).read_bytes())
    with pytest.raises(irr_audit.OutputError) as refused:
        irr_audit.join_folder(sheets, RULE, tmp_path)
    assert refused.value.code == "output-overwrites-input"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["alice.csv", "bob.csv"]
    with pytest.raises(irr_audit.UsageError) as refused:
        irr_audit.audit(sheets, RULE, sample=tmp_path)
    assert refused.value.code == "usage-not-a-sample-dir"
    irr_audit.join_folder(sheets, RULE, tmp_path / "joined")
    with pytest.raises(irr_audit.UsageError) as refused:
        irr_audit.audit(tmp_path / "joined", sample=tmp_path)
    assert refused.value.code == "usage-sample"  # a join folder keeps its own units


# --- rules ---------------------------------------------------------------------------------------


def test_a_rule_mapping_is_validated_as_a_file_and_digested_as_its_canonical_yaml() -> None:
    mapping = {
        "rule": "explicit_current_failure",
        "version": 1,
        "scale": "nominal",
        "codes": [{"code": "yes"}, {"code": "no"}],
        "missing_codes": ["unknown"],
        "aliases": {"y": "yes", "n": "no"},
    }
    rule = irr_audit.load_rule(mapping)
    assert rule.categories == ("yes", "no")  # "yes" and "no" stay text
    assert rule.digest == "sha256:" + hashlib.sha256(rule_yaml(mapping)).hexdigest()
    assert irr_audit.load_rule(dict(reversed(mapping.items()))).digest == rule.digest  # keys sorted
    result = irr_audit.audit(EXAMPLE, mapping)
    assert result.metrics.equals(irr_audit.audit(EXAMPLE, RULE).metrics)
    with pytest.raises(irr_audit.RuleError) as refused:
        irr_audit.load_rule({**mapping, "colour": "red"})
    assert (
        refused.value.code == "rule-invalid" and "rule mapping: key 'colour' is not a rule key" in refused.value.message
    )
    with pytest.raises(irr_audit.RuleError) as refused:
        irr_audit.load_rule({**mapping, "version": np.int64(1)})
    assert refused.value.code == "rule-invalid" and "key version" in refused.value.message
    numpy_values = [
        ({**mapping, "x_weight": np.float64(1.5)}, "key x_weight holds a value of type numpy.float64"),
        ({**mapping, "scale": np.str_("nominal")}, "key scale holds a value of type numpy.str_"),
        ({**mapping, "x_flag": np.bool_(True)}, f"key x_flag holds a value of type numpy.{type(np.bool_()).__name__}"),
        ({**mapping, "aliases": {np.str_("y"): "yes"}}, "key aliases.y is a key of type numpy.str_"),
    ]
    for (
        numpy_mapping,
        named,
    ) in numpy_values:  # numpy's float64 and str_ are float and str, but YAML's dumper refuses them
        with pytest.raises(irr_audit.RuleError) as refused:
            irr_audit.load_rule(numpy_mapping)
        assert refused.value.code == "rule-invalid" and f"rule mapping: {named}, which" in refused.value.message
        assert "float()" in refused.value.hint
    looped: dict = {}
    looped["x"] = looped
    with pytest.raises(irr_audit.LimitError) as refused:
        irr_audit.load_rule(looped)
    assert refused.value.code == "limit-depth"


# --- errors ----------------------------------------------------------------------------------------


def cli_error(*args: str) -> str:
    code, _, err = cli(*args)
    assert code == 2
    return err.rstrip("\n")


def test_errors_have_the_cli_codes_and_messages(tmp_path: Path) -> None:
    cases = [
        (lambda: irr_audit.audit(EXAMPLE), ("score", *EXAMPLE)),
        (lambda: irr_audit.audit([]), ("score",)),
        (lambda: irr_audit.audit(EXAMPLE[:1], RULE), ("score", EXAMPLE[0], "--rule", RULE)),
        (
            lambda: irr_audit.audit(EXAMPLE, RULE, against="bob"),
            ("score", *EXAMPLE, "--rule", RULE, "--against", "bob"),
        ),
        (
            lambda: irr_audit.audit(EXAMPLE, RULE, group="g=alice", against="bob"),
            ("score", *EXAMPLE, "--rule", RULE, "--group", "g=alice", "--against", "bob"),
        ),
        (
            lambda: irr_audit.audit(EXAMPLE, RULE, bootstrap=200_000),
            ("score", *EXAMPLE, "--rule", RULE, "--bootstrap", "200000"),
        ),
        (lambda: irr_audit.audit(EXAMPLE, RULE, seed=-1), ("score", *EXAMPLE, "--rule", RULE, "--seed", "-1")),
        (
            lambda: irr_audit.audit(EXAMPLE, RULE, limits={"nope": 1}),
            ("score", *EXAMPLE, "--rule", RULE, "--limit", "nope=1"),
        ),
        (
            lambda: irr_audit.audit(EXAMPLE, str(tmp_path / "missing.yaml")),
            ("score", *EXAMPLE, "--rule", str(tmp_path / "missing.yaml")),
        ),
        (lambda: irr_audit.audit_counts(EXAMPLE, None), ("score", "--counts", EXAMPLE[0], "--counts", EXAMPLE[1])),
    ]
    out = tmp_path / "joined"
    assert cli("join", *EXAMPLE, "--rule", RULE, "--out", str(out), "-q")[0] == 0
    cases.append((lambda: irr_audit.audit(out, THREE_RULE), ("score", str(out), "--rule", THREE_RULE)))
    for call, args in cases:
        with pytest.raises(irr_audit.IrrAuditError) as raised:
            call()
        assert raised.value.render() == cli_error(*args), args


def test_the_error_family_is_exported() -> None:
    for name in (
        "RuleError",
        "SheetError",
        "UsageError",
        "OutputError",
        "LimitError",
        "BundleError",
        "SigningError",
        "DigestListError",
    ):
        assert issubclass(getattr(irr_audit, name), irr_audit.IrrAuditError)


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (42, "data-form"),
        ({"alice": [1, 2]}, "data-form"),
        ({"a/b": pd.DataFrame({"comment_id": ["x"], "code": ["yes"]})}, "data-coder"),
        ({"": pd.DataFrame({"comment_id": ["x"], "code": ["yes"]})}, "data-coder"),
        (pd.DataFrame({"comment_id": ["x"], "code": ["yes"]}), "data-form"),  # a long frame needs its coder column
        (pd.DataFrame({"comment_id": ["x", "y"], "coder": ["ann", None], "code": ["yes", "no"]}), "data-coder"),
        ({"ann": pd.DataFrame({"comment_id": ["x"], "code": ["yes"], "coder": ["ben"]})}, "data-coder"),
        ({"ann": pd.DataFrame({"comment_id": [1.5], "code": ["yes"]})}, "data-float"),
        ({"ann": pd.DataFrame({"comment_id": ["x"], "code": pd.Categorical([1.0])})}, "data-float"),
        ({"ann": pd.DataFrame({"comment_id": ["x", "y"], "code": pd.Categorical(["yes", 1.0])})}, "data-float"),
        ({"ann": pd.DataFrame({"comment_id": pd.Categorical(["x", 2.0]), "code": ["yes", "no"]})}, "data-float"),
        ({"ann": pd.DataFrame({"comment_id": ["x"], "code": pd.Series([np.float32(1)], dtype=object)})}, "data-float"),
        ({"ann": pd.DataFrame({"comment_id": ["x"], "code": pd.Series([1 + 0j], dtype=object)})}, "data-float"),
        ({"ann": pd.DataFrame({"comment_id": ["x"], "code": [b"yes"]})}, "data-not-text"),
        ({"ann": pd.DataFrame({"comment_id": ["x", "y"], "code": ["yes", b"no"]})}, "data-not-text"),
        ({"ann": pd.DataFrame({"comment_id": ["x"], "code": ["yes"], "note": [b"a note"]})}, "data-not-text"),
        ({"ann": pd.DataFrame({"comment_id": ["x"], "code": pd.Categorical([b"yes"])})}, "data-not-text"),
        (
            {"ann": pd.DataFrame({"comment_id": ["x"], "code": pd.Series([b"yes"], dtype=pd.ArrowDtype(pa.binary()))})},
            "data-not-text",
        ),
        ({"ann": pd.DataFrame({"comment_id": pd.Series(["x\ud800"], dtype=object), "code": ["yes"]})}, "data-not-text"),
        ({"ann": pd.DataFrame({"comment_id": ["x\x1by"], "code": ["yes"]})}, "sheet-control-character"),
        ({"ann": pd.DataFrame({"id": ["x"], "code": ["yes"]})}, "sheet-missing-column"),
        ({"ann": pd.DataFrame({"comment_id": [], "code": []})}, "sheet-empty"),
    ],
)
def test_bad_data_is_one_error_naming_the_fix(data: object, code: str) -> None:
    with pytest.raises(irr_audit.IrrAuditError) as raised:
        irr_audit.audit(data, RULE)  # type: ignore[arg-type]
    assert raised.value.code == code
    assert raised.value.hint


def test_the_api_leaves_pandas_and_pyarrow_as_they_were() -> None:
    irr_audit.audit(notebook_frames(), RULE)
    categorical = pa.array(pd.Series(["a", "b", "a"], dtype="category"))
    assert isinstance(categorical, pa.DictionaryArray) and categorical.dictionary.to_pylist() == ["a", "b"]
    nullable = pa.array(pd.Series([1, None, 3], dtype="Int64"))
    assert nullable.type == pa.int64() and nullable.to_pylist() == [1, None, 3]
    table = pa.Table.from_pandas(
        pd.DataFrame({"n": pd.array([1, pd.NA], dtype="Int64"), "c": pd.Categorical(["x", "y"])})
    )
    assert pa.types.is_dictionary(table.schema.field("c").type) and table.column("n").null_count == 1
    assert pd.read_csv(io.StringIO("a\nNA\n")).a.isna().all()  # pandas' own defaults, untouched


# --- a DataFrame read as its CSV file is ----------------------------------------------------------


def file_error(call: object) -> irr_audit.IrrAuditError | None:
    """The IrrAuditError ``call()`` raises, or None when it returns."""
    try:
        call()  # type: ignore[operator]
    except irr_audit.IrrAuditError as error:
        return error
    return None


def test_columns_named_alike_are_read_as_the_file_with_that_header_is(tmp_path: Path) -> None:
    ann = pd.DataFrame([["a", "yes", "x", "y"], ["b", "no", "x", "y"]], columns=["comment_id", "code", "note", "note"])
    ben = pd.DataFrame({"comment_id": ["a", "b"], "code": ["yes", "no"]})
    sheets = [write_csv(ann, tmp_path / "ann.csv"), write_csv(ben, tmp_path / "ben.csv")]
    assert_same_as_cli(irr_audit.audit({"ann": ann, "ben": ben}, RULE), *sheets, "--rule", RULE)  # a note is ignored
    twice = pd.DataFrame([["a", "yes", "yes"], ["b", "no", "no"]], columns=["comment_id", "code", "code"])
    write_csv(twice, tmp_path / "ann.csv")
    by_file = file_error(lambda: irr_audit.audit(sheets, RULE))
    long = pd.DataFrame(
        [["a", "ann", "yes", "yes"], ["a", "ben", "yes", "yes"]], columns=["comment_id", "coder", "code", "code"]
    )
    for data in ({"ann": twice, "ben": ben}, long):
        by_frame = file_error(lambda data=data: irr_audit.audit(data, RULE))
        assert by_file is not None and by_frame is not None
        assert (
            (by_frame.code, by_frame.message)
            == (by_file.code, by_file.message)
            == (
                "sheet-duplicate-column",
                "sheet ann.csv has 2 columns named 'code'.",
            )
        )


def test_a_float_category_no_row_holds_is_no_cell(tmp_path: Path) -> None:
    codes = pd.Categorical(["yes", "no", "no"], categories=["yes", "no", 1.0, b"x"])
    frames = {
        "ann": pd.DataFrame({"comment_id": ["a", "b", "c"], "code": codes}),
        "ben": pd.DataFrame({"comment_id": ["a", "b", "c"], "code": ["yes", "no", "yes"]}),
    }
    sheets = [write_csv(frame, tmp_path / f"{coder}.csv") for coder, frame in frames.items()]
    assert_same_as_cli(irr_audit.audit(frames, RULE), *sheets, "--rule", RULE)


def test_a_refused_float_or_bytes_names_its_row_and_the_fix() -> None:
    ben = pd.DataFrame({"comment_id": ["a", "b"], "code": ["yes", "no"]})
    mixed = pd.DataFrame({"comment_id": ["a", "b"], "code": pd.Categorical(["yes", 1.0])})
    with pytest.raises(irr_audit.SheetError) as refused:
        irr_audit.audit({"ann": mixed, "ben": ben}, RULE)
    assert "column 'code' holds the floating-point number 1.0 (row 3)" in refused.value.message
    encoded = pd.DataFrame({"comment_id": ["a", "b"], "code": ["yes", "no"], "note": [None, b"fine"]})
    with pytest.raises(irr_audit.SheetError) as refused:
        irr_audit.audit({"ann": encoded, "ben": ben}, RULE)
    assert "column 'note' holds bytes, b'fine' (row 3), which are no text" in refused.value.message
    assert "frame['note'].str.decode('utf-8')" in refused.value.hint


def test_a_bare_carriage_return_is_read_as_the_frames_csv_form_reads(tmp_path: Path) -> None:
    """docs/api.md: the CSV form is to_csv's text with a field holding a carriage return quoted;
    to_csv leaves "a\rb" bare, which a CSV reader takes for a line end (a row more)."""
    ann = pd.DataFrame({"comment_id": ["a", "b"], "code": ["yes", "no"], "body": ["one\rtwo", "three\r\nfour"]})
    ben = pd.DataFrame({"comment_id": ["a", "b"], "code": ["yes", "yes"]})
    written = ann.to_csv(index=False, lineterminator="\n")
    assert "one\rtwo" in written and '"three\r\nfour"' in written  # pandas quotes only the line feed
    form = tmp_path / "ann.csv"
    form.write_bytes(written.replace("one\rtwo", '"one\rtwo"').encode())
    result = irr_audit.audit({"ann": ann, "ben": ben}, RULE)
    assert_same_as_cli(result, str(form), write_csv(ben, tmp_path / "ben.csv"), "--rule", RULE)
    assert result.units["total"] == 2


RENDERERS = """
import json, random, sys
import irr_audit

random.seed(7)
sheets = {sheets!r}
audit = irr_audit.audit(sheets, {rule!r})
codebook = irr_audit.audit_codebook({codebook_sheets!r}, {codebook!r})
comparison = irr_audit.compare(audit, audit, bootstrap=100, seed=1)
calls = {{
    "audit": lambda: irr_audit.audit(sheets, {rule!r}),
    "Audit.to_text()": audit.to_text,
    "Audit.to_text(width=None)": lambda: audit.to_text(width=None),
    "Audit.console_report()": audit.console_report,
    "Audit.to_markdown()": audit.to_markdown,
    "Audit.to_html()": audit.to_html,
    "Audit._repr_html_()": audit._repr_html_,
    "Audit.to_json()": audit.to_json,
    "Audit.to_methods()": audit.to_methods,
    "CodebookAudit.to_text()": codebook.to_text,
    "CodebookAudit.console_report()": codebook.console_report,
    "CodebookAudit.to_markdown()": codebook.to_markdown,
    "CodebookAudit.to_html()": codebook.to_html,
    "CodebookAudit._repr_html_()": codebook._repr_html_,
    "CodebookAudit.to_methods()": codebook.to_methods,
    "Comparison.to_text()": comparison.to_text,
    "Comparison.to_markdown()": comparison.to_markdown,
}}
changed = [] if random.getstate() == random.Random(7).getstate() else ["the audits"]
for name, call in calls.items():
    before = random.getstate()
    call()
    if random.getstate() != before:
        changed.append(name)
print(json.dumps([changed, "rich.style" in sys.modules]))
"""


def test_no_renderer_draws_from_the_callers_random_numbers() -> None:
    """rich/style.py draws from the global random when first imported: in a fresh interpreter,
    neither the audits nor any renderer may change the state a notebook seeded."""
    import subprocess
    import sys

    codebook_sheets = [str(ROOT / "examples" / "codebook" / "sheets" / f"{c}.csv") for c in ("alice", "bob")]
    code = RENDERERS.format(
        sheets=EXAMPLE,
        rule=RULE,
        codebook_sheets=codebook_sheets,
        codebook=str(ROOT / "codebooks" / "comment_study" / "v1.yaml"),
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    changed, rich_loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert rich_loaded  # the renderers did import rich in this interpreter
    assert changed == []


def test_arguments_of_another_kind_are_refused_by_name(tmp_path: Path) -> None:
    frames = notebook_frames()
    with pytest.raises(irr_audit.UsageError) as refused:
        irr_audit.audit(EXAMPLE, RULE, progress=5)  # type: ignore[arg-type]
    assert refused.value.code == "usage-progress" and refused.value.message.startswith("progress is a int")
    with pytest.raises(irr_audit.UsageError) as refused:
        irr_audit.join_folder(frames, RULE, tmp_path / "joined")  # type: ignore[arg-type]
    assert (refused.value.code, refused.value.message) == ("data-form", "cannot join a dict.")
    assert "irr_audit.audit(frames, rule)" in (refused.value.hint or "")
    for data in ([path.encode() for path in EXAMPLE], EXAMPLE[0].encode()):
        with pytest.raises(irr_audit.UsageError) as refused:
            irr_audit.audit(data, RULE)  # type: ignore[arg-type]
        named = f"cannot audit the path {EXAMPLE[0].encode()!r}"
        assert refused.value.message == f"{named}: it is bytes, and a path is text."
        assert "os.fsdecode(path)" in (refused.value.hint or "")


def test_the_sections_are_read_only_and_the_audit_still_pickles() -> None:
    import pickle

    result = irr_audit.audit(EXAMPLE, RULE, windows=2, seed=1)
    with pytest.raises(TypeError):
        result.sections["extra"] = {}  # type: ignore[index]
    assert "extra" not in result.to_dict()
    copied = pickle.loads(pickle.dumps(result))
    assert copied.to_json() == result.to_json() and dict(copied.sections) == dict(result.sections)
