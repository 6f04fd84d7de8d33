"""Forgery needs an outside anchor, and verify never crashes on a damaged bundle.

A bundle's own hashes prove only that it is consistent: whoever can write the
folder can change a sheet and re-hash everything. The bundle's digest (the sha256
of manifest.json), kept outside it by freeze (stdout, a digest list, an SSH
signature), is what tells the bundle frozen from a re-hashed forgery.
"""

from __future__ import annotations

import csv
import errno
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from irr_audit.bundle import anchor as anchor_module
from irr_audit.bundle.anchor import parse_digest, parse_digest_list
from irr_audit.bundle.freeze import FREEZE_LOCK
from irr_audit.bundle.manifest import canonical_sha256, units_entry
from irr_audit.bundle.read import join_files, read_frozen_files
from irr_audit.bundle.verify import compare_scores
from irr_audit.errors import OutputError, UsageError
from irr_audit.io.outputs import render_json
from tests.conftest import run

ROOT = Path(__file__).resolve().parents[1]
RULE = ROOT / "rules" / "explicit_current_failure" / "v1.yaml"
EXAMPLES = ROOT / "examples" / "sheets"
DIGEST_LINE = re.compile(r"(sha256:[0-9a-f]{64})  (.+)")
INTERNAL_ONLY = "checked: internal consistency only: whoever can write the bundle folder could change a file"
SSH_KEYGEN = shutil.which("ssh-keygen")
needs_ssh_keygen = pytest.mark.skipif(SSH_KEYGEN is None, reason="ssh-keygen (OpenSSH) is not installed")


def freeze(sheets: list[Path], audits: Path, *extra: object) -> tuple[str, Path]:
    """Freeze the example; the digest and the bundle from the line freeze prints."""
    result = run("freeze", *sheets, "--rule", RULE, "--into", audits, *extra)
    assert result.exit_code == 0, result.stderr
    match = DIGEST_LINE.fullmatch(result.stdout.rstrip("\n"))
    assert match is not None, result.stdout
    return match.group(1), Path(match.group(2))


def sha256_file(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def writable(bundle: Path) -> None:
    for root, _, files in os.walk(bundle):
        for name in files:
            os.chmod(Path(root) / name, stat.S_IRUSR | stat.S_IWUSR)


def manifest_of(bundle: Path) -> dict[str, Any]:
    return json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))


def rehash(bundle: Path, manifest: dict[str, Any] | None = None, *, score: bool = False) -> None:
    """What a forger with write access does: every file's sha256 and size, the rule's
    digest, (optionally) the score and the units' fingerprints, and the manifest's own integrity
    hash, recomputed."""
    from irr_audit.report.model import AuditOptions, build_report

    manifest = manifest if manifest is not None else manifest_of(bundle)
    for record in manifest["files"]:
        location = bundle / record["path"]
        if location.is_file():
            data = location.read_bytes()
            record["sha256"], record["size"] = hashlib.sha256(data).hexdigest(), len(data)
    by_path = {record["path"]: record for record in manifest["files"]}
    for sheet in manifest["sheets"]:
        sheet["sha256"], sheet["size"] = by_path[sheet["file"]]["sha256"], by_path[sheet["file"]]["size"]
    manifest["rule"]["digest"] = "sha256:" + by_path[manifest["rule"]["file"]]["sha256"]
    if score:
        join = join_files(bundle, manifest, read_frozen_files(bundle, manifest))
        report = build_report(join, AuditOptions(list_disagreements=False))
        manifest["score"] = json.loads(render_json(report.to_dict(include_disagreements=False)))
        manifest["units"] = units_entry(join.units, join.fully_coded)  # which units are fully coded changed too
    manifest["integrity"]["sha256"] = canonical_sha256(manifest, "integrity")
    (bundle / "manifest.json").write_text(render_json(manifest), encoding="utf-8")


def forge(bundle: Path) -> None:
    """Alice's sheet replaced by Bob's codes (perfect agreement), everything re-hashed."""
    writable(bundle)
    (bundle / "sheets" / "alice.csv").write_bytes((bundle / "sheets" / "bob.csv").read_bytes())
    rehash(bundle, score=True)


# --- 1. the forgery that a self-hash cannot catch --------------------------------------


def test_a_rehashed_forgery_passes_only_the_consistency_check(sheets: list[Path], tmp_path: Path) -> None:
    digest, bundle = freeze(sheets, tmp_path / "audits", "--digests", tmp_path / "audits" / "DIGESTS")
    before = json.loads(run("score", bundle, "--format", "json").stdout)["metrics"]["cohen_kappa"]["value"]
    forge(bundle)

    consistent = run("verify", bundle)
    assert consistent.exit_code == 0  # the forgery is consistent: this is what a self-hash proves
    assert INTERNAL_ONLY in consistent.stdout
    assert json.loads(run("score", bundle, "--format", "json").stdout)["metrics"]["cohen_kappa"]["value"] != before

    expected = run("verify", bundle, "--expect", digest)
    assert expected.exit_code == 1
    assert expected.stdout.splitlines()[3] == (
        f"anchor: manifest.json: the bundle's digest {sha256_file(bundle / 'manifest.json')} is not the expected "
        f"{digest}: this is not the bundle that was anchored"
    )
    assert expected.stdout.splitlines()[-1].startswith(f"FAILED: bundle {bundle.name} does not verify")
    assert INTERNAL_ONLY not in expected.stdout

    listed = run("verify", bundle, "--digests", tmp_path / "audits" / "DIGESTS")
    assert listed.exit_code == 1
    assert (
        f"is not the one anchored for {bundle.name} in {tmp_path / 'audits' / 'DIGESTS'} (line 1: {digest})"
        in listed.stdout
    )


