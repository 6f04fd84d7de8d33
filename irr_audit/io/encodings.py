"""Text that is not UTF-8 because it is in UTF-16 or UTF-32: named by the encoding its
byte-order mark gives, by every reader of a text file (rule and codebook files, collector
exports, import exports, decisions files, digest lists, ledgers, manifests and records),
with the fix: save it again as UTF-8. The coding sheets' reader (irr_audit.io.tables) reads
UTF-16 sheets and refuses UTF-32 ones in the same words.
"""

from __future__ import annotations

from irr_audit.errors import IrrAuditError

# The byte-order marks of the encodings a file saved as "Unicode" is in (Notepad, Excel's "Unicode
# Text", PowerShell): UTF-32's first, since its little-endian mark FF FE 00 00 starts with UTF-16's FF FE.
# None of them can open a UTF-8 file (FF and FE are never UTF-8, nor is 00 00 FE), so a file that
# starts with one is named by its encoding, not by its first byte that is not UTF-8.
UTF32_MARKS = {b"\xff\xfe\x00\x00": "UTF-32 (little-endian)", b"\x00\x00\xfe\xff": "UTF-32 (big-endian)"}
UTF16_MARKS = {b"\xff\xfe": "UTF-16 (little-endian)", b"\xfe\xff": "UTF-16 (big-endian)"}
SAVE_AS_UTF8 = (
    "save it again as UTF-8: in a text editor, Save As with the encoding UTF-8; in Excel, the type "
    "'CSV UTF-8'; in LibreOffice or Google Sheets, the character set UTF-8."
)


def utf32_mark(data: bytes) -> str | None:
    """The UTF-32 whose byte-order mark ``data`` starts with, or None. To be asked before
    UTF-16's: UTF-32's little-endian mark FF FE 00 00 starts with UTF-16's FF FE."""
    return next((encoding for mark, encoding in UTF32_MARKS.items() if data.startswith(mark)), None)


def byte_order_mark(data: bytes) -> str | None:
    """The encoding (UTF-32 or UTF-16, and its byte order) whose byte-order mark ``data`` starts with, or None."""
    return utf32_mark(data) or next((name for mark, name in UTF16_MARKS.items() if data.startswith(mark)), None)


def foreign_mark(data: bytes) -> str | None:
    """Why ``data`` is not UTF-8 when it starts with another encoding's byte-order mark, as a clause
    for a message ("it starts with the byte-order mark of UTF-16 (little-endian), which irr-audit
    does not read"); None for any other bytes. Every reader of a text file asks this first."""
    encoding = byte_order_mark(data)
    return None if encoding is None else unread_mark(encoding)


def unread_mark(encoding: str) -> str:
    """The clause naming an encoding irr-audit does not read (``encoding`` as byte_order_mark gives it)."""
    return f"it starts with the byte-order mark of {encoding}, which irr-audit does not read"


def refuse_foreign_mark(
    data: bytes, subject: str, *, code: str, error: type[IrrAuditError] = IrrAuditError, hint: str = SAVE_AS_UTF8
) -> None:
    """Refuse text in UTF-16 or UTF-32, naming the encoding its byte-order mark gives (``subject``:
    what the file is and its path, as the reader's other messages name it)."""
    why = foreign_mark(data)
    if why is not None:
        raise error(f"{subject} is not UTF-8 text: {why}.", hint=hint, code=code)


def not_utf8(error: UnicodeDecodeError, otherwise: str) -> str:
    """Why bytes failed to decode as UTF-8, for a message: the encoding of their byte-order mark,
    or else ``otherwise`` (the reader's own words, naming the byte)."""
    return foreign_mark(bytes(error.object)) or otherwise
