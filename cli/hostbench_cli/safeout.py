"""Terminal-safe output: text a runner or a server set (host names, units, ops, reasons) never reaches the
operator's terminal as control characters. `./hostbench` wraps its stdout and stderr in SafeText, which shows every
C0/C1 control character (but newline and tab), DEL and the invisible format characters that reorder or hide text
(bidi overrides, zero-width characters) as a visible escape: ESC [2J prints as \\x1b[2J and does nothing.

Our own terminal control (the export meter's carriage return and line erase) goes to `.raw`, the unwrapped stream.
Binary writes (`.buffer`, the export's file content) pass as they are: they are the file asked for.
"""
from __future__ import annotations

import re
import sys
from typing import Any, TextIO

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff"
                     "\ufff9-\ufffb]")


def _visible(m: re.Match[str]) -> str:
    code = ord(m.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape(text: str) -> str:
    """text with every control and invisible format character shown as an escape (newline and tab kept)."""
    return _UNSAFE.sub(_visible, text)


class SafeText:
    """A text stream whose write() escapes what escape() escapes; everything else is the wrapped stream's."""

    def __init__(self, raw: TextIO) -> None:
        self.raw = raw

    def write(self, text: str) -> int:
        return self.raw.write(escape(text))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


def install() -> None:
    if not isinstance(sys.stdout, SafeText):
        sys.stdout = SafeText(sys.stdout)  # type: ignore[assignment]
    if not isinstance(sys.stderr, SafeText):
        sys.stderr = SafeText(sys.stderr)  # type: ignore[assignment]


def raw(stream: Any) -> Any:
    """The stream under a SafeText (for our own terminal control), or the stream itself."""
    return stream.raw if isinstance(stream, SafeText) else stream
