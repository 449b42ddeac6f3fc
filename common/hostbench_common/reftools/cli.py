"""`./hostbench parse TOOL FILE`: print a reference tool's figures as JSON.

Exit status: 0 with the JSON on stdout; 1 when the file is not a complete, valid output of the tool
(the reason on stderr, nothing on stdout); 2 for a usage error (unknown tool, missing or unreadable
file). FILE "-" reads standard input.
"""

from __future__ import annotations

import json
import os
import sys

from . import TOOLS, ParseError, parse_text

EXIT_OK, EXIT_UNPARSEABLE, EXIT_USAGE = 0, 1, 2
_MAX_BYTES = 64 * 1024 * 1024


def _err(message: str) -> None:
    print(f"hostbench parse: {message}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2:
        _err(f"usage: ./hostbench parse TOOL FILE  (TOOL: {', '.join(TOOLS)}; FILE '-' reads stdin)")
        return EXIT_USAGE
    tool, path = args
    if tool not in TOOLS:
        _err(f"unknown tool {tool!r}; known: {', '.join(TOOLS)}")
        return EXIT_USAGE
    try:
        if path == "-":
            data = sys.stdin.buffer.read(_MAX_BYTES + 1)
        else:
            with open(path, "rb") as fh:
                data = fh.read(_MAX_BYTES + 1)
    except FileNotFoundError:
        _err(f"{path}: no such file")
        return EXIT_USAGE
    except IsADirectoryError:
        _err(f"{path}: is a directory")
        return EXIT_USAGE
    except OSError as exc:
        _err(f"{path}: cannot read: {exc.strerror or exc}")
        return EXIT_USAGE
    if len(data) > _MAX_BYTES:
        _err(f"{tool}: {path}: larger than {_MAX_BYTES // (1024 * 1024)} MiB: not a tool's report")
        return EXIT_UNPARSEABLE
    text = data.decode("utf-8", errors="replace")
    try:
        result = parse_text(tool, text)
    except ParseError as exc:
        _err(f"{tool}: {path}: {exc}")
        return EXIT_UNPARSEABLE
    try:
        print(json.dumps(result, indent=2, allow_nan=False))
        sys.stdout.flush()
    except BrokenPipeError:  # `| head`: the reader went away; not our error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
