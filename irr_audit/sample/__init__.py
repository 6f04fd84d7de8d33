"""`irr-audit sample` (docs/procedure.md, steps 2 to 4): from the collector's items to
a working ledger of usable units, the missingness log of the rest, a completeness
verdict, a reproducible draw and one blank coding sheet per coder.

ledger, draw and sheets are pure; build turns them into the folder's files, and
folder writes the folder and reads it back for `join --sample` and freeze.
"""
