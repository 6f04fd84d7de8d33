"""The Spark counts job (irr_audit.warehouse.spark_counts) in PySpark's local mode gives DuckDB's
counts and account of rows, byte for byte, on random long tables (Parquet and CSV).

PySpark (about 450 MB, and a Java runtime) is not a dependency of the test environment: it
lives in its own virtual environment (.oracles/spark, made by .ci/run with pyspark and this
package; or the python named by IRR_AUDIT_SPARK_PYTHON) and runs in one subprocess for all
the tables. Without it, or without Java, the test skips, saying why."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from irr_audit.api import load_rule
from tests.test_warehouse_counts import NOMINAL, ORDINAL, long_rows, write_long_csv

pytest.importorskip("duckdb", reason="the warehouse extra (DuckDB) is not installed")

ROOT = Path(__file__).resolve().parents[1]
SPARK_PYTHON = Path(os.environ.get("IRR_AUDIT_SPARK_PYTHON", ROOT / ".oracles" / "spark" / "bin" / "python"))

DRIVER = """
import json, sys
from pathlib import Path
from pyspark.sql import SparkSession
from irr_audit.rules.load import load_rule
from irr_audit.warehouse.spark_counts import spark_counts
spark = SparkSession.builder.master("local[2]").appName("irr-audit test").getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
for job in json.load(sys.stdin):
    result = spark_counts(spark, job["table"], load_rule(Path(job["rule"])), file_format=job["format"],
                          coders=job["coders"])
    Path(job["out"]).write_text(result.csv_text())
    Path(job["summary"]).write_text(json.dumps(result.summary, sort_keys=True))
spark.stop()
"""


def _why_not() -> str | None:
    if not SPARK_PYTHON.exists():
        return f"PySpark's environment {SPARK_PYTHON} is absent (made by .ci/run)"
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return "no Java runtime (Spark needs Java 17 or newer; .ci/run installs Debian's OpenJDK)"
    return None


@pytest.mark.skipif(_why_not() is not None, reason=_why_not() or "")
def test_spark_counts_are_duckdbs(tmp_path: Path) -> None:
    from irr_audit.warehouse.duckdb_counts import duckdb_counts

    jobs, expected = [], []
    for seed, scale in [(0, "nominal"), (1, "ordinal"), (2, "nominal"), (5, "ordinal")]:
        coders, rows = long_rows(seed, scale)
        folder = tmp_path / f"{scale}{seed}"
        folder.mkdir()
        rule = folder / "rule.yaml"
        rule.write_text(NOMINAL if scale == "nominal" else ORDINAL)
        write_long_csv(folder / "long.csv", rows)
        pq.write_table(
            pa.table({name: [row[at] for row in rows] for at, name in enumerate(["comment_id", "coder", "code"])}),
            folder / "long.parquet",
        )
        asked = list(reversed(coders))[:3] if seed == 5 else None  # rows of a coder not asked for, another order
        for table, file_format in (("long.parquet", "parquet"), ("long.csv", "csv")):
            out = folder / f"{table}.spark.csv"
            jobs.append(
                {
                    "table": str(folder / table),
                    "rule": str(rule),
                    "format": file_format,
                    "coders": asked,
                    "out": str(out),
                    "summary": str(out.with_suffix(".json")),
                }
            )
            expected.append(duckdb_counts(folder / table, load_rule(rule), coders=asked, memory_limit="1GB"))
    finished = subprocess.run(
        [str(SPARK_PYTHON), "-c", DRIVER], input=json.dumps(jobs), capture_output=True, text=True, timeout=900
    )
    assert finished.returncode == 0, finished.stderr[-3000:]
    for job, duck in zip(jobs, expected):
        assert Path(job["out"]).read_text() == duck.csv_text(), job["table"]
        assert json.loads(Path(job["summary"]).read_text()) == duck.summary, job["table"]
    assert any("other_coder" in duck.summary["log_rows"] for duck in expected)
