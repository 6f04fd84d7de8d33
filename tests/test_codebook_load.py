"""The codebook loader: the project's codebook validates; every broken codebook is refused by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from irr_audit.errors import CodebookError, IrrAuditError, LimitError, RuleError
from irr_audit.io.limits import Limits
from irr_audit.rules.codebook import default_rules_dir, load_codebook, parse_codebook
from irr_audit.rules.load import parse_rule
from irr_audit.rules.model import AppliesWhen
from irr_audit.rules.scale import Scale

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "codebooks" / "comment_study" / "v1.yaml"

PARENT = """rule: failure
version: 1
scale: nominal
codes: ["yes", "no"]
"""
CHILD = """rule: severity
version: 2
scale: ordinal
codes: [low, high]
applies_when: {rule: failure, codes: ["yes"]}
"""
CODEBOOK = """codebook: study
version: 1
rules:
  - {rule: failure, version: 1}
  - {rule: severity, version: 2}
"""


def write_study(root: Path, codebook: str = CODEBOOK, child: str = CHILD) -> Path:
    """A codebook at root/codebooks/study/v1.yaml with its rules under root/rules."""
    (root / "rules" / "failure").mkdir(parents=True)
    (root / "rules" / "failure" / "v1.yaml").write_text(PARENT)
    (root / "rules" / "severity").mkdir()
    (root / "rules" / "severity" / "v2.yaml").write_text(child)
    (root / "codebooks" / "study").mkdir(parents=True)
    path = root / "codebooks" / "study" / "v1.yaml"
    path.write_text(codebook)
    return path


def test_project_codebook_loads_its_rules_in_order() -> None:
    codebook = load_codebook(EXAMPLE)
    assert (codebook.name, codebook.version) == ("comment_study", 1)
    assert codebook.rule_ids == ("explicit_current_failure", "product_area", "severity", "sarcasm")
    scales = [rule.scale for rule in codebook.rules]
    assert scales == [Scale.NOMINAL, Scale.NOMINAL, Scale.ORDINAL, Scale.NOMINAL]
    assert codebook.rule("severity").applies_when == AppliesWhen("explicit_current_failure", ("yes",))
    import hashlib

    assert codebook.digest == "sha256:" + hashlib.sha256(EXAMPLE.read_bytes()).hexdigest()
    for rule_id, digest in codebook.rule_digests.items():
        data = (ROOT / "rules" / rule_id / "v1.yaml").read_bytes()
        assert digest == "sha256:" + hashlib.sha256(data).hexdigest()


def test_rules_folder_is_found_by_layout(tmp_path: Path) -> None:
    assert default_rules_dir(tmp_path / "codebooks" / "study" / "v1.yaml") == tmp_path / "rules"
    assert default_rules_dir(tmp_path / "study.yaml") == tmp_path / "rules"
    path = write_study(tmp_path)
    assert load_codebook(path).rule_ids == ("failure", "severity")
    elsewhere = tmp_path / "study.yaml"
    elsewhere.write_text(CODEBOOK)
    assert load_codebook(elsewhere).rules_label == str(tmp_path / "rules")
    moved = tmp_path / "moved"
    (tmp_path / "rules").rename(moved)
    assert load_codebook(path, rules_dir=moved).rule_ids == ("failure", "severity")


def test_a_conditional_rule_loads_alone() -> None:
    rule = parse_rule(CHILD.encode(), "severity.yaml")
    assert rule.applies_when == AppliesWhen("failure", ("yes",))
    assert parse_rule(PARENT.encode(), "failure.yaml").applies_when is None


@pytest.mark.parametrize(
    ("condition", "key"),
    [
        ("applies_when: failure", "applies_when"),
        ("applies_when: {rule: failure}", "applies_when"),
        ("applies_when: {rule: failure, codes: [yes], when: 1}", "applies_when"),
        ("applies_when: {rule: Failure!, codes: [yes]}", "applies_when.rule"),
        ("applies_when: {rule: severity, codes: [low]}", "applies_when.rule"),
        ("applies_when: {rule: failure, codes: []}", "applies_when.codes"),
        ("applies_when: {rule: failure, codes: yes}", "applies_when.codes"),
        ("applies_when: {rule: failure, codes: [yes, YES]}", "applies_when.codes"),
        ("applies_when: {rule: failure, codes: [[yes]]}", "applies_when.codes[0]"),
    ],
)
def test_bad_applies_when_is_refused_by_key(condition: str, key: str) -> None:
    text = CHILD.replace('applies_when: {rule: failure, codes: ["yes"]}', condition)
    with pytest.raises(RuleError) as raised:
        parse_rule(text.encode(), "severity.yaml")
    assert raised.value.code == "rule-invalid"
    assert f"key {key} " in raised.value.message and "severity.yaml" in raised.value.message


@pytest.mark.parametrize(
    ("codebook", "code", "named"),
    [
        ("- a\n- b\n", "codebook-invalid", "(top level)"),
        ("codebook: study\nversion: 1\n", "codebook-invalid", "key rules is missing"),
        ("codebook: study\nversion: 1\nrules: []\n", "codebook-invalid", "key rules must be"),
        ("codebook: Study\nversion: 1\nrules: [{rule: failure, version: 1}]\n", "codebook-invalid", "key codebook"),
        ("codebook: study\nversion: 0\nrules: [{rule: failure, version: 1}]\n", "codebook-invalid", "key version"),
        ("codebook: study\nversion: 1\nrules: [failure]\n", "codebook-invalid", "key rules[0]"),
        ("codebook: study\nversion: 1\nrules: [{rule: failure}]\n", "codebook-invalid", "key rules[0]"),
        (
            "codebook: study\nversion: 1\nrules: [{rule: failure, version: v1}]\n",
            "codebook-invalid",
            "rules[0].version",
        ),
        ("codebook: study\nversion: 1\nrules: [{rule: Fail ure, version: 1}]\n", "codebook-invalid", "rules[0].rule"),
        ("codebook: study\nversion: 1\nrules: [{rule: comment_id, version: 1}]\n", "codebook-invalid", "column"),
        (
            "codebook: study\nversion: 1\nrules: [{rule: failure, version: 1}]\nextra: 1\n",
            "codebook-invalid",
            "'extra'",
        ),
        (
            "codebook: study\nversion: 1\nrules: [{rule: failure, version: 1}, {rule: failure, version: 1}]\n",
            "codebook-duplicate-rule",
            "rules[1].rule",
        ),
        ("codebook: study\nversion: 1\nrules: [{rule: failure, version: 3}]\n", "codebook-rule-not-found", "v3.yaml"),
        ("codebook: study\nversion: 1\nrules: [{rule: nothing, version: 1}]\n", "codebook-rule-not-found", "nothing"),
        (
            "codebook: study\nversion: 1\nrules: [{rule: severity, version: 2}]\n",
            "codebook-condition-unknown",
            "failure",
        ),
        (
            "codebook: study\nversion: 1\nrules: [{rule: severity, version: 2}, {rule: failure, version: 1}]\n",
            "codebook-condition-order",
            "comes after it",
        ),
        ("codebook: study\nversion: 1\nrules: [{rule: failure, version: 1}\n", "codebook-yaml", "malformed YAML"),
        ("codebook: study\ncodebook: other\nversion: 1\nrules: []\n", "codebook-yaml", "duplicate key"),
    ],
)
def test_broken_codebook_is_refused_naming_file_and_key(tmp_path: Path, codebook: str, code: str, named: str) -> None:
    path = write_study(tmp_path, codebook=codebook)
    with pytest.raises(IrrAuditError) as raised:
        load_codebook(path)
    assert raised.value.code == code
    assert str(path) in raised.value.message and named in raised.value.message
    assert raised.value.hint


def test_condition_on_a_code_the_parent_lacks_is_refused(tmp_path: Path) -> None:
    path = write_study(tmp_path, child=CHILD.replace('codes: ["yes"]}', 'codes: ["maybe"]}'))
    with pytest.raises(CodebookError) as raised:
        load_codebook(path)
    assert raised.value.code == "codebook-condition-code"
    assert "'maybe'" in raised.value.message and "applies_when.codes" in raised.value.message
    assert "yes, no" in (raised.value.hint or "")


def test_version_in_the_rule_file_must_match_the_pin(tmp_path: Path) -> None:
    path = write_study(tmp_path, child=CHILD.replace("version: 2", "version: 1"))
    with pytest.raises(CodebookError) as raised:
        load_codebook(path)
    assert raised.value.code == "codebook-version-mismatch"
    assert "rules[1].version" in raised.value.message and "version: 1" in raised.value.message


def test_rule_id_in_the_rule_file_must_match_its_folder(tmp_path: Path) -> None:
    path = write_study(tmp_path, child=CHILD.replace("rule: severity", "rule: severe"))
    with pytest.raises(CodebookError) as raised:
        load_codebook(path)
    assert raised.value.code == "codebook-rule-mismatch"


def test_a_broken_rule_file_is_named_by_the_rule_loader(tmp_path: Path) -> None:
    path = write_study(tmp_path, child=CHILD.replace("scale: ordinal", "scale: loud"))
    with pytest.raises(RuleError) as raised:
        load_codebook(path)
    assert "severity" in raised.value.message and "v2.yaml" in raised.value.message


def test_too_many_variables_is_a_named_limit(tmp_path: Path) -> None:
    path = write_study(tmp_path)
    with pytest.raises(LimitError) as raised:
        load_codebook(path, limits=Limits(codebook_rules=1))
    assert raised.value.code == "limit-codebook-rules"
    assert "--limit codebook_rules=N" in (raised.value.hint or "")


def test_parse_codebook_takes_the_rules_as_a_mapping() -> None:
    rules = {("failure", 1): parse_rule(PARENT.encode(), "f"), ("severity", 2): parse_rule(CHILD.encode(), "s")}
    codebook = parse_codebook(CODEBOOK.encode(), "study.yaml", rules)
    assert codebook.label == "study v1" and codebook.rule("failure").categories == ("yes", "no")
    with pytest.raises(CodebookError) as raised:
        parse_codebook(CODEBOOK.encode(), "study.yaml", {})
    assert raised.value.code == "codebook-rule-not-found"


def test_missing_codebook_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(IrrAuditError) as raised:
        load_codebook(tmp_path / "nope.yaml")
    assert raised.value.code == "codebook-not-found"
