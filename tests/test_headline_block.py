"""The answer first: the `headline` of a report is the recommended coefficient with its interval
(analytic where a formula exists, else Krippendorff's bootstrap by default), the units, raw
agreement, the convention band and the paradox warning; its numbers are the metrics' own."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import irr_audit
from irr_audit.cli import app
from irr_audit.metrics.alpha_bootstrap import krippendorff_bootstrap
from irr_audit.metrics.extended import KALPHA_STREAM
from irr_audit.metrics.patterns import compress
from irr_audit.report.headline import HEADLINE_BOOTSTRAP, HEADLINE_SEED, max_kappa_many
from irr_audit.rules.scale import Scale

ROOT = Path(__file__).resolve().parent.parent
SHEETS = [ROOT / "examples/sheets/alice.csv", ROOT / "examples/sheets/bob.csv"]
RULE = ROOT / "rules/explicit_current_failure/v1.yaml"
CASES = ROOT / "tests/examples"
ORDINAL = {"rule": "levels", "version": 1, "scale": "ordinal", "codes": ["0", "1", "2", "3"], "missing_codes": ["x"]}
PANEL = {
    "ann": "0 1 2 3 3 2 1 0 2 x 1 2",
    "ben": "0 1 2 3 2 2 1 1 2 3 1 2",
    "cat": "0 2 2 3 3 1 1 0 3 3 1 1",
}


def case(name: str) -> irr_audit.Audit:
    folder = CASES / name
    return irr_audit.audit(sorted((folder / "sheets").glob("*.csv")), folder / "rule.yaml")


def panel(codes: dict[str, str] = PANEL) -> dict[str, pd.DataFrame]:
    return {
        coder: pd.DataFrame({"comment_id": [f"u{i}" for i in range(len(row.split()))], "code": row.split()})
        for coder, row in codes.items()
    }


def test_the_headline_of_the_example_is_cohens_kappa_with_its_analytic_interval() -> None:
    report = irr_audit.audit(SHEETS, RULE).to_dict()
    headline, kappa = report["headline"], report["metrics"]["cohen_kappa"]
    assert headline["metric"] == "cohen_kappa" and headline["why"] == "two coders, a nominal rule"
    assert headline["value"] == kappa["value"] == pytest.approx(0.7)
    assert [headline["interval"]["low"], headline["interval"]["high"]] == kappa["ci"]
    assert headline["interval"]["kind"] == "analytic" and headline["interval"]["level"] == 0.95
    assert headline["interval"]["method"] == kappa["ci_method"] and headline["interval"]["clipped"] is True
    assert headline["units"] == {"fully_coded": 20, "total": 22}
    assert headline["raw_agreement"] == report["metrics"]["po"]["value"] == 0.85
    assert headline["band"] == {
        "label": "substantial",
        "convention": report["interpretation"]["cohen_kappa"]["convention"],
    }
    assert headline["warning"] is None


def test_three_coders_get_alpha_at_the_rules_level() -> None:
    report = case("E_three_raters").to_dict()
    headline, alpha = report["headline"], report["metrics"]["krippendorff_alpha"]
    assert headline["metric"] == "krippendorff_alpha" and headline["label"] == "Krippendorff's alpha (nominal)"
    assert headline["value"] == alpha["value"]
    assert [headline["interval"]["low"], headline["interval"]["high"]] == alpha["ci"]  # Gwet's SE: analytic
    assert "Krippendorff (2004)" in headline["band"]["convention"]


def test_ordinal_alpha_gets_krippendorffs_bootstrap_by_default() -> None:
    report = irr_audit.audit(panel(), ORDINAL).to_dict()
    headline = report["headline"]
    assert headline["why"] == "3 coders, an ordinal rule"
    assert "ci" not in report["metrics"]["krippendorff_alpha"]  # no formula for ordinal alpha's SE
    interval = headline["interval"]
    assert interval["kind"] == "bootstrap"
    assert (interval["n_boot"], interval["seed"]) == (HEADLINE_BOOTSTRAP, HEADLINE_SEED)
    assert f"{HEADLINE_BOOTSTRAP} replicates, seed {HEADLINE_SEED}" in interval["method"]
    # the same numbers as Krippendorff's bootstrap run directly on the fully coded units
    codes = np.array([[int(c) if c != "x" else -1 for c in PANEL[coder].split()] for coder in PANEL]).T
    full = compress(codes[(codes >= 0).all(axis=1)], 4)
    rng = np.random.default_rng(np.random.SeedSequence(HEADLINE_SEED, spawn_key=(KALPHA_STREAM,)))
    direct = krippendorff_bootstrap(full, Scale.ORDINAL, None, HEADLINE_BOOTSTRAP, rng)
    assert [interval["low"], interval["high"]] == direct["ci"]
    assert interval["low"] <= headline["value"] <= interval["high"]
    assert "krippendorff_bootstrap" not in report  # the section --bootstrap asks for stays away
    assert irr_audit.audit(panel(), ORDINAL).to_json() == irr_audit.audit(panel(), ORDINAL).to_json()


def test_bootstrap_and_seed_override_the_headline_bootstrap_and_agree_with_the_section() -> None:
    report = irr_audit.audit(panel(), ORDINAL, bootstrap=300, seed=5).to_dict()
    interval = report["headline"]["interval"]
    assert (interval["n_boot"], interval["seed"]) == (300, 5)
    assert [interval["low"], interval["high"]] == report["krippendorff_bootstrap"]["metrics"]["ci"]


def test_the_interval_takes_the_ci_level() -> None:
    wide = irr_audit.audit(panel(), ORDINAL).to_dict()["headline"]["interval"]
    narrow = irr_audit.audit(panel(), ORDINAL, ci_level=0.8).to_dict()["headline"]["interval"]
    assert narrow["level"] == 0.8
    assert wide["low"] <= narrow["low"] <= narrow["high"] <= wide["high"]
    assert narrow["high"] - narrow["low"] < wide["high"] - wide["low"]


def test_an_undefined_headline_stays_undefined_with_its_reason() -> None:
    report = case("C_undefined_kappa").to_dict()
    headline = report["headline"]
    assert headline["defined"] is False and headline["value"] is None
    assert headline["reason"] == report["metrics"]["cohen_kappa"]["reason"]
    assert headline["interval"] is None and headline["band"] is None
    assert headline["interval_note"] == "the estimate is undefined, so it has no interval"
    text = case("C_undefined_kappa").to_markdown()
    assert f"### Cohen's kappa is undefined: {headline['reason']}".replace("_", "\\_") in text.replace("\\=", "=")


def test_the_paradox_warning_and_the_largest_kappa() -> None:
    report = case("B_high_agreement_negative_kappa").to_dict()
    warning = report["headline"]["warning"]
    assert warning.startswith("Kappa paradox: the coders agree on 90.0% of codes, but Cohen's kappa is only -0.05")
    assert report["paradox"]["applies"] is True
    assert report["paradox"]["max_kappa"]["value"] == report["metrics"]["max_kappa"]["value"]
    assert report["paradox"]["chance_agreement"] == report["metrics"]["pe"]["value"]


def test_the_largest_fleiss_kappa_of_many_coders_with_two_codes_is_reached() -> None:
    """With two codes, coder i coding the first n_i units 'yes' reaches every pair's largest agreement
    at once: the bound is Fleiss' kappa of that arrangement."""
    yes = [2, 3, 5, 9]
    n = 20
    codes = {f"c{i}": " ".join(["yes"] * k + ["no"] * (n - k)) for i, k in enumerate(yes)}
    rule = {"rule": "topic", "version": 1, "scale": "nominal", "codes": ["yes", "no"]}
    report = irr_audit.audit(panel(codes), rule).to_dict()
    assert max_kappa_many(report) == pytest.approx(report["metrics"]["fleiss_kappa"]["value"])
    assert report["paradox"]["max_kappa"]["value"] == pytest.approx(report["metrics"]["fleiss_kappa"]["value"])


