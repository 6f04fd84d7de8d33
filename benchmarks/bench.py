"""Benchmark irr-audit against the cost of reading the files and against the
script a user would otherwise write (issue 9).

    python benchmarks/bench.py --quick                 # 10^4 and 10^5 units
    python benchmarks/bench.py --sizes 1000000 --coders 5 --codes 2
    python benchmarks/bench.py --markdown              # the same table as Markdown

For every (units, coders, codes) configuration it writes seeded synthetic
coding sheets and a matching rule into a temporary folder (or --workdir), then
runs each command in a fresh subprocess, one at a time, and records the wall
time and the peak resident memory of that process: the peer script
(peer_script.py), then the pyarrow floor (floor_pyarrow.py), and `irr-audit
join`, `score`, `score --bootstrap 1000` and `report --format html` (and, when named in
--only, `freeze` and `verify`). Options that the
installed irr-audit does not have are detected from its --help and shown as n/a.
See benchmarks/README.md for what each column means.

This orchestrating process imports only the standard library and never holds
the data: on Linux a child's ru_maxrss starts from its parent's peak RSS
(fork/vfork before exec), so a fat parent would inflate every child's figure.
The synthetic sheets are written by a child process (`bench.py _generate`).
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
FLOOR_SCRIPT = HERE / "floor_pyarrow.py"
PEER_SCRIPT = HERE / "peer_script.py"

CODES = {
    2: ["yes", "no"],
    5: ["none", "mild", "moderate", "strong", "severe"],
}
PREVALENCE = {
    2: [0.35, 0.65],
    5: [0.40, 0.25, 0.15, 0.12, 0.08],
}
AGREEMENT = 0.80  # chance that a coder gives the unit's latent code; otherwise a draw from PREVALENCE
BLANK_RATE = 0.05  # share of a coder's cells written with an empty code
ABSENT_RATE = 0.02  # share of units with no row at all in a coder's sheet
ALL_SIZES = [10_000, 100_000, 1_000_000]
QUICK_SIZES = [10_000, 100_000]
LARGE = 1_000_000  # from this size on each command runs once unless --repeat-large says otherwise

# How each coder's sheet is written (--shapes): the plain form, what Excel on Windows writes
# (a UTF-8 byte-order mark and CRLF line ends), what R's write.csv and pyarrow's writer write
# (every field and the header quoted), and a mix across the coders with a comment column
# whose quoted values hold commas, quotes and line breaks.
SHAPES = {
    "plain": "comment_id,code; LF",
    "crlf": "CRLF line ends",
    "bom": "a UTF-8 byte-order mark",
    "excel": "a byte-order mark and CRLF line ends",
    "quoted": "every field and the header quoted",
    "mixed": "coder by coder: plain; BOM + CRLF; quoted; quoted + CRLF with code first; a quoted comment column "
    "with commas, quotes and line breaks",
    "ordered": "as plain, but every coder's rows in one order and none left out (the sheets as `irr-audit sample` "
    "writes them, returned with the rows in place)",
}
MIXED = [
    {"crlf": False, "bom": False, "quoted": False, "code_first": False, "comments": False},
    {"crlf": True, "bom": True, "quoted": False, "code_first": False, "comments": False},
    {"crlf": False, "bom": False, "quoted": True, "code_first": False, "comments": False},
    {"crlf": True, "bom": False, "quoted": True, "code_first": True, "comments": False},
    {"crlf": False, "bom": False, "quoted": False, "code_first": False, "comments": True},
]
COMMENTS = [b'"Well, no."', b'"He said ""never""."', b'"two\nlines, really"', b"fine", b'"a\r\nb"']

COMMANDS = ["floor (pyarrow)", "peer script", "join", "score", "score --bootstrap 1000", "report --format html"]
# measured when named in --only: an audit bundle of the sheets, made and then checked
BUNDLE_COMMANDS = ["freeze", "verify"]


# --------------------------------------------------------------------------- data


def rule_name(codes: int, scale: str) -> str:
    return f"bench_k{codes}" + ("_ordinal" if scale == "ordinal" else "")


def write_rule(rules_dir: Path, codes: int, scale: str) -> Path:
    """rules/<rule>/v1.yaml in the rule file format (docs/contract.md)."""
    name = rule_name(codes, scale)
    lines = [
        f"rule: {name}",
        "version: 1",
        f"question: Synthetic benchmark rule with {codes} codes ({scale}).",
        f"scale: {scale}",
        "codes:",
    ]
    for rank, code in enumerate(CODES[codes]):
        value = f", value: {rank}" if scale == "ordinal" else ""
        lines.append(f'  - {{code: "{code}", label: "{code}", definition: "Synthetic code {code}."{value}}}')
    lines += ["missing_codes: [unknown]", "changelog: First version.", ""]
    path = rules_dir / name / "v1.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def sheet_form(shape: str, coder: int) -> dict[str, bool]:
    """How coder number ``coder`` (from 1) writes the sheet under ``shape``."""
    if shape == "mixed":
        return MIXED[(coder - 1) % len(MIXED)]
    form = dict(MIXED[0])
    form.update(
        {
            "crlf": shape in ("crlf", "excel"),
            "bom": shape in ("bom", "excel"),
            "quoted": shape == "quoted",
        }
    )
    return form


def generate(outdir: Path, units: int, coders: int, codes: int, seed: int, shape: str = "plain") -> None:
    """Write coder1.csv .. coderN.csv (columns comment_id,code) into outdir, each in the form
    ``shape`` gives it (SHAPES; the codes are the same whatever the shape).

    Ids are `t1_` plus six base-36 digits, unique, drawn without replacement.
    Each unit has a latent code; each coder reports it with probability
    AGREEMENT, else a draw from the prevalence. Per coder, BLANK_RATE of the
    cells are written with an empty code, ABSENT_RATE of the units get no row,
    and the rows are shuffled (shape "ordered": every unit, in one order). Runs
    in a child process (see module docstring).
    """
    import numpy as np

    rng = np.random.default_rng([seed, units, coders, codes])
    low = 36**5  # six base-36 digits, no leading zero
    numbers = rng.choice(36**6 - low, size=units, replace=False) + low
    alphabet = np.frombuffer(b"0123456789abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)
    raw = np.empty((units, 9), dtype=np.uint8)
    raw[:, :3] = np.frombuffer(b"t1_", dtype=np.uint8)
    rest = numbers.copy()
    for position in range(8, 2, -1):
        raw[:, position] = alphabet[rest % 36]
        rest //= 36
    ids = raw.view("S9").ravel()

    prevalence = np.asarray(PREVALENCE[codes])
    truth = rng.choice(codes, size=units, p=prevalence)
    labels = np.array([code.encode() for code in CODES[codes]] + [b""], dtype=object)
    outdir.mkdir(parents=True, exist_ok=True)
    for coder in range(1, coders + 1):
        given = np.where(rng.random(units) < AGREEMENT, truth, rng.choice(codes, size=units, p=prevalence))
        given[rng.random(units) < BLANK_RATE] = codes  # the empty label
        rows = rng.permutation(np.flatnonzero(rng.random(units) >= ABSENT_RATE))
        if shape == "ordered":  # (the draws above are made all the same: every shape gets the same codes)
            rows = np.arange(units)
        form = sheet_form(shape, coder)
        columns = [[b"comment_id", *ids[rows].tolist()], [b"code", *labels[given[rows]].tolist()]]
        if form["quoted"]:
            columns = [[b'"' + value + b'"' for value in column] for column in columns]
        if form["code_first"]:
            columns.reverse()
        if form["comments"]:
            columns.append([b"comment", *(COMMENTS[at % len(COMMENTS)] for at in range(len(rows)))])
        end = b"\r\n" if form["crlf"] else b"\n"
        body = end.join(b",".join(cells) for cells in zip(*columns))
        (outdir / f"coder{coder}.csv").write_bytes((b"\xef\xbb\xbf" if form["bom"] else b"") + body + end)


def generate_codebook(outdir: Path, units: int, coders: int, variables: int, seed: int) -> None:
    """Write coder1.csv .. coderN.csv with one column per variable (v01 .. vNN, each 2 codes as
    `generate` draws them, the odd ones with 5) into outdir: a codebook's wide sheets."""
    import numpy as np

    rng = np.random.default_rng([seed, units, coders, variables, 20])
    ids = np.array([f"t1_{number:07d}".encode() for number in rng.choice(10**7, size=units, replace=False)])
    columns = []
    for variable in range(variables):
        codes = 5 if variable % 2 else 2
        prevalence = np.asarray(PREVALENCE[codes])
        truth = rng.choice(codes, size=units, p=prevalence)
        labels = np.array([code.encode() for code in CODES[codes]] + [b""], dtype=object)
        per_coder = []
        for _ in range(coders):
            given = np.where(rng.random(units) < AGREEMENT, truth, rng.choice(codes, size=units, p=prevalence))
            given[rng.random(units) < BLANK_RATE] = codes
            per_coder.append(labels[given])
        columns.append(per_coder)
    header = b",".join([b"comment_id", *(f"v{variable + 1:02d}".encode() for variable in range(variables))])
    outdir.mkdir(parents=True, exist_ok=True)
    for coder in range(coders):
        rows = rng.permutation(np.flatnonzero(rng.random(units) >= ABSENT_RATE))
        cells = [ids[rows].tolist()] + [columns[variable][coder][rows].tolist() for variable in range(variables)]
        body = b"\n".join([header] + [b",".join(row) for row in zip(*cells)])
        (outdir / f"coder{coder + 1}.csv").write_bytes(body + b"\n")


