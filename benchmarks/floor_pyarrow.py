"""The floor: a process that only reads the coding sheets, nothing else.

Each CSV is parsed by pyarrow.csv with every column typed as a string (so an id
is never parsed as a number and a blank code stays an empty string), with
pyarrow's default multi-threading (quoted values may hold line breaks in the sheets
of some shapes, so a file holding a quote is read with newlines_in_values), from its
bytes read once. Nothing is joined or scored. Any tool that reads these files has to
pay at least this much; bench.py reports every other command's wall time as a
multiple of this one.

    python benchmarks/floor_pyarrow.py SHEET [SHEET...]

Prints one JSON line with the rows read per file (so the work cannot be skipped).
"""

from __future__ import annotations

import json
import sys


def main(paths: list[str]) -> None:
    import csv
    import io

    import pyarrow as pa
    import pyarrow.csv as pacsv

    rows = []
    for path in paths:
        with open(path, "rb") as handle:
            data = handle.read()
        first_line = data[: data.find(b"\n") + 1 or len(data)].decode("utf-8-sig")
        header = next(csv.reader(io.StringIO(first_line)))  # a quoted header, a BOM
        table = pacsv.read_csv(
            pa.BufferReader(data),
            parse_options=pacsv.ParseOptions(newlines_in_values=b'"' in data),
            convert_options=pacsv.ConvertOptions(
                column_types={name: pa.string() for name in header},
                strings_can_be_null=False,
            ),
        )
        rows.append(table.num_rows)
    print(json.dumps({"rows": rows}))


if __name__ == "__main__":
    main(sys.argv[1:])
