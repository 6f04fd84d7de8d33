"""irrCAC (Gwet's R package, its Python port) as an oracle on random data, with missing codes.

irrCAC pins scipy 1.12 and pandas < 3, which would pull an old numpy and break pyarrow: it lives in
its own virtual environment (.oracles/irrcac, made by .ci/run; or the python named by
IRR_AUDIT_IRRCAC_PYTHON) and runs in a subprocess. Without it the test skips, saying why."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from irr_audit.metrics import summarise
from irr_audit.metrics.intervals import IntervalSpec

ROOT = Path(__file__).resolve().parents[1]
ORACLE = Path(os.environ.get("IRR_AUDIT_IRRCAC_PYTHON", ROOT / ".oracles" / "irrcac" / "bin" / "python"))

SCRIPT = """
import json, sys, warnings
warnings.filterwarnings("ignore")
import numpy as np, pandas as pd
from irrCAC.raw import CAC
out = []
for case in json.load(sys.stdin):
    codes = np.array(case["codes"], dtype=float)
    codes[codes < 0] = np.nan
    frame = pd.DataFrame(codes + 1)
    cac = CAC(frame, weights=case["weights"], categories=list(range(1, case["k"] + 1)), digits=12)
    row = {}
    for name in ("gwet", "fleiss", "conger", "bp"):
        est = getattr(cac, name)()["est"]
        row[name] = [est["coefficient_value"], est["se"], list(est["confidence_interval"])]
    out.append(row)
json.dump(out, sys.stdout)
"""

NAMES = {"gwet": ("gwet_ac1", "gwet_ac2"), "fleiss": "fleiss_kappa", "conger": "conger_kappa", "bp": "brennan_prediger"}


def cases(count: int) -> list[dict]:
    rng = np.random.default_rng(19)
    out = []
    for at in range(count):
        k, coders, units = int(rng.integers(2, 5)), int(rng.integers(2, 5)), int(rng.integers(8, 30))
        truth = rng.integers(0, k, size=units)
        codes = np.where(rng.random((units, coders)) < 0.7, truth[:, None], rng.integers(0, k, (units, coders)))
        codes[rng.random((units, coders)) < 0.15] = -1
        codes = codes[(codes >= 0).sum(axis=1) >= 1]
        weights = "identity" if at % 2 == 0 else ("quadratic", "linear", "ordinal")[at % 3]
        out.append({"codes": codes.tolist(), "k": k, "weights": weights})
    return out


@pytest.mark.skipif(not ORACLE.exists(), reason=f"irrCAC's environment {ORACLE} is absent (made by .ci/run)")
def test_gwet_missing_basis_matches_irrcac_on_random_data() -> None:
    data = cases(40)
    done = subprocess.run([str(ORACLE), "-c", SCRIPT], input=json.dumps(data), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    expected = json.loads(done.stdout)
    compared = 0
    for case, oracle in zip(data, expected):
        weights = None if case["weights"] == "identity" else case["weights"]
        s = summarise(np.array(case["codes"]), case["k"], "ordinal", weights=weights, intervals=IntervalSpec(0.95, "t"))
        for name, (value, se, ci) in oracle.items():
            ours = NAMES[name]
            key = (
                (ours[1] if weights else ours[0])
                if isinstance(ours, tuple)
                else ours + ("_weighted" if weights and name != "gwet" else "")
            )
            metric = s.gwet_missing[key]
            if not np.isfinite(value) or not metric.defined:
                continue
            assert metric.value == pytest.approx(value, abs=1e-9), (case, key)
            if np.isfinite(se) and se > 1e-9 and metric.se is not None:
                assert metric.se == pytest.approx(se, abs=1e-9), (case, key)
                assert metric.ci is not None and metric.ci[0] == pytest.approx(
                    max(ci[0], min(-1, metric.value)), abs=1e-9
                )
            compared += 1
    assert compared > 100
