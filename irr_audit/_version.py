"""The version of irr-audit, in a module of its own: every stage may import it."""

__version__ = "0.1.0"
