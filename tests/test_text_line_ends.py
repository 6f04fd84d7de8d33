"""Every text output into a pipe or a file, and every text report the library makes, ends each line
without a space and ends with one line feed: people diff these outputs in CI and commit them, where
rich's padding of a table and a closing blank line are noise."""

from __future__ import annotations

from pathlib import Path

import pytest

from irr_audit.api import audit, audit_codebook, compare
from irr_audit.report.plaintext import clean_line_ends
from tests.conftest import run

ROOT = Path(__file__).resolve().parents[1]
RULE = ROOT / "rules" / "explicit_current_failure" / "v1.yaml"
CODEBOOK = ROOT / "codebooks" / "comment_study" / "v1.yaml"
SHEETS = sorted((ROOT / "examples" / "sheets").glob("*.csv"))
BOOK_SHEETS = sorted((ROOT / "examples" / "codebook" / "sheets").glob("*.csv"))


def problems_of(text: str) -> list[str]:
    """What is wrong with the ends of ``text``'s lines: each line ending in a space, and the end."""
    lines = text.split("\n")
    found = [
        f"line {number} ends in a space: {line[-40:]!r}" for number, line in enumerate(lines, 1) if line[-1:] == " "
    ]
    if not text.endswith("\n") or text.endswith("\n\n"):
        found.append(f"not one final line feed: ends {text[-20:]!r}")
    return found


def outputs_of(*args: object) -> tuple[str, str]:
    """The command's standard output and standard error (its summary lines), having succeeded."""
    result = run(*args)
    assert result.exit_code == 0, result.output
    return result.stdout, result.stderr


def bundle_of(into: Path, *args: object) -> Path:
    """The bundle freeze made (the path on its digest line)."""
    return Path(outputs_of("freeze", *args, "--into", into, "-q")[0].split()[1])


