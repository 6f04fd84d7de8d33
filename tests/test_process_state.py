"""What other code in the process does to shared settings does not change what irr-audit reads
or writes, and irr-audit undoes nothing another caller did (docs/api.md)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml

import irr_audit

ROOT = Path(__file__).resolve().parents[1]
RULE_FILE = ROOT / "rules" / "explicit_current_failure" / "v1.yaml"
RULE_MAPPING = {
    "rule": "mentions_a_bug",
    "version": 1,
    "scale": "nominal",
    "question": "Does the comment\nname a bug?",
    "codes": [{"code": "yes"}, {"code": "no"}],
    "missing_codes": ["unknown"],
}


def block_style(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    """A representer a notebook might add: text with a line break dumped as a literal block."""
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style="|" if "\n" in text else None)


# --- pyyaml's registries -----------------------------------------------------------------

NOTEBOOKS_YAML = """
import yaml
def shouted(loader, node):
    return loader.construct_scalar(node).upper()
def block_style(dumper, text):
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style="|" if "\\n" in text else None)
yaml.add_constructor("tag:yaml.org,2002:str", shouted, Loader=yaml.SafeLoader)
yaml.add_multi_constructor("!", lambda loader, suffix, node: suffix, Loader=yaml.SafeLoader)
yaml.add_representer(str, block_style, Dumper=yaml.SafeDumper)
"""

RULES_READ = """
import json, sys
import irr_audit
mapping = json.loads(sys.argv[1])
from_file = irr_audit.load_rule(sys.argv[2])
print(json.dumps([from_file.categories, from_file.missing_codes, irr_audit.load_rule(mapping).digest]))
"""


def rules_read(setup: str) -> list[object]:
    script = setup + RULES_READ
    done = subprocess.run(
        [sys.executable, "-c", script, json.dumps(RULE_MAPPING), str(RULE_FILE)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def test_a_rule_reads_and_digests_alike_whatever_a_notebook_added_to_yamls_safe_classes() -> None:
    """yaml.add_constructor / add_representer on yaml.SafeLoader / SafeDumper change them for the
    whole process; irr-audit reads and dumps rules with pyyaml's own safe registries."""
    assert rules_read(NOTEBOOKS_YAML) == rules_read("")


def test_a_representer_added_after_import_leaves_a_mappings_digest(monkeypatch: pytest.MonkeyPatch) -> None:
    digest = irr_audit.load_rule(RULE_MAPPING).digest
    monkeypatch.setattr(yaml.SafeDumper, "yaml_representers", dict(yaml.SafeDumper.yaml_representers))
    yaml.add_representer(str, block_style, Dumper=yaml.SafeDumper)
    assert "|" in yaml.safe_dump({"question": "a\nb"})  # the notebook's representer is in force
    assert irr_audit.load_rule(RULE_MAPPING).digest == digest


# --- the random module's numbers ------------------------------------------------------

DRAW_WHILE_RICH_IS_IMPORTED = """
import json, random, sys
random.seed(7)

class DrawsWhileRichImports:
    \"\"\"Stands for a caller's thread that draws while irr-audit imports rich: it draws the
    moment rich/style.py is looked for, so the draw falls inside the import every time.\"\"\"
    drawn = []
    def find_spec(self, name, path=None, target=None):
        if name == "rich.style":
            self.drawn.append(random.random())
        return None

finder = DrawsWhileRichImports()
sys.meta_path.insert(0, finder)
import irr_audit.report.richimport
sys.meta_path.remove(finder)
print(json.dumps([finder.drawn, random.random(), random.Random(7).random()]))
"""


def test_a_number_drawn_while_rich_is_imported_is_not_handed_out_again() -> None:
    """Putting back the state from before rich's import would undo a draw another thread made
    meanwhile: that thread would get the same number twice."""
    done = subprocess.run(
        [sys.executable, "-c", DRAW_WHILE_RICH_IS_IMPORTED], cwd=ROOT, capture_output=True, text=True, check=True
    )
    drawn, next_number, seeded_first = json.loads(done.stdout)
    assert drawn == [seeded_first]  # the caller's draw did fall inside the import
    assert next_number != drawn[0]


# --- pandas imported by another thread ---------------------------------------------------

