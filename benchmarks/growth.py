"""How each command's time and memory grow with the units: a table and a plot from the
results bench.py saves (--save), so a reader sees whether the growth is linear.

    python benchmarks/growth.py RESULTS.json [MORE.json ...] --markdown benchmarks/growth.md --svg benchmarks/growth.svg

For every (coders, codes, shape) and command: the seconds at each size, the ratio to the
pyarrow floor of the same sheets (and of the CPU seconds at the largest size, steadier on
a shared machine), how much the time grew for ten times the units (10x is linear), and
peak memory over the input's size. The SVG is written by hand (standard
library only): seconds against units on log-log axes, one line per command, one panel
per sheet shape and code count, with a dotted line of slope 1 (linear growth) for scale.
"""

from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict
from pathlib import Path

ORDER = ["floor (pyarrow)", "score", "join", "report --format html"]
COLOURS = {"floor (pyarrow)": "#000000", "score": "#0072B2", "join": "#D55E00", "report --format html": "#009E73"}
TARGETS = {"score": 2.0, "join": 4.0, "report --format html": 4.0}  # x the floor
MEMORY_TARGET = 3.0  # peak / input


def load(paths: list[str]) -> list[dict]:
    """Every successful measurement, the later file winning for the same configuration and command."""
    found: dict[tuple, dict] = {}
    for path in paths:
        for item in json.loads(Path(path).read_text(encoding="utf-8")):
            if item.get("input_bytes") and item.get("seconds") is not None:
                key = (item["units"], item["coders"], item["codes"], item["scale"], item.get("shape", "plain"))
                found[(*key, item["command"])] = item
    return list(found.values())


def group(results: list[dict]) -> dict[tuple, dict[str, dict[int, dict]]]:
    """(coders, codes, scale, shape) -> command -> units -> result."""
    groups: dict[tuple, dict[str, dict[int, dict]]] = defaultdict(lambda: defaultdict(dict))
    for item in results:
        key = (item["coders"], item["codes"], item["scale"], item.get("shape", "plain"))
        groups[key][item["command"]][item["units"]] = item
    return groups


def label(key: tuple) -> str:
    coders, codes, scale, shape = key
    return f"{coders} coders, {codes} codes{' ordinal' if scale == 'ordinal' else ''}, {shape}"


def markdown(groups: dict[tuple, dict[str, dict[int, dict]]]) -> str:
    sizes = sorted({units for commands in groups.values() for runs in commands.values() for units in runs})
    header = ["sheets", "command"]
    header += [f"s at {units:.0e}".replace("e+0", "e") for units in sizes]
    header += [f"x floor at {units:.0e}".replace("e+0", "e") for units in sizes]
    header += ["cpu x floor at largest", "growth per 10x units", "peak/input at largest", "target"]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * 2 + ["---:"] * (len(header) - 2)) + "|"]
    for key in sorted(groups):
        commands = groups[key]
        floor = commands.get("floor (pyarrow)", {})
        for command in [name for name in ORDER if name in commands]:
            runs = commands[command]
            seconds = [f"{runs[units]['seconds']:.2f}" if units in runs else "" for units in sizes]
            ratios = [
                f"{runs[units]['seconds'] / floor[units]['seconds']:.1f}x" if units in runs and units in floor else ""
                for units in sizes
            ]
            largest = max(runs)
            floor_cpu = floor.get(largest, {}).get("cpu")
            cpu = runs[largest].get("cpu")
            cpu_ratio = f"{cpu / floor_cpu:.1f}x" if cpu and floor_cpu else ""
            peak = runs[largest].get("peak_mb")
            memory = f"{peak * 2**20 / runs[largest]['input_bytes']:.1f}x" if peak else ""
            target = f"{TARGETS[command]:.0f}x floor, {MEMORY_TARGET:.0f}x input" if command in TARGETS else ""
            cells = [label(key), command, *seconds, *ratios, cpu_ratio, growth(runs), memory, target]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def growth(runs: dict[int, dict]) -> str:
    """The factor the time grew by per tenfold units, between each pair of sizes measured."""
    sizes = sorted(runs)
    steps = []
    for small, large in zip(sizes, sizes[1:]):
        factor = (runs[large]["seconds"] / runs[small]["seconds"]) ** (1 / math.log10(large / small))
        steps.append(f"{factor:.1f}x")
    return ", ".join(steps)


