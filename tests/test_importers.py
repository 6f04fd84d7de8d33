"""`irr-audit import`: each tool's documented export (tests/fixtures/importers/, each folder's
README cites the page) -> one coding sheet per annotator and an import log that accounts for
every record and every annotation; then join and score on the sheets."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import irr_audit
from irr_audit.cli import app
from irr_audit.cli.imports import ExportFormat
from irr_audit.errors import IrrAuditError
from irr_audit.importers.build import build_import, coder_names
from irr_audit.importers.formats import FORMATS
from irr_audit.importers.model import Annotation, ImportOptions, ParsedExport, Reason
from irr_audit.importers.run import read_exports
from irr_audit.rules.load import load_rule

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "importers"
RULE = ROOT / "rules" / "explicit_current_failure" / "v1.yaml"


def rows(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))


def run_import(tmp_path: Path, fmt: str, *exports: Path, extra: tuple[str, ...] = (), out: str = "imported") -> Path:
    folder = tmp_path / out
    result = CliRunner().invoke(
        app, ["import", fmt, *map(str, exports), "--rule", str(RULE), "--out", str(folder), "-q", *extra]
    )
    assert result.exit_code == 0, result.output
    return folder


def outcomes(folder: Path) -> dict[tuple[str, str], list[str]]:
    """(unit id, annotator) -> the outcomes of its annotations, in file order."""
    found: dict[tuple[str, str], list[str]] = {}
    for row in rows(folder / "import_log.csv"):
        found.setdefault((row["unit_id"], row["annotator"]), []).append(row["outcome"])
    return found


def sheet(folder: Path, coder: str) -> dict[str, str]:
    return {row["comment_id"]: row["code"] for row in rows(folder / "sheets" / f"{coder}.csv")}


def test_the_command_offers_exactly_the_library_formats() -> None:
    assert [choice.value for choice in ExportFormat] == list(FORMATS)


# --- Label Studio -----------------------------------------------------------------------------


def test_label_studio_json_export(tmp_path: Path) -> None:
    folder = run_import(
        tmp_path, "label-studio", FIXTURES / "label_studio" / "export.json", extra=("--question", "failure")
    )
    alice, bob = "alice@example.org", "bob@example.org"
    assert sheet(folder, "alice_example.org") == {"c1": "yes", "c2": "no", "c3": "yes", "c4": "no", "c5": "yes"}
    assert sheet(folder, "bob_example.org") == {
        "c1": "yes",
        "c2": "no",
        "c3": "no",
        "c5": "yes",
        "c6": "no",
        "c9": "unknown",
    }
    log = outcomes(folder)
    assert log[("c4", bob)] == ["skipped"]
    assert log[("c5", alice)] == ["superseded", "coded"]  # the later annotation (2 May) is kept
    assert log[("c6", alice)] == ["several_labels"]
    assert log[("c7", "")] == ["not_annotated"]
    assert log[("", alice)] == ["missing_id"]
    assert log[("c9", alice)] == ["unknown_label"]
    assert log[("c9", bob)] == ["coded"]  # "unknown" is a missing code of the rule: join logs it
    texts = {row["comment_id"]: row["body"] for row in rows(folder / "sheets" / "alice_example.org.csv")}
    assert texts["c3"] == "Ça plante depuis la mise à jour 🙁 — 更新后一直崩溃"
    summary = json.loads((folder / "import.json").read_text(encoding="utf-8"))
    export = FIXTURES / "label_studio" / "export.json"
    import hashlib

    assert summary["exports"][0]["sha256"] == hashlib.sha256(export.read_bytes()).hexdigest()
    assert summary["question"] == "failure" and summary["records"] == 9
    assert summary["units"] == {"in_export": 8, "in_sheets": 7, "only_in_log": 1, "records_without_id": 1}


def test_label_studio_needs_the_question_when_it_has_several(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        [
            "import",
            "label-studio",
            str(FIXTURES / "label_studio" / "export.json"),
            "--rule",
            str(RULE),
            "--out",
            str(tmp_path / "o"),
        ],
    )
    assert result.exit_code == 2
    assert "[import-question]" in result.output and "failure, sentiment" in result.output
    assert not (tmp_path / "o").exists()


def test_label_studio_min_and_csv_exports_agree(tmp_path: Path) -> None:
    json_min = run_import(
        tmp_path,
        "label-studio-min",
        FIXTURES / "label_studio" / "export_min.json",
        extra=("--question", "failure"),
        out="min",
    )
    as_csv = run_import(
        tmp_path,
        "label-studio-csv",
        FIXTURES / "label_studio" / "export.csv",
        extra=("--question", "failure"),
        out="csv",
    )
    assert outcomes(json_min) == outcomes(as_csv)
    assert sheet(json_min, "user-1") == sheet(as_csv, "user-1") == {"c1": "yes", "c3": "yes"}
    assert outcomes(json_min)[("c4", "user-2")] == ["no_label"]
    assert outcomes(json_min)[("c6", "user-1")] == ["several_labels"]
    assert outcomes(json_min)[("c7", "")] == ["not_annotated"]


def test_label_studio_min_without_question_is_refused() -> None:
    with pytest.raises(IrrAuditError, match="JSON-MIN or CSV export") as caught:
        read_exports("label-studio-min", [FIXTURES / "label_studio" / "export_min.json"], ImportOptions())
    assert caught.value.code == "import-question" and "--question" in (caught.value.hint or "")


REPEATED_KEYS = {  # json.loads would keep the last value: "no", logged as coded
    "model": (
        "m.jsonl",
        '{"comment_id": "c", "model": "m", "label": "no"}\n'
        '{"comment_id": "a", "model": "m", "label": "yes", "label": "no"}',
        "export m.jsonl line 2 gives the key 'label' twice.",
    ),
    "label-studio": (
        "ls.json",
        json.dumps([{"data": {"comment_id": "a"}, "annotations": [{"completed_by": 1, "result": [{}]}]}]).replace(
            "{}", '{"from_name": "failure", "type": "choices", "value": {"choices": ["yes"], "choices": ["no"]}}'
        ),
        "export ls.json record 1 gives the key 'choices' twice (in annotations[0].result[0].value).",
    ),
    "label-studio-csv": (
        "ls.csv",
        'id,comment_id,annotator,failure\n1,a,1,"{""choices"": [""yes""], ""choices"": [""no""]}"\n',
        "export ls.csv row 2 (column failure) gives the key 'choices' twice.",
    ),
}


@pytest.mark.parametrize("fmt", REPEATED_KEYS)
def test_a_key_given_twice_in_an_export_is_refused_naming_the_record(tmp_path: Path, fmt: str) -> None:
    name, content, message = REPEATED_KEYS[fmt]
    (tmp_path / name).write_text(content, encoding="utf-8")
    with pytest.raises(IrrAuditError) as refused:
        read_exports(fmt, [tmp_path / name], ImportOptions(question="failure"))
    assert refused.value.code == "import-duplicate-key"
    assert refused.value.message == f"export {tmp_path / name}" + message.removeprefix(f"export {name}")
    assert "a JSON object has one value per key" in (refused.value.hint or "")


# --- Prodigy, doccano, Argilla, a model --------------------------------------------------------


def test_prodigy_answers_and_repeats(tmp_path: Path) -> None:
    folder = run_import(tmp_path, "prodigy", FIXTURES / "prodigy" / "failures.jsonl")
    log = outcomes(folder)
    assert log[("c4", "failures-bob")] == ["ignored"]
    assert log[("c4", "failures-alice")] == ["rejected"]
    assert log[("c5", "failures-alice")] == ["conflict", "conflict"]  # no _timestamp: no code is guessed
    assert log[("c6", "failures-bob")] == ["several_labels"]
    assert log[("", "failures-alice")] == ["missing_id"]
    assert sheet(folder, "failures-alice") == {"c1": "yes", "c3": "yes", "c8": "yes"}  # c8: a binary task
    assert sheet(folder, "failures-bob") == {"c1": "yes", "c3": "no", "c8": "yes"}


def test_prodigy_hash_as_id_only_when_asked(tmp_path: Path) -> None:
    folder = run_import(
        tmp_path, "prodigy", FIXTURES / "prodigy" / "failures.jsonl", extra=("--id-field", "_input_hash")
    )
    assert set(sheet(folder, "failures-alice")) == {"1001", "1003", "1008", "1009"}


def test_doccano_one_file_per_user(tmp_path: Path) -> None:
    folder = run_import(tmp_path, "doccano", FIXTURES / "doccano" / "alice.jsonl", FIXTURES / "doccano" / "bob.jsonl")
    assert sheet(folder, "alice") == {"c1": "yes", "c2": "no", "c3": "yes"}
    assert sheet(folder, "bob") == {"c1": "yes", "c2": "yes", "c3": "no", "c4": "no", "c6": "no"}
    assert outcomes(folder)[("c4", "alice")] == ["not_annotated"]
    assert outcomes(folder)[("c6", "alice")] == ["several_labels"]
    summary = json.loads((folder / "import.json").read_text(encoding="utf-8"))
    assert [Path(export["path"]).name for export in summary["exports"]] == ["alice.jsonl", "bob.jsonl"]


@pytest.mark.parametrize(("first", "second"), [("ann/all.jsonl", "ben/all.jsonl"), ("alice.jsonl", "Alice.v2.jsonl")])
def test_doccano_files_naming_one_user_are_refused(tmp_path: Path, first: str, second: str) -> None:
    """Two users' exports unzipped into folders of their own keep one file name: imported as
    they were, their codes became one coder's, their disagreements that coder's conflicts."""
    for name in (first, second):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes((FIXTURES / "doccano" / "alice.jsonl").read_bytes())
    with pytest.raises(IrrAuditError) as refused:
        read_exports("doccano", [tmp_path / first, tmp_path / second], ImportOptions())
    assert refused.value.code == "import-annotator-names"
    assert "both name the annotator" in refused.value.message and "name each user's export file" in str(
        refused.value.hint
    )


def test_argilla_responses_both_shapes(tmp_path: Path) -> None:
    v1 = run_import(tmp_path, "argilla", FIXTURES / "argilla" / "records.json", out="v1")
    alice, bob = "7f3c9a52-0000-4000-8000-00000000a11c", "7f3c9a52-0000-4000-8000-000000000b0b"
    log = outcomes(v1)
    assert log[("c4", bob)] == ["discarded"]
    assert log[("c5", alice)] == ["draft"]
    assert log[("c5", bob)] == ["several_labels"]
    assert log[("c7", "")] == ["not_annotated"]
    assert sheet(v1, alice) == {"c1": "yes", "c3": "yes", "c4": "no"}
    v2 = run_import(tmp_path, "argilla", FIXTURES / "argilla" / "records_v2.jsonl", out="v2")
    assert sheet(v2, "ann") == {"c1": "yes", "c2": "no"} and sheet(v2, "ben") == {"c1": "no"}
    assert outcomes(v2)[("c2", "ben")] == ["draft"]


def test_model_labels_with_confidence(tmp_path: Path) -> None:
    folder = run_import(tmp_path, "model", FIXTURES / "model" / "labels.jsonl")
    found = rows(folder / "sheets" / "gpt-4o-mini.csv")
    assert [(row["comment_id"], row["code"], row["confidence"]) for row in found] == [
        ("c1", "yes", "0.97"),
        ("c2", "no", "0.88"),
        ("c3", "yes", "0.61"),
        ("c4", "no", "0.93"),
    ]
    assert outcomes(folder)[("c6", "gpt-4o-mini")] == ["unknown_label"]


# --- what every import keeps -------------------------------------------------------------------

EVERY_FIXTURE = [
    ("label-studio", ["label_studio/export.json"], "failure"),
    ("label-studio-min", ["label_studio/export_min.json"], "failure"),
    ("label-studio-csv", ["label_studio/export.csv"], "failure"),
    ("prodigy", ["prodigy/failures.jsonl"], None),
    ("doccano", ["doccano/alice.jsonl", "doccano/bob.jsonl"], None),
    ("argilla", ["argilla/records.json"], None),
    ("argilla", ["argilla/records_v2.jsonl"], None),
    ("model", ["model/labels.jsonl"], None),
]


@pytest.mark.parametrize(("fmt", "files", "question"), EVERY_FIXTURE)
def test_units_are_conserved_from_export_to_sheets_and_log(fmt: str, files: list[str], question: str | None) -> None:
    """Every record is in the log; every annotation is one log row; the coded rows are the sheets' rows."""
    options = ImportOptions(question=question)
    parsed, _ = read_exports(fmt, [FIXTURES / name for name in files], options)
    result = build_import(parsed, load_rule(RULE), options)
    places = {(row["source"], row["record"].split(" (")[0]) for row in result.log}
    assert len(places) == sum(export.records for export in parsed)
    assert len(result.log) == sum(len(export.annotations) for export in parsed)
    coded = sorted((row["coder"], row["unit_id"]) for row in result.log if row["outcome"] == "coded")
    in_sheets = sorted((coder, row.comment_id) for coder, sheet_rows in result.sheets.items() for row in sheet_rows)
    assert coded == in_sheets and len(set(in_sheets)) == len(in_sheets)
    assert result.units()["in_export"] == result.units()["in_sheets"] + result.units()["only_in_log"]


