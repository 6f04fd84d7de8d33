"""SSH signatures of bundles and adjudication records, through OpenSSH's ssh-keygen.

`ssh-keygen -Y sign` and `-Y verify` are what git uses to sign commits with an SSH
key: the signer keeps a private key, and reviewers keep an ``allowed_signers`` file
(one line per person: ``alice@example.org ssh-ed25519 AAAA...``). irr-audit signs
the exact bytes of manifest.json (or of an adjudication record) under its own
namespace, so a signature made for git or for anything else never passes for one.

ssh-keygen runs as a separate program, given an argument list (no shell) and a
time limit; the data goes through its standard input.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from irr_audit.errors import IrrAuditError
from irr_audit.io.display import shortened

NAMESPACE = "irr-audit"
SIGNATURE_SUFFIX = ".sig"
# Signing may ask for the key's passphrase on the terminal; verifying never waits for anyone.
SIGN_TIMEOUT_SECONDS = 300
VERIFY_TIMEOUT_SECONDS = 60
# An SSH signature is under 2 KB even for a 16384-bit RSA key.
SIGNATURE_MAX_BYTES = 64 * 1024


class SigningError(IrrAuditError):
    code = "signing-failed"


@dataclass(frozen=True)
class SignatureCheck:
    """The outcome of checking one signature: who signed, or why it does not verify."""

    signer: str | None
    problem: str | None = None


def ssh_keygen() -> str:
    """The ssh-keygen program, or a SigningError saying how to get it."""
    program = shutil.which("ssh-keygen")
    if program is None:
        raise SigningError(
            "ssh-keygen was not found; it signs and checks signatures.",
            hint="install OpenSSH (the openssh-client package on Debian and Ubuntu), or leave out the signing options.",
            code="signing-unavailable",
        )
    return program


def _run(arguments: list[str], data: bytes, timeout: int, what: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(arguments, input=data, capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise SigningError(
            f"ssh-keygen did not finish {what} within {timeout} s.",
            hint="check the key (a passphrase prompt that nobody answers waits forever).",
        ) from None
    except OSError as exc:
        raise SigningError(
            f"ssh-keygen could not be run ({exc.strerror}).",
            hint="check the OpenSSH installation.",
            code="signing-unavailable",
        ) from None


def said(completed: subprocess.CompletedProcess[bytes]) -> str:
    """What ssh-keygen said, on one line of printable text (it may quote a file's bytes)."""
    text = (
        (completed.stderr or b"").decode("utf-8", "replace")
        + "\n"
        + (completed.stdout or b"").decode("utf-8", "replace")
    )
    lines = (" ".join("".join(ch if ch.isprintable() else " " for ch in line).split()) for line in text.splitlines())
    words = "; ".join(line for line in lines if line and not re.fullmatch(r"@+", line))
    words = words or f"exit status {completed.returncode}"
    return shortened(words, 300)


def sign(data: bytes, key: Path) -> bytes:
    """An SSH signature of ``data`` with the private key in ``key`` (or the agent's key
    for a public key file), under the irr-audit namespace."""
    if not key.is_file():
        raise SigningError(
            f"--sign {key} is not a key file.",
            hint="pass an SSH private key, e.g. ~/.ssh/id_ed25519.",
            code="usage-sign-key",
        )
    completed = _run(
        [ssh_keygen(), "-Y", "sign", "-f", str(key), "-n", NAMESPACE], data, SIGN_TIMEOUT_SECONDS, "signing"
    )
    signature = completed.stdout
    if completed.returncode != 0 or not signature.startswith(b"-----BEGIN SSH SIGNATURE-----"):
        raise SigningError(
            f"ssh-keygen could not sign with {key}: {said(completed)}.",
            hint="pass an SSH private key readable only by you (chmod 600), e.g. one made with ssh-keygen -t ed25519.",
        )
    return signature


def check_sign_key(key: Path | None) -> None:
    """Before anything is read or written: ssh-keygen is there and the key is a file."""
    if key is None:
        return
    ssh_keygen()
    if not key.is_file():
        raise SigningError(
            f"--sign {key} is not a key file.",
            hint="pass an SSH private key, e.g. ~/.ssh/id_ed25519.",
            code="usage-sign-key",
        )


def check_allowed_signers(path: Path) -> None:
    """Before anything runs: the allowed signers file must be a readable file."""
    if not path.is_file():
        raise SigningError(
            f"--allowed-signers {path} is not a file.",
            hint="pass a file of lines '<identity> <key type> <public key>', as git uses.",
            code="usage-allowed-signers",
        )


def check_signature(data: bytes, signature: bytes, allowed_signers: Path, identity: str | None) -> SignatureCheck:
    """Whether ``signature`` is a good irr-audit signature of ``data`` by a key in
    ``allowed_signers`` (and, given ``identity``, by that identity's key)."""
    if len(signature) > SIGNATURE_MAX_BYTES:
        return SignatureCheck(None, f"is {len(signature)} bytes, beyond the signature limit of {SIGNATURE_MAX_BYTES}")
    program = ssh_keygen()
    # ssh-keygen reads the signature from a file: a private copy of the bytes already
    # read, never the bundle's file itself (which could change or be a pipe).
    with tempfile.TemporaryDirectory(prefix="irr-audit-sig-") as folder:
        copy = Path(folder) / "signature.sig"
        copy.write_bytes(signature)
        wanted = identity
        if identity is None:
            names, found = _principals(program, copy, allowed_signers)
            if not names:
                return SignatureCheck(None, f"is not signed by any key in {allowed_signers} ({said(found)})")
            identity = names[0]
        checked = _run(
            [program, "-Y", "verify", "-f", str(allowed_signers), "-I", identity, "-n", NAMESPACE, "-s", str(copy)],
            data,
            VERIFY_TIMEOUT_SECONDS,
            "checking a signature",
        )
        if checked.returncode != 0 and wanted is not None:
            signers, _ = _principals(program, copy, allowed_signers)
            if signers and wanted not in signers:
                return SignatureCheck(
                    None, f"is signed by the key of {', '.join(signers)} in {allowed_signers}, not by {wanted}'s"
                )
    if checked.returncode != 0:
        return SignatureCheck(None, f"does not verify as signed by {identity} in {allowed_signers} ({said(checked)})")
    return SignatureCheck(identity)


def _principals(
    program: str, signature: Path, allowed_signers: Path
) -> tuple[list[str], subprocess.CompletedProcess[bytes]]:
    """The identities in allowed_signers whose key made ``signature`` (not yet checked
    against any data), and what ssh-keygen said."""
    found = _run(
        [program, "-Y", "find-principals", "-s", str(signature), "-f", str(allowed_signers)],
        b"",
        VERIFY_TIMEOUT_SECONDS,
        "looking up the signer",
    )
    names = [line.strip() for line in found.stdout.decode("utf-8", "replace").splitlines() if line.strip()]
    return (names if found.returncode == 0 else []), found
