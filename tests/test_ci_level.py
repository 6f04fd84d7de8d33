"""--ci-level sets the level of every interval (docs/statistics.md, Uncertainty), the ICC's F-based
intervals and Krippendorff's bootstrap of alpha included, and every label of an interval, in every
format, says the level used: never a fixed "95%"."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import irr_audit
from irr_audit.cli import app
from irr_audit.metrics.alpha_bootstrap import krippendorff_bootstrap
from irr_audit.metrics.icc import intraclass_correlations, mean_squares
from irr_audit.metrics.patterns import compress
from irr_audit.rules.scale import Scale
from tests.kalpha_oracle import KRIPPENDORFF_2011, kalpha_replicates

stats = pytest.importorskip("scipy.stats")

LEVELS = (0.5, 0.9, 0.99)
# Shrout & Fleiss (1979), Table 2: six targets rated by four judges
SHROUT_FLEISS = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]])


def _mcgraw_wong(ratings: np.ndarray, level: float) -> dict[str, tuple[float, float]]:
    """McGraw & Wong (1996), Table 7, transcribed with scipy's F quantiles at 1 - alpha / 2,
    alpha = 1 - level: the oracle of every form's interval at any level."""
    n, k = ratings.shape
    ms = mean_squares(ratings)
    msr, msc, mse, msw = ms.rows, ms.columns, ms.error, ms.within
    q = (1 + level) / 2

    def f(dfn: float, dfd: float) -> float:
        return float(stats.f.ppf(q, dfn, dfd))

    out = {}
    f_one = msr / msw
    fl, fu = f_one / f(n - 1, n * (k - 1)), f_one * f(n * (k - 1), n - 1)
    out["icc_1"] = ((fl - 1) / (fl + k - 1), (fu - 1) / (fu + k - 1))
    out["icc_k"] = (1 - 1 / fl, 1 - 1 / fu)
    f_c = msr / mse
    fl, fu = f_c / f(n - 1, (n - 1) * (k - 1)), f_c * f((n - 1) * (k - 1), n - 1)
    out["icc_c1"] = ((fl - 1) / (fl + k - 1), (fu - 1) / (fu + k - 1))
    out["icc_ck"] = (1 - 1 / fl, 1 - 1 / fu)
    icc = (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n)
    a = k * icc / (n * (1 - icc))
    b = 1 + k * icc * (n - 1) / (n * (1 - icc))
    v = (a * msc + b * mse) ** 2 / ((a * msc) ** 2 / (k - 1) + (b * mse) ** 2 / ((n - 1) * (k - 1)))
    f_low, f_high = f(n - 1, v), f(v, n - 1)
    low = n * (msr - f_low * mse) / (f_low * (k * msc + (k * n - k - n) * mse) + n * msr)
    high = n * (f_high * msr - mse) / (k * msc + (k * n - k - n) * mse + n * f_high * msr)
    out["icc_a1"] = (low, high)
    out["icc_ak"] = (k * low / (1 + (k - 1) * low), k * high / (1 + (k - 1) * high))
    return out


@pytest.mark.parametrize("level", (*LEVELS, 0.95))
def test_icc_intervals_are_mcgraw_wong_at_the_level_asked(level: float) -> None:
    ours = intraclass_correlations(SHROUT_FLEISS, level=level)
    for name, (low, high) in _mcgraw_wong(SHROUT_FLEISS.astype(float), level).items():
        assert ours[name].ci == pytest.approx((low, high), abs=1e-9), name
        assert ours[name].ci_method.endswith(f"{100 * level:g}%"), name


