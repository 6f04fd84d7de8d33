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
from collections.abc import Iterable

# The C0 controls, DEL and the C1 controls: never part of an id or a name. Written with
# escapes, so that pyarrow's regular expressions (RE2) read the pattern as Python's do.
_C0_DEL_C1 = r"\x00-\x1f\x7f-\x9f"
CONTROL = re.compile(f"[{_C0_DEL_C1}]")
# Shown as escapes too: the Unicode Bidi_Control characters, the line and paragraph
# separators (some programs break lines on them), and lone surrogates (the bytes of a file
# name that were not UTF-8: os.fsdecode keeps them as U+DC80-U+DCFF; nothing can show them).
_REORDERING = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff"
UNSHOWN = re.compile(f"[{_C0_DEL_C1}{_REORDERING}]")
# The same but tab, line feed and carriage return: white space where the text is a document.
UNSHOWN_BUT_WHITESPACE = re.compile(rf"(?![\t\n\r]){UNSHOWN.pattern}")
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
    pattern = UNSHOWN_BUT_WHITESPACE if keep_whitespace else UNSHOWN
    if pattern.search(text) is None:
        return text
    return pattern.sub(lambda match: escape_control(match.group()), text)


def shortened(text: str, at_most: int = 80, *, ellipsis: str = "...") -> str:
    """``text`` cut to ``at_most`` characters, the ellipsis included, when it is longer.

    >>> shortened("abcdefgh", 6), shortened("abc", 6), shortened("abcdefgh", 6, ellipsis="\\u2026")
    ('abc...', 'abc', 'abcde…')
    """
    return text if len(text) <= at_most else text[: at_most - len(ellipsis)] + ellipsis


def listed(names: Iterable[str], shown: int = 5) -> str:
    """A list that can be long, for a message: the first ``shown`` names and how many more.

    >>> listed(["a", "b"]), listed("abcdefg")
    ('a, b', 'a, b, c, d, e and 2 more')
    """
    names = list(names)
    text = ", ".join(names[:shown])
    return text + (f" and {len(names) - shown:,} more" if len(names) > shown else "")


def printable(text: str, at_most: int = 160) -> str:
    """Text from a file, fit for one line of a message: :func:`visible`, then :func:`shortened`."""
    return shortened(visible(text), at_most)


def prose(text: object) -> str:
    """User text quoted into a sentence (a rule's question, a coder's or a codebook's name): each
    run of white space, line breaks and tabs included, one space, none at either end, so that a
    YAML block (``question: |``) does not break the sentence it is quoted in; any other control
    character as its visible escape.

    >>> prose("Does it\\n\\tfail?  \\n"), prose("a\\u2028b\\x1b")
    ('Does it fail?', 'a b\\\\x1b')
    """
    return visible(" ".join(str(text).split()))


def shown_against(value: float, threshold: float, digits: int = 4) -> tuple[str, str]:
    """``value`` at ``digits`` decimals, or at as many more as it takes to stay on its side of
    ``threshold``, and the threshold in its shortest form: a gate's message must never read
    '0.7230 is below 0.72296'.

    >>> shown_against(0.722957, 0.72296)
    ('0.722957', '0.72296')
    >>> shown_against(0.65, 0.8)
    ('0.6500', '0.8')
    """
    limit = f"{threshold:g}" if float(f"{threshold:g}") == threshold else repr(float(threshold))
    for places in range(digits, 18):
        text = f"{value:.{places}f}"
        if float(text) != threshold and (float(text) < threshold) == (value < threshold):
            return text, limit
    return repr(float(value)), limit