def test_the_genuine_bundle_verifies_against_its_anchors(sheets: list[Path], tmp_path: Path) -> None:
    digests = tmp_path / "audits" / "DIGESTS"
    digest, bundle = freeze(sheets, tmp_path / "audits", "--digests", digests)

    for anchor in (("--expect", digest), ("--expect", digest.removeprefix("sha256:").upper()), ("--digests", digests)):
        result = run("verify", bundle, *anchor)
        assert result.exit_code == 0, result.stdout
        lines = result.stdout.splitlines()
        assert lines[0].startswith(f"OK: bundle {bundle.name}: files 3 unchanged, 0 missing, 0 extra.")
        assert lines[1] == "headline: Cohen's kappa (two coders, a nominal rule): 0.7000, frozen and now"
        assert lines[2] == f"digest: {digest}"
        assert lines[3].startswith("anchored: its digest ")
        assert lines[-1].startswith(f"OK: bundle {bundle.name} verifies")
        assert INTERNAL_ONLY not in result.stdout
    as_json = json.loads(run("verify", bundle, "--expect", digest, "--format", "json").stdout)
    assert as_json["digest"] == digest and as_json["anchored"] is True
    assert as_json["anchors"] == ["its digest is the one expected (--expect)"]
    plain = json.loads(run("verify", bundle, "--format", "json").stdout)
    assert plain["digest"] == digest and plain["ok"] is True and plain["anchored"] is False and plain["anchors"] == []


# --- 2. freeze prints the digest; the report shows it; the digest list -------------------


def test_a_bundle_replaced_by_a_copy_of_another_fails_its_anchors(sheets: list[Path], tmp_path: Path) -> None:
    """An anchor finds a bundle by its manifest's name: a copy of another anchored bundle under this
    folder's name would pass every anchor, so with one the folder's name must be the manifest's."""
    digests = tmp_path / "audits" / "DIGESTS"
    digest, first = freeze(sheets, tmp_path / "audits", "--digests", digests)
    sheets[1].write_text(sheets[1].read_text(encoding="utf-8").replace(",yes,", ",no,"), encoding="utf-8")
    _, second = freeze(sheets, tmp_path / "audits", "--digests", digests)
    shutil.rmtree(second)
    shutil.copytree(first, second)

    assert run("verify", first, "--digests", digests).exit_code == 0
    renamed = f"the folder is named {second.name}; the manifest names the bundle {first.name}"
    for anchor in (("--digests", digests), ("--expect", digest)):
        result = run("verify", second, *anchor)
        assert result.exit_code == 1, result.stdout
        assert f"anchor: {second.name}: {renamed}: a bundle renamed, or replaced by a copy" in result.stdout
        assert f"rename the folder back to {first.name}" in result.stdout
    alone = run("verify", second)  # without an anchor a renamed copy may be legitimate: a note
    assert alone.exit_code == 0 and f"note: {renamed}" in alone.stderr


def test_an_empty_folder_added_to_a_bundle_is_extra(sheets: list[Path], tmp_path: Path) -> None:
    _, bundle = freeze(sheets, tmp_path / "audits")
    (bundle / "sheets" / "new").mkdir()
    (bundle / "notes").mkdir()
    (bundle / "adjudication").mkdir()  # where adjudicate writes: empty, it is no change

    result = run("verify", bundle)

    assert result.exit_code == 1
    assert "files 0 changed, 0 missing, 2 extra (notes/, sheets/new/)" in result.stdout
    assert "extra: notes/: an empty folder, not in the manifest" in result.stdout


def test_freeze_prints_the_digest_of_the_manifest(sheets: list[Path], tmp_path: Path) -> None:
    result = run("freeze", *sheets, "--rule", RULE, "--into", tmp_path / "audits")

    digest, path = DIGEST_LINE.fullmatch(result.stdout.rstrip("\n")).groups()
    bundle = Path(path)
    assert digest == sha256_file(bundle / "manifest.json")
    assert f"--expect {digest}" in result.stderr
    document = json.loads(run("report", bundle, "--format", "json", "--quiet").stdout)
    assert document["bundle"]["digest"] == digest
    assert f"- Bundle digest: `{digest}`" in run("report", bundle, "--format", "md", "--quiet").stdout
    assert (
        f'<dt>Bundle digest</dt><dd><code class="digest prefixed">{digest}</code></dd>'
        in run("report", bundle, "--format", "html", "--quiet").stdout
    )
    assert "digest" not in json.loads(run("report", *sheets, "--rule", RULE, "--format", "json").stdout).get(
        "bundle", {}
    )


def test_the_digest_list_is_only_appended_to(sheets: list[Path], tmp_path: Path) -> None:
    digests = tmp_path / "repo" / "audits" / "DIGESTS"
    first_digest, first = freeze(sheets, tmp_path / "repo" / "audits", "--digests", digests)
    assert digests.read_text(encoding="utf-8") == f"{first_digest}  {first.name}\n"

    digests.write_bytes(digests.read_bytes() + b"# reviewed by carol\n" + b"\n")
    kept = digests.read_bytes() + b"# no newline at the end"
    digests.write_bytes(kept)
    (tmp_path / "other").mkdir()
    other = [
        Path(shutil.copy(EXAMPLES / "alice.csv", tmp_path / "other" / "ann.csv")),
        Path(shutil.copy(EXAMPLES / "bob.csv", tmp_path / "other" / "ben.csv")),
    ]
    result = run("freeze", *other, "--rule", RULE, "--into", tmp_path / "repo" / "audits", "--digests", digests)

    assert result.exit_code == 0, result.stderr
    second_digest, second = DIGEST_LINE.fullmatch(result.stdout.rstrip("\n")).groups()
    assert digests.read_bytes() == kept + f"\n{second_digest}  {Path(second).name}\n".encode()
    assert f"anchored: {digests} line 5 lists {second_digest} for {Path(second).name}" in result.stderr
    assert run("verify", first, "--digests", digests).exit_code == 0
    assert run("verify", second, "--digests", digests).exit_code == 0
    assert "(line 5)" in run("verify", second, "--digests", digests).stdout


