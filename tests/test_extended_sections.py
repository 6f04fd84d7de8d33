"""The sections beside the coefficients through the API and the CLI: ICC for interval rules on
the fully coded units, coder bias per pair, Gwet's benchmarking, Krippendorff's bootstrap with
--alpha-min, and the renderers showing each."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from irr_audit.api import audit
from irr_audit.cli import app
from irr_audit.errors import UsageError
from irr_audit.metrics.icc import intraclass_correlations

SCORES = {
    "rule": "score",
    "version": 1,
    "scale": "interval",
    "codes": [{"code": str(v), "value": v} for v in range(1, 11)],
}
# Shrout & Fleiss (1979), Table 2, as four coders' sheets, plus a unit judge d left blank
SHROUT_FLEISS = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]


def _frames(rows: list[list[int | None]]) -> dict[str, pd.DataFrame]:
    coders = ["a", "b", "c", "d"]
    return {
        coder: pd.DataFrame(
            {
                "comment_id": [f"u{i}" for i in range(len(rows))],
                "code": ["" if r[j] is None else str(r[j]) for r in rows],
            }
        )
        for j, coder in enumerate(coders)
    }


def test_icc_of_an_interval_rule_on_the_fully_coded_units() -> None:
    rows: list[list[int | None]] = [list(r) for r in SHROUT_FLEISS] + [[3, 4, 5, None]]
    report = audit(_frames(rows), SCORES).to_dict()
    icc = report["icc"]
    assert icc["n"] == 6 and icc["k"] == 4 and "fully coded" in icc["basis"]
    published = {"icc_1": 0.17, "icc_a1": 0.29, "icc_c1": 0.71, "icc_k": 0.44, "icc_ak": 0.62, "icc_ck": 0.91}
    assert {name: round(icc["forms"][name]["value"], 2) for name in published} == published
    direct = intraclass_correlations(np.array(SHROUT_FLEISS))
    assert icc["forms"]["icc_a1"]["ci"] == list(direct["icc_a1"].ci)
    assert round(icc["mean_squares"]["msr"], 2) == 11.24


def test_no_icc_for_nominal_rules_and_coder_bias_for_every_pair() -> None:
    rule = {"rule": "yn", "version": 1, "scale": "nominal", "codes": ["yes", "no"]}
    frame = pd.DataFrame(
        {"comment_id": [f"u{i}" for i in range(8)] * 3, "coder": ["ann"] * 8 + ["ben"] * 8 + ["cat"] * 8,
         "code": ["yes"] * 6 + ["no"] * 2 + ["yes"] * 3 + ["no"] * 5 + ["no"] * 8}
    )  # fmt: skip
    report = audit(frame, rule).to_dict()
    assert "icc" not in report
    pairs = report["coder_bias"]["pairs"]
    assert [p["coders"] for p in pairs] == [["ann", "ben"], ["ann", "cat"], ["ben", "cat"]]
    mcnemar = pairs[0]["tests"][0]
    assert mcnemar["test"] == "McNemar" and mcnemar["statistic"] == 3.0  # b = 3, c = 0: 9 / 3
    pairwise = [pair["metrics"]["cohen_kappa"]["value"] for pair in report["pairs"]]
    assert report["metrics"]["light_kappa"]["value"] == pytest.approx(np.mean(pairwise), abs=1e-15)


def test_benchmarking_covers_the_coefficients_with_a_standard_error() -> None:
    rows: list[list[int | None]] = [list(r) for r in SHROUT_FLEISS]
    report = audit(_frames(rows), SCORES).to_dict()
    bench = report["benchmarking"]
    assert "po" not in bench and "fleiss_kappa" in bench
    entry = bench["fleiss_kappa"]
    assert entry["se"] == report["metrics"]["fleiss_kappa"]["se"]
    assert [b["label"] for b in entry["landis_koch"]["bands"]][0] == "almost perfect"


def test_alpha_min_through_the_cli(tmp_path) -> None:
    for coder, codes in (("ann", "yes yes no no yes no yes yes"), ("ben", "yes no no no yes no yes yes")):
        lines = ["comment_id,code", *(f"u{i},{code}" for i, code in enumerate(codes.split()))]
        (tmp_path / f"{coder}.csv").write_text("\n".join(lines) + "\n")
    (tmp_path / "rule.yaml").write_text("rule: yn\nversion: 1\nscale: nominal\ncodes: [yes, no]\n")
    args = ["score", str(tmp_path / "ann.csv"), str(tmp_path / "ben.csv"), "--rule", str(tmp_path / "rule.yaml")]
    result = CliRunner().invoke(app, [*args, "--format", "json", "--bootstrap", "300", "--seed", "2",
                                      "--alpha-min", "0.5", "--alpha-min", "0.9"])  # fmt: skip
    assert result.exit_code == 0, result.output
    kalpha = json.loads(result.stdout)["krippendorff_bootstrap"]
    assert kalpha["alpha_min"] == [0.5, 0.9]
    q = [item["q"] for item in kalpha["metrics"]["q_below"]]
    assert q[0] <= q[1]
    again = CliRunner().invoke(app, [*args, "--format", "json", "--bootstrap", "300", "--seed", "2",
                                     "--alpha-min", "0.5", "--alpha-min", "0.9"])  # fmt: skip
    assert json.loads(again.stdout)["krippendorff_bootstrap"] == kalpha
    refused = CliRunner().invoke(app, [*args, "--alpha-min", "0.7"])
    assert refused.exit_code == 2 and "usage-alpha-min" in refused.output
    markdown = CliRunner().invoke(app, ["report", *args[1:], "--format", "md", "--bootstrap", "100", "--seed", "1"])
    for title in ("Coder bias", "Benchmarking", "Krippendorff's bootstrap of alpha"):
        assert title in markdown.stdout


@pytest.mark.parametrize("bad", [2.0, -1.5, float("nan"), "high", True])
def test_alpha_min_outside_alphas_range_is_refused(bad: object) -> None:
    rule = {"rule": "yn", "version": 1, "scale": "nominal", "codes": ["yes", "no"]}
    frame = pd.DataFrame({"comment_id": ["u1", "u1"], "coder": ["a", "b"], "code": ["yes", "no"]})
    with pytest.raises(UsageError) as caught:
        audit(frame, rule, bootstrap=10, alpha_min=[bad])  # type: ignore[list-item]
    assert caught.value.code == "usage-alpha-min"


def test_scoring_loads_no_scipy() -> None:
    """scipy.special would map ~110 MB of address space into every command run under a memory cap."""
    import subprocess
    import sys

    code = (
        "import sys, pandas as pd\n"
        "from irr_audit.api import audit\n"
        "codes = [{'code': str(v), 'value': v} for v in range(5)]\n"
        "rule = {'rule': 'n', 'version': 1, 'scale': 'interval', 'codes': codes}\n"
        "frame = pd.DataFrame({'comment_id': ['a', 'b', 'c'] * 2, 'coder': ['x'] * 3 + ['y'] * 3,\n"
        "                      'code': ['1', '2', '4', '1', '3', '4']})\n"
        "report = audit(frame, rule, bootstrap=20, seed=1).to_dict()\n"
        "assert report['icc']['forms']['icc_c1']['defined'] and report['coder_bias']['pairs']\n"
        "print(sorted(name for name in sys.modules if name.split('.')[0] == 'scipy'))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
