"""Reading aids, labelled as the conventions they are, never as verdicts.

- Landis & Koch (1977), Biometrics 33(1), 159-174, doi:10.2307/2529310: bands for kappa.
- Krippendorff (2004), Content Analysis, 2nd ed., p. 241: alpha >= .800 to rely on
  the data, >= .667 for tentative conclusions only.
- The kappa paradox: Feinstein & Cicchetti (1990), J Clin Epidemiol 43(6), 543-549,
  doi:10.1016/0895-4356(90)90158-L: high p_o with low kappa when one category dominates.
"""

from __future__ import annotations

from dataclasses import dataclass

LANDIS_KOCH = "Landis & Koch (1977) bands (a convention, not a test)"
KRIPPENDORFF = "Krippendorff (2004) 0.667 / 0.800 guideline (a convention, not a test)"

# Paradox thresholds: stated, so a reader can disagree with them.
PARADOX_MIN_PO = 0.80
PARADOX_MAX_KAPPA = 0.40
PARADOX_MIN_PREVALENCE = 0.80


@dataclass(frozen=True)
class Label:
    label: str
    convention: str

    def to_dict(self) -> dict[str, str]:
        return {"label": self.label, "convention": self.convention}


def landis_koch_label(value: float) -> Label:
    """Landis & Koch's band for a kappa-type value.

    >>> landis_koch_label(0.7).label
    'substantial'
    >>> landis_koch_label(-0.0526).label
    'poor'
    """
    bands = ((0.0, "poor"), (0.20, "slight"), (0.40, "fair"), (0.60, "moderate"), (0.80, "substantial"))
    for upper, name in bands:
        if value < upper or (upper > 0 and value <= upper):
            return Label(name, LANDIS_KOCH)
    return Label("almost perfect", LANDIS_KOCH)


def krippendorff_label(alpha: float) -> Label:
    """Krippendorff's guideline for alpha.

    >>> krippendorff_label(0.743).label
    'tentative conclusions only (>= 0.667)'
    """
    if alpha >= 0.800:
        return Label("reliable (>= 0.800)", KRIPPENDORFF)
    if alpha >= 0.667:
        return Label("tentative conclusions only (>= 0.667)", KRIPPENDORFF)
    return Label("below 0.667", KRIPPENDORFF)


def kappa_paradox(po: float, kappa: float, largest_share: float) -> str | None:
    """A warning when p_o is high, kappa low, and one category dominates the codes.

    Worked example B (docs/statistics.md): p_o 0.90, kappa -0.0526, "yes" 95% of all codes.

    >>> kappa_paradox(0.90, -1 / 19, 0.95) is not None
    True
    >>> kappa_paradox(0.90, 0.6078, 0.85) is None
    True
    """
    if po >= PARADOX_MIN_PO and kappa <= PARADOX_MAX_KAPPA and largest_share >= PARADOX_MIN_PREVALENCE:
        return (
            f"kappa paradox: observed agreement is {po:.3f} but kappa is {kappa:.3f}, because one "
            f"category holds {largest_share:.0%} of all codes; read prevalence_index, "
            "bias_index, pabak, gwet_ac1 and specific_agreement beside kappa "
            f"(flagged when po >= {PARADOX_MIN_PO}, kappa <= {PARADOX_MAX_KAPPA}, "
            f"largest category share >= {PARADOX_MIN_PREVALENCE})"
        )
    return None
