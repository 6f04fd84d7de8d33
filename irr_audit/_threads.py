"""How many threads irr-audit runs at once: one per core, within a cap.

Sheets are parsed, ids looked up and bootstrap replicates drawn on a pool of
threads (pyarrow and numpy release the GIL). One per core keeps every core busy;
the cap bounds the memory that work in flight holds (each thread holds a parsed
sheet, or a chunk of replicates) on a machine with many cores. Results never
depend on the count: each pool's results are taken in submission order.
"""

from __future__ import annotations

import os

MAX_THREADS = 4


def thread_count() -> int:
    """Threads for one parallel step: the cores the system reports, from 1 to MAX_THREADS."""
    return max(1, min(os.cpu_count() or 1, MAX_THREADS))