def test_icc_default_level_is_95() -> None:
    default, at_95 = intraclass_correlations(SHROUT_FLEISS), intraclass_correlations(SHROUT_FLEISS, level=0.95)
    assert all(default[name].ci == at_95[name].ci for name in default)
    assert default["icc_a1"].ci_method == "F-based interval (McGraw & Wong 1996, Table 7), 95%"


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("level", LEVELS)
def test_icc_intervals_on_random_data(seed: int, level: float) -> None:
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(5, 30)), int(rng.integers(2, 5))
    ratings = (rng.integers(0, 5, size=(n, 1)) + rng.integers(0, 3, size=(n, k))).astype(float)
    ours = intraclass_correlations(ratings, level=level)
    wider = intraclass_correlations(ratings, level=min(level + 0.04, 0.999))
    for name, (low, high) in _mcgraw_wong(ratings, level).items():
        if ours[name].ci is None:
            continue
        assert ours[name].ci == pytest.approx((low, high), abs=1e-9), name
        assert wider[name].ci[0] <= ours[name].ci[0] and ours[name].ci[1] <= wider[name].ci[1], name


@pytest.mark.parametrize("level", LEVELS)
def test_kalpha_interval_is_the_percentile_interval_at_the_level(level: float) -> None:
    """A draw-by-draw transcription of KALPHA; its percentile interval at ``level``."""
    patterns = compress(KRIPPENDORFF_2011, 5)
    n_boot = 4000
    loop = kalpha_replicates(KRIPPENDORFF_2011, 5, draws=61, n_boot=n_boot, seed=3)
    ours = krippendorff_bootstrap(patterns, Scale.NOMINAL, None, n_boot, np.random.default_rng(4), level=level)
    expected = np.quantile(loop, [(1 - level) / 2, (1 + level) / 2])
    assert ours["ci"] == pytest.approx(list(expected), abs=0.04)


@pytest.mark.parametrize("level", LEVELS)
def test_kalpha_interval_narrows_and_widens_with_the_level(level: float) -> None:
    """The same replicates (the same seed) at two levels: the interval at a lower level lies
    inside the 95% one, at a higher level around it; never the 95% one whatever the level."""
    patterns = compress(KRIPPENDORFF_2011, 5)
    n_boot = 1000
    got = krippendorff_bootstrap(patterns, Scale.NOMINAL, None, n_boot, np.random.default_rng(9), level=level)
    default = krippendorff_bootstrap(patterns, Scale.NOMINAL, None, n_boot, np.random.default_rng(9))
    assert default["mean"] == got["mean"]  # the same replicates
    inner, outer = (got, default) if level < 0.95 else (default, got)
    assert outer["ci"][0] <= inner["ci"][0] <= inner["ci"][1] <= outer["ci"][1]
    assert got["ci"] != default["ci"]


INTERVAL_RULE = {
    "rule": "r",
    "version": 1,
    "scale": "interval",
    "missing_codes": ["unknown"],
    "codes": [{"code": f"c{i}", "value": i + 1} for i in range(4)],
}


def _three_coders() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    base = rng.integers(0, 4, 30)
    codes = np.stack([base, base, rng.integers(0, 4, 30)], 1)
    codes[:20, 2] = base[:20]
    rows = [(f"u{i}", f"k{j}", f"c{codes[i, j]}") for j in range(3) for i in range(30)]
    return pd.DataFrame(rows, columns=["comment_id", "coder", "code"])


@pytest.mark.parametrize("level", LEVELS)
def test_audit_gives_icc_and_kalpha_at_the_ci_level(level: float) -> None:
    frame = _three_coders()
    rule = irr_audit.load_rule(INTERVAL_RULE)
    doc = irr_audit.audit(frame, rule, ci_level=level, bootstrap=300, seed=1).to_dict()
    base = irr_audit.audit(frame, rule, bootstrap=300, seed=1).to_dict()
    ratings = frame.pivot(index="comment_id", columns="coder", values="code").map(lambda c: int(c[1:]) + 1)
    oracle = _mcgraw_wong(ratings.to_numpy(dtype=float), level)
    for name, (low, high) in oracle.items():
        assert doc["icc"]["forms"][name]["ci"] == pytest.approx([low, high], abs=1e-9), name
        assert doc["icc"]["forms"][name]["ci_method"].endswith(f"{100 * level:g}%")
    for basis in ("metrics", "available_case"):
        mine, default = doc["krippendorff_bootstrap"][basis], base["krippendorff_bootstrap"][basis]
        assert mine["mean"] == default["mean"]  # the same replicates, another interval of them
        inner, outer = (mine, default) if level < 0.95 else (default, mine)
        assert outer["ci"][0] <= inner["ci"][0] <= inner["ci"][1] <= outer["ci"][1]
        assert mine["ci"] != default["ci"]
    assert doc["krippendorff_bootstrap"]["level"] == level


