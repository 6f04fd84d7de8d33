"""Two audits compared (`irr-audit compare A B`, `report B --compare A`) and drift within one
audit (`--windows N` / `--window-size U`): the documents, built from joined sheets, and the
sections every renderer draws from them. Numbers and intervals only: no verdict.
Pure: no files, no clock (the order values come in already read).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from irr_audit.errors import UsageError
from irr_audit.join.join import JoinResult
from irr_audit.metrics.difference import Side, compare_sides, id_texts
from irr_audit.metrics.drift import drift
from irr_audit.metrics.krippendorff import scale_values
from irr_audit.report.format import format_number, metric_label
from irr_audit.report.model import MAX_REPLICATE_VALUES, check_audit_size
from irr_audit.report.sections import Section
from irr_audit.rules.diff import render_rule_diff


def _side(join: JoinResult, coders: Sequence[str]) -> Side:
    """The fully coded units of a join, their codes in the order of ``coders``."""
    rule = join.rule
    columns = [join.coders.index(coder) for coder in coders]
    full = join.fully_coded
    return Side(
        codes=np.asarray(join.codes[full][:, columns], dtype=np.int64),
        ids=join.units.filter(pa.array(full)),
        categories=tuple(rule.categories),
        scale=rule.scale,
        values=scale_values(rule.scale, len(rule.categories), rule.values),
    )


def relation(ids_a: np.ndarray | pa.Array, ids_b: np.ndarray | pa.Array) -> dict[str, Any]:
    """Whether two audits hold the same units, some of them, or none, with the counts (a
    join's ids are unique: the shared ones are A's found among B's)."""
    texts_a, texts_b = id_texts(ids_a, ids_b)
    shared = int(pc.sum(pc.is_in(texts_a, value_set=texts_b)).as_py() or 0)
    a_only, b_only = len(texts_a) - shared, len(texts_b) - shared
    kind = "same" if not a_only and not b_only else ("disjoint" if not shared else "overlapping")
    return {"relation": kind, "shared": shared, "a_only": a_only, "b_only": b_only}


def _about(join: JoinResult, source: str) -> dict[str, Any]:
    rule = join.rule
    return {
        "source": source,
        "rule": {"id": rule.id, "version": rule.version, "digest": rule.digest},
        "coders": list(join.coders),
        "units": {"total": len(join.unit_ids), "fully_coded": int(join.fully_coded.sum())},
    }


def compare_joins(
    a: JoinResult,
    b: JoinResult,
    *,
    n_boot: int,
    seed: int,
    sources: tuple[str, str] = ("A", "B"),
    names: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The comparison document: each coefficient of B minus A's, with its interval, per
    category too; which units the audits share; which coders; what changed in the rule."""
    for join in (a, b):
        check_audit_size(len(join.coders), len(join.rule.categories), n_boot)
    same_coders = set(a.coders) == set(b.coders)
    scored = compare_sides(
        _side(a, a.coders), _side(b, a.coders if same_coders else b.coders), n_boot=n_boot, seed=seed, names=names
    )
    units = relation(a.units, b.units)
    units["fully_coded"] = scored["units"]
    same_rule = a.rule.digest == b.rule.digest
    notes = []
    if not same_coders:
        notes.append(
            f"the coders differ (A: {', '.join(a.coders)}; B: {', '.join(b.coders)}): each audit is scored over its "
            "own coders, and only the coefficients both report are compared"
        )
    for which, names_only in (("A", scored["only_in_a"]), ("B", scored["only_in_b"])):
        if names_only:
            notes.append(f"reported by {which} only, not compared: {', '.join(names_only)}")
    for which, first, second in (("A", a.rule, b.rule), ("B", b.rule, a.rule)):
        missing = [category for category in first.categories if category not in second.categories]
        if missing:
            notes.append(f"categories of {which}'s rule only, not compared per category: {', '.join(missing)}")
    return {
        "a": _about(a, sources[0]),
        "b": _about(b, sources[1]),
        "units": units,
        "coders": {"same": same_coders, "a": list(a.coders), "b": list(b.coders)},
        "rules": {"same": same_rule, "diff": render_rule_diff(a.rule, b.rule)},
        "bootstrap": {"n_boot": n_boot, "seed": seed, "method": scored["method"]},
        "differences": scored["differences"],
        "per_category": scored["per_category"],
        "notes": notes,
    }


def drift_of_join(
    join: JoinResult,
    order: np.ndarray,
    *,
    order_name: str,
    n_windows: int | None,
    window_size: int | None,
    n_boot: int,
    seed: int,
) -> dict[str, Any]:
    """The drift document of a join: ``order`` (units x coders) is each coder's order value of
    each unit (NaN where a sheet gives none); the fully coded units with an order value from
    every coder are windowed, the others counted in ``left_out``."""
    full = join.fully_coded
    has_order = ~np.isnan(order).any(axis=1)
    used = np.flatnonzero(full & has_order)
    _check_drift_size(len(used), len(join.coders), n_windows, window_size, n_boot)
    refuse_windows_too_small(len(used), n_windows, window_size)
    ids = join.unit_ids[used]
    out: dict[str, Any] = {
        "order": order_name,
        "units": int(len(used)),
        "left_out": {"not_fully_coded": int((~full).sum()), "no_order_value": int((full & ~has_order).sum())},
        "windows": n_windows,
        "window_size": window_size,
        "bootstrap": {"n_boot": n_boot, "seed": seed},
    }
    scored = drift(
        np.asarray(join.codes[used], dtype=np.int64),
        order[used],
        len(join.rule.categories),
        list(join.coders),
        n_windows=n_windows,
        window_size=window_size,
        n_boot=n_boot,
        seed=seed,
        labels=lambda rows: (str(ids[rows[0]]), str(ids[rows[-1]])) if len(rows) else (None, None),
    )
    return {**out, **scored}


def refuse_windows_too_small(units: int, n_windows: int | None, window_size: int | None) -> None:
    """Drift compares two or more windows of two or more units each (a kappa of one unit is
    undefined): more windows than half the units, or windows as large as the units, would report
    windows with nothing to score and "no coder named" as if drift had been looked for. An audit
    with no unit to window is left to its own problems (no-fully-coded)."""
    if units == 0:
        return
    if n_windows is not None and units < 2 * n_windows:
        raise UsageError(
            f"--windows {n_windows} cuts the {units:,} windowed units into windows of fewer than 2 units.",
            hint=f"use --windows {units // 2} or fewer: each window needs at least 2 units.",
            code="usage-drift",
        )
    if window_size is not None and units <= window_size:  # one window: nothing to compare it with
        raise UsageError(
            f"--window-size {window_size} leaves the {units:,} windowed units fewer than 2 windows to compare.",
            hint=f"use --window-size {units // 2} or less: drift compares at least 2 windows.",
            code="usage-drift",
        )


def _check_drift_size(units: int, coders: int, n_windows: int | None, window_size: int | None, n_boot: int) -> None:
    """Every window keeps each pair's kappa (and Fleiss') in every replicate: refuse more values
    than an audit's bootstrap may keep (README, "Limits of one audit")."""
    windows = n_windows if n_windows is not None else -(-units // max(window_size or 1, 1))
    values = windows * n_boot * (coders * (coders - 1) // 2 + 1)
    if values > MAX_REPLICATE_VALUES:
        raise UsageError(
            f"the drift over {windows:,} windows with {n_boot:,} replicates and {coders} coders would keep {values:,} "
            f"replicate values; irr-audit keeps at most {MAX_REPLICATE_VALUES:,}.",
            hint="use fewer windows (--windows 10, say) or fewer --bootstrap replicates.",
            code="usage-drift",
        )


# --- sections for the renderers ------------------------------------------------------------


def compare_codebook_joins(
    a: Mapping[str, JoinResult],
    b: Mapping[str, JoinResult],
    *,
    codebooks: tuple[dict[str, Any], dict[str, Any]],
    n_boot: int,
    seed: int,
    sources: tuple[str, str] = ("A", "B"),
) -> dict[str, Any]:
    """Two codebook audits compared variable by variable (``a``, ``b``: variable -> its scored
    join, its condition applied): each variable both codebooks have, in A's order, exactly as
    :func:`compare_joins` compares two audits of one rule, with one seed; ``codebooks`` say
    which codebook each audit used. A variable of one codebook only is named, not compared."""
    shared = [variable for variable in a if variable in b]
    if not shared:
        raise UsageError(
            f"the codebooks of A ({', '.join(a)}) and B ({', '.join(b)}) have no variable in common: "
            "nothing to compare.",
            hint="compare two audits of one codebook, or of codebooks that share variables.",
            code="usage-compare",
        )
    notes = [
        f"variables of {which}'s codebook only, not compared: {', '.join(only)}"
        for which, only in (("A", [v for v in a if v not in b]), ("B", [v for v in b if v not in a]))
        if only
    ]
    return {
        "codebooks": {"a": codebooks[0], "b": codebooks[1]},
        "variables": {
            variable: compare_joins(
                a[variable],
                b[variable],
                n_boot=n_boot,
                seed=seed,
                sources=(f"{sources[0]} [{variable}]", f"{sources[1]} [{variable}]"),
            )
            for variable in shared
        },
        "notes": notes,
    }


def codebook_comparison_sections(document: dict[str, Any]) -> list[Section]:
    """A codebook comparison's sections: each variable's as one rule's comparison draws them,
    titled with the variable, then the codebooks compared and the variables left out."""
    sections = [
        dataclasses.replace(section, title=f"{variable}: {section.title}")
        for variable, comparison in document["variables"].items()
        for section in comparison_sections({"comparison": comparison})
    ]
    books = document["codebooks"]
    said = (
        f"A: {books['a']['source']} (codebook {books['a']['name']} v{books['a']['version']}); "
        f"B: {books['b']['source']} (codebook {books['b']['name']} v{books['b']['version']}).",
        *document["notes"],
    )
    return [*sections, Section("codebooks", "Codebooks compared", (), (), said)]


def _interval(ci: Sequence[float] | None) -> str:
    return "" if not ci else f"[{format_number(ci[0])}, {format_number(ci[1])}]"


def _difference_row(name: str, entry: dict[str, Any]) -> tuple[str, ...]:
    difference = entry.get("difference")
    shown = format_number(difference) if difference is not None else f"undefined: {entry.get('reason', '')}"
    return (name, format_number(entry.get("a")), format_number(entry.get("b")), shown, _interval(entry.get("ci")))


def comparison_sections(report: dict[str, Any]) -> list[Section]:
    """The comparison with an earlier audit, when the report carries one (`report B --compare A`)."""
    comparison = report.get("comparison")
    if not comparison:
        return []
    units = comparison["units"]
    full = units["fully_coded"]
    rows = tuple(_difference_row(metric_label(name), entry) for name, entry in comparison["differences"].items())
    rows += tuple(
        _difference_row(f"{metric_label(name)} [{category}]", entry)
        for category, entries in comparison["per_category"].items()
        for name, entry in entries.items()
        if name in ("kappa", "specific_agreement")
    )
    notes = (
        f"A: {comparison['a']['source']} ({comparison['a']['rule']['id']} v{comparison['a']['rule']['version']}); "
        f"B: {comparison['b']['source']} ({comparison['b']['rule']['id']} v{comparison['b']['rule']['version']}).",
        f"units: {units['relation']} ({units['shared']} shared, {units['a_only']} in A only, {units['b_only']} in B "
        f"only; fully coded: {full['shared']} in both, {full['a_only']} in A only, {full['b_only']} in B only).",
        f"interval: {comparison['bootstrap']['method']}, seed {comparison['bootstrap']['seed']}; 95% percentile "
        "interval of B - A. No verdict: the numbers and their intervals only.",
        *comparison["notes"],
        *_rule_notes(comparison),
    )
    return [
        Section(
            "comparison",
            "Compared with an earlier audit (B - A)",
            ("coefficient", "A", "B", "B - A", "95% interval"),
            rows,
            notes,
        )
    ]


def _rule_notes(comparison: dict[str, Any]) -> tuple[str, ...]:
    """The rule both audits used, or what changed in it from A to B (`irr-audit rules diff`)."""
    if comparison["rules"]["same"]:
        rule = comparison["a"]["rule"]
        return (f"rule: the same in both ({rule['id']} v{rule['version']}, {rule['digest'][:19]}...).",)
    return tuple("rule change: " + line for line in comparison["rules"]["diff"].splitlines() if line.strip())


def drift_sections(report: dict[str, Any]) -> list[Section]:
    """Agreement over windows of the coding order, when the report carries it."""
    found = report.get("drift")
    if not found:
        return []
    rows = []
    series = [(f"group ({metric_label(found['group']['coefficient'])})", found["group"])]
    series += [(f"{coder} with the others", entry) for coder, entry in found["coders"].items()]
    for name, entry in series:
        for window in entry["windows"]:
            value = format_number(window["value"]) if window.get("defined") else f"undefined: {window.get('reason')}"
            span = f"{window['from']} .. {window['to']}" if window.get("from") is not None else ""
            rows.append((name, str(window["window"]), str(window["units"]), span, value, _interval(window["ci"])))
    named = found["named"]
    notes = (
        f"order: {found['order']}; {found['units']} fully coded units in {len(found['group']['windows'])} windows "
        f"({found['left_out']['no_order_value']} fully coded units without an order value left out); "
        f"bootstrap {found['bootstrap']['n_boot']} replicates, seed {found['bootstrap']['seed']}.",
        "coders whose agreement fell by more than the interval allows: " + (", ".join(named) if named else "none"),
        f"rule: {found['rule']}.",
    )
    return [
        Section(
            "drift",
            "Agreement over the coding order (drift)",
            ("series", "window", "units", "units from .. to", "kappa", "95% interval"),
            tuple(rows),
            notes,
        )
    ]


def extra_sections(report: dict[str, Any]) -> list[Section]:
    """What a report adds when asked: the comparison with an earlier audit, then the drift."""
    return comparison_sections(report) + drift_sections(report)
