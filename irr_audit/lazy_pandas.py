"""pandas on demand: `score` never needs it, and importing it costs 0.2 s.

pyarrow imports pandas the first time it converts any Python or numpy value,
only to ask whether the value is a pandas object. ``defer()`` lets pyarrow ask
that once while pandas cannot be imported, so pyarrow carries on without it.
``pandas()`` is how irr-audit imports pandas where a command does need it: it
tells pyarrow that pandas is there after all, so pandas objects keep their
pandas-aware conversions.
"""

from __future__ import annotations

import sys
from types import ModuleType


class _RefusePandas:
    """An import finder that makes `import pandas` fail while it is installed."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name.partition(".")[0] == "pandas":
            raise ImportError("pandas is imported only where it is needed")


def defer() -> None:
    """Have pyarrow settle its one look for pandas now, without importing it."""
    if "pandas" in sys.modules:
        return
    import pyarrow as pa
    import pyarrow.lib

    if not hasattr(pyarrow.lib, "_pandas_api"):  # another pyarrow: leave its import as it is
        return
    refuse = _RefusePandas()
    sys.meta_path.insert(0, refuse)
    try:
        pa.array([0])  # pyarrow looks for pandas here, and finds none
    finally:
        sys.meta_path.remove(refuse)


def pandas() -> ModuleType:
    """pandas, imported; pyarrow told it is there if defer() had hidden it."""
    import pandas as pd

    shim = getattr(sys.modules.get("pyarrow.lib"), "_pandas_api", None)
    if shim is not None:
        _ = shim.pd  # pyarrow looks for pandas again (a no-op when it already has it)
    return pd
