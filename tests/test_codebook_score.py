"""A whole codebook in one audit: the example codebook's values against its independently
computed EXPECTED file, each variable's JSON exactly the single-rule report of that variable,
the reliability table first in every format, gates, and the CLI's --codebook."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

import irr_audit
from irr_audit.api import parse_gate_options
from irr_audit.cli import app

ROOT = Path(__file__).resolve().parents[1]
CODEBOOK = ROOT / "codebooks" / "comment_study" / "v1.yaml"
SHEETS = [ROOT / "examples" / "codebook" / "sheets" / f"{coder}.csv" for coder in ("alice", "bob", "carol")]
EXPECTED = json.loads((ROOT / "examples" / "codebook" / "expected.json").read_text(encoding="utf-8"))
UNCONDITIONAL = ("explicit_current_failure", "product_area", "sarcasm")


def run(*args: str | Path):
    return CliRunner().invoke(app, [str(arg) for arg in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def example() -> dict:
    result = run("report", *SHEETS, "--codebook", CODEBOOK, "--format", "json", "--quiet")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_the_example_matches_its_expected_values(example: dict) -> None:
    assert set(example["variables"]) == set(EXPECTED)
    for variable, expected in EXPECTED.items():
        report = example["variables"][variable]
        assert report["rule"]["scale"] == expected["scale"]
        assert report["units"]["total"] == expected["units"]
        assert report["units"]["fully_coded"] == expected["fully_coded"]
        metrics = report["metrics"]
        assert metrics["po"]["value"] == pytest.approx(expected["po"], abs=1e-12)
        assert metrics["fleiss_kappa"]["value"] == pytest.approx(expected["fleiss_kappa"], abs=1e-12)
        assert metrics["krippendorff_alpha"]["value"] == pytest.approx(expected["krippendorff_alpha"], abs=1e-12)
        alpha_available = report["available_case"]["krippendorff_alpha"]["value"]
        assert alpha_available == pytest.approx(expected["krippendorff_alpha_available_case"], abs=1e-12)
        pairs = {"-".join(pair["coders"]): pair["metrics"]["cohen_kappa"]["value"] for pair in report["pairs"]}
        assert pairs == pytest.approx(expected["pairwise_cohen_kappa"], abs=1e-12)
        assert report["missingness"]["by_reason"] == expected["missing_cells"]


def test_the_example_log_names_the_conditional_cells(tmp_path: Path) -> None:
    audit = irr_audit.audit_codebook(SHEETS, CODEBOOK)
    log = audit.missingness
    severity = log[log["variable"] == "severity"]
    disagreements = severity[severity["reason"] == "condition_disagreement"]["comment_id"].tolist()
    assert sorted(disagreements) == EXPECTED["severity"]["condition_disagreement_units"]
    coded = severity[severity["reason"] == "coded_when_not_applicable"]
    assert [f"{row.comment_id} ({row.coder}: {row.raw_value})" for row in coded.itertuples()] == EXPECTED["severity"][
        "coded_when_not_applicable"
    ]
    joined = audit.audits["severity"].join
    assert joined is not None
    every = set(audit.audits["explicit_current_failure"].join.unit_ids.tolist())  # type: ignore[union-attr]
    out = every - set(joined.unit_ids.tolist()) - set(disagreements)
    assert sorted(out) == EXPECTED["severity"]["not_applicable_units"]
    cells = audit.cells["severity"]
    assert cells["used"] + cells["logged"] + cells["not_applicable"] + cells["not_comparable"] == cells["cells"]


@pytest.mark.parametrize("variable", UNCONDITIONAL)
def test_each_variable_is_exactly_its_single_rule_report(example: dict, variable: str) -> None:
    """The same sheets read with that variable's column as the code, under its rule alone."""
    rule = ROOT / "rules" / variable / "v1.yaml"
    single = run("report", *SHEETS, "--rule", rule, "--code-column", variable, "--format", "json", "--quiet")
    assert json.loads(single.stdout) == example["variables"][variable]
    scored = run("score", *SHEETS, "--codebook", CODEBOOK, "--format", "json", "--quiet")
    alone = run("score", *SHEETS, "--rule", rule, "--code-column", variable, "--format", "json", "--quiet")
    assert json.loads(scored.stdout)["variables"][variable] == json.loads(alone.stdout)


