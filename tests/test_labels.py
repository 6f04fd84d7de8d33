"""`irr-audit labels BUNDLE` and `irr_audit.labels`: the final labels, agreed or adjudicated,
and every unit without one listed as such."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import irr_audit
from irr_audit.bundle.labels import (
    ADJUDICATED,
    AGREED,
    UNDECIDED,
    label_columns,
    label_rows,
    labels_csv,
    labels_csv_chunks,
    labels_frame,
)
from irr_audit.bundle.workflow import Adjudication
from irr_audit.io.sheets import read_sheets
from irr_audit.join.join import STATUSES, VALID, JoinResult, join_sheets
from irr_audit.report.model import disagreement_units
from irr_audit.rules.load import load_rule
from tests.conftest import run

ROOT = Path(__file__).resolve().parents[1]
RULE = ROOT / "rules" / "explicit_current_failure" / "v1.yaml"
COLUMNS = [
    "comment_id",
    "coder:alice",
    "coder:bob",
    "agreed_code",
    "adjudicated_code",
    "final_code",
    "final",
    "why",
]


def freeze(sheets: list[Path], audits: Path) -> Path:
    result = run("freeze", *sheets, "--rule", RULE, "--into", audits)
    assert result.exit_code == 0, result.stderr
    return Path(result.stdout.rstrip("\n").split("  ", 1)[1])


@pytest.fixture
def bundle(sheets: list[Path], tmp_path: Path) -> Path:
    return freeze(sheets, tmp_path / "audits")


def decide(bundle: Path, tmp_path: Path, text: str) -> None:
    path = tmp_path / "decisions.csv"
    path.write_text(text, encoding="utf-8")
    result = run("adjudicate", bundle, "--decisions", path, "--by", "alice and bob")
    assert result.exit_code == 0, result.stderr


def rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_before_adjudication_agreements_are_final_and_the_rest_undecided(bundle: Path):
    frame = irr_audit.labels(bundle)
    assert list(frame.columns) == COLUMNS and len(frame) == 22
    by_id = frame.set_index("comment_id")
    assert by_id.loc["kq3m1x0"].tolist() == ["yes", "yes", "yes", "", "yes", "agreed", "every coder gave this code"]
    disagreement = by_id.loc["kq3z1q7"]
    assert disagreement.tolist()[:6] == ["yes", "no", "", "", "", "undecided"]
    assert "disagreed and it is not adjudicated yet" in disagreement["why"]
    assert by_id.loc["kq45w1x", "why"] == "missing codes: alice unknown"
    assert by_id.loc["kq46x5y", "why"] == "missing codes: bob blank"
    assert frame["final"].value_counts().to_dict() == {"agreed": 17, "undecided": 5}
    assert (frame["final_code"] == "").sum() == 5  # no unit without a final label gets one


def test_an_adjudicated_disagreement_is_final_with_who_decided(bundle: Path, tmp_path: Path):
    decide(bundle, tmp_path, "comment_id,code,note\nkq3z1q7,no,fixed crash\n")
    row = irr_audit.labels(bundle).set_index("comment_id").loc["kq3z1q7"]
    assert row.tolist()[:6] == ["yes", "no", "", "no", "no", "adjudicated"]
    assert row["why"].startswith("the coders disagreed; decided by alice and bob on ")


def test_a_later_decision_supersedes_an_earlier_one(bundle: Path, tmp_path: Path):
    decide(bundle, tmp_path, "comment_id,code\nkq3z1q7,no\n")
    decide(bundle, tmp_path, "comment_id,code\nkq3z1q7,yes\n")
    assert irr_audit.labels(bundle).set_index("comment_id").loc["kq3z1q7", "final_code"] == "yes"


def test_the_cli_writes_csv_to_stdout_or_a_file_and_counts_on_stderr(bundle: Path, tmp_path: Path):
    decide(bundle, tmp_path, "comment_id,code\nkq3z1q7,no\n")
    printed = run("labels", bundle)
    assert printed.exit_code == 0, printed.stderr
    assert printed.stdout.splitlines()[0] == ",".join(COLUMNS)
    assert rows(printed.stdout) == irr_audit.labels(bundle).to_dict("records")
    assert printed.stderr.strip() == (
        "22 units: 17 agreed, 1 adjudicated, 4 undecided (2 disagreements not adjudicated, 2 with missing codes)."
    )
    target = tmp_path / "labels.csv"
    written = run("labels", bundle, "--output", target, "--quiet")
    assert written.exit_code == 0 and written.stdout == "" and written.stderr == ""
    assert target.read_text(encoding="utf-8") == printed.stdout


def test_unsafe_outputs_are_refused(bundle: Path, sheets: list[Path]):
    inside = run("labels", bundle, "--output", bundle / "labels.csv")
    assert inside.exit_code == 2 and "Error [output-in-bundle]" in inside.stderr
    manifest = bundle / "manifest.json"
    before = manifest.read_bytes()
    assert run("labels", bundle, "--output", manifest).exit_code == 2
    assert manifest.read_bytes() == before


def test_not_a_bundle_is_one_clean_error(tmp_path: Path):
    result = run("labels", tmp_path)
    assert result.exit_code == 2 and result.stderr.startswith("Error [")
    assert "Traceback" not in result.stderr


def test_cells_are_neutralised_for_spreadsheets(tmp_path: Path):
    folder = tmp_path / "sheets"
    folder.mkdir()
    for coder, code in (("alice", "yes"), ("bob", "no")):
        (folder / f"{coder}.csv").write_text(f"comment_id,code\n=HYPERLINK(1),{code}\n+cmd,yes\n", encoding="utf-8")
    bundle = freeze([folder / "alice.csv", folder / "bob.csv"], tmp_path / "audits")
    text = run("labels", bundle).stdout
    assert "\n'=HYPERLINK(1)," in text and "\n'+cmd," in text
    assert set(irr_audit.labels(bundle)["comment_id"]) == {"=HYPERLINK(1)", "+cmd"}  # the library keeps the ids


def test_three_coders_agree_only_when_all_do(tmp_path: Path):
    folder = tmp_path / "three"
    folder.mkdir()
    codes = {"ann": ["yes", "no", "yes"], "ben": ["yes", "no", "no"], "cat": ["yes", "", "no"]}
    for coder, column in codes.items():
        lines = [f"u{n},{code}" for n, code in enumerate(column)]
        (folder / f"{coder}.csv").write_text("comment_id,code\n" + "\n".join(lines) + "\n", encoding="utf-8")
    bundle = freeze(sorted(folder.iterdir()), tmp_path / "audits")
    frame = irr_audit.labels(bundle).set_index("comment_id")
    assert frame.loc["u0", ["agreed_code", "final"]].tolist() == ["yes", "agreed"]
    assert frame.loc["u1", ["final_code", "final", "why"]].tolist() == ["", "undecided", "missing codes: cat blank"]
    assert frame.loc["u2", "final"] == "undecided" and "disagreed" in frame.loc["u2", "why"]


# --- the labels made a column at a time, against their per-unit definition --------------------


def labels_by_unit(join: JoinResult, current: dict[str, dict[str, str]]) -> list[list[object]]:
    """The labels' definition, one unit at a time (what label_columns makes a column at a time)."""
    coders = list(join.coders)
    disagreeing = set(disagreement_units(join).tolist())
    rows = []
    for index, comment_id in enumerate(join.unit_ids.tolist()):
        own = [
            join.rule.categories[join.codes[index, at]] if join.status[index, at] == VALID else ""
            for at in range(len(coders))
        ]
        agreed_code = own[0] if join.fully_coded[index] and index not in disagreeing else ""
        decision = current.get(comment_id) if index in disagreeing else None
        if agreed_code:
            final, why = AGREED, "every coder gave this code"
        elif decision:
            final, why = (
                ADJUDICATED,
                f"the coders disagreed; decided by {decision['decided_by']} on {decision['decided_at']}",
            )
        elif index in disagreeing:
            final, why = UNDECIDED, "the coders disagreed and it is not adjudicated yet (irr-audit adjudicate)"
        else:
            missing = [
                f"{coder} {STATUSES[status].value}"
                for coder, status in zip(coders, join.status[index].tolist())
                if status != VALID
            ]
            final, why = UNDECIDED, "missing codes: " + ", ".join(missing)
        adjudicated = decision["final_code"] if decision else ""
        rows.append([comment_id, *own, agreed_code, adjudicated, agreed_code or adjudicated, final, why])
    return rows


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_labels_made_a_column_at_a_time_are_those_of_each_unit(tmp_path: Path, seed: int) -> None:
    rng = np.random.default_rng(seed)
    units = [f"c{n}" for n in range(400)]
    for coder in ("ann", "ben", "cat"):
        kept = [unit for unit in units if rng.random() > 0.05]  # some units absent from a sheet
        codes = rng.choice(
            ["yes", "no", "", "maybe", "YES", "n/a"], size=len(kept), p=[0.4, 0.4, 0.05, 0.05, 0.05, 0.05]
        )
        lines = [f"{unit},{code}" for unit, code in zip(kept, codes)]
        lines += [f"{kept[0]},no", f"{kept[1]},{codes[1]}"]  # a conflicting and a repeated row
        (tmp_path / f"{coder}.csv").write_text("comment_id,code\n" + "\n".join(lines) + "\n", encoding="utf-8")
    join = join_sheets(read_sheets(sorted(tmp_path.glob("*.csv"))), load_rule(RULE))
    disagreeing = join.unit_ids[disagreement_units(join)].tolist()
    current = {
        unit: {"final_code": "yes", "decided_by": "dee", "decided_at": "2026-12-02T10:00:00Z"}
        for unit in [*disagreeing[::3], units[5]]  # a decision on a unit that is no disagreement is not one
    }
    assert len(disagreeing) > 20 and len(set(join.status.ravel().tolist())) >= 4
    assert label_rows(join, current) == labels_by_unit(join, current)
    assert all(column.dtype == object for column in label_columns(join, current).values())
    frame = pd.DataFrame(label_columns(join, current), dtype=object)
    assert b"".join(labels_csv_chunks(frame, rows=37)).decode() == labels_csv(frame)


def test_the_labels_frame_is_its_own(tmp_path: Path) -> None:
    """The frame shares no array with the join: a notebook user editing it changes nothing else."""
    lines = ["comment_id,code", "c1,yes", "c2,no"]
    for coder in ("ann", "ben"):
        (tmp_path / f"{coder}.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    join = join_sheets(read_sheets(sorted(tmp_path.glob("*.csv"))), load_rule(RULE))
    state = Adjudication(tmp_path, {}, "", join, {}, {})
    frame = labels_frame(state)
    frame.loc[0, "comment_id"] = "edited"
    frame.loc[1, "final"] = "edited"
    assert join.unit_ids.tolist() == ["c1", "c2"]
    assert labels_frame(state)["final"].tolist() == [AGREED, AGREED]
    assert len(frame._mgr.blocks) == len(frame.columns)  # no column copied into one stacked block
