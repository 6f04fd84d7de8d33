"""The JSON report with every disagreement (`report --format json`), which can list millions:
the document through render_json, and the disagreements encoded from the join's arrays into
exactly the text json's encoder writes for their dicts. Each distinct pattern of codes is
encoded once, the comment ids are quoted by pyarrow (json escapes only the few that hold a
quote, a backslash or a control character), and no dict is made per unit.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from json.encoder import encode_basestring
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from irr_audit.io.arrowtext import from_numpy, string_array
from irr_audit.io.outputs import escaped_json, render_json
from irr_audit.join.join import JoinResult
from irr_audit.report.model import Disagreements, disagreement_items

KEY = '\n  "disagreements": '  # the document's own key: the only one two spaces in, once
ITEM_INDENT = "    "  # an item of the document's top-level list
ID_KEY = '\n      "comment_id": '  # an item's own key (a coder named comment_id is deeper in)
SEPARATOR = ",\n"  # between the items of a list
TEXT_KEY = ',\n      "text": '  # an item's last key, after its comment id's value
END = "\n    }" + SEPARATOR  # an item's closing brace
CHUNK = 100_000  # units encoded at a time: bounds the arrays of text beside the join (about 20 MB of JSON)
# What json writes as it is, between quotes: no '"' or '\', no control character (json escapes
# C0, escaped_json DEL, C1 and the bidi controls and line separators), in RE2's syntax.
PLAIN = r'^[^"\\\x00-\x1f\x7f-\x9f\x{061c}\x{200e}\x{200f}\x{202a}-\x{202e}\x{2066}-\x{2069}\x{2028}\x{2029}]*$'
# What escaped_json changes in a string json encoded (which holds no C0 control raw), in RE2's syntax.
RAW = r"[\x7f-\x9f\x{061c}\x{200e}\x{200f}\x{202a}-\x{202e}\x{2066}-\x{2069}\x{2028}\x{2029}]"
MOST_PATTERNS = 2**62  # codes ** coders above this: the patterns do not fit one int64 key


def render_report_json(document: dict[str, Any]) -> str:
    """render_json of the report's document, with its disagreements (a list, or a join's
    lazy :class:`Disagreements`) written as render_json writes a list of their dicts."""
    return b"".join(report_json_chunks(document)).decode("utf-8")


def report_json_chunks(document: dict[str, Any]) -> Iterator[bytes]:
    """:func:`render_report_json` in UTF-8 pieces of whole characters, to be written one after the
    other: millions of disagreements are never all in one string (nor in its UTF-8 copy)."""
    listed = document.get("disagreements")
    if not isinstance(listed, Disagreements):
        yield render_json(document).encode("utf-8")
        return
    text = render_json({**document, "disagreements": []})
    if not listed:
        yield text.encode("utf-8")
        return
    head, empty, tail = text.partition(KEY + "[]")
    assert empty and KEY not in tail, "the document has one top-level key 'disagreements'"
    yield f"{head}{KEY}[\n".encode()
    yield from disagreements_chunks(listed)
    yield f"\n  ]{tail}".encode()


def disagreements_json(listed: Disagreements, chunk: int = CHUNK) -> str:
    """The items of the disagreements' JSON list (without its brackets), as the document's
    encoder indents them (:func:`disagreements_chunks`)."""
    return b"".join(disagreements_chunks(listed, chunk)).decode("utf-8")


def disagreements_chunks(listed: Disagreements, chunk: int = CHUNK) -> Iterator[bytes]:
    """:func:`disagreements_json` in UTF-8, ``chunk`` units at a time: from the join's arrays when
    it can, else from their dicts."""
    join = listed.join
    encodable = _encodable(join)
    for start in range(0, len(listed.units), chunk):
        units = listed.units[start : start + chunk]
        if start:
            yield SEPARATOR.encode()
        yield _chunk_json(join, units) if encodable else _items_bytes(disagreement_items(join, units))


def items_json(items: Iterable[dict[str, Any]]) -> str:
    """The simple writer: each dict through json's encoder, indented as an item of the document's
    top-level list (a JSON string holds no line break, so every line moves in alike)."""
    encoder = _encoder()
    return ",\n".join(_indented(escaped_json(encoder.encode(item))) for item in items)


def _encoder() -> json.JSONEncoder:
    return json.JSONEncoder(indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False)


def _indented(text: str) -> str:
    return ITEM_INDENT + text.replace("\n", "\n" + ITEM_INDENT)


def _encodable(join: JoinResult) -> bool:
    """A join whose disagreements the array writer encodes: no sample ledger (its text, link and
    context are per unit), coders named once, and the patterns of codes fit an int64 key."""
    coders = join.coders
    patterns = max(len(join.rule.categories), 1) ** len(coders)
    return join.context is None and len(set(coders)) == len(coders) and patterns < MOST_PATTERNS


def _items_bytes(items: Iterable[dict[str, Any]]) -> bytes:
    return items_json(items).encode("utf-8")


def _chunk_json(join: JoinResult, units: np.ndarray) -> bytes:
    """The items of these disagreeing units, joined by SEPARATOR, in UTF-8."""
    found = join.units.take(from_numpy(units))
    if found.null_count:  # no join has a unit without an id; were there one, json writes null
        return _items_bytes(disagreement_items(join, units))
    codes = join.codes[units]  # every code valid: a disagreement is a fully coded unit
    weights = len(join.rule.categories) ** np.arange(codes.shape[1], dtype=np.int64)
    _, first, pattern = np.unique(codes.astype(np.int64) @ weights, return_index=True, return_inverse=True)
    heads = _texts([_head(join, codes[unit]) for unit in first])
    ids = _quoted_ids(found)
    tails = _tails(join.texts_for(units) if any(sheet.texts is not None for sheet in join.sheets) else None)
    items = pc.binary_join_element_wise(heads.take(from_numpy(pattern.reshape(-1))), ids, tails, _text(""))
    return _concatenated(items, drop=len(SEPARATOR))  # each item ends with one: not the last


def _concatenated(items: pa.Array, drop: int) -> bytes:
    """The UTF-8 of a large_string array's values one after the other, from its buffer, but its
    last ``drop`` bytes."""
    offsets = np.frombuffer(items.buffers()[1], dtype=np.int64)[items.offset : items.offset + len(items) + 1]
    start, end = int(offsets[0]), int(offsets[-1]) - drop
    return items.buffers()[2].slice(start, end - start).to_pybytes()


def _head(join: JoinResult, codes: np.ndarray) -> str:
    """An item's text up to its comment id's value: '{', the codes (coders in sorted order) and the key."""
    categories = join.rule.categories
    item = {"codes": {coder: categories[code] for coder, code in zip(join.coders, codes.tolist())}, "comment_id": ""}
    text = _indented(escaped_json(_encoder().encode(item)))
    head, key, _ = text.rpartition(ID_KEY)
    return head + key


def _quoted_ids(ids: pa.Array) -> pa.Array:
    """Each id as a JSON string: quoted by pyarrow when plain, escaped by json's encoder when not."""
    ids = ids.cast(pa.large_string())
    quote = _text('"')
    quoted = pc.binary_join_element_wise(quote, ids, quote, _text(""))
    odd = pc.invert(pc.match_substring_regex(ids, PLAIN))
    if not pc.any(odd).as_py():
        return quoted
    escaped = [escaped_json(encode_basestring(text)) for text in ids.filter(odd).to_pylist()]
    return pc.replace_with_mask(quoted, odd, _texts(escaped))


def _tails(texts: list[str | None] | None) -> pa.Array | pa.Scalar:
    """Each item's text key and value and its closing brace (one string when no sheet has texts)."""
    if texts is None:
        return _text(f"{TEXT_KEY}null{END}")
    encoded = _texts(["null" if text is None else encode_basestring(text) for text in texts])
    raw = pc.match_substring_regex(encoded, RAW)
    if pc.any(raw).as_py():  # a C1 control, a bidi control or a line separator: escaped_json's own
        escaped = [escaped_json(text) for text in encoded.filter(raw).to_pylist()]
        encoded = pc.replace_with_mask(encoded, raw, _texts(escaped))
    return pc.binary_join_element_wise(_text(TEXT_KEY), encoded, _text(END), _text(""))


def _texts(texts: list[str]) -> pa.Array:
    return string_array(texts).cast(pa.large_string())  # pyarrow joins text of one type only


def _text(text: str) -> pa.Scalar:
    return _texts([text])[0]
