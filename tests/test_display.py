"""Text from files is escaped one way (display.visible) and shortened one way (display.shortened),
and one set of control characters (display.CONTROL) is refused in ids everywhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from irr_audit.errors import IrrAuditError, SheetError
from irr_audit.io.collector import parse_dataset
from irr_audit.io.display import CONTROL, listed, printable, shortened, visible
from irr_audit.io.sheets import parse_sheet
from irr_audit.report.markdown import md_text
from irr_audit.report.model import GroupSpec
from irr_audit.rules.revisions import Problem


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("a\x1cb", r"a\\x1cb"),  # a file separator, which str.split() takes for white space
        ("a\x1fb", r"a\\x1fb"),
        ("a\x85b", r"a\\x85b"),  # NEL
        ("a\u2028b", r"a\\u2028b"),  # the line separator
        ("a\x0bb\x0cc", r"a\\x0bb\\x0cc"),
        ("a\u00a0b", "a\u00a0b"),  # a no-break space is text, kept as written
        ("  a \t\r\n  b\n", "a b"),  # what Markdown folds anyway
    ],
)
def test_md_text_escapes_what_it_does_not_fold(text: str, shown: str) -> None:
    """``shown`` is Markdown: the backslash of an escape is escaped, so that it shows."""
    assert md_text(text) == shown


def test_a_message_escapes_every_control_character_it_quotes_from_a_file() -> None:
    """A column name with a bidi override is quoted escaped in the message itself, not only
    when the CLI renders it: a library user reads the message as it is."""
    with pytest.raises(SheetError) as raised:
        parse_sheet("comment_id\u202e,kode\na,yes\n".encode(), Path("s.csv"))
    assert "comment_id\\u202e" in raised.value.message
    assert "\u202e" not in raised.value.message


def test_a_rule_problem_shows_control_characters_as_escapes_not_spaces() -> None:
    line = Problem("rule-edited", "rules/a\x1b[2Jb/v1.yaml", "changed\tafter release.", "restore it.").render()
    assert line == "rules/a\\x1b[2Jb/v1.yaml: [rule-edited] changed\\tafter release. Fix: restore it."


@pytest.mark.parametrize("character", ["\x01", "\x1b", "\x7f", "\x85", "\x9f"])
def test_the_sheet_reader_and_the_collector_refuse_the_same_control_characters(character: str) -> None:
    assert CONTROL.search(character)
    with pytest.raises(SheetError, match="control character"):
        parse_sheet(f"comment_id,code\na{character}b,yes\n".encode(), Path("s.csv"))
    item = json.dumps([{"commentId": f"a{character}b", "body": "b", "status": "ok"}]).encode()
    (parsed,) = parse_dataset(item, "d.json").items
    assert parsed.comment_id is None and parsed.id_problem is not None


@pytest.mark.parametrize("character", ["\u00a0", "\u202e", "\u00e9"])
def test_what_is_no_control_character_is_kept_in_an_id(character: str) -> None:
    assert not CONTROL.search(character)
    sheet = parse_sheet(f"comment_id,code\na{character}b,yes\n".encode(), Path("s.csv"))
    assert sheet.comment_ids.to_pylist() == [f"a{character}b"]


def test_one_shortener_and_one_list() -> None:
    assert shortened("x" * 100, 10) == "x" * 7 + "..."
    assert printable("\x1b" * 100, 12) == visible("\x1b" * 3)[:9] + "..."
    assert listed([f"c{n}" for n in range(1006)]) == "c0, c1, c2, c3, c4 and 1,001 more"
    with pytest.raises(IrrAuditError) as raised:
        GroupSpec.of("g", ("a" * 100, "a" * 100, "b"), "r")
    assert raised.value.message == f"--group names {'a' * 57 + '...'!r} more than once."
