"""Intake and join: a missing input named first; an audit with nothing to score fails and says
why (--alias); near-miss ids; delimiters detected; Reddit fullnames, field maps and ids as text
in the collector's dataset; formats in any case; a summary line whose counts add up."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import irr_audit
from irr_audit.cli import app
from irr_audit.errors import IrrAuditError, UsageError
from irr_audit.io.collector import parse_dataset, parse_run_record
from irr_audit.io.delimiter import _first_lines, detect_delimiter
from irr_audit.io.sheets import read_sheet
from irr_audit.io.tables import _arrow_table
from irr_audit.join.join import join_sheets
from irr_audit.join.problems import one_edit_variants
from irr_audit.rules.load import load_rule
from irr_audit.sample.ledger import build_ledger, count_checks

ROOT = Path(__file__).resolve().parents[1]
RULE = ROOT / "rules" / "explicit_current_failure" / "v1.yaml"
EXAMPLE = [ROOT / "examples" / "sheets" / name for name in ("alice.csv", "bob.csv")]


def run(*args: object):
    return CliRunner().invoke(app, [str(arg) for arg in args], catch_exceptions=False)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def numeric_sheets(tmp_path: Path) -> list[Path]:
    """Two coders who typed 1/0 against a yes/no rule."""
    alice = write(tmp_path / "alice.csv", "comment_id,code\n" + "".join(f"c{i},{i % 2}\n" for i in range(10)))
    bob = write(tmp_path / "bob.csv", "comment_id,code\n" + "".join(f"c{i},{(i // 3) % 2}\n" for i in range(10)))
    return [alice, bob]


# --- a missing input is named first -------------------------------------------------------


def test_a_mistyped_folder_is_named_as_missing_not_as_a_missing_rule(tmp_path: Path) -> None:
    result = run("score", tmp_path / "j_typo")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error [path-not-found]: {tmp_path / 'j_typo'} does not exist.")
    with pytest.raises(UsageError) as caught:
        irr_audit.audit(tmp_path / "j_typo")
    assert caught.value.code == "path-not-found"


@pytest.mark.parametrize(
    ("args", "code", "named"),
    [
        (["join", "{t}/a.csv", "{t}/b.csv", "--out", "{t}/out"], "sheet-not-found", "a.csv"),
        (["report", "{t}/a.csv", "{t}/b.csv"], "sheet-not-found", "a.csv"),
        (["score", "--counts", "{t}/counts.csv"], "sheet-not-found", "counts.csv"),
        (
            ["sample", "{t}/data.json", "--rule", "{t}/r.yaml", "--coders", "a,b", "--out", "{t}/s"],
            "collector-not-found",
            "data.json",
        ),
        (["freeze", "{t}/j", "--rule", "{t}/r.yaml", "--into", "{t}/audits"], "path-not-found", "j"),
        (["adjudicate", "{t}/bundle"], "bundle-not-found", "bundle"),
        (["compare", "{t}/a", "{t}/b"], "path-not-found", "a"),
        (["import", "prodigy", "{t}/x.jsonl", "--rule", "{t}/r.yaml", "--out", "{t}/o"], "import-not-found", "x.jsonl"),
    ],
)
def test_every_command_names_its_first_missing_input_first(
    tmp_path: Path, args: list[str], code: str, named: str
) -> None:
    result = run(*(arg.format(t=tmp_path) for arg in args))
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"Error [{code}]: ")
    assert f"{tmp_path / named} does not exist." in result.stderr.splitlines()[0]


# --- nothing to score is a failed check -----------------------------------------------------


def test_codes_the_rule_does_not_know_fail_with_the_values_and_the_fix(tmp_path: Path) -> None:
    sheets = numeric_sheets(tmp_path)
    result = run("score", *sheets, "--rule", RULE)
    assert result.exit_code == 1
    assert "problem: no unit is fully coded" in result.stderr
    assert "'0' (5), '1' (5)" in result.stderr and "--alias RAW=CODE" in result.stderr
    document = json.loads(run("report", *sheets, "--rule", RULE, "--format", "json", "-q").stdout)
    kinds = [problem["kind"] for problem in document["problems"]]
    assert kinds == ["no-fully-coded", "mostly-invalid", "mostly-invalid"]
    first = document["problems"][0]
    assert set(first) == {"kind", "message", "values", "fix"}
    assert first["values"] == {"0": 11, "1": 9}
    assert document["problems"][1]["values"] == {"0": 5, "1": 5}
    markdown = run("report", *sheets, "--rule", RULE, "-q")
    assert markdown.exit_code == 1
    assert markdown.stdout.split("\n")[2].startswith("> **Problem:** no unit is fully coded")
    html = run("report", *sheets, "--rule", RULE, "--format", "html", "-q").stdout
    assert html.index('<section id="problems">') < html.index('<section id="provenance">')
    text = run("report", *sheets, "--rule", RULE, "--format", "text", "-q").stdout
    assert text.startswith("problem: no unit is fully coded")
    # the message and its fix on lines of their own, no line break shown as an escape
    assert "\\n" not in text and text.split("\n")[1].startswith("  fix: ")


def test_join_writes_its_folder_with_the_problems_and_score_of_it_fails(tmp_path: Path) -> None:
    result = run("join", *numeric_sheets(tmp_path), "--rule", RULE, "--out", tmp_path / "out")
    assert result.exit_code == 0 and "problem: no unit is fully coded" in result.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["problems"][0]["kind"] == "no-fully-coded"
    assert run("score", tmp_path / "out").exit_code == 1


def test_counts_with_no_unit_fully_coded_fail_too(tmp_path: Path) -> None:
    run("join", *numeric_sheets(tmp_path), "--rule", RULE, "--out", tmp_path / "out")
    result = run("score", "--counts", tmp_path / "out" / "counts.csv", "--rule", RULE)
    assert result.exit_code == 1 and "problem: no unit is fully coded" in result.stderr


def test_an_id_outside_the_sample_one_edit_from_a_sampled_id_is_named(tmp_path: Path) -> None:
    data = write(
        tmp_path / "d.jsonl",
        "".join(f'{{"commentId": "kq{n:05d}x", "body": "b{n}", "status": "ok"}}\n' for n in range(12)),
    )
    assert run("sample", data, "--rule", RULE, "--coders", "a,b", "--out", tmp_path / "s", "-q").exit_code == 0
    ids = [f"kq{n:05d}x" for n in range(12)]
    a = write(tmp_path / "a.csv", "comment_id,code\n" + "".join(f"{i},yes\n" for i in ids))
    b = write(tmp_path / "b.csv", "comment_id,code\n" + "".join(f"{i},yes\n" for i in [*ids[:3], "kq00o03x", *ids[4:]]))
    warnings = irr_audit.audit([a, b], RULE, sample=tmp_path / "s").input_warnings
    assert any("'kq00o03x' is not in the sample but is one edit from 'kq00003x'" in w for w in warnings), warnings


def test_alias_maps_raw_values_for_the_run_and_is_recorded(tmp_path: Path) -> None:
    sheets = numeric_sheets(tmp_path)
    aliases = ("--alias", "1=yes", "--alias", "0=NO")
    joined = run("join", *sheets, "--rule", RULE, "--out", tmp_path / "out", *aliases)
    assert joined.exit_code == 0, joined.output
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["run_aliases"] == {"0": "no", "1": "yes"} and "problems" not in summary
    assert summary["units"]["fully_coded"] == 10
    document = json.loads(run("report", tmp_path / "out", "--format", "json", "-q").stdout)
    assert document["rule"]["run_aliases"] == {"0": "no", "1": "yes"} and "problems" not in document
    assert document["units"]["fully_coded"] == 10
    assert "Aliases of this run (--alias): 0=no, 1=yes" in run("report", tmp_path / "out", "-q").stdout
    direct = irr_audit.audit(sheets, RULE, aliases={"1": "yes", "0": "no"})
    assert direct.units["fully_coded"] == 10 and direct.problems == [] and not direct.failed
    assert direct.metrics.loc["cohen_kappa", "value"] == document["metrics"]["cohen_kappa"]["value"]
    frozen = run("freeze", tmp_path / "out", "--into", tmp_path / "audits")
    assert frozen.exit_code == 2 and "[usage-alias]" in frozen.stderr


@pytest.mark.parametrize(
    ("alias", "says"),
    [
        ("1=maybe", "is not a code"),
        ("yes=no", "already means yes"),
        ("=yes", "is not RAW=CODE"),
        ("1", "is not RAW=CODE"),
    ],
)
def test_a_bad_alias_is_refused(tmp_path: Path, alias: str, says: str) -> None:
    result = run("score", *numeric_sheets(tmp_path), "--rule", RULE, "--alias", alias)
    assert result.exit_code == 2 and "[usage-alias]" in result.stderr and says in result.stderr


@pytest.mark.parametrize(
    ("aliases", "says"),
    [
        (["1=yes", "1=no"], "--alias 1=no contradicts --alias 1=yes: one value cannot mean two codes"),
        (["X=yes", "x=no"], "'x' and 'X' are one value once case"),
        (["\uff58=yes", " x =no"], "are one value once case, spacing and Unicode width are ignored"),
    ],
)
def test_contradictory_aliases_are_refused_not_settled_by_their_order(
    tmp_path: Path, aliases: list[str], says: str
) -> None:
    options = [item for alias in aliases for item in ("--alias", alias)]
    result = run("score", *numeric_sheets(tmp_path), "--rule", RULE, *options)
    assert result.exit_code == 2 and "[usage-alias]" in result.stderr and says in result.stderr
    raw = {alias.rpartition("=")[0]: alias.rpartition("=")[2] for alias in aliases}
    if len(raw) == 1:  # one key of a mapping cannot be given twice
        return
    with pytest.raises(UsageError, match="contradicts") as refused:  # the API's mapping, as the rule loader
        irr_audit.audit(numeric_sheets(tmp_path), RULE, aliases=raw)
    assert refused.value.code == "usage-alias"


def test_an_alias_repeated_for_the_same_code_is_accepted(tmp_path: Path) -> None:
    options = ("--alias", "1=yes", "--alias", "1=YES", "--alias", "X=no", "--alias", "x=no")
    result = run("score", *numeric_sheets(tmp_path), "--rule", RULE, "--format", "json", "-q", *options)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["rule"]["run_aliases"] == {"1": "yes", "X": "no", "x": "no"}


def test_sheets_that_share_no_id_are_a_problem(tmp_path: Path) -> None:
    a = write(tmp_path / "a.csv", "comment_id,code\np1,yes\np2,no\n")
    b = write(tmp_path / "b.csv", "comment_id,code\nq1,yes\nq2,no\n")
    audited = irr_audit.audit([a, b], RULE)
    assert [problem["kind"] for problem in audited.problems] == ["no-fully-coded", "no-shared-id"]
    assert "a.csv (ids 'p1', 'p2') and b.csv (ids 'q1', 'q2') share no comment id" in audited.problems[1]["message"]
    assert audited.failed
    assert "ids are matched as text, exactly" in audited.problems[1]["fix"]


def test_sheets_that_differ_by_a_reddit_prefix_are_told_so(tmp_path: Path) -> None:
    """Outside --sample, t1_abc and abc are two units; the problem says how they would match."""
    a = write(tmp_path / "a.csv", "comment_id,code\nt1_abc,yes\nt1_abd,no\n")
    b = write(tmp_path / "b.csv", "comment_id,code\nabc,yes\nabd,no\n")
    fix = irr_audit.audit([a, b], RULE).problems[1]["fix"]
    assert "match once Reddit's type prefix is left out" in fix and "--sample" in fix


def test_a_sound_audit_has_no_problem_key(tmp_path: Path) -> None:
    document = irr_audit.audit(EXAMPLE, RULE).to_dict()
    assert "problems" not in document and "run_aliases" not in document["rule"]


# --- near misses -----------------------------------------------------------------------------


def test_an_id_one_edit_from_an_id_the_sheet_lacks_is_named_as_a_likely_typo(tmp_path: Path) -> None:
    ids = [f"kq{n:05d}x" for n in range(20)]
    a = write(tmp_path / "a.csv", "comment_id,code\n" + "".join(f"{i},yes\n" for i in ids))
    typo = ids[:7] + ["kq0007x"] + ids[8:]  # one character dropped
    b = write(tmp_path / "b.csv", "comment_id,code\n" + "".join(f"{i},yes\n" for i in typo))
    warnings = irr_audit.audit([a, b], RULE).input_warnings
    assert any("'kq00007x'" in w and "'kq0007x'" in w and "likely a typo" in w for w in warnings)
    assert sum("likely a typo" in w for w in warnings) == 1  # the pair is named once


def test_one_edit_variants() -> None:
    variants = one_edit_variants("ab", ["a", "b", "c"])
    assert {"a", "b", "ba", "cb", "ac", "abc", "cab", "aab"} <= set(variants) and "ab" not in variants


# --- delimiters ------------------------------------------------------------------------------


@pytest.mark.parametrize("delimiter", [",", ";", "\t", "|"])
def test_the_delimiter_of_a_csv_sheet_is_detected_and_read_fast(tmp_path: Path, delimiter: str) -> None:
    lines = [["comment_id", "code", "note"], ["c1", "yes", "a, b; c"], ["c2", "no", ""]]
    text = "\n".join(delimiter.join(f'"{cell}"' if "," in cell else cell for cell in line) for line in lines) + "\n"
    if delimiter != ",":
        text = text.replace('"a, b; c"', "a, b" if delimiter != ";" else '"a, b; c"')
    path = write(tmp_path / "s.csv", text)
    sheet = read_sheet(path)
    assert sheet.comment_ids.to_pylist() == ["c1", "c2"] and sheet.codes.to_pylist() == ["yes", "no"]
    assert _arrow_table(text.encode(), delimiter) is not None  # the fast path reads it


def test_an_unclear_delimiter_is_refused_naming_the_candidates_and_forced_with_the_option(tmp_path: Path) -> None:
    sheet = write(tmp_path / "a.csv", "comment_id;code;x,y\nc1;yes;1,2\n")
    other = write(tmp_path / "b.csv", "comment_id;code\nc1;yes\n")
    refused = run("score", sheet, other, "--rule", RULE)
    assert refused.exit_code == 2 and "[sheet-delimiter-unclear]" in refused.stderr
    assert "',' (2 columns) and ';' (3 columns)" in refused.stderr
    forced = run("score", sheet, other, "--rule", RULE, "--delimiter", ";", "--format", "json", "-q")
    assert forced.exit_code == 0 and json.loads(forced.stdout)["units"]["fully_coded"] == 1
    assert irr_audit.audit([sheet, other], RULE, delimiter="semicolon").units["fully_coded"] == 1


def test_a_ragged_row_names_the_delimiter_it_suspects(tmp_path: Path) -> None:
    semicolons = write(tmp_path / "a.csv", "comment_id;code\nc1;yes\n")
    other = write(tmp_path / "b.csv", "comment_id,code\nc1,yes\n")
    result = run("score", semicolons, other, "--rule", RULE, "--delimiter", ",")
    assert result.exit_code == 2
    assert 'has no column "comment_id": its header is one column' in result.stderr
    assert "looks ;-delimited" in result.stderr and "--delimiter ';'" in result.stderr


def test_detection_rule() -> None:
    assert detect_delimiter("id,code\n1,a;b\n", "x") == ","
    assert detect_delimiter("id\tcode\n1\ta,b\n", "x") == "\t"
    assert detect_delimiter("id\n1\n", "x") == ","
    assert detect_delimiter('"a;b",c\n1,2\n', "x") == ","  # quotes respected
    with pytest.raises(IrrAuditError, match="not clear"):
        detect_delimiter("a;b,c\n", "x")


LINE_BREAKS = ["\n", "\r\n", "\r", "\x0b", "\u2028", "\n\n", "  \n"]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 900), st.sampled_from(LINE_BREAKS)), max_size=40),
    st.integers(1, 25),
)
def test_the_sampled_lines_are_those_of_the_whole_head(lines: list[tuple[int, str]], count: int) -> None:
    # lines of any length, so that a growing head is cut anywhere: inside a line, between the
    # two characters of a CRLF, on a blank line
    text = "".join("x" * length + ("," if length % 3 else "") + end for length, end in lines)
    whole = [line for line in text.splitlines() if line.strip()][:count]
    assert _first_lines(text, count) == whole


def test_a_line_cut_by_the_head_is_read_whole() -> None:
    text = "id,code\n" + "b" * 5000 + "\nc,d\n"
    assert _first_lines(text, 2) == ["id,code", "b" * 5000]
    crlf = "a" * 4095 + "\r\n" + "b,c\n" * 30  # the head's end between CR and LF: one line end
    assert _first_lines(crlf, 3) == ["a" * 4095, "b,c", "b,c"]


def test_a_forced_delimiter_is_recorded_for_score_dir(tmp_path: Path) -> None:
    a = write(tmp_path / "a.csv", "comment_id|code|x,y\nc1|yes|1,2\n")
    b = write(tmp_path / "b.csv", "comment_id|code\nc1|yes\n")
    assert run("join", a, b, "--rule", RULE, "--out", tmp_path / "out", "--delimiter", "|").exit_code == 0
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["columns"]["delimiter"] == "|"
    assert json.loads(run("score", tmp_path / "out", "--format", "json").stdout)["units"]["fully_coded"] == 1


# --- the collector's dataset -----------------------------------------------------------------


def test_reddit_fullnames_and_bare_ids_are_the_same_object() -> None:
    items = [
        {"postId": "t3_1gx7ka9", "commentId": "t1_abc", "body": "x", "status": "ok"},
        {"postId": "1gx7ka9", "commentId": "abc", "body": "x", "status": "ok"},
        {"postId": "t3_1gx7ka9", "commentId": "abd", "body": "y", "status": "ok"},
    ]
    dataset = parse_dataset(json.dumps(items).encode(), "d.json")
    record = parse_run_record(
        json.dumps(
            {
                "commentsSaved": 3,
                "inputResults": [{"url": "https://www.reddit.com/r/x/comments/1gx7ka9/t/", "commentsSaved": 3}],
            }
        ).encode(),
        "r.json",
    )
    ledger = build_ledger(dataset, record)
    assert ledger.ids == ("t1_abc", "abd")  # one comment: its first spelling kept
    assert [row.reason for row in ledger.log] == ["duplicate"]
    assert all(check["agrees"] for check in count_checks(dataset, record))
    assert all(unit.url.endswith("/comments/1gx7ka9/t/") for unit in ledger.units)


def test_snake_case_exports_and_a_field_map_are_read() -> None:
    snake = parse_dataset(
        b'{"comment_id": "a1", "post_id": "p", "body": "b", "status": "ok", "author_name": "u"}\n', "d.jsonl"
    )
    assert (snake.items[0].comment_id, snake.items[0].post_id, snake.items[0].author) == ("a1", "p", "u")
    mapped = parse_dataset(
        b"id;text;state\nk1;hello;ok\n", "d.csv", fields={"comment_id": "id", "body": "text", "status": "state"}
    )
    assert (mapped.items[0].comment_id, mapped.items[0].body, mapped.items[0].status) == ("k1", "hello", "ok")
    with pytest.raises(UsageError, match="not a field irr-audit reads"):
        parse_dataset(b"id\n1\n", "d.csv", fields={"comment": "id"})


def test_sample_takes_a_field_map(tmp_path: Path) -> None:
    data = write(tmp_path / "d.csv", "id\ttext\tstate\nk1\thello\tok\nk2\tbye\tok\n")
    result = run(
        "sample",
        data,
        "--rule",
        RULE,
        "--coders",
        "a,b",
        "--out",
        tmp_path / "s",
        *"--field comment_id=id --field body=text --field status=state".split(),
    )
    assert result.exit_code == 0, result.output
    assert "k1" in (tmp_path / "s" / "ledger.csv").read_text()


@pytest.mark.parametrize("name", ["d.json", "d.jsonl"])
def test_json_number_ids_stay_the_text_of_the_source(name: str) -> None:
    items = ['{"commentId": 1.10, "body": "a", "status": "ok"}', '{"commentId": 1e2, "body": "b", "status": "ok"}']
    text = ("[" + ",".join(items) + "]") if name.endswith(".json") else "\n".join(items)
    assert [item.comment_id for item in parse_dataset(text.encode(), name).items] == ["1.10", "1e2"]


def test_json_lines_sheet_ids_stay_the_text_of_the_source(tmp_path: Path) -> None:
    a = write(tmp_path / "a.jsonl", '{"comment_id": 1.10, "code": "yes"}\n{"comment_id": 1e2, "code": "no"}\n')
    b = write(tmp_path / "b.csv", "comment_id,code\n1.10,yes\n1e2,no\n")
    joined = join_sheets([read_sheet(a), read_sheet(b)], load_rule(RULE))
    assert joined.unit_ids.tolist() == ["1.10", "1e2"] and int(joined.fully_coded.sum()) == 2


# --- smaller points ------------------------------------------------------------------------------


def test_formats_are_read_in_any_case() -> None:
    html = run("report", *EXAMPLE, "--rule", RULE, "--format", "HTML", "-q")
    assert html.exit_code == 0 and html.stdout.startswith("<!DOCTYPE html>")
    assert json.loads(run("score", *EXAMPLE, "--rule", RULE, "--format", "Json", "-q").stdout)["units"]["total"] == 22
    assert run("report", *EXAMPLE, "--rule", RULE, "--format", "Md", "-q").stdout.startswith("# Inter-coder")


def test_the_summary_line_counts_units_and_rows_apart_when_they_differ(tmp_path: Path) -> None:
    a = write(tmp_path / "a.csv", "comment_id,code\nc1,yes\nc2,maybe\nc3,unknown\n")
    b = write(tmp_path / "b.csv", "comment_id,code\nc1,yes\nc2,maybe\nc3,\n")
    line = irr_audit.audit([a, b], RULE).summary_line
    assert (
        line
        == "3 units from 2 coders: 1 fully coded, 2 not; 4 rows in the missingness log (1 unknown, 1 blank, 2 invalid)."
    )
    assert irr_audit.audit(EXAMPLE, RULE).summary_line.endswith(
        "20 fully coded, 2 in the missingness log (1 unknown, 1 blank)."
    )


COMMANDS = [
    ["join"],
    ["score"],
    ["report"],
    ["sample"],
    ["freeze"],
    ["verify"],
    ["adjudicate"],
    ["import"],
    ["compare"],
    ["rules", "check"],
    ["rules", "lock"],
    ["rules", "diff"],
    ["plan", "alpha"],
    ["plan", "kappa"],
    ["plan", "half-width"],
    ["plan", "pilot"],
    ["plan"],
    ["rules"],
    [],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda command: " ".join(command) or "irr-audit")
def test_help_names_what_to_pass_not_python_types(command: list[str]) -> None:
    shown = run(*command, "--help").stdout
    assert "--help" in shown and "Show this message and exit." in shown
    for python_type in ("<list[", "<bool>", "<str>", "<int>", "<float>", "<Path>", "int range"):
        assert python_type not in shown, (python_type, shown)


def test_help_shows_metavars_words_and_defaults() -> None:
    shown = run("score", "--help").stdout
    assert "INPUTS <path>..." in shown and "--quiet, -q " in shown and "--limit NAME=VALUE" in shown
    assert "--format <text|json>" in shown and "[default: text]" in shown and "--bootstrap <integer>" in shown
    assert "--counts <path>... " in shown and "--alpha-min <number>... " in shown  # repeatable options
    assert "SHEETS <path>... " in run("join", "--help").stdout and "BUNDLE <path> " in run("verify", "--help").stdout


def test_one_row_of_the_log_is_one_row_not_one_rows(tmp_path: Path) -> None:
    a = write(tmp_path / "a.csv", "comment_id,code\nc1,yes\nc1,yes\nc2,no\n")  # c1 twice, the same code
    b = write(tmp_path / "b.csv", "comment_id,code\nc1,yes\nc2,no\n")
    line = irr_audit.audit([a, b], RULE).summary_line
    assert line == "2 units from 2 coders: 2 fully coded, 0 not; 1 row in the missingness log (1 duplicate)."
    dataset = ROOT / "examples" / "collector" / "dataset.jsonl"
    drawn = run("sample", dataset, "--rule", RULE, "--coders", "alice,bob", "--out", tmp_path / "sample")
    assert drawn.exit_code == 0
    assert "22 usable units, 1 row in the missingness log (1 deleted)." in drawn.stderr
