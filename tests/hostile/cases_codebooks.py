"""Codebooks as a confused author writes them (`--codebook`, `rules check`): each is refused
with one message naming the codebook or rule file, the key, and the fix."""

from __future__ import annotations

import json
import os
from pathlib import Path

from kit import FROZEN_AT, Case

IMPORT = "import model labels.jsonl --codebook codebook.yaml --out imported"
FAILURE = 'rule: failure\nversion: 1\nscale: nominal\ncodes: ["yes", "no"]\nchangelog: First version.\n'
SEVERITY = (
    "rule: severity\nversion: 1\nscale: ordinal\ncodes: [low, high]\n"
    'applies_when: {rule: failure, codes: ["yes"]}\nchangelog: First version.\n'
)
LABELS = '{"comment_id": "a", "model": "m", "failure": "yes", "severity": "low"}\n'


def book(*entries: str) -> str:
    return "codebook: study\nversion: 1\nrules:\n" + "".join(f"  - {entry}\n" for entry in entries)


GOOD = book("{rule: failure, version: 1}", "{rule: severity, version: 1}")


def files(codebook: str = GOOD, severity: str = SEVERITY) -> dict[str, str]:
    return {
        "labels.jsonl": LABELS,
        "codebook.yaml": codebook,
        "rules/failure/v1.yaml": FAILURE,
        "rules/severity/v1.yaml": severity,
    }


CASES = [
    Case("codebook: a valid one imports", IMPORT, files(), exit=0, shows=("2 variables of study v1",)),
    Case(
        "codebook: malformed YAML",
        IMPORT,
        files(codebook="codebook: study\nrules: [{rule: failure\n"),
        exit=2,
        code="codebook-yaml",
        says=("codebook.yaml", "line"),
    ),
    Case(
        "codebook: a rule version that has no file",
        IMPORT,
        files(codebook=book("{rule: failure, version: 2}")),
        exit=2,
        code="codebook-rule-not-found",
        says=("codebook.yaml", "rules/failure/v2.yaml"),
    ),
    Case(
        "codebook: the rule file says another version than its name",
        IMPORT,
        files(severity=SEVERITY.replace("version: 1", "version: 3")),
        exit=2,
        code="codebook-version-mismatch",
        says=("codebook.yaml", "rules[1].version", "version: 3"),
    ),
    Case(
        "codebook: applies_when names no variable of the codebook",
        IMPORT,
        files(codebook=book("{rule: severity, version: 1}")),
        exit=2,
        code="codebook-condition-unknown",
        says=("codebook.yaml", "applies_when.rule", "failure"),
    ),
    Case(
        "codebook: applies_when names a later variable",
        IMPORT,
        files(codebook=book("{rule: severity, version: 1}", "{rule: failure, version: 1}")),
        exit=2,
        code="codebook-condition-order",
        says=("codebook.yaml", "comes after it"),
    ),
    Case(
        "codebook: applies_when lists a code the parent lacks",
        IMPORT,
        files(severity=SEVERITY.replace('codes: ["yes"]', 'codes: ["maybe"]')),
        exit=2,
        code="codebook-condition-code",
        says=("codebook.yaml", "'maybe'", "applies_when.codes"),
    ),
    Case(
        "codebook: a variable named like a sheet column",
        IMPORT,
        files(codebook=book("{rule: comment_id, version: 1}")),
        exit=2,
        code="codebook-invalid",
        says=("codebook.yaml", "rules[0].rule"),
    ),
    Case(
        "codebook: the same rule twice",
        IMPORT,
        files(codebook=book("{rule: failure, version: 1}", "{rule: failure, version: 1}")),
        exit=2,
        code="codebook-duplicate-rule",
        says=("codebook.yaml", "rules[1].rule"),
    ),
    Case(
        "codebook: an empty rules list",
        IMPORT,
        files(codebook="codebook: study\nversion: 1\nrules: []\n"),
        exit=2,
        code="codebook-invalid",
        says=("codebook.yaml", "key rules"),
    ),
    Case(
        "codebook: more variables than the limit",
        IMPORT + " --limit codebook_rules=1",
        files(),
        exit=2,
        code="limit-codebook-rules",
        says=("codebook.yaml", "codebook_rules"),
    ),
    Case(
        "codebook: nested past the depth limit",
        IMPORT,
        files(codebook="codebook: study\nx_deep: " + "[" * 100 + "]" * 100 + "\n"),
        exit=2,
        code="limit-depth",
        says=("codebook.yaml", "depth"),
    ),
    Case(
        "codebook: a folder given as the codebook",
        IMPORT.replace("codebook.yaml", "rules"),
        files(),
        exit=2,
        code="codebook-not-a-file",
        says=("rules",),
    ),
    Case(
        "codebook: --rule and --codebook together",
        IMPORT + " --rule rules/failure/v1.yaml",
        files(),
        exit=2,
        code="usage-rule-or-codebook",
        says=("--rule", "--codebook"),
    ),
    Case(
        "rules check: a codebook in the wrong folder",
        "rules check rules --codebooks books",
        {"rules/failure/v1.yaml": FAILURE, "rules/severity/v1.yaml": SEVERITY, "books/other/v1.yaml": GOOD},
        exit=1,
        shows=("codebook-folder-mismatch", "books/other/v1.yaml"),
    ),
]


