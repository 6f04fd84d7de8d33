"""Shared test set-up: a derandomized hypothesis profile so CI failures reproduce."""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    max_examples=100,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, max_examples=100)
# The long fuzz run (tests/fuzz/README.md): many more examples, still reproducible by seed.
settings.register_profile("fuzz", deadline=None, max_examples=20_000, suppress_health_check=list(HealthCheck))
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))