def svg(groups: dict[tuple, dict[str, dict[int, dict]]]) -> str:
    keys = sorted(groups)
    width, height, margin = 360, 280, 52
    columns = min(2, len(keys))
    rows = math.ceil(len(keys) / columns)
    total_w, total_h = columns * width, rows * height + 40
    every = [item for commands in groups.values() for runs in commands.values() for item in runs.values()]
    x_low, x_high = _decades(min(r["units"] for r in every), max(r["units"] for r in every))
    y_low, y_high = _decades(min(r["seconds"] for r in every), max(r["seconds"] for r in every))
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total_w}" height="{total_h}" '
        f'viewBox="0 0 {total_w} {total_h}" font-family="sans-serif" font-size="11">',
        f'<rect width="{total_w}" height="{total_h}" fill="white"/>',
    ]
    legend_x = 10
    for command in ORDER:
        parts.append(
            f'<line x1="{legend_x}" y1="16" x2="{legend_x + 22}" y2="16" stroke="{COLOURS[command]}" stroke-width="2"/>'
            f'<text x="{legend_x + 26}" y="20">{command}</text>'
        )
        legend_x += 30 + 7 * len(command)
    parts.append(f'<text x="{legend_x}" y="20" fill="#777">dotted: linear growth</text>')
    for at, key in enumerate(keys):
        left, top = (at % columns) * width, 40 + (at // columns) * height
        plot_w, plot_h = width - margin - 14, height - margin - 24

        def x_of(units: float, left: int = left, plot_w: int = plot_w) -> float:
            return left + margin + plot_w * (math.log10(units) - x_low) / (x_high - x_low)

        def y_of(seconds: float, top: int = top, plot_h: int = plot_h) -> float:
            return top + 20 + plot_h * (1 - (math.log10(seconds) - y_low) / (y_high - y_low))

        parts.append(f'<text x="{left + margin}" y="{top + 12}" font-weight="bold">{label(key)}</text>')
        parts.append(
            f'<rect x="{left + margin}" y="{top + 20}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#999"/>'
        )
        for decade in range(x_low, x_high + 1):
            x = x_of(10**decade)
            parts.append(f'<text x="{x:.1f}" y="{top + 20 + plot_h + 14}" text-anchor="middle">1e{decade}</text>')
        for decade in range(y_low, y_high + 1):
            y = y_of(10**decade)
            right = left + margin + plot_w
            parts.append(f'<line x1="{left + margin}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="#eee"/>')
            parts.append(f'<text x="{left + margin - 4}" y="{y + 4:.1f}" text-anchor="end">{10.0**decade:g} s</text>')
        parts.append(
            f'<text x="{left + margin + plot_w / 2:.1f}" y="{top + 20 + plot_h + 28}" text-anchor="middle">units</text>'
        )
        floor = groups[key].get("floor (pyarrow)")
        if floor:  # linear growth from the floor's smallest point, for scale
            first = min(floor)
            start, end = (first, floor[first]["seconds"]), (10**x_high, floor[first]["seconds"] * 10**x_high / first)
            parts.append(
                f'<line x1="{x_of(start[0]):.1f}" y1="{y_of(start[1]):.1f}" x2="{x_of(end[0]):.1f}" '
                f'y2="{max(y_of(end[1]), top + 20):.1f}" stroke="#aaa" stroke-dasharray="2,3"/>'
            )
        for command in [name for name in ORDER if name in groups[key]]:
            runs = groups[key][command]
            points = " ".join(f"{x_of(units):.1f},{y_of(runs[units]['seconds']):.1f}" for units in sorted(runs))
            parts.append(f'<polyline points="{points}" fill="none" stroke="{COLOURS[command]}" stroke-width="2"/>')
            for units in sorted(runs):
                x, y = x_of(units), y_of(runs[units]["seconds"])
                parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="{COLOURS[command]}"/>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _decades(low: float, high: float) -> tuple[int, int]:
    return math.floor(math.log10(low)), math.ceil(math.log10(high))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="+", help="files written by bench.py --save")
    parser.add_argument("--markdown", help="write the table here (default: print it)")
    parser.add_argument("--svg", help="write the plot here")
    args = parser.parse_args()
    groups = group(load(args.results))
    table = markdown(groups)
    if args.markdown:
        Path(args.markdown).write_text(table, encoding="utf-8")
    else:
        print(table)
    if args.svg:
        Path(args.svg).write_text(svg(groups), encoding="utf-8")


if __name__ == "__main__":
    main()
