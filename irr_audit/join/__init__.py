"""Joining coding sheets on the comment id: every (unit, coder) cell classified under
the rule, every missing code in the missingness log; the folder `join` writes, and
unit-pattern counts.
"""

from irr_audit.join.join import JoinResult, join_sheets

__all__ = ["JoinResult", "join_sheets"]
