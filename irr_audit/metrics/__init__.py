"""The numeric core: numpy arrays in, Metric records out. No pandas, no files, no printing."""

from irr_audit.metrics.result import Metric
from irr_audit.metrics.two_coder import (
    chance_agreement,
    chance_is_certain,
    cohen_kappa,
    observed_agreement,
)

__all__ = [
    "Metric",
    "chance_agreement",
    "chance_is_certain",
    "cohen_kappa",
    "observed_agreement",
]
