"""Time `irr-audit counts` on a long table made by DuckDB itself (never by Python), with a memory limit.

    python benchmarks/warehouse_bench.py --rows 1e7 --memory-limit 4GB --workdir /tmp/irr-warehouse

The table has 5 coders per unit (rows / 5 units), codes of the 5-code ordinal rule written in
several spellings (case, aliases), 5% blank, 1% `unknown`, 1% invalid, and one row in 200 a
repeat (half the same code, half another one). It is written once as Parquet in --workdir and
reused. Each run is a fresh process under GNU time: wall seconds, CPU seconds and peak RSS.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

RULE = """rule: bench_k5_ordinal
version: 1
scale: ordinal
codes: [none, mild, moderate, strong, severe]
missing_codes: [unknown]
aliases: {"0": none, "4": severe}
"""

GENERATE = """
COPY (
    WITH rows AS (
        SELECT u, c, hash(u * 7 + c) % 1000 AS draw, hash(u) % 5 AS truth FROM range({units}) t(u), range(5) s(c)
        UNION ALL
        SELECT u, c, hash(u * 11 + c) % 1000, hash(u) % 5 FROM range({units}) t(u), range(5) s(c)
        WHERE hash(u * 13 + c) % 200 = 0
    )
    SELECT 't1_' || lpad(to_hex(u), 8, '0') AS comment_id, 'coder' || (c + 1) AS coder,
           CASE WHEN draw < 50 THEN ''
                WHEN draw < 60 THEN 'unknown'
                WHEN draw < 70 THEN 'perhaps'
                ELSE ['none', 'mild', 'moderate', 'strong', 'severe', 'Mild', 'SEVERE', '0'][
                         1 + CAST(CASE WHEN draw < 800 THEN truth ELSE draw % 8 END AS INTEGER)]
           END AS code
    FROM rows
) TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 1000000)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", default="1e7", help="about this many rows (units x 5, plus repeats)")
    parser.add_argument("--memory-limit", default="4GB")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/irr-warehouse"))
    parser.add_argument("--threads", type=int, default=None)
    options = parser.parse_args()
    import duckdb

    units = int(float(options.rows)) // 5
    options.workdir.mkdir(parents=True, exist_ok=True)
    table = options.workdir / f"long_{units * 5:.0e}.parquet".replace("+", "")
    rule = options.workdir / "rule.yaml"
    rule.write_text(RULE)
    if not table.exists():
        started = time.perf_counter()
        duckdb.connect().execute(GENERATE.format(units=units, path=table))
        print(f"generated {table} in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    rows = duckdb.connect().execute(f"SELECT count(*) FROM read_parquet('{table}')").fetchone()[0]
    out = options.workdir / "counts.csv"
    timer = shutil.which("time") and "/usr/bin/time"
    command = [
        sys.executable, "-m", "irr_audit", "counts", str(table), "--rule", str(rule), "--out", str(out),
        "--memory-limit", options.memory_limit, "--temp-directory", str(options.workdir), "-q",
    ]  # fmt: skip
    wrapped = [timer, "-f", "%e %U %S %M", *command] if timer else command
    finished = subprocess.run(wrapped, capture_output=True, text=True, check=False)
    if finished.returncode != 0:
        sys.exit(f"counts failed ({finished.returncode}): {finished.stderr}")
    wall, user, system, peak_kib = finished.stderr.split()[-4:]
    size = table.stat().st_size / 2**20
    print("| rows | units | memory limit | seconds | cpu s | peak RSS MB | Parquet MB | patterns |")
    print("|---:|---:|---|---:|---:|---:|---:|---:|")
    patterns = len(out.read_text().splitlines()) - 1
    print(
        f"| {rows:,} | {units:,} | {options.memory_limit} | {float(wall):.1f} | {float(user) + float(system):.1f} "
        f"| {int(peak_kib) / 1024:.0f} | {size:.0f} | {patterns} |"
    )


if __name__ == "__main__":
    main()
