"""The rule loader: the project's rule validates; every broken rule is refused by name."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from irr_audit.cli import app
from irr_audit.errors import RuleError
from irr_audit.rules.load import load_rule, parse_rule
from irr_audit.rules.model import CodeStatus
from irr_audit.rules.scale import Scale

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_SHEETS = [str(ROOT / "examples" / "sheets" / name) for name in ("alice.csv", "bob.csv")]

GOOD = """rule: demo
version: 1
scale: nominal
codes:
  - {code: "yes", label: Yes}
  - {code: "no", label: No}
missing_codes: [unknown]
aliases: {y: "yes"}
"""


def test_project_rule_is_valid_and_complete() -> None:
    rule = load_rule(ROOT / "rules" / "explicit_current_failure" / "v1.yaml")
    assert (rule.id, rule.version, rule.scale) == ("explicit_current_failure", 1, Scale.NOMINAL)
    assert rule.categories == ("yes", "no")
    assert rule.missing_codes == ("unknown",)
    assert all(rule.examples[kind] for kind in ("positive", "negative", "ambiguous"))
    assert rule.digest.startswith("sha256:") and len(rule.digest) == 7 + 64


def test_yaml_booleans_stay_text() -> None:
    rule = parse_rule(b"rule: demo\nversion: 1\nscale: nominal\ncodes: [yes, no, on, off]\n", "r.yaml")
    assert rule.categories == ("yes", "no", "on", "off")


@pytest.mark.parametrize(
    ("value", "hint"),
    [
        (
            "1e3",
            "YAML reads '1e3' as text: it reads an exponent as a number only after a dot and with its sign; "
            "write 1000 or 1.0e+3.",
        ),
        ("3.5E20", "write 3.5E+20."),  # too large to write out: only the exponent
        ("1e-7", "write 1.0e-7."),
        ('"2.5"', "a quoted number is text: write it without quotes, as 2.5."),
        ('"1.0e+3"', "a quoted number is text: write it without quotes, as 1000."),
        ("high", None),  # no number at all: no hint
        ('"nan"', None),
    ],
)
def test_a_value_yaml_reads_as_text_is_refused_saying_how_to_write_the_number(value: str, hint: str | None) -> None:
    text = f"rule: r\nversion: 1\nscale: interval\ncodes:\n  - {{code: a, value: {value}}}\n  - {{code: b, value: 1}}\n"
    with pytest.raises(RuleError, match="codes\\[0\\].value must be a number") as refused:
        parse_rule(text.encode(), "r.yaml")
    assert (refused.value.hint is None) if hint is None else hint in (refused.value.hint or "")


@pytest.mark.parametrize(
    ("raw", "status", "code"),
    [
        ("yes", CodeStatus.VALID, "yes"),
        ("  YES ", CodeStatus.VALID, "yes"),
        ("Yes\u00a0", CodeStatus.VALID, "yes"),  # a no-break space from a spreadsheet
        ("\uff59\uff45\uff53", CodeStatus.VALID, "yes"),  # full-width letters
        ("Y", CodeStatus.VALID, "yes"),  # alias, case-insensitive
        ("Unknown", CodeStatus.UNKNOWN, None),
        ("   ", CodeStatus.BLANK, None),
        ("positve", CodeStatus.INVALID, None),
    ],
)
def test_classify(raw: str, status: CodeStatus, code: str | None) -> None:
    assert parse_rule(GOOD.encode(), "r.yaml").classify(raw) == (status, code)


BROKEN = {
    "unknown scale": (GOOD.replace("scale: nominal", "scale: nominall"), "key scale has unknown scale 'nominall'"),
    "duplicate codes": (
        GOOD.replace('{code: "no", label: No}', '{code: "Yes", label: No}'),
        "key codes has duplicate code 'Yes'",
    ),
    "missing code that is valid": (
        GOOD.replace("missing_codes: [unknown]", "missing_codes: [unknown, no]"),
        "key missing_codes lists 'no', which is also a valid code",
    ),
    "alias to no code": (
        GOOD.replace('aliases: {y: "yes"}', 'aliases: {y: "yess"}'),
        "key aliases.y points at 'yess', which is no code of this rule",
    ),
    "version zero": (GOOD.replace("version: 1", "version: 0"), "from 1 to 999,999 (got 0)"),
    "version text": (GOOD.replace("version: 1", "version: v1"), "from 1 to 999,999 (got 'v1')"),
    "version float": (GOOD.replace("version: 1", "version: 1.5"), "from 1 to 999,999 (got 1.5)"),
    "version too large": (GOOD.replace("version: 1", "version: 1000000"), "from 1 to 999,999 (got 1000000)"),
    "rule id too long": (
        GOOD.replace("rule: demo", "rule: " + "r" * 101),
        "key rule is 101 characters long; a rule id has at most 100",
    ),
    "malformed yaml": (GOOD.replace("codes:\n", "codes: [\n"), "malformed YAML at line"),
    "duplicate key": (GOOD + "scale: ordinal\n", "duplicate key 'scale'"),
    "alias bomb": ('a: &a ["x"]\nb: [*a, *a]\n' + GOOD, "aliases (*name) are not allowed"),
    "python tag": (GOOD + "x_evil: !!python/object/apply:os.system ['true']\n", "malformed YAML"),
    "unknown key": (GOOD + "missing_code: [dunno]\n", "key 'missing_code' is not a rule key"),
    "interval without values": (GOOD.replace("scale: nominal", "scale: interval"), "has no numeric value"),
    "one code": (GOOD.replace('  - {code: "no", label: No}\n', ""), "key codes must be a list of at least two codes"),
    "bad id": (GOOD.replace("rule: demo", "rule: Demo Rule"), "key rule must be an id"),
    "not a mapping": ("- just\n- a list\n", "must be a mapping"),
}


@pytest.mark.parametrize("case", sorted(BROKEN), ids=sorted(BROKEN))
def test_broken_rule_is_refused_with_exit_2_naming_the_key(case: str, tmp_path: Path) -> None:
    text, message = BROKEN[case]
    rule_file = tmp_path / "v1.yaml"
    rule_file.write_text(text)
    with pytest.raises(RuleError) as caught:
        load_rule(rule_file)
    assert message in caught.value.message
    result = CliRunner().invoke(app, ["score", *EXAMPLE_SHEETS, "--rule", str(rule_file)], catch_exceptions=False)
    assert result.exit_code == 2
    assert message in result.stderr
    assert str(rule_file) in result.stderr
    assert "Traceback" not in result.output


def test_missing_rule_file(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["score", *EXAMPLE_SHEETS, "--rule", str(tmp_path / "nope.yaml")], catch_exceptions=False
    )
    assert result.exit_code == 2
    assert "Error [rule-not-found]" in result.stderr
