"""Unit-pattern counts of a long table (CSV or Parquet) through DuckDB, in bounded memory.

The table is streamed by DuckDB (read_csv, read_parquet), never held in Python. Two scans:
the first counts the rows of each distinct (coder, code) and how many have a blank id (a few
rows come back: the values to classify); the second groups the rows by (unit, coder), then by
unit, then by pattern (a few hundred rows come back). The codes and coders are classified in
Python by the rule, as join classifies them (irr_audit.warehouse.longtable), and joined in SQL.
DuckDB holds at most ``memory_limit`` and spills the rest of its groups to ``temp_directory``.

DuckDB is an optional dependency: ``pip install "irr-audit[warehouse]"``.
"""

from __future__ import annotations

import importlib
import numbers
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

import pyarrow as pa

from irr_audit.errors import IrrAuditError, OutputError, SheetError, UsageError
from irr_audit.io.delimiter import SAMPLE_BYTES, detect_delimiter, parse_delimiter
from irr_audit.io.display import printable
from irr_audit.io.encodings import foreign_mark
from irr_audit.io.files import check_exist, shown_name, unreadable
from irr_audit.io.limits import DEFAULT_LIMITS
from irr_audit.io.outputs import check_outputs
from irr_audit.io.runfolder import fsync_folder
from irr_audit.io.sheets import parse_rule_version
from irr_audit.join.join import STATUSES
from irr_audit.rules.load import rule_of
from irr_audit.rules.model import Rule
from irr_audit.warehouse.longtable import (
    CONTROL_PATTERN,
    MAX_DISTINCT,
    CodeMap,
    CoderMap,
    LongTableColumns,
    LongTableCounts,
    PatternTally,
    RowTally,
    assemble,
    coder_map,
    column_places,
    pattern_tallies,
    patterns_sql,
    row_tallies,
    trim,
    trimmed_whitespace,
)
from irr_audit.warehouse.tablefile import check_parquet_columns, csv_header, parquet_schema, refuse_unclosed_quote

T = TypeVar("T")
DEFAULT_MEMORY_LIMIT = "4GB"
DEFAULT_COLUMNS = LongTableColumns()
MEMORY_LIMIT = re.compile(r"\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)", re.IGNORECASE)
PARQUET_MAGIC = b"PAR1"
MAX_ROW_BYTES = DEFAULT_LIMITS.line_bytes  # a CSV row (with its quoted line breaks): 64 MiB, as a JSON Lines record
NOT_TABLES = {  # what a long table is not, by the file's first bytes or its suffix
    b"PK\x03\x04": "an XLSX workbook (a zip file)",
    b"{": "JSON",
    b"[": "JSON",
}
EXTRA = 'pip install "irr-audit[warehouse]"'


def load_duckdb() -> ModuleType:
    """DuckDB, or the message that names the extra to install."""
    try:
        return importlib.import_module("duckdb")
    except ImportError:
        raise UsageError(
            "irr-audit counts needs DuckDB, which is not installed in this environment.",
            hint=f"install the optional extra: {EXTRA} (or pip install duckdb).",
            code="dependency-missing",
        ) from None


def _table_path(path: object) -> Path:
    """The long table's path; anything else refused by name, not by pathlib's TypeError."""
    if isinstance(path, (str, os.PathLike)):
        return Path(path)
    raise UsageError(
        f"path is a path (a str or a pathlib.Path), not a {type(path).__name__}.",
        hint="pass the long table's file (CSV, TSV or Parquet); a DataFrame: irr_audit.audit(frame, rule).",
        code="data-form",
    )


def _threads_given(threads: object) -> int | None:
    """DuckDB's threads, a whole number from 1 up or None (every core): DuckDB's own refusal of 0
    is a SyntaxException, and the number is written into a SET statement."""
    if threads is None:
        return None
    if not isinstance(threads, bool) and isinstance(threads, numbers.Integral) and int(threads) >= 1:  # True: no count
        return int(threads)
    raise UsageError(
        f"threads={threads!r} is not a number of threads (a whole number from 1 up).",
        hint="leave threads out (DuckDB uses every core), or pass threads=4, say.",
        code="usage-threads",
    )


