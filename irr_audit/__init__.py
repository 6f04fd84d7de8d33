"""irr-audit: honest inter-coder reliability audits of hand-coded comment samples."""

from irr_audit._version import __version__

__all__ = ["__version__"]