@pytest.mark.parametrize(
    ("content", "code", "message"),
    [
        ("sha256:abc  name\n", "digests-invalid", "line 1, is not '<digest>  <name>'"),
        ("# ok\n" + "f" * 64 + "\n", "digests-invalid", "line 2, is not '<digest>  <name>'"),
        ("alice,yes\n", "digests-invalid", "line 1, is not '<digest>  <name>'"),
        (b"\x80".decode("latin-1"), "digests-invalid", "is not UTF-8 (byte 0)"),
        (
            b"\xff\xfe".decode("latin-1"),
            "digests-invalid",
            "is not UTF-8 text: it starts with the byte-order mark of UTF-16 (little-endian)",
        ),
    ],
    ids=["short digest", "no name", "a sheet", "not UTF-8", "UTF-16"],
)
def test_a_damaged_digest_list_is_refused(
    sheets: list[Path], tmp_path: Path, content: str, code: str, message: str
) -> None:
    _, bundle = freeze(sheets, tmp_path / "audits")
    digests = tmp_path / "DIGESTS"
    digests.write_bytes(content.encode("latin-1"))

    verified = run("verify", bundle, "--digests", digests)
    frozen = run("freeze", *sheets, "--rule", RULE, "--into", tmp_path / "more", "--digests", digests)

    for result in (verified, frozen):
        assert result.exit_code == 2
        assert result.stderr.startswith(f"Error [{code}]: digest list {digests}")
        assert message in result.stderr
    assert not (tmp_path / "more").exists()  # checked before anything was frozen
    assert digests.read_bytes() == content.encode("latin-1")


def test_a_bundle_not_listed_or_listed_twice_does_not_verify(sheets: list[Path], tmp_path: Path) -> None:
    digest, bundle = freeze(sheets, tmp_path / "audits")
    missing = run("verify", bundle, "--digests", tmp_path / "nowhere")
    assert missing.exit_code == 2 and missing.stderr.startswith("Error [digests-not-found]: digest list ")

    digests = tmp_path / "DIGESTS"
    digests.write_text(f"{'0' * 64}  20240101T000000Z_other_v1\n", encoding="utf-8")
    unlisted = run("verify", bundle, "--digests", digests)
    assert unlisted.exit_code == 1
    assert f"anchor: manifest.json: {bundle.name} is not in the digest list {digests}" in unlisted.stdout

    digests.write_text(f"{digest}  {bundle.name}\nsha256:{'1' * 64}  {bundle.name}\n", encoding="utf-8")
    twice = run("verify", bundle, "--digests", digests)
    assert twice.exit_code == 1
    assert f"gives {bundle.name} different digests (lines 1, 2)" in twice.stdout


def test_freeze_never_appends_to_an_input_or_into_a_bundle(sheets: list[Path], tmp_path: Path) -> None:
    before = [sheet.read_bytes() for sheet in sheets]
    _, bundle = freeze(sheets, tmp_path / "audits")
    others = [Path(shutil.copy(sheet, tmp_path / f"{sheet.stem}2.csv")) for sheet in sheets]

    overwrites = "Error [output-overwrites-input]: --digests: writing {} would overwrite an input file"
    for target, message in (
        (others[0], overwrites.format(others[0])),
        (RULE, overwrites.format(RULE)),
        (bundle / "DIGESTS", f"Error [output-in-bundle]: --digests: {bundle / 'DIGESTS'} is inside the audit bundle"),
        (sheets[0], f"Error [digests-invalid]: digest list {sheets[0]}, line 1, is not '<digest>  <name>'"),
    ):
        result = run("freeze", *others, "--rule", RULE, "--into", tmp_path / "new", "--digests", target)
        assert result.exit_code == 2 and result.stderr.startswith(message), result.stderr
    assert [sheet.read_bytes() for sheet in [*sheets, *others]] == [*before, *before]
    assert not (bundle / "DIGESTS").exists() and not (tmp_path / "new").exists()


def test_freeze_of_a_join_folder_never_appends_to_a_sheet_it_was_joined_from(
    sheets: list[Path], tmp_path: Path
) -> None:
    """The join folder names its sheets: they are inputs of freeze J too, and the message says
    so (not that the sheet is no digest list)."""
    joined = tmp_path / "J"
    assert run("join", *sheets, "--rule", RULE, "--out", joined, "-q").exit_code == 0
    before = sheets[0].read_bytes()
    for target in (sheets[0], joined / "joined.csv"):
        result = run("freeze", joined, "--into", tmp_path / "audits", "--digests", target)
        assert result.exit_code == 2
        assert result.stderr.startswith(
            f"Error [output-overwrites-input]: --digests: writing {target} would overwrite an input file"
        ), result.stderr
    assert sheets[0].read_bytes() == before and not (tmp_path / "audits").exists()


def test_the_expected_digest_must_be_a_digest(sheets: list[Path], tmp_path: Path) -> None:
    _, bundle = freeze(sheets, tmp_path / "audits")
    for text in ("abc", "sha256:" + "g" * 64, "md5:" + "0" * 64, ""):
        result = run("verify", bundle, "--expect", text)
        assert result.exit_code == 2 and result.stderr.startswith("Error [usage-expect]: --expect"), text