def write_codebook(folder: Path, variables: int) -> tuple[Path, Path]:
    """rules/vNN/v1.yaml (2 or 5 codes, as generate_codebook draws them) and two codebooks: every
    variable, and a one-variable codebook of the rule bench_k2 (for sheets with a `code` column)."""
    rules = folder / "rules"
    names = []
    for variable in range(variables):
        name = f"v{variable + 1:02d}"
        codes = CODES[5 if variable % 2 else 2]
        path = rules / name / "v1.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        body = [f"rule: {name}", "version: 1", f"question: Synthetic variable {name}.", "scale: nominal", "codes:"]
        body += [f'  - {{code: "{code}"}}' for code in codes]
        path.write_text("\n".join([*body, "missing_codes: [unknown]", "changelog: First version.", ""]), "utf-8")
        names.append(name)
    whole = folder / "codebook.yaml"
    whole.write_text(
        "codebook: bench\nversion: 1\nrules:\n" + "".join(f"  - {{rule: {n}, version: 1}}\n" for n in names),
        "utf-8",
    )
    one = folder / "one.yaml"
    one.write_text("codebook: bench_one\nversion: 1\nrules:\n  - {rule: bench_k2, version: 1}\n", "utf-8")
    return whole, one


def bench_codebook(args, meter: Meter, irr: list[str], rules: dict) -> list[list[str]]:
    """`score --codebook` of args.codebook variables, and a one-variable codebook against `score --rule`."""
    rows = []
    folder = Path(args.workdir) / "rules"  # beside bench_k2: the one-variable codebook finds it there
    whole, one = write_codebook(folder.parent, args.codebook)
    for units in args.sizes:
        for coders in args.coders:
            data = Path(args.workdir) / "data" / f"codebook_n{units}_c{coders}_v{args.codebook}"
            subprocess.run(
                [sys.executable, str(Path(__file__).resolve()), "_generate_codebook", str(data), str(units)]
                + [str(coders), str(args.codebook), str(args.seed)],
                check=True,
            )
            single = Path(args.workdir) / "data" / f"n{units}_c{coders}_k2"
            if not (single / f"coder{coders}.csv").exists():
                subprocess.run(
                    [sys.executable, str(Path(__file__).resolve()), "_generate", str(single), str(units)]
                    + [str(coders), "2", str(args.seed)],
                    check=True,
                )
            wide = [str(data / f"coder{c}.csv") for c in range(1, coders + 1)]
            narrow = [str(single / f"coder{c}.csv") for c in range(1, coders + 1)]
            cases = [
                (f"score --codebook ({args.codebook} variables)", [*irr, "score", *wide, "--codebook", str(whole)]),
                ("score --rule (1 variable)", [*irr, "score", *narrow, "--rule", str(rules[(2, "nominal")])]),
                ("score --codebook (1 variable)", [*irr, "score", *narrow, "--codebook", str(one)]),
            ]
            for name, command in cases:
                run, times, peak = measure_best(meter, [*command, "--format", "json", "-q"], args.repeat)
                shown = f"{run.seconds:.2f}" if run.returncode == 0 and run.seconds is not None else "failed"
                rows.append(
                    [f"{units:,}", str(coders), name, shown, f"{run.cpu:.2f}" if run.cpu else "", f"{peak or 0:.0f}"]
                )
                if args.verbose:
                    print(f"  {units:,} x {coders}: {name}: {shown} s", file=sys.stderr)
    return rows


