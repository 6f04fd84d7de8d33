"""What the tool shows of text it did not write: Markdown, HTML, the terminal, CSV."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from kit import BOB, BUNDLE, ORDINAL_RULE, RULE, SHEETS, Case, Outcome, edit_bundle, frozen, joined, run_cli


def alice_with(body: str = "Broken again.", comment_id: str = "c") -> str:
    """ALICE with unit c's comment text (and id) replaced: c is the unit the coders disagree on."""
    rows = [
        ["comment_id", "code", "body"],
        ["a", "yes", "It crashes."],
        ["b", "no", "Nice."],
        [comment_id, "yes", body],
        ["d", "no", "Fine."],
    ]
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    return buffer.getvalue()


def bob_with(comment_id: str) -> str:
    return BOB.replace("\nc,no,", f"\n{comment_id},no,")


SCRIPT = "<script>alert(1)</script>"
LINK = "[click me](javascript:alert(1))"
ESCAPES = "\x1b]0;pwned\x07\x1b[2J\x1b[31mred"
NEVER_ESCAPES = ("\x1b[2J", "\x1b]0;", "\x07")
MD = f"report {SHEETS} --format md"
HTML = f"report {SHEETS} --format html"
TEXT = f"report {SHEETS} --format text"


def adjudicated_with(note: str):
    def setup(folder: Path) -> None:
        frozen(folder)
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="\n").writerows([["comment_id", "code", "note"], ["c", "yes", note]])
        (folder / "decisions.csv").write_text(buffer.getvalue(), encoding="utf-8")
        run_cli(folder, f"adjudicate {BUNDLE} --decisions decisions.csv --by ann --quiet")

    return setup


def unique_joined_header(outcome: Outcome) -> None:
    header = (outcome.folder / "out" / "joined.csv").read_text(encoding="utf-8").splitlines()[0]
    names = next(csv.reader([header]))
    assert len(set(names)) == len(names), f"joined.csv has two columns of one name: {names}"


def no_formula_cells(name: str):
    def check(outcome: Outcome) -> None:
        with open(outcome.folder / "out" / name, newline="", encoding="utf-8") as stream:
            for row in csv.reader(stream):
                for cell in row:
                    assert not cell.startswith(("=", "+", "@", "\t", "\r")), f"{name} holds the formula {cell!r}"

    return check