ROOT = Path(__file__).resolve().parent.parent
SHEETS = [str(ROOT / "examples/sheets" / name) for name in ("alice.csv", "bob.csv")]
RULE = str(ROOT / "rules/explicit_current_failure/v1.yaml")
CODEBOOK_SHEETS = [str(ROOT / f"examples/codebook/sheets/{name}.csv") for name in ("alice", "bob", "carol")]
CODEBOOK = str(ROOT / "codebooks/comment_study/v1.yaml")
# a label of an interval at 95%: "95% CI", "95% interval", "95%" in a method; the numbers 0.95..
# of data (a bar at 58.95%, a q of 0.975) are not labels
NINETY_FIVE = re.compile(r"(?<![\d.])95(\.0+)?%(?!;)")


def _renderings(level: float) -> dict[str, str]:
    frame = _three_coders()
    rule = irr_audit.load_rule(INTERVAL_RULE)
    audits = {
        "sheets": irr_audit.audit(SHEETS, RULE, ci_level=level, bootstrap=200, seed=1),
        "interval": irr_audit.audit(frame, rule, ci_level=level, bootstrap=200, seed=1),
        "ordinal": irr_audit.audit(frame, irr_audit.load_rule({**INTERVAL_RULE, "scale": "ordinal"}), ci_level=level),
        "codebook": irr_audit.audit_codebook(CODEBOOK_SHEETS, CODEBOOK, ci_level=level, bootstrap=200, seed=1),
    }
    out = {}
    for name, audit in audits.items():
        for form in ("to_markdown", "to_html", "to_text", "to_methods", "to_json"):
            out[f"{name} {form}"] = getattr(audit, form)()
    return out


@pytest.mark.parametrize("level", LEVELS)
def test_every_format_labels_intervals_with_the_level_used(level: float) -> None:
    wanted = f"{100 * level:g}%"
    for name, text in _renderings(level).items():
        if name.endswith("to_json"):
            continue  # JSON states the level as a number: below
        assert not NINETY_FIVE.search(text), (name, text[max(0, NINETY_FIVE.search(text).start() - 200) :][:300])
        assert wanted in text, name


def test_every_table_of_intervals_names_the_level() -> None:
    texts = _renderings(0.5)
    markdown = texts["interval to_markdown"]
    assert "| category | specific agreement | kappa vs rest | 50% CI |" in markdown
    assert "| Shrout \\& Fleiss | McGraw \\& Wong | ICC | 50% CI |" in markdown
    assert "| basis | 50% CI | probability alpha is below a minimum |" in markdown
    assert '<span class="chart-value">estimate, 50% CI</span>' in texts["sheets to_html"]
    assert "| 50% interval |" in texts["codebook to_markdown"]


def test_json_states_the_level_beside_each_interval() -> None:
    codebook = irr_audit.audit_codebook(CODEBOOK_SHEETS, CODEBOOK, ci_level=0.5).to_dict()
    assert {row["coefficient"]["ci_level"] for row in codebook["reliability"]} == {0.5}
    doc = json.loads(irr_audit.audit(SHEETS, RULE, ci_level=0.5).to_json())
    assert doc["intervals"]["level"] == 0.5
    assert "50%" in doc["per_category"]["yes"]["kappa"]["ci_method"]


def test_cli_report_at_a_level_labels_it() -> None:
    for form in ("md", "html", "text", "methods"):
        result = CliRunner().invoke(app, ["report", *SHEETS, "--rule", RULE, "--ci-level", "0.8", "--format", form])
        assert result.exit_code == 0, result.output
        assert "80% CI" in result.output and not NINETY_FIVE.search(result.output), form
