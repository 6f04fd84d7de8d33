"""rich's names for the renderers, imported with the caller's random numbers kept.

rich/style.py draws ``getrandbits(24)`` from the global ``random`` when it is first
imported (its style ids start there), so the first report rendered in a process would
change the sequence a notebook seeded; irr-audit changes no setting of another library
(docs/api.md). Every renderer of the library takes rich's styled text from here (plain
text needs only rich.cells, which imports no style).
"""

from __future__ import annotations

import random

_callers_state = random.getstate()
try:
    from rich import box
    from rich.console import Console, Group
    from rich.table import Table
    from rich.text import Text
finally:
    random.setstate(_callers_state)

__all__ = ["Console", "Group", "Table", "Text", "box"]
