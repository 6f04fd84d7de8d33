"""The codebook's reliability table in text: whole at a width that holds it, stacked (one block per
variable) at 80 columns, where ten columns would write names and bands a letter or two a line."""

from __future__ import annotations

from pathlib import Path

import pytest

import irr_audit

ROOT = Path(__file__).resolve().parents[1]
CODEBOOK = str(ROOT / "codebooks" / "comment_study" / "v1.yaml")
SHEETS = [str(ROOT / "examples" / "codebook" / "sheets" / f"{coder}.csv") for coder in ("alice", "bob", "carol")]


@pytest.fixture(scope="module")
def audit() -> irr_audit.CodebookAudit:
    return irr_audit.audit_codebook(SHEETS, CODEBOOK)


def _table_part(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Reliability by variable"))
    end = next(i for i, line in enumerate(lines) if line.startswith("Variable "))
    return lines[start:end]


@pytest.mark.parametrize("width", (60, 80, 100))
def test_narrow_text_stacks_the_rows_whole(audit: irr_audit.CodebookAudit, width: int) -> None:
    part = _table_part(audit.to_text(width=width))
    stripped = [line.strip() for line in part]
    for row in audit.to_dict()["reliability"]:
        assert row["variable"] in stripped  # the name whole, on its own line
        assert f"coefficient: {row['coefficient']['label']}" in stripped
        low, high = row["coefficient"]["ci"]
        assert any(line.startswith("95% interval: ") and f"[{low:.4f}, {high:.4f}]" in line for line in stripped)
    assert len(part) < 60 and all(len(line) <= width for line in part)


def test_wide_text_keeps_the_table(audit: irr_audit.CodebookAudit) -> None:
    part = _table_part(audit.to_text(width=None))
    assert any(line.split()[:2] == ["variable", "scale"] for line in part if line.strip())
    assert sum(1 for line in part if line.strip().startswith("explicit_current_failure")) == 1
