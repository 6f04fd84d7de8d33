"""Input the user must fix: one exception family, each with a stable code, a message and a hint.

Data problems (a blank code, an unknown id) are not exceptions: they are rows of
the missingness log. Anything else that goes wrong is a bug and is reported as one.
"""

from __future__ import annotations

from irr_audit.io.display import visible


class IrrAuditError(Exception):
    """A problem with the user's input or usage. The CLI prints it and exits with 2."""

    code = "irr-audit-error"

    def __init__(self, message: str, *, hint: str | None = None, code: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        if code is not None:
            self.code = code

    def render(self) -> str:
        """The message for a terminal: any control character in it (from a file name
        or a cell) shown as an escape, so that it cannot move the cursor or forge a line."""
        text = f"Error [{self.code}]: {_shown(self.message)}"
        if self.hint:
            text += f"\n  Hint: {_shown(self.hint)}"
        return text


def _shown(text: str) -> str:
    """``text`` made visible; an indented continuation line ("\\n  ") stays a line of its own."""
    return "\n  ".join(visible(line) for line in str(text).split("\n  "))


class RuleError(IrrAuditError):
    code = "rule-invalid"


class CodebookError(IrrAuditError):
    code = "codebook-invalid"


class SheetError(IrrAuditError):
    code = "sheet-invalid"


class UsageError(IrrAuditError):
    code = "usage"


class OutputError(IrrAuditError):
    code = "output"


class LimitError(IrrAuditError):
    """A file exceeds one of the limits of irr_audit.io.limits (its code names the limit)."""

    code = "limit-exceeded"