def test_score_and_report_json_carry_the_headline() -> None:
    runner = CliRunner()
    for command in ("score", "report"):
        result = runner.invoke(app, [command, *map(str, SHEETS), "--rule", str(RULE), "--format", "json"])
        assert result.exit_code == 0, result.output
        document = json.loads(result.stdout)
        assert document["headline"]["metric"] == "cohen_kappa"
        assert document["coefficients"][0]["metric"] == "cohen_kappa" and document["coefficients"][0]["headline"]
        assert document["paradox"]["sentence"]


def test_text_and_markdown_open_with_the_headline() -> None:
    audit = irr_audit.audit(SHEETS, RULE)
    markdown = audit.to_markdown()
    assert markdown.index("## Headline") < markdown.index("## Coefficients") < markdown.index("## Units")
    assert "### Cohen's kappa = 0.7000, 95% CI \\[0.3886, 1.0000\\]\\*" in markdown
    assert markdown.rstrip().splitlines()[-1].startswith("| bob.csv |")  # provenance last
    text = audit.to_text(width=None)
    lines = text.splitlines()
    first = next(at for at, line in enumerate(lines) if line.startswith("Cohen's kappa"))
    assert lines[first] == "Cohen's kappa = 0.7000, 95% CI [0.3886, 1.0000]*"
    assert first < lines.index("Coefficients") < lines.index("Missingness log by coder")
    assert (
        "units: 20 fully coded of 22" in lines
        and "raw agreement: 85.0% of codes agree (no allowance for chance)" in lines
    )
    assert text.rstrip().splitlines()[-1].startswith("sheet bob.csv (bob, 22 rows): sha256 ")


