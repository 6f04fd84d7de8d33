"""irr-audit: honest inter-coder reliability audits of hand-coded comment samples.

The public API (docs/api.md):

- :func:`load_rule` (a rule file or a mapping -> :class:`Rule`),
- :func:`audit` (sheets, a join folder, a bundle, or pandas DataFrames -> :class:`Audit`),
  :func:`audit_counts` (unit-pattern counts -> :class:`Audit`), :func:`audit_table` (a published
  K x K table or subjects x categories counts -> :class:`Audit`),
- :func:`join_folder` (sheets -> the folder `irr-audit join` writes),
- :func:`plan_alpha`, :func:`plan_kappa`, :func:`plan_half_width`, :func:`plan_pilot`
  (the units an audit needs, before it is made),
- :func:`import_export` (an annotation tool's export -> the folder `irr-audit import` writes),
- :func:`labels` (an audit bundle -> its final labels, agreed or adjudicated, as a DataFrame),
- :func:`audit_codebook`, :func:`audit_codebook_counts` (every variable of a codebook -> :class:`CodebookAudit`),
  :func:`join_codebook_folder` (a codebook's sheets -> the folder `irr-audit join --codebook` writes),
- :func:`compare` (two audits -> :class:`Comparison`, each coefficient's difference with its interval),
- the errors: :class:`IrrAuditError` and its subclasses, each with a stable ``code``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from irr_audit._version import __version__
from irr_audit.errors import IrrAuditError, LimitError, OutputError, RuleError, SheetError, UsageError

if TYPE_CHECKING:
    from irr_audit.api import (
        Audit,
        CodebookAudit,
        CodebookJoinFolder,
        Comparison,
        JoinFolder,
        Pair,
        audit,
        audit_codebook,
        audit_codebook_counts,
        audit_counts,
        audit_table,
        compare,
        import_export,
        join_codebook_folder,
        join_folder,
        labels,
        load_rule,
        plan_alpha,
        plan_half_width,
        plan_kappa,
        plan_pilot,
    )
    from irr_audit.bundle.anchor import DigestListError
    from irr_audit.bundle.manifest import BundleError
    from irr_audit.bundle.signing import SigningError
    from irr_audit.importers.run import ImportRun
    from irr_audit.io.limits import Limits
    from irr_audit.rules.model import Rule

# The API imports numpy, pandas and pyarrow (0.57 s of imports on this project's machine);
# `irr-audit --help` and `irr-audit rules check` need none of them, and every `irr-audit`
# command imports this package first. So these names are imported when first used
# (module __getattr__, PEP 562): `import irr_audit` takes 0.02 s, `irr_audit.audit` then 0.6 s.
_LAZY = {
    "Audit": "irr_audit.api",
    "CodebookAudit": "irr_audit.api",
    "CodebookJoinFolder": "irr_audit.api",
    "audit_codebook": "irr_audit.api",
    "audit_codebook_counts": "irr_audit.api",
    "join_codebook_folder": "irr_audit.api",
    "Comparison": "irr_audit.api",
    "compare": "irr_audit.api",
    "JoinFolder": "irr_audit.api",
    "Pair": "irr_audit.api",
    "audit": "irr_audit.api",
    "audit_counts": "irr_audit.api",
    "audit_table": "irr_audit.api",
    "join_folder": "irr_audit.api",
    "labels": "irr_audit.api",
    "import_export": "irr_audit.api",
    "ImportRun": "irr_audit.importers.run",
    "load_rule": "irr_audit.api",
    "plan_alpha": "irr_audit.api",
    "plan_kappa": "irr_audit.api",
    "plan_half_width": "irr_audit.api",
    "plan_pilot": "irr_audit.api",
    "Rule": "irr_audit.rules.model",
    "Limits": "irr_audit.io.limits",
    "BundleError": "irr_audit.bundle.manifest",
    "DigestListError": "irr_audit.bundle.anchor",
    "SigningError": "irr_audit.bundle.signing",
}

__all__ = [
    "Audit",
    "BundleError",
    "CodebookAudit",
    "CodebookJoinFolder",
    "Comparison",
    "DigestListError",
    "ImportRun",
    "IrrAuditError",
    "JoinFolder",
    "LimitError",
    "Limits",
    "OutputError",
    "Pair",
    "Rule",
    "RuleError",
    "SheetError",
    "SigningError",
    "UsageError",
    "__version__",
    "audit",
    "audit_codebook",
    "audit_codebook_counts",
    "audit_counts",
    "audit_table",
    "compare",
    "import_export",
    "join_codebook_folder",
    "join_folder",
    "labels",
    "load_rule",
    "plan_alpha",
    "plan_half_width",
    "plan_kappa",
    "plan_pilot",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'irr_audit' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