annotations = st.lists(
    st.builds(
        Annotation,
        record=st.sampled_from(["line 1", "line 2", "line 3"]),
        unit_id=st.one_of(st.none(), st.sampled_from(["u1", "u2", "u3", " u1"])),
        annotator=st.one_of(st.none(), st.sampled_from(["ann", "ben", "Ann"])),
        labels=st.lists(st.sampled_from(["yes", "no", "Y", "maybe", "unknown", ""]), max_size=3).map(tuple),
        outcome=st.sampled_from([None, None, None, Reason.SKIPPED, Reason.REJECTED]),
        when=st.one_of(st.none(), st.sampled_from(["2024-01-01T00:00:00.000000Z", "2024-01-02T00:00:00.000000Z"])),
    ),
    max_size=25,
)


@settings(max_examples=200, deadline=None)
@given(annotations)
def test_every_annotation_is_one_log_row_and_a_sheet_has_one_code_per_unit(found: list[Annotation]) -> None:
    names = {annotation.annotator for annotation in found if annotation.annotator}
    if {"ann", "Ann"} <= names:
        with pytest.raises(IrrAuditError) as caught:
            build_import([ParsedExport("model", tuple(found), len(found))], load_rule(RULE))
        assert caught.value.code == "import-annotator-names"
        return
    result = build_import([ParsedExport("model", tuple(found), len(found))], load_rule(RULE))
    assert len(result.log) == len(found)
    assert sum(result.outcomes.values()) == len(found)
    for coder, sheet_rows in result.sheets.items():
        ids = [row.comment_id.strip() for row in sheet_rows]
        assert len(ids) == len(set(ids)), coder
    coded = [row for row in result.log if row["outcome"] == "coded"]
    assert len(coded) == sum(len(sheet_rows) for sheet_rows in result.sheets.values())
    assert all(row["code"] in ("yes", "no", "unknown") for row in coded)