def test_the_reliability_table_rows(example: dict) -> None:
    rows = {row["variable"]: row for row in example["reliability"]}
    order = [rule["id"] for rule in example["codebook"]["rules"]]  # the codebook's order (JSON sorts keys)
    assert [row["variable"] for row in example["reliability"]] == order
    assert order == ["explicit_current_failure", "product_area", "severity", "sarcasm"]
    severity = rows["severity"]
    assert severity["scale"] == "ordinal" and severity["coders"] == 3
    assert (severity["units"], severity["fully_coded"]) == (12, 11)
    assert severity["coefficient"]["metric"] == "krippendorff_alpha"
    assert severity["coefficient"]["value"] == pytest.approx(EXPECTED["severity"]["krippendorff_alpha"], abs=1e-12)
    assert severity["raw_agreement"]["value"] == pytest.approx(EXPECTED["severity"]["po"], abs=1e-12)
    assert severity["band"] == "tentative conclusions only (>= 0.667)"
    assert severity["gate"] is None
    assert example["codebook"]["name"] == "comment_study" and example["codebook"]["digest"].startswith("sha256:")
    assert set(order) == set(example["variables"])


def test_the_reliability_table_comes_first_in_every_format() -> None:
    for output_format, first, last in (
        ("md", "# Variable explicit\\_current\\_failure", "# Variable sarcasm"),
        ("text", "Variable explicit_current_failure", "Variable sarcasm"),
    ):
        text = run("report", *SHEETS, "--codebook", CODEBOOK, "--format", output_format, "--quiet").stdout
        assert text.index("Reliability by variable") < text.index(first) < text.index(last)
    page = run("report", *SHEETS, "--codebook", CODEBOOK, "--format", "html", "--quiet").stdout
    assert page.index("Reliability by variable") < page.index("<iframe")
    assert page.count("<iframe") == 4 and "http" not in page.split("<iframe")[0].replace("http-equiv", "")


def test_a_gate_just_above_the_value_shows_the_digits_that_tell_them_apart() -> None:
    """At four decimals, 0.722957 would read 0.7230: 'is below 0.72296' would contradict itself."""
    result = run("score", *SHEETS, "--codebook", CODEBOOK, "--gate", "severity=0.72296", "--quiet")
    assert result.exit_code == 1
    assert "gate failed: severity: Krippendorff's alpha (ordinal) 0.722957 is below 0.72296" in result.stderr


def test_gates_fail_naming_the_variables() -> None:
    result = run("score", *SHEETS, "--codebook", CODEBOOK, "--gate", "0.7", "--gate", "severity=0.8", "--quiet")
    assert result.exit_code == 1
    assert "gate failed: product_area: Krippendorff's alpha (nominal) 0.6791 is below 0.7" in result.stderr
    assert "gate failed: severity" in result.stderr and "sarcasm" not in result.stderr
    passed = run("score", *SHEETS, "--codebook", CODEBOOK, "--gate", "0.6", "--format", "json", "--quiet")
    assert passed.exit_code == 0
    rows = json.loads(passed.stdout)["reliability"]
    assert all(row["gate"] == {"threshold": 0.6, "passed": True} for row in rows)


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["--gate", "nosuch=0.5"], "usage-gate"),
        (["--gate", "2"], "usage-gate"),
        (["--gate", "severity=high"], "usage-gate"),
        (["--rule", ROOT / "rules" / "sarcasm" / "v1.yaml"], "usage-rule-or-codebook"),
        (["--group", "h=alice,bob", "--against", "carol"], "usage-codebook-option"),
    ],
)
def test_bad_codebook_options_are_refused(args: list, code: str) -> None:
    result = run("score", *SHEETS, "--codebook", CODEBOOK, *args)
    assert result.exit_code == 2
    assert f"Error [{code}]" in result.stderr


@pytest.mark.parametrize(
    ("gates", "says"),
    [
        (["severity=0.5", "severity=0.9"], "--gate severity=0.9 contradicts --gate severity=0.5"),
        (["0.5", "0.6"], "--gate 0.6 contradicts --gate 0.5: every variable has one gate"),
        (["=0.5"], "--gate '=0.5' names no variable before '='"),
        ([" =0.5"], "names no variable"),
    ],
)
def test_contradictory_or_nameless_gates_are_refused(gates: list[str], says: str) -> None:
    options = [item for gate in gates for item in ("--gate", gate)]
    result = run("score", *SHEETS, "--codebook", CODEBOOK, *options)
    assert result.exit_code == 2 and "Error [usage-gate]" in result.stderr and says in result.stderr


def test_a_gate_repeated_with_the_same_value_is_one_gate() -> None:
    assert parse_gate_options(["severity=0.8", " severity = 0.80", "0.6", "0.6"]) == {"severity": 0.8, "*": 0.6}