def test_verify_does_not_compare_the_prose_read_from_the_numbers() -> None:
    from irr_audit.bundle.verify import compare_scores

    frozen = {"metrics": {"po": 0.85}, "headline": {"why": "old words"}, "paradox": {"sentence": "old"}}
    now = {"metrics": {"po": 0.85}, "headline": {"why": "new words"}, "paradox": {"sentence": "new"}}
    assert compare_scores(frozen, now) == ([], [])
    assert compare_scores({**frozen, "metrics": {"po": 0.85}}, {**now, "metrics": {"po": 0.8}})[0]


YES_NO = {"rule": "yes_no", "version": 1, "scale": "nominal", "codes": ["yes", "no"]}


@pytest.mark.parametrize(
    ("codes", "cause", "listed"),
    [
        # every unit agrees: kappa 1 in every sample of these units
        (
            {"ann": "yes no yes no", "ben": "yes no yes no"},
            "every unit shows the same agreement",
            "Cohen's kappa, Scott's pi, Fleiss' kappa, Conger's kappa, Krippendorff's alpha, Gwet's AC1, "
            "Brennan-Prediger",
        ),
        # ben used one code: kappa 0 in every sample, though ann and ben disagree on one unit of three
        ({"ann": "yes no yes", "ben": "yes yes yes"}, "ben used one code only", "Cohen's kappa, Conger's kappa"),
    ],
)
def test_an_interval_of_no_width_says_why_its_standard_error_is_0(
    codes: dict[str, str], cause: str, listed: str
) -> None:
    audited = irr_audit.audit(panel(codes), YES_NO)
    report = audited.to_dict()
    expected = f"the standard error is 0 ({cause}), so the formula sees no variation between units"
    assert report["headline"]["interval_note"].startswith(expected)
    assert f"{listed}: {expected}" in audited.to_markdown()
    conger = report["metrics"]["conger_kappa"]
    assert 0 < conger["se"] < 1e-12 or conger["se"] == 0  # 0 to rounding: listed with Cohen's where it is


def test_an_interval_of_some_width_has_no_such_note() -> None:
    audited = irr_audit.audit(panel({"ann": "yes no yes no yes", "ben": "yes no no no yes"}), YES_NO)
    assert "interval_note" not in audited.to_dict()["headline"]
    assert "the standard error is 0" not in audited.to_markdown()