def test_same_code_twice_without_times_keeps_the_first() -> None:
    twice = [Annotation("line 1", "u1", "ann", ("yes",)), Annotation("line 2", "u1", "ann", ("Y",))]
    result = build_import([ParsedExport("model", tuple(twice), 2)], load_rule(RULE))
    assert [row["outcome"] for row in result.log] == ["coded", "duplicate"]
    assert [row.code for row in result.sheets["ann"]] == ["yes"]


def test_ids_that_join_would_match_are_one_unit() -> None:
    """join trims the spaces around an id: " u1" and "u1" are one unit, so two codes for them conflict."""
    twice = [Annotation("line 1", "u1", "ann", ("yes",)), Annotation("line 2", " u1", "ann", ("no",))]
    result = build_import([ParsedExport("model", tuple(twice), 2)], load_rule(RULE))
    assert [row["outcome"] for row in result.log] == ["conflict", "conflict"]
    assert result.sheets == {}


def test_annotator_names_become_sheet_names() -> None:
    assert coder_names(["alice@example.org", ".hidden", "comment_id", "Zoë"]) == {
        "alice@example.org": "alice_example.org",
        ".hidden": "_.hidden",
        "comment_id": "comment_id_",
        "Zoë": "Zoë",
    }
    with pytest.raises(IrrAuditError) as caught:
        coder_names(["a@b", "a_b"])
    assert caught.value.code == "import-annotator-names"


