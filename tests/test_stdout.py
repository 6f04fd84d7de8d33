"""What every command writes to standard output: UTF-8 whatever the locale says (the bytes
``--output`` writes), and, when it cannot be written (redirected to a full disk: /dev/full),
exit 2 and one message, never a traceback or a bug report."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from irr_audit.cli.shared import to_stdout
from irr_audit.errors import OutputError

ROOT = Path(__file__).resolve().parents[1]
RULE = str(ROOT / "rules" / "explicit_current_failure" / "v1.yaml")
FULL = Path("/dev/full")  # every write fails with ENOSPC (Linux)
SHEETS = ["{home}/zoë.csv", "{home}/bö.csv"]  # coders named beyond ASCII

COMMANDS = [
    ["score", *SHEETS, "--rule", RULE],
    ["score", *SHEETS, "--rule", RULE, "--format", "json"],
    *(["report", *SHEETS, "--rule", RULE, "--format", form] for form in ("text", "md", "json", "html", "methods")),
    ["compare", "{home}/J", "{home}/J", "--bootstrap", "100", "--seed", "1"],
    ["verify", "{bundle}"],
    ["verify", "{bundle}", "--format", "json"],
    ["labels", "{bundle}"],
    ["adjudicate", "{bundle}"],
    ["rules", "diff", RULE, RULE],
    ["rules", "check", "{home}/règles"],  # its problems go to stdout
    ["plan", "alpha", "--min", "0.8", "--codes", "2"],
    ["plan", "alpha", "--min", "0.8", "--codes", "2", "--format", "json"],
    ["--help"],  # help and the version are written as the commands' output is
    ["score", "--help"],
    ["plan", "--help"],
    ["rules", "check", "--help"],
    ["--version"],
]
IDS = [f"{at}-{command[0].lstrip('-')}" for at, command in enumerate(COMMANDS)]


def irr_audit(args: list[str], stdout=subprocess.PIPE, encoding: str | None = None) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONIOENCODING": encoding} if encoding else None
    return subprocess.run(
        [sys.executable, "-m", "irr_audit", *args], stdout=stdout, stderr=subprocess.PIPE, env=environment
    )


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    home = tmp_path_factory.mktemp("stdout")
    shutil.copy(ROOT / "examples" / "sheets" / "alice.csv", home / "zoë.csv")
    shutil.copy(ROOT / "examples" / "sheets" / "bob.csv", home / "bö.csv")
    sheets = [str(home / "zoë.csv"), str(home / "bö.csv")]
    assert irr_audit(["join", *sheets, "--rule", RULE, "--out", str(home / "J"), "-q"]).returncode == 0
    assert irr_audit(["freeze", str(home / "J"), "--into", str(home / "audits"), "-q"]).returncode == 0
    (bundle,) = [path for path in (home / "audits").iterdir() if path.is_dir()]
    skipped = home / "règles" / "explicit_current_failure"
    skipped.mkdir(parents=True)
    (skipped / "v3.yaml").write_bytes(Path(RULE).read_bytes())  # says version 1, and v1 and v2 are missing
    return {"home": str(home), "bundle": str(bundle)}


def filled(command: list[str], places: dict[str, str]) -> list[str]:
    return [word.format(**places) for word in command]


@pytest.mark.parametrize("command", COMMANDS, ids=IDS)
def test_standard_output_is_utf8_whatever_the_locale_says(command: list[str], places: dict[str, str]) -> None:
    args = filled(command, places)
    names_coders = command[0] in ("score", "report", "labels") and "--help" not in command  # shows the coders
    encodings = ("utf-8", "ascii", "latin-1") if names_coders else ("utf-8", "ascii")
    shown = {encoding: irr_audit(args, encoding=encoding) for encoding in encodings}
    assert shown["utf-8"].returncode in (0, 1) and shown["utf-8"].stdout, shown["utf-8"].stderr
    for encoding, outcome in shown.items():
        assert (outcome.returncode, outcome.stdout) == (shown["utf-8"].returncode, shown["utf-8"].stdout), encoding
        assert b"Traceback" not in outcome.stderr
    assert not names_coders or "zoë".encode() in shown["ascii"].stdout


@pytest.mark.skipif(not FULL.exists(), reason="no /dev/full on this system (it is Linux's)")
@pytest.mark.parametrize("command", COMMANDS, ids=IDS)
def test_standard_output_on_a_full_disk_is_exit_2_and_one_message(command: list[str], places: dict[str, str]) -> None:
    with FULL.open("w") as full:
        refused = irr_audit(filled(command, places), stdout=full)
    message = refused.stderr.decode("utf-8")
    assert refused.returncode == 2, message
    assert "Traceback" not in message and "bug" not in message
    assert message.count("Error [") == 1
    assert f"Error [output-unwritable]: cannot write to standard output: {os.strerror(28)}" in message


def on_a_terminal(args: list[str], encoding: str) -> tuple[int, bytes, bytes]:
    """``args`` run with a pseudo-terminal as standard output whose encoding is ``encoding``:
    the exit code, what the terminal got, and stderr."""
    pty = pytest.importorskip("pty", reason="pseudo-terminals are POSIX's")
    leader, follower = pty.openpty()
    environment = {**os.environ, "PYTHONIOENCODING": encoding, "COLUMNS": "100"}
    command = [sys.executable, "-m", "irr_audit", *args]
    with subprocess.Popen(command, stdout=follower, stderr=subprocess.PIPE, env=environment) as process:
        os.close(follower)
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 1 << 16)
            except OSError:  # the terminal closed with the process
                break
            if not chunk:
                break
            shown += chunk
        errors = process.stderr.read() if process.stderr else b""
    os.close(leader)
    return process.returncode, shown, errors


@pytest.mark.parametrize(
    "command", [COMMANDS[0], COMMANDS[2], ["labels", "{bundle}"]], ids=["score", "report", "labels"]
)
def test_a_terminal_gets_its_own_encoding_with_escapes_for_what_it_lacks(
    command: list[str], places: dict[str, str]
) -> None:
    code, shown, errors = on_a_terminal(filled(command, places), "ascii")
    assert code == 0 and b"Traceback" not in errors, errors
    assert b"zo\\xeb" in shown and max(shown) < 128
    code, shown, errors = on_a_terminal(filled(command, places), "utf-8")
    assert code == 0 and "zoë".encode() in shown, errors


class ShortWrites(io.RawIOBase):
    """A file that takes at most ``step`` bytes a write, as an unbuffered standard output does
    (``python -u``, PYTHONUNBUFFERED), and, past ``room`` bytes, fails as a full disk does."""

    def __init__(self, step: int, room: int) -> None:
        self.step, self.room, self.taken = step, room, bytearray()

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:  # type: ignore[override]
        fits = min(self.step, self.room - len(self.taken), len(data))
        if fits <= 0:
            raise OSError(28, os.strerror(28))
        self.taken += bytes(data[:fits])
        return fits


def unbuffered_stdout(raw: ShortWrites) -> io.TextIOWrapper:
    return io.TextIOWrapper(raw, encoding="utf-8", write_through=True)  # type: ignore[arg-type]


@pytest.mark.parametrize("text", ["é" * 5000, "é".encode() * 5000], ids=["text", "bytes"])
def test_an_unbuffered_standard_output_gets_every_byte_of_short_writes(text, monkeypatch) -> None:
    raw = ShortWrites(step=4096, room=1 << 20)
    monkeypatch.setattr(sys, "stdout", unbuffered_stdout(raw))
    to_stdout(text)
    assert bytes(raw.taken) == "é".encode() * 5000


def test_an_unbuffered_standard_output_that_fills_up_is_output_unwritable(monkeypatch) -> None:
    monkeypatch.setattr(sys, "stdout", unbuffered_stdout(ShortWrites(step=1 << 20, room=3000)))
    with pytest.raises(OutputError) as refused:
        to_stdout("x" * 10_000)  # the first write takes 3,000 bytes and returns; the second fails
    assert refused.value.code == "output-unwritable" and os.strerror(28) in str(refused.value)
