"""Unit-pattern counts files (`score --counts`) and the options of score and report that
size what is computed: --bootstrap, --seed, --group."""

from __future__ import annotations

import json
import math

from kit import SHEETS, Case, Outcome, csv_rows, folder_of, joined

COUNTS = "score --counts counts.csv --rule rule.yaml --format json"
SCORE = f"score {SHEETS} --format json"
TWO_TO_53 = 2**53


def counts(*rows: str, header: str = "alice,bob,units") -> str:
    return "\n".join((header, *rows)) + "\n"


def total_units(expected: int):
    """A check: when the counts are scored, every unit counted is there, exactly."""

    def check(outcome: Outcome) -> None:
        if outcome.exit == 0:
            assert json.loads(outcome.stdout)["units"]["total"] == expected

    return check


def same_proportions_as(*rows: str):
    """A check: po, pe, kappa and pi depend only on the proportions of the patterns, so counts
    scaled up must score exactly as these counts do (no integer overflow on the way)."""

    def check(outcome: Outcome) -> None:
        if outcome.exit != 0:
            return
        from typer.testing import CliRunner

        from irr_audit.cli import app

        small = outcome.folder / "small.csv"
        small.write_text(counts(*rows), encoding="utf-8")
        result = CliRunner().invoke(
            app,
            [
                "score",
                "--counts",
                str(small),
                "--rule",
                str(outcome.folder / "rule.yaml"),
                "--format",
                "json",
                "--quiet",
            ],
            catch_exceptions=False,
        )
        expected, got = json.loads(result.stdout)["metrics"], json.loads(outcome.stdout)["metrics"]
        for name in ("po", "pe", "cohen_kappa", "scott_pi"):
            assert math.isclose(got[name]["value"], expected[name]["value"], rel_tol=1e-9), (
                name,
                got[name]["value"],
                expected[name]["value"],
            )

    return check


def codes_rule(count: int) -> str:
    return "rule: many\nversion: 1\nscale: nominal\ncodes: [" + ", ".join(f"c{i}" for i in range(count)) + "]\n"