# --- the output folder ----------------------------------------------------------------------------


def test_the_folder_is_one_run_and_others_files_are_refused(tmp_path: Path) -> None:
    export = FIXTURES / "model" / "labels.jsonl"
    folder = run_import(tmp_path, "model", export)
    first = (folder / "import.json").read_bytes()
    run_import(tmp_path, "model", export)  # a previous import's folder is replaced
    assert (folder / "import.json").read_bytes() == first
    (folder / "notes.txt").write_text("mine", encoding="utf-8")
    args = ["import", "model", str(export), "--rule", str(RULE), "--out", str(folder)]
    refused = CliRunner().invoke(app, args)
    assert refused.exit_code == 2 and "notes.txt" in refused.output
    assert CliRunner().invoke(app, [*args, "--force", "-q"]).exit_code == 0
    assert not (folder / "notes.txt").exists()


def test_an_output_over_the_export_is_refused(tmp_path: Path) -> None:
    export = tmp_path / "exports" / "labels.jsonl"
    export.parent.mkdir()
    export.write_bytes((FIXTURES / "model" / "labels.jsonl").read_bytes())
    result = CliRunner().invoke(app, ["import", "model", str(export), "--rule", str(RULE), "--out", str(export.parent)])
    assert result.exit_code == 2 and "output-overwrites-input" in result.output
    assert export.read_bytes() == (FIXTURES / "model" / "labels.jsonl").read_bytes()


