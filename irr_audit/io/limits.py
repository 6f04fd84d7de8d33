"""Limits on what irr-audit reads, and the JSON readers that keep them.

Every input file is read with a limit on its size, and JSON, JSON Lines and YAML
with a limit on nesting depth and on the digits of a number, checked before the
parser builds anything (a file 10,000 levels deep would otherwise exhaust
Python's recursion, and an integer of 5,000 digits its integer conversion). XLSX
limits (uncompressed size, compression ratio, cells, rows, columns) are checked
by irr_audit.io.xlsx before openpyxl parses the workbook; the size of every input
file by irr_audit.io.files.

Each limit names itself when it is exceeded, with the file, the place and the way
to raise it: the defaults fit a real audit (a sheet of a million rows), and
`--limit NAME=VALUE` raises one for a run that needs more. The library takes a
``Limits`` (through ``SheetOptions.limits`` and the ``limits`` argument of the
readers); nothing here is global.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

import numpy as np

from irr_audit.errors import IrrAuditError, LimitError, UsageError
from irr_audit.io.display import printable
from irr_audit.io.encodings import foreign_mark

if TYPE_CHECKING:
    from typing_extensions import Unpack  # in typing from Python 3.11

GIB = 1 << 30
MIB = 1 << 20
MAX_DEPTH = 500  # json and yaml recurse once per level; Python stops at about 1,000 frames


@dataclass(frozen=True)
class Limits:
    """What irr-audit reads at most. The defaults fit a sheet of a million rows.

    - ``file_bytes``: any one input file (sheet, dataset, run record, rule, manifest, record).
    - ``line_bytes``: one line of a JSON Lines file (one record).
    - ``depth``: nesting of JSON, JSON Lines and YAML (a sheet or a manifest nests a few levels).
    - ``number_digits``: digits of one number in JSON or YAML.
    - ``rule_bytes``: a rule file.
    - ``rule_codes``: the codes (plus missing codes and aliases) of one rule.
    - ``codebook_rules``: the rules (variables) of one codebook; each is a column of every sheet.
    - ``xlsx_bytes``: an XLSX workbook unpacked (all its parts together).
    - ``xlsx_ratio``: how many times larger a part of an XLSX file may unpack than it is packed
      (a zip bomb unpacks 1,000 times; spreadsheets 5 to 50 times).
    - ``xlsx_cells``: cells of a workbook's worksheets, and the rows x columns of the one read.
    - ``xlsx_rows``: rows of a worksheet (its last used cell).
    - ``columns``: columns of a sheet (a CSV or TSV header, the keys of a JSON Lines
      file, a worksheet's last used column); a coding sheet has a handful.
    """

    file_bytes: int = 2 * GIB
    line_bytes: int = 64 * MIB
    depth: int = 64
    number_digits: int = 1000
    rule_bytes: int = 1_000_000
    rule_codes: int = 1000
    codebook_rules: int = 500
    xlsx_bytes: int = 2 * GIB
    xlsx_ratio: int = 250
    xlsx_cells: int = 10_000_000
    xlsx_rows: int = 1_048_576  # the most a worksheet can have
    columns: int = 1000


DEFAULT_LIMITS = Limits()
LIMIT_NAMES = tuple(field.name for field in dataclasses.fields(Limits))
_SUFFIXES = {"k": 1, "m": 2, "g": 3, "t": 4}  # powers of 1000 (K, M, G, T) or of 1024 (Ki, Mi, Gi, Ti)


def parse_limit_options(values: list[str] | None, base: Limits = DEFAULT_LIMITS) -> Limits:
    """``["xlsx_cells=50000000", "file-bytes=8G"]`` -> Limits. Pure.

    A value is a positive whole number; ``_`` and ``,`` may group its digits, and a
    suffix K, M, G or T multiplies it by 1000, 1000^2, ..., and Ki, Mi, Gi, Ti by
    1024, 1024^2, ... (``50M`` cells, ``8GiB``; a trailing B is ignored).

    >>> parse_limit_options(["depth=100", "file-bytes=8GiB", "xlsx_cells=50M"]).xlsx_cells
    50000000
    """
    changes: dict[str, int] = {}
    for text in values or ():
        name, sep, value = text.partition("=")
        key = name.strip().lower().replace("-", "_")
        if not sep or key not in LIMIT_NAMES:
            raise UsageError(
                f"--limit {text!r} is not NAME=VALUE with a known limit.",
                hint=f"the limits are {', '.join(LIMIT_NAMES)}; for example --limit xlsx_cells=50000000.",
                code="usage-limit",
            )
        changes[key] = _limit_value(key, value)
    return dataclasses.replace(base, **changes)


def _limit_value(name: str, text: str) -> int:
    cleaned = text.strip().replace("_", "").replace(",", "").lower().removesuffix("b")
    base = 1024 if cleaned.endswith("i") else 1000
    cleaned = cleaned.removesuffix("i")
    factor = 1
    if cleaned[-1:] in _SUFFIXES:
        factor, cleaned = base ** _SUFFIXES[cleaned[-1]], cleaned[:-1]
    if not cleaned.isdigit() or len(cleaned) > 18 or int(cleaned) * factor < 1:
        raise UsageError(
            f"--limit {name}={text} is not a positive whole number.",
            hint=f"for example --limit {name}={getattr(DEFAULT_LIMITS, name) * 2}.",
            code="usage-limit",
        )
    if name == "depth" and int(cleaned) * factor > MAX_DEPTH:
        raise UsageError(
            f"--limit depth={text} is more than {MAX_DEPTH}, the deepest Python's JSON and YAML parsers can go.",
            hint=f"use --limit depth={MAX_DEPTH} at most.",
            code="usage-limit",
        )
    return int(cleaned) * factor


OWN_FILE = "irr-audit writes this file, never this large or deep: it was altered. Restore it from a copy."


def limit_error(
    name: str, limits: Limits, subject: str, found: str, why: str = "", own_file: bool = False
) -> LimitError:
    """The one message for an exceeded limit: the file, what it holds, the limit, how to raise it
    (or, for a file irr-audit wrote, that it was altered)."""
    value = getattr(limits, name)
    fix = OWN_FILE if own_file else f"If the file is right, raise the limit: --limit {name}=N."
    return LimitError(
        f"{subject} {found}; the limit {name} is {value:,}.",
        hint=(why + " " if why and not own_file else "") + fix,
        code="limit-" + name.replace("_", "-"),
    )


# --- JSON and JSON Lines ------------------------------------------------------------


class JsonHooks(TypedDict, total=False):
    """What ``json.loads`` calls for numbers, NaN and Infinity, and objects (instead of its own)."""

    parse_int: Callable[[str], Any]
    parse_float: Callable[[str], Any]
    parse_constant: Callable[[str], Any]
    object_pairs_hook: Callable[[list[tuple[str, Any]]], Any]


def load_json(
    data: bytes | str,
    subject: str,
    limits: Limits = DEFAULT_LIMITS,
    own_file: bool = False,
    **hooks: Unpack[JsonHooks],
) -> Any:
    """``json.loads`` within the limits. A syntax error is json.JSONDecodeError (a
    ValueError) as from json.loads, and so are NaN and Infinity, which JSON does not
    have (pass ``parse_constant`` to accept them); a limit exceeded is LimitError; an
    object that gives a key twice is RepeatedKey (a ValueError; ``repeated_key_place`` finds it).
    ``own_file``: a file irr-audit wrote (a manifest, a summary), which no option should
    let grow, and whose keys are not checked (it is never written with a key twice).
    ``hooks`` are json.loads's parse_int, parse_float, parse_constant and object_pairs_hook."""
    raw, text = _both(data)
    if len(raw) > limits.file_bytes:
        raise limit_error("file_bytes", limits, subject, f"is {len(raw):,} bytes", own_file=own_file)
    deep = _first_too_deep(raw, limits.depth, per_line=False)
    if deep is not None:
        raise limit_error(
            "depth",
            limits,
            subject,
            f"nests deeper than {limits.depth} levels at {_where(raw, deep)}",
            why=_DEPTH_WHY,
            own_file=own_file,
        )
    return _loads(text, subject, limits, _has_long_number(raw, limits), hooks, own_file)


def json_lines(
    data: bytes | str, subject: str, limits: Limits = DEFAULT_LIMITS, own_file: bool = False
) -> Iterator[tuple[int, str]]:
    """(line number, line) of each non-blank line of a JSON Lines file, once the whole
    file is checked against the limits (line size, depth). Lines are split on "\\n"
    only: str.splitlines would also split inside a JSON string at U+2028. Decode each
    line with ``load_json_line``."""
    raw, text = _both(data)
    deep = _first_too_deep(raw, limits.depth, per_line=True)
    if deep is not None:
        deep_line = raw.count(b"\n", 0, deep) + 1
        raise limit_error(
            "depth",
            limits,
            subject,
            f"line {deep_line} nests deeper than {limits.depth} levels",
            why=_DEPTH_WHY,
            own_file=own_file,
        )
    for number, line in enumerate(text.split("\n"), start=1):
        if len(line) > limits.line_bytes // 4 and len(line.encode("utf-8")) > limits.line_bytes:
            raise limit_error(
                "line_bytes",
                limits,
                subject,
                f"line {number} is {len(line.encode('utf-8')):,} bytes",
                why="A JSON Lines file holds one record per line.",
                own_file=own_file,
            )
        if line.strip():
            yield number, line


def load_json_line(
    line: str,
    subject: str,
    limits: Limits = DEFAULT_LIMITS,
    own_file: bool = False,
    *,
    numbers_checked: bool = False,
    **hooks: Unpack[JsonHooks],
) -> Any:
    """One line of a file already passed through ``json_lines`` (its depth is checked).
    ``numbers_checked``: this line is not among the file's ``number_check_lines``, so its
    numbers are not looked at again."""
    check_numbers = not numbers_checked and _has_long_number(line.encode("utf-8"), limits)
    return _loads(line, subject, limits, check_numbers, hooks, own_file)


def number_check_lines(data: bytes | str, limits: Limits = DEFAULT_LIMITS) -> set[int]:
    """The lines (from 1) of a JSON Lines file where a number could pass the limit on digits
    or be infinite: only there must json.loads check each number, a call per number. One pass
    over the file, so that no line is looked at again
    (``load_json_line(..., numbers_checked=number not in these)``)."""
    raw = data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass")
    found = _long_number_starts(raw, limits.number_digits)
    if not len(found):
        return set()
    line_ends = np.concatenate([np.flatnonzero(chunk == 0x0A) + low for low, chunk in _chunks(raw, 0)])
    return set((np.searchsorted(line_ends, found) + 1).tolist())


def load_json_records(
    data: bytes | str, subject: str, limits: Limits = DEFAULT_LIMITS, own_file: bool = False
) -> list[tuple[int, Any]]:
    """(line number, value) of every line of a JSON Lines file; a line that is not JSON
    is an IrrAuditError naming the file and the line."""
    records = []
    flagged = number_check_lines(data, limits)
    for number, line in json_lines(data, subject, limits, own_file):
        try:
            value = load_json_line(
                line, f"{subject} line {number}", limits, own_file, numbers_checked=number not in flagged
            )
            records.append((number, value))
        except ValueError as exc:
            raise IrrAuditError(
                f"{subject} line {number} is not valid JSON: {getattr(exc, 'msg', exc)}.",
                hint="restore the file: JSON Lines has one JSON value per line.",
                code="json-lines-invalid",
            ) from None
    return records


_DEPTH_WHY = "Data irr-audit reads nests a few levels."


class RepeatedKey(ValueError):
    """A key given twice in one JSON object of a file a person gave (json.loads keeps the last
    value, silently): which value was meant cannot be known, so the file is refused. The
    caller names the file, the record and the key; ``repeated_key_place`` finds the object."""

    def __init__(self, key: str) -> None:
        super().__init__(f"the key {key!r} is given twice in one object")
        self.key = key


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """The object_pairs_hook of every file a person gave (the default of ``load_json`` and
    ``load_json_line`` unless ``own_file``): a dict as json.loads makes it, but RepeatedKey for a
    key given twice. One hook for every line, so that one decoder reads them all (``_decoder``);
    only an object with a repeated key costs more than making its dict."""
    item = dict(pairs)
    if len(item) < len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise RepeatedKey(key)
            seen.add(key)
    return item


def repeated_key_place(text: str) -> tuple[tuple[str | int, ...], str] | None:
    """Where the first object that gives a key twice is in JSON ``text`` (one that raised
    RepeatedKey): the keys and 0-based positions that lead to it, and the key; None when
    there is none. The slow path of a refusal: the text is decoded again, its numbers as text."""
    try:
        document = json.JSONDecoder(
            object_pairs_hook=_marked_repeats, parse_int=str, parse_float=str, parse_constant=str
        ).decode(text.removeprefix("\ufeff"))
    except ValueError:  # damaged after the repeat, which was met first: the key is named without its place
        return None
    return _first_repeat(document, ())


def repeated_key_sentence(subject: str, text: str, repeated: RepeatedKey, entries: str = "") -> str:
    """The refusal of ``text`` for RepeatedKey, naming where: "dataset d.json item 3 gives the
    key 't' twice (in body)." ``entries``: what the entries of a top-level array are called
    ("item", "record"), counted from 1; "" when ``subject`` already names the place (a line)."""
    found = repeated_key_place(text)
    path, key = found if found is not None else ((), repeated.key)
    if entries and path and isinstance(path[0], int):
        subject, path = f"{subject} {entries} {path[0] + 1}", path[1:]
    inner = f" (in {place_text(path)})" if path else ""
    return f"{subject} gives the key {printable(key)!r} twice{inner}."


def repeated_key_refusal(
    subject: str, text: str, repeated: RepeatedKey, *, code: str, fix: str, entries: str = ""
) -> IrrAuditError:
    """The refusal of a file a person gave for RepeatedKey: where (``repeated_key_sentence``),
    and the fix, ending with ``fix`` (what makes the file again)."""
    return IrrAuditError(
        repeated_key_sentence(subject, text, repeated, entries),
        hint=f"keep the right one of the two values and delete the other (a JSON object has one value per key), "
        f"or {fix}",
        code=code,
    )


def place_text(path: tuple[str | int, ...]) -> str:
    """A path of ``repeated_key_place`` for a message: ``inputResults[0].meta``."""
    shown = "".join(f"[{step}]" if isinstance(step, int) else f".{printable(step, 40)}" for step in path)
    return shown.removeprefix(".")


class _Repeats(dict[str, Any]):
    """A decoded object that gave ``repeated`` twice (``repeated_key_place``)."""

    repeated = ""


def _marked_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    try:
        return unique_keys(pairs)
    except RepeatedKey as repeated:
        marked = _Repeats(pairs)
        marked.repeated = repeated.key
        return marked


def _first_repeat(value: Any, path: tuple[str | int, ...]) -> tuple[tuple[str | int, ...], str] | None:
    if isinstance(value, _Repeats):
        return path, value.repeated
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for step, child in children:
        found = _first_repeat(child, (*path, step))
        if found is not None:
            return found
    return None


def _both(data: bytes | str) -> tuple[bytes, str]:
    if isinstance(data, str):
        return data.encode("utf-8", "surrogatepass"), data
    why = foreign_mark(data)
    if why is not None:  # a UnicodeDecodeError as decoding raises, its reason naming the encoding
        raise UnicodeDecodeError("utf-8", data, 0, 1, why)
    return data, data.decode("utf-8")


def _where(raw: bytes, offset: int) -> str:
    line = raw.count(b"\n", 0, offset) + 1
    column = offset - (raw.rfind(b"\n", 0, offset) + 1) + 1
    return f"line {line}, column {column}"


def _loads(
    text: str, subject: str, limits: Limits, check_numbers: bool, hooks: JsonHooks, own_file: bool = False
) -> Any:
    if check_numbers:  # a line that may hold a number past the limits: each number looked at
        return json.loads(text, **_checking_options(text, subject, limits, hooks, own_file))
    if text.startswith("\ufeff"):  # as json.loads refuses it
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    decoder = _decoder(
        hooks.get("parse_int"), hooks.get("parse_float"), hooks.get("parse_constant"), _pairs_hook(hooks, own_file)
    )
    try:
        return decoder.decode(text)
    except _ConstantFound as found:
        raise _constant_error(text, found.name) from None


def _checking_options(text: str, subject: str, limits: Limits, hooks: JsonHooks, own_file: bool) -> dict[str, Any]:
    """json.loads options that refuse a number of too many digits, or too large, naming where it is."""
    numbers: dict[str, tuple[Callable[[str], Any] | None, Callable[[str], Any]]] = {
        "parse_int": (hooks.get("parse_int"), int),
        "parse_float": (hooks.get("parse_float"), float),
    }
    return {
        "parse_constant": hooks.get("parse_constant") or _refuse_constant(text),
        "object_pairs_hook": _pairs_hook(hooks, own_file),
        **{
            key: _checked_number(hook or convert, text, subject, limits, own_file)
            for key, (hook, convert) in numbers.items()
        },
    }


def _pairs_hook(hooks: JsonHooks, own_file: bool) -> Callable[[list[tuple[str, Any]]], Any] | None:
    """The caller's object_pairs_hook; else a repeated key refused in a file a person gave."""
    return hooks.get("object_pairs_hook", None if own_file else unique_keys)


class _ConstantFound(Exception):
    """NaN, Infinity or -Infinity in JSON text (not JSON): raised from inside the decoder, named after."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def _found_constant(name: str) -> Any:
    raise _ConstantFound(name)


@functools.lru_cache(maxsize=16)  # a decoder per set of hooks: making one costs more than a short line's parse
def _decoder(
    parse_int: Callable[[str], Any] | None,
    parse_float: Callable[[str], Any] | None,
    parse_constant: Callable[[str], Any] | None,
    object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None,
) -> json.JSONDecoder:
    """What json.loads(text, **hooks) decodes with, but for a constant: one refused without the text
    at hand (``_loads`` names it)."""
    return json.JSONDecoder(
        parse_int=parse_int,
        parse_float=parse_float,
        parse_constant=parse_constant or _found_constant,
        object_pairs_hook=object_pairs_hook,
    )


def _refuse_constant(text: str) -> Callable[[str], Any]:
    def refuse(name: str) -> Any:
        raise _constant_error(text, name)

    return refuse


def _constant_error(text: str, name: str) -> json.JSONDecodeError:
    return json.JSONDecodeError(f"{name} is not a JSON number", text, max(text.find(name), 0))


def _checked_number(
    convert: Callable[[str], Any], text: str, subject: str, limits: Limits, own_file: bool
) -> Callable[[str], Any]:
    def checked(token: str) -> Any:
        digits = sum(character.isdigit() for character in token)
        if digits > limits.number_digits:
            at = text.find(token)
            where = f" at {_where(text.encode('utf-8'), len(text[:at].encode('utf-8')))}" if at >= 0 else ""
            raise limit_error(
                "number_digits", limits, subject, f"has a number of {digits:,} digits{where}", own_file=own_file
            )
        value = convert(token)
        if isinstance(value, float) and math.isinf(value):
            raise json.JSONDecodeError(f"the number {token[:20]}... is too large", text, max(text.find(token), 0))
        return value

    return checked


@functools.lru_cache(maxsize=8)
def _long_number_pattern(digits: int) -> re.Pattern[bytes]:
    # a run of digits longer than the limit, or an exponent of three digits (1e400 is infinite)
    return re.compile(rb"[0-9]{%d}|[eE][+-]?[0-9]{3}" % (digits + 1))


def _has_long_number(raw: bytes, limits: Limits) -> bool:
    """Whether the numbers must be checked one by one (rarely: the check costs a call per number):
    a run of more digits than the limit, or an exponent of three digits, anywhere (in a string too)."""
    if len(raw) <= _SCAN_CHUNK:
        return _long_number_pattern(limits.number_digits).search(raw) is not None
    return len(_long_number_starts(raw, limits.number_digits)) > 0  # (the pattern costs about 15 ns a byte)


def _long_number_starts(raw: bytes, digits: int) -> np.ndarray:
    """Where ``_long_number_pattern(digits)`` matches, as arrays, a chunk at a time: the starts of
    the runs of ASCII digits longer than ``digits``, or three or more long right after an e or
    E (and a sign). Each chunk reaches back two bytes (an exponent's e and sign) and on past its
    end, so that whatever starts in it is seen whole (a start may be found twice)."""
    found = [starts + low for low, chunk in _chunks(raw, digits + 4) if len(starts := _starts_in(chunk, digits))]
    return np.concatenate(found) if found else np.empty(0, np.int64)


def _chunks(raw: bytes, past_end: int) -> Iterator[tuple[int, np.ndarray]]:
    """(offset, bytes) of each _SCAN_CHUNK of ``raw``, two bytes before it and ``past_end`` after
    it included when ``past_end`` (none, so that the chunks do not overlap, when 0)."""
    for start in range(0, len(raw), _SCAN_CHUNK):
        low = max(0, start - 2) if past_end else start
        high = min(len(raw), start + _SCAN_CHUNK + past_end)
        yield low, np.frombuffer(raw, dtype=np.uint8, count=high - low, offset=low)


def _starts_in(chunk: np.ndarray, digits: int) -> np.ndarray:
    is_digit = ((chunk >= 0x30) & (chunk <= 0x39)).view(np.int8)
    edges = np.flatnonzero(np.diff(is_digit, prepend=np.int8(0), append=np.int8(0)))
    starts, ends = edges[0::2], edges[1::2]  # runs of digits: chunk[starts[i]:ends[i]]
    lengths = ends - starts
    long = starts[lengths > digits]
    starts = starts[(lengths >= 3) & (starts >= 1)]
    before = chunk[starts - 1]
    signed = ((before == 0x2B) | (before == 0x2D)) & (starts >= 2)
    mark = np.where(signed, chunk[np.maximum(starts - 2, 0)], before)
    return np.concatenate([long, starts[(mark == 0x65) | (mark == 0x45)]])


# Bytes that matter to nesting: " \ [ ] { } and the line feed.
_INTERESTING = np.zeros(256, dtype=bool)
_INTERESTING[[0x22, 0x5C, 0x5B, 0x5D, 0x7B, 0x7D, 0x0A]] = True
_SCAN_CHUNK = 4 * MIB


def _first_too_deep(raw: bytes, limit: int, per_line: bool) -> int | None:
    """The offset of the first [ or { that opens level ``limit`` + 1 outside a string, or None.

    A linear, vectorised scan of the bytes (never a recursion), in chunks that end
    at line feeds: a JSON string cannot hold a raw line feed, so the string state
    starts afresh on each line and only the level is carried from chunk to chunk
    (and, for JSON Lines, restarts at each line)."""
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return None
    if per_line and _most_opened_on_a_line(raw) <= limit:
        return None  # (a line nests at most as deep as the brackets it opens)
    level = 0
    for start, end in _line_chunks(raw):
        found, level = _scan_chunk(raw, start, end, level, limit, per_line)
        if found is not None:
            return found
    return None


def _line_chunks(raw: bytes) -> Iterator[tuple[int, int]]:
    """(start, end) of chunks of about _SCAN_CHUNK bytes, each ending at a line feed (or the end)."""
    start = 0
    while start < len(raw):
        end = raw.find(b"\n", min(start + _SCAN_CHUNK, len(raw)))
        end = len(raw) if end < 0 else end + 1
        yield start, end
        start = end


def _most_opened_on_a_line(raw: bytes) -> int:
    """The most [ and { on any one line, strings and all: counted a chunk of lines at a time."""
    most = 0
    for start, end in _line_chunks(raw):
        chunk = np.frombuffer(raw, dtype=np.uint8, count=end - start, offset=start)
        opens = np.flatnonzero((chunk == 0x5B) | (chunk == 0x7B))
        if len(opens):
            line_of = np.searchsorted(np.flatnonzero(chunk == 0x0A), opens)
            most = max(most, int(np.bincount(line_of).max()))
    return most


def _scan_chunk(raw: bytes, start: int, end: int, level: int, limit: int, per_line: bool) -> tuple[int | None, int]:
    chunk = np.frombuffer(raw, dtype=np.uint8, count=end - start, offset=start)
    at = np.flatnonzero(_INTERESTING[chunk])
    if not len(at):
        return None, level
    byte = chunk[at]
    index = np.arange(len(at))
    adjacent = np.zeros(len(at), dtype=bool)
    adjacent[1:] = at[1:] == at[:-1] + 1
    backslash = byte == 0x5C
    continues = backslash & adjacent & np.concatenate(([False], backslash[:-1]))
    run_start = np.maximum.accumulate(np.where(backslash & ~continues, index, -1))
    run = np.where(backslash, index - run_start + 1, 0)
    before = np.zeros(len(at), dtype=np.int64)
    before[1:] = np.where(adjacent[1:], run[:-1], 0)  # backslashes right before each byte
    quote = (byte == 0x22) & (before % 2 == 0)
    newline = byte == 0x0A
    quotes = np.cumsum(quote)
    outside = (quotes - np.maximum.accumulate(np.where(newline, quotes, 0))) % 2 == 0
    opens = outside & ((byte == 0x5B) | (byte == 0x7B))
    closes = outside & ((byte == 0x5D) | (byte == 0x7D))
    levels = level + np.cumsum(opens.astype(np.int64) - closes)
    if per_line:
        last_newline = np.maximum.accumulate(np.where(newline, index, -1))
        depth = levels - np.where(last_newline >= 0, levels[np.maximum(last_newline, 0)], level)
    else:
        depth = levels
    over = np.flatnonzero(depth > limit)
    if len(over):
        return start + int(at[over[0]]), 0
    return None, (0 if per_line else int(levels[-1]))