CASES = [
    # --- Markdown ------------------------------------------------------------------------------------
    Case("md: a script tag in a comment's text", MD, {"alice.csv": alice_with(SCRIPT)}, never=(SCRIPT,)),
    Case(
        "md: a javascript link in a comment's text",
        MD,
        {"alice.csv": alice_with(LINK)},
        never=("[click me](javascript:",),
    ),
    Case("md: table pipes in a comment's text", MD, {"alice.csv": alice_with("a|b|c")}, never=("a|b|c",)),
    Case(
        "md: an image tag as a unit's id",
        MD,
        {
            "alice.csv": alice_with(comment_id="<img src=x onerror=alert(1)>"),
            "bob.csv": bob_with("<img src=x onerror=alert(1)>"),
        },
        never=("<img src=x onerror=alert(1)>",),
    ),
    Case(
        "md: HTML in the rule's question",
        MD,
        {"rule.yaml": RULE.replace("Does the comment", f"{SCRIPT} Does the comment")},
        never=(SCRIPT,),
    ),
    Case(
        "md: a coder named with HTML",
        "report alice.csv '<b>bob.csv' --rule rule.yaml --format md",
        {"<b>bob.csv": BOB},
        never=("<b>bob",),
    ),
    Case(
        "md: an adjudication note with HTML and a javascript link",
        "report {bundle} --format md",
        setup=adjudicated_with(f"{SCRIPT} {LINK}"),
        never=(SCRIPT, "[click me](javascript:"),
    ),
    Case("md: written to a file", MD + " --output r.md", {"alice.csv": alice_with(SCRIPT)}, never=(SCRIPT,)),
    # --- HTML ---------------------------------------------------------------------------------------------
    Case("html: a script tag in a comment's text", HTML, {"alice.csv": alice_with(SCRIPT)}, never=(SCRIPT,)),
    Case(
        "html: a comment's text that closes the script element",
        HTML,
        {"alice.csv": alice_with(f"</script>{SCRIPT}")},
        never=(SCRIPT, "</script><script"),
    ),
    Case(
        "html: a javascript link in a comment's text",
        HTML,
        {"alice.csv": alice_with(LINK)},
        never=('href="javascript:',),
    ),
    Case(
        "html: an adjudication note with HTML",
        "report {bundle} --format html",
        setup=adjudicated_with(SCRIPT),
        never=(SCRIPT,),
    ),
    Case(
        "html: an attribute breakout as a unit's id",
        HTML,
        {
            "alice.csv": alice_with(comment_id='x" onmouseover="alert(1)'),
            "bob.csv": bob_with('x"" onmouseover=""alert(1)'),
        },
        never=('" onmouseover="alert',),
    ),
    # --- the terminal -------------------------------------------------------------------------------------
    Case(
        "text: terminal escapes in a comment's text",
        TEXT,
        {"alice.csv": alice_with(ESCAPES)},
        never_shown=NEVER_ESCAPES,
    ),
    Case(
        "text: terminal escapes in a unit's id",
        TEXT,
        {"alice.csv": alice_with(comment_id="c" + ESCAPES), "bob.csv": bob_with("c" + ESCAPES)},
        exit=2,
        code="sheet-control-character",
        never_shown=NEVER_ESCAPES,
    ),
    Case(
        "text: terminal escapes in a code",
        f"score {SHEETS}",
        {"rule.yaml": 'rule: demo\nversion: 1\nscale: nominal\ncodes: ["yes", "no\\e[2J"]\n'},
        exit=2,
        code="rule-invalid",
        says=("codes[1]", "U+001B"),
        never_shown=NEVER_ESCAPES,
    ),
    Case(
        "text: terminal escapes in a warning's id",
        f"score {SHEETS}",
        {"alice.csv": alice_with(comment_id="c\u200b" + ESCAPES)},
        exit=2,
        code="sheet-control-character",
        never_shown=NEVER_ESCAPES,
    ),
    Case(
        "text: terminal escapes written to a file",
        TEXT + " --output r.txt",
        {"alice.csv": alice_with(ESCAPES)},
        never=NEVER_ESCAPES,
    ),
    Case(
        "text: terminal escapes in an adjudication note",
        "report {bundle} --format text",
        setup=adjudicated_with(ESCAPES),
        never_shown=NEVER_ESCAPES,
    ),
    Case(
        "text: terminal escapes in a bundle's file name",
        "verify {bundle}",
        setup=edit_bundle(lambda bundle: (bundle / "sheets" / "x\x1b[2J.csv").write_text("x")),
        exit=1,
        never_shown=NEVER_ESCAPES,
    ),
    Case(
        "text: terminal escapes in a rule folder's name",
        "rules check rules",
        {"rules/x\x1b[2J/v1.yaml": RULE},
        exit=1,
        shows=("rule-folder-mismatch",),
        never_shown=NEVER_ESCAPES,
    ),
    Case(
        "text: terminal escapes in the list of disagreements",
        "adjudicate {bundle}",
        {"alice.csv": alice_with(body=ESCAPES)},
        setup=frozen,
        never_shown=NEVER_ESCAPES,
    ),
    Case(
        "text: an id holding terminal escapes is refused",
        f"freeze {SHEETS} --into audits",
        {"alice.csv": alice_with(comment_id="c" + ESCAPES), "bob.csv": bob_with("c" + ESCAPES)},
        exit=2,
        code="sheet-control-character",
        says=("alice.csv", "row 4"),
        never_shown=NEVER_ESCAPES,
    ),
    Case(
        "text: terminal escapes in a sample's summary",
        "sample d.json --rule rule.yaml --coders ann,ben --out s",
        {
            "d.json": '[{"commentId": "c1", "body": "x", "status": "ok"}, {"commentId": "c1", "body": "y", '
            '"status": "ok\u001b[2J"}]'
        },
        never_shown=NEVER_ESCAPES,
        exit=2,
        code="collector-not-json",
    ),
    Case(
        "json: terminal escapes stay escaped",
        f"report {SHEETS} --format json",
        {"alice.csv": alice_with(ESCAPES)},
        never_shown=NEVER_ESCAPES,
    ),
    # --- every format of every input ---------------------------------------------------------------------
    *(Case(f"{fmt}: a report of sheets", f"report {SHEETS} --format {fmt}") for fmt in ("md", "html", "json", "text")),
    *(
        Case(f"{fmt}: a report of a bundle", f"report {{bundle}} --format {fmt}", setup=frozen)
        for fmt in ("md", "html", "json", "text")
    ),
    *(
        Case(f"{fmt}: a report of a join folder", f"report out --format {fmt}", setup=joined())
        for fmt in ("md", "html", "json", "text")
    ),
    *(
        Case(
            f"{fmt}: a report of counts",
            f"report --counts c.csv --rule rule.yaml --format {fmt}",
            {"c.csv": "alice,bob,units\nyes,yes,3\nno,yes,1\n"},
        )
        for fmt in ("md", "html", "json", "text")
    ),
    *(
        Case(
            f"{fmt}: a report with a bootstrap and a group",
            f"report alice.csv bob.csv carol.csv --rule rule.yaml "
            f"--format {fmt} --bootstrap 50 --seed 1 --group h=alice,bob --against carol",
            {"carol.csv": "comment_id,code\na,yes\nb,no\nc,yes\nd,yes\n"},
        )
        for fmt in ("md", "html", "json", "text")
    ),
    Case("report: --format pdf", f"report {SHEETS} --format pdf", exit=2, says=("--format",)),
    Case(
        "report: an ordinal audit in every section",
        "report a.csv b.csv --rule ordinal.yaml --format md",
        {
            "ordinal.yaml": ORDINAL_RULE,
            "a.csv": "comment_id,code\na,low\nb,mid\nc,high\nd,mid\n",
            "b.csv": "comment_id,code\na,low\nb,high\nc,high\nd,unknown\n",
        },
    ),
    Case(
        "report: every coder codes one category (kappa undefined)",
        f"report {SHEETS} --format json",
        {"alice.csv": "comment_id,code\na,yes\nb,yes\n", "bob.csv": "comment_id,code\na,yes\nb,yes\n"},
        stdout=('"defined": false',),
    ),
    Case(
        "report: no unit fully coded",
        f"report {SHEETS} --format md",
        {"alice.csv": "comment_id,code\na,yes\nb,unknown\n", "bob.csv": "comment_id,code\na,\nb,no\n"},
        exit=1,
        shows=("Problem:** no unit is fully coded",),
    ),
    # --- CSV written for spreadsheets ----------------------------------------------------------------------
    Case(
        "csv: coders =a and '=a stay two columns",
        "join =a.csv \\'=a.csv --rule rule.yaml --out out",
        {"=a.csv": "comment_id,code\na,yes\nb,no\n", "'=a.csv": "comment_id,code\na,yes\nb,yes\n"},
        check=unique_joined_header,
    ),
    Case(
        "csv: counts.csv neutralises formula codes",
        f"join {SHEETS} --out out",
        {
            "rule.yaml": 'rule: demo\nversion: 1\nscale: nominal\ncodes: ["=SUM(1)", "@cmd"]\n',
            "alice.csv": "comment_id,code\na,=SUM(1)\nb,@cmd\n",
            "bob.csv": "comment_id,code\na,=SUM(1)\nb,=SUM(1)\n",
        },
        check=no_formula_cells("counts.csv"),
    ),
    Case(
        "csv: counts.csv neutralises a HYPERLINK coder",
        "join alice.csv '=HYPERLINK(\"x\").csv' --rule rule.yaml --out out",
        {'=HYPERLINK("x").csv': BOB},
        check=no_formula_cells("counts.csv"),
    ),
    Case(
        "csv: joined.csv neutralises formula ids",
        f"join {SHEETS} --out out",
        {"alice.csv": alice_with(comment_id="=1+1"), "bob.csv": bob_with("=1+1")},
        check=no_formula_cells("joined.csv"),
    ),
    Case(
        "csv: the log neutralises formula ids and values",
        f"join {SHEETS} --out out",
        {"alice.csv": "comment_id,code\n@x,+cmd\n-y,=1\n"},
        check=no_formula_cells("missingness_log.csv"),
    ),
    Case(
        "csv: the disagreement list neutralises formula ids",
        "adjudicate {bundle} --output todo.csv",
        {"alice.csv": alice_with(comment_id="=1+1"), "bob.csv": bob_with("=1+1")},
        setup=frozen,
        check=lambda o: _todo_safe(o),
    ),
    Case(
        "csv: a join folder of formula coders scores",
        "score out --format json",
        {"=a.csv": "comment_id,code\na,yes\nb,no\n", "bob.csv": "comment_id,code\na,yes\nb,yes\n"},
        setup=joined(command="join =a.csv bob.csv --rule rule.yaml"),
    ),
]


def _todo_safe(outcome: Outcome) -> None:
    with open(outcome.folder / "todo.csv", newline="", encoding="utf-8") as stream:
        for row in csv.reader(stream):
            assert not row[0].startswith("="), row
