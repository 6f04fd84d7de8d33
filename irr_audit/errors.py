"""Input the user must fix: one exception family, each with a stable code, a message and a hint.

Data problems (a blank code, an unknown id) are not exceptions: they are rows of
the missingness log. Anything else that goes wrong is a bug and is reported as one.
"""

from __future__ import annotations


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
        text = f"Error [{self.code}]: {self.message}"
        if self.hint:
            text += f"\n  Hint: {self.hint}"
        return text


class RuleError(IrrAuditError):
    code = "rule-invalid"


class SheetError(IrrAuditError):
    code = "sheet-invalid"


class UsageError(IrrAuditError):
    code = "usage"


class OutputError(IrrAuditError):
    code = "output"


class LimitError(IrrAuditError):
    """A file exceeds one of the limits of irr_audit.limits (its code names the limit)."""

    code = "limit-exceeded"