@pytest.fixture(scope="module")
def text_outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Every command that writes text for people, standard output and standard error apart."""
    work = tmp_path_factory.mktemp("text")
    joined, book_joined = work / "joined", work / "book_joined"
    codebook = ["--codebook", CODEBOOK, "--rules", ROOT / "rules"]
    outputs = {
        "join": outputs_of("join", *SHEETS, "--rule", RULE, "--out", joined),
        "codebook join": outputs_of("join", *BOOK_SHEETS, *codebook, "--out", book_joined),
    }
    bundle = bundle_of(work / "audits", *SHEETS, "--rule", RULE)
    book_bundle = bundle_of(work / "book_audits", *BOOK_SHEETS, *codebook)
    decisions = ROOT / "examples" / "walkthrough" / "decisions.csv"
    outputs["adjudicate"] = outputs_of("adjudicate", bundle, "--decisions", decisions, "--by", "alice and bob")
    outputs["freeze"] = outputs_of("freeze", joined, "--into", work / "more_audits")
    outputs["score of sheets"] = outputs_of("score", *SHEETS, "--rule", RULE)
    outputs["score of a join folder"] = outputs_of("score", joined)
    outputs["score of a bundle"] = outputs_of("score", bundle)
    outputs["score of counts"] = outputs_of("score", "--counts", joined / "counts.csv", "--rule", RULE)
    outputs["codebook score"] = outputs_of("score", *BOOK_SHEETS, *codebook)
    text = ("--format", "text")
    outputs["report of sheets"] = outputs_of("report", *SHEETS, "--rule", RULE, *text)
    outputs["report of an adjudicated bundle"] = outputs_of("report", bundle, *text)
    outputs["report, bootstrap, drift, compared"] = outputs_of(
        "report", joined, *text, "--bootstrap", "100", "--seed", "1", "--windows", "2", "--compare", bundle
    )
    outputs["codebook report"] = outputs_of("report", *BOOK_SHEETS, *codebook, *text)
    outputs["codebook bundle report"] = outputs_of("report", book_bundle, *text)
    outputs_of("report", joined, *text, "--output", work / "audit.txt")
    outputs["report --output"] = ((work / "audit.txt").read_text(encoding="utf-8"), "")
    compared = ("--bootstrap", "100", "--seed", "1")
    outputs["compare"] = outputs_of("compare", joined, bundle, *compared)
    later_book_bundle = bundle_of(work / "later_book_audits", book_joined)
    outputs["codebook compare"] = outputs_of("compare", book_bundle, later_book_bundle, *compared)
    outputs["verify"] = outputs_of("verify", bundle, "--verbose")
    outputs["rules check"] = outputs_of("rules", "check", ROOT / "rules")
    outputs["plan alpha"] = outputs_of("plan", "alpha", "--min", "0.667", "--codes", "2")
    outputs["plan kappa"] = outputs_of("plan", "kappa", "--expected", "0.8", "--min", "0.4", "--prevalence", "0.3")
    outputs["plan half-width"] = outputs_of(
        "plan", "half-width", "--expected", "0.7", "--half-width", "0.1", "--prevalence", "0.3"
    )
    outputs["plan pilot"] = outputs_of("plan", "pilot", joined, "--half-width", "0.1")
    return {
        f"{name} ({stream})": output
        for name, (stdout, stderr) in outputs.items()
        for stream, output in (("stdout", stdout), ("stderr", stderr))
        if output
    }


def test_every_command_writes_text_for_people(text_outputs: dict[str, str]) -> None:
    assert {name for name in text_outputs if name.endswith("(stdout)")} >= {
        "score of sheets (stdout)",
        "report of sheets (stdout)",
        "codebook report (stdout)",
        "compare (stdout)",
        "verify (stdout)",
        "plan pilot (stdout)",
    }
    assert "join (stderr)" in text_outputs  # the one-line summary


def test_no_text_output_has_a_trailing_space_or_a_final_blank_line(text_outputs: dict[str, str]) -> None:
    found = {name: problems_of(text)[:3] for name, text in text_outputs.items() if problems_of(text)}
    assert found == {}


def test_the_report_keeps_its_columns_and_loses_only_the_line_ends(text_outputs: dict[str, str]) -> None:
    shown = text_outputs["report of sheets (stdout)"]
    assert " Cohen's kappa (headline)           0.7000   [0.3886, 1.0000]*   substantial" in shown
    assert "\n codes (rows / columns)   count\n" in shown and "\n yes / no                     2\n" in shown
    assert shown.endswith(
        "\nsheet bob.csv (bob, 22 rows): sha256 f651f440873f9c26eb9c8901befda2d38e2c7acb9be991846620821397598937\n"
    )


def test_only_the_spaces_at_a_line_end_and_the_closing_blank_line_go() -> None:
    """The text is rich's, line for line, less the spaces at the lines' ends and the blank line at the end."""
    import io

    from rich.console import Console

    from irr_audit.report.console import UNWRAPPED, render_console

    one = audit(SHEETS, RULE)
    for width in (60, None):
        console = Console(width=UNWRAPPED if width is None else width, record=True, file=io.StringIO())
        console.print(render_console(one._document()))
        drawn = console.export_text().split("\n")
        assert drawn[-2:] == ["", ""]  # rich's text: a closing blank line
        assert one.to_text(width=width).split("\n") == [line.rstrip(" ") for line in drawn[:-1]]


def test_the_library_makes_the_same_clean_text() -> None:
    """A notebook's text report is the CLI's: every width, a rule's, a codebook's and a comparison's."""
    one = audit(SHEETS, RULE)
    book = audit_codebook(BOOK_SHEETS, CODEBOOK, rules_dir=ROOT / "rules")
    compared = compare(one, one, bootstrap=100, seed=1)
    texts = {
        f"{name}.to_text(width={width})": result.to_text(width=width)
        for name, result in (("Audit", one), ("CodebookAudit", book), ("Comparison", compared))
        for width in (60, 80, None)
    }
    assert {name: problems_of(text)[:3] for name, text in texts.items() if problems_of(text)} == {}


def test_clean_line_ends_takes_only_the_spaces_at_a_line_end() -> None:
    assert clean_line_ends(" a   b \n       \n  c  d   \n\n\n") == " a   b\n\n  c  d\n"
    assert clean_line_ends("one\ttwo \t \nthree") == "one\ttwo \t\nthree\n"  # a tab is the text's own
    assert clean_line_ends("") == ""
    assert clean_line_ends(" \n \n") == ""