SHEETS = [str(ROOT / "examples" / "sheets" / name) for name in ("alice.csv", "bob.csv")]

AUDIT_WHILE_PANDAS_IS_IMPORTED = """
import importlib._bootstrap, importlib.util, json, sys, threading, time
import irr_audit

SHEETS, RULE = json.loads(sys.argv[1]), sys.argv[2]
irr_audit.audit(SHEETS, RULE)  # a sheets' audit imports no pandas: every module it needs is loaded now
outcome = []


def audit_sheets():
    try:
        irr_audit.audit(SHEETS, RULE)
        outcome.append("audited")
    except Exception as error:
        outcome.append(repr(error))


def waiting_for_pandas():
    lock = importlib._bootstrap._module_locks.get("pandas")
    lock = lock() if lock else None
    return bool(lock and lock.waiters)


class StartsAnAuditMidImport:
    \"\"\"pandas' loader, but that an audit starts on another thread once pandas is in sys.modules
    and before its code runs; pandas' code runs once that audit ended or waits for pandas.\"\"\"
    def __init__(self, loader):
        self.loader = loader
    def create_module(self, spec):
        return self.loader.create_module(spec)
    def exec_module(self, module):
        auditing.start()
        while auditing.is_alive() and not waiting_for_pandas():
            time.sleep(0.001)
        self.loader.exec_module(module)


class Finder:
    def find_spec(self, name, path=None, target=None):
        if name != "pandas":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec("pandas")
        spec.loader = StartsAnAuditMidImport(spec.loader)
        return spec


auditing = threading.Thread(target=audit_sheets)
sys.meta_path.insert(0, Finder())
import pandas
auditing.join()
print(json.dumps([outcome, hasattr(pandas, "DataFrame")]))
"""


