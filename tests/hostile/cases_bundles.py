"""Audit bundles under attack: verify, adjudicate, score/report of a bundle, and freeze
--recodes, against bundles a forger or an accident changed."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

from kit import (
    ALICE,
    BOB,
    BUNDLE,
    RULE,
    SHEETS,
    Case,
    Outcome,
    chain,
    deep_json,
    edit_bundle,
    fifo,
    forge,
    freeze_fixed,
    frozen,
    link,
    run_cli,
    sampled,
    sheet,
    writable_bundle,
    write,
)

VERIFY = "verify {bundle}"
DECISIONS = "comment_id,code,note\nc,yes,Both read it as a failure.\n"
ADJUDICATE = "adjudicate {bundle} --decisions decisions.csv --by 'ann and ben'"
ANN = sheet("c1,yes", "c2,no", "c3,yes", "c4,no")
BEN = sheet("c1,yes", "c2,no", "c3,no", "c4,no")


def swap_body(bundle: Path, manifest: dict) -> None:
    """What the issue's forger did: a sheet swapped for one that scores the same (only a
    comment's text differs), the manifest re-hashed to match."""
    (bundle / "sheets" / "alice.csv").write_text(ALICE.replace("It crashes.", "It works."), encoding="utf-8")


def set_in(*path_and_value: object):
    """A forge step: the manifest's value at a path of keys set, set_in("units", "count", 99)."""
    *path, value = path_and_value

    def change(bundle: Path, manifest: dict) -> None:
        target = manifest
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


def delete_in(*path: str):
    def change(bundle: Path, manifest: dict) -> None:
        target = manifest
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return change


def manifest_text(edit):
    """A setup: the manifest's text edited as text (what JSON parsers disagree on)."""

    def change(bundle: Path) -> None:
        path = bundle / "manifest.json"
        path.write_text(edit(path.read_text(encoding="utf-8")), encoding="utf-8")

    return edit_bundle(change)


def adjudicated(folder: Path) -> None:
    frozen(folder)
    (folder / "decisions.csv").write_text(DECISIONS, encoding="utf-8")
    run_cli(folder, ADJUDICATE.replace("{bundle}", BUNDLE) + " --quiet")


def record_text(edit):
    """A setup: an adjudicated bundle whose record's text is then edited."""

    def setup(folder: Path) -> None:
        adjudicated(folder)
        record = next((folder / BUNDLE / "adjudication").glob("*.json"))
        os.chmod(record, 0o644)
        record.write_text(edit(record.read_text(encoding="utf-8")), encoding="utf-8")

    return setup


def sampled_bundle(change=None, rehash: bool = True):
    """A setup: a bundle frozen with --sample, then (optionally) forged like ``forge``."""

    def setup(folder: Path) -> None:
        sampled()(folder)
        freeze_fixed(folder, ("ann.csv", "ben.csv"), sample="s")
        if change is not None:
            _forge_sampled(folder, change, rehash)

    return setup


def _forge_sampled(folder: Path, change, rehash: bool) -> None:
    from irr_audit.bundle.manifest import canonical_sha256, sha256_hex
    from irr_audit.io.outputs import render_json

    bundle = writable_bundle(folder)
    manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    change(bundle, manifest)
    if rehash:
        for record in manifest["files"]:
            if (bundle / record["path"]).is_file():
                data = (bundle / record["path"]).read_bytes()
                record["sha256"], record["size"] = sha256_hex(data), len(data)
        manifest["integrity"]["sha256"] = canonical_sha256(manifest, "integrity")
    (bundle / "manifest.json").write_text(render_json(manifest), encoding="utf-8")


def printed_digest_verifies(outcome: Outcome) -> None:
    """freeze prints the manifest's sha256; verify --expect takes it as printed."""
    bundle = next(path for path in (outcome.folder / "audits").iterdir() if not path.name.startswith("."))
    digest = hashlib.sha256((bundle / "manifest.json").read_bytes()).hexdigest()
    printed = outcome.stdout + outcome.stderr
    assert digest in printed, "freeze does not print the bundle's digest"
    shown = f"sha256:{digest}" if f"sha256:{digest}" in printed else digest
    run_cli(outcome.folder, f"verify {bundle} --expect {shown}")