def _loaded_rule(rule: object) -> Rule:
    """The rule as every function of the API takes it (a rule file's missing path named first, as
    `irr-audit counts` names it); it had been used as a Rule whatever it was, failing deep inside."""
    if isinstance(rule, (str, os.PathLike)):
        check_exist([(Path(rule), "rule")])
    return rule_of(rule)


def check_memory_limit(value: str) -> str:
    """A DuckDB memory limit such as 4GB or 512MiB, refused when it is not one."""
    if not isinstance(value, str) or not MEMORY_LIMIT.fullmatch(value.strip()):
        raise UsageError(
            f"--memory-limit {value!r} is not an amount of memory.",
            hint="write a number and a unit, e.g. 4GB, 512MB or 8GiB.",
            code="usage-memory-limit",
        )
    return value.strip()


def duckdb_counts(
    path: str | Path,
    rule: Rule | str | os.PathLike[str] | Mapping[str, Any],
    *,
    columns: LongTableColumns = DEFAULT_COLUMNS,
    coders: Sequence[str] | None = None,
    memory_limit: str = DEFAULT_MEMORY_LIMIT,
    temp_directory: str | Path | None = None,
    threads: int | None = None,
    delimiter: str | None = None,
    log: str | Path | None = None,
) -> LongTableCounts:
    """The unit-pattern counts of the long table at ``path`` (CSV, TSV or Parquet), as join's
    counts.csv would have them for the same rows as sheets, and the account of every row.

    ``coders``: the coders to count, in this order (default: every coder named, sorted); a row
    of another coder is logged as ``other_coder``. ``memory_limit`` bounds DuckDB's memory
    (DuckDB's units: 4GB, 512MiB); it spills to ``temp_directory`` (default: a new temporary
    folder, deleted afterwards). ``delimiter`` forces a CSV's delimiter (else detected as a sheet's).
    ``log``: also write the missingness log there, as JSON Lines (LOG_COLUMNS below).
    """
    table = _table_path(path)
    rule = _loaded_rule(rule)
    threads = _threads_given(threads)
    check_exist([(table, "table")])
    if log is not None:  # the CLI checks its outputs; a caller of this function gets the same refusal
        check_outputs([table], "--log", files=[Path(log)])
    head = _head(table)
    limit = check_memory_limit(memory_limit)
    duckdb = load_duckdb()
    spill = _spill_folder(temp_directory)
    try:
        try:
            connection = duckdb.connect(config={"memory_limit": limit, "temp_directory": str(spill)})
        except duckdb.Error as error:
            raise UsageError(
                f"DuckDB refused --memory-limit {limit}: {_first_line(error)}",
                hint="give an amount of memory DuckDB takes, e.g. 4GB.",
                code="usage-memory-limit",
            ) from None
        try:
            if threads is not None:
                connection.execute(f"SET threads = {int(threads)}")
            connection.execute("SET preserve_insertion_order = false")  # nothing here needs the rows' order
            spilling = Spilling(spill, temp_directory)
            counted, codes, coder_mapping = _counts(
                connection, duckdb, table, head, rule, columns, coders, delimiter, limit, spilling
            )
            if log is not None:
                _guarded(
                    duckdb,
                    table,
                    limit,
                    spilling,
                    lambda: _write_log(connection, duckdb, Path(log), rule, codes, coder_mapping),
                )
            return counted
        finally:
            connection.close()
    finally:
        shutil.rmtree(spill, ignore_errors=True)


@dataclass(frozen=True)
class Spilling:
    """The folder DuckDB spills to (made inside ``temp_directory``, or the system's temporary folder)."""

    folder: Path
    temp_directory: str | Path | None

    def shown(self) -> str:
        if self.temp_directory is not None:
            return f"--temp-directory {self.temp_directory}"
        return f"the temporary folder {self.folder.parent} (the system's; --temp-directory chooses another)"

    def failed(self, duckdb: ModuleType, error: BaseException) -> bool:
        """Whether DuckDB's error is a spill that failed: a file of the spill folder it could not make or
        write (a full disk, a read-only folder, the folder removed), or no room left there to offload to.
        Told by the error's type as well as its text: a CSV error quotes the row, whatever it says."""
        text = str(error)
        if isinstance(error, duckdb.OutOfMemoryException):
            return "failed to offload" in text
        return isinstance(error, duckdb.IOException) and str(self.folder) in text