def test_an_audit_of_sheets_while_another_thread_imports_pandas_audits() -> None:
    """sys.modules holds pandas from the start of its import, before it has DataFrame: an audit
    asking whether its data is a DataFrame meanwhile waits for the import, rather than failing."""
    done = subprocess.run(
        [sys.executable, "-c", AUDIT_WHILE_PANDAS_IS_IMPORTED, json.dumps(SHEETS), str(RULE_FILE)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    outcome, pandas_whole = json.loads(done.stdout)
    assert outcome == ["audited"] and pandas_whole


# --- threads, and what a run leaves behind ----------------------------------------------

THREADED_AUDITS = {
    "seed 1": {"bootstrap": 200, "seed": 1},
    "seed 2, 90% t": {"bootstrap": 200, "seed": 2, "ci_level": 0.9, "interval": "t"},
    "run aliases": {"aliases": {"1": "yes", "0": "no"}, "weights": "linear"},
    "alpha_min": {"bootstrap": 200, "seed": 3, "alpha_min": 0.5, "test_against": 0.3},
}


def rendered(options: dict[str, Any]) -> str:
    audit = irr_audit.audit(SHEETS, str(RULE_FILE), **options)
    return audit.to_json() + audit.to_markdown() + audit.to_text()


def test_audits_on_threads_at_once_are_each_what_it_is_alone() -> None:
    """Each thread's audit, with its own options, against the same audit made alone: what is
    compared is the documents, so how the threads interleave cannot change the verdict."""
    alone = {name: rendered(options) for name, options in THREADED_AUDITS.items()}
    together: dict[str, str] = {}
    failures: list[BaseException] = []
    start = threading.Barrier(len(THREADED_AUDITS))

    def run(name: str) -> None:
        start.wait()
        try:
            together[name] = rendered(THREADED_AUDITS[name])
        except BaseException as error:  # handed to the test's thread
            failures.append(error)

    threads = [threading.Thread(target=run, args=(name,)) for name in THREADED_AUDITS]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert together == alone


SETTINGS_BEFORE_AND_AFTER = """
import csv, decimal, gc, json, logging, os, random, signal, sys, threading, warnings
import numpy as np, pandas as pd, pyarrow as pa, yaml

def settings():
    umask = os.umask(0); os.umask(umask)
    return repr([
        np.geterr(), np.get_printoptions(), pd.get_option("display.max_rows"), pd.get_option("mode.copy_on_write"),
        pd.get_option("future.infer_string"), warnings.filters, logging.root.level, logging.root.handlers,
        random.getstate(), np.random.get_state()[1][:4].tolist(), csv.field_size_limit(), sys.getrecursionlimit(),
        gc.get_threshold(), gc.isenabled(), decimal.getcontext(), umask, os.getcwd(), sorted(os.environ),
        signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGPIPE), sys.stdout, sys.stderr,
        [t.name for t in threading.enumerate()], pa.cpu_count(), pa.io_thread_count(),
        pa.default_memory_pool().backend_name, len(os.listdir("/proc/self/fd")),
        sorted(yaml.SafeLoader.yaml_constructors, key=str), sorted(yaml.SafeDumper.yaml_representers, key=str),
    ])

SHEETS, RULE = json.loads(sys.argv[1]), sys.argv[2]
random.seed(7); np.random.seed(7)
before = settings()
import irr_audit
from typer.testing import CliRunner
from irr_audit.cli import app
audit = irr_audit.audit(SHEETS, RULE, bootstrap=200)
audit.to_json(); audit.to_markdown(); audit.to_html(); audit.to_text()
frames = {coder: pd.read_csv(path, dtype=str, keep_default_na=False) for coder, path in zip("ab", SHEETS)}
irr_audit.audit(frames, RULE, bootstrap=200, seed=1).to_text()
irr_audit.load_rule({"rule": "r", "version": 1, "scale": "nominal", "codes": [{"code": "a"}, {"code": "b"}]})
irr_audit.plan_half_width(0.1, 0.7, 0.3, simulations=200)
CliRunner().invoke(app, ["score", *SHEETS, "--rule", RULE, "--bootstrap", "200"])
print(json.dumps(before == settings()))
"""


def test_a_run_leaves_the_process_settings_as_they_were() -> None:
    """numpy's, pandas', pyarrow's, pyyaml's and the interpreter's settings, the random numbers,
    threads and open files: in a fresh interpreter, the same after the calls of a notebook."""
    done = subprocess.run(
        [sys.executable, "-c", SETTINGS_BEFORE_AND_AFTER, json.dumps(SHEETS), str(RULE_FILE)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout.strip().splitlines()[-1]) is True


# --- a rule's mappings ----------------------------------------------------------------------


def test_a_rules_aliases_and_examples_cannot_be_changed_after_it_is_loaded() -> None:
    """A rule's lookup of codes is built on its first use: an alias added to ``rule.aliases``
    before then would classify codes under an alias its digest does not cover, and after then
    would be ignored, so that the same call gave two answers."""
    rule = irr_audit.load_rule(RULE_FILE)
    with pytest.raises(TypeError):
        rule.aliases["maybe"] = "no"  # type: ignore[index]
    with pytest.raises(TypeError):
        rule.examples["positive"] = ()  # type: ignore[index]
    run = irr_audit.audit(SHEETS, rule, aliases={"1": "yes"}).rule
    with pytest.raises(TypeError):
        run.run_aliases["0"] = "no"  # type: ignore[index]
    assert copy.deepcopy(rule) == rule and dict(rule.aliases) == {"y": "yes", "n": "no"}
    assert copy.deepcopy(run).run_aliases == {"1": "yes"}


CLI_USAGE_ERRORS = """
import json, random
random.seed(7)
from typer.testing import CliRunner
from irr_audit.cli import app
runs = [CliRunner().invoke(app, args) for args in (["score", "--nope"], ["nope"], ["plan", "alpha", "--min", "x"])]
print(json.dumps([[run.exit_code for run in runs], random.getstate() == random.Random(7).getstate(), runs[0].stderr]))
"""


def test_a_usage_error_of_the_cli_run_in_process_draws_no_random_number() -> None:
    """typer shows a usage error in a panel of rich's, and importing rich draws from ``random``."""
    done = subprocess.run(
        [sys.executable, "-c", CLI_USAGE_ERRORS], cwd=ROOT, capture_output=True, text=True, check=True
    )
    exit_codes, random_kept, shown = json.loads(done.stdout)
    assert exit_codes == [2, 2, 2] and "No such option: --nope" in shown
    assert random_kept
