"""`freeze JOIN_DIR` of a folder `join --codebook` wrote: the folder keeps its codebook and the
sheets' sha256, so the sheets are read again, checked to be the bytes the join recorded, and
frozen as `freeze --codebook` freezes the sheets themselves (with the sample the join was
restricted to), as a rule's join folder is frozen."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from tests.conftest import run
from tests.test_codebook_bundle_sample import DATASET, RUN_RECORD, draw, fill
from tests.test_codebook_bundle_sample import freeze as freeze_sheets

ROOT = Path(__file__).resolve().parents[1]
CODEBOOK = ROOT / "codebooks" / "comment_study" / "v1.yaml"
SHEETS = sorted((ROOT / "examples" / "codebook" / "sheets").glob("*.csv"))
PER_FREEZE = {"name", "created", "integrity"}  # what differs between two freezes of one audit


def join(out: Path, *sheets: Path, extra: tuple[object, ...] = ()) -> Path:
    joined = run("join", *(sheets or SHEETS), "--codebook", CODEBOOK, "--out", out, "--quiet", *extra)
    assert joined.exit_code == 0, joined.output
    return out


def freeze(*args: object) -> Path:
    frozen = run("freeze", *args, "--quiet")
    assert frozen.exit_code == 0, frozen.output
    return Path(frozen.stdout.strip().split("  ", 1)[1])


def manifest(bundle: Path) -> dict[str, Any]:
    content: dict[str, Any] = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    return {key: value for key, value in content.items() if key not in PER_FREEZE}


def test_a_join_folder_freezes_as_its_sheets_do(tmp_path: Path) -> None:
    folder = join(tmp_path / "joined")
    bundle = freeze(folder, "--into", tmp_path / "audits")  # no --codebook: the folder keeps its own

    assert manifest(bundle) == manifest(freeze(*SHEETS, "--codebook", CODEBOOK, "--into", tmp_path / "from_sheets"))
    assert sorted(path.name for path in (bundle / "sheets").iterdir()) == [sheet.name for sheet in SHEETS]
    assert run("verify", bundle).exit_code == 0
    # the same codebook given is taken; a bundle of the same files is never made twice
    again = run("freeze", folder, "--codebook", CODEBOOK, "--into", tmp_path / "audits")
    assert again.exit_code == 2 and bundle.name in again.output, again.output
    assert freeze(folder, "--codebook", CODEBOOK, "--into", tmp_path / "other").exists()


def test_what_a_join_folder_cannot_be_frozen_with(tmp_path: Path) -> None:
    folder = join(tmp_path / "joined")
    other = tmp_path / "codebooks" / "comment_study" / "v1.yaml"
    other.parent.mkdir(parents=True)
    other.write_text(CODEBOOK.read_text(encoding="utf-8") + "x_note: another file\n", encoding="utf-8")
    refused = {
        "usage-codebook-mismatch": ["--codebook", other, "--rules", ROOT / "rules"],
        "usage-join-dir-option": ["--id-column", "comment_id"],
        "usage-codebook-folder": ["--rule", ROOT / "rules" / "sarcasm" / "v1.yaml"],
    }
    for code, extra in refused.items():
        result = run("freeze", folder, *extra, "--into", tmp_path / "audits")
        assert result.exit_code == 2 and f"[{code}]" in result.output, (code, result.output)
    assert not (tmp_path / "audits").exists()


def test_a_sheet_changed_since_the_join_is_refused(tmp_path: Path) -> None:
    sheets = []
    for sheet in SHEETS:
        shutil.copy(sheet, tmp_path / sheet.name)
        sheets.append(tmp_path / sheet.name)
    folder = join(tmp_path / "joined", *sheets)
    sheets[0].write_text(sheets[0].read_text(encoding="utf-8").replace("yes", "no", 1), encoding="utf-8")

    result = run("freeze", folder, "--into", tmp_path / "audits")

    assert result.exit_code == 2 and "[joindir-sheet-changed]" in result.output, result.output
    assert f"/{sheets[0].name} changed since it was joined" in " ".join(result.output.split())
    assert not (tmp_path / "audits").exists()


def test_a_join_restricted_to_a_sample_is_frozen_with_it(tmp_path: Path) -> None:
    sample = draw(tmp_path / "sample", "--codebook", CODEBOOK)
    sheets = fill(sample, tmp_path / "filled")
    folder = join(tmp_path / "joined", *sheets, extra=("--sample", sample))

    bundle = freeze(folder, "--into", tmp_path / "audits")

    assert manifest(bundle) == manifest(freeze_sheets(sheets, sample, tmp_path / "from_sheets"))
    assert manifest(bundle)["units"]["count"] == 8 and manifest(bundle)["sample"]["ids"]["count"] == 8
    assert run("verify", bundle).exit_code == 0
    another = tmp_path / "another"
    drawn = run("sample", DATASET, "--run-record", RUN_RECORD, "--codebook", CODEBOOK, "--coders", "alice,bob",
                "--out", another, "--size", "8", "--seed", "4", "--quiet")  # fmt: skip
    assert drawn.exit_code == 0, drawn.output
    mismatch = run("freeze", folder, "--sample", another, "--into", tmp_path / "audits2")
    assert mismatch.exit_code == 2 and "[usage-sample-mismatch]" in mismatch.output, mismatch.output
    shutil.rmtree(sample)
    missing = run("freeze", folder, "--into", tmp_path / "audits2")
    assert missing.exit_code == 2 and "[usage-sample-missing]" in missing.output, missing.output


def test_score_and_report_of_a_codebook_folder_or_bundle_refuse_options_that_read_sheets(tmp_path: Path) -> None:
    """The folder or bundle keeps how its sheets were read: such an option was passed over silently."""
    joined = join(tmp_path / "join")
    bundle = freeze(joined, "--into", tmp_path / "audits")
    for folder in (joined, bundle):
        for command in ("score", "report"):
            for option in (["--id-column", "id"], ["--worksheet", "Sheet1"], ["--delimiter", ";"]):
                result = run(command, folder, "--format", "json", "-q", *option)
                assert result.exit_code == 2 and "usage-join-dir-option" in result.stderr, (command, option)
