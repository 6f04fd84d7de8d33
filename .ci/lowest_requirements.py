"""Print the lowest versions pyproject.toml declares for the runtime dependencies, pinned
(`name>=X` -> `name==X`), for the second CI environment (.ci/run)."""

import re
import sys
from pathlib import Path

text = Path(__file__).resolve().parent.parent.joinpath("pyproject.toml").read_text(encoding="utf-8")
block = re.search(r"^dependencies = \[(.*?)^\]", text, re.DOTALL | re.MULTILINE)
if block is None:
    sys.exit("pyproject.toml has no dependencies list")
pins = re.findall(r'^\s*"([A-Za-z0-9_.-]+)>=([0-9][0-9A-Za-z.]*)"', block.group(1), re.MULTILINE)
print(" ".join(f"{name}=={version}" for name, version in pins))
