"""Start-up: `import irr_audit`, `irr-audit --help` and `irr-audit rules check` load no
pandas or pyarrow (the commands import the library when they run; irr_audit/cli/__init__.py
has the figures), and --help still shows every command and option."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("numpy", "pandas", "pyarrow")


def modules_after(*argv: str) -> tuple[list[str], str]:
    """The heavy modules loaded by running irr-audit with ``argv`` in a fresh interpreter, and
    what it printed (stdout, then stderr)."""
    code = (
        "import json, sys\n"
        f"sys.argv = ['irr-audit', *{list(argv)!r}]\n"
        "from irr_audit.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"print(json.dumps(sorted(name for name in {HEAVY!r} if name in sys.modules)), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    *printed, loaded = done.stderr.strip().splitlines()
    return json.loads(loaded), done.stdout + "\n".join(printed)


def test_help_loads_no_numpy_pandas_or_pyarrow_and_shows_every_command() -> None:
    loaded, shown = modules_after("--help")
    assert loaded == []
    for command in ("join", "score", "report", "freeze", "verify", "adjudicate", "sample", "rules", "import"):
        assert f" {command} " in shown


def test_a_commands_help_shows_its_options_without_the_library() -> None:
    loaded, shown = modules_after("report", "--help")
    assert loaded == []
    for option in ("--format", "--rule", "--output", "--bootstrap", "--seed", "--group", "--against", "--counts"):
        assert option in shown
    loaded, shown = modules_after("sample", "--help")
    assert loaded == [] and "<csv|xlsx>" in shown
    loaded, shown = modules_after("import", "--help")
    assert loaded == [] and "--question" in shown and "--id-field" in shown


def test_rules_check_loads_no_pandas_or_pyarrow() -> None:
    loaded, shown = modules_after("rules", "check", "rules")
    assert "pandas" not in loaded and "pyarrow" not in loaded
    assert "rules check: rules is clean" in shown


def test_import_irr_audit_is_light_and_the_api_comes_on_first_use() -> None:
    code = (
        "import sys, irr_audit\n"
        f"before = sorted(name for name in {HEAVY!r} if name in sys.modules)\n"
        "assert 'audit' in dir(irr_audit) and callable(irr_audit.audit)\n"
        f"after = sorted(name for name in {HEAVY!r} if name in sys.modules)\n"
        "print(before, after)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[] ['numpy', 'pandas', 'pyarrow']"


def test_the_sheet_format_choices_are_the_libraries() -> None:
    from irr_audit.cli.sample import SheetFormatChoice
    from irr_audit.sample.sheets import SheetFormat

    assert [choice.value for choice in SheetFormatChoice] == [choice.value for choice in SheetFormat]


def test_an_unknown_name_is_an_attribute_error() -> None:
    import irr_audit

    try:
        irr_audit.no_such_name  # noqa: B018
    except AttributeError as error:
        assert "no_such_name" in str(error)
    else:
        raise AssertionError("irr_audit.no_such_name did not raise")
