"""Which key of an export's item feeds which field: the reader plans this once per layout of
keys (irr_audit.io.collector._item_reader); here every item is held to the plain definition,
each field looked up spelling by spelling in the item itself."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irr_audit.errors import IrrAuditError
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


def _fields(item: Item) -> tuple[Any, ...]:
    return (item.comment_id, item.post_id, item.body, item.status)


def test_a_csv_item_is_read_as_the_same_json_item_is() -> None:
    """An empty CSV cell is null: of two columns spelling one field, the first non-empty wins,
    as the first non-null of a JSON item's keys does (an empty commentId beside comment_id "y"
    was logged missing_id)."""
    csv_data = b"commentId,comment_id,postId,body,status\n,y,p,b,ok\nq,,p,other,ok\nr,s,p,third\n"
    json_data = "\n".join(
        json.dumps(item)
        for item in (
            {"commentId": None, "comment_id": "y", "postId": "p", "body": "b", "status": "ok"},
            {"commentId": "q", "comment_id": None, "postId": "p", "body": "other", "status": "ok"},
            {"commentId": "r", "comment_id": "s", "postId": "p", "body": "third", "status": None},
        )
    ).encode()

    from_csv = [_fields(item) for item in parse_dataset(csv_data, "dataset.csv").items]

    assert from_csv == [_fields(item) for item in parse_dataset(json_data, "dataset.jsonl").items]
    assert from_csv == [("y", "p", "b", "ok"), ("q", "p", "other", "ok"), ("r", "p", "third", None)]


@pytest.mark.parametrize(
    "header", ["commentId,postId,body,status,body", "commentId,body,status,commentId", "a,commentId,body,status, a "]
)
def test_a_csv_column_named_twice_is_refused_as_a_repeated_json_key_is(header: str) -> None:
    """A CSV dataset naming a column twice was read with the first column's value, silently."""
    repeated = header.split(",")[-1].strip()
    data = (header + "\n" + ",".join(["x"] * len(header.split(","))) + "\n").encode()

    with pytest.raises(IrrAuditError) as raised:
        parse_dataset(data, "dataset.csv")

    assert raised.value.code == "collector-duplicate-key"
    assert raised.value.message.startswith(f"dataset dataset.csv names the column '{repeated}' twice")
