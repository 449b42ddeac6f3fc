"""Adversarial inputs for the reference-tool parsers: real outputs with their blanks and digits stretched to the
longest line a parser takes, and floods of blank lines, up to the largest upload the API takes.

A regular expression that backtracks is fast on a real output and slow on these: two quantifiers that can take
the same characters (`(.+?)\\s*=`, `^\\s*` across blank lines under re.M) cost the square of a run's length. The
tests (test_reftools_adversarial.py) time every parser on every variant; `python adversarial.py` prints the worst
CPU time per parser at the full size (the figure docs/security.md quotes).
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from hostbench_common.reftools import MAX_LINE, MAX_UPLOAD_BYTES, TOOLS, ParseError, likwid, parse_text

HERE = Path(__file__).resolve().parent
FIXTURES = [HERE.parent / "fixtures" / "reftools", HERE.parents[2] / "runner" / "tests" / "fixtures" / "reference"]
ALIASES = {"linpack": "hpl"}  # fixture names that say the tool differently

Parser = Callable[[str], object]


def parsers() -> dict[str, Parser]:
    """Every parser of untrusted text: the API's (parse_text) and likwid-bench's (the CLI's bench)."""
    out: dict[str, Parser] = {tool: (lambda text, tool=tool: parse_text(tool, text)) for tool in TOOLS}
    out["likwid"] = likwid.parse
    return out


def fixtures(tool: str) -> list[str]:
    """The real outputs of a tool (file names say the tool)."""
    texts = []
    for folder in FIXTURES:
        for path in sorted(folder.glob("*")):
            words = re.split(r"[-_.]", path.name)
            if tool in words or any(ALIASES.get(w) == tool for w in words):
                texts.append(path.read_text(encoding="utf-8"))
    return [t for t in texts if t.strip()]


def stretch(line: str, chars: str, width: int = MAX_LINE - 1) -> str:
    """The line with every character of `chars` repeated so that the line is about `width` long."""
    n = sum(line.count(c) for c in chars)
    if not n:
        return line
    k = max(1, (width - (len(line) - n)) // n)
    return "".join(c * k if c in chars else c for c in line)


STRETCH = (" \t", "0123456789", ".")


def line_variants(text: str, copies: int) -> Iterator[tuple[str, str]]:
    """(label, text): one line of the output stretched, given `copies` times in its place."""
    lines = text.split("\n")
    seen: set[str] = set()
    for i, line in enumerate(lines):
        for chars in STRETCH:
            wide = stretch(line, chars)
            shape = re.sub(r"\d+", "0", line) + chars
            if wide == line or shape in seen:
                continue
            seen.add(shape)
            yield f"line {i + 1} {chars!r}", "\n".join(lines[:i] + [wide] * copies + lines[i + 1 :])


def full_variants(text: str, size: int) -> Iterator[tuple[str, str]]:
    """(label, text) of about `size` characters: the whole output stretched and repeated, and blank floods."""
    for chars in STRETCH:
        wide = "\n".join(stretch(line, chars) for line in text.split("\n"))
        yield f"all lines {chars!r}, repeated", (wide + "\n") * max(1, size // (len(wide) + 1))
    half = size // 2
    for blank in ("\n", " \n", "\t\n", " "):
        flood = blank * (half // len(blank))
        yield f"{blank!r} flood before", flood + text
        yield f"{blank!r} flood after", text + flood
        yield f"{blank!r} flood both", flood + text + flood


def cpu_time(parse: Parser, text: str) -> float:
    """CPU seconds the parser takes; a refusal (ParseError) is an answer, any other exception is a bug."""
    start = time.process_time()
    try:
        parse(text)
    except ParseError:
        pass
    return time.process_time() - start


def variants(tool: str, size: int) -> Iterator[tuple[str, str]]:
    for n, text in enumerate(fixtures(tool)):
        for label, doc in full_variants(text, size):
            yield f"fixture {n}: {label}", doc
        for label, doc in line_variants(text, max(1, size // MAX_LINE)):
            yield f"fixture {n}: {label}", doc[:size]


def main() -> int:
    size = int(sys.argv[1]) if len(sys.argv) > 1 else MAX_UPLOAD_BYTES
    only = sys.argv[2:] or None
    worst_all = 0.0
    for tool, parse in parsers().items():
        if only and tool not in only:
            continue
        worst = (0.0, "")
        for label, doc in variants(tool, size):
            spent = cpu_time(parse, doc)
            if spent > 0.5:
                print(f"  {tool} {label}: {spent:.3f} s", flush=True)
            worst = max(worst, (spent, label))
        print(f"{tool:9} worst {worst[0]:7.3f} s CPU ({worst[1]})", flush=True)
        worst_all = max(worst_all, worst[0])
    print(f"worst of all parsers: {worst_all:.3f} s CPU on inputs of {size} characters")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
