"""The collector's files as `irr-audit sample` reads them (dataset JSON, JSON Lines or
CSV, run record), the sample folder it writes, and `join --sample` reading it back."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from kit import (
    DATASET,
    DATASET_CSV,
    DATASET_ITEMS,
    DATASET_JSONL,
    RULE,
    RUN_RECORD,
    SAMPLE,
    Case,
    Outcome,
    big_int,
    chain,
    deep_json,
    fifo,
    frozen,
    item,
    run_cli,
    sampled,
    sheet,
    write,
)

WITH_RECORD = SAMPLE + " --run-record run.json"
ANN = sheet("c1,yes", "c2,no", "c3,yes", "c4,no")
BEN = sheet("c1,yes", "c2,no", "c3,no", "c4,no")
JOIN_SAMPLE = "join ann.csv ben.csv --rule rule.yaml --sample s --out out"


def dataset(*items: object) -> str:
    return json.dumps(list(items))


def record(**changes: object) -> str:
    document = json.loads(RUN_RECORD)
    document.update(changes)
    return json.dumps(document)


def record_text(key: str, raw: str) -> str:
    """The run record with one key's value written as raw JSON text (NaN, huge numbers)."""
    return RUN_RECORD.replace(f'"{key}": 4', f'"{key}": {raw}', 1)


def forged_ledger(text: str):
    """A setup: the sample's ledger replaced, and sample.json re-hashed to match (a careful forger)."""

    def setup(folder: Path) -> None:
        sampled()(folder)
        ledger = folder / "s" / "ledger.jsonl"
        ledger.write_text(text, encoding="utf-8")
        summary_path = folder / "s" / "sample.json"
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
        summary["ledger"]["sha256"] = hashlib.sha256(ledger.read_bytes()).hexdigest()
        summary_path.write_text(json.dumps(summary), encoding="utf-8")

    return setup


def edited_summary(change):
    def setup(folder: Path) -> None:
        sampled()(folder)
        summary_path = folder / "s" / "sample.json"
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
        change(summary)
        summary_path.write_text(json.dumps(summary), encoding="utf-8")

    return setup


def xlsx_ids_round_trip(outcome: Outcome) -> None:
    """An id the sample wrote into an XLSX sheet must come back from it as it is in the ledger."""
    if outcome.exit == 2:
        return
    run_cli(outcome.folder, "join s/sheets/ann.xlsx s/sheets/ben.xlsx --rule rule.yaml --sample s --out j")
    summary = json.loads((outcome.folder / "j" / "summary.json").read_text(encoding="utf-8"))
    assert "not_in_sample" not in summary["log_rows"], summary["log_rows"]


