"""Unit-pattern counts of a long table on a Spark cluster: the counts job of `irr-audit counts`
in Spark SQL, with the same classification of codes and the same counts as DuckDB's.

Only the driver runs irr-audit's Python (it classifies the few distinct coders and codes by
the rule and turns the few hundred pattern rows into counts.csv); the executors run SQL alone,
so they need no irr-audit and no Python packages. Submit it as a script:

    spark-submit --master yarn "$(python -c 'import irr_audit.warehouse.spark_counts as m; print(m.__file__)')" \\
        hdfs:///audits/codes.parquet --rule rules/explicit_current_failure/v1.yaml --out counts.csv

(the driver's Python needs `pip install irr-audit pyspark`); or from Python with a session of
your own: ``spark_counts(spark, path, rule)``. The table is Parquet (a file or a folder of them)
or CSV with a header line (``--format csv``, ``--delimiter``).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from irr_audit.errors import IrrAuditError, UsageError
from irr_audit.io.outputs import render_json, write_text_atomic
from irr_audit.rules.load import load_rule
from irr_audit.warehouse.longtable import (
    CONTROL_PATTERN,
    MAX_DISTINCT,
    CodeMap,
    CoderMap,
    LongTableColumns,
    LongTableCounts,
    RowTally,
    assemble,
    coder_map,
    column_places,
    pattern_tallies,
    patterns_sql,
    row_tallies,
    trimmed_whitespace,
)
from irr_audit.warehouse.tablefile import check_table_file

DEFAULT_COLUMNS = LongTableColumns()


def load_pyspark() -> ModuleType:
    """pyspark.sql, or the message that names what to install."""
    try:
        return importlib.import_module("pyspark.sql")
    except ImportError:
        raise UsageError(
            "the Spark counts job needs PySpark, which is not installed in this environment.",
            hint="pip install pyspark (and a Java runtime: Spark 4 needs Java 17 or newer).",
            code="dependency-missing",
        ) from None


def spark_counts(
    spark: Any,
    path: str,
    rule: Any,
    *,
    columns: LongTableColumns = DEFAULT_COLUMNS,
    coders: Sequence[str] | None = None,
    file_format: str = "parquet",
    delimiter: str = ",",
) -> LongTableCounts:
    """The unit-pattern counts of the long table at ``path`` (Parquet, or CSV with a header),
    counted by ``spark`` (a SparkSession): exactly what duckdb_counts gives for the same rows.
    A table the driver can open as a local file is first checked as DuckDB's path checks it
    (tablefile.check_table_file: a CSV quote never closed; a Parquet column named twice, or a
    coder or code column that is not text)."""
    if file_format not in ("parquet", "csv"):
        raise UsageError(f"--format {file_format!r} is not parquet or csv.", hint="pass parquet or csv.", code="usage")
    check_table_file(path, file_format, delimiter, columns)
    load_pyspark()
    functions = importlib.import_module("pyspark.sql.functions")
    source = f"table {Path(path).name or path}"
    if file_format == "parquet":
        frame = spark.read.parquet(path)
    else:
        frame = spark.read.csv(
            path, header=True, sep=delimiter, quote='"', escape='"', multiLine=True, encoding="UTF-8", nullValue=None
        )
    names = [name.lstrip("\ufeff") for name in frame.columns]
    frame = frame.toDF(*[f"c{at}" for at in range(len(names))])
    picked = [f"c{at}" for at in column_places(names, columns, source)]
    whitespace = functions.lit(trimmed_whitespace())
    raw_id = functions.coalesce(functions.col(picked[0]).cast("string"), functions.lit(""))
    frame.select(
        functions.trim(raw_id, whitespace).alias("id"),
        functions.col(picked[1]).cast("string").alias("coder"),
        functions.col(picked[2]).cast("string").alias("code"),
    ).createOrReplaceTempView("src")
    tallies = _row_tallies(spark, source)
    codes = CodeMap.of((tally.code for tally in tallies), rule)
    coder_mapping = coder_map((tally.coder for tally in tallies), rule, source, coders)
    _register(spark, codes, coder_mapping)
    found = spark.sql(patterns_sql(len(rule.categories))).collect()
    return assemble(rule, coder_mapping, codes, tallies, pattern_tallies(found))


def _row_tallies(spark: Any, source: str) -> list[RowTally]:
    pattern = CONTROL_PATTERN.replace("\\", "\\\\")
    found = spark.sql(
        f"""SELECT coder, code, count(*) AS n_rows, count_if(id = '') AS blank_id,
                   min(CASE WHEN id RLIKE '{pattern}' THEN id END) AS control_id
            FROM src GROUP BY coder, code LIMIT {MAX_DISTINCT + 1}"""
    ).collect()
    return row_tallies(found, source)


def _register(spark: Any, codes: CodeMap, coders: CoderMap) -> None:
    types = importlib.import_module("pyspark.sql.types")
    place = types.LongType() if coders.base ** len(coders.coders) < 2**62 else types.DecimalType(38, 0)
    code_schema = types.StructType(
        [
            types.StructField("raw", types.StringType()),
            types.StructField("k", types.IntegerType()),
            types.StructField("bit", types.LongType()),
            types.StructField("filled", types.BooleanType()),
        ]
    )
    coder_schema = types.StructType(
        [
            types.StructField("raw", types.StringType()),
            types.StructField("coder", types.IntegerType()),
            types.StructField("place", place),
        ]
    )
    spark.createDataFrame(codes.rows(), code_schema).createOrReplaceTempView("code_map")
    spark.createDataFrame(_places(coders, place), coder_schema).createOrReplaceTempView("coder_map")


def _places(coders: CoderMap, place_type: Any) -> list[tuple[str, int, Any]]:
    if type(place_type).__name__ == "LongType":
        return coders.rows()
    decimal = importlib.import_module("decimal")
    return [(raw, index, decimal.Decimal(place)) for raw, index, place in coders.rows()]


def main(argv: Sequence[str] | None = None) -> int:
    """spark-submit spark_counts.py TABLE --rule RULE --out counts.csv [--summary FILE] ..."""
    parser = argparse.ArgumentParser(description="Unit-pattern counts of a long table, counted by Spark.")
    parser.add_argument("table")
    parser.add_argument("--rule", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--summary")
    parser.add_argument("--format", default="parquet", choices=("parquet", "csv"))
    parser.add_argument("--delimiter", default=",")
    parser.add_argument("--id-column", default="comment_id")
    parser.add_argument("--coder-column", default="coder")
    parser.add_argument("--code-column", default="code")
    parser.add_argument("--coders", help="A,B,...: the coders to count, in this order (default: all, sorted)")
    parser.add_argument("--master", help="for a run without spark-submit, e.g. local[2]")
    options = parser.parse_args(argv)
    try:
        sql = load_pyspark()
        builder = sql.SparkSession.builder.appName("irr-audit counts")
        if options.master:
            builder = builder.master(options.master)
        spark = builder.getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")  # Spark's warnings and traces would bury the one message
        try:
            result = spark_counts(
                spark,
                options.table,
                load_rule(Path(options.rule)),
                columns=LongTableColumns(options.id_column, options.coder_column, options.code_column),
                coders=[name.strip() for name in options.coders.split(",")] if options.coders else None,
                file_format=options.format,
                delimiter=options.delimiter,
            )
        finally:
            spark.stop()
        write_text_atomic(Path(options.out), result.csv_text())
        if options.summary:
            write_text_atomic(Path(options.summary), render_json({"coders": list(result.coders), **result.summary}))
    except IrrAuditError as error:
        print(error.render(), file=sys.stderr)
        return 2
    except Exception as error:  # Spark's own (a path not found, a file it cannot read): one message, exit 2
        if not type(error).__module__.startswith(("pyspark", "py4j")):
            raise
        first = (str(error).strip().splitlines() or [type(error).__name__])[0]
        print(f"Error [table-unreadable]: Spark cannot read {options.table}: {first}", file=sys.stderr)
        return 2
    print(result.summary_line(), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