# --- codebook bundles (freeze --codebook): forged, escaping, altered ---------------------------

WIDE_ALICE = "comment_id,failure,severity\na,yes,low\nb,no,\nc,yes,high\nd,no,\n"
WIDE_BOB = "comment_id,failure,severity\na,yes,high\nb,no,low\nc,yes,high\nd,yes,low\n"
BOOK_FILES = {**files(), "alice.csv": WIDE_ALICE, "bob.csv": WIDE_BOB}
BOOK_BUNDLE = f"audits/{FROZEN_AT.strftime('%Y%m%dT%H%M%SZ')}_study_v1"


def frozen_book(change=None, rehash: bool = True):
    """A setup: the codebook's sheets frozen at a fixed time; then ``change(bundle, manifest)``
    and, with ``rehash``, the manifest's records and integrity re-hashed as a careful forger would."""

    def setup(folder: Path) -> None:
        from irr_audit.bundle.codebook import collect_codebook_source, freeze_codebook
        from irr_audit.bundle.manifest import canonical_sha256, sha256_hex
        from irr_audit.io.outputs import render_json

        here = Path.cwd()
        os.chdir(folder)
        try:
            source = collect_codebook_source([Path("alice.csv"), Path("bob.csv")], Path("codebook.yaml"))
            bundle = folder / freeze_codebook(source, Path("audits"), FROZEN_AT).path
        finally:
            os.chdir(here)
        if change is None:
            return
        for root, _, names in os.walk(bundle):
            for name in names:
                os.chmod(Path(root) / name, 0o644)
        manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
        change(bundle, manifest)
        if rehash:
            for record in manifest["files"]:
                member = bundle / record["path"]
                if member.is_file():
                    record["sha256"], record["size"] = sha256_hex(member.read_bytes()), member.stat().st_size
            manifest["integrity"]["sha256"] = canonical_sha256(manifest, "integrity")
        (bundle / "manifest.json").write_text(render_json(manifest), encoding="utf-8")

    return setup


def _escape(bundle: Path, manifest: dict) -> None:
    manifest["rules"][0]["file"] = "rule/../../../../etc/passwd"


def _recode(bundle: Path, manifest: dict) -> None:
    sheet = bundle / "sheets" / "bob.csv"
    sheet.write_text(sheet.read_text().replace("d,yes,low", "d,no,low"))


CASES += [
    Case("codebook bundle: verifies as frozen", f"verify {BOOK_BUNDLE}", BOOK_FILES, setup=frozen_book(), exit=0),
    Case(
        "codebook bundle: a manifest path out of the bundle",
        f"verify {BOOK_BUNDLE}",
        BOOK_FILES,
        setup=frozen_book(_escape),
        exit=1,
        shows=("rules must list",),
    ),
    Case(
        "codebook bundle: labels of a manifest path out of the bundle",
        f"labels {BOOK_BUNDLE}",
        BOOK_FILES,
        setup=frozen_book(_escape),
        exit=2,
        code="bundle-altered",
        says=("rules must list",),
    ),
    Case(
        "codebook bundle: a sheet recoded and the manifest re-hashed",
        f"verify {BOOK_BUNDLE}",
        BOOK_FILES,
        setup=frozen_book(_recode),
        exit=1,
        shows=("score",),
    ),
    Case(
        "codebook bundle: a sheet recoded, not re-hashed",
        f"labels {BOOK_BUNDLE}",
        BOOK_FILES,
        setup=frozen_book(_recode, rehash=False),
        exit=2,
        code="bundle-altered",
        says=("sheets/bob.csv",),
    ),
    Case(
        "codebook bundle: report audits every variable of it",
        f"report {BOOK_BUNDLE} --format json",
        BOOK_FILES,
        setup=frozen_book(),
        exit=0,
        shows=('"reliability"',),
    ),
    Case(
        "codebook bundle: report --rule refuses it by name",
        f"report {BOOK_BUNDLE} --rule rules/failure/v1.yaml --format json",
        BOOK_FILES,
        setup=frozen_book(),
        exit=2,
        code="bundle-codebook-not-yet",
        says=("codebook audit",),
    ),
]
