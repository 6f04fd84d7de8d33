"""The JSON report with every disagreement (`report --format json`), which can list millions:
the document through render_json, and the disagreements encoded from the join's arrays into
exactly the text json's encoder writes for their dicts. Each distinct pattern of codes is
encoded once, the comment ids are quoted by pyarrow (json escapes only the few that hold a
quote, a backslash or a character outside printable ASCII), and no dict is made per unit.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from json.encoder import encode_basestring
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from irr_audit.io.arrowtext import from_numpy
from irr_audit.io.outputs import escaped_json, render_json
from irr_audit.join.join import JoinResult
from irr_audit.report.model import Disagreements, disagreement_items

KEY = '\n  "disagreements": '  # the document's own key: the only one two spaces in, once
ITEM_INDENT = "    "  # an item of the document's top-level list
ID_KEY = '\n      "comment_id": '  # an item's own key (a coder named comment_id is deeper in)
SEPARATOR = ",\n"  # between the items of a list
CHUNK = 1_000_000  # units encoded at a time: bounds the arrays of text beside the result
PLAIN_ID = r"^[ !#-\[\]-~]*$"  # printable ASCII but '"' and '\': json writes it as it is
MOST_PATTERNS = 2**62  # codes ** coders above this: the patterns do not fit one int64 key


def render_report_json(document: dict[str, Any]) -> str:
    """render_json of the report's document, with its disagreements (a list, or a join's
    lazy :class:`Disagreements`) written as render_json writes a list of their dicts."""
    listed = document.get("disagreements")
    if not isinstance(listed, Disagreements):
        return render_json(document)
    text = render_json({**document, "disagreements": []})
    if not listed:
        return text
    head, empty, tail = text.partition(KEY + "[]")
    assert empty and KEY not in tail, "the document has one top-level key 'disagreements'"
    return f"{head}{KEY}[\n{disagreements_json(listed)}\n  ]{tail}"


def disagreements_json(listed: Disagreements, chunk: int = CHUNK) -> str:
    """The items of the disagreements' JSON list (without its brackets), as the document's
    encoder indents them: from the join's arrays when it can (``chunk`` units at a time), else
    from their dicts."""
    join = listed.join
    if not _encodable(join):
        return items_json(listed)
    chunks = (listed.units[start : start + chunk] for start in range(0, len(listed.units), chunk))
    return SEPARATOR.join(_chunk_json(join, units) for units in chunks)


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


def _chunk_json(join: JoinResult, units: np.ndarray) -> str:
    """The items of these disagreeing units, joined by SEPARATOR."""
    codes = join.codes[units]  # every code valid: a disagreement is a fully coded unit
    weights = len(join.rule.categories) ** np.arange(codes.shape[1], dtype=np.int64)
    _, first, pattern = np.unique(codes.astype(np.int64) @ weights, return_index=True, return_inverse=True)
    heads = pa.array([_head(join, codes[unit]) for unit in first], type=pa.large_string())
    found = join.units.take(from_numpy(units))
    if found.null_count:  # no join has a unit without an id; were there one, json writes null
        return items_json(disagreement_items(join, units))
    ids = _quoted_ids(found)
    tails = _tails(join.texts_for(units))
    items = pc.binary_join_element_wise(heads.take(from_numpy(pattern.reshape(-1))), ids, tails, _text(""))
    return _concatenated(items, drop=len(SEPARATOR))  # each item ends with one: not the last


def _concatenated(items: pa.Array, drop: int) -> str:
    """The text of a large_string array's values one after the other, from its buffer, but its
    last ``drop`` bytes."""
    offsets = np.frombuffer(items.buffers()[1], dtype=np.int64)[items.offset : items.offset + len(items) + 1]
    start, end = int(offsets[0]), int(offsets[-1]) - drop
    return str(items.buffers()[2].slice(start, end - start), "utf-8")


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
    plain = pc.match_substring_regex(ids, PLAIN_ID).to_numpy(zero_copy_only=False)
    if plain.all():
        return quoted
    escaped = [escaped_json(encode_basestring(text)) for text in ids.filter(pa.array(~plain)).to_pylist()]
    return pc.replace_with_mask(quoted, pa.array(~plain), pa.array(escaped, type=pa.large_string()))


def _tails(texts: list[str | None]) -> pa.Array | pa.Scalar:
    """Each item's text key and value and its closing brace (one string when no unit has a text)."""
    if all(text is None for text in texts):
        return _text(_tail(None))
    return pa.array([_tail(text) for text in texts], type=pa.large_string())


def _tail(text: str | None) -> str:
    value = "null" if text is None else escaped_json(encode_basestring(text))
    return f',\n      "text": {value}\n    }}{SEPARATOR}'


def _text(text: str) -> pa.Scalar:
    return pa.scalar(text, type=pa.large_string())  # pyarrow joins text of one type only
