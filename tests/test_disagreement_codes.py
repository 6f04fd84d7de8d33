"""The codes of a report's disagreements as adjudication checks them: from the lazily listed
disagreements, a mapping that makes a unit's codes only when asked for (ListedCodes), equal to
the dict made from every listed item."""

from __future__ import annotations

from pathlib import Path

import pytest

from irr_audit.bundle.adjudication import ListedCodes, disagreement_codes
from irr_audit.io.sheets import read_sheets
from irr_audit.join.join import join_sheets
from irr_audit.report.model import Disagreements, disagreement_units
from irr_audit.rules.load import load_rule

ROOT = Path(__file__).resolve().parents[1]
SHEETS = [ROOT / "examples" / "sheets" / name for name in ("alice.csv", "bob.csv")]
RULE = ROOT / "rules" / "explicit_current_failure" / "v1.yaml"


@pytest.fixture(scope="module")
def listed() -> Disagreements:
    join = join_sheets(read_sheets(SHEETS), load_rule(RULE))
    return Disagreements(join, disagreement_units(join))


def test_the_lazy_codes_equal_those_of_every_listed_item(listed: Disagreements) -> None:
    expected = {item["comment_id"]: dict(item["codes"]) for item in listed}
    codes = disagreement_codes(listed)
    assert isinstance(codes, ListedCodes)
    assert len(expected) == 3  # the bundled example's three disagreements
    assert list(codes) == list(expected) == listed.comment_ids()
    assert len(codes) == len(expected)
    assert dict(codes) == expected
    assert all(unit in codes for unit in expected)
    assert "no such unit" not in codes and 7 not in codes
    with pytest.raises(KeyError):
        codes["no such unit"]
    assert codes.get("no such unit") is None


def test_a_plain_list_still_gives_a_dict(listed: Disagreements) -> None:
    items = list(listed)
    assert disagreement_codes(items) == {item["comment_id"]: dict(item["codes"]) for item in items}
