"""The numeric core: numpy arrays in, Metric records out. No pandas, no files, no printing.

Entry point: :func:`summarise` (codes -> :class:`AgreementSummary`). The single
coefficients are importable on their own for tables or codes.
"""

from irr_audit.metrics.consensus import Consensus, GroupComparison, consensus_codes, group_vs_reference
from irr_audit.metrics.interpret import kappa_paradox, krippendorff_label, landis_koch_label
from irr_audit.metrics.krippendorff import coincidence_matrix, krippendorff_alpha
from irr_audit.metrics.multi_coder import (
    brennan_prediger,
    conger_kappa,
    fleiss_kappa,
    gwet_ac,
    percent_agreement,
)
from irr_audit.metrics.patterns import MISSING, Patterns, compress
from irr_audit.metrics.result import Metric
from irr_audit.metrics.summary import AgreementSummary, LeaveOneOut, PairSummary, summarise
from irr_audit.metrics.two_coder import (
    bias_index,
    chance_agreement,
    chance_is_certain,
    cohen_kappa,
    max_kappa,
    observed_agreement,
    pabak,
    prevalence_index,
    scott_pi,
    specific_agreement,
    weighted_kappa,
)
from irr_audit.rules.scale import Scale

__all__ = [
    "MISSING",
    "AgreementSummary",
    "Consensus",
    "GroupComparison",
    "LeaveOneOut",
    "Metric",
    "PairSummary",
    "Patterns",
    "Scale",
    "bias_index",
    "brennan_prediger",
    "chance_agreement",
    "chance_is_certain",
    "coincidence_matrix",
    "cohen_kappa",
    "compress",
    "conger_kappa",
    "consensus_codes",
    "fleiss_kappa",
    "group_vs_reference",
    "gwet_ac",
    "kappa_paradox",
    "krippendorff_alpha",
    "krippendorff_label",
    "landis_koch_label",
    "max_kappa",
    "observed_agreement",
    "pabak",
    "percent_agreement",
    "prevalence_index",
    "scott_pi",
    "specific_agreement",
    "summarise",
    "weighted_kappa",
]