# --------------------------------------------------------------------------- measuring


@dataclass
class Run:
    seconds: float | None
    peak_mb: float | None
    returncode: int | None
    stdout: Path
    stderr: Path
    timed_out: bool = False
    cpu: float | None = None  # user + system seconds of the command


class Meter:
    """Run one command in a fresh process; wall time and that process's peak RSS.

    method "time": GNU /usr/bin/time -f %M (its own small process forks the
    command, so the figure is the command's alone). method "wait4": the
    child's rusage from os.wait4. Wall time is measured here, around the
    whole spawn-and-wait, with perf_counter.
    """

    def __init__(self, method: str, scratch: Path, timeout: float):
        self.scratch = scratch
        self.timeout = timeout
        gnu_time = shutil.which("time", path="/usr/bin:/bin")
        if method == "auto":
            method = "time" if gnu_time and self._gnu_time_works(gnu_time) else "wait4"
        if method == "time" and not gnu_time:
            raise SystemExit("--rss time: /usr/bin/time not found")
        self.method = method
        self.gnu_time = gnu_time
        self.count = 0

    @staticmethod
    def _gnu_time_works(binary: str) -> bool:
        try:
            done = subprocess.run(
                [binary, "-f", "%M", "-o", os.devnull, "true"], capture_output=True, timeout=10, check=False
            )
        except (OSError, subprocess.SubprocessError):
            return False
        return done.returncode == 0

    def run(self, command: list[str], env: dict[str, str] | None = None) -> Run:
        self.count += 1
        stdout = self.scratch / f"run{self.count}.out"
        stderr = self.scratch / f"run{self.count}.err"
        rss_file = self.scratch / f"run{self.count}.rss"
        full = [self.gnu_time, "-f", "%U %S %M", "-o", str(rss_file), *command] if self.method == "time" else command
        timed_out = threading.Event()
        with open(stdout, "wb") as out, open(stderr, "wb") as err:
            start = time.perf_counter()
            process = subprocess.Popen(
                full, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env, start_new_session=True
            )

            def kill() -> None:
                timed_out.set()
                try:
                    os.killpg(process.pid, 9)  # the process group of this one child only
                except ProcessLookupError:
                    pass

            timer = threading.Timer(self.timeout, kill)
            timer.start()
            _, status, usage = os.wait4(process.pid, 0)
            seconds = time.perf_counter() - start
            timer.cancel()
        process.returncode = os.waitstatus_to_exitcode(status)
        if self.method == "time":
            cpu, peak_kb = _time_output(rss_file)
            rss_file.unlink(missing_ok=True)
        else:
            cpu = usage.ru_utime + usage.ru_stime
            peak_kb = usage.ru_maxrss / (1024 if sys.platform == "darwin" else 1)  # bytes on macOS
        if timed_out.is_set():
            return Run(None, None, None, stdout, stderr, timed_out=True)
        peak_mb = None if peak_kb is None else peak_kb / 1024
        return Run(seconds, peak_mb, process.returncode, stdout, stderr, cpu=cpu)


