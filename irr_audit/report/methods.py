"""The methods paragraph: the audit in the sentences a published content analysis reports its
reliability in (`irr-audit report --format methods`, and a section of every report).

It follows the reporting guidance of Lombard, Snyder-Duch & Bracken (2002), Human Communication
Research 28(4), 587-604, doi:10.1111/j.1468-2958.2002.tb00826.x, and Krippendorff (2019),
Content Analysis, 4th ed., ch. 12: the size of the reliability sample and how it was drawn, the
coders, the coding instrument (here the rule, its version and digest), how missing codes were
handled, and each coefficient with its interval and the reason it was chosen. Pure: report dict
-> text; what the report does not record is said to be not recorded, never guessed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from irr_audit.io.display import prose
from irr_audit.report.format import metric_label
from irr_audit.report.headline import coefficient_rows, counts_only_report, headline_block, paradox_explanation

# Beside the headline, the coefficients a reader of the paragraph expects (when the report has them).
ALSO_REPORTED = ("krippendorff_alpha", "cohen_kappa", "fleiss_kappa", "gwet_ac1")
NUMBER_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def _count_word(n: int) -> str:
    return NUMBER_WORDS[n] if 0 <= n < len(NUMBER_WORDS) else f"{n:,}"


def _listed(names: list[str], last: str = "and") -> str:
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + f" {last} " + names[-1]


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def _coders(report: Mapping[str, Any]) -> str:
    coders = [str(coder) for coder in report.get("coders") or []]
    shown = _listed(coders) if len(coders) <= 8 else f"{', '.join(coders[:8])} and {len(coders) - 8} more"
    return f"{_capitalised(_count_word(len(coders)))} coders ({shown})"


def _who_coded(report: Mapping[str, Any], units: Mapping[str, Any]) -> str:
    """The first sentence: the coders, or, from a count matrix, how often each unit was coded."""
    total = units.get("total")
    if not counts_only_report(report):
        return f"{_coders(report)} independently coded {total} units under {_rule(report)}."
    ratings = len(report.get("coders") or [])
    each = "" if units.get("fully_coded") == total else "up to "
    return (
        f"Each of {total} units was coded {each}{_count_word(ratings)} times, as a table of how many codes each "
        f"unit got in each category that does not say which coder gave which code, under {_rule(report)}."
    )


def _rule(report: Mapping[str, Any]) -> str:
    rule = report.get("rule") or {}
    categories = [str(category) for category in report.get("categories") or []]
    quoted = [f"'{category}'" for category in categories]
    codes = f"the codes {_listed(quoted)}" if len(categories) <= 10 else f"{len(categories)} codes"
    question = f', which asks "{prose(rule["question"])}"' if rule.get("question") else ""
    scale = str(rule.get("scale"))
    article = "an" if scale[:1] in ("o", "i") else "a"  # an ordinal, an interval; a nominal, a ratio
    return (
        f"the coding rule {rule.get('id')}, version {rule.get('version')} (digest {rule.get('digest')}){question}, "
        f"with {codes} on {article} {scale} scale"
    )


def _sampling(report: Mapping[str, Any]) -> str:
    """How the units were sampled, from the sample record when there is one."""
    sample = report.get("sample")
    if not isinstance(sample, Mapping):
        return "How the units were sampled is not recorded with this audit."
    counts = sample.get("counts") or {}
    draw = sample.get("draw") or {}
    unusable = counts.get("log_rows") or {}
    dropped = ", ".join(f"{n} {reason}" for reason, n in unusable.items()) or "none"
    parts = [
        f"The units were drawn from {counts.get('items', 'an unrecorded number of')} collected items"
        + (f" ({sample['dataset']})" if sample.get("dataset") else ""),
        f"after de-duplicating comment ids ({counts.get('unique_ids', 'not recorded')} unique) and setting aside "
        f"unusable items ({dropped})",
    ]
    if draw.get("seed") is not None and draw.get("size") == draw.get("population"):
        parts.append(f"taking all {draw.get('population')} usable units (in an order set by seed {draw['seed']})")
    elif draw.get("seed") is not None:
        parts.append(
            f"as a simple random sample of {draw.get('size')} of the {draw.get('population')} usable units "
            f"(seed {draw['seed']})"
        )
    else:
        parts.append("by a draw whose seed is not recorded")
    statement = (sample.get("completeness") or {}).get("statement")
    sentence = ", ".join(parts) + "."
    if statement:
        sentence += f" The collection's thread completeness: {statement}."
    return sentence


def _missing(report: Mapping[str, Any]) -> str:
    units = report.get("units") or {}
    by_reason = (report.get("missingness") or {}).get("by_reason") or {}
    reasons = f" ({', '.join(f'{n} {reason}' for reason, n in by_reason.items())})" if by_reason else ""
    total, full = units.get("total"), units.get("fully_coded")
    missing = units.get("missing", 0)
    if (report.get("input") or {}).get("kind") == "table":  # a K x K table holds the fully coded units only
        return f"The table holds the {total} units both coders coded; units with a missing code are not in it."
    if counts_only_report(report):  # no log: a table holds the codes given, not the ones missing
        if not missing:
            return "Every unit got the same number of codes."
        return (
            f"Units got different numbers of codes: the {full} of {total} units with the most are the basis of the "
            f"coefficients, and the coefficients on the {units.get('available_case')} units with at least two codes "
            "are reported beside them."
        )
    if not missing:
        return f"Every coder coded all {total} units validly, so no code was missing."
    return (
        f"Missing or invalid codes{reasons} were logged and not counted as disagreements: agreement was "
        f"computed on the {full} of {total} units every coder coded validly, and the coefficients on the "
        f"{units.get('available_case')} units with at least two valid codes are reported beside them."
    )


def _number(value: float) -> str:
    return f"{value:.2f}"


def _coefficient(row: Mapping[str, Any]) -> str:
    if not row.get("defined"):
        return f"{row['label']} was undefined ({row.get('reason', 'no reason given')})"
    text = f"{row['label']} was {_number(row['value'])}"
    interval = row.get("interval")
    if interval:
        how = str(interval["method"]).split(",")[0]  # "normal approximation", "Krippendorff's bootstrap ..."
        if interval.get("n_boot"):
            how += f", {interval['n_boot']} replicates"
        text += f" ({100 * interval['level']:g}% CI {_number(interval['low'])} to {_number(interval['high'])}, {how})"
    return text


def _paradox(paradox: Mapping[str, Any]) -> str:
    top, share = max(paradox["prevalence"].items(), key=lambda item: item[1])
    text = (
        f"Because one code dominated ('{top}', {100 * share:.1f}% of all codes), chance agreement was high "
        f"({100 * paradox['chance_agreement']:.1f}%)"
    )
    highest = paradox["max_kappa"]["value"]
    if highest is not None:
        text += f" and the coders' code rates allowed a kappa of at most {_number(highest)}"
    stay = [f"{metric_label(name)} ({_number(value)})" for name, value in paradox["stay_high"].items()]
    if stay:
        text += f"; {_listed(stay)}, which do not take chance agreement from these rates, are reported beside it"
    return text + " (the kappa paradox; Feinstein & Cicchetti 1990)."


def methods_paragraph(report: Mapping[str, Any]) -> str:
    """The methods paragraph of an audit report (a dict as `irr-audit report --format json` writes it)."""
    headline = report.get("headline") or headline_block(report)
    rows = report.get("coefficients")
    if rows is None:
        rows = coefficient_rows(report)
    by_name = {row["metric"]: row for row in rows}
    units = report.get("units") or {}
    sentences = [
        _who_coded(report, units),
        _sampling(report),
        _missing(report),
    ]
    head = by_name.get(headline["metric"])
    if head is not None:
        reported = f"As the headline coefficient, chosen for the design ({headline['why']}), {_coefficient(head)}"
        if headline.get("band"):
            band = headline["band"]
            reported += f", '{band['label']}' by the {band['convention']}"
        sentences.append(reported + ".")
    po = by_name.get("po")
    if po is not None and po.get("defined"):
        sentences.append(f"Observed agreement was {100 * po['value']:.1f}%.")
    also = [name for name in ALSO_REPORTED if name != headline["metric"]]
    if counts_only_report(report):
        also.remove("cohen_kappa")  # needs to know which coder gave which code: undefined, said once is enough
    elif len(report.get("coders") or []) == 2:
        also.remove("fleiss_kappa")  # with two coders, Scott's pi: the same as kappa but for the margins
    others = [_coefficient(by_name[name]) for name in also if name in by_name]
    if others:
        sentences.append(f"{_listed(others)}.")
    paradox = report.get("paradox") or paradox_explanation(report)
    if paradox.get("applies"):
        sentences.append(_paradox(paradox))
    bundle = report.get("bundle")
    tool = (report.get("tool") or {}).get("version")
    closing = f"Agreement was computed with irr-audit {tool}"
    if isinstance(bundle, Mapping) and bundle.get("digest"):
        closing += f"; the sheets, the rule and the scores are kept in the audit bundle {bundle.get('name')} "
        closing += f"(digest {bundle['digest']})"
    sentences.append(closing + ".")
    # one line: text quoted from the rule, the sheets or the sample record may hold line breaks
    return prose(" ".join(sentence for sentence in sentences if sentence))


def condition_sentence(variable: str, parent: str, codes: Sequence[str], cells: Mapping[str, int]) -> str:
    """How a conditional variable of a codebook was handled (docs/statistics.md, "Conditional
    variables"), for its methods paragraph: where it was asked, and the cells that were not
    applicable or not comparable, neither missing nor disagreements.

    >>> print(condition_sentence("severity", "failure", ["yes"], {"not_applicable": 36, "not_comparable": 6}))
    ... # doctest: +NORMALIZE_WHITESPACE
    The variable severity was asked only where a coder coded failure as 'yes': 36 cells where it did not apply
    were not applicable (neither missing nor disagreements), and the 6 cells of units on which
    the coders disagreed about failure were left out.
    """
    variable, parent = prose(variable), prose(parent)
    answers = _listed([f"'{prose(code)}'" for code in codes], "or")
    not_applicable, not_comparable = cells.get("not_applicable", 0), cells.get("not_comparable", 0)
    sentence = (
        f"The variable {variable} was asked only where a coder coded {parent} as {answers}: {not_applicable} "
        f"{'cell' if not_applicable == 1 else 'cells'} where it did not apply "
        f"{'was' if not_applicable == 1 else 'were'} not applicable (neither missing nor disagreements)"
    )
    if not_comparable:
        sentence += (
            f", and the {not_comparable} {'cell' if not_comparable == 1 else 'cells'} of units on which the "
            f"coders disagreed about {parent} {'was' if not_comparable == 1 else 'were'} left out"
        )
    return sentence + "."
