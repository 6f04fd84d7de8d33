"""The codes of a report's disagreements as adjudication checks them: from the lazily listed
disagreements, a mapping that makes a unit's codes only when asked for (ListedCodes), equal to
the dict made from every listed item."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from irr_audit.bundle.adjudication import ListedCodes, disagreement_codes, disagreement_texts, template_csv
from irr_audit.io.csvtables import COLUMNWISE_FROM
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


def many_disagreements(tmp_path: Path, units: int = 16_000, with_text: bool = True) -> Disagreements:
    """A join of three coders over ``units`` units, one sheet with a text column of hostile cells
    (quotes, line breaks, formula prefixes, control characters): past the size from which a
    template is made a column at a time."""
    rng = np.random.default_rng(5)
    ids = [f"t1_{n:06x}" for n in range(units)]
    texts = ['said "no", then =SUM(1)', "two\nlines", "+1 tab\there", "café \x1b[31m", "", "plain"]
    for coder in ("ann", "ben", "cat"):
        frame = pd.DataFrame({"comment_id": ids, "code": rng.choice(["yes", "no"], size=units)})
        if coder == "ann" and with_text:
            frame["body"] = [texts[n % len(texts)] for n in range(units)]
        frame.to_csv(tmp_path / f"{coder}.csv", index=False)
    join = join_sheets(read_sheets(sorted(tmp_path.glob("*.csv"))), load_rule(RULE))
    return Disagreements(join, disagreement_units(join))


@pytest.mark.parametrize("decided", [False, True])
def test_the_template_from_the_lazy_codes_is_the_template_from_every_listed_item(tmp_path: Path, decided: bool) -> None:
    listed = many_disagreements(tmp_path)
    items = list(listed)
    coders = list(listed.join.coders)
    current = (
        {item["comment_id"]: {"final_code": "yes", "note": "agreed, =1"} for item in items[::7]} if decided else {}
    )
    lazy = template_csv(disagreement_codes(listed), coders, current, disagreement_texts(listed))
    every = template_csv(disagreement_codes(items), coders, current, disagreement_texts(items))
    assert len(items) > COLUMNWISE_FROM and lazy == every
    assert lazy.count("\n") > len(items)  # a text with a line break stays one quoted cell


def test_no_text_is_looked_for_where_no_sheet_has_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    listed = many_disagreements(tmp_path, units=100, with_text=False)
    assert len(listed) and not listed.have_texts()
    monkeypatch.setattr(Disagreements, "__iter__", lambda self: pytest.fail("each unit's dict made to find no text"))
    assert disagreement_texts(listed) == {}