def test_sheets_need_a_rule_or_a_codebook(tmp_path: Path) -> None:
    result = run("join", *SHEETS, "--out", tmp_path / "out")
    assert result.exit_code == 2 and "Error [usage-missing-rule]" in result.stderr
    result = run("score", *SHEETS, "--gate", "0.5")
    assert result.exit_code == 2 and "Error [usage-gate]" in result.stderr


def test_the_join_folder_of_a_codebook(tmp_path: Path, example: dict) -> None:
    out = tmp_path / "joined"
    result = run("join", *SHEETS, "--codebook", CODEBOOK, "--out", out)
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["codebook"]["digest"] == example["codebook"]["digest"]
    assert sorted(path.name for path in (out / "joined").iterdir()) == sorted(f"{v}.csv" for v in EXPECTED)
    assert (out / "missingness_log.csv").read_text(encoding="utf-8").startswith("variable,sheet,coder,row,")
    from_folder = run("report", out, "--format", "json", "--quiet")
    assert json.loads(from_folder.stdout) == example
    # a --rule on the folder is refused with the way out
    single = run("score", out, "--rule", ROOT / "rules" / "sarcasm" / "v1.yaml")
    assert single.exit_code == 2 and "Error [usage-codebook-folder]" in single.stderr
    # commands of one rule's audit name the folder for what it is (freeze DIR freezes the codebook's
    # audit: tests/test_codebook_bundle_join.py)
    for args in (["freeze", out, "--rule", ROOT / "rules" / "sarcasm" / "v1.yaml", "--into", tmp_path / "audits"],
                 ["compare", out, out]):  # fmt: skip
        refused = run(*args)
        assert refused.exit_code == 2 and "Error [usage-codebook-folder]" in refused.stderr, args
    # an edited file: not one run
    (out / "joined" / "severity.csv").write_text("edited\n", encoding="utf-8")
    edited = run("score", out)
    assert edited.exit_code == 2 and "Error [joindir-not-one-run]" in edited.stderr


def test_a_changed_sheet_is_refused(tmp_path: Path) -> None:
    copies = []
    for sheet in SHEETS:
        copy = tmp_path / sheet.name
        copy.write_bytes(sheet.read_bytes())
        copies.append(copy)
    out = tmp_path / "joined"
    assert run("join", *copies, "--codebook", CODEBOOK, "--out", out, "--quiet").exit_code == 0
    copies[0].write_text(copies[0].read_text(encoding="utf-8") + "zz9,,yes,app,,no,\n", encoding="utf-8")
    result = run("score", out)
    assert result.exit_code == 2 and "Error [joindir-sheet-changed]" in result.stderr


# --- random data: each variable against its single-rule audit, the oracle -----------------------

FAILURE = {"rule": "failure", "version": 1, "scale": "nominal", "codes": [{"code": "yes"}, {"code": "no"}]}
AREA = {
    "rule": "area",
    "version": 1,
    "scale": "nominal",
    "codes": [{"code": c} for c in ("a", "b", "c")],
    "missing_codes": ["unknown"],
}
LEVEL = {
    "rule": "level",
    "version": 1,
    "scale": "ordinal",
    "codes": [{"code": c} for c in ("1", "2", "3", "4")],
    "applies_when": {"rule": "failure", "codes": ["yes"]},
}


