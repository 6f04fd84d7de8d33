"""Coding rules: the rule model, loading a rule file safely, and the versions of the
rules kept under rules/ (the revision check, the lock file, the diff).
"""
