"""Exports of annotation tools (`irr-audit import`): files that are not what they claim,
that nest or grow past the limits, that name annotators or ids to attack a terminal,
a spreadsheet or a file name, and outputs that would land on the export."""

from __future__ import annotations

import json

from kit import Case, Outcome, big_int, deep_json, fifo, folder_of, has_file, link

LS = "import label-studio export.json --rule rule.yaml --out imported"
PRODIGY = "import prodigy export.jsonl --rule rule.yaml --out imported"
MODEL = "import model labels.jsonl --rule rule.yaml --out imported"


def task(comment_id: object = "a", annotator: object = 1, *choices: str, **more: object) -> dict:
    """A Label Studio task with one annotation of the question `q`."""
    result = [{"from_name": "q", "to_name": "text", "type": "choices", "value": {"choices": list(choices or ["yes"])}}]
    return {
        "id": 1,
        "data": {"comment_id": comment_id, "text": "It crashes."},
        "annotations": [{"id": 1, "completed_by": annotator, "was_cancelled": False, "result": result}],
        **more,
    }


def ls(*tasks: dict) -> str:
    return json.dumps(list(tasks), ensure_ascii=False)


def lines(*records: dict) -> str:
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)


def prodigy(comment_id: object = "a", annotator: str = "ds-alice", **more: object) -> dict:
    return {
        "text": "It crashes.",
        "meta": {"comment_id": comment_id},
        "label": "yes",
        "answer": "accept",
        "_annotator_id": annotator,
        "_session_id": annotator,
        **more,
    }


def logged(outcome_name: str, count: int = 1):
    """A check: the import log holds ``count`` rows with this outcome."""

    def check(outcome: Outcome) -> None:
        if outcome.exit != 0:
            return
        log = (outcome.folder / "imported" / "import_log.jsonl").read_text(encoding="utf-8")
        found = [json.loads(line)["outcome"] for line in log.splitlines()]
        assert found.count(outcome_name) == count, found

    return check


