"""Print the lowest versions pyproject.toml declares for the runtime dependencies, pinned
(`name>=X` or `name>=X,<Y` -> `name==X`), for the second CI environment (.ci/run). A
dependency written otherwise stops it: none may drop out of that environment unseen."""

import re
import sys
from pathlib import Path

text = Path(__file__).resolve().parent.parent.joinpath("pyproject.toml").read_text(encoding="utf-8")
block = re.search(r"^dependencies = \[(.*?)^\]", text, re.DOTALL | re.MULTILINE)
if block is None:
    sys.exit("pyproject.toml has no dependencies list")
declared = re.findall(r'^\s*"([^"]+)"', block.group(1), re.MULTILINE)
pins = [re.fullmatch(r"([A-Za-z0-9_.-]+)>=([0-9][0-9A-Za-z.]*)(?:,<[0-9][0-9A-Za-z.]*)?", entry) for entry in declared]
unread = [entry for entry, pin in zip(declared, pins) if pin is None]
if unread:
    sys.exit(f"pyproject.toml: no lowest version in {', '.join(unread)} (write name>=X)")
print(" ".join(f"{pin.group(1)}=={pin.group(2)}" for pin in pins if pin))
