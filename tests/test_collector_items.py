"""Which key of an export's item feeds which field: the reader plans this once per layout of
keys (irr_audit.io.collector._item_reader); here every item is held to the plain definition,
each field looked up spelling by spelling in the item itself."""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from irr_audit.io.collector import ITEM_FIELDS, PLANS_KEPT, Item, field_spellings, parse_dataset
from irr_audit.io.display import CONTROL

KEYS = [
    "commentId",
    "comment_id",
    "COMMENT-ID",
    "postId",
    "linkId",
    "submission id",
    "body",
    "Body",
    "authorName",
    "author",
    "status",
    "statusReason",
    "observedAt",
    "url",
    "parent",
    "parentId",
    "title",
    "threadTitle",
    "score",
    "id",
    "text",
]
VALUES = st.one_of(st.none(), st.text(max_size=5), st.integers(-5, 5), st.booleans(), st.just([1, "a"]))
ITEMS = st.lists(st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=8), min_size=1, max_size=6)
FIELD_MAPS = st.sampled_from([None, {"comment_id": "id"}, {"body": "text", "post_id": "score"}])


def _compared(text: str) -> str:
    return re.sub(r"[\s_-]", "", text).casefold()


def expected_fields(value: dict[str, Any], spellings: dict[str, tuple[str, ...]]) -> dict[str, Any]:
    """Each field's value by the definition: the first non-null value among the item's keys
    spelt as the field's spellings, spelling by spelling, then in the item's order."""
    found = {}
    for field, names in spellings.items():
        order = names if names is not ITEM_FIELDS[field] else (*names, field)
        candidates = [value[key] for name in order for key in value if _compared(key) == _compared(name)]
        found[field] = next((candidate for candidate in candidates if candidate is not None), None)
    return found


def expected_id(raw: Any) -> str | None:
    """An id is text or a number (kept as written); text with a control character, or any other
    JSON value, is no id."""
    if isinstance(raw, str):
        return None if CONTROL.search(raw) else raw
    return str(raw) if isinstance(raw, int) and not isinstance(raw, bool) else None


def is_text(value: Any) -> bool:
    """Text, a number (kept as written) or null: what an item's field may hold."""
    return value is None or isinstance(value, str) or (isinstance(value, (int, float)) and not isinstance(value, bool))


def as_text(value: Any) -> str | None:
    return value if value is None or isinstance(value, str) else json.dumps(value, ensure_ascii=False)


@settings(max_examples=300)
@given(items=ITEMS, field_map=FIELD_MAPS)
def test_every_item_s_fields_are_those_of_its_own_keys(items: list[dict[str, Any]], field_map: dict | None) -> None:
    spellings = field_spellings(field_map)
    data = "\n".join(json.dumps(item) for item in items).encode()
    read = parse_dataset(data, "dataset.jsonl", fields=field_map).items
    assert len(read) == len(items)
    for line, (item, value) in enumerate(zip(read, items), start=1):
        fields = expected_fields(value, spellings)
        assert item.position == line
        for field in ITEM_FIELDS:
            if field == "comment_id":
                assert item.comment_id == expected_id(fields[field]), value
            else:
                assert getattr(item, field) == as_text(fields[field]), (field, value)
        not_text = [field for field, found in fields.items() if field != "comment_id" and not is_text(found)]
        assert bool(item.field_problem) == bool(not_text), value  # logged invalid_field, never read as text


def test_items_of_many_layouts_are_each_read_by_their_own_keys() -> None:
    """More layouts than the reader keeps plans for: those past the limit are planned item by item."""
    items = [{f"extra{n}": n, "commentId": f"c{n}", "body": f"b{n}"} for n in range(PLANS_KEPT + 50)]
    items += [{"body": "swapped", "commentId": "z"}, {"commentId": None, "comment_id": "second", "body": None}]
    data = "\n".join(json.dumps(item) for item in items).encode()
    read = parse_dataset(data, "dataset.jsonl").items
    assert [(item.comment_id, item.body) for item in read] == [
        *[(f"c{n}", f"b{n}") for n in range(PLANS_KEPT + 50)],
        ("z", "swapped"),
        ("second", None),
    ]
    assert read[0] == Item(position=1, comment_id="c0", body="b0")
