"""irr-audit: honest inter-coder reliability audits of hand-coded comment samples."""

__version__ = "0.1.0"