def test_digest_parsing() -> None:
    assert parse_digest(" SHA256:" + "Ab" * 32 + " ") == "sha256:" + "ab" * 32
    with pytest.raises(UsageError):
        parse_digest("sha256:" + "a" * 63)
    listed = parse_digest_list("# comment\r\n\n" + "A" * 64 + "\tname_v1\r\n", "DIGESTS")
    assert [(entry.digest, entry.name, entry.line) for entry in listed.entries] == [
        ("sha256:" + "a" * 64, "name_v1", 3)
    ]


# --- adjudication records are anchored on their own ---------------------------------------


def decide(bundle: Path, tmp_path: Path, *extra: object) -> tuple[str, Path]:
    listing = list(csv.reader(run("adjudicate", bundle).stdout.splitlines()))
    listing[1][3] = listing[1][1]
    decisions = tmp_path / "decisions.csv"
    with open(decisions, "w", newline="", encoding="utf-8") as stream:
        csv.writer(stream).writerows(listing)
    result = run("adjudicate", bundle, "--decisions", decisions, "--by", "alice and bob", *extra)
    assert result.exit_code == 0, result.stderr
    digest, path = DIGEST_LINE.fullmatch(result.stdout.rstrip("\n")).groups()
    return digest, Path(path)


def forged_record(bundle: Path, like: Path) -> Path:
    """Another decision under a new record name, self-hashed as adjudicate would."""
    record = json.loads(like.read_text(encoding="utf-8"))
    record["decisions"][0]["final_code"] = "no" if record["decisions"][0]["final_code"] == "yes" else "yes"
    record["record_sha256"] = canonical_sha256(record, "record_sha256")
    forged = like.with_name("20991231T000000Z.json")
    forged.write_text(render_json(record), encoding="utf-8")
    return forged


def test_adjudication_records_are_listed_and_a_forged_one_is_caught(sheets: list[Path], tmp_path: Path) -> None:
    digests = tmp_path / "audits" / "DIGESTS"
    bundle_digest, bundle = freeze(sheets, tmp_path / "audits", "--digests", digests)
    record_digest, record = decide(bundle, tmp_path, "--digests", digests)

    assert record_digest == sha256_file(record)
    assert digests.read_text(encoding="utf-8").splitlines()[1] == (
        f"{record_digest}  {bundle.name}/adjudication/{record.name}"
    )
    good = run("verify", bundle, "--digests", digests)
    assert good.exit_code == 0 and "its 1 adjudication record is listed" in good.stdout

    forged = forged_record(bundle, record)
    assert run("verify", bundle).exit_code == 0  # consistent: a self-hash again
    caught = run("verify", bundle, "--digests", digests)
    assert caught.exit_code == 1
    assert (
        f"anchor: adjudication/{forged.name}: {bundle.name}/adjudication/{forged.name} is not in the digest "
        f"list {digests}: this record was not anchored"
    ) in caught.stdout
    expected = run("verify", bundle, "--expect", bundle_digest)
    assert expected.exit_code == 0
    assert (
        "2 adjudication records are not covered by --expect, which anchors the frozen audit only; check records "
        "with verify --digests or --allowed-signers (anchored by adjudicate --digests or --sign)"
    ) in " ".join(expected.stderr.split())


def test_a_listed_record_removed_from_the_bundle_is_caught(sheets: list[Path], tmp_path: Path) -> None:
    """Deleting a later record rolls its decisions back to earlier ones: the list still names it."""
    digests = tmp_path / "audits" / "DIGESTS"
    _, bundle = freeze(sheets, tmp_path / "audits", "--digests", digests)
    _, record = decide(bundle, tmp_path, "--digests", digests)
    record.unlink()

    assert run("verify", bundle).exit_code == 0  # the bundle alone cannot tell
    caught = run("verify", bundle, "--digests", digests)
    assert caught.exit_code == 1
    assert f"1 missing (adjudication/{record.name})" in caught.stdout
    assert (
        f"missing: adjudication/{record.name}: listed for {bundle.name} in {digests} (line 2), "
        "not in the bundle: deleted"
    ) in caught.stdout


def test_anchoring_options_of_adjudicate_need_decisions(sheets: list[Path], tmp_path: Path) -> None:
    _, bundle = freeze(sheets, tmp_path / "audits")
    result = run("adjudicate", bundle, "--digests", tmp_path / "DIGESTS")
    assert result.exit_code == 2 and "Error [usage-adjudicate]: --digests and --sign" in result.stderr
    inside = run("adjudicate", bundle, "--decisions", tmp_path / "x.csv", "--by", "a", "--digests", bundle / "DIGESTS")
    assert inside.exit_code == 2 and "Error [output-in-bundle]: --digests:" in inside.stderr
    listing = run("adjudicate", bundle, "--output", bundle / "adjudication" / "list.csv")
    assert listing.exit_code == 2 and "Error [output-in-bundle]: --output:" in listing.stderr


# --- 4. SSH signatures -----------------------------------------------------------------------