CASES = [
    # --- the units column ------------------------------------------------------------------------
    Case(
        "counts: plain counts", COUNTS, {"counts.csv": counts("yes,yes,3", "no,no,2", "yes,no,1")}, check=total_units(6)
    ),
    Case(
        "counts: units inf",
        COUNTS,
        {"counts.csv": counts("yes,yes,inf", "no,no,2")},
        exit=2,
        says=("counts.csv", "row 2", "units"),
    ),
    Case(
        "counts: units -inf",
        COUNTS,
        {"counts.csv": counts("yes,yes,-inf", "no,no,2")},
        exit=2,
        says=("counts.csv", "row 2", "units"),
    ),
    Case(
        "counts: units 1e30",
        COUNTS,
        {"counts.csv": counts("yes,yes,1e30", "no,no,2")},
        exit=2,
        says=("counts.csv", "row 2", "units"),
    ),
    Case(
        "counts: units of 2^53 + 1",
        COUNTS,
        {"counts.csv": counts(f"yes,yes,{TWO_TO_53 + 1}", "no,no,2")},
        exit=2,
        says=("counts.csv", "row 2", "units"),
    ),
    Case(
        "counts: units of 2^53 - 1",
        COUNTS,
        {"counts.csv": counts(f"yes,yes,{TWO_TO_53 - 1}", "no,no,2")},
        exit=2,
        code="counts-too-many-units",
    ),
    Case(
        "counts: twenty billion units are refused by the units limit",
        COUNTS,
        {
            "counts.csv": counts(
                *(
                    f"{pattern},{4_000_000_000 * n}"
                    for pattern, n in (("yes,yes", 1), ("no,no", 1), ("yes,no", 1), ("no,yes", 2))
                )
            )
        },
        exit=2,
        code="counts-too-many-units",
        says=("counts.csv",),
    ),
    Case(
        "counts: three million units score as their proportions",
        COUNTS,
        {"counts.csv": counts("yes,yes,3000000", "no,no,3000000", "yes,no,3000000", "no,yes,6000000")},
        check=same_proportions_as("yes,yes,1", "no,no,1", "yes,no,1", "no,yes,2"),
    ),
    Case(
        "counts: units of 2^63 in one row",
        COUNTS,
        {"counts.csv": counts(f"yes,yes,{2**63}", "no,no,2")},
        exit=2,
        says=("counts.csv", "row 2", "units"),
    ),
    Case(
        "counts: 2,000 rows whose sum passes 2^63",
        COUNTS,
        {"counts.csv": lambda: counts(*[f"yes,yes,{TWO_TO_53 - 1}"] * 1100, "no,no,2").encode()},
        exit=2,
        code="counts-too-many-units",
        says=("counts.csv",),
    ),
    Case(
        "counts: units -1",
        COUNTS,
        {"counts.csv": counts("yes,yes,-1")},
        exit=2,
        code="counts-units",
        says=("counts.csv", "row 2"),
    ),
    Case(
        "counts: units 1.5",
        COUNTS,
        {"counts.csv": counts("yes,yes,3", "no,no,1.5")},
        exit=2,
        code="counts-units",
        says=("counts.csv", "row 3"),
    ),
    Case(
        "counts: units nan",
        COUNTS,
        {"counts.csv": counts("yes,yes,nan")},
        exit=2,
        code="counts-units",
        says=("counts.csv", "row 2"),
    ),
    Case("counts: units in hexadecimal", COUNTS, {"counts.csv": counts("yes,yes,0x10")}, exit=2, code="counts-units"),
    Case("counts: units with spaces", COUNTS, {"counts.csv": counts("yes,yes, 12 ", "no,no,1")}, check=total_units(13)),
    Case(
        "counts: units 1e3",
        COUNTS,
        {"counts.csv": counts("yes,yes,1e3", "no,no,1")},
        exit=2,
        code="counts-units",
        check=total_units(1001),
    ),
    Case(
        "counts: units in Arabic-Indic digits",
        COUNTS,
        {"counts.csv": counts("yes,yes,\u0661\u0662", "no,no,1")},
        exit=2,
        code="counts-units",
        check=total_units(13),
    ),
    Case(
        "counts: units blank",
        COUNTS,
        {"counts.csv": counts("yes,yes,", "no,no,1")},
        exit=2,
        code="counts-units",
        says=("row 2",),
    ),
    Case(
        "counts: units zero everywhere",
        COUNTS,
        {"counts.csv": counts("yes,yes,0", "no,no,0")},
        exit=1,
        shows=("0 units from 2 coders",),
    ),
    # --- the shape -------------------------------------------------------------------------------
    Case(
        "counts: units not the last column",
        COUNTS,
        {"counts.csv": counts("3,yes,yes", header="units,alice,bob")},
        exit=2,
        code="counts-columns",
        says=("counts.csv",),
    ),
    Case(
        "counts: one coder",
        COUNTS,
        {"counts.csv": counts("yes,3", header="alice,units")},
        exit=2,
        code="counts-columns",
    ),
    Case(
        "counts: a coder twice",
        COUNTS,
        {"counts.csv": counts("yes,yes,3", header="alice,alice,units")},
        exit=2,
        code="counts-columns",
    ),
    Case(
        "counts: coders equal but for spaces",
        COUNTS,
        {"counts.csv": counts("yes,yes,3", header="alice, alice,units")},
        exit=2,
        code="counts-columns",
    ),
    Case(
        "counts: a header only",
        COUNTS,
        {"counts.csv": counts()},
        exit=1,
        shows=("counts.csv",),
        check=total_units(0),
    ),
    Case(
        "counts: two files with other coders",
        COUNTS + " --counts other.csv",
        {"counts.csv": counts("yes,yes,3"), "other.csv": counts("yes,yes,3", header="alice,carol,units")},
        exit=2,
        code="counts-coders",
        says=("other.csv",),
    ),
    Case(
        "counts: two shards add up",
        COUNTS + " --counts other.csv",
        {"counts.csv": counts("yes,yes,3"), "other.csv": counts("yes,yes,4", "no,no,1")},
        check=total_units(8),
    ),
    Case(
        "counts: the same file twice is refused",
        COUNTS + " --counts counts.csv",
        {"counts.csv": counts("yes,yes,3", "no,no,1")},
        exit=2,
        code="counts-repeated",
        says=("counted twice",),
    ),
    Case(
        "counts: a copy of a shard is refused",
        COUNTS + " --counts copy.csv",
        {"counts.csv": counts("yes,yes,3", "no,no,1"), "copy.csv": counts("yes,yes,3", "no,no,1")},
        exit=2,
        code="counts-repeated",
        says=("copy.csv",),
    ),
    Case(
        "counts: with sheets too",
        COUNTS.replace("score", f"score {SHEETS.split(' --')[0]}"),
        {"counts.csv": counts("yes,yes,3")},
        exit=2,
        code="usage-counts",
    ),
    Case(
        "counts: without a rule",
        "score --counts counts.csv",
        {"counts.csv": counts("yes,yes,3")},
        exit=2,
        code="usage-missing-rule",
    ),
    Case(
        "counts: a code the rule does not have",
        COUNTS,
        {"counts.csv": counts("maybe,yes,3", "no,no,1")},
        check=total_units(4),
    ),
    Case(
        "counts: a quote left open",
        COUNTS,
        {"counts.csv": counts('yes,"yes,3', "no,no,1000", "yes,no,7")},
        exit=2,
        says=("counts.csv", "line 2"),
    ),
    Case(
        "counts: joined.csv given as counts",
        "score --counts out/joined.csv --rule rule.yaml",
        setup=joined(),
        exit=2,
        code="counts-columns",
        says=("joined.csv",),
    ),
    Case(
        "counts: join's own counts.csv scored",
        "score --counts out/counts.csv --rule rule.yaml --format json",
        setup=joined(),
        check=total_units(4),
    ),
    Case("counts: a folder", "score --counts d --rule rule.yaml", setup=folder_of("d"), exit=2, says=("d",)),
    Case(
        "counts: coders named like formulas round trip",
        "score --counts out/counts.csv --rule rule.yaml --format json",
        {"=a.csv": "comment_id,code\na,yes\nb,no\n", "'=a.csv": "comment_id,code\na,yes\nb,yes\n"},
        setup=joined(command="join =a.csv \\'=a.csv --rule rule.yaml"),
        exit=0,
        check=total_units(2),
    ),
    Case(
        "counts: a hundred thousand patterns",
        "score --counts big.csv --rule many.yaml --format json",
        {
            "many.yaml": codes_rule(320),
            "big.csv": lambda: (
                "a,b,units\n" + "".join(f"c{i % 320},c{i // 320},1\n" for i in range(100_000))
            ).encode(),
        },
        check=total_units(100_000),
        process=True,
    ),
    # --- what a score computes -----------------------------------------------------------------------------
    Case(
        "score: 1,000 codes on a million units",
        "score a.csv b.csv --rule many.yaml --format json --quiet",
        {
            "many.yaml": codes_rule(1000),
            "a.csv": csv_rows(1_000_000, lambda i: f"c{i % 1000}"),
            "b.csv": csv_rows(1_000_000, lambda i: f"c{(i * 7) % 1000}"),
        },
        exit=0,
        shows=('"fully_coded": 1000000',),
        process=True,
        memory_mb=2048,
    ),  # it asked for 7.45 GiB; threads' arenas vary the address space
    Case(
        "score: --bootstrap 1000000",
        SCORE + " --bootstrap 1000000 --seed 1",
        exit=2,
        code="usage-bootstrap",
        says=("--bootstrap",),
        process=True,
    ),
    Case(
        "score: --bootstrap 10^12",
        SCORE + " --bootstrap 1000000000000 --seed 1",
        exit=2,
        says=("--bootstrap",),
        process=True,
        memory_mb=768,
    ),
    Case(
        "score: --bootstrap 10^30",
        SCORE + " --bootstrap 1" + "0" * 30 + " --seed 1",
        exit=2,
        says=("--bootstrap",),
        process=True,
        memory_mb=768,
    ),
    Case("score: --bootstrap -1", SCORE + " --bootstrap -1", exit=2, says=("--bootstrap",)),
    Case("score: --bootstrap 200", SCORE + " --bootstrap 200 --seed 7"),
    Case("score: a negative --seed", SCORE + " --bootstrap 100 --seed -1", exit=2, code="usage-seed", says=("--seed",)),
    Case("score: a --seed of 2^70", SCORE + f" --bootstrap 100 --seed {2**70}", exit=0, shows=(f'"seed": {2**70}',)),
    Case("score: a --seed without --bootstrap", SCORE + " --seed 3"),
    Case(
        "report: --bootstrap 10^12",
        f"report {SHEETS} --format json --bootstrap 1000000000000 --seed 1",
        exit=2,
        says=("--bootstrap",),
        process=True,
        memory_mb=768,
    ),
    Case("score: --group of one coder", SCORE + " --group h=alice --against bob", exit=2, code="usage-group"),
    Case(
        "score: --group against an unknown coder",
        SCORE + " --group h=alice,bob --against carol",
        exit=2,
        says=("carol",),
    ),
    Case(
        "score: --group with an unknown member",
        SCORE + " --group h=alice,nobody --against bob",
        exit=2,
        says=("nobody",),
    ),
    Case(
        "score: --group against one of its members",
        "score alice.csv bob.csv carol.csv --rule rule.yaml --format json --group h=alice,bob --against alice",
        {"carol.csv": "comment_id,code\na,yes\nb,no\n"},
        exit=2,
        says=("alice",),
    ),
    Case(
        "score: --group of three against one",
        "score alice.csv bob.csv carol.csv dan.csv --rule rule.yaml --format json"
        " --group h=alice,bob,carol --against dan",
        {"carol.csv": "comment_id,code\na,yes\nb,no\nc,yes\n", "dan.csv": "comment_id,code\na,no\nb,no\nc,yes\n"},
    ),
    Case("score: --against without --group", SCORE + " --against bob", exit=2, code="usage-group"),
    Case("score: --format yaml", f"score {SHEETS} --format yaml", exit=2, says=("--format",)),
    Case("score: nothing to score", "score", exit=2, code="usage-no-input"),
    Case("score: a folder that is not a join", "score d", setup=folder_of("d"), exit=2, code="usage-not-a-join-dir"),
    Case(
        "score: a join folder with another --rule",
        "score out --rule other.yaml",
        {"other.yaml": "rule: other\nversion: 1\nscale: nominal\ncodes: [a, b]\n"},
        setup=joined(),
        exit=2,
        code="usage-rule-mismatch",
    ),
    Case("score: a join folder with its own --rule", "score out --rule rule.yaml --format json", setup=joined()),
]
