"""rich's names for the renderers, imported with the caller's random numbers kept.

rich/style.py draws ``getrandbits(24)`` from the global ``random`` when it is first
imported (its style ids start there), so the first report rendered in a process would
change the sequence a notebook seeded; irr-audit changes no setting of another library
(docs/api.md). Every renderer of the library takes rich's styled text from here (plain
text needs only rich.cells, which imports no style).

rich's one draw is undone only when it is the only draw made while rich was imported: a
caller's thread that drew meanwhile keeps its numbers drawn (putting the earlier state back
would hand that thread the same numbers again), and the sequence then simply goes on past
rich's draw, as it does for any program that imports rich.
"""

from __future__ import annotations

import random
import sys
from typing import Any


def state_after_richs_draw(state: tuple[Any, ...]) -> tuple[Any, ...]:
    """The global generator's state after rich/style.py's one ``getrandbits(24)`` from ``state``."""
    replay = random.Random()
    replay.setstate(state)
    replay.getrandbits(24)
    return replay.getstate()


_draws = "rich.style" not in sys.modules  # imported already, rich draws nothing more
_callers_state = random.getstate()
_after_richs_draw = state_after_richs_draw(_callers_state) if _draws else None
try:
    from rich import box
    from rich.console import Console, Group
    from rich.table import Table
    from rich.text import Text
finally:
    if _draws and random.getstate() == _after_richs_draw:
        random.setstate(_callers_state)

__all__ = ["Console", "Group", "Table", "Text", "box"]