def write_codebook(folder: Path) -> Path:
    import yaml

    for rule in (FAILURE, AREA, LEVEL):
        path = folder / "rules" / rule["rule"] / "v1.yaml"
        path.parent.mkdir(parents=True)
        path.write_text(yaml.safe_dump(rule, sort_keys=False), encoding="utf-8")
    codebook = folder / "codebook.yaml"
    codebook.write_text(
        "codebook: random\nversion: 1\nrules:\n"
        + "".join(f"  - {{rule: {rule['rule']}, version: 1}}\n" for rule in (FAILURE, AREA, LEVEL)),
        encoding="utf-8",
    )
    return codebook


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_codebooks_against_the_oracle(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    codebook = write_codebook(tmp_path)
    coders = ("ann", "ben", "cat")
    units = [f"u{n}" for n in range(rng.randint(20, 60))]
    cells: dict[str, dict[str, tuple[str, str, str]]] = {coder: {} for coder in coders}
    for unit in units:
        truth = (rng.choice(["yes", "no"]), rng.choice("abc"), rng.choice("1234"))
        for coder in coders:
            if rng.random() < 0.05:
                continue  # no row: absent on every variable
            failure = truth[0] if rng.random() < 0.85 else rng.choice(["yes", "no", "", "maybe"])
            area = truth[1] if rng.random() < 0.8 else rng.choice(["a", "b", "c", "", "unknown", "d"])
            level = (truth[2] if rng.random() < 0.7 else rng.choice("1234")) if failure == "yes" else ""
            if rng.random() < 0.05:
                level = rng.choice("1234")  # coded whether or not it applies
            cells[coder][unit] = (failure, area, level)
    paths = []
    for coder in coders:
        rows = [f"{unit},{','.join(values)}" for unit, values in cells[coder].items()]
        path = tmp_path / f"{coder}.csv"
        path.write_text("comment_id,failure,area,level\n" + "\n".join(rows) + "\n", encoding="utf-8")
        paths.append(path)
    audited = irr_audit.audit_codebook(paths, codebook)
    for variable in ("failure", "area"):
        single = irr_audit.audit(paths, tmp_path / "rules" / variable / "v1.yaml", code_column=variable)
        assert audited.audits[variable].to_dict() == single.to_dict()
    # the conditional variable: its units are those where some coder's failure is yes and none's is no
    present = list(dict.fromkeys(unit for coder in coders for unit in cells[coder]))  # first appearance
    inside = []
    for unit in present:
        said = [cells[coder][unit][0] for coder in coders if unit in cells[coder]]
        if "yes" in said and "no" not in said:
            inside.append(unit)
    level = audited.audits["level"]
    assert level.join is not None and level.join.unit_ids.tolist() == inside
    # its scores: the single-rule audit of sheets that hold, per coder, the level where that coder said yes
    oracle_paths = []
    for coder in coders:
        rows = [
            f"{unit},{cells[coder][unit][2] if cells[coder][unit][0] == 'yes' else 'unknown'}"
            for unit in inside
            if unit in cells[coder]
        ]
        path = tmp_path / "oracle" / f"{coder}.csv"
        path.parent.mkdir(exist_ok=True)
        path.write_text("comment_id,code\n" + "\n".join(rows) + "\n", encoding="utf-8")
        oracle_paths.append(path)
    rule = {**LEVEL, "missing_codes": ["unknown"]}
    rule.pop("applies_when")
    oracle = irr_audit.audit(oracle_paths, rule)
    if not inside:
        return
    assert level.metrics.equals(oracle.metrics)
    assert level.table.equals(oracle.table)
    assert level.units["fully_coded"] == oracle.units["fully_coded"]


def test_dataframes_audit_as_the_sheets_do() -> None:
    import pandas as pd

    frames = {sheet.stem: pd.read_csv(sheet, dtype=str, keep_default_na=False) for sheet in SHEETS}
    from_files = irr_audit.audit_codebook(SHEETS, CODEBOOK).to_dict()
    wide = irr_audit.audit_codebook(frames, CODEBOOK).to_dict()
    long = pd.concat(
        [
            frame.melt(id_vars=["comment_id"], value_vars=list(EXPECTED), var_name="variable", value_name="code")
            .assign(coder=coder)
            .drop_duplicates()
            for coder, frame in frames.items()
        ],
        ignore_index=True,
    )
    from_long = irr_audit.audit_codebook(long, CODEBOOK).to_dict()
    for document in (wide, from_long):
        assert document["reliability"] == from_files["reliability"]
        for variable in EXPECTED:
            mine, theirs = document["variables"][variable], from_files["variables"][variable]
            assert mine["metrics"] == theirs["metrics"] and mine["table"] == theirs["table"]
            assert mine["missingness"] == theirs["missingness"]
    with pytest.raises(irr_audit.UsageError) as error:
        irr_audit.audit_codebook(frames)
    assert error.value.code == "usage-missing-rule"


def test_a_codebook_bundle_scores_as_its_sheets(tmp_path: Path, example: dict) -> None:
    frozen = run("freeze", *SHEETS, "--codebook", CODEBOOK, "--into", tmp_path / "audits")
    assert frozen.exit_code == 0, frozen.output
    (bundle,) = [path for path in (tmp_path / "audits").iterdir() if path.is_dir()]
    from_bundle = json.loads(run("report", bundle, "--format", "json", "--quiet").stdout)
    assert from_bundle["reliability"] == example["reliability"]
    assert from_bundle["missingness"] == example["missingness"]
    for variable in EXPECTED:
        assert from_bundle["variables"][variable]["metrics"] == example["variables"][variable]["metrics"]
    gated = run("score", bundle, "--gate", "severity=0.8", "--quiet")
    assert gated.exit_code == 1 and "gate failed: severity" in gated.stderr


def test_join_with_the_sample_drawn_for_the_codebook(tmp_path: Path) -> None:
    import csv

    sample = tmp_path / "sample"
    drawn = run(
        "sample",
        ROOT / "examples" / "collector" / "dataset.jsonl",
        "--run-record",
        ROOT / "examples" / "collector" / "run.json",
        "--codebook",
        CODEBOOK,
        "--coders",
        "alice,bob",
        "--out",
        sample,
        "--size",
        "8",
        "--seed",
        "3",
        "--quiet",
    )
    assert drawn.exit_code == 0, drawn.output
    filled = []
    for coder in ("alice", "bob"):
        with open(sample / "sheets" / f"{coder}.csv", encoding="utf-8-sig", newline="") as stream:
            rows = list(csv.DictReader(stream))
        for at, row in enumerate(rows):
            row.update(explicit_current_failure="yes", product_area="app", sarcasm="no")
            row["severity"] = "minor" if coder == "alice" or at % 2 else "major"
        rows.append({**rows[0], "comment_id": "not_sampled"})  # a row for a unit outside the sample
        path = tmp_path / f"{coder}.csv"
        with open(path, "w", encoding="utf-8", newline="") as stream:
            writer = csv.DictWriter(stream, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        filled.append(path)
    out = tmp_path / "joined"
    joined = run("join", *filled, "--codebook", CODEBOOK, "--sample", sample, "--out", out, "--quiet")
    assert joined.exit_code == 0, joined.output
    document = json.loads(run("report", out, "--format", "json", "--quiet").stdout)
    severity = document["variables"]["severity"]
    assert severity["units"]["total"] == 8 and severity["sample"]["counts"]
    assert document["missingness"]["by_variable"]["severity"] == {"not_in_sample": 2}
    listed = severity["disagreements"]  # each with the ledger's text and link
    assert listed and all(entry.get("link") and entry.get("text") for entry in listed), listed[:1]
    # a sample drawn for one rule is not the codebook's
    rule_sample = tmp_path / "rule_sample"
    assert (
        run(
            "sample",
            ROOT / "examples" / "collector" / "dataset.jsonl",
            "--rule",
            ROOT / "rules" / "explicit_current_failure" / "v1.yaml",
            "--coders",
            "alice,bob",
            "--out",
            rule_sample,
            "--quiet",
        ).exit_code
        == 0
    )
    refused = run("join", *filled, "--codebook", CODEBOOK, "--sample", rule_sample, "--out", tmp_path / "other")
    assert refused.exit_code == 2 and "Error [usage-sample-codebook]" in refused.stderr


def test_a_variable_column_named_twice_is_refused_in_a_frame_as_in_its_file(tmp_path: Path) -> None:
    import pandas as pd

    frames = {sheet.stem: pd.read_csv(sheet, dtype=str, keep_default_na=False) for sheet in SHEETS[:2]}
    frames["alice"] = pd.concat([frames["alice"], frames["alice"][["severity"]]], axis=1)
    paths = []
    for coder, frame in frames.items():
        frame.to_csv(tmp_path / f"{coder}.csv", index=False, lineterminator="\n")
        paths.append(tmp_path / f"{coder}.csv")
    raised = []
    for data in (frames, paths):
        with pytest.raises(irr_audit.SheetError) as error:
            irr_audit.audit_codebook(data, CODEBOOK)
        raised.append((error.value.code, error.value.message))
    assert raised[0] == raised[1] == ("sheet-duplicate-column", "sheet alice.csv has 2 columns named 'severity'.")


def test_no_sheet_is_the_usage_error_audit_gives() -> None:
    import pandas as pd

    rule = ROOT / "rules" / "explicit_current_failure" / "v1.yaml"
    empty_long = pd.DataFrame({"comment_id": [], "coder": [], "variable": [], "code": []})
    for data, code in (({}, "usage-one-sheet"), ([], "usage-no-input"), (empty_long, "usage-one-sheet")):
        with pytest.raises(irr_audit.UsageError) as by_codebook:
            irr_audit.audit_codebook(data, CODEBOOK)
        with pytest.raises(irr_audit.UsageError) as by_rule:
            irr_audit.audit(data, rule)
        assert by_codebook.value.code == by_rule.value.code == code
        assert by_codebook.value.message == by_rule.value.message
    result = run("score", "--codebook", CODEBOOK)
    assert result.exit_code == 2 and "Error [usage-no-input]: nothing to score." in result.stderr
