"""The peer: the script a user would write without irr-audit.

pandas read_csv for every sheet, a chained pandas.merge on comment_id, keep the
fully coded units (every coder gave one of the rule's codes), then
scikit-learn's cohen_kappa_score for every coder pair, statsmodels'
fleiss_kappa on aggregate_raters, and krippendorff.alpha (nominal). It computes
four coefficients on one basis with no missingness log, no available-case
estimates and no intervals: much less than irr-audit's `score`.

    python benchmarks/peer_script.py --codes yes,no SHEET SHEET [SHEET...]

Coder names are the file stems. Prints one JSON object with the values so
bench.py can check that both tools agree.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--codes", required=True, help="The rule's codes, comma separated, in order.")
    parser.add_argument("sheets", nargs="+")
    args = parser.parse_args()

    import krippendorff
    import numpy as np
    import pandas as pd
    from sklearn.metrics import cohen_kappa_score
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    codes = args.codes.split(",")
    names = [Path(path).stem for path in args.sheets]
    frames = []
    for name, path in zip(names, args.sheets):
        sheet = pd.read_csv(path, dtype=str)
        frames.append(sheet[["comment_id", "code"]].rename(columns={"code": name}))
    merged = functools.reduce(lambda left, right: left.merge(right, on="comment_id"), frames)
    full = merged[merged[names].isin(codes).all(axis=1)]

    result: dict[str, object] = {"units_merged": int(len(merged)), "fully_coded": int(len(full)), "pairs": {}}
    for first, second in itertools.combinations(names, 2):
        kappa = cohen_kappa_score(full[first], full[second], labels=codes)
        result["pairs"][f"{first}|{second}"] = float(kappa)

    ratings = np.column_stack([pd.Categorical(full[name], categories=codes).codes for name in names])
    counts, _ = aggregate_raters(ratings, n_cat=len(codes))
    result["fleiss_kappa"] = float(fleiss_kappa(counts))
    result["krippendorff_alpha"] = float(
        krippendorff.alpha(
            reliability_data=ratings.T.astype(float),
            level_of_measurement="nominal",
            value_domain=list(range(len(codes))),
        )
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
