"""The README's commands work as written."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def setup_commands() -> list[str]:
    section = README.split("## Set up", 1)[1].split("\n## ", 1)[0]
    return [line.strip() for line in section.splitlines() if line.startswith("    ")]


def test_first_screen_has_exactly_two_setup_commands() -> None:
    commands = setup_commands()
    assert len(commands) == 2
    assert commands[0].startswith("pip install . && irr-audit ")
    assert commands[1] == 'pip install -e ".[test]" && python -m pytest'
    ci = (ROOT / ".ci" / "run").read_text()
    assert commands[1] in ci


def test_main_command_gives_the_documented_numbers() -> None:
    main = setup_commands()[0].split("&& ", 1)[1]
    argv = shlex.split(main)
    executable = shutil.which("irr-audit")
    command = [executable, *argv[1:]] if executable else [sys.executable, "-m", "irr_audit", *argv[1:]]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
    out = result.stdout
    assert re.search(r"\| fully coded \(in the agreement table\) \| 20 \|", out)
    assert "| observed agreement (po) | 0.8500 |" in out
    assert "| chance agreement (pe) | 0.5000 |" in out
    assert "| Cohen's kappa | 0.7000 |" in out
    assert "| unknown | 1 |" in out and "| blank | 1 |" in out
    assert "22 units from 2 coders: 20 fully coded, 2 in the missingness log (1 unknown, 1 blank)." in result.stderr


def test_readme_sql_makes_counts_that_score_like_the_sheets(tmp_path) -> None:
    import csv
    import json

    import duckdb
    from typer.testing import CliRunner

    from irr_audit.cli import app

    sql = README.split("```sql\n", 1)[1].split("```", 1)[0]
    rows = []
    sheets = {coder: ROOT / "examples" / "sheets" / f"{coder}.csv" for coder in ("alice", "bob")}
    for coder, path in sheets.items():
        with open(path, newline="") as stream:
            rows += [(row["comment_id"], coder, row["code"]) for row in csv.DictReader(stream)]
    rows += [(comment_id, "carol", code) for comment_id, coder, code in rows if coder == "alice"]
    connection = duckdb.connect()
    connection.execute("CREATE TABLE codes(comment_id VARCHAR, coder VARCHAR, code VARCHAR)")
    connection.executemany("INSERT INTO codes VALUES (?, ?, ?)", rows)
    connection.execute(sql.replace("'counts.csv'", f"'{tmp_path / 'counts.csv'}'"))
    (tmp_path / "carol.csv").write_text(sheets["alice"].read_text())  # carol coded exactly as alice
    rule = str(ROOT / "rules" / "explicit_current_failure" / "v1.yaml")
    runner = CliRunner()
    from_sql = runner.invoke(
        app,
        ["score", "--counts", str(tmp_path / "counts.csv"), "--rule", rule, "--format", "json", "-q"],
        catch_exceptions=False,
    )
    from_sheets = runner.invoke(
        app,
        [
            "score",
            str(sheets["alice"]),
            str(sheets["bob"]),
            str(tmp_path / "carol.csv"),
            "--rule",
            rule,
            "--format",
            "json",
            "-q",
        ],
        catch_exceptions=False,
    )
    counted, joined = json.loads(from_sql.stdout), json.loads(from_sheets.stdout)
    assert counted["metrics"] == joined["metrics"] and counted["pairs"] == joined["pairs"]
    assert counted["units"]["fully_coded"] == joined["units"]["fully_coded"] == 20


def python_examples(text: str) -> str:
    """The ```python blocks of a Markdown text, in order: one doctest."""
    return "\n".join(re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL))


@pytest.mark.parametrize("document", ["README.md", "docs/api.md"])
def test_python_examples_run_as_written(document: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import doctest

    monkeypatch.chdir(ROOT)  # the examples name the repository's files from its root
    examples = python_examples((ROOT / document).read_text(encoding="utf-8"))
    test = doctest.DocTestParser().get_doctest(examples, {}, document, str(ROOT / document), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    output: list[str] = []
    runner.run(test, out=output.append)
    assert runner.failures == 0, "".join(output)
    assert runner.tries >= 3


def documented_signatures() -> dict[str, list[tuple[str, bool, str | None]]]:
    """The `## Functions` block of docs/api.md: per function, each parameter as (name,
    keyword-only, default as written or None when it has none)."""
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8").split("## Functions", 1)[1].split("\n###", 1)[0]
    found = {}
    for name, listed in re.findall(r"irr_audit\.(\w+)\((.*?)\) ->", text, flags=re.DOTALL):
        parameters, keyword_only = [], False
        for part in (piece.strip() for piece in listed.split(",")):
            if part == "*":
                keyword_only = True
                continue
            parameter, _, default = part.partition("=")
            parameters.append((parameter.strip(), keyword_only, default.strip() or None))
        found[name] = parameters
    return found


def test_the_functions_block_of_api_md_is_every_signature_as_it_is() -> None:
    import ast
    import inspect

    import irr_audit

    documented = documented_signatures()
    assert set(documented) == {
        name for name in irr_audit.__all__ if name[0].islower() and callable(getattr(irr_audit, name))
    }
    for name, parameters in documented.items():
        actual = inspect.signature(getattr(irr_audit, name)).parameters.values()
        assert [parameter for parameter, _, _ in parameters] == [parameter.name for parameter in actual], name
        for (parameter, keyword_only, default), real in zip(parameters, actual):
            assert keyword_only == (real.kind is inspect.Parameter.KEYWORD_ONLY), (name, parameter)
            expected = inspect.Parameter.empty if default is None else ast.literal_eval(default)
            assert expected == real.default, (name, parameter)
