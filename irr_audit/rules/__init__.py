"""Coding rules: the rule model, loading a rule file safely, and the versions of the
rules kept under rules/ (the revision check, the lock file, the diff).
"""

from irr_audit.rules.load import load_rule, parse_rule
from irr_audit.rules.model import Code, CodeStatus, Rule
from irr_audit.rules.scale import Scale

__all__ = ["Code", "CodeStatus", "Rule", "Scale", "load_rule", "parse_rule"]
