"""Fuzzing the whole command line with damaged copies of valid files: sheets, rules,
collector files and a frozen bundle (its members and its manifest, also re-hashed as
a forger would). Every run must end with exit 0, 1 or 2 and no traceback, leave every
input byte-identical, and (for sheets) account for every row.

Bounded in CI (derandomized, a few dozen examples per test); the `fuzz` hypothesis
profile runs thousands (tests/fuzz/README.md).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent / "hostile"))

import checks  # noqa: E402
import kit  # noqa: E402

BOUNDED = settings(
    max_examples=settings().max_examples,  # 100 in CI (about 5 s a test); 20,000 in the fuzz profile
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
# Bytes that matter to the formats: quotes and separators, line ends, NUL, a BOM,
# invalid UTF-8, YAML and JSON syntax, formula prefixes, an escape sequence.
TOKENS = [
    b'"',
    b",",
    b"\t",
    b";",
    b"\n",
    b"\r",
    b"\r\n",
    b"\x00",
    b"\xef\xbb\xbf",
    b"\xff",
    b"\xc3",
    b" ",
    b":",
    b"- ",
    b"{",
    b"}",
    b"[",
    b"]",
    b"&a ",
    b"*a",
    b"!!",
    b"=",
    b"@",
    b"\x1b[2J",
    b"9" * 30,
    b"NaN",
    b".inf",
]


@st.composite
def damaged(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` with a few edits: a byte flipped, a token inserted, a span deleted or
    repeated, or the end cut off."""
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data)))
        kind = draw(st.sampled_from(["flip", "insert", "delete", "repeat", "cut"]))
        if kind == "flip" and at < len(data):
            data = data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1 :]
        elif kind == "insert":
            data = data[:at] + draw(st.sampled_from(TOKENS)) + data[at:]
        elif kind == "delete":
            data = data[:at] + data[at + draw(st.integers(1, 8)) :]
        elif kind == "repeat":
            data = data[:at] + data[at : at + draw(st.integers(1, 40))] * 2 + data[at + 40 :]
        elif kind == "cut":
            data = data[:at]
    return data


def run_in_copy(
    files: dict[str, bytes], command: str, template: Path | None = None, exits: tuple[int, ...] = (0, 1, 2)
) -> kit.Outcome:
    """Run ``command`` in a fresh folder holding ``files`` (over a copy of ``template``) and
    check what every run must hold: no crash, inputs unchanged, units conserved."""
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary) / "case"
        if template is not None:
            shutil.copytree(template, folder, symlinks=True)
        folder.mkdir(exist_ok=True)
        for name, data in files.items():
            path = folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.exists():
                os.chmod(path, 0o644)
            path.write_bytes(data)
        argv = command.split()
        before = checks.snapshot(folder)
        outcome = checks.run_here(argv, folder)
        checks.no_crash(outcome, exits)
        checks.unchanged(before, folder)
        checks.units_conserved(argv, outcome)
        return outcome


def xlsx_damaged(member_data: bytes) -> bytes:
    members = kit.zip_members(kit.xlsx(kit.GOOD_XLSX_ROWS)())
    members["xl/worksheets/sheet1.xml"] = member_data
    return kit.zip_bytes(members)


SHEET_XML = kit.zip_members(kit.xlsx(kit.GOOD_XLSX_ROWS)())["xl/worksheets/sheet1.xml"]
JSONL_SHEET = "".join(json.dumps({"comment_id": i, "code": c}) + "\n" for i, c in zip("abcd", ["yes", "no", "y", ""]))
TWO_COLUMNS = "comment_id,code\na,yes\nb,no\nc,no\nd,no\n"  # the CSV reader's fast path
SHEETS: dict[str, tuple[bytes, Callable[[bytes], bytes]]] = {
    "bob.csv": (TWO_COLUMNS.encode(), lambda data: data),
    "bob.tsv": (kit.BOB.replace(",", "\t").encode(), lambda data: data),
    "bob.jsonl": (JSONL_SHEET.encode(), lambda data: data),
    "bob.xlsx": (SHEET_XML, xlsx_damaged),
}


# --- sheets ----------------------------------------------------------------------------------


@BOUNDED
@given(st.sampled_from(["bob.csv", "bob.tsv", "bob.jsonl"]), st.data())
@example("bob.csv", None)
def test_fuzz_damaged_text_sheets(name: str, data: st.DataObject | None) -> None:
    valid, pack = SHEETS[name]
    # the case: a quote left open in a sheet of two columns (rows 3 and 4 vanished into row 2)
    damaged_sheet = b'comment_id,code\na,yes\nb,"no\nc,no\nd,no\n' if data is None else data.draw(damaged(valid))
    run_in_copy({**base(), name: pack(damaged_sheet)}, f"join alice.csv {name} --rule rule.yaml --out out")