def _time_output(path: Path) -> tuple[float | None, float | None]:
    """(user + system seconds, peak KiB) from GNU time's `-f "%U %S %M"` file.

    Its last line; a line before it says so when the command failed.
    """
    try:
        last = path.read_text().strip().splitlines()[-1].split()
        return float(last[0]) + float(last[1]), float(last[2])
    except (OSError, IndexError, ValueError):
        return None, None


def _read_json(path: Path, limit: int = 5_000_000):
    """A command's JSON stdout, if small (a big parse would bloat this process)."""
    try:
        if path.stat().st_size > limit:
            return None
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _tail(path: Path, limit: int = 300) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""
    return " ".join(text[-limit:].split())


# --------------------------------------------------------------------------- irr-audit


def irr_audit_command(override: str | None) -> list[str]:
    if override:
        return shlex.split(override)
    beside = Path(sys.executable).parent / "irr-audit"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("irr-audit")
    return [found] if found else [sys.executable, "-m", "irr_audit"]


def byte_compile_package() -> str:
    """Byte-compile the irr_audit package this Python imports, as `pip install` does.
    An editable install (or PYTHONDONTWRITEBYTECODE) would otherwise compile every
    module from source on every start and time that too."""
    spec = importlib.util.find_spec("irr_audit")
    if spec is None or not spec.submodule_search_locations:
        return "irr_audit not importable here: not byte-compiled"
    folder = next(iter(spec.submodule_search_locations))
    compiled = compileall.compile_dir(folder, quiet=1)
    return f"byte-compiled {folder}" if compiled else f"byte-compiling {folder} failed"


