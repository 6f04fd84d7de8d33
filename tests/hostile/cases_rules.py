"""Rule files as an attacker or a confused author writes them, read by score and by
`rules check | lock | diff`."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from kit import RULE, Case, big_int, chain, deep_json, fifo, folder_of, frozen, has_file, link, no_file, run_cli, write

SCORE = "score alice.csv bob.csv --rule rule.yaml --format json"
INTERVAL = """\
rule: demo
version: 1
scale: interval
codes:
  - {{code: "yes", value: {yes}}}
  - {{code: "no", value: {no}}}
"""


def rule(**replaced: str) -> str:
    """RULE with top-level keys replaced by YAML text: rule(version="0")."""
    lines = []
    for line in RULE.splitlines():
        key = line.split(":", 1)[0]
        if key in replaced:
            lines.append(f"{key}: {replaced.pop(key)}")
        else:
            lines.append(line)
    return "\n".join(lines + [f"{key}: {value}" for key, value in replaced.items()]) + "\n"


def nominal(codes: list[str], extra: str = "") -> str:
    return "rule: demo\nversion: 1\nscale: nominal\ncodes: [" + ", ".join(codes) + "]\n" + extra


RULES = {"rules/demo/v1.yaml": RULE}
CHECK = "rules check rules"


def git_repo(*, symlinked: bool = False):
    """A setup: rules/ committed in a git repository (the rule a symlink when asked)."""

    def setup(folder: Path) -> None:
        if symlinked:
            (folder / "shared").mkdir()
            (folder / "rules/demo/v1.yaml").rename(folder / "shared/demo_v1.yaml")
            os.symlink("../../shared/demo_v1.yaml", folder / "rules/demo/v1.yaml")
        environment = {
            **os.environ,
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_CONFIG_NOSYSTEM": "1",
        }
        for command in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "rules"]):
            subprocess.run(["git", *command], cwd=folder, check=True, env=environment, capture_output=True)

    return setup


CASES = [
    # --- numbers ---------------------------------------------------------------------------
    Case(
        "rule: an interval value of .inf",
        SCORE,
        {"rule.yaml": INTERVAL.format(yes=".inf", no="0")},
        exit=2,
        says=("rule.yaml", "value"),
    ),
    Case(
        "rule: an interval value of -.inf",
        SCORE,
        {"rule.yaml": INTERVAL.format(yes="1", no="-.inf")},
        exit=2,
        says=("rule.yaml", "value"),
    ),
    Case(
        "rule: an interval value of 1.0e+400",
        SCORE,
        {"rule.yaml": INTERVAL.format(yes="1.0e+400", no="0")},
        exit=2,
        says=("rule.yaml", "value"),
    ),
    Case(
        "rule: an interval value of 1e400 is text to YAML",
        SCORE,
        {"rule.yaml": INTERVAL.format(yes="1e400", no="0")},
        exit=2,
        code="rule-invalid",
        says=("rule.yaml", "value"),
    ),
    Case(
        "rule: an interval value of .nan",
        SCORE,
        {"rule.yaml": INTERVAL.format(yes=".nan", no="0")},
        exit=2,
        code="rule-invalid",
        says=("rule.yaml", "value"),
    ),
    Case(
        "rule: an interval value of 5,000 digits",
        SCORE,
        {"rule.yaml": INTERVAL.format(yes=big_int(5000), no="0")},
        exit=2,
        says=("rule.yaml",),
    ),
    Case(
        "rule: interval values far apart",
        SCORE,
        {"rule.yaml": INTERVAL.format(yes="1e308", no="-1e308")},
        exit=2,
        code="rule-invalid",
        says=("rule.yaml",),
    ),
    Case(
        "rule: interval values of subnormal size",
        SCORE,
        {"rule.yaml": INTERVAL.format(yes="5e-324", no="0")},
        exit=2,
        code="rule-invalid",
        says=("rule.yaml",),
    ),
    Case(
        "rule: interval values that are equal",
        SCORE,
        {"rule.yaml": INTERVAL.format(yes="1", no="1")},
        exit=0,
        shows=("4 fully coded",),
    ),
    Case(
        "rule: a version of 5,000 digits",
        SCORE,
        {"rule.yaml": rule(version=big_int(5000))},
        exit=2,
        says=("rule.yaml", "digits"),
    ),
    Case(
        "rule: a version of 30 digits",
        SCORE,
        {"rule.yaml": rule(version=big_int(30))},
        exit=2,
        code="rule-invalid",
        says=("rule.yaml", "version"),
    ),
    Case(
        "rule: version true",
        SCORE,
        {"rule.yaml": rule(version="true")},
        exit=2,
        code="rule-invalid",
        says=("rule.yaml", "version"),
    ),
    Case("rule: version 0", SCORE, {"rule.yaml": rule(version="0")}, exit=2, code="rule-invalid", says=("version",)),
    Case("rule: version -1", SCORE, {"rule.yaml": rule(version="-1")}, exit=2, code="rule-invalid", says=("version",)),
    Case(
        "rule: version 1.0", SCORE, {"rule.yaml": rule(version="1.0")}, exit=2, code="rule-invalid", says=("version",)
    ),
    Case(
        "rule: version as text",
        SCORE,
        {"rule.yaml": rule(version='"1"')},
        exit=2,
        code="rule-invalid",
        says=("version",),
    ),
    Case("rule: version in hexadecimal", SCORE, {"rule.yaml": rule(version="0x1")}, exit=0, shows=("version",)),
    # --- nesting -----------------------------------------------------------------------------
    Case(
        "rule: a list nested 10,000 deep",
        SCORE,
        {"rule.yaml": RULE + "x_deep: " + deep_json(10_000) + "\n"},
        exit=2,
        says=("rule.yaml",),
    ),
    Case(
        "rule: a mapping nested 10,000 deep",
        SCORE,
        {"rule.yaml": RULE + "x_deep: " + "{a: " * 10_000 + "1" + "}" * 10_000 + "\n"},
        exit=2,
        says=("rule.yaml",),
    ),
    Case(
        "rule: block lists nested 2,000 deep",
        SCORE,
        {"rule.yaml": RULE + "x_deep:\n" + "".join(" " * i + "-\n" for i in range(1, 2000)) + " " * 2000 + "- 1\n"},
        exit=2,
        says=("rule.yaml",),
    ),
    # --- codes and aliases ---------------------------------------------------------------------
    Case(
        "rule: aliases that collide after case folding",
        SCORE,
        {"rule.yaml": rule(aliases='{Y: "yes", y: "no"}')},
        exit=2,
        says=("rule.yaml", "aliases"),
    ),
    Case(
        "rule: an alias that folds onto a code",
        SCORE,
        {"rule.yaml": rule(aliases='{YES: "no"}')},
        exit=2,
        code="rule-invalid",
        says=("rule.yaml", "aliases"),
    ),
    Case(
        "rule: an alias that is a full-width code",
        SCORE,
        {"rule.yaml": rule(aliases='{"\uff59\uff45\uff53": "no"}')},
        exit=2,
        code="rule-invalid",
        says=("rule.yaml", "aliases"),
    ),
    Case(
        "rule: an alias pointing at itself",
        SCORE,
        {"rule.yaml": rule(aliases="{maybe: maybe}")},
        exit=2,
        code="rule-invalid",
        says=("aliases",),
    ),
    Case("rule: an alias onto a missing code", SCORE, {"rule.yaml": rule(aliases='{"?": unknown}')}),
    Case(
        "rule: an alias that is also a missing code",
        SCORE,
        {"rule.yaml": rule(aliases='{Unknown: "yes"}')},
        exit=2,
        code="rule-invalid",
        says=("aliases",),
    ),
    Case(
        "rule: codes equal after NFKC",
        SCORE,
        {"rule.yaml": nominal(['"yes"', '"\uff59\uff45\uff53"'])},
        exit=2,
        code="rule-invalid",
        says=("codes",),
    ),
    Case(
        "rule: a code of spaces",
        SCORE,
        {"rule.yaml": nominal(['"yes"', '"   "'])},
        exit=2,
        code="rule-invalid",
        says=("codes[1]",),
    ),
    Case(
        "rule: a code with a line break",
        SCORE,
        {"rule.yaml": nominal(['"yes"', '"n\\no"'])},
        exit=2,
        code="rule-invalid",
    ),
    Case(
        "rule: a code that is a number with a fraction",
        SCORE,
        {"rule.yaml": nominal(['"yes"', "1.5"])},
        exit=2,
        code="rule-invalid",
        says=("codes[1]",),
    ),
    Case(
        "rule: a code that is a boolean",
        SCORE,
        {"rule.yaml": nominal(['"yes"', "true"])},
        exit=2,
        code="rule-invalid",
        says=("codes[1]",),
    ),
    Case(
        "rule: codes as a mapping",
        SCORE,
        {"rule.yaml": "rule: demo\nversion: 1\nscale: nominal\ncodes: {a: 1, b: 2}\n"},
        exit=2,
        code="rule-invalid",
        says=("codes",),
    ),
    Case("rule: one code", SCORE, {"rule.yaml": nominal(['"yes"'])}, exit=2, code="rule-invalid", says=("codes",)),
    Case(
        "rule: a missing code that folds onto a code",
        SCORE,
        {"rule.yaml": rule(missing_codes='["YES"]')},
        exit=2,
        code="rule-invalid",
        says=("missing_codes",),
    ),
    Case(
        "rule: 200 codes on a small audit",
        SCORE,
        {"rule.yaml": nominal(['"yes"', '"no"', *(f"c{i}" for i in range(198))])},
    ),
    Case(
        "rule: 20,000 codes",
        SCORE,
        {"rule.yaml": nominal(['"yes"', '"no"', *(f"c{i}" for i in range(19_998))])},
        exit=2,
        code="limit-rule-codes",
        says=("rule.yaml",),
        process=True,
    ),
    Case(
        "rule: 5,000 aliases",
        SCORE,
        {"rule.yaml": rule(aliases="{" + ", ".join(f"a{i}: yes" for i in range(5000)).replace("yes", '"yes"') + "}")},
        exit=2,
        code="limit-rule-codes",
        says=("rule.yaml", "aliases"),
    ),
    # --- YAML features ----------------------------------------------------------------------------
    Case(
        "rule: a billion-laughs alias bomb",
        SCORE,
        {
            "rule.yaml": RULE
            + "x_a: &a [x, x, x, x, x, x, x, x, x]\nx_b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
            + "x_c: [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
        },
        exit=2,
        code="rule-yaml",
        says=("rule.yaml", "alias"),
    ),
    Case(
        "rule: a python object tag",
        SCORE,
        {"rule.yaml": RULE + "x_run: !!python/object/apply:os.system [touch pwned]\n"},
        exit=2,
        code="rule-yaml",
        says=("rule.yaml",),
        check=no_file("pwned"),
    ),
    Case(
        "rule: a binary tag as the question",
        SCORE,
        {"rule.yaml": rule(question="!!binary aGVsbG8=")},
        exit=2,
        code="rule-invalid",
        says=("question",),
    ),
    Case(
        "rule: a timestamp as the question",
        SCORE,
        {"rule.yaml": rule(question="2024-05-01")},
        exit=2,
        code="rule-invalid",
        says=("question",),
    ),
    Case(
        "rule: a merge key",
        SCORE,
        {"rule.yaml": RULE + "<<: {x_extra: 1}\n"},
        exit=2,
        code="rule-yaml",
        says=("rule.yaml",),
    ),
    Case(
        "rule: two YAML documents",
        SCORE,
        {"rule.yaml": RULE + "---\n" + RULE},
        exit=2,
        code="rule-yaml",
        says=("rule.yaml",),
    ),
    Case(
        "rule: tabs for indentation",
        SCORE,
        {"rule.yaml": "rule: demo\nversion: 1\nscale: nominal\ncodes:\n\t- a\n\t- b\n"},
        exit=2,
        code="rule-yaml",
        says=("rule.yaml", "line 5"),
    ),
    Case(
        "rule: a JSON document",
        SCORE,
        {"rule.yaml": '{"rule": "demo", "version": 1, "scale": "nominal", "codes": ["yes", "no"]}'},
    ),
    Case("rule: an empty file", SCORE, {"rule.yaml": ""}, exit=2, code="rule-invalid", says=("rule.yaml",)),
    Case(
        "rule: a list at the top",
        SCORE,
        {"rule.yaml": "- yes\n- no\n"},
        exit=2,
        code="rule-invalid",
        says=("rule.yaml",),
    ),
    Case(
        "rule: a key with a control character",
        SCORE,
        {"rule.yaml": RULE + '"x\\u001b[2J": 1\n'},
        exit=2,
        code="rule-invalid",
        never_shown=("\x1b[2J",),
    ),
    Case(
        "rule: a key that is not a rule key",
        SCORE,
        {"rule.yaml": RULE + "codez: [a]\n"},
        exit=2,
        code="rule-invalid",
        says=("codez",),
    ),
    Case(
        "rule: a mapping key that is a list", SCORE, {"rule.yaml": RULE + "x_a: {[a]: b}\n"}, exit=2, code="rule-yaml"
    ),
    Case(
        "rule: a duplicate key",
        SCORE,
        {"rule.yaml": RULE + "version: 2\n"},
        exit=2,
        code="rule-yaml",
        says=("duplicate key",),
    ),
    Case("rule: a BOM", SCORE, {"rule.yaml": "\ufeff" + RULE}),
    Case(
        "rule: UTF-16", SCORE, {"rule.yaml": RULE.encode("utf-16")}, exit=2, code="rule-encoding", says=("rule.yaml",)
    ),
    Case(
        "rule: Latin-1",
        SCORE,
        {"rule.yaml": (RULE + "x_note: caf\u00e9\n").encode("latin-1")},
        exit=2,
        code="rule-encoding",
        says=("rule.yaml",),
    ),
    Case("rule: a NUL byte", SCORE, {"rule.yaml": RULE + "x_note: a\x00b\n"}, exit=2, says=("rule.yaml",)),
    Case(
        "rule: an id with upper case",
        SCORE,
        {"rule.yaml": rule(rule="Demo")},
        exit=2,
        code="rule-invalid",
        says=("rule",),
    ),
    Case(
        "rule: an id with a path in it",
        SCORE,
        {"rule.yaml": rule(rule="../../etc")},
        exit=2,
        code="rule-invalid",
        says=("rule",),
    ),
    Case(
        "rule: an unknown scale",
        SCORE,
        {"rule.yaml": rule(scale="nominall")},
        exit=2,
        code="rule-invalid",
        says=("scale",),
    ),
    Case(
        "rule: a ratio scale with a negative value",
        SCORE,
        {"rule.yaml": INTERVAL.format(yes="1", no="-1").replace("interval", "ratio")},
        exit=2,
        code="rule-invalid",
        says=("value",),
    ),
    Case(
        "rule: an interval scale without values",
        SCORE,
        {"rule.yaml": rule(scale="interval")},
        exit=2,
        code="rule-invalid",
        says=("numeric value",),
    ),
    Case("rule: a question of one megabyte", SCORE, {"rule.yaml": rule(question='"' + "q" * 990_000 + '"')}),
    Case(
        "rule: two megabytes",
        SCORE,
        {"rule.yaml": rule(question='"' + "q" * 2_000_000 + '"')},
        exit=2,
        code="limit-rule-bytes",
        says=("rule.yaml",),
    ),
    Case(
        "rule: examples that are not text",
        SCORE,
        {"rule.yaml": rule(examples="{positive: [1, 2]}")},
        exit=2,
        code="rule-invalid",
        says=("examples",),
    ),
    Case(
        "rule: a changelog with an unknown field",
        SCORE,
        {"rule.yaml": rule(changelog="{summary: x, evil: y}")},
        exit=2,
        code="rule-invalid",
        says=("changelog",),
    ),
    # --- the rule file's path --------------------------------------------------------------------
    Case(
        "rule: a folder given as the rule",
        "score alice.csv bob.csv --rule rules",
        setup=folder_of("rules"),
        exit=2,
        code="rule-not-a-file",
        says=("rules", "a folder"),
    ),
    Case(
        "rule: a missing rule",
        "score alice.csv bob.csv --rule nope.yaml",
        exit=2,
        code="rule-not-found",
        says=("nope.yaml",),
    ),
    Case(
        "rule: a symlink to /dev/zero",
        "score alice.csv bob.csv --rule zero.yaml",
        setup=link("zero.yaml", "/dev/zero"),
        exit=2,
        says=("zero.yaml",),
        process=True,
    ),
    Case(
        "rule: a named pipe",
        "score alice.csv bob.csv --rule pipe.yaml",
        setup=fifo("pipe.yaml"),
        exit=2,
        says=("pipe.yaml",),
        process=True,
    ),
    Case("rule: a sheet given as the rule", "score alice.csv bob.csv --rule bob.csv", exit=2, says=("bob.csv",)),
    Case(
        "rule: a symlinked rule",
        "score alice.csv bob.csv --rule linked.yaml --format json",
        setup=link("linked.yaml", "rule.yaml"),
    ),
    # --- rules check, lock, diff --------------------------------------------------------------------
    Case("rules check: a missing folder", "rules check nowhere", exit=2, code="usage-rules-dir", says=("nowhere",)),
    Case(
        "rules check: a file instead of a folder",
        "rules check rule.yaml",
        exit=2,
        code="usage-rules-dir",
        says=("rule.yaml",),
    ),
    Case("rules check: an empty folder", "rules check rules", setup=folder_of("rules"), exit=2, code="usage-no-rules"),
    Case("rules check: a clean folder", CHECK, RULES),
    Case("rules check: broken YAML", CHECK, {"rules/demo/v1.yaml": "rule: [\n"}, exit=1, shows=("v1.yaml",)),
    Case(
        "rules check: a file that declares another version",
        CHECK,
        {"rules/demo/v1.yaml": rule(version="2")},
        exit=1,
        shows=("v1.yaml",),
    ),
    Case(
        "rules check: a rule nested 10,000 deep",
        CHECK,
        {"rules/demo/v1.yaml": RULE + "x_deep: " + deep_json(10_000) + "\n"},
        exit=2,
        code="limit-depth",
        shows=("v1.yaml",),
        says=("v1.yaml",),
    ),
    Case(
        "rules check: a rule file of two megabytes",
        CHECK,
        {"rules/demo/v1.yaml": rule(question='"' + "q" * 2_000_000 + '"')},
        exit=1,
        shows=("v1.yaml",),
    ),
    Case(
        "rules check: an unchanged symlinked rule against git",
        CHECK + " --base HEAD",
        RULES,
        setup=git_repo(symlinked=True),
    ),
    Case("rules check: an unchanged rule against git", CHECK + " --base HEAD", RULES, setup=git_repo()),
    Case(
        "rules check: an edited released rule against git",
        CHECK + " --base HEAD",
        RULES,
        setup=chain(git_repo(), write("rules/demo/v1.yaml", RULE + "x_note: edited\n")),
        exit=1,
        shows=("v1.yaml",),
    ),
    Case(
        "rules check: --base that is an option of git",
        CHECK + " --base=--upload-pack=touch\\ pwned",
        RULES,
        setup=git_repo(),
        exit=2,
        code="usage-base",
        check=no_file("pwned"),
    ),
    Case(
        "rules check: --base that does not exist",
        CHECK + " --base no-such-branch",
        RULES,
        setup=git_repo(),
        exit=2,
        says=("no-such-branch",),
    ),
    Case(
        "rules check: --min-kappa nan",
        CHECK + " --min-kappa nan --audits audits",
        RULES,
        setup=folder_of("audits"),
        exit=2,
        code="usage-gate",
    ),
    Case(
        "rules check: --min-kappa 2",
        CHECK + " --min-kappa 2 --audits audits",
        RULES,
        setup=folder_of("audits"),
        exit=2,
        code="usage-gate",
    ),
    Case("rules check: --audits that is a file", CHECK + " --audits rule.yaml", RULES, exit=2, code="usage-audits-dir"),
    Case(
        "rules check: a garbage lock file",
        CHECK,
        {**RULES, "rules/rules.lock": "not json"},
        exit=2,
        code="lock-invalid",
        says=("rules.lock",),
    ),
    Case(
        "rules check: a lock nested 100,000 deep",
        CHECK,
        {**RULES, "rules/rules.lock": deep_json(100_000)},
        exit=2,
        says=("rules.lock",),
    ),
    Case(
        "rules check: a lock with a 5,000-digit number",
        CHECK,
        {**RULES, "rules/rules.lock": '{"format": "irr-audit-rules-lock/1", "rules": [], "x": ' + big_int(5000) + "}"},
        exit=2,
        says=("rules.lock",),
    ),
    Case(
        "rules check: a lock file that is a folder",
        CHECK,
        RULES,
        setup=folder_of("rules/rules.lock"),
        exit=2,
        code="usage-lock",
    ),
    Case("rules lock: a lock written", "rules lock rules", RULES, check=has_file("rules/rules.lock")),
    Case(
        "rules lock: --lock naming the rule file itself",
        "rules lock rules --lock rules/demo/v1.yaml",
        RULES,
        exit=2,
        says=("v1.yaml",),
    ),
    Case("rules lock: --lock naming a sheet", "rules lock rules --lock alice.csv", RULES, exit=2, says=("alice.csv",)),
    Case(
        "rules lock: --lock naming a new file inside a bundle",
        "rules lock rules --lock {bundle}/rules.lock",
        RULES,
        setup=frozen,
        exit=2,
        says=("rules.lock",),
    ),
    Case("rules lock: --lock naming a folder", "rules lock rules --lock rules", RULES, exit=2),
    Case(
        "rules lock: a lock that is a symlink to the rule",
        "rules lock rules",
        RULES,
        setup=link("rules/rules.lock", "demo/v1.yaml"),
        exit=2,
        code="output-overwrites-input",
        changes=("rules/rules.lock",),
    ),
    Case(
        "rules lock: a folder with problems is not locked",
        "rules lock rules",
        {"rules/demo/v1.yaml": rule(version="2")},
        exit=1,
        shows=("not written",),
    ),
    Case(
        "rules lock: a lock already up to date",
        "rules lock rules",
        RULES,
        setup=lambda folder: run_cli(folder, "rules lock rules"),
        shows=("up to date",),
    ),
    Case(
        "rules lock: --lock in a folder that does not exist",
        "rules lock rules --lock new/rules.lock",
        RULES,
        check=has_file("new/rules.lock"),
    ),
    Case(
        "rules lock: an edited released rule is not locked",
        "rules lock rules",
        RULES,
        setup=chain(
            lambda folder: run_cli(folder, "rules lock rules"), write("rules/demo/v1.yaml", RULE + "x_note: edited\n")
        ),
        exit=1,
        changes=(),
    ),
    Case(
        "rules diff: broken YAML",
        "rules diff rule.yaml bad.yaml",
        {"bad.yaml": "rule: [\n"},
        exit=2,
        code="rule-yaml",
        says=("bad.yaml",),
    ),
    Case(
        "rules diff: an ordinal rule against a nominal one",
        "rules diff rule.yaml ordinal.yaml",
        {"ordinal.yaml": 'rule: demo\nversion: 2\nscale: ordinal\ncodes: ["no", "yes"]\nchangelog: ordered\n'},
    ),
    Case("rules diff: a folder", "rules diff rule.yaml rules", RULES, exit=2, code="rule-not-a-file"),
    Case("rules diff: a rule and itself", "rules diff rule.yaml rule.yaml"),
    Case("rules diff: two different rules", "rules diff rule.yaml other.yaml", {"other.yaml": nominal(["a", "b"])}),
    Case(
        "rules diff: a missing rule",
        "rules diff rule.yaml nope.yaml",
        exit=2,
        code="rule-not-found",
        says=("nope.yaml",),
    ),
    Case(
        "rules diff: a terminal escape in a definition",
        "rules diff rule.yaml other.yaml",
        {"other.yaml": RULE.replace('label: "No"', 'label: "No\\e]0;pwned\\a\\e[2J"')},
        never_shown=("\x1b[2J", "\x1b]0;"),
    ),
]