@BOUNDED
@given(st.sampled_from(["bob.csv", "bob.tsv", "bob.jsonl"]), st.data())
def test_fuzz_damaged_text_sheets_never_crash(name: str, data: st.DataObject) -> None:
    """What holds today of every damaged text sheet (the row count aside): a clean exit (1: nothing
    left to score), untouched inputs."""
    valid, pack = SHEETS[name]
    files = {**base(), name: pack(data.draw(damaged(valid)))}
    run_in_copy(files, f"score alice.csv {name} --rule rule.yaml", exits=(0, 1, 2))


@BOUNDED
@given(st.data())
@example(None)
def test_fuzz_damaged_xlsx_sheets(data: st.DataObject | None) -> None:
    valid, pack = SHEETS["bob.xlsx"]
    damaged_sheet = valid[: len(valid) // 2] if data is None else data.draw(damaged(valid))
    run_in_copy({**base(), "bob.xlsx": pack(damaged_sheet)}, "join alice.csv bob.xlsx --rule rule.yaml --out out")


# --- rules -------------------------------------------------------------------------------------


@BOUNDED
@given(st.data())
def test_fuzz_damaged_rules(data: st.DataObject) -> None:
    rule = data.draw(damaged(kit.RULE.encode()))
    run_in_copy(
        {**base(), "rule.yaml": rule}, "score alice.csv bob.csv --rule rule.yaml --format json", exits=(0, 1, 2)
    )


# --- collector files ----------------------------------------------------------------------------

COLLECTOR = {
    "dataset.json": kit.DATASET.encode(),
    "dataset.jsonl": kit.DATASET_JSONL.encode(),
    "dataset.csv": kit.DATASET_CSV.encode(),
    "run.json": kit.RUN_RECORD.encode(),
}


@BOUNDED
@given(st.sampled_from(sorted(COLLECTOR)), st.data())
def test_fuzz_damaged_collector_files(name: str, data: st.DataObject) -> None:
    files = {
        "rule.yaml": kit.RULE.encode(),
        "dataset.json": kit.DATASET.encode(),
        "run.json": kit.RUN_RECORD.encode(),
        name: data.draw(damaged(COLLECTOR[name])),
    }
    dataset = name if name.startswith("dataset") else "dataset.json"
    run_in_copy(
        files, f"sample {dataset} --run-record run.json --rule rule.yaml --coders ann,ben --out s", exits=(0, 2)
    )


# --- a frozen bundle --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def frozen_example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example audit frozen, with one adjudication record: the template every example copies."""
    folder = tmp_path_factory.mktemp("frozen")
    for name, content in base().items():
        (folder / name).write_bytes(content)
    kit.freeze_fixed(folder)
    (folder / "decisions.csv").write_text("comment_id,code,note\nc,yes,agreed\n", encoding="utf-8")
    kit.run_cli(folder, f"adjudicate {kit.BUNDLE} --decisions decisions.csv --by ann --quiet")
    return folder


def members(template: Path) -> list[str]:
    bundle = template / kit.BUNDLE
    return sorted(str(path.relative_to(template)) for path in bundle.rglob("*") if path.is_file())


@BOUNDED
@given(st.data(), st.sampled_from(["verify", "score", "report"]), st.booleans())
def test_fuzz_damaged_bundles(frozen_example: Path, data: st.DataObject, command: str, rehash: bool) -> None:
    member = data.draw(st.sampled_from(members(frozen_example)))
    changed = {member: data.draw(damaged((frozen_example / member).read_bytes()))}
    if rehash:
        changed = rehashed(frozen_example, changed)
    argv = {
        "verify": f"verify {kit.BUNDLE}",
        "score": f"score {kit.BUNDLE} --format json",
        "report": f"report {kit.BUNDLE} --format md",
    }[command]
    run_in_copy(changed, argv, template=frozen_example, exits=(0, 1, 2) if command == "verify" else (0, 2))


def rehashed(template: Path, changed: dict[str, bytes]) -> dict[str, bytes]:
    """The damaged member plus a manifest that lists its new sha256, its integrity recomputed."""
    from irr_audit.bundle.manifest import canonical_sha256, sha256_hex
    from irr_audit.io.outputs import render_json

    manifest_name = f"{kit.BUNDLE}/manifest.json"
    if manifest_name in changed:
        return changed
    manifest = json.loads((template / manifest_name).read_text(encoding="utf-8"))
    for record in manifest["files"]:
        name = f"{kit.BUNDLE}/{record['path']}"
        if name in changed:
            record["sha256"], record["size"] = sha256_hex(changed[name]), len(changed[name])
    manifest["integrity"]["sha256"] = canonical_sha256(manifest, "integrity")
    return {**changed, manifest_name: render_json(manifest).encode("utf-8")}


def base() -> dict[str, bytes]:
    return {name: kit.materialise(content) for name, content in kit.BASE.items()}


def test_a_repeated_key_before_damage_later_in_the_file_is_refused_without_a_traceback() -> None:
    from irr_audit.io.limits import repeated_key_place

    # found by the fuzz test: the repeat stops the first decoding; the second, to find its place, met the damage
    assert repeated_key_place('[{"a": 1, "a": 2}, {"b": "x\n"}]') is None