def help_text(irr: list[str], *sub: str) -> str:
    env = dict(os.environ, COLUMNS="250", NO_COLOR="1", TERM="dumb")
    try:
        done = subprocess.run([*irr, *sub, "--help"], capture_output=True, text=True, env=env, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout + done.stderr


@dataclass
class Features:
    quiet_score: bool
    quiet_join: bool
    quiet_report: bool
    bootstrap: bool
    seed: bool
    report_html: bool

    @classmethod
    def detect(cls, irr: list[str]) -> Features:
        score, join, report = help_text(irr, "score"), help_text(irr, "join"), help_text(irr, "report")
        return cls(
            quiet_score="--quiet" in score,
            quiet_join="--quiet" in join,
            quiet_report="--quiet" in report,
            bootstrap="--bootstrap" in score,
            seed="--seed" in score,
            report_html="--format" in report and "html" in report,
        )


# --------------------------------------------------------------------------- one configuration


@dataclass
class Result:
    units: int
    coders: int
    codes: int
    scale: str
    command: str
    input_bytes: int
    shape: str = "plain"
    seconds: float | None = None
    peak_mb: float | None = None
    cpu: float | None = None
    status: str = "ok"  # ok | n/a | failed (rc N) | timeout
    note: str = ""
    runs: list[float] = field(default_factory=list)


def measure_best(meter: Meter, command: list[str], repeat: int, before=None) -> tuple[Run, list[float], float | None]:
    """Run `repeat` times; the fastest run, every wall time, the highest peak."""
    best: Run | None = None
    times: list[float] = []
    peak: float | None = None
    for _ in range(repeat):
        if before:
            before()
        run = meter.run(command)
        if run.timed_out or run.returncode != 0:
            return run, times, peak
        times.append(run.seconds)
        peak = max(peak or 0.0, run.peak_mb or 0.0)
        if best is None or run.seconds < best.seconds:
            best = run
    return best, times, peak


def bench_config(
    args,
    meter: Meter,
    irr: list[str],
    feats: Features,
    rules: dict,
    units: int,
    coders: int,
    codes: int,
    scale: str,
    shape: str = "plain",
) -> list[Result]:
    data = Path(args.workdir) / "data" / f"n{units}_c{coders}_k{codes}_{shape}"
    if not (data / f"coder{coders}.csv").exists():
        started = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                str(Path(__file__).resolve()),
                "_generate",
                str(data),
                str(units),
                str(coders),
                str(codes),
                str(args.seed),
                shape,
            ],
            check=True,
        )
        if args.verbose:
            print(f"  generated {data.name} in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    sheets = [str(data / f"coder{c}.csv") for c in range(1, coders + 1)]
    input_bytes = sum(os.path.getsize(path) for path in sheets)
    rule = str(rules[(codes, scale)])
    repeat = args.repeat if units < LARGE else args.repeat_large
    out_dir = Path(args.workdir) / "out"
    scratch = meter.scratch

    audits_dir = Path(args.workdir) / "audits"

    def clear_out() -> None:
        shutil.rmtree(out_dir, ignore_errors=True)

    def clear_audits() -> None:
        shutil.rmtree(audits_dir, ignore_errors=True)

    def verify_command() -> list[str]:  # the bundle the last freeze made (its name holds the time)
        bundles = [path for path in audits_dir.glob("*") if path.is_dir() and not path.name.startswith(".")]
        return [*irr, "verify", str(bundles[0] if bundles else audits_dir / "no bundle: run freeze first")]

    quiet_score = ["-q"] if feats.quiet_score else []
    plan: list[tuple[str, list[str] | Callable[[], list[str]] | None, object]] = [
        ("floor (pyarrow)", [sys.executable, str(FLOOR_SCRIPT), *sheets], None),
        ("peer script", [sys.executable, str(PEER_SCRIPT), "--codes", ",".join(CODES[codes]), *sheets], None),
        (
            "join",
            [*irr, "join", *sheets, "--rule", rule, "--out", str(out_dir)] + (["-q"] if feats.quiet_join else []),
            clear_out,
        ),
        ("score", [*irr, "score", *sheets, "--rule", rule, "--format", "json", *quiet_score], None),
        (
            "score --bootstrap 1000",
            [
                *irr,
                "score",
                *sheets,
                "--rule",
                rule,
                "--format",
                "json",
                "--bootstrap",
                "1000",
                *(["--seed", "1"] if feats.seed else []),
                *quiet_score,
            ]
            if feats.bootstrap
            else None,
            None,
        ),
        (
            "report --format html",
            [
                *irr,
                "report",
                *sheets,
                "--rule",
                rule,
                "--format",
                "html",
                "--output",
                str(scratch / "report.html"),
                *(["-q"] if feats.quiet_report else []),
            ]
            if feats.report_html
            else None,
            None,
        ),
        ("freeze", [*irr, "freeze", *sheets, "--rule", rule, "--into", str(audits_dir), "-q"], clear_audits),
        ("verify", verify_command, None),
    ]
    results = {}
    peer_values = None
    # The peer script first: it keeps a core busy for up to a minute, and this kind of
    # virtual machine then runs slower for a while (the floor itself took 0.39-0.56 s
    # instead of 0.30 s after a 30 s busy loop). The floor is measured after it, next to
    # the commands it is compared with, so that none of them is compared with a floor
    # measured on a rested machine. The table lists them in plan order.
    for name, command, before in sorted(plan, key=lambda step: step[0] != "peer script"):
        if (args.only and name not in args.only) or (not args.only and name in BUNDLE_COMMANDS):
            continue
        result = Result(units, coders, codes, scale, name, input_bytes, shape)
        results[name] = result
        if command is None:
            result.status = "n/a"
            result.note = "option not in this irr-audit"
            _progress(args, result)
            continue
        run, times, peak = measure_best(meter, command() if callable(command) else command, repeat, before)
        if run.timed_out:
            result.status, result.note = "timeout", f"> {args.timeout:.0f} s"
        elif run.returncode == 2 and "not available" in _tail(run.stderr, 2000):
            # listed in --help but refused as not yet available
            result.status, result.note = "n/a", "refused: " + _tail(run.stderr, 2000).split(". ")[0][:100]
        elif run.returncode != 0:
            result.status = f"failed (rc {run.returncode})"
            result.note = _tail(run.stderr)
        else:
            result.seconds, result.peak_mb, result.runs, result.cpu = run.seconds, peak, times, run.cpu
            output = _read_json(run.stdout) if name != "join" else None
            if name == "floor (pyarrow)" and output:
                result.note = f"{sum(output['rows']):,} rows read"
            elif name == "peer script" and output:
                peer_values = output
                result.note = f"4 coefficients on {output['fully_coded']:,} fully coded units"
            elif name.startswith("score"):
                result.note = describe_score(output, peer_values, scale)
        clear_out()
        _progress(args, result)
    if not args.keep:
        shutil.rmtree(data, ignore_errors=True)
    return [results[name] for name, _, _ in plan if name in results]


def describe_score(score, peer, scale: str) -> str:
    """How many metrics came back, and whether the shared ones equal the peer's."""
    if not isinstance(score, dict):
        return "output not parsed"
    metrics = score.get("metrics", {}) or {}
    available = score.get("available_case", {}) or {}
    pairs = score.get("pairs", []) or []
    pair_metrics = sum(len(pair.get("metrics", {}) or {}) for pair in pairs)
    note = f"{len(metrics)} metrics + {len(available)} available-case; {len(pairs)} pairs ({pair_metrics} metrics)"
    booted = sum(1 for value in metrics.values() if isinstance(value, dict) and value.get("bootstrap"))
    if booted:
        note += f"; {booted} with bootstrap CIs"
    if not peer:
        return note
    checks, wrong = 0, []

    def compare(label: str, ours, theirs) -> None:
        nonlocal checks
        value = ours.get("value") if isinstance(ours, dict) else None
        if value is None or theirs is None:
            return
        checks += 1
        if abs(value - theirs) > 1e-9 * max(1.0, abs(theirs)):
            wrong.append(f"{label} {value:.6g} vs {theirs:.6g}")

    fully = (score.get("units") or {}).get("fully_coded")
    if fully is not None:
        checks += 1
        if fully != peer["fully_coded"]:
            wrong.append(f"fully_coded {fully} vs {peer['fully_coded']}")
    compare("fleiss_kappa", metrics.get("fleiss_kappa"), peer.get("fleiss_kappa"))
    if scale == "nominal":
        compare("krippendorff_alpha", metrics.get("krippendorff_alpha"), peer.get("krippendorff_alpha"))
    for pair in pairs:
        key = "|".join(pair.get("coders", []))
        compare(f"cohen_kappa {key}", (pair.get("metrics") or {}).get("cohen_kappa"), peer["pairs"].get(key))
    if wrong:
        return note + "; DIFFERS FROM PEER: " + ", ".join(wrong)
    return note + f"; {checks} values equal the peer's"


def _progress(args, result: Result) -> None:
    if args.verbose:
        shown = f"{result.seconds:.3f} s, {result.peak_mb:.0f} MB" if result.seconds is not None else result.status
        print(
            f"  {result.units:>9,} x {result.coders} coders x {result.codes} codes  {result.command:<24} {shown}",
            file=sys.stderr,
            flush=True,
        )


# --------------------------------------------------------------------------- start-up


def bench_startup(args, meter: Meter, irr: list[str], feats: Features, rules: dict) -> list[Result]:
    data = Path(args.workdir) / "data" / "startup20"
    subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "_generate", str(data), "20", "2", "2", str(args.seed)],
        check=True,
    )
    sheets = [str(data / "coder1.csv"), str(data / "coder2.csv")]
    rule = str(rules[(2, "nominal")])
    plan = [
        ("python -c pass", [sys.executable, "-c", "pass"]),
        ("irr-audit --help", [*irr, "--help"]),
        (
            "irr-audit score, 20 units",
            [*irr, "score", *sheets, "--rule", rule, "--format", "json", *(["-q"] if feats.quiet_score else [])],
        ),
    ]
    results = []
    for name, command in plan:
        result = Result(20, 2, 2, "nominal", name, 0)
        run, times, peak = measure_best(meter, command, args.startup_repeat)
        if run.timed_out or run.returncode != 0:
            result.status = "timeout" if run.timed_out else f"failed (rc {run.returncode})"
            result.note = _tail(run.stderr)
        else:
            result.seconds, result.peak_mb, result.runs, result.cpu = run.seconds, peak, times, run.cpu
            result.note = f"best of {len(times)}; median {sorted(times)[len(times) // 2]:.3f} s"
        results.append(result)
    if not args.keep:
        shutil.rmtree(data, ignore_errors=True)
    return results


