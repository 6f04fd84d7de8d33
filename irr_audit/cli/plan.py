"""`irr-audit plan alpha | kappa | half-width | pilot`: the units an audit needs, before it is made.

Each prints the answer, the method and its citation (text), or the library's document
(`--format json`, the answer under `units`). Exit 0, or 2 on bad input.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from irr_audit.cli.shared import LimitOption, app, parse_limits, reports_errors, to_stdout
from irr_audit.errors import UsageError
from irr_audit.io.display import visible

plan_app = typer.Typer(
    name="plan",
    help="How many units both coders must code: for alpha, for a kappa test, for an interval's width, "
    "or what a pilot audit says is still needed.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)
app.add_typer(plan_app, name="plan")


class PlanFormat(str, Enum):
    TEXT = "text"
    JSON = "json"


FormatOption = Annotated[PlanFormat, typer.Option("--format", help="text or json.", case_sensitive=False)]
LevelOption = Annotated[float, typer.Option("--level", help="Significance level.")]


@plan_app.command("alpha")
@reports_errors
def alpha(
    minimum: Annotated[float, typer.Option("--min", help="The smallest acceptable alpha, e.g. 0.800.")],
    codes: Annotated[
        int | None, typer.Option("--codes", help="Number of equally likely codes (or --smallest-share).")
    ] = None,
    smallest_share: Annotated[
        float | None, typer.Option("--smallest-share", help="Expected share of the least frequent code (or --codes).")
    ] = None,
    level: LevelOption = 0.05,
    output_format: FormatOption = PlanFormat.TEXT,
) -> None:
    """Units to show Krippendorff's alpha >= --min at --level (Krippendorff 2019, chapter 12)."""
    from irr_audit.api import plan_alpha

    _emit(plan_alpha(minimum, codes=codes, smallest_share=smallest_share, level=level).to_dict(), output_format)


@plan_app.command("kappa")
@reports_errors
def kappa(
    expected: Annotated[float, typer.Option("--expected", help="The kappa you expect the coders to reach.")],
    minimum: Annotated[float, typer.Option("--min", help="The kappa to test against (H0: kappa = --min).")],
    prevalence: Annotated[
        float | None,
        typer.Option(
            "--prevalence", help="Binary rule: the expected share of the code of interest (or --shares, or --rates)."
        ),
    ] = None,
    shares: Annotated[
        str | None,
        typer.Option(
            "--shares", help="K codes: their expected shares, e.g. 0.2,0.3,0.5 (or --prevalence, or --rates)."
        ),
    ] = None,
    rates: Annotated[
        str | None,
        typer.Option(
            "--rates",
            help="Binary rule, coders with their own rates of the code, e.g. 0.3,0.4 (Cantor; instead of --prevalence "
            "or --shares).",
        ),
    ] = None,
    level: LevelOption = 0.05,
    power: Annotated[float, typer.Option("--power", help="Power of the test.")] = 0.80,
    output_format: FormatOption = PlanFormat.TEXT,
) -> None:
    """Units for a test of kappa = --min that finds --expected with --power (Donner & Eliasziw 1992; Cantor 1996)."""
    from irr_audit.api import plan_kappa

    share_list = _numbers("--shares", shares) if shares is not None else None
    rate_pair = tuple(_numbers("--rates", rates)) if rates is not None else None
    result = plan_kappa(
        expected, minimum, prevalence=prevalence, shares=share_list, rates=rate_pair, level=level, power=power
    )
    _emit(result.to_dict(), output_format)


@plan_app.command("half-width")
@reports_errors
def half_width(
    target: Annotated[float, typer.Option("--half-width", help="The interval's half-width, e.g. 0.1.")],
    expected: Annotated[float, typer.Option("--expected", help="The kappa you expect.")],
    prevalence: Annotated[float, typer.Option("--prevalence", help="The expected share of the code of interest.")],
    level: LevelOption = 0.05,
    seed: Annotated[
        int | None, typer.Option("--seed", help="Answer by simulation with this seed (with its Monte Carlo SE).")
    ] = None,
    simulations: Annotated[
        int | None, typer.Option("--simulations", help="Simulated samples, with --seed (default: 4000).")
    ] = None,
    output_format: FormatOption = PlanFormat.TEXT,
) -> None:
    """Units for an interval of Cohen's kappa of +/- --half-width (SE formula; by simulation with --seed)."""
    from irr_audit.api import plan_half_width

    _refuse_alone("--simulations", simulations, "--seed", seed, "--seed 1")
    # None: the library's own default number of simulations
    chosen = {} if simulations is None else {"simulations": simulations}
    result = plan_half_width(target, expected, prevalence, level=level, seed=seed, **chosen)
    _emit(result.to_dict(), output_format)


