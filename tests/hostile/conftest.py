"""The modules here are the hostile corpus's data, run by tests/test_hostile.py."""

collect_ignore_glob = ["*.py"]