# --- import -> join -> score ------------------------------------------------------------------------


def test_label_studio_import_join_score_by_hand(tmp_path: Path) -> None:
    """The Label Studio fixture, imported, joined and scored.

    Sheets (from the log above): alice c1 yes, c2 no, c3 yes, c4 no, c5 yes (her later
    annotation); bob c1 yes, c2 no, c3 no, c5 yes, c6 no, c9 unknown. Units: c1-c6 and c9
    (7). Fully coded: c1, c2, c3, c5 (c4: bob skipped; c6: alice gave two labels; c9:
    alice's label is not in the rule, bob's is the missing code). Pairs (alice, bob):
    (yes, yes), (no, no), (yes, no), (yes, yes).
    po = 3/4 = 0.75; alice's marginals yes 3/4, no 1/4; bob's yes 2/4, no 2/4;
    pe = 3/4 * 2/4 + 1/4 * 2/4 = 0.5; kappa = (0.75 - 0.5) / (1 - 0.5) = 0.5.
    """
    folder = run_import(
        tmp_path, "label-studio", FIXTURES / "label_studio" / "export.json", extra=("--question", "failure")
    )
    sheets = sorted((folder / "sheets").glob("*.csv"))
    result = irr_audit.audit(sheets, RULE)
    assert result.units["total"] == 7 and result.units["fully_coded"] == 4
    metrics = result.metrics
    assert float(metrics.loc["po", "value"]) == 0.75
    assert float(metrics.loc["pe", "value"]) == 0.5
    assert float(metrics.loc["cohen_kappa", "value"]) == 0.5
    joined = CliRunner().invoke(
        app, ["join", *map(str, sheets), "--rule", str(RULE), "--out", str(tmp_path / "join"), "-q"]
    )
    assert joined.exit_code == 0, joined.output
    scored = CliRunner().invoke(app, ["score", str(tmp_path / "join"), "--format", "json", "-q"])
    assert json.loads(scored.stdout)["metrics"]["cohen_kappa"]["value"] == 0.5