CASES = [
    # --- files that are not an export of the format ---------------------------------------------
    Case(
        "import: label studio export that is not JSON",
        LS,
        {"export.json": "{tasks: 1"},
        exit=2,
        code="import-invalid",
        says=("export.json", "not valid JSON"),
    ),
    Case(
        "import: label studio export that is one object",
        LS,
        {"export.json": '{"data": {}}'},
        exit=2,
        code="import-invalid",
        says=("export.json", "list of tasks"),
    ),
    Case(
        "import: label studio task without data",
        LS,
        {"export.json": ls(task(), {"id": 2})},
        exit=2,
        code="import-invalid",
        says=("export.json", "record 2", "data"),
    ),
    Case(
        "import: label studio annotations not a list",
        LS,
        {"export.json": ls({"data": {"comment_id": "a"}, "annotations": {"id": 1}})},
        exit=2,
        code="import-invalid",
        says=("export.json", "record 1", "annotations"),
    ),
    Case(
        "import: label studio question of another type",
        LS + " --question q",
        {
            "export.json": ls(
                {
                    "data": {"comment_id": "a"},
                    "annotations": [
                        {"completed_by": 1, "result": [{"from_name": "q", "type": "rating", "value": {"rating": 3}}]}
                    ],
                }
            )
        },
        exit=2,
        code="import-question",
        says=("rating", "choices"),
    ),
    Case(
        "import: label studio export holding no choices",
        LS,
        {"export.json": ls({"data": {"comment_id": "a"}, "annotations": []})},
        exit=2,
        code="import-question",
        says=("export.json", "--question"),
    ),
    Case(
        "import: json-min without --question",
        "import label-studio-min export.json --rule rule.yaml --out imported",
        {"export.json": '[{"comment_id": "a", "q": "yes", "annotator": 1}]'},
        exit=2,
        code="import-question",
        says=("export.json", "--question"),
    ),
    Case(
        "import: an empty label studio file",
        LS,
        {"export.json": ""},
        exit=2,
        code="import-invalid",
        says=("export.json",),
    ),
    Case(
        "import: not UTF-8",
        PRODIGY,
        {"export.jsonl": b'{"text": "\xff\xfe"}\n'},
        exit=2,
        code="import-invalid",
        says=("export.jsonl", "UTF-8"),
    ),
    Case(
        "import: a prodigy line that is not JSON",
        PRODIGY,
        {"export.jsonl": lines(prodigy()) + "{oops\n"},
        exit=2,
        code="import-invalid",
        says=("export.jsonl", "line 2"),
    ),
    Case(
        "import: a prodigy line that is a list",
        PRODIGY,
        {"export.jsonl": lines(prodigy()) + "[1, 2]\n"},
        exit=2,
        code="import-invalid",
        says=("export.jsonl", "line 2", "object"),
    ),
    Case(
        "import: a prodigy answer prodigy does not give",
        PRODIGY,
        {"export.jsonl": lines(prodigy(), prodigy(answer="maybe"))},
        exit=2,
        code="import-invalid",
        says=("export.jsonl", "line 2", "accept, reject or ignore"),
    ),
    Case(
        "import: doccano span labels",
        "import doccano alice.jsonl --rule rule.yaml --out imported",
        {"alice.jsonl": '{"text": "It crashes.", "comment_id": "a", "label": [[0, 2, "yes"]]}\n'},
        exit=2,
        code="import-invalid",
        says=("alice.jsonl", "line 1", "span"),
    ),
    Case(
        "import: argilla response status unknown",
        "import argilla r.json --rule rule.yaml --out imported",
        {
            "r.json": '[{"metadata": {"comment_id": "a"}, "responses": [{"user_id": "u", "status": "pending",'
            ' "values": {"q": {"value": "yes"}}}]}]'
        },
        exit=2,
        code="import-invalid",
        says=("r.json", "record 1", "pending"),
    ),
    Case(
        "import: model confidence above 1",
        MODEL,
        {"labels.jsonl": lines({"comment_id": "a", "model": "m", "label": "yes", "confidence": 1.5})},
        exit=2,
        code="import-invalid",
        says=("labels.jsonl", "line 1", "confidence"),
    ),
    Case(
        "import: model confidence NaN",
        MODEL,
        {"labels.jsonl": '{"comment_id": "a", "model": "m", "label": "yes", "confidence": NaN}\n'},
        exit=2,
        code="import-invalid",
        says=("labels.jsonl", "line 1"),
    ),
    Case(
        "import: a format irr-audit does not know",
        "import labelbox export.json --rule rule.yaml --out imported",
        {"export.json": "[]"},
        exit=2,
        says=("labelbox",),
    ),
    # --- limits ---------------------------------------------------------------------------------
    Case(
        "import: label studio export 10,000 levels deep",
        LS,
        {"export.json": deep_json(10_000)},
        exit=2,
        code="limit-depth",
        says=("export.json", "depth"),
    ),
    Case(
        "import: a prodigy line 10,000 levels deep",
        PRODIGY,
        {"export.jsonl": lines(prodigy()) + deep_json(10_000) + "\n"},
        exit=2,
        code="limit-depth",
        says=("export.jsonl", "line 2"),
    ),
    Case(
        "import: an id of 5,000 digits",
        PRODIGY,
        {
            "export.jsonl": '{"meta": {"comment_id": ' + big_int(5000) + '}, "label": "yes", "answer": "accept", '
            '"_annotator_id": "x"}\n'
        },
        exit=2,
        code="limit-number-digits",
        says=("export.jsonl",),
    ),
    Case(
        "import: an export over --limit file_bytes",
        PRODIGY + " --limit file_bytes=100",
        {"export.jsonl": lines(*(prodigy(str(i)) for i in range(10)))},
        exit=2,
        code="limit-file-bytes",
        says=("export.jsonl", "file_bytes"),
    ),
    Case(
        "import: a line over --limit line_bytes",
        PRODIGY + " --limit line_bytes=64",
        {"export.jsonl": lines(prodigy())},
        exit=2,
        code="limit-line-bytes",
        says=("export.jsonl", "line 1"),
    ),
    Case(
        "import: more annotators than --limit columns",
        MODEL + " --limit columns=3",
        {"labels.jsonl": lines(*({"comment_id": "a", "model": f"m{i}", "label": "yes"} for i in range(5)))},
        exit=2,
        code="limit-columns",
        says=("annotators", "columns"),
    ),
    # --- the export as a path ---------------------------------------------------------------------
    Case("import: the export does not exist", LS, exit=2, code="import-not-found", says=("export.json",)),
    Case(
        "import: the export is a folder",
        LS,
        setup=folder_of("export.json"),
        exit=2,
        code="import-not-a-file",
        says=("export.json",),
    ),
    Case(
        "import: the export is a named pipe",
        LS,
        setup=fifo("export.json"),
        exit=2,
        code="import-not-a-file",
        says=("export.json",),
    ),
    Case(
        "import: the export is a symlink to /dev/zero",
        LS,
        setup=link("export.json", "/dev/zero"),
        exit=2,
        says=("export.json",),
    ),
    # --- outputs ------------------------------------------------------------------------------------
    Case(
        "import: --out is the folder holding the export",
        "import model in/labels.jsonl --rule rule.yaml --out in",
        {"in/labels.jsonl": lines({"comment_id": "a", "model": "m", "label": "yes"})},
        exit=2,
        code="output-overwrites-input",
        says=("in",),
    ),
    Case(
        "import: --out is the export itself",
        "import model labels.jsonl --rule rule.yaml --out labels.jsonl",
        {"labels.jsonl": lines({"comment_id": "a", "model": "m", "label": "yes"})},
        exit=2,
        says=("labels.jsonl",),
    ),
    Case(
        "import: --out holds the rule",
        "import model labels.jsonl --rule conf/rule.yaml --out conf",
        {
            "labels.jsonl": lines({"comment_id": "a", "model": "m", "label": "yes"}),
            "conf/rule.yaml": "rule: demo\nversion: 1\nscale: nominal\ncodes: [yes, no]\n",
        },
        exit=2,
        code="output-overwrites-input",
    ),
    Case(
        "import: --out holds a file import did not write",
        MODEL,
        {"labels.jsonl": lines({"comment_id": "a", "model": "m", "label": "yes"}), "imported/mine.txt": "keep"},
        exit=2,
        code="output-folder-not-ours",
        says=("mine.txt",),
    ),
    # --- names and ids that attack ---------------------------------------------------------------------
    Case(
        "import: an annotator named with terminal escapes",
        MODEL,
        {"labels.jsonl": lines({"comment_id": "a", "model": "\x1b[31mevil\x1b[0m", "label": "yes"})},
        never_shown=("\x1b[31m",),
        check=has_file("imported/sheets/__31mevil__0m.csv"),
    ),
    Case(
        "import: an annotator named like a path",
        MODEL,
        {"labels.jsonl": lines({"comment_id": "a", "model": "../../etc/passwd", "label": "yes"})},
        check=has_file("imported/sheets/_.._.._etc_passwd.csv"),
    ),
    Case(
        "import: annotators whose sheets would share a file name",
        MODEL,
        {
            "labels.jsonl": lines(
                {"comment_id": "a", "model": "a@b", "label": "yes"}, {"comment_id": "a", "model": "A_b", "label": "no"}
            )
        },
        exit=2,
        code="import-annotator-names",
        says=("a@b", "A_b"),
    ),
    Case(
        "import: an id that is a spreadsheet formula",
        MODEL,
        {"labels.jsonl": lines({"comment_id": '=HYPERLINK("http://x")', "model": "m", "label": "yes"})},
        exit=2,
        code="import-formula-id",
        says=("HYPERLINK", "--id-field"),
    ),
    Case(
        "import: a comment text that is a spreadsheet formula",
        MODEL,
        {"labels.jsonl": lines({"comment_id": "a", "model": "m", "label": "yes", "text": "=cmd|' /C calc'!A0"})},
        never=(",=cmd|",),
        check=has_file("imported/sheets/m.csv"),
    ),
    # --- records the log must account for ---------------------------------------------------------------
    Case(
        "import: an id that is a fraction is no id",
        MODEL,
        {"labels.jsonl": lines({"comment_id": 1.5, "model": "m", "label": "yes"})},
        check=logged("missing_id"),
    ),
    Case(
        "import: an id that is true is no id",
        PRODIGY,
        {"export.jsonl": lines(prodigy(True))},
        check=logged("missing_id"),
    ),
    Case(
        "import: a label that is an object",
        MODEL,
        {"labels.jsonl": lines({"comment_id": "a", "model": "m", "label": {"x": 1}})},
        check=logged("unknown_label"),
    ),
    Case(
        "import: a task annotated twice at the same time with two codes",
        LS,
        {
            "export.json": ls(
                {
                    "data": {"comment_id": "a"},
                    "annotations": [
                        {
                            "completed_by": 1,
                            "updated_at": "2024-05-01T10:00:00Z",
                            "result": [{"from_name": "q", "type": "choices", "value": {"choices": ["yes"]}}],
                        },
                        {
                            "completed_by": 1,
                            "updated_at": "2024-05-01T10:00:00Z",
                            "result": [{"from_name": "q", "type": "choices", "value": {"choices": ["no"]}}],
                        },
                    ],
                }
            )
        },
        check=logged("conflict", 2),
    ),
    Case(
        "import: an annotation naming no annotator",
        LS,
        {"export.json": ls(task("a", None))},
        check=logged("missing_annotator"),
    ),
    Case("import: an empty JSON Lines export", PRODIGY, {"export.jsonl": "\n\n"}, shows=("0 records",)),
]

CASES += [
    Case(
        "import: a label studio csv answer 10,000 levels deep",
        "import label-studio-csv export.csv --rule rule.yaml --out imported --question q",
        {"export.csv": 'comment_id,annotator,q\na,1,"' + "{" * 10_000 + '"\n'},
        exit=2,
        code="limit-depth",
        says=("export.csv", "row 2"),
    ),
]

CASES += [
    Case(
        "import: the same export twice",
        "import model labels.jsonl ./labels.jsonl --rule rule.yaml --out imported",
        {"labels.jsonl": lines({"comment_id": "a", "model": "m", "label": "yes"})},
        exit=2,
        code="usage-import-twice",
        says=("labels.jsonl", "twice"),
    ),
]