CASES = [
    # --- verify: what the manifest's self-hash can and cannot prove ----------------------------------
    Case("verify: a bundle as frozen", VERIFY, setup=frozen, stdout=("OK: bundle",)),
    Case(
        "verify: a forged sheet with a re-hashed manifest passes without an anchor",
        VERIFY,
        setup=forge(swap_body),
        stdout=("OK",),
    ),
    Case(
        "verify: a forged sheet with a re-hashed manifest fails --expect",
        VERIFY + " --expect {digest}",
        setup=forge(swap_body),
        exit=1,
        stdout=("manifest",),
    ),
    Case("verify: --expect the digest freeze printed", VERIFY + " --expect {digest}", setup=frozen, stdout=("OK",)),
    Case(
        "verify: --expect another digest", VERIFY + " --expect " + "0" * 64, setup=frozen, exit=1, stdout=("manifest",)
    ),
    Case("verify: --expect that is no digest", VERIFY + " --expect xyz", setup=frozen, exit=2, says=("--expect",)),
    Case(
        "verify: a forged rule with a re-hashed manifest fails --expect",
        VERIFY + " --expect {digest}",
        setup=forge(
            lambda bundle, manifest: (bundle / "rule/demo/v1.yaml").write_text(
                (bundle / "rule/demo/v1.yaml").read_text() + "x_note: forged\n"
            )
        ),
        exit=1,
    ),
    Case(
        "freeze: prints the digest that verify --expect takes",
        f"freeze {SHEETS} --into audits",
        check=printed_digest_verifies,
    ),
    Case(
        "verify: the manifest edited without a re-hash",
        VERIFY,
        setup=forge(set_in("created", "2020-01-01T00:00:00Z"), rehash=False),
        exit=1,
        stdout=("manifest",),
    ),
    Case(
        "verify: a frozen score edited and re-hashed",
        VERIFY,
        setup=forge(set_in("score", "units", "fully_coded", 2)),
        exit=1,
        stdout=("score",),
    ),
    Case(
        "verify: the unit count edited and re-hashed",
        VERIFY,
        setup=forge(set_in("units", "count", 99)),
        exit=1,
        stdout=("units",),
    ),
    Case(
        "verify: a sheet changed",
        VERIFY,
        setup=edit_bundle(lambda bundle: (bundle / "sheets/alice.csv").write_text(ALICE.replace("d,no", "d,yes"))),
        exit=1,
        stdout=("changed: sheets/alice.csv",),
    ),
    Case(
        "verify: a sheet deleted",
        VERIFY,
        setup=edit_bundle(lambda bundle: (bundle / "sheets/bob.csv").unlink()),
        exit=1,
        stdout=("missing: sheets/bob.csv",),
    ),
    Case(
        "verify: an extra file",
        VERIFY,
        setup=edit_bundle(lambda bundle: (bundle / "sheets/carol.csv").write_text("x")),
        exit=1,
        stdout=("extra: sheets/carol.csv",),
    ),
    Case(
        "verify: a sheet replaced by a symlink to its copy",
        VERIFY,
        setup=edit_bundle(lambda bundle: _symlink_member(bundle, "sheets/alice.csv")),
        exit=1,
        stdout=("sheets/alice.csv",),
    ),
    Case(
        "verify: a manifest path that leaves the bundle",
        VERIFY,
        setup=forge(lambda bundle, manifest: manifest["files"][1].update(path="../../../alice.csv")),
        exit=1,
        stdout=("manifest",),
    ),
    Case(
        "verify: an absolute manifest path",
        VERIFY,
        setup=forge(lambda bundle, manifest: manifest["files"][1].update(path="/etc/passwd")),
        exit=1,
        stdout=("manifest",),
    ),
    Case(
        "verify: a bundle folder renamed",
        "verify audits/renamed",
        setup=chain(frozen, lambda folder: (folder / BUNDLE).rename(folder / "audits/renamed")),
        shows=("renamed",),
    ),
    Case(
        "verify: a manifest holding NaN",
        VERIFY,
        setup=manifest_text(lambda text: re.sub(r'"value": 0\.[0-9]+', '"value": NaN', text, count=1)),
        exit=1,
        stdout=("manifest",),
    ),
    Case(
        "verify: a manifest holding Infinity",
        VERIFY,
        setup=manifest_text(lambda text: text.replace('"count": 4', '"count": Infinity', 1)),
        exit=1,
        stdout=("manifest",),
    ),
    Case(
        "verify: a manifest nested 100,000 deep",
        VERIFY,
        setup=manifest_text(lambda text: text.replace('"recodes": null', '"recodes": ' + deep_json(100_000), 1)),
        exit=1,
        shows=("manifest",),
    ),
    Case(
        "verify: a manifest with a 5,000-digit number",
        VERIFY,
        setup=manifest_text(lambda text: text.replace('"count": 4', '"count": ' + "9" * 5000, 1)),
        exit=1,
        shows=("manifest",),
    ),
    Case(
        "verify: a manifest that is empty", VERIFY, setup=manifest_text(lambda text: ""), exit=1, stdout=("manifest",)
    ),
    Case(
        "verify: a manifest with a BOM",
        VERIFY,
        setup=manifest_text(lambda text: "\ufeff" + text),
        exit=1,
        shows=("is not JSON",),
    ),
    Case(
        "verify: a manifest that is a list",
        VERIFY,
        setup=manifest_text(lambda text: "[]"),
        exit=1,
        stdout=("manifest",),
    ),
    Case(
        "verify: a manifest that is a folder",
        VERIFY,
        setup=edit_bundle(lambda bundle: ((bundle / "manifest.json").unlink(), (bundle / "manifest.json").mkdir())),
        exit=1,
        shows=("manifest",),
    ),
    Case(
        "verify: a manifest that is a symlink",
        VERIFY,
        setup=edit_bundle(lambda bundle: _symlink_member(bundle, "manifest.json")),
        exit=1,
        stdout=("manifest",),
    ),
    Case(
        "verify: no manifest",
        VERIFY,
        setup=edit_bundle(lambda bundle: (bundle / "manifest.json").unlink()),
        exit=1,
        stdout=("manifest",),
    ),
    Case(
        "verify: a manifest whose sample has no summary",
        VERIFY,
        {"ann.csv": ANN, "ben.csv": BEN},
        setup=sampled_bundle(lambda bundle, manifest: manifest["sample"].pop("summary")),
        exit=1,
        shows=("manifest",),
    ),
    Case(
        "verify: a sampled bundle as frozen",
        VERIFY,
        {"ann.csv": ANN, "ben.csv": BEN},
        setup=sampled_bundle(),
        stdout=("OK",),
    ),
    Case(
        "verify: a sample summary deleted",
        VERIFY,
        {"ann.csv": ANN, "ben.csv": BEN},
        setup=sampled_bundle(lambda bundle, manifest: (bundle / "sample/sample.json").unlink(), rehash=False),
        exit=1,
        stdout=("sample/sample.json",),
    ),
    Case(
        "verify: a re-hashed sample ledger with a line that is not JSON",
        VERIFY,
        {"ann.csv": ANN, "ben.csv": BEN},
        setup=sampled_bundle(lambda bundle, manifest: _forge_ledger(bundle, "not json\n")),
        exit=1,
        stdout=("ledger",),
    ),
    Case(
        "verify: a frozen sheet replaced by a named pipe",
        VERIFY,
        setup=edit_bundle(lambda bundle: _fifo_member(bundle, "sheets/alice.csv")),
        exit=1,
        stdout=("sheets/alice.csv",),
        process=True,
        seconds=8,
    ),
    Case("verify: a folder that is no bundle", "verify audits", setup=frozen, exit=2, code="bundle-not-found"),
    Case("verify: a file", "verify alice.csv", exit=2, code="bundle-not-found"),
    Case(
        "verify: an unfinished bundle",
        "verify audits/.x.partial-1",
        setup=write("audits/.x.partial-1/sheets/a.csv", "x"),
        exit=1,
        stdout=("unfinished",),
    ),
    Case(
        "verify: --format json of a changed bundle",
        VERIFY + " --format json",
        setup=edit_bundle(lambda bundle: (bundle / "sheets/bob.csv").unlink()),
        exit=1,
        stdout=('"ok": false',),
    ),
    # --- adjudication records ----------------------------------------------------------------------------
    Case("verify: an adjudicated bundle", VERIFY, setup=adjudicated, stdout=("1 adjudication record",)),
    Case(
        "verify: an adjudication record holding NaN",
        VERIFY,
        setup=record_text(lambda text: text.replace('"final_code": "yes"', '"final_code": NaN', 1)),
        exit=1,
        stdout=("adjudication",),
    ),
    Case(
        "verify: an adjudication record nested 100,000 deep",
        VERIFY,
        setup=record_text(
            lambda text: text.replace('"decisions": [', '"x": ' + deep_json(100_000) + ', "decisions": [', 1)
        ),
        exit=1,
        shows=("adjudication",),
    ),
    Case(
        "verify: an adjudication record edited",
        VERIFY,
        setup=record_text(lambda text: text.replace('"final_code": "yes"', '"final_code": "no"', 1)),
        exit=1,
        stdout=("adjudication",),
    ),
    Case(
        "verify: an adjudication folder that is a file",
        VERIFY,
        setup=edit_bundle(lambda bundle: (bundle / "adjudication").write_text("x")),
        exit=1,
        stdout=("adjudication",),
    ),
    Case("verify: a bundle through a symlink", "verify b", setup=chain(frozen, link("b", BUNDLE)), stdout=("OK",)),
    Case("verify: a bundle path with a trailing slash", "verify {bundle}/", setup=frozen, stdout=("OK",)),
    Case(
        "verify: --format json of a bundle as frozen", VERIFY + " --format json", setup=frozen, stdout=('"ok": true',)
    ),
    Case(
        "adjudicate: the same decisions twice",
        ADJUDICATE,
        {"decisions.csv": DECISIONS},
        setup=adjudicated,
        shows=("nothing new",),
    ),
    Case("adjudicate: decisions with a BOM", ADJUDICATE, {"decisions.csv": "\ufeff" + DECISIONS}, setup=frozen),
    Case(
        "adjudicate: the template filled in, with a formula-like id",
        ADJUDICATE,
        {
            "alice.csv": ALICE.replace("\nc,yes,", "\n=c,yes,"),
            "bob.csv": BOB.replace("\nc,no,", "\n=c,no,"),
            "decisions.csv": "comment_id,coder:alice,coder:bob,code,note\n'=c,yes,no,yes,ok\n",
        },
        setup=frozen,
    ),
    Case("adjudicate: the list of disagreements", "adjudicate {bundle}", setup=frozen, stdout=("comment_id",)),
    Case("adjudicate: decisions recorded", ADJUDICATE, {"decisions.csv": DECISIONS}, setup=frozen),
    Case(
        "adjudicate: decisions without --by",
        "adjudicate {bundle} --decisions decisions.csv",
        {"decisions.csv": DECISIONS},
        setup=frozen,
        exit=2,
        code="usage-adjudicate-by",
    ),
    Case(
        "adjudicate: --by blank",
        "adjudicate {bundle} --decisions decisions.csv --by ' '",
        {"decisions.csv": DECISIONS},
        setup=frozen,
        exit=2,
        code="usage-adjudicate-by",
    ),
    Case(
        "adjudicate: --by with a terminal escape",
        "adjudicate {bundle} --decisions decisions.csv --by 'ann\x1b]0;pwned\x07\x1b[2J'",
        {"decisions.csv": DECISIONS},
        setup=frozen,
        never_shown=("\x1b[2J", "\x1b]0;"),
    ),
    Case(
        "adjudicate: --by of 100,000 characters",
        "adjudicate {bundle} --decisions decisions.csv --by " + "b" * 100_000,
        {"decisions.csv": DECISIONS},
        setup=frozen,
        exit=0,
        shows=("recorded 1 decisions",),
    ),
    Case(
        "adjudicate: decisions not UTF-8",
        ADJUDICATE,
        {"decisions.csv": DECISIONS.encode("utf-16")},
        setup=frozen,
        exit=2,
        code="adjudication-decisions",
        says=("decisions.csv",),
    ),
    Case(
        "adjudicate: decisions with a quote left open",
        ADJUDICATE,
        {"decisions.csv": 'comment_id,code,note\nc,yes,"open\nd,no,x\n'},
        setup=frozen,
        exit=2,
        says=("decisions.csv", "line 2"),
    ),
    Case(
        "adjudicate: a decision for a unit that is no disagreement",
        ADJUDICATE,
        {"decisions.csv": "comment_id,code,note\na,yes,\n"},
        setup=frozen,
        exit=2,
        says=("decisions.csv", "row 2"),
    ),
    Case(
        "adjudicate: a decision with a code of no rule",
        ADJUDICATE,
        {"decisions.csv": "comment_id,code,note\nc,maybe,\n"},
        setup=frozen,
        exit=2,
        says=("decisions.csv", "row 2"),
    ),
    Case(
        "adjudicate: a unit decided twice",
        ADJUDICATE,
        {"decisions.csv": "comment_id,code,note\nc,yes,\nc,no,\n"},
        setup=frozen,
        exit=2,
        says=("decisions.csv", "row 3"),
    ),
    Case(
        "adjudicate: decisions without a code column",
        ADJUDICATE,
        {"decisions.csv": "comment_id,final\nc,yes\n"},
        setup=frozen,
        exit=2,
        says=("decisions.csv", "code"),
    ),
    Case(
        "adjudicate: an empty decisions file",
        ADJUDICATE,
        {"decisions.csv": ""},
        setup=frozen,
        exit=2,
        says=("decisions.csv",),
    ),
    Case("adjudicate: a missing decisions file", ADJUDICATE, setup=frozen, exit=2, code="adjudication-decisions"),
    Case(
        "adjudicate: a named pipe as decisions",
        ADJUDICATE,
        setup=chain(frozen, fifo("decisions.csv")),
        exit=2,
        says=("decisions.csv",),
        process=True,
        seconds=8,
    ),
    Case(
        "adjudicate: /dev/zero as decisions",
        ADJUDICATE,
        setup=chain(frozen, link("decisions.csv", "/dev/zero")),
        exit=2,
        says=("decisions.csv",),
        process=True,
        memory_mb=768,
        seconds=30,
    ),
    Case(
        "adjudicate: a folder as decisions",
        ADJUDICATE,
        setup=chain(frozen, lambda f: (f / "decisions.csv").mkdir()),
        exit=2,
        code="adjudication-decisions",
    ),
    Case(
        "adjudicate: a frozen sheet as decisions",
        "adjudicate {bundle} --decisions {bundle}/sheets/alice.csv --by x",
        setup=frozen,
        exit=2,
        says=("alice.csv",),
    ),
    Case(
        "adjudicate: a note like a formula",
        ADJUDICATE,
        {"decisions.csv": 'comment_id,code,note\nc,yes,=HYPERLINK("http://x")\n'},
        setup=frozen,
    ),
    Case(
        "adjudicate: a hundred thousand unknown units",
        ADJUDICATE,
        {"decisions.csv": lambda: ("comment_id,code\n" + "".join(f"u{i},yes\n" for i in range(100_000))).encode()},
        setup=frozen,
        exit=2,
        says=("decisions.csv", "row 2"),
    ),
    Case(
        "adjudicate: --output with --decisions",
        ADJUDICATE + " --output x.csv",
        {"decisions.csv": DECISIONS},
        setup=frozen,
        exit=2,
        code="usage-adjudicate",
    ),
    Case(
        "adjudicate: a changed bundle",
        ADJUDICATE,
        {"decisions.csv": DECISIONS},
        setup=forge(set_in("created", "2020-01-01T00:00:00Z"), rehash=False),
        exit=2,
        code="bundle-altered",
    ),
    Case("adjudicate: a folder that is no bundle", "adjudicate audits", setup=frozen, exit=2, code="bundle-not-found"),
    Case(
        "adjudicate: an edited record stops it",
        ADJUDICATE,
        {"decisions.csv": DECISIONS},
        setup=record_text(lambda text: text.replace('"final_code": "yes"', '"final_code": "no"', 1)),
        exit=2,
        code="bundle-adjudication",
    ),
    # --- a bundle as the input of score, report and freeze --recodes --------------------------------------
    Case("score: a bundle", "score {bundle} --format json", setup=frozen),
    Case(
        "score: a bundle with a changed sheet",
        "score {bundle}",
        setup=edit_bundle(lambda bundle: (bundle / "sheets/alice.csv").write_text(ALICE.replace("d,no", "d,yes"))),
        exit=2,
        code="bundle-altered",
        says=("sheets/alice.csv",),
    ),
    Case("score: a bundle reached through a symlink", "score b --format json", setup=chain(frozen, link("b", BUNDLE))),
    Case(
        "score: a bundle with a manifest path through a symlink",
        "score {bundle}",
        setup=edit_bundle(lambda bundle: _symlink_folder(bundle, "sheets")),
        exit=2,
        says=("sheets",),
    ),
    Case(
        "report: a bundle with another --rule",
        "report {bundle} --rule other.yaml",
        {"other.yaml": "rule: other\nversion: 1\nscale: nominal\ncodes: [a, b]\n"},
        setup=frozen,
        exit=2,
        code="usage-rule-mismatch",
    ),
    Case(
        "report: an adjudicated bundle",
        "report {bundle} --format md",
        setup=adjudicated,
        stdout=("Both read it as a failure.",),
    ),
    Case(
        "freeze: --recodes a bundle of another rule",
        "freeze ann.csv ben.csv --rule other.yaml --into audits --recodes {bundle}",
        {
            "ann.csv": ANN,
            "ben.csv": BEN,
            "other.yaml": 'rule: other\nversion: 1\nscale: nominal\ncodes: ["yes", "no"]\n',
        },
        setup=frozen,
        exit=2,
        code="usage-recodes-rule",
    ),
    Case(
        "freeze: --recodes a changed bundle",
        "freeze ann.csv ben.csv --rule rule.yaml --into new --recodes {bundle}",
        {"ann.csv": ANN, "ben.csv": BEN},
        setup=forge(set_in("created", "2020-01-01T00:00:00Z"), rehash=False),
        exit=2,
        code="bundle-altered",
    ),
    Case(
        "freeze: --recodes a folder that is no bundle",
        "freeze ann.csv ben.csv --rule rule.yaml --into audits --recodes nowhere",
        {"ann.csv": ANN, "ben.csv": BEN},
        exit=2,
        code="bundle-not-found",
    ),
    Case(
        "rules check: --audits with a manifest nested 100,000 deep",
        "rules check rules --audits audits",
        {"rules/demo/v1.yaml": RULE},
        setup=manifest_text(lambda text: text.replace('"recodes": null', '"recodes": ' + deep_json(100_000), 1)),
        exit=1,
        shows=("bundle-manifest-invalid",),
    ),
]


def _symlink_member(bundle: Path, member: str) -> None:
    original = bundle / member
    copy = bundle.parent.parent / ("copy-of-" + original.name)
    copy.write_bytes(original.read_bytes())
    original.unlink()
    os.symlink(copy, original)


def _fifo_member(bundle: Path, member: str) -> None:
    (bundle / member).unlink()
    os.mkfifo(bundle / member)


def _symlink_folder(bundle: Path, member: str) -> None:
    original = bundle / member
    moved = bundle.parent.parent / "moved-sheets"
    original.rename(moved)
    os.symlink(moved, original)


def _forge_ledger(bundle: Path, line: str) -> None:
    """A line added to the frozen ledger, and sample.json's record of its sha256 made to match."""
    ledger = bundle / "sample" / "ledger.jsonl"
    with open(ledger, "a", encoding="utf-8") as stream:
        stream.write(line)
    summary_path = bundle / "sample" / "sample.json"
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    summary["ledger"]["sha256"] = hashlib.sha256(ledger.read_bytes()).hexdigest()
    summary_path.write_text(json.dumps(summary), encoding="utf-8")
