"""Write the binary and large members of the bad-input corpus into a folder.

The small text members are committed under tests/corpus/files/; these would be
binary (XLSX, UTF-16, Windows-1252, NUL bytes) or large (a 100 MB sheet, a
10 MB cell), so they are made on demand:

    python tests/corpus/generate.py OUT_DIR [--large]
"""

from __future__ import annotations

import re
import sys
import unicodedata
import zipfile
from pathlib import Path

GOOD_ROWS = [("a", "yes"), ("b", "no"), ("c", "yes")]


def csv_bytes(rows, header=("comment_id", "code"), newline="\n") -> bytes:
    lines = [",".join(header)] + [",".join(row) for row in rows]
    return (newline.join(lines) + newline).encode("utf-8")


def write_xlsx(path: Path, worksheets: dict[str, list[list[object]]], *, merged=(), hidden=(), cached=None) -> None:
    from openpyxl import Workbook

    book = Workbook()
    book.remove(book.active)
    for title, rows in worksheets.items():
        sheet = book.create_sheet(title)
        for row in rows:
            sheet.append(row)
        for cells in merged:
            sheet.merge_cells(cells)
        for number in hidden:
            sheet.row_dimensions[number].hidden = True
    book.save(path)
    if cached:
        _add_cached_values(path, cached)


def _add_cached_values(path: Path, cached: dict[str, str]) -> None:
    """openpyxl writes formulas without the value a spreadsheet would cache; add it,
    as Excel would have, so the reader's use of cached values can be tested."""
    with zipfile.ZipFile(path) as source:
        members = {name: source.read(name) for name in source.namelist()}
    xml = members["xl/worksheets/sheet1.xml"].decode()
    for cell, value in cached.items():
        xml = re.sub(rf'<c r="{cell}"><f>(.*?)</f><v\s*/>', rf'<c r="{cell}" t="str"><f>\1</f><v>{value}</v>', xml)
    members["xl/worksheets/sheet1.xml"] = xml.encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as target:
        for name, data in members.items():
            target.writestr(name, data)


def generate(out: Path, large: bool = False) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "utf16_bom.csv").write_bytes(csv_bytes(GOOD_ROWS).decode().encode("utf-16"))
    (out / "cp1252.csv").write_bytes("comment_id,code\nr\u00e9sum\u00e9,yes\n".encode("cp1252"))
    (out / "invalid_utf8.csv").write_bytes(b"comment_id,code\na,yes\xff\xfe\xfd\n")
    (out / "nul_bytes.csv").write_bytes(b"comment_id,code\na,y\x00es\n")
    (out / "binary.csv").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    (out / "lone_cr.csv").write_bytes(csv_bytes(GOOD_ROWS, newline="\r"))
    nfd = unicodedata.normalize("NFD", "caf\u00e9")
    (out / "id_nfd.csv").write_bytes(csv_bytes([(nfd, "yes"), *GOOD_ROWS]))
    (out / "id_nfc.csv").write_bytes(csv_bytes([("caf\u00e9", "yes"), *GOOD_ROWS]))
    (out / "id_zero_width.csv").write_bytes(csv_bytes([("a\u200b", "yes"), ("b", "no"), ("c", "yes")]))
    cell = "x" * 10_000_000
    (out / "cell_10mb.csv").write_bytes(
        csv_bytes([("a", "yes", cell), ("b", "no", ""), ("c", "yes", "")], header=("comment_id", "code", "body"))
    )
    header = [["comment_id", "code"]]
    write_xlsx(out / "several_worksheets.xlsx", {"Instructions": [["read me"]], "Codes": header + GOOD_ROWS})
    write_xlsx(out / "first_worksheet.xlsx", {"Codes": header + GOOD_ROWS, "Notes": [["x"]]})
    write_xlsx(out / "merged.xlsx", {"Codes": header + [["a", "yes"], ["b", None], ["c", "yes"]]}, merged=["B2:B3"])
    write_xlsx(
        out / "formulas.xlsx",
        {"Codes": header + [["a", '=LOWER("YES")'], ["b", "=1/0"], ["c", "yes"]]},
        cached={"B2": "yes", "B3": "no"},
    )
    write_xlsx(out / "numbers_as_ids.xlsx", {"Codes": header + [[7, "yes"], [123456789012, "no"], ["c", "yes"]]})
    write_xlsx(out / "dates_as_ids.xlsx", {"Codes": header + [["a", "yes"], ["b", "no"], [_date(), "yes"]]})
    write_xlsx(out / "hidden_rows.xlsx", {"Codes": header + GOOD_ROWS}, hidden=[3])
    if large:
        body = "n" * 1000
        rows = "".join(f"u{number},{'yes' if number % 2 else 'no'},{body}\n" for number in range(100_000))
        (out / "sheet_100mb.csv").write_text("comment_id,code,body\n" + rows)


def _date():
    import datetime

    return datetime.datetime(2024, 1, 5)


if __name__ == "__main__":
    generate(Path(sys.argv[1]), large="--large" in sys.argv)
