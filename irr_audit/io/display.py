"""Text from files, made safe to show: control characters become visible escapes.

A sheet cell, a file name or an adjudication note can hold characters that a
terminal obeys instead of showing (ESC sequences that set the window title or
clear the screen, a carriage return or backspace that overwrites what was
printed, C1 controls) or that reorder what is shown (bidirectional overrides,
as in "Trojan source" spoofing). Every piece of such text that irr-audit shows
on a terminal, in Markdown or in HTML goes through :func:`visible` first.
Ordinary Unicode (accents, CJK, emoji, right-to-left letters) is left as it is.
"""

from __future__ import annotations

import re

# C0 controls other than tab, line feed and carriage return; DEL and the C1
# controls; the Unicode Bidi_Control characters; the line and paragraph
# separators, which some programs break lines on.
# Lone surrogates are the bytes of a file name that were not UTF-8 (os.fsdecode keeps them
# as U+DC80-U+DCFF); no terminal or file can show them as they are.
NOT_WHITESPACE = (
    "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff"
)
_CONTROL = re.compile(f"[\t\n\r{NOT_WHITESPACE}]")
_CONTROL_NOT_WHITESPACE = re.compile(f"[{NOT_WHITESPACE}]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def escape_control(character: str) -> str:
    """One control character as the escape Python would write for it.

    >>> escape_control("\\x1b"), escape_control("\\u202e"), escape_control("\\n")
    ('\\\\x1b', '\\\\u202e', '\\\\n')
    """
    code = ord(character)
    if 0xDC80 <= code <= 0xDCFF:  # a byte of a file name that was not UTF-8
        return f"\\x{code - 0xDC00:02x}"
    return _NAMED.get(character) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def visible(text: str, *, keep_whitespace: bool = False) -> str:
    """``text`` with every control character written as a visible escape.

    ``keep_whitespace`` keeps tab, line feed and carriage return (for HTML, where
    they are only white space); a terminal line gets them escaped too.

    >>> visible("ok \\x1b]0;title\\x07 \\u202eabc"), visible("caf\\u00e9 \\u6f22 \\U0001f600")
    ('ok \\\\x1b]0;title\\\\x07 \\\\u202eabc', 'café 漢 😀')
    """
    pattern = _CONTROL_NOT_WHITESPACE if keep_whitespace else _CONTROL
    if pattern.search(text) is None:
        return text
    return pattern.sub(lambda match: escape_control(match.group()), text)


def printable(text: str, at_most: int = 160) -> str:
    """Text from a file, fit for one line of a message: control characters escaped, shortened."""
    shown = re.sub(r"[\x00-\x1f\x7f-\x9f]", lambda match: f"\\x{ord(match.group()):02x}", text)
    return shown if len(shown) <= at_most else shown[: at_most - 3] + "..."
