"""Start-up of a small `score`, against the floor of what it must import (README, "Speed at scale").

Runs, in turn and each in a fresh process, `irr-audit --help`, `score` on the bundled 22-unit
example (text into a pipe, and --format json), the floor (a typer command with a few options that
imports numpy, pyarrow with pyarrow.compute and pyarrow.csv, and PyYAML, and does nothing else)
and `python -c "import numpy, pyarrow, typer"`; prints the median and fastest wall time and the
median CPU time of each. ``--base DIR`` also runs the irr_audit of another checkout (for example
`git archive BASE | tar -x -C DIR`), alternately with this one, and says whether both print the
same bytes. Like bench.py, it byte-compiles each checkout's irr_audit first, as `pip install` does
(``--no-compile`` leaves that out: with PYTHONDONTWRITEBYTECODE set, every run then compiles the
modules it loads).

    python benchmarks/startup.py --runs 15 [--base DIR]
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ["examples/sheets/alice.csv", "examples/sheets/bob.csv", "--rule", "rules/explicit_current_failure/v1.yaml"]
COMMANDS = {
    "irr-audit --help": ["--help"],
    "score (text into a pipe)": ["score", *EXAMPLE],
    "score --format json": ["score", *EXAMPLE, "--format", "json"],
}
FLOOR = """
from pathlib import Path
import typer
app = typer.Typer()
@app.command()
def score(inputs: list[Path], rule: Path = typer.Option(None, "--rule"), fmt: str = typer.Option("text", "--format")):
    import numpy, pyarrow, pyarrow.compute, pyarrow.csv, yaml  # noqa: F401
@app.command()
def other() -> None:
    pass
app()
"""


def timed(argv: list[str], cwd: Path) -> tuple[float, float, bytes]:
    """Wall seconds, CPU seconds (user + system) and stdout of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, done.stdout


def line(name: str, runs: list[tuple[float, float, bytes]]) -> str:
    walls = [wall for wall, _, _ in runs]
    cpu = statistics.median(cpu for _, cpu, _ in runs)
    return f"{name:55s} median {statistics.median(walls):.3f} s  fastest {min(walls):.3f} s  cpu {cpu:.3f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--base", type=Path, help="another checkout's folder, run alternately with this one")
    parser.add_argument("--no-compile", action="store_true", help="do not byte-compile irr_audit first")
    args = parser.parse_args()
    sides = {"this": ROOT, **({"base": args.base.resolve()} if args.base else {})}
    if not args.no_compile:
        for folder_of_side in sides.values():
            compileall.compile_dir(folder_of_side / "irr_audit", quiet=1)
    results: dict[tuple[str, str], list[tuple[float, float, bytes]]] = {}
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as folder:
        floor = Path(folder) / "floor.py"
        floor.write_text(FLOOR)
        others = {
            "floor: typer, numpy, pyarrow(.compute, .csv), yaml": [sys.executable, str(floor), "score", *EXAMPLE],
            "python -c 'import numpy, pyarrow, typer'": [sys.executable, "-c", "import numpy, pyarrow, typer"],
            "python -c pass": [sys.executable, "-c", "pass"],
        }
        for _ in range(args.runs):
            for name, argv in COMMANDS.items():
                for side, folder_of_side in sides.items():  # the checkout run is the one in the current folder
                    run = timed([sys.executable, "-m", "irr_audit", *argv], folder_of_side)
                    results.setdefault((name, side), []).append(run)
            for name, argv in others.items():
                results.setdefault((name, ""), []).append(timed(argv, ROOT))
    for (name, side), runs in results.items():
        same = all(out == results[(name, "this")][0][2] for _, _, out in runs) if side else True
        print(line(f"{name} ({side})" if side else name, runs) + ("" if same else "  OUTPUT DIFFERS"))
    print("load average before {:.1f} {:.1f} {:.1f}, after {:.1f} {:.1f} {:.1f}".format(*load, *os.getloadavg()))
    print("irr_audit not byte-compiled first" if args.no_compile else "irr_audit byte-compiled first")


if __name__ == "__main__":
    main()
