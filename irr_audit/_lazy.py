"""A module named in annotations but imported on first use (irr_audit.api): the API loads no
pandas until a function needs it, and ``typing.get_type_hints`` still resolves ``pd.DataFrame``."""

from __future__ import annotations

import importlib
from typing import Any


class LazyModule:
    """Stands for the module ``name``, which is imported when an attribute is first read."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        return getattr(importlib.import_module(self._name), attribute)

    def __repr__(self) -> str:
        return f"<module {self._name!r}, imported on first use>"
