"""Counts of a long table (comment_id, coder, code) too large for one process's memory, made by
an engine that streams it (DuckDB here, Spark on a cluster) with join's classification of codes."""
