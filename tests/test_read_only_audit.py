"""An audit's numbers cannot be changed after the fact: its sections and its report's data are
read-only at every depth (irr_audit._readonly), every renderer still renders them, and what
to_dict() and copies give is plain data, changeable without changing the audit."""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import irr_audit
from irr_audit._readonly import ReadOnlyDict, ReadOnlyList, read_only

ROOT = Path(__file__).resolve().parents[1]
RULE = ROOT / "rules" / "explicit_current_failure" / "v1.yaml"
EXAMPLE = [ROOT / "examples" / "sheets" / f"{coder}.csv" for coder in ("alice", "bob")]
CODEBOOK = ROOT / "codebooks" / "comment_study" / "v1.yaml"
CODEBOOK_SHEETS = [ROOT / "examples" / "codebook" / "sheets" / f"{coder}.csv" for coder in ("alice", "bob", "carol")]


@pytest.fixture(scope="module")
def audited() -> irr_audit.Audit:
    return irr_audit.audit(EXAMPLE, RULE, windows=2, seed=1)


def renders(audit: irr_audit.Audit) -> list[str]:
    return [
        audit.to_json(),
        audit.to_json(include_disagreements=False),
        audit.to_markdown(),
        audit.to_html(),
        audit.to_methods(),
        audit.to_text(),
        audit.to_text(width=None),
    ]


EDITS: dict[str, Callable[[irr_audit.Audit], Any]] = {
    "a section's value": lambda audit: audit.sections["drift"].__setitem__("windows", 9),
    "a section's list": lambda audit: audit.sections["drift"]["named"].append({}),
    "a new section": lambda audit: audit.sections.__setitem__("extra", {}),
    "a coefficient": lambda audit: audit.report.agreement["metrics"]["cohen_kappa"].__setitem__("value", 0.99),
    "a coefficient, by update": lambda audit: audit.report.agreement["metrics"]["cohen_kappa"].update(value=0.99),
    "a table cell": lambda audit: audit.report.agreement["table"][0].__setitem__(0, 99),
    "a unit count": lambda audit: audit.report.units.__setitem__("fully_coded", 99),
    "a sheet's record": lambda audit: audit.report.sheets[0].__setitem__("rows", 0),
    "the missingness": lambda audit: audit.report.missingness.clear(),
    "a pair, removed": lambda audit: audit.report.agreement["pairs"].pop(),
    "a list, extended": lambda audit: audit.report.agreement["pairs"].__iadd__([{}]),
}


@pytest.mark.parametrize("edit", EDITS.values(), ids=EDITS.keys())
def test_an_audit_cannot_be_changed_after_the_fact(audited: irr_audit.Audit, edit: Callable[..., Any]) -> None:
    before = renders(audited)
    with pytest.raises(TypeError, match="read-only"):
        edit(audited)
    assert renders(audited) == before


def test_every_renderer_renders_the_read_only_data(audited: irr_audit.Audit) -> None:
    json_text, _, markdown, *_ = renders(audited)
    assert json.loads(json_text)["drift"] == audited.to_dict()["drift"]
    assert "kappa" in markdown.lower()
    audited.console_report()
    audited._repr_html_()


def test_copies_are_plain_and_change_nothing(audited: irr_audit.Audit) -> None:
    before = audited.to_json()
    document = audited.to_dict()
    assert type(document["drift"]) is dict and type(document["pairs"]) is list
    document["metrics"]["cohen_kappa"]["value"] = 0.99
    document["drift"]["named"].clear()
    drift = audited.drift
    assert drift is not None
    drift.clear()
    copied = copy.copy(audited.sections["drift"])
    copied["windows"] = 9
    assert audited.to_json() == before


def test_a_copied_or_reloaded_audit_is_read_only_too(audited: irr_audit.Audit) -> None:
    for again in (copy.deepcopy(audited), pickle.loads(pickle.dumps(audited))):
        assert again.to_json() == audited.to_json()
        with pytest.raises(TypeError):
            again.sections["drift"]["named"].append({})
        with pytest.raises(TypeError):
            again.report.agreement["metrics"]["cohen_kappa"]["value"] = 0.99


def test_a_comparison_added_is_read_only(audited: irr_audit.Audit) -> None:
    compared = audited.with_comparison(irr_audit.compare(audited, audited))
    with pytest.raises(TypeError):
        compared.sections["comparison"]["differences"] = {}
    assert compared.to_json() == compared.to_json()


def test_a_codebook_audit_cannot_be_changed_after_the_fact() -> None:
    audited = irr_audit.audit_codebook(CODEBOOK_SHEETS, CODEBOOK)
    before = audited.reliability
    with pytest.raises(TypeError):
        audited.audits["sarcasm"] = audited.audits["product_area"]  # type: ignore[index]
    with pytest.raises(TypeError):
        audited.gates["sarcasm"] = 0.0  # type: ignore[index]
    with pytest.raises(TypeError):
        next(iter(audited.audits["sarcasm"].report.agreement["metrics"].values()))["value"] = 1.0
    assert audited.reliability == before


def test_read_only_walks_every_depth_once() -> None:
    data = {"a": [{"b": [1, 2]}, (3, {"c": 4})]}
    made = read_only(data)
    assert made == data and isinstance(made, ReadOnlyDict) and isinstance(made["a"], ReadOnlyList)
    assert isinstance(made["a"][0]["b"], ReadOnlyList) and isinstance(made["a"][1][1], ReadOnlyDict)
    assert read_only(made) is made
    with pytest.raises(TypeError):
        made["a"][1][1]["c"] = 5
    assert data == {"a": [{"b": [1, 2]}, (3, {"c": 4})]}  # the data given is not changed


ARRAY_EDITS: dict[str, Callable[[irr_audit.Audit], Any]] = {
    "a joined code": lambda audit: audit.join.codes.__setitem__((0, 0), 1),
    "a cell's status": lambda audit: audit.join.status.__setitem__((0, 0), 0),
    "a log entry": lambda audit: audit.join.entries.reason.__setitem__(0, 0),
    "fully coded": lambda audit: audit.join.fully_coded.__setitem__(0, False),
    "a row behind a cell": lambda audit: audit.join.positions.__setitem__((0, 0), 3),
    "the disagreeing units": lambda audit: audit.report.disagreements.units.__setitem__(0, 0),
}


@pytest.mark.parametrize("edit", ARRAY_EDITS.values(), ids=ARRAY_EDITS.keys())
def test_the_joins_arrays_cannot_be_changed_after_the_fact(edit: Callable[..., Any]) -> None:
    """The report lists the disagreements from the join's arrays: they are read-only (no copy)."""
    audited = irr_audit.audit(EXAMPLE, RULE)
    before = renders(audited)
    with pytest.raises(ValueError, match="read-only"):
        edit(audited)
    assert renders(audited) == before