# --------------------------------------------------------------------------- tables


def table_rows(results: list[Result]) -> list[list[str]]:
    rows = []
    for result in results:
        same = [
            r
            for r in results
            if (r.units, r.coders, r.codes, r.scale, r.shape)
            == (result.units, result.coders, result.codes, result.scale, result.shape)
        ]
        floor = next((r for r in same if r.command == "floor (pyarrow)" and r.seconds), None)
        peer = next((r for r in same if r.command == "peer script" and r.seconds), None)
        ok = result.seconds is not None
        codes = f"{result.codes}" + (" ord" if result.scale == "ordinal" else "")
        rows.append(
            [
                f"{result.units:,}",
                str(result.coders),
                codes,
                result.shape,
                result.command,
                f"{result.seconds:.3f}" if ok else result.status,
                f"{result.cpu:.2f}" if ok and result.cpu is not None else "",
                f"{result.peak_mb:.0f}" if ok and result.peak_mb is not None else "",
                f"{result.seconds / floor.seconds:.2f}x" if ok and floor else "",
                f"{result.seconds / peer.seconds:.2f}x" if ok and peer else "",
                f"{result.input_bytes / 2**20:.1f}",
                f"{result.peak_mb * 2**20 / result.input_bytes:.1f}x"
                if ok and result.peak_mb and result.input_bytes
                else "",
                result.note,
            ]
        )
    return rows


HEADER = [
    "units",
    "coders",
    "codes",
    "shape",
    "command",
    "seconds",
    "cpu s",
    "peak MB",
    "x floor",
    "x peer",
    "input MB",
    "peak/input",
    "note",
]
RIGHT = {i for i, name in enumerate(HEADER) if name not in ("codes", "shape", "command", "note")}


