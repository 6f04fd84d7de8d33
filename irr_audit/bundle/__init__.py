"""Audit bundles (docs/procedure.md, steps 7 and 8): the original sheets, byte for
byte, beside the exact rule version they were coded under and the score computed
at freeze time; checked by verify, anchored outside, and later adjudicated apart
from the independent statistics.

manifest: the bundle format. freeze: writing a bundle. read: a bundle as audit
input. verify: checking one. adjudication: the post-hoc decisions. anchor and
signing: what vouches for a bundle from outside it.
"""
