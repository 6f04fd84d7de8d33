"""What the API hands back, used as a notebook uses it: a result cannot be changed through what
it returns (a DataFrame is a copy, a document read-only), a Rule is hashable as a frozen value,
and a DataFrame holding its ids in its index is refused with that fix."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path

import pandas as pd
import pytest

import irr_audit

ROOT = Path(__file__).resolve().parents[1]
RULE = str(ROOT / "rules" / "explicit_current_failure" / "v1.yaml")
EXAMPLE = [str(ROOT / "examples" / "sheets" / name) for name in ("alice.csv", "bob.csv")]
CODEBOOK = str(ROOT / "codebooks" / "comment_study" / "v1.yaml")
CODED = [str(ROOT / "examples" / "codebook" / "sheets" / f"{coder}.csv") for coder in ("alice", "bob", "carol")]


def test_a_codebook_audits_missingness_is_a_copy_on_each_access() -> None:
    study = irr_audit.audit_codebook(CODED, CODEBOOK)
    shown = study.missingness
    rows = len(shown)
    assert rows > 0
    shown.loc[:, "reason"] = "changed"
    shown["added"] = 1
    again = study.missingness
    assert len(again) == rows and "changed" not in set(again["reason"]) and "added" not in again.columns


def test_a_comparison_is_read_only_and_its_copies_are_plain() -> None:
    result = irr_audit.audit(EXAMPLE, RULE)
    compared = irr_audit.compare(result, result, bootstrap=100, seed=1)
    before = compared.to_json()
    with pytest.raises(TypeError):
        compared.document["units"]["relation"] = "disjoint"  # type: ignore[index]
    with pytest.raises(TypeError):
        compared.document["extra"] = 1  # type: ignore[index]
    assert compared.to_json() == before
    assert result.with_comparison(compared).to_dict()["comparison"]["units"]["relation"] == "same"
    plain = compared.to_dict()
    plain["units"]["relation"] = "disjoint"
    assert compared.to_json() == before
    for copied in (copy.deepcopy(compared), pickle.loads(pickle.dumps(compared))):
        assert copied.to_json() == before
        with pytest.raises(TypeError):
            copied.document["extra"] = 1  # type: ignore[index]


def test_a_rule_is_hashable_and_equal_rules_hash_alike() -> None:
    by_str, by_path = irr_audit.load_rule(RULE), irr_audit.load_rule(Path(RULE))
    assert by_str == by_path and hash(by_str) == hash(by_path) == hash(copy.deepcopy(by_str))
    other = irr_audit.load_rule(
        {"rule": "mentions_a_bug", "version": 1, "scale": "nominal", "codes": [{"code": "yes"}, {"code": "no"}]}
    )
    assert len({by_str, by_path, other}) == 2
    assert {by_str: "audited"}[by_path] == "audited"


@pytest.mark.parametrize(
    ("data", "column"),
    [
        (
            {
                "ann": pd.DataFrame({"comment_id": ["a", "b"], "code": ["yes", "no"]}).set_index("comment_id"),
                "ben": pd.DataFrame({"comment_id": ["a", "b"], "code": ["yes", "no"]}),
            },
            "comment_id",
        ),
        (
            pd.DataFrame({"comment_id": ["a", "a"], "coder": ["ann", "ben"], "code": ["yes", "no"]}).set_index(
                ["coder", "comment_id"]
            ),
            "comment_id",
        ),
        (
            pd.DataFrame({"comment_id": ["a", "a"], "coder": ["ann", "ben"], "code": ["yes", "no"]}).set_index("coder"),
            "coder",
        ),
    ],
)
def test_a_column_held_in_the_index_is_refused_with_reset_index(data: object, column: str) -> None:
    with pytest.raises(irr_audit.SheetError) as refused:
        irr_audit.audit(data, RULE)  # type: ignore[arg-type]
    assert refused.value.code == "sheet-missing-column"
    assert f"has {column!r} in its index, not as a column" in refused.value.message
    assert refused.value.hint == "make it a column first: frame.reset_index()."


def test_the_results_of_join_import_and_compare_show_as_one_line(tmp_path: Path) -> None:
    # a notebook shows the repr of a cell's last value: the generated one printed every join (100 KB for 24 units)
    joined = irr_audit.join_folder(EXAMPLE, RULE, tmp_path / "joined")
    assert repr(joined) == f"<JoinFolder explicit_current_failure v1: alice, bob; {len(joined.written)} files written>"
    book = irr_audit.join_codebook_folder(CODED, CODEBOOK, tmp_path / "book")
    assert repr(book) == (
        "<CodebookJoinFolder comment_study v1: explicit_current_failure, product_area, severity, sarcasm; "
        f"{len(book.written)} files written>"
    )
    result = irr_audit.audit(EXAMPLE, RULE)
    compared = irr_audit.compare(result, result, bootstrap=100, seed=1)
    count = len(compared.to_dict()["differences"])
    assert repr(compared) == (
        f"<Comparison A explicit_current_failure v1 -> B explicit_current_failure v1: units same, {count} coefficients>"
    )
    by_variable = irr_audit.Comparison({"variables": {"severity": {}, "sarcasm": {}}})
    assert repr(by_variable) == "<Comparison of codebook bundles: severity, sarcasm>"
    export = str(ROOT / "tests" / "fixtures" / "importers" / "label_studio" / "export.json")
    imported = irr_audit.import_export("label-studio", export, RULE, tmp_path / "imported", question="failure")
    assert repr(imported) == (
        "<ImportRun explicit_current_failure v1: alice_example.org, bob_example.org; "
        f"9 records, {len(imported.written)} files written>"
    )


BUG = {"rule": "mentions_a_bug", "version": 1, "scale": "nominal", "codes": [{"code": "yes"}, {"code": "no"}]}


@pytest.mark.parametrize(
    "changed",
    [
        {"codes": {"yes": 1}},
        {"codes": [{"label": "Yes"}, {"code": "no"}]},
        {"codes": [{"code": "yes", "label": 5}, {"code": "no"}]},
        {"missing_codes": "unknown"},
        {"missing_codes": ["unknown", "unknown"]},
        {"aliases": ["y"]},
        {"examples": ["It crashes"]},
        {"examples": {"positive": "It crashes"}},
        {"changelog": 5},
    ],
)
def test_every_rule_error_names_its_fix(changed: dict[str, object]) -> None:
    # docs/api.md, "Errors": the message names the key, the hint the fix; these had no hint
    with pytest.raises(irr_audit.RuleError) as refused:
        irr_audit.load_rule({**BUG, **changed})
    assert refused.value.hint and "Hint: " in refused.value.render()


def test_a_file_that_is_no_rule_is_refused_with_a_hint() -> None:
    with pytest.raises(irr_audit.RuleError) as refused:
        irr_audit.load_rule(EXAMPLE[0])
    assert "(top level) must be a mapping" in refused.value.message and "rule file" in (refused.value.hint or "")


def test_a_rule_mapping_that_is_not_the_folders_is_named_once(tmp_path: Path) -> None:
    irr_audit.join_folder(EXAMPLE, RULE, tmp_path / "joined")
    with pytest.raises(irr_audit.UsageError) as refused:
        irr_audit.audit(tmp_path / "joined", BUG)
    assert refused.value.code == "usage-rule-mismatch"
    assert refused.value.message.startswith("the rule mapping (mentions_a_bug v1, sha256:")


def test_results_holding_frames_or_arrays_compare_and_hash_by_identity(tmp_path: Path) -> None:
    # the generated == compared DataFrames and arrays field by field: pandas refuses their truth value
    first, second = irr_audit.audit(EXAMPLE, RULE).pairs[0], irr_audit.audit(EXAMPLE, RULE).pairs[0]
    assert first == first and first != second and first not in [second]
    joined = irr_audit.join_folder(EXAMPLE, RULE, tmp_path / "joined")
    again = irr_audit.join_folder(EXAMPLE, RULE, tmp_path / "again")
    book = irr_audit.join_codebook_folder(CODED, CODEBOOK, tmp_path / "book")
    assert joined != again and len({first, second, joined, again, book}) == 5


@pytest.mark.parametrize(
    "plan",
    [
        lambda: irr_audit.plan_alpha(0.8, codes=4),
        lambda: irr_audit.plan_kappa(0.6, 0.4, shares=[0.5, 0.3, 0.2]),
        lambda: irr_audit.plan_kappa(0.7, 0.85, rates=[0.5, 0.5]),
        lambda: irr_audit.plan_half_width(0.7, 0.3, 0.1),
    ],
)
def test_a_plans_inputs_and_figures_are_read_only_and_its_copies_are_plain(plan: object) -> None:
    planned = plan()  # type: ignore[operator]
    before = planned.to_dict()
    with pytest.raises(TypeError, match="read-only"):
        planned.figures["extra"] = 1
    with pytest.raises(TypeError, match="read-only"):
        planned.inputs[next(iter(planned.inputs))] = 0.1
    assert planned.to_dict() == before
    plain = planned.to_dict()
    plain["figures"]["extra"] = 1
    plain["inputs"].clear()
    assert planned.to_dict() == before
    for copied in (copy.copy(planned), copy.deepcopy(planned), pickle.loads(pickle.dumps(planned))):
        assert copied.to_dict() == before
        with pytest.raises(TypeError):
            copied.figures["extra"] = 1


@pytest.mark.parametrize("missing", ["rules", "codebook", "sheets"])
def test_a_file_a_codebook_bundle_names_but_does_not_hold_is_refused_with_a_hint(tmp_path: Path, missing: str) -> None:
    # docs/api.md, "Errors": every error has a hint with the fix; these three had none
    import json

    from irr_audit.bundle.codebook import variables_from_files
    from tests.conftest import run

    frozen = run("freeze", *CODED, "--codebook", CODEBOOK, "--into", tmp_path / "audits", "--quiet")
    assert frozen.exit_code == 0, frozen.output
    bundle = Path(frozen.stdout.strip().split("  ", 1)[1])
    manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    named = manifest[missing][0]["file"] if missing != "codebook" else manifest["codebook"]["file"]
    files = {record["path"]: (bundle / record["path"]).read_bytes() for record in manifest["files"]}
    del files[named]
    with pytest.raises(irr_audit.IrrAuditError) as refused:
        variables_from_files(bundle, manifest, files)
    assert refused.value.code == "bundle-file" and refused.value.message == f"{named} cannot be read"
    assert "irr-audit verify" in (refused.value.hint or "") and "restore the bundle" in (refused.value.hint or "")


def test_a_codebook_audit_shows_its_own_html_report_in_a_frame_as_an_audit_does() -> None:
    # a notebook showed a CodebookAudit as its one-line repr, an Audit as its report
    import html
    import re

    study, result = irr_audit.audit_codebook(CODED, CODEBOOK), irr_audit.audit(EXAMPLE, RULE)
    cases = [(study._repr_html_(), study.to_html()), (result._repr_html_(), result.to_html())]
    pattern = r'<iframe title="irr-audit report" srcdoc="([^"]*)" sandbox="allow-scripts" .*</iframe>'
    for shown, page in cases:
        match = re.fullmatch(pattern, shown)
        assert match is not None and html.unescape(match.group(1)) == page
    frames = [shown.replace(html.escape(page, quote=True), "") for shown, page in cases]
    assert frames[0] == frames[1]  # the same frame around each report