def _guarded(duckdb: ModuleType, table: Path, limit: str, spilling: Spilling, work: Callable[[], T]) -> T:
    """``work()``, DuckDB's errors turned into one message naming the table, or the spill folder when
    the error is there (a full disk or a read-only folder is not the table's fault: blaming it
    would send the user to the wrong file)."""
    source = f"table {table.name}"
    try:
        return work()
    except duckdb.Error as error:
        if spilling.failed(duckdb, error):
            raise OutputError(
                f"{spilling.shown()}: DuckDB could not spill there what did not fit in --memory-limit {limit} "
                f"({_first_line(error)}).",
                hint="give --temp-directory a folder you can write to, with free space of about the table's size, "
                "or raise --memory-limit so that less is spilled.",
                code="temp-directory-unwritable",
            ) from None
        if isinstance(error, duckdb.OutOfMemoryException):  # the limit is at fault, not the table: named first
            raise IrrAuditError(
                f"--memory-limit {limit} is too small: raise it, or give DuckDB more room to spill to "
                f"(--temp-directory). DuckDB ran out of memory counting {source} ({_first_line(error)}).",
                hint="raise --memory-limit (DuckDB's units: 8GB, 16GiB), or give --temp-directory a folder with more "
                "free space to spill to.",
                code="table-memory",
            ) from None
        raise SheetError(
            f"{source} cannot be read: {_reason(error)}",
            hint="check that the file is a CSV (UTF-8, one header line) or a Parquet file, and its delimiter.",
            code="table-unreadable",
        ) from None


def _spill_folder(temp_directory: str | Path | None) -> Path:
    """A new folder for DuckDB to spill to, inside ``temp_directory`` (default: the system's)."""
    try:
        return Path(tempfile.mkdtemp(prefix="irr-audit-duckdb-", dir=temp_directory))
    except OSError as exc:
        raise UsageError(
            f"--temp-directory {temp_directory}: cannot make a folder there ({exc.strerror}).",
            hint="give an existing folder you can write to, with free space of about the table's size.",
            code="usage-temp-directory",
        ) from None


def _counts(
    connection: Any,
    duckdb: ModuleType,
    table: Path,
    head: bytes,
    rule: Rule,
    columns: LongTableColumns,
    coders: Sequence[str] | None,
    delimiter: str | None,
    limit: str,
    spilling: Spilling,
) -> tuple[LongTableCounts, CodeMap, CoderMap]:
    source = f"table {table.name}"

    def scans() -> tuple[list[RowTally], CodeMap, CoderMap, list[PatternTally]]:
        reader, names, schema = _reader(connection, table, head, delimiter)
        id_at, coder_at, code_at = column_places(names, columns, source)
        if schema is not None:  # a CSV's columns are all read as text
            check_parquet_columns(schema, (id_at, coder_at, code_at), source)
        version_at = next((at for at, name in enumerate(names) if name.strip().casefold() == "rule_version"), None)
        if version_at is not None:
            _check_rule_versions(connection, reader, version_at, rule, source)
        raw_id = f"coalesce(CAST({_column(id_at)} AS VARCHAR), '')"
        connection.execute(
            f"CREATE TEMP VIEW src AS SELECT {_trimmed(raw_id)} AS id, "
            f"CAST({_column(coder_at)} AS VARCHAR) AS coder, "
            f"CAST({_column(code_at)} AS VARCHAR) AS code FROM {reader}"
        )
        tallies = _row_tallies(connection, source)
        code_map = CodeMap.of((tally.code for tally in tallies), rule)
        coder_mapping = coder_map((tally.coder for tally in tallies), rule, source, coders)
        _register(connection, code_map, coder_mapping)
        patterns = _pattern_tallies(connection, len(rule.categories))
        return tallies, code_map, coder_mapping, patterns

    tallies, code_map, coder_mapping, patterns = _guarded(duckdb, table, limit, spilling, scans)
    return assemble(rule, coder_mapping, code_map, tallies, patterns), code_map, coder_mapping


