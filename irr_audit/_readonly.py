"""Read-only results: the numbers an audit, a comparison or a plan computed cannot be changed after the fact.

An :class:`~irr_audit.api.Audit` hands out its report's data (``audit.report``, ``audit.sections``)
without copying it, and every renderer reads the same objects: a value changed in a notebook
would show in ``to_json()`` and ``to_markdown()`` as if the audit had computed it. So the data is
made read-only once, when the result is made: every dict a ReadOnlyDict, every list a ReadOnlyList,
which refuse any change with TypeError. They stay a dict and a list (the JSON encoder and every
renderer read them as such), and no copy is made on each render; the data is summaries (counts,
coefficients, tables of categories), never one entry per unit, so making it read-only costs little.
A copy (``copy.copy``, ``copy.deepcopy``, and so ``Audit.to_dict()``) is a plain, changeable dict
or list: changing it changes nothing in the result. This module sits below every stage
(tests/test_layout.py) so that a result made in metrics (a SampleSize) is read-only as well.
"""

from __future__ import annotations

import copy
from typing import Any, NoReturn

REFUSAL = "a result of irr-audit is read-only; change a copy (its to_dict() gives one) instead"


def _refuse(self: object, *args: Any, **kwargs: Any) -> NoReturn:
    raise TypeError(REFUSAL)


class ReadOnlyDict(dict[str, Any]):
    """A dict that refuses every change. Its copies are plain dicts."""

    __slots__ = ()

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return {key: copy.deepcopy(value, memo) for key, value in self.items()}

    def __reduce__(self) -> tuple[Any, ...]:
        # made again from a plain dict (dict.__init__), not item by item through __setitem__
        return (ReadOnlyDict, (dict(self),))


class ReadOnlyList(list[Any]):
    """A list that refuses every change. Its copies are plain lists."""

    __slots__ = ()

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return [copy.deepcopy(value, memo) for value in self]

    def __reduce__(self) -> tuple[Any, ...]:
        return (ReadOnlyList, (list(self),))


for _name in ("__setitem__", "__delitem__", "__ior__", "clear", "pop", "popitem", "setdefault", "update"):
    setattr(ReadOnlyDict, _name, _refuse)
for _name in (
    "__setitem__",
    "__delitem__",
    "__iadd__",
    "__imul__",
    "append",
    "extend",
    "insert",
    "pop",
    "remove",
    "clear",
    "sort",
    "reverse",
):
    setattr(ReadOnlyList, _name, _refuse)


def read_only(value: Any) -> Any:
    """``value`` with every dict and list in it, at any depth, made read-only (a tuple's items too).
    What is read-only already is kept as it is, not walked again."""
    if isinstance(value, (ReadOnlyDict, ReadOnlyList)):
        return value
    if isinstance(value, dict):
        return ReadOnlyDict({key: read_only(item) for key, item in value.items()})
    if isinstance(value, list):
        return ReadOnlyList([read_only(item) for item in value])
    if type(value) is tuple:  # (not a named tuple, whose fields a plain tuple would lose)
        return tuple(read_only(item) for item in value)
    return value