def test_a_model_against_people(tmp_path: Path) -> None:
    """doccano's alice and bob against the model's labels.

    Humans' consensus (a majority of two, ties undecided): c1 yes/yes -> yes; c2 no/yes and
    c3 yes/no are ties; c4 and c6 have only bob's code. So one unit is decided, c1, and the
    model says yes there: po = 1 on n = 1, and kappa is undefined (one unit).
    """
    people = run_import(
        tmp_path, "doccano", FIXTURES / "doccano" / "alice.jsonl", FIXTURES / "doccano" / "bob.jsonl", out="people"
    )
    model = run_import(tmp_path, "model", FIXTURES / "model" / "labels.jsonl", out="model")
    sheets = [people / "sheets" / "alice.csv", people / "sheets" / "bob.csv", model / "sheets" / "gpt-4o-mini.csv"]
    result = irr_audit.audit(sheets, RULE, group="humans=alice,bob", against="gpt-4o-mini")
    comparison = result.to_dict()["group_comparison"]["against_reference"]
    assert comparison["metrics"]["po"]["value"] == 1.0
    assert comparison["metrics"]["cohen_kappa"]["defined"] is False


def test_the_api_imports_as_the_command_does(tmp_path: Path) -> None:
    run = irr_audit.import_export("model", FIXTURES / "model" / "labels.jsonl", RULE, tmp_path / "api")
    cli = run_import(tmp_path, "model", FIXTURES / "model" / "labels.jsonl", out="cli")
    assert (tmp_path / "api" / "sheets" / "gpt-4o-mini.csv").read_bytes() == (
        cli / "sheets" / "gpt-4o-mini.csv"
    ).read_bytes()
    assert run.result.outcomes == {"coded": 4, "unknown_label": 1}


@pytest.mark.parametrize(
    ("fmt", "record", "shown"),
    [
        ("prodigy", {"meta": {"comment_id": "c1"}, "answer": ["accept"], "accept": ["yes"]}, "['accept']"),
        ("prodigy", {"meta": {"comment_id": "c1"}, "answer": {"a": "accept"}}, "{'a': 'accept'}"),
        (
            "argilla",
            {
                "fields": {"comment_id": "c1"},
                "responses": {"failure": [{"value": "yes", "status": {"s": "submitted"}}]},
            },
            "{'s': 'submitted'}",
        ),
        (
            "argilla",
            {
                "fields": {"comment_id": "c1"},
                "responses": [{"values": {"failure": {"value": "yes"}}, "status": ["draft"]}],
            },
            "['draft']",
        ),
    ],
)
def test_a_list_or_object_where_a_word_belongs_is_refused(
    tmp_path: Path, fmt: str, record: dict[str, object], shown: str
) -> None:
    """`answer` and `status` are looked up among the tool's words: a list or object (unhashable)
    was an internal error (exit 70), not the export named and refused."""
    export = tmp_path / "export.jsonl"
    export.write_text(json.dumps(record) + "\n", encoding="utf-8")

    result = CliRunner().invoke(app, ["import", fmt, str(export), "--rule", str(RULE), "--out", str(tmp_path / "o")])

    assert result.exit_code == 2, result.output
    assert "Error [import-invalid]" in result.stderr and "export.jsonl line 1" in result.stderr
    assert shown in result.stderr