def _head(table: Path) -> bytes:
    """The first MiB of the table (its header, its delimiter, whether it is Parquet), the file opened
    once as a regular file: a folder, a named pipe, a device, a dangling or looping link is refused."""
    subject = f"table {shown_name(table)}"
    try:
        handle = os.open(table, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise unreadable(subject, exc, "table", "check the path of the long table (CSV or Parquet).") from None
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            raise UsageError(f"{subject} is not a regular file.", hint="pass a file.", code="table-not-a-file")
        return os.read(handle, SAMPLE_BYTES)
    except OSError as exc:
        raise unreadable(subject, exc, "table", "check the path of the long table.") from None
    finally:
        os.close(handle)


def _column(at: int) -> str:
    """The SQL name of the table's column at ``at``: the reader names each column by its place, as
    the file may name two alike (DuckDB renames the second code_1) or none ("")."""
    return f"c{at}"


def _reader(
    connection: Any, table: Path, head: bytes, delimiter: str | None
) -> tuple[str, list[str], pa.Schema | None]:
    """The SQL that reads the table (its columns named c0, c1, ... by place), the names the file
    gives its columns, and a Parquet file's schema (None for a CSV)."""
    if head[:4] == PARQUET_MAGIC or table.suffix.lower() in (".parquet", ".pq"):
        schema = parquet_schema(table)  # the names as written: DuckDB renames a second `code` code_1
        read = f"read_parquet({_literal(_unglobbed(table))})"
        renamed = [row[0] for row in connection.execute(f"DESCRIBE SELECT * FROM {read}").fetchall()]
        if len(renamed) != len(schema.names):  # pragma: no cover - pyarrow and DuckDB read one footer
            raise AssertionError(f"pyarrow finds {len(schema.names)} columns in {table.name}, DuckDB {len(renamed)}")
        named = ", ".join(f"{_quoted(name)} AS {_column(at)}" for at, name in enumerate(renamed))
        return f"(SELECT {named} FROM {read})", schema.names, schema
    kind = next((kind for magic, kind in NOT_TABLES.items() if head.lstrip().startswith(magic)), None)
    if kind is not None or table.suffix.lower() in (".xlsx", ".xlsm", ".json", ".jsonl", ".ndjson"):
        raise SheetError(
            f"table {table.name} is {kind or 'a ' + table.suffix.lower()[1:].upper() + ' file'}; irr-audit counts "
            "reads a CSV (or TSV) with a header line, or Parquet.",
            hint="save the long table as CSV UTF-8 or Parquet (in DuckDB: COPY (SELECT ...) TO 'codes.parquet').",
            code="table-format",
        )
    why = foreign_mark(head)
    if why is not None:
        raise SheetError(
            f"table {table.name} is not UTF-8 text: {why}.",
            hint="save the table as CSV UTF-8, or as Parquet.",
            code="table-encoding",
        )
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
    chosen = parse_delimiter(delimiter) or (
        "\t" if table.suffix.lower() in (".tsv", ".tab") else detect_delimiter(text, f"table {table.name}")
    )
    refuse_unclosed_quote(table, chosen)
    header = csv_header(head, chosen)
    types = ", ".join(f"'{_column(at)}': 'VARCHAR'" for at in range(len(header)))
    # Short rows are padded, as a sheet's are. DuckDB's parallel CSV scanner cannot pad rows
    # beside quoted line breaks, so a CSV is parsed on one thread (Parquet is read in parallel).
    reader = (
        f"read_csv({_literal(_unglobbed(table))}, delim={_literal(chosen)}, quote='\"', escape='\"', header=true, "
        f"auto_detect=false, columns={{{types}}}, null_padding=true, parallel=false, strict_mode=true, "
        f"max_line_size={MAX_ROW_BYTES})"
    )
    return reader, header, None


def _trimmed(expression: str) -> str:
    """SQL trimming ``expression`` exactly as join trims ids (longtable.trimmed_whitespace); an id
    that starts and ends with a printable ASCII character, most ids, is kept without a look at the set."""
    ends_plain = " AND ".join(f"{expression}[{at}] > ' ' AND {expression}[{at}] < chr(127)" for at in (1, -1))
    return f"(CASE WHEN {ends_plain} THEN {expression} ELSE trim({expression}, {_literal(trimmed_whitespace())}) END)"


def _check_rule_versions(connection: Any, reader: str, at: int, rule: Rule, source: str) -> None:
    """A rule_version column must name the rule's version wherever it is filled, as a sheet's must."""
    found = connection.execute(
        f"SELECT DISTINCT CAST({_column(at)} AS VARCHAR) FROM {reader} LIMIT {MAX_DISTINCT + 1}"
    ).fetchall()
    for (text,) in found:
        try:
            version = parse_rule_version(text or "")
        except ValueError:
            version = -1
        if version is not None and version != rule.version:
            raise SheetError(
                f"{source} has rule_version {text!r}, but the rule file {rule.source_name} is {rule.id} "
                f"version {rule.version}.",
                hint=f"pass the rule file of the version the coders used (rules/{rule.id}/v<version>.yaml), "
                "or re-code those rows.",
                code="table-rule-version",
            )


def _row_tallies(connection: Any, source: str) -> list[RowTally]:
    query = """
        SELECT coder, code, count(*) AS n_rows, count(*) FILTER (WHERE id = '') AS blank_id,
               min(id) FILTER (WHERE regexp_matches(id, $control)) AS control_id
        FROM src GROUP BY coder, code LIMIT $limit
    """
    found = connection.execute(query, {"control": CONTROL_PATTERN, "limit": MAX_DISTINCT + 1}).fetchall()
    return row_tallies(found, source)


def _register(connection: Any, codes: CodeMap, coders: CoderMap) -> None:
    connection.execute("CREATE TEMP TABLE code_map(raw VARCHAR, k INTEGER, bit BIGINT, filled BOOLEAN)")
    connection.executemany("INSERT INTO code_map VALUES (?, ?, ?, ?)", codes.rows())
    # a key of (K + 1)^coders summed in 64 bits when it fits (faster), else in 128
    place = "BIGINT" if coders.base ** len(coders.coders) < 2**62 else "HUGEINT"
    connection.execute(f"CREATE TEMP TABLE coder_map(raw VARCHAR, coder INTEGER, place {place})")
    connection.executemany("INSERT INTO coder_map VALUES (?, ?, ?)", coders.rows())


def _pattern_tallies(connection: Any, n_categories: int) -> list[PatternTally]:
    return pattern_tallies(connection.execute(patterns_sql(n_categories)).fetchall())


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _unglobbed(table: Path) -> str:
    """The table's path for DuckDB's readers, which take * ? [ as a glob: `x*.csv` read every file
    matching it, and `p[1].parquet` the file p1.parquet. Each is written as a class of one character."""
    return re.sub(r"[*?\[]", lambda found: f"[{found.group()}]", str(table))


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def _reason(error: BaseException) -> str:
    """DuckDB's first line and, for a CSV error ("CSV Error on Line: 3", then the row quoted), the
    line that says why: the row's size over the limit, bytes that are not UTF-8, a stray quote."""
    lines = str(error).strip().splitlines()
    if len(lines) > 2 and lines[1].startswith("Original Line:") and lines[2].strip():
        return f"{_first_line(error)}: {printable(lines[2].strip(), 200)}"
    return _first_line(error)


LOG_COLUMNS = ("record", "coder", "comment_id", "raw_value", "reason")
# The log: every row that is not the row behind a valid cell (but empty rows), and every absent
# cell, with join's reasons. `record` numbers the table's data rows in file order (1: the first
# after the header; empty for an absent cell, which has no row); of a duplicate's rows the
# first is the cell and the later ones are logged, as join does.
LOG = """
    COPY (
        WITH numbered AS (SELECT row_number() OVER () AS record, id, coder, code FROM src),
        rows AS (
            SELECT n.record, n.id, coalesce(n.code, '') AS raw_value, m.coder AS c, m.name, k.k, k.reason, k.filled
            FROM numbered AS n
            JOIN coder_names AS m ON coalesce(n.coder, '') = m.raw
            JOIN code_reasons AS k ON coalesce(n.code, '') = k.raw
        ),
        placed AS (
            SELECT *, min(k) OVER cell AS lo, max(k) OVER cell AS hi,
                   row_number() OVER (PARTITION BY id, c ORDER BY record) AS nth
            FROM rows WHERE id <> '' AND c >= 0
            WINDOW cell AS (PARTITION BY id, c)
        ),
        logged AS (
            SELECT record, name AS coder, id AS comment_id, raw_value, 'missing_id' AS reason
            FROM rows WHERE id = '' AND filled
            UNION ALL
            SELECT record, name, id, raw_value, CASE WHEN c = -1 THEN 'no_coder' ELSE 'other_coder' END
            FROM rows WHERE id <> '' AND c < 0
            UNION ALL
            SELECT record, name, id, raw_value,
                   CASE WHEN lo <> hi THEN 'conflict' WHEN nth > 1 THEN 'duplicate' ELSE reason END
            FROM placed WHERE lo <> hi OR nth > 1 OR reason IS NOT NULL
            UNION ALL
            SELECT NULL, coders.name, units.id, '', 'absent'
            FROM (SELECT DISTINCT id FROM placed) AS units CROSS JOIN coder_list AS coders
            ANTI JOIN (SELECT DISTINCT id, c FROM placed) AS cells ON cells.id = units.id AND cells.c = coders.c
        )
        SELECT record, coder, comment_id, raw_value, reason FROM logged
        ORDER BY record NULLS LAST, coder, comment_id
    ) TO {path} (FORMAT json)
"""


def _log_unwritable(path: Path, why: str) -> OutputError:
    return OutputError(
        f"--log {path} cannot be written: {why}.",
        hint="check the folder's permissions and free space, or give --log another path.",
        code="output-unwritable",
    )


def _write_log(connection: Any, duckdb: ModuleType, path: Path, rule: Rule, codes: CodeMap, coders: CoderMap) -> None:
    """The missingness log as JSON Lines (every value verbatim), written in a private folder beside
    ``path`` and renamed into place: a log cut short is never left under its name."""
    width = len(rule.categories) + 1
    connection.execute("CREATE TEMP TABLE code_reasons(raw VARCHAR, k INTEGER, filled BOOLEAN, reason VARCHAR)")
    connection.executemany(
        "INSERT INTO code_reasons VALUES (?, ?, ?, ?)",
        [
            (raw, key, filled, None if key <= len(rule.categories) else STATUSES[key // width].value)
            for raw, key, _, filled in codes.rows()
        ],
    )
    names = dict(zip(coders.raw, trim(coders.raw)))
    connection.execute("CREATE TEMP TABLE coder_names(raw VARCHAR, coder INTEGER, name VARCHAR)")
    connection.executemany(
        "INSERT INTO coder_names VALUES (?, ?, ?)",
        [(raw, index, names[raw]) for raw, index in zip(coders.raw, coders.index)],
    )
    connection.execute("CREATE TEMP TABLE coder_list(c INTEGER, name VARCHAR)")
    connection.executemany("INSERT INTO coder_list VALUES (?, ?)", list(enumerate(coders.coders)))
    connection.execute("SET preserve_insertion_order = true")  # row_number() OVER () follows the file
    try:
        path.parent.mkdir(parents=True, exist_ok=True)  # as --out's and --summary's folders are made
        private = _private_folder_beside(path)
    except OSError as exc:
        raise _log_unwritable(path, exc.strerror or str(exc)) from None
    temporary = private / path.name
    try:
        try:
            connection.execute(LOG.format(path=_literal(str(temporary))))
        except duckdb.IOException as error:
            if str(private) not in str(error):  # not the log's own file (the table, or the spill folder)
                raise
            # the table was read whole a moment ago: a full disk or a folder made read-only is the output's
            raise _log_unwritable(path, _first_line(error)) from None
        try:
            _flush(temporary)
            os.replace(temporary, path)
        except OSError as exc:
            raise _log_unwritable(path, exc.strerror or str(exc)) from None
        fsync_folder(path.parent)
    finally:
        shutil.rmtree(private, ignore_errors=True)


def _private_folder_beside(path: Path) -> Path:
    """A new folder beside ``path`` (on its file system: the log is renamed into place, not
    copied), named by tempfile and open to this user alone. DuckDB writes the log in there: it
    opens its file following links, and writes tmp_<name> first where a file has the name, so
    beside the output a name anyone could predict would let a link planted there take the log
    into another file."""
    return Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))


def _flush(path: Path) -> None:
    """The file's bytes to disk before it takes the output's name, as write_bytes_atomic's are."""
    with open(path, "rb") as stream:
        os.fsync(stream.fileno())
