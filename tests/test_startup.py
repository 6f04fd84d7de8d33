"""Start-up: `import irr_audit`, `irr-audit --help` and `irr-audit rules check` load no
pandas or pyarrow (the commands import the library when they run; irr_audit/cli/__init__.py
has the figures), and --help still shows every command and option."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

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
    assert done.stdout.strip() == "[] ['numpy', 'pyarrow']"  # pandas comes with the first DataFrame


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


# --- what each command imports: only what it needs (README, "Speed at scale") ---------------

EXAMPLE = ["examples/sheets/alice.csv", "examples/sheets/bob.csv", "--rule", "rules/explicit_current_failure/v1.yaml"]
RENDERERS = ("jinja2", "irr_audit.report.html", "irr_audit.report.markdown")
# loaded only where needed: rich's console on a terminal, the sample-size planning by `plan`
LATER = ("rich.console", "rich.table", "irr_audit.report.console", "irr_audit.metrics.samplesize", "numpy.ma")
ELSEWHERE = ("irr_audit.bundle.adjudication", "irr_audit.importers.run", "irr_audit.sample.folder", "openpyxl")


def loaded_after(argv: list[str], names: tuple[str, ...]) -> tuple[list[str], str]:
    """Which of ``names`` a fresh interpreter has imported after running irr-audit with
    ``argv`` (stdout a pipe), and what it printed on stdout."""
    code = (
        "import contextlib, io, json, sys\n"
        f"sys.argv = ['irr-audit', *{argv!r}]\n"
        "from irr_audit.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    try:\n        main()\n    except SystemExit:\n        pass\n"
        f"print(json.dumps([sorted(name for name in {names!r} if name in sys.modules), out.getvalue()]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    loaded, printed = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded, printed


def test_score_on_sheets_loads_no_pandas_and_no_renderer() -> None:
    loaded, printed = loaded_after(["score", *EXAMPLE, "-q"], ("pandas", *RENDERERS, *ELSEWHERE))
    assert loaded == []
    assert "Cohen's kappa" in printed and "0.70" in printed


def test_score_as_json_loads_no_rich_either() -> None:
    loaded, printed = loaded_after(
        ["score", *EXAMPLE, "--format", "json", "-q"], ("pandas", "rich", *RENDERERS, *LATER)
    )
    assert loaded == []
    assert json.loads(printed)["metrics"]["cohen_kappa"]["value"] == 0.7


def test_the_html_report_loads_its_renderer_and_the_markdown_report_no_jinja2() -> None:
    loaded, printed = loaded_after(["report", *EXAMPLE, "--format", "html", "-q"], ("jinja2", "irr_audit.report.html"))
    assert loaded == ["irr_audit.report.html", "jinja2"] and printed.startswith("<!DOCTYPE html>")
    loaded, printed = loaded_after(["report", *EXAMPLE, "--format", "md", "-q"], ("jinja2", "irr_audit.report.html"))
    assert loaded == [] and "Cohen's kappa" in printed


def test_the_api_loads_pandas_with_the_first_dataframe() -> None:
    code = (
        "import sys, irr_audit\n"
        f"result = irr_audit.audit({EXAMPLE[:2]!r}, {EXAMPLE[3]!r})\n"
        "before = 'pandas' in sys.modules\n"
        "table = result.table\n"
        "print(before, 'pandas' in sys.modules, int(table.values.sum()))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True", "20"]


def test_score_with_near_miss_ids_loads_no_pandas(tmp_path: Path) -> None:
    ids = [f"t1_{number:04d}" for number in range(40)]
    (tmp_path / "ann.csv").write_text("comment_id,code\n" + "".join(f"{i},yes\n" for i in [*ids, "t1_9999"]))
    (tmp_path / "ben.csv").write_text("comment_id,code\n" + "".join(f"{i},no\n" for i in [*ids, "t1_9990"]))
    argv = ["score", str(tmp_path / "ann.csv"), str(tmp_path / "ben.csv"), "--rule", EXAMPLE[3], "--format", "json"]
    loaded, printed = loaded_after([*argv, "-q"], ("pandas", *RENDERERS))
    assert loaded == []
    document = json.loads(printed)
    assert document["units"]["total"] == 42
    assert any("'t1_9999' is in no other sheet but is one edit from 't1_9990'" in w for w in document["warnings"])


# --- text into a pipe: the plain renderer writes what rich writes, without rich's console ----


def test_score_text_into_a_pipe_loads_no_rich_console() -> None:
    loaded, printed = loaded_after(
        ["score", *EXAMPLE, "-q"], ("rich.console", "rich.table", "irr_audit.report.console")
    )
    assert loaded == []
    assert " Cohen's kappa (headline) " in printed and printed.endswith("\n") and not printed.endswith("\n\n")


def rich_text(grid: object) -> str:
    """What rich writes for a grid at unlimited width (irr_audit/report/console.py draws it)."""
    import io

    from rich.console import Console

    from irr_audit.report.console import UNWRAPPED, _table

    console = Console(width=UNWRAPPED, record=True, file=io.StringIO())
    console.print(_table(grid))  # type: ignore[arg-type]
    return console.export_text()


def test_the_plain_table_is_rich_table_byte_for_byte() -> None:
    import random

    from irr_audit.report.plaintext import Grid, grid_lines

    pieces = ["a", "kappa", "0.7000", "漢字", "😀", "e\u0301", " lead", "trail  ", "", "undefined", "[0.1, 0.9]", "ق"]
    chooser = random.Random(23)
    for _ in range(200):
        columns = chooser.randint(1, 4)
        rows = [
            tuple(("".join(chooser.choices(pieces, k=chooser.randint(0, 3))), "") for _ in range(columns))
            for _ in range(chooser.randint(1, 4))
        ]
        headers = tuple("".join(chooser.choices(pieces, k=chooser.randint(1, 2))) or "h" for _ in range(columns))
        right = tuple(position > 0 and chooser.random() < 0.5 for position in range(columns))
        grid = Grid(headers, right, tuple(rows))
        assert "".join(text + "\n" for text in grid_lines(grid)) == rich_text(grid), grid


def test_the_plain_report_is_the_rich_report_byte_for_byte(tmp_path: Path) -> None:
    from irr_audit.api import audit
    from irr_audit.report.console import render_text
    from irr_audit.report.plaintext import render_plain

    ids = ["t1_漢字", "t1_😀", "t1_e\u0301", "t1_" + "x" * 90, "t1_a b", "t1_ق"]
    first, second = tmp_path / "ann\u202etxt.csv", tmp_path / "ben 😀.csv"  # names are shown in provenance
    first.write_text("comment_id,code\n" + "".join(f"{i},yes\n" for i in ids) + "t1_z,no\n", encoding="utf-8")
    second.write_text("comment_id,code\n" + "".join(f"{i},no\n" for i in ids) + "t1_z,no\n", encoding="utf-8")
    for sheets in ([first, second], EXAMPLE[:2]):
        document = audit(sheets, EXAMPLE[3], list_disagreements=True)._document()
        assert render_plain(document) == render_text(document, None)
    shown = render_plain(audit([first, second], EXAMPLE[3])._document())
    assert " ann\\u202etxt vs ben 😀   McNemar " in shown  # a wide character in a table's column


def test_fleiss_null_se_needs_one_number_of_coders_of_at_least_two() -> None:
    from types import SimpleNamespace

    from irr_audit.metrics.multi_coder import fleiss_null_se

    for sizes in ([], [2, 3], [3, 3, 2], [1, 1]):
        assert fleiss_null_se(SimpleNamespace(m=np.array(sizes))) is None  # type: ignore[arg-type]


def _click_params(command: object) -> list[dict[str, object]]:
    """What a click command reads from its command line, option by option (names, type, default, help)."""
    fields = (
        "name",
        "opts",
        "secondary_opts",
        "default",
        "required",
        "multiple",
        "nargs",
        "help",
        "metavar",
        "is_flag",
    )
    return [
        {"type": type(param.type).__name__, **{field: getattr(param, field, None) for field in fields}}
        for param in command.params  # type: ignore[attr-defined]
    ]


def test_one_command_runs_in_an_app_holding_it_alone_with_the_same_options() -> None:
    from typer.main import get_command

    from irr_audit.cli import app, app_for

    whole = get_command(app)
    names = [name for name, command in whole.commands.items() if not hasattr(command, "commands")]  # type: ignore[attr-defined]
    assert {"sample", "join", "score", "report", "freeze", "verify", "adjudicate", "import", "counts"} <= set(names)
    for name in names:
        single = get_command(app_for([name, "x"]))
        assert list(single.commands) == [name]  # type: ignore[attr-defined]
        assert _click_params(single.commands[name]) == _click_params(whole.commands[name])  # type: ignore[attr-defined]
        assert _click_params(single) == _click_params(whole)  # --version
        assert single.name == whole.name and single.help == whole.help
    assert len(app.registered_commands) == len(names)  # the copies left the app whole


def test_help_groups_and_unknown_names_get_the_whole_app() -> None:
    from irr_audit.cli import app, app_for

    for args in ([], ["--help"], ["--version"], ["rules", "check"], ["plan", "kappa"], ["scor"], ["SCORE"], ["-q"]):
        assert app_for(args) is app


def test_score_through_the_entry_point_prints_what_the_whole_app_prints() -> None:
    from typer.testing import CliRunner

    from irr_audit.cli import app

    argv = ["score", *_EXAMPLE, "--format", "json"]
    code = f"import sys\nsys.argv = ['irr-audit', *{argv!r}]\nfrom irr_audit.cli import main\nmain()\n"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False)
    whole = CliRunner().invoke(app, argv)
    assert done.returncode == whole.exit_code == 0
    assert json.loads(done.stdout)["metrics"]["cohen_kappa"]["value"] == 0.7
    assert json.loads(done.stdout) == json.loads(whole.stdout)
    done = subprocess.run(
        [sys.executable, "-c", code.replace("'json'", "'jsn'")], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 2 and "Usage: irr-audit score" in done.stderr and "jsn" in done.stderr


_EXAMPLE = ["examples/sheets/alice.csv", "examples/sheets/bob.csv", "--rule", "rules/explicit_current_failure/v1.yaml"]


def test_the_public_annotations_resolve_without_loading_pandas_first() -> None:
    """typing.get_type_hints (IDEs, typer, sphinx) resolves every public name's annotations;
    the names only annotations use (pandas, the planning and import modules) are still
    imported when read, not with the API. The package is marked typed (PEP 561)."""
    code = (
        "import sys, typing, irr_audit\n"
        "irr_audit.audit\n"
        "loaded = 'pandas' in sys.modules\n"
        "names = [n for n in irr_audit.__all__ if not n.startswith('_')]\n"
        "for name in names:\n"
        "    if not (isinstance(getattr(irr_audit, name), type) and issubclass(getattr(irr_audit, name), Exception)):\n"
        "        typing.get_type_hints(getattr(irr_audit, name))\n"
        "frame = typing.get_type_hints(irr_audit.labels)['return']\n"
        "print(loaded, frame.__module__.split('.')[0], typing.get_type_hints(irr_audit.plan_alpha)['return'])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "pandas", "<class", "'irr_audit.metrics.samplesize.SampleSize'>"]
    assert (ROOT / "irr_audit" / "py.typed").is_file()
    assert '"irr_audit" = ["py.typed"]' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")
