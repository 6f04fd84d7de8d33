"""A dependency that fails to import (a broken or mixed install, such as a pyarrow or pandas
built for numpy 2 beside numpy 1, or the reverse) is named with the versions installed and
the fix, in one message, instead of a traceback that reads like a bug in irr-audit."""

from __future__ import annotations

import os
import re
import traceback
from importlib import metadata

# import name -> distribution name, for the packages irr-audit imports
DEPENDENCIES = {
    "numpy": "numpy",
    "pandas": "pandas",
    "pyarrow": "pyarrow",
    "typer": "typer",
    "click": "click",
    "rich": "rich",
    "yaml": "pyyaml",
    "openpyxl": "openpyxl",
    "defusedxml": "defusedxml",
    "jinja2": "jinja2",
    "markupsafe": "markupsafe",
    "filelock": "filelock",
}
BINARY = ("numpy", "pandas", "pyarrow")  # built for one another: reinstalled together
# What numpy's binary incompatibility raises as a ValueError, not an ImportError.
ABI_MISMATCH = re.compile(r"numpy\.dtype size changed|compiled (using|against) NumPy", re.IGNORECASE)


def failed_dependency(error: BaseException) -> str | None:
    """The import name of the dependency whose import failed with ``error``, or None when
    ``error`` is not the failed import of a dependency (then it is a bug of irr-audit's)."""
    if isinstance(error, ValueError) and ABI_MISMATCH.search(str(error)):
        return _dependency_in_traceback(error) or "numpy"
    if not isinstance(error, ImportError):
        return None
    top = (error.name or "").split(".")[0]
    if top in DEPENDENCIES:
        return top
    return _dependency_in_traceback(error)


def _dependency_in_traceback(error: BaseException) -> str | None:
    """The dependency whose own file raised (the innermost frame's package), if any."""
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return None
    folders = os.path.normpath(frames[-1].filename).split(os.sep)[:-1]
    return next((folder for folder in reversed(folders) if folder in DEPENDENCIES), None)


def installed(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


def required() -> dict[str, str]:
    """distribution -> the requirement irr-audit declares for it (its installed metadata)."""
    try:
        lines = metadata.requires("irr-audit") or []
    except metadata.PackageNotFoundError:
        return {}
    found = {}
    for line in lines:
        if "extra ==" in line:
            continue
        name = re.split(r"[\s<>=!~;\[]", line, maxsplit=1)[0].lower()
        found[name] = line.split(";")[0].strip()
    return found


def dependency_message(name: str, error: BaseException) -> tuple[str, str]:
    """The message and the hint for a dependency that failed to import."""
    distribution = DEPENDENCIES[name]
    declared = required()
    group = BINARY if name in BINARY else (name,)
    versions = ", ".join(f"{DEPENDENCIES[item]} {installed(DEPENDENCIES[item])}" for item in group)
    first_line = (str(error).strip().splitlines() or [type(error).__name__])[0]
    message = f"irr-audit cannot import {distribution} ({first_line}); installed: {versions}."
    wanted = " ".join(f'"{declared.get(DEPENDENCIES[item], DEPENDENCIES[item])}"' for item in group)
    hint = (
        f"reinstall {'them together' if len(group) > 1 else 'it'} in this environment: "
        f"pip install --upgrade --force-reinstall {wanted}; or install irr-audit in a virtual "
        "environment of its own, where another package cannot change its dependencies."
    )
    return message, hint