def render_text(rows: list[list[str]]) -> str:
    widths = [max(len(HEADER[i]), *(len(row[i]) for row in rows)) for i in range(len(HEADER) - 1)]
    right = RIGHT
    lines = []
    for row in [HEADER, *rows]:
        cells = [row[i].rjust(widths[i]) if i in right else row[i].ljust(widths[i]) for i in range(len(widths))]
        lines.append("  ".join(cells) + "  " + row[-1])
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def render_markdown(rows: list[list[str]]) -> str:
    lines = [
        "| " + " | ".join(HEADER) + " |",
        "|" + "|".join("---:" if i in RIGHT else "---" for i in range(len(HEADER))) + "|",
    ]
    for row in rows:
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |")
    return "\n".join(lines)


def environment(irr: list[str], meter: Meter, feats: Features, compiled: str) -> list[str]:
    from importlib import metadata

    def version(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "-"

    packages = ", ".join(
        f"{name} {version(name)}"
        for name in ["irr-audit", "pyarrow", "pandas", "numpy", "scikit-learn", "statsmodels", "krippendorff"]
    )
    missing = [
        flag
        for flag, present in [("score --bootstrap", feats.bootstrap), ("report --format html", feats.report_html)]
        if not present
    ]
    load = "load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg()) if hasattr(os, "getloadavg") else ""
    lines = [
        f"{time.strftime('%Y-%m-%d %H:%M')}  {platform.platform()}  {os.cpu_count()} cores  "
        f"Python {platform.python_version()}  {load} (at the end of the run)",
        packages,
        f"irr-audit: {' '.join(irr)} ({compiled}); peak RSS via {meter.method}"
        + (f"; not in this irr-audit: {', '.join(missing)}" if missing else ""),
    ]
    return lines


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Time irr-audit against the pyarrow floor and the pandas/scikit-learn/statsmodels/krippendorff "
        "peer script, each command in a fresh process."
    )
    parser.add_argument(
        "--sizes",
        type=lambda text: [int(float(s)) for s in text.split(",")],
        help="comma-separated unit counts (1e6 works); default 10000,100000,1000000",
    )
    parser.add_argument("--quick", action="store_true", help="sizes 10^4 and 10^5 only")
    parser.add_argument(
        "--coders",
        type=lambda text: [int(s) for s in text.split(",")],
        default=[2, 5],
        help="comma-separated coder counts (default 2,5)",
    )
    parser.add_argument(
        "--codes",
        type=lambda text: [int(s) for s in text.split(",")],
        default=[2, 5],
        help="comma-separated code counts, 2 and/or 5 (default 2,5)",
    )
    parser.add_argument(
        "--five-scale",
        choices=["ordinal", "nominal", "both"],
        default="ordinal",
        help="scale of the 5-code rule (default ordinal: every weighted coefficient applies)",
    )
    parser.add_argument(
        "--only",
        type=lambda text: [s.strip() for s in text.split(",")],
        help=f"comma-separated subset of: {', '.join(COMMANDS)}; and, measured only when named: "
        f"{', '.join(BUNDLE_COMMANDS)}",
    )
    parser.add_argument(
        "--shapes",
        type=lambda text: [s.strip() for s in text.split(",")],
        default=["plain"],
        help=f"comma-separated sheet shapes (default plain): {'; '.join(f'{k}: {v}' for k, v in SHAPES.items())}",
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs per command below 10^6 units; best is shown")
    parser.add_argument("--repeat-large", type=int, default=1, help="runs per command at 10^6 units and more")
    parser.add_argument("--startup-repeat", type=int, default=5, help="runs of each start-up command")
    parser.add_argument("--no-startup", action="store_true", help="skip the start-up timings")
    parser.add_argument("--seed", type=int, default=20240901)
    parser.add_argument("--workdir", help="where to write sheets and outputs (default: a temporary folder)")
    parser.add_argument("--keep", action="store_true", help="keep the generated sheets and outputs")
    parser.add_argument("--timeout", type=float, default=900, help="seconds before one command is killed")
    parser.add_argument(
        "--rss",
        choices=["auto", "time", "wait4"],
        default="auto",
        help="peak memory via GNU /usr/bin/time or os.wait4 (default: time if present)",
    )
    parser.add_argument("--irr-audit", dest="irr_audit", help="command to run irr-audit (default: the entry point)")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument("--save", help="also write every result as JSON to this file")
    parser.add_argument(
        "--load", nargs="+", metavar="FILE", help="print the tables of files written by --save; run nothing"
    )
    parser.add_argument(
        "--codebook",
        type=int,
        metavar="N",
        help="instead: time `score --codebook` of N variables (wide sheets), and a one-variable codebook "
        "against `score --rule` on the same sheets",
    )
    parser.add_argument("-q", "--quiet", dest="verbose", action="store_false", help="no progress on stderr")
    args = parser.parse_args(argv)
    args.sizes = args.sizes or (QUICK_SIZES if args.quick else ALL_SIZES)
    unknown = sorted(set(args.codes) - set(CODES))
    if unknown:
        parser.error(f"--codes: only {sorted(CODES)} are defined, not {unknown}")
    if set(args.shapes) - set(SHAPES):
        parser.error(f"--shapes: unknown shapes {sorted(set(args.shapes) - set(SHAPES))}; choose from {list(SHAPES)}")
    known = COMMANDS + BUNDLE_COMMANDS
    if args.only and set(args.only) - set(known):
        parser.error(f"--only: unknown commands {sorted(set(args.only) - set(known))}; choose from {known}")
    return args


def main(argv: list[str]) -> int:
    if argv[:1] == ["_generate"]:
        outdir, units, coders, codes, seed, *shape = argv[1:7]
        generate(Path(outdir), int(units), int(coders), int(codes), int(seed), *shape)
        return 0
    if argv[:1] == ["_generate_codebook"]:
        outdir, units, coders, variables, seed = argv[1:6]
        generate_codebook(Path(outdir), int(units), int(coders), int(variables), int(seed))
        return 0
    args = parse_args(argv)
    if args.load:
        return print_saved(args.load, args.markdown)
    made_temp = args.workdir is None
    args.workdir = args.workdir or tempfile.mkdtemp(prefix="irr-bench-")
    Path(args.workdir).mkdir(parents=True, exist_ok=True)
    scratch = Path(args.workdir) / "runs"
    scratch.mkdir(exist_ok=True)
    try:
        irr = irr_audit_command(args.irr_audit)
        compiled = byte_compile_package()
        feats = Features.detect(irr)
        meter = Meter(args.rss, scratch, args.timeout)
        rules = {}
        for codes in args.codes:
            scales = (
                ["nominal"] if codes == 2 else {"both": ["nominal", "ordinal"]}.get(args.five_scale, [args.five_scale])
            )
            for scale in scales:
                rules[(codes, scale)] = write_rule(Path(args.workdir) / "rules", codes, scale)
        if (2, "nominal") not in rules:
            rules[(2, "nominal")] = write_rule(Path(args.workdir) / "rules", 2, "nominal")
        if args.verbose:
            print(f"workdir {args.workdir}; peak RSS via {meter.method}", file=sys.stderr)

        if args.codebook:
            table = bench_codebook(args, meter, irr, rules)
            header = ["units", "coders", "command", "seconds", "cpu s", "peak MB"]
            print(("  \n" if args.markdown else "\n").join(environment(irr, meter, feats, compiled)) + "\n")
            print("\n".join("| " + " | ".join(row) + " |" for row in [header, ["---"] * len(header), *table]))
            return 0 if all(row[3] != "failed" for row in table) else 1
        results: list[Result] = []
        for units in args.sizes:
            for coders in args.coders:
                for codes, scale in sorted(k for k in rules if k[0] in args.codes):
                    for shape in args.shapes:
                        results += bench_config(args, meter, irr, feats, rules, units, coders, codes, scale, shape)
        startup = [] if args.no_startup else bench_startup(args, meter, irr, feats, rules)

        render = render_markdown if args.markdown else render_text
        print(("  \n" if args.markdown else "\n").join(environment(irr, meter, feats, compiled)) + "\n")
        if results:
            print(render(table_rows(results)))
            print()
        if startup:
            print(render_startup(startup, args.markdown))
        if args.save:
            Path(args.save).write_text(json.dumps([r.__dict__ for r in results + startup], indent=2) + "\n")
        failed = [r for r in results + startup if r.status not in ("ok", "n/a")]
        return 1 if failed else 0
    finally:
        if args.keep:
            print(f"kept {args.workdir}", file=sys.stderr)
        elif made_temp:
            shutil.rmtree(args.workdir, ignore_errors=True)
        else:
            for sub in ("data", "out", "runs", "rules"):
                shutil.rmtree(Path(args.workdir) / sub, ignore_errors=True)


def print_saved(paths: list[str], markdown: bool) -> int:
    """Re-print results saved with --save (several files: one table, in order)."""
    saved = [Result(**item) for path in paths for item in json.loads(Path(path).read_text(encoding="utf-8"))]
    startup = [r for r in saved if r.input_bytes == 0]
    results = [r for r in saved if r.input_bytes]
    render = render_markdown if markdown else render_text
    if results:
        print(render(table_rows(results)))
    if startup:
        print()
        print(render_startup(startup, markdown))
    return 0


def render_startup(results: list[Result], markdown: bool) -> str:
    header = ["start-up", "seconds", "cpu s", "peak MB", "note"]
    rows = [
        [
            r.command,
            f"{r.seconds:.3f}" if r.seconds is not None else r.status,
            f"{r.cpu:.2f}" if r.cpu is not None else "",
            f"{r.peak_mb:.0f}" if r.peak_mb is not None else "",
            r.note,
        ]
        for r in results
    ]
    if markdown:
        return "\n".join(
            ["| " + " | ".join(header) + " |", "|---|---:|---:|---:|---|"]
            + ["| " + " | ".join(row) + " |" for row in rows]
        )
    widths = [max(len(header[i]), *(len(row[i]) for row in rows)) for i in range(4)]
    lines = [
        "  ".join([row[0].ljust(widths[0]), *(row[i].rjust(widths[i]) for i in (1, 2, 3)), row[4]])
        for row in [header, *rows]
    ]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