@plan_app.command("pilot")
@reports_errors
def pilot(
    source: Annotated[Path, typer.Argument(metavar="DIR", help="A join folder or an audit bundle of the pilot.")],
    target: Annotated[float, typer.Option("--half-width", help="The half-width wanted, e.g. 0.1.")],
    rule: Annotated[
        Path | None,
        typer.Option(
            "--rule",
            help="A check, not an input (DIR keeps its own rule): refuse DIR unless it was coded under this rule file.",
        ),
    ] = None,
    bootstrap: Annotated[
        int, typer.Option("--bootstrap", help="Bootstrap replicates, for coefficients with no analytic SE.")
    ] = 0,
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed",
            help="Seed of the bootstrap (drawn and shown when absent: --seed with it repeats the answer).",
        ),
    ] = None,
    output_format: FormatOption = PlanFormat.TEXT,
    limit: LimitOption = None,
) -> None:
    """Per coefficient, the half-width a pilot audit reached and the units to add for --half-width."""
    from irr_audit.api import plan_pilot

    _refuse_alone("--seed", seed, "--bootstrap", bootstrap or None, "--bootstrap 2000")
    result = plan_pilot(source, target, rule=rule, bootstrap=bootstrap, seed=seed, limits=parse_limits(limit))
    _emit(result.to_dict(), output_format)


def _refuse_alone(option: str, value: object, needed: str, given: object, example: str) -> None:
    """An option that only shapes what another asks for is refused without it, not ignored."""
    if value is not None and given is None:
        raise UsageError(
            f"{option} goes with {needed}, which was not given: alone it would change nothing.",
            hint=f"add {example} (say), or leave out {option}.",
            code="usage-plan",
        )


def _numbers(option: str, text: str) -> list[float]:
    try:
        return [float(part) for part in text.split(",")]
    except ValueError:
        raise UsageError(
            f"{option} {text!r} is not a list of numbers.", hint=f"for example {option} 0.2,0.3,0.5.", code="usage-plan"
        ) from None


def _emit(document: dict[str, Any], output_format: PlanFormat) -> None:
    if output_format is PlanFormat.JSON:
        from irr_audit.io.outputs import render_json

        to_stdout(render_json(document))
        return
    to_stdout(plan_text(document) + "\n")


def plan_text(document: dict[str, Any]) -> str:
    """The plan for people: the answer first, then the method, its figures and its citation."""
    lines = []
    if document["plan"] == "pilot":
        inputs = document["inputs"]
        lines.append(f"Pilot of {document['pilot_units']} units; half-width wanted +/- {inputs['half_width']:g}:")
        if inputs["bootstrap"]:  # the seed shown, drawn or given: with it the answer can be repeated
            lines.append(f"  bootstrap: {inputs['bootstrap']} replicates, seed {inputs['seed']}")
        for row in document["coefficients"]:
            if row["units_to_add"] is None:
                lines.append(f"  {row['coefficient']}: no answer ({row['reason']})")
                continue
            lines.append(
                f"  {row['coefficient']}: reached +/- {row['half_width']:.3f} ({row['se_source']} SE); "
                f"{row['units_needed']} units needed, {row['units_to_add']} to add"
            )
    else:
        figures = document["figures"]
        answer = "no answer" if document["units"] is None else f"{document['units']} units"
        if "units_mc_se" in figures and document["units"] is not None:
            answer += f" (Monte Carlo SE {figures['units_mc_se']:.1f})"
        lines.append(f"{answer} coded by both coders.")
        given = ", ".join(f"{key} {value}" for key, value in document["inputs"].items() if value is not None)
        lines.append(f"Inputs: {given}")
    lines.append(f"Method: {document['method']}")
    lines += [f"Note: {note}" for note in document["notes"]]
    lines.append(f"Source: {document['citation']}")
    return "\n".join(visible(line) for line in lines)