CASES = [
    # --- the dataset ----------------------------------------------------------------------------
    Case("sample: a clean dataset", SAMPLE, {"dataset.json": DATASET}),
    Case("sample: JSON Lines", SAMPLE.replace("dataset.json", "dataset.jsonl"), {"dataset.jsonl": DATASET_JSONL}),
    Case("sample: CSV", SAMPLE.replace("dataset.json", "dataset.csv"), {"dataset.csv": DATASET_CSV}),
    Case(
        "sample: a dataset nested 100,000 deep",
        SAMPLE,
        {"dataset.json": "[" + json.dumps(item("c1"))[:-1] + ', "x": ' + deep_json(100_000) + "}]"},
        exit=2,
        says=("dataset.json",),
    ),
    Case(
        "sample: JSON Lines nested 100,000 deep",
        SAMPLE.replace("dataset.json", "d.jsonl"),
        {"d.jsonl": DATASET_JSONL + deep_json(100_000) + "\n"},
        exit=2,
        says=("d.jsonl", "line 5"),
    ),
    Case(
        "sample: an id of 5,000 digits is refused by the digit limit",
        SAMPLE,
        {"dataset.json": dataset(*DATASET_ITEMS[:3]).replace('"c1"', big_int(5000))},
        exit=2,
        code="limit-number-digits",
        says=("dataset.json", "digits"),
    ),
    Case(
        "sample: a count of 5,000 digits in an item",
        SAMPLE,
        {
            "dataset.json": DATASET.replace('"depth"', '"x"').replace(
                '"authorName": "u"', '"authorName": ' + big_int(5000), 1
            )
        },
        exit=2,
        code="limit-number-digits",
        says=("dataset.json", "digits"),
    ),
    Case(
        "sample: NaN and Infinity in items",
        SAMPLE,
        {
            "dataset.json": "["
            + json.dumps(item("c1"))[:-1]
            + ', "depth": NaN}, '
            + json.dumps(item("c2"))[:-1]
            + ', "depth": -Infinity}]'
        },
    ),
    Case(
        "sample: a JSON object instead of an array",
        SAMPLE,
        {"dataset.json": json.dumps(item("c1"))},
        exit=2,
        code="collector-not-an-array",
        says=("dataset.json",),
    ),
    Case(
        "sample: the run record given as the dataset",
        SAMPLE,
        {"dataset.json": RUN_RECORD},
        exit=2,
        code="collector-not-an-array",
        says=("--run-record",),
    ),
    Case("sample: an array of numbers", SAMPLE, {"dataset.json": "[1, 2, 3]"}, exit=2, code="sample-no-units"),
    Case(
        "sample: every item deleted",
        SAMPLE,
        {"dataset.json": dataset(*(item(f"c{i}", "[deleted]") for i in range(3)))},
        exit=2,
        code="sample-no-units",
    ),
    Case("sample: an empty array", SAMPLE, {"dataset.json": "[]"}, exit=2, says=("dataset.json",)),
    Case("sample: an empty file", SAMPLE, {"dataset.json": ""}, exit=2, code="collector-empty", says=("dataset.json",)),
    Case(
        "sample: JSON Lines named .json",
        SAMPLE,
        {"dataset.json": DATASET_JSONL},
        exit=2,
        code="collector-not-json",
        says=("dataset.json", ".jsonl"),
    ),
    Case(
        "sample: a JSON Lines line that is not JSON",
        SAMPLE.replace("dataset.json", "d.jsonl"),
        {"d.jsonl": DATASET_JSONL + "{oops\n"},
        exit=2,
        code="collector-not-json",
        says=("d.jsonl", "line 5"),
    ),
    Case(
        "sample: a CSV quote left open",
        SAMPLE.replace("dataset.json", "d.csv"),
        {"d.csv": DATASET_CSV.replace("Love it.", '"Love it.')},
        exit=2,
        says=("d.csv", "line"),
    ),
    Case(
        "sample: a CSV without the body column",
        SAMPLE.replace("dataset.json", "d.csv"),
        {"d.csv": "commentId,status\nc1,ok\n"},
        exit=2,
        code="collector-missing-column",
        says=("d.csv", "body"),
    ),
    Case(
        "sample: a CSV row wider than its header",
        SAMPLE.replace("dataset.json", "d.csv"),
        {"d.csv": DATASET_CSV + "p1,c9,text,u,ok,,2024,extra\n"},
        exit=2,
        code="collector-malformed",
        says=("d.csv", "row 6"),
    ),
    Case(
        "sample: a text file",
        SAMPLE.replace("dataset.json", "d.txt"),
        {"d.txt": DATASET},
        exit=2,
        code="collector-unsupported-type",
        says=("d.txt",),
    ),
    Case(
        "sample: Latin-1 text",
        SAMPLE,
        {"dataset.json": DATASET.replace("Fine.", "Caf\u00e9.").encode("latin-1")},
        exit=2,
        code="collector-encoding",
        says=("dataset.json",),
    ),
    Case("sample: a BOM", SAMPLE, {"dataset.json": "\ufeff" + DATASET}),
    Case(
        "sample: a named pipe",
        SAMPLE,
        {"dataset.json": None},
        setup=fifo("dataset.json"),
        exit=2,
        code="collector-not-a-file",
        says=("dataset.json", "named pipe"),
        process=True,
    ),
    Case(
        "sample: a missing dataset",
        SAMPLE,
        {"dataset.json": None},
        exit=2,
        code="collector-not-found",
        says=("dataset.json",),
    ),
    Case("sample: an id that is an object", SAMPLE, {"dataset.json": dataset(item({"a": 1}), *DATASET_ITEMS)}),
    Case("sample: an id of one megabyte", SAMPLE, {"dataset.json": dataset(item("c" * 1_000_000), *DATASET_ITEMS)}),
    Case(
        "sample: an id with a leading zero number",
        SAMPLE,
        {"dataset.json": DATASET.replace('"c1"', "007")},
        exit=2,
        code="collector-not-json",
    ),
    Case(
        "sample: ids like formulas in CSV sheets",
        SAMPLE,
        {"dataset.json": dataset(item("=HYPERLINK(1)"), *DATASET_ITEMS)},
        exit=2,
        code="usage-csv-formula-id",
    ),
    Case(
        "sample: ids like formulas in XLSX sheets",
        SAMPLE + " --sheet-format xlsx",
        {"dataset.json": dataset(item("=HYPERLINK(1)"), *DATASET_ITEMS)},
    ),
    Case(
        "sample: an id with a control character in XLSX sheets",
        SAMPLE + " --sheet-format xlsx",
        {"dataset.json": dataset(item("c\x01x"), *DATASET_ITEMS)},
        exit=0,
        shows=("1 missing_id",),
        check=xlsx_ids_round_trip,
    ),
    Case(
        "sample: a body with a terminal escape",
        SAMPLE,
        {"dataset.json": dataset(item("c9", "\x1b]0;pwned\x07\x1b[2J"), *DATASET_ITEMS)},
    ),
    Case(
        "sample: twenty thousand items",
        SAMPLE,
        {"dataset.json": lambda: dataset(*(item(f"c{i}") for i in range(20_000))).encode()},
    ),
    # --- the run record -----------------------------------------------------------------------------
    Case("sample: a run record", WITH_RECORD, {"dataset.json": DATASET, "run.json": RUN_RECORD}),
    Case(
        "sample: a run record nested 100,000 deep",
        WITH_RECORD,
        {"dataset.json": DATASET, "run.json": RUN_RECORD[:-1] + ', "x": ' + deep_json(100_000) + "}"},
        exit=2,
        says=("run.json",),
    ),
    Case(
        "sample: a run record count of 5,000 digits",
        WITH_RECORD,
        {"dataset.json": DATASET, "run.json": record_text("commentsSaved", big_int(5000))},
        exit=2,
        says=("run.json", "digits"),
    ),
    Case(
        "sample: a run record count of NaN",
        WITH_RECORD,
        {"dataset.json": DATASET, "run.json": record_text("commentsSaved", "NaN")},
        exit=2,
        says=("run.json",),
    ),
    Case(
        "sample: a run record count of 1e400",
        WITH_RECORD,
        {"dataset.json": DATASET, "run.json": record_text("commentsSaved", "1e400")},
        exit=2,
        says=("run.json",),
    ),
    Case(
        "sample: a run record count of 10^30",
        WITH_RECORD,
        {"dataset.json": DATASET, "run.json": record_text("commentsSaved", "1" + "0" * 30)},
        exit=2,
        code="run-record-invalid",
        says=("run.json", "commentsSaved"),
    ),
    Case(
        "sample: a negative run record count",
        WITH_RECORD,
        {"dataset.json": DATASET, "run.json": record(commentsSaved=-4)},
        exit=2,
        code="run-record-invalid",
        says=("commentsSaved",),
    ),
    Case(
        "sample: a run record that is an array",
        WITH_RECORD,
        {"dataset.json": DATASET, "run.json": "[]"},
        exit=2,
        code="run-record-not-an-object",
        says=("run.json",),
    ),
    Case(
        "sample: the dataset given as the run record",
        SAMPLE + " --run-record dataset.json",
        {"dataset.json": DATASET},
        exit=2,
        code="run-record-not-an-object",
    ),
    Case(
        "sample: inputResults that is an object",
        WITH_RECORD,
        {"dataset.json": DATASET, "run.json": record(inputResults={"a": 1})},
        exit=2,
        code="run-record-invalid",
        says=("inputResults",),
    ),
    Case(
        "sample: an inputResults entry that is a string",
        WITH_RECORD,
        {"dataset.json": DATASET, "run.json": record(inputResults=["x"])},
        exit=2,
        code="run-record-invalid",
        says=("inputResults[0]",),
    ),
    Case(
        "sample: isComplete as text",
        WITH_RECORD,
        {"dataset.json": DATASET, "run.json": record(isComplete="yes")},
        exit=2,
        code="run-record-invalid",
        says=("isComplete",),
    ),
    Case(
        "sample: a run record that is not JSON",
        WITH_RECORD,
        {"dataset.json": DATASET, "run.json": "OUTPUT"},
        exit=2,
        code="run-record-not-json",
        says=("run.json",),
    ),
    # --- options ----------------------------------------------------------------------------------
    Case("sample: --size 0", SAMPLE + " --size 0 --seed 1", {"dataset.json": DATASET}, exit=2, code="usage-size"),
    Case("sample: --size -5", SAMPLE + " --size -5 --seed 1", {"dataset.json": DATASET}, exit=2, code="usage-size"),
    Case("sample: --size 10^30", SAMPLE + " --size 1" + "0" * 30 + " --seed 1", {"dataset.json": DATASET}),
    Case(
        "sample: --size without --seed",
        SAMPLE + " --size 2",
        {"dataset.json": DATASET},
        exit=2,
        code="usage-size-needs-seed",
    ),
    Case("sample: --seed -1", SAMPLE + " --size 2 --seed -1", {"dataset.json": DATASET}, exit=0, shows=("seed -1",)),
    Case("sample: --seed of 100 digits", SAMPLE + " --size 2 --seed " + big_int(100), {"dataset.json": DATASET}),
    Case(
        "sample: --seed that is not a number",
        SAMPLE + " --size 2 --seed abc",
        {"dataset.json": DATASET},
        exit=2,
        says=("--seed",),
    ),
    Case(
        "sample: --shuffle without --seed",
        SAMPLE + " --shuffle",
        {"dataset.json": DATASET},
        exit=2,
        code="usage-shuffle-needs-seed",
    ),
    Case("sample: one coder", SAMPLE.replace("ann,ben", "ann"), {"dataset.json": DATASET}, exit=2, code="usage-coders"),
    Case(
        "sample: a coder named with a path",
        SAMPLE.replace("ann,ben", "../../pwn,ben"),
        {"dataset.json": DATASET},
        exit=2,
        code="usage-coders",
        check=lambda o: _nothing_outside(o),
    ),
    Case(
        "sample: coders equal but for case",
        SAMPLE.replace("ann,ben", "ann,ANN"),
        {"dataset.json": DATASET},
        exit=2,
        code="usage-coders",
    ),
    Case(
        "sample: a reserved coder name",
        SAMPLE.replace("ann,ben", "ann,comment_id"),
        {"dataset.json": DATASET},
        exit=2,
        code="usage-coders",
    ),
    Case(
        "sample: a coder named like a formula",
        SAMPLE.replace("ann,ben", "ann,=cmd"),
        {"dataset.json": DATASET},
        exit=2,
        code="usage-coders",
    ),
    Case(
        "sample: a coder name of 300 characters",
        SAMPLE.replace("ann,ben", "ann," + "b" * 300),
        {"dataset.json": DATASET},
        exit=2,
        says=("b" * 20,),
    ),
    Case(
        "sample: two hundred coders",
        SAMPLE.replace("ann,ben", ",".join(f"c{i}" for i in range(200))),
        {"dataset.json": DATASET},
    ),
    Case(
        "sample: --sheet-format ods",
        SAMPLE + " --sheet-format ods",
        {"dataset.json": DATASET},
        exit=2,
        says=("--sheet-format",),
    ),
    Case(
        "sample: the rule given as the dataset",
        "sample rule.yaml --rule rule.yaml --coders ann,ben --out s",
        exit=2,
        code="collector-unsupported-type",
    ),
    # --- the output folder ----------------------------------------------------------------------------
    Case(
        "sample: --out naming the dataset",
        SAMPLE.replace("--out s", "--out dataset.json"),
        {"dataset.json": DATASET},
        exit=2,
        says=("dataset.json",),
    ),
    Case(
        "sample: a dataset named like the ledger in --out",
        "sample ledger.csv --rule r/rule.yaml --coders ann,ben --out .",
        {"ledger.csv": DATASET_CSV, "r/rule.yaml": RULE},
        exit=2,
        code="output-overwrites-input",
        says=("ledger.csv",),
    ),
    Case(
        "sample: a dataset named sample.json in --out",
        "sample sample.json --rule r/rule.yaml --coders ann,ben --out .",
        {"sample.json": DATASET, "r/rule.yaml": RULE},
        exit=2,
        code="output-overwrites-input",
        says=("sample.json",),
    ),
    Case(
        "sample: a run record named like the log in --out",
        "sample dataset.json --run-record s/missingness_log.jsonl --rule rule.yaml --coders ann,ben --out s",
        {"dataset.json": DATASET, "s/missingness_log.jsonl": RUN_RECORD},
        exit=2,
        says=("missingness_log.jsonl",),
    ),
    Case(
        "sample: --out over a filled sheet",
        SAMPLE,
        {"dataset.json": DATASET},
        setup=chain(sampled(), write("s/sheets/ann.csv", ANN)),
        exit=2,
        code="output-sample-exists",
        says=("ann.csv",),
    ),
    Case(
        "sample: --force over a filled sheet",
        SAMPLE + " --force",
        {"dataset.json": DATASET},
        setup=chain(sampled(), write("s/sheets/ann.csv", ANN)),
        changes=("s/*",),
    ),
    Case(
        "sample: --out inside a bundle",
        SAMPLE.replace("--out s", "--out {bundle}/s"),
        {"dataset.json": DATASET},
        setup=frozen,
        exit=2,
        says=("--out",),
    ),
    # --- join --sample: the sample folder read back ---------------------------------------------------
    Case("join --sample: the sample's units", JOIN_SAMPLE, {"ann.csv": ANN, "ben.csv": BEN}, setup=sampled()),
    Case(
        "join --sample: a row not in the sample is logged",
        JOIN_SAMPLE,
        {"ann.csv": ANN + "c99,yes\n", "ben.csv": BEN},
        setup=sampled(),
    ),
    Case(
        "join --sample: --out the sample folder",
        JOIN_SAMPLE.replace("--out out", "--out s"),
        {"ann.csv": ANN, "ben.csv": BEN},
        setup=sampled(),
        exit=2,
        says=("s",),
    ),
    Case(
        "join --sample: not a sample folder",
        JOIN_SAMPLE.replace("--sample s", "--sample ."),
        {"ann.csv": ANN, "ben.csv": BEN},
        exit=2,
        code="usage-not-a-sample-dir",
    ),
    Case(
        "join --sample: the ledger changed",
        JOIN_SAMPLE,
        {"ann.csv": ANN, "ben.csv": BEN},
        setup=chain(sampled(), write("s/ledger.jsonl", "{}\n")),
        exit=2,
        code="sample-ledger-changed",
    ),
    Case(
        "join --sample: a forged ledger with a line that is not JSON",
        JOIN_SAMPLE,
        {"ann.csv": ANN, "ben.csv": BEN},
        setup=forged_ledger('{"comment_id": "c1"}\nnot json\n'),
        exit=2,
        says=("ledger.jsonl", "line 2"),
    ),
    Case(
        "join --sample: a forged ledger nested 100,000 deep",
        JOIN_SAMPLE,
        {"ann.csv": ANN, "ben.csv": BEN},
        setup=forged_ledger(deep_json(100_000) + "\n"),
        exit=2,
        says=("ledger.jsonl",),
    ),
    Case(
        "join --sample: sample.json nested 100,000 deep",
        JOIN_SAMPLE,
        {"ann.csv": ANN, "ben.csv": BEN},
        setup=chain(sampled(), write("s/sample.json", deep_json(100_000))),
        exit=2,
        says=("sample.json",),
    ),
    Case(
        "join --sample: sample.json naming a ledger outside the folder",
        JOIN_SAMPLE,
        {"ann.csv": ANN, "ben.csv": BEN},
        setup=edited_summary(lambda summary: summary["ledger"].update(file="/etc/passwd")),
        exit=2,
    ),
    Case(
        "join --sample: sample.json naming /dev/zero as its ledger",
        JOIN_SAMPLE,
        {"ann.csv": ANN, "ben.csv": BEN},
        setup=edited_summary(lambda summary: summary["ledger"].update(file="/dev/zero")),
        exit=2,
        says=("sample.json",),
        process=True,
        memory_mb=768,
        seconds=30,
    ),
    Case(
        "join --sample: sample ids that are numbers",
        JOIN_SAMPLE,
        {"ann.csv": ANN, "ben.csv": BEN},
        setup=edited_summary(lambda summary: summary["ledger"].update(sample_ids=[1e400])),
        exit=2,
        says=("sample.json",),
    ),
    Case(
        "join --sample: a sample drawn for another rule",
        JOIN_SAMPLE.replace("rule.yaml", "other.yaml"),
        {"ann.csv": ANN, "ben.csv": BEN, "other.yaml": "rule: other\nversion: 1\nscale: nominal\ncodes: [yes, no]\n"},
        setup=sampled(),
        exit=2,
        code="usage-sample-rule",
    ),
]


def _nothing_outside(outcome: Outcome) -> None:
    assert not (outcome.folder.parent / "pwn.csv").exists()
    assert not (outcome.folder.parent.parent / "pwn.csv").exists()