@pytest.fixture
def ssh_key(tmp_path: Path) -> tuple[Path, Path]:
    """A new ed25519 key without passphrase, and an allowed_signers file naming it."""
    if SSH_KEYGEN is None:
        pytest.skip("ssh-keygen (OpenSSH) is not installed")
    folder = tmp_path / "keys"
    folder.mkdir()
    key = folder / "id_ed25519"
    subprocess.run([SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-C", "alice", "-f", str(key)], check=True, timeout=60)
    public = key.with_suffix(".pub").read_text(encoding="utf-8").split()
    allowed = folder / "allowed_signers"
    allowed.write_text(f"alice@example.org {public[0]} {public[1]}\n", encoding="utf-8")
    return key, allowed


@needs_ssh_keygen
def test_a_signed_bundle_verifies_and_its_forgery_does_not(
    sheets: list[Path], tmp_path: Path, ssh_key: tuple[Path, Path]
) -> None:
    key, allowed = ssh_key
    digest, bundle = freeze(sheets, tmp_path / "audits", "--sign", key)

    signature = bundle / "manifest.json.sig"
    assert signature.read_bytes().startswith(b"-----BEGIN SSH SIGNATURE-----")
    assert "manifest.json.sig" not in [record["path"] for record in manifest_of(bundle)["files"]]
    plain = run("verify", bundle)
    assert plain.exit_code == 0 and "pass --allowed-signers FILE to check the signature" in plain.stderr
    good = run("verify", bundle, "--allowed-signers", allowed)
    assert good.exit_code == 0, good.stdout
    assert f"anchored: its manifest is signed by alice@example.org ({allowed})." in good.stdout
    assert run("verify", bundle, "--allowed-signers", allowed, "--identity", "alice@example.org").exit_code == 0

    other = run("verify", bundle, "--allowed-signers", allowed, "--identity", "mallory@example.org")
    assert other.exit_code == 1
    assert (
        f"signature: manifest.json.sig: is signed by the key of alice@example.org in {allowed}, not by "
        "mallory@example.org's"
    ) in other.stdout

    forge(bundle)
    assert run("verify", bundle).exit_code == 0
    forged = run("verify", bundle, "--allowed-signers", allowed)
    assert forged.exit_code == 1
    assert "\nsignature: manifest.json.sig: does not verify as signed by alice@example.org" in forged.stdout


@needs_ssh_keygen
def test_an_unsigned_bundle_fails_a_signature_check(
    sheets: list[Path], tmp_path: Path, ssh_key: tuple[Path, Path]
) -> None:
    _, allowed = ssh_key
    _, bundle = freeze(sheets, tmp_path / "audits")
    result = run("verify", bundle, "--allowed-signers", allowed)
    assert result.exit_code == 1
    assert "\nsignature: manifest.json.sig: is missing: this was not signed" in result.stdout


@needs_ssh_keygen
def test_a_signature_by_a_stranger_fails(sheets: list[Path], tmp_path: Path, ssh_key: tuple[Path, Path]) -> None:
    _, allowed = ssh_key
    stranger = tmp_path / "stranger"
    subprocess.run([SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-f", str(stranger)], check=True, timeout=60)
    _, bundle = freeze(sheets, tmp_path / "audits", "--sign", stranger)

    result = run("verify", bundle, "--allowed-signers", allowed)
    assert result.exit_code == 1
    assert f"signature: manifest.json.sig: is not signed by any key in {allowed}" in result.stdout


@needs_ssh_keygen
def test_signed_adjudication_records(sheets: list[Path], tmp_path: Path, ssh_key: tuple[Path, Path]) -> None:
    key, allowed = ssh_key
    _, bundle = freeze(sheets, tmp_path / "audits", "--sign", key)
    _, record = decide(bundle, tmp_path, "--sign", key)

    assert record.with_name(record.name + ".sig").is_file()
    good = run("verify", bundle, "--allowed-signers", allowed)
    assert good.exit_code == 0 and "its 1 adjudication record is signed" in good.stdout

    forged = forged_record(bundle, record)
    result = run("verify", bundle, "--allowed-signers", allowed)
    assert result.exit_code == 1
    assert f"signature: adjudication/{forged.name}.sig: is missing: this was not signed" in result.stdout


@needs_ssh_keygen
def test_signing_failures_leave_no_bundle(sheets: list[Path], tmp_path: Path) -> None:
    not_a_key = tmp_path / "not_a_key"
    not_a_key.write_text("this is not a key\n", encoding="utf-8")
    os.chmod(not_a_key, stat.S_IRUSR | stat.S_IWUSR)

    bad = run("freeze", *sheets, "--rule", RULE, "--into", tmp_path / "audits", "--sign", not_a_key)
    missing = run("freeze", *sheets, "--rule", RULE, "--into", tmp_path / "audits", "--sign", tmp_path / "none")

    assert bad.exit_code == 2 and bad.stderr.startswith(
        f"Error [signing-failed]: ssh-keygen could not sign with {not_a_key}: "
    )
    assert missing.exit_code == 2 and missing.stderr.startswith(f"Error [usage-sign-key]: --sign {tmp_path / 'none'}")
    audits = tmp_path / "audits"
    assert not audits.exists() or [path.name for path in audits.iterdir()] == [FREEZE_LOCK]


def test_without_ssh_keygen_signing_options_are_refused(
    sheets: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, bundle = freeze(sheets, tmp_path / "audits")
    allowed = tmp_path / "allowed_signers"
    allowed.write_text("alice@example.org ssh-ed25519 AAAA\n", encoding="utf-8")
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))

    verified = run("verify", bundle, "--allowed-signers", allowed)
    frozen = run("freeze", *sheets, "--rule", RULE, "--into", tmp_path / "more", "--sign", allowed)

    for result in (verified, frozen):
        assert result.exit_code == 2
        assert result.stderr.startswith("Error [signing-unavailable]: ssh-keygen was not found")
    assert not (tmp_path / "more").exists()


def test_verify_signature_options_are_checked_first(sheets: list[Path], tmp_path: Path) -> None:
    _, bundle = freeze(sheets, tmp_path / "audits")
    identity = run("verify", bundle, "--identity", "alice@example.org")
    assert identity.exit_code == 2 and identity.stderr.startswith("Error [usage-identity]")
    if SSH_KEYGEN is not None:
        missing = run("verify", bundle, "--allowed-signers", tmp_path / "none")
        assert missing.exit_code == 2 and missing.stderr.startswith("Error [usage-allowed-signers]")


# --- 5. verify never crashes on a damaged bundle ---------------------------------------------


def edit(change: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    """Edit the manifest and re-hash it, as a forger would, so the check reaches past the hash."""

    def tamper(bundle: Path) -> None:
        manifest = manifest_of(bundle)
        change(manifest)
        manifest["integrity"]["sha256"] = canonical_sha256(manifest, "integrity")
        (bundle / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")

    return tamper


def replace_text(old: str, new: str) -> Callable[[Path], None]:
    def tamper(bundle: Path) -> None:
        text = (bundle / "manifest.json").read_text(encoding="utf-8")
        assert old in text
        (bundle / "manifest.json").write_text(text.replace(old, new, 1), encoding="utf-8")

    return tamper


def in_a_list(bundle: Path) -> None:
    (bundle / "manifest.json").write_bytes(b"[" + (bundle / "manifest.json").read_bytes() + b"]")


def emptied(bundle: Path) -> None:
    for root, _, files in os.walk(bundle):
        for name in files:
            (Path(root) / name).write_bytes(b"")


def rehashed_after(change: Callable[[Path], None]) -> Callable[[Path], None]:
    def tamper(bundle: Path) -> None:
        change(bundle)
        rehash(bundle)

    return tamper


def sheets_emptied(bundle: Path) -> None:
    for sheet in (bundle / "sheets").iterdir():
        sheet.write_bytes(b"")


def symlinked_sheet(bundle: Path) -> None:
    (bundle / "sheets" / "alice.csv").unlink()
    (bundle / "sheets" / "alice.csv").symlink_to(EXAMPLES / "alice.csv")


def sheet_made_folder(bundle: Path) -> None:
    (bundle / "sheets" / "alice.csv").unlink()
    (bundle / "sheets" / "alice.csv").mkdir()


def manifest_made_folder(bundle: Path) -> None:
    (bundle / "manifest.json").unlink()
    (bundle / "manifest.json").mkdir()


def signature_made_folder(bundle: Path) -> None:
    (bundle / "manifest.json.sig").mkdir()


def sheet_made_pipe(bundle: Path) -> None:
    (bundle / "sheets" / "alice.csv").unlink()
    os.mkfifo(bundle / "sheets" / "alice.csv")


def record(content: str) -> Callable[[Path], None]:
    def tamper(bundle: Path) -> None:
        (bundle / "adjudication").mkdir()
        (bundle / "adjudication" / "20240101T000000Z.json").write_text(content, encoding="utf-8")

    return tamper


def self_hashed_record(fields: dict[str, Any]) -> Callable[[Path], None]:
    def tamper(bundle: Path) -> None:
        document = {"format": "irr-audit-adjudication/1", **fields}
        document["record_sha256"] = canonical_sha256(document, "record_sha256")
        record(json.dumps(document))(bundle)

    return tamper


DAMAGE = {
    "NaN in the score": (
        replace_text('"po": ', '"po": NaN, "x": '),
        "manifest: manifest.json: is not JSON",
        "NaN is not a JSON number",
    ),
    "Infinity in the units": (
        replace_text('"count": 22', '"count": Infinity'),
        "manifest: manifest.json: is not JSON",
        "Infinity is not a JSON number",
    ),
    "no score": (edit(lambda manifest: manifest.pop("score")), "manifest: manifest.json: score is missing", ""),
    "no summary of units": (
        edit(lambda manifest: manifest["score"].pop("units")),
        "manifest: manifest.json: score.units is missing",
        "",
    ),
    "an empty score": (
        edit(lambda manifest: manifest.__setitem__("score", {})),
        "manifest: manifest.json: score.rule is missing",
        "",
    ),
    "metrics of the wrong type": (
        edit(lambda manifest: manifest["score"].__setitem__("metrics", [])),
        "manifest: manifest.json: score.metrics is not an object",
        "",
    ),
    "a manifest that is a list": (in_a_list, "manifest: manifest.json: is not a JSON object", ""),
    "files of the wrong type": (
        edit(lambda manifest: manifest.__setitem__("files", [1, "x"])),
        "manifest: manifest.json: files[0] needs a path, a sha256 and a size",
        "",
    ),
    "sheets of the wrong type": (
        edit(lambda manifest: manifest.__setitem__("sheets", {"a": 1})),
        "manifest: manifest.json: sheets must list two or more sheets",
        "",
    ),
    "a sample without its summary": (
        edit(lambda manifest: manifest.__setitem__("sample", {"files": []})),
        "manifest: manifest.json: sample.summary must be sample/sample.json",
        "",
    ),
    "a sample summary out of the bundle": (
        edit(lambda manifest: manifest.__setitem__("sample", {"files": ["../x"], "summary": "../x"})),
        "manifest: manifest.json: sample.files[0] '../x' has a '..'",
        "",
    ),
    "a huge number in the score": (
        edit(lambda manifest: manifest["score"]["metrics"]["po"].__setitem__("value", 10**400)),
        "manifest: manifest.json: score.metrics.po.value is 1000",  # checked where the manifest is read
        "not a finite number",
    ),
    "a signature listed as a frozen file": (
        edit(lambda manifest: manifest["files"].append({"path": "manifest.json.sig", "sha256": "0" * 64, "size": 0})),
        "manifest: manifest.json: files[3].path 'manifest.json.sig' is not a frozen file",
        "",
    ),
    "an empty manifest": (
        lambda bundle: (bundle / "manifest.json").write_bytes(b""),
        "manifest: manifest.json: is empty",
        "",
    ),
    "a manifest that is not UTF-8": (
        lambda bundle: (bundle / "manifest.json").write_bytes(b"{\xff}"),
        "manifest: manifest.json: is not UTF-8 text (byte 1)",
        "",
    ),
    "a manifest cut short": (
        lambda bundle: (bundle / "manifest.json").write_bytes(b'{"format": "irr'),
        "manifest: manifest.json: is not JSON (Unterminated string",
        "",
    ),
    "every file empty": (emptied, "manifest: manifest.json: is empty", ""),
    "empty sheets": (sheets_emptied, "changed: sheets/alice.csv: sha256 e3b0c44298fc... (0 bytes)", ""),
    "empty sheets, re-hashed": (
        rehashed_after(sheets_emptied),
        "score: cannot be recomputed from the bundle's files: sheet alice.csv is empty",
        "",
    ),
    "a symlinked sheet": (
        symlinked_sheet,
        "changed: sheets/alice.csv: passes through the symlink sheets/alice.csv",
        "",
    ),
    "a folder for a sheet": (sheet_made_folder, "changed: sheets/alice.csv: is not a file", ""),
    "a folder for a sheet, re-hashed": (
        rehashed_after(sheet_made_folder),
        "changed: sheets/alice.csv: is not a file",
        "sheets/alice.csv' is not a file",
    ),
    "a pipe for a sheet": (sheet_made_pipe, "changed: sheets/alice.csv: is not a file", ""),
    "a folder for the manifest": (manifest_made_folder, "manifest: manifest.json: is not a file", ""),
    "a folder for the signature": (signature_made_folder, "extra: manifest.json.sig: is not a signature file", ""),
    "a record holding NaN": (
        record('{"format": "irr-audit-adjudication/1", "x": NaN}'),
        "adjudication: adjudication/20240101T000000Z.json: cannot be read as JSON (NaN is not a JSON number",
        "",
    ),
    "a record that is not JSON": (
        record("{"),
        "adjudication: adjudication/20240101T000000Z.json: cannot be read as JSON (Expecting property name",
        "",
    ),
    "a record of the wrong types": (
        self_hashed_record({"bundle": "x", "by": 1, "created": 2, "decisions": [1, {"comment_id": []}]}),
        "adjudication: adjudication/20240101T000000Z.json: was recorded for another manifest",
        "",
    ),
    "a record deciding a list": (
        self_hashed_record({"bundle": {}, "by": "a", "created": "b", "decisions": [{"comment_id": ["x"]}]}),
        "adjudication: adjudication/20240101T000000Z.json: decisions[0] names ['x']",
        "",
    ),
}


@pytest.mark.parametrize(("tamper", "first", "also"), DAMAGE.values(), ids=DAMAGE.keys())
def test_verify_names_the_damage_and_never_crashes(
    sheets: list[Path], tmp_path: Path, tamper, first: str, also: str
) -> None:
    _, bundle = freeze(sheets, tmp_path / "audits")
    writable(bundle)
    tamper(bundle)

    result = run("verify", bundle)

    assert result.exit_code == 1, result.output
    assert first in result.stdout and also in result.stdout, result.stdout
    assert result.stdout.splitlines()[-1].startswith("FAILED: bundle ")
    for command in (("score", bundle, "--quiet"), ("report", bundle, "--format", "json", "--quiet")):
        used = run(*command)  # the commands that use a bundle refuse it with one message, or read it
        assert used.exit_code in (0, 2), used.output
        assert used.exit_code == 0 or used.stderr.startswith("Error [")


def sample_bundle(sheets: list[Path], tmp_path: Path) -> Path:
    ids = [line.split(",")[0] for line in (EXAMPLES / "alice.csv").read_text().splitlines()[1:19]]
    folder = tmp_path / "sample run"
    folder.mkdir()
    ledger = "".join(json.dumps({"comment_id": unit}) + "\n" for unit in ids).encode()
    (folder / "ledger.jsonl").write_bytes(ledger)
    record = {
        "rule": {"id": "explicit_current_failure", "version": 1, "digest": sha256_file(RULE)},
        "ledger": {"file": "ledger.jsonl", "sha256": hashlib.sha256(ledger).hexdigest(), "sample_ids": ids},
    }
    (folder / "sample.json").write_text(json.dumps(record), encoding="utf-8")
    _, bundle = freeze(sheets, tmp_path / "audits", "--sample", folder)
    writable(bundle)
    return bundle


def ledger_line_broken(bundle: Path) -> None:
    ledger = bundle / "sample" / "ledger.jsonl"
    ledger.write_bytes(ledger.read_bytes() + b"{not json\n")
    summary = json.loads((bundle / "sample" / "sample.json").read_text(encoding="utf-8"))
    summary["ledger"]["sha256"] = hashlib.sha256(ledger.read_bytes()).hexdigest()
    (bundle / "sample" / "sample.json").write_text(json.dumps(summary), encoding="utf-8")


def ledger_out_of_the_bundle(bundle: Path) -> None:
    summary = json.loads((bundle / "sample" / "sample.json").read_text(encoding="utf-8"))
    summary["ledger"]["file"] = str(EXAMPLES / "alice.csv")
    (bundle / "sample" / "sample.json").write_text(json.dumps(summary), encoding="utf-8")


SAMPLE_DAMAGE = {
    "sample.json deleted": (
        lambda bundle: (bundle / "sample" / "sample.json").unlink(),
        "missing: sample/sample.json",
        "is not a folder written by irr-audit sample",
    ),
    "a ledger line that is not JSON": (
        rehashed_after(ledger_line_broken),
        "sample ledger ",
        "ledger.jsonl, line 19, is not a JSON object with a comment_id",
    ),
    "a ledger named out of the bundle": (
        rehashed_after(ledger_out_of_the_bundle),
        "score: cannot be recomputed",
        "is not a sample record as irr-audit sample writes it: ledger.file",
    ),
}


@pytest.mark.parametrize(("tamper", "first", "also"), SAMPLE_DAMAGE.values(), ids=SAMPLE_DAMAGE.keys())
def test_verify_names_a_damaged_sample(sheets: list[Path], tmp_path: Path, tamper, first: str, also: str) -> None:
    bundle = sample_bundle(sheets, tmp_path)
    assert run("verify", bundle).exit_code == 0
    tamper(bundle)

    result = run("verify", bundle)

    assert result.exit_code == 1, result.output
    assert first in result.stdout and also in result.stdout, result.stdout


def test_what_is_not_a_bundle_is_refused(sheets: list[Path], tmp_path: Path) -> None:
    a_file = tmp_path / "bundle.zip"
    a_file.write_bytes(b"PK")
    for path, code, says in (
        (a_file, "bundle-not-found", "is not"),
        (tmp_path / "absent", "bundle-not-found", "does not exist"),
        (sheets[0].parent, "bundle-not-found", "is not"),
    ):
        result = run("verify", path)
        assert result.exit_code == 2 and result.stderr.startswith(f"Error [{code}]: {path} {says}"), result.stderr


def test_verify_shows_file_names_without_running_their_control_characters(sheets: list[Path], tmp_path: Path) -> None:
    _, bundle = freeze(sheets, tmp_path / "audits")
    os.chmod(bundle / "sheets", stat.S_IRWXU)
    (bundle / "sheets" / "\x1b]0;owned\x07\x1b[2J\nOK: fake").write_text("x", encoding="utf-8")

    result = run("verify", bundle)

    assert result.exit_code == 1
    assert "extra: sheets/\\x1b]0;owned\\x07\\x1b[2J\\nOK: fake: not in the manifest" in result.stdout
    assert "\x1b" not in result.stdout and not any(line.startswith("OK") for line in result.stdout.splitlines())


def test_scores_compare_counts_exactly_and_survive_huge_numbers() -> None:
    assert compare_scores({"n": 10**13}, {"n": 10**13 + 1}) == (
        ["n: frozen 10000000000000, recomputed 10000000000001"],
        [],
    )
    assert compare_scores({"k": 10**400}, {"k": 0.7})[0][0].startswith("k: frozen 1000")
    assert compare_scores({"k": 0.7}, {"k": 0.7 + 1e-15}) == ([], [])


def test_a_folder_that_cannot_be_listed_is_reported(
    sheets: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, bundle = freeze(sheets, tmp_path / "audits")
    os.chmod(bundle, stat.S_IRWXU)
    (bundle / "hidden").mkdir()
    real = os.scandir

    def scandir(path: Any = "."):  # what a folder without read permission does (the tests may run as root)
        if Path(path) == bundle / "hidden":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    result = run("verify", bundle)

    assert result.exit_code == 1
    assert "\nchanged: hidden: the folder cannot be listed (Permission denied)" in result.stdout


def test_a_digest_list_that_is_not_a_file_is_refused(sheets: list[Path], tmp_path: Path) -> None:
    _, bundle = freeze(sheets, tmp_path / "audits")
    pipe = tmp_path / "DIGESTS"
    os.mkfifo(pipe)  # reading it would wait forever

    for path in (pipe, tmp_path):
        result = run("verify", bundle, "--digests", path)
        assert result.exit_code == 2
        kind = "a named pipe" if path == pipe else "a folder"
        assert result.stderr.startswith(f"Error [digests-invalid]: digest list {path} is {kind}, not a file.")


@pytest.mark.parametrize("failure", [OSError(errno.ENOSPC, "No space left on device"), KeyboardInterrupt()])
def test_a_line_that_cannot_be_appended_leaves_the_list_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: BaseException
) -> None:
    """A full disk (or a stopped run) while the line is written: no half line is left, which
    would make the whole list unreadable to verify."""
    listed = tmp_path / "DIGESTS"
    listed.write_text(f"sha256:{'a' * 64}  20240501T120000Z_r_v1\n", encoding="utf-8")
    before = listed.read_bytes()

    def fail(descriptor: int) -> None:  # the line is written, not yet on disk
        raise failure

    monkeypatch.setattr(anchor_module.os, "fsync", fail)
    with pytest.raises(OutputError if isinstance(failure, OSError) else KeyboardInterrupt):
        anchor_module.append_digest(listed, f"sha256:{'b' * 64}", "20240502T120000Z_r_v1")
    monkeypatch.undo()
    assert listed.read_bytes() == before


def test_a_warning_new_in_this_version_is_a_note_and_a_lost_one_a_difference() -> None:
    """A check added since the freeze (a copied sheet, say) gives a warning the frozen score
    lacks: the files are what was frozen, so that is no changed score."""
    assert compare_scores({"warnings": ["a"]}, {"warnings": ["a", "b"]}) == ([], ["warnings: 1 new"])
    assert compare_scores({"warnings": ["a", "b"]}, {"warnings": ["b"]}) == (
        ['warnings: frozen ["a"], not given again'],
        [],
    )
    assert compare_scores({"warnings": "a"}, {"warnings": ["a"]})[0] == ['warnings: frozen "a", recomputed ["a"]']
