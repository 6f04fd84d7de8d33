"""The result record every coefficient returns: a value, or an honest reason why not."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any


@dataclass(frozen=True)
class Metric:
    """One coefficient.

    ``value`` is ``None`` exactly when ``defined`` is false, and then ``reason``
    says why. Undefined is decided from the counts, never from a NaN.
    ``ci`` is a (low, high) pair; ``ci_method`` names how it was made, and
    ``ci_clipped`` records that the interval was clipped to the coefficient's range.
    """

    value: float | None
    defined: bool
    reason: str | None = None
    se: float | None = None
    ci: tuple[float, float] | None = None
    ci_method: str | None = None
    ci_clipped: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, value: float, **kwargs: Any) -> Metric:
        return cls(value=float(value), defined=True, **kwargs)

    @classmethod
    def undefined(cls, reason: str, **kwargs: Any) -> Metric:
        return cls(value=None, defined=False, reason=reason, **kwargs)

    def with_ci(
        self,
        low: float,
        high: float,
        method: str,
        *,
        se: float | None = None,
        bounds: tuple[float, float] = (-1.0, 1.0),
    ) -> Metric:
        """Attach an interval, clipped to ``bounds`` (and say so when clipped).

        A weighted chance term can put an estimate itself below -1 (Gwet's AC2);
        the bound then widens to the estimate, so no interval excludes its own estimate.
        """
        if self.value is not None:
            bounds = (min(bounds[0], self.value), max(bounds[1], self.value))
        clipped_low, clipped_high = max(low, bounds[0]), min(high, bounds[1])
        clipped = (clipped_low, clipped_high) != (low, high)
        return replace(
            self,
            se=self.se if se is None else float(se),
            ci=(float(clipped_low), float(clipped_high)),
            ci_method=method,
            ci_clipped=clipped,
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON form of docs/contract.md: value / defined / reason / se / ci."""
        out: dict[str, Any] = {"value": self.value, "defined": self.defined}
        if self.reason is not None:
            out["reason"] = self.reason
        if self.se is not None:
            out["se"] = self.se
        if self.ci is not None:
            out["ci"] = list(self.ci)
            out["ci_method"] = self.ci_method
            out["ci_clipped"] = self.ci_clipped
        out.update(self.extra)
        return out
