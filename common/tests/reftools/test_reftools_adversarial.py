"""Every parser of untrusted text reads adversarial input in linear time (adversarial.py builds it): real outputs
with blanks, digits or dots stretched to the longest line a parser takes, and floods of blank lines, at 64 KiB for
every variant and at the largest upload the API takes (8 MiB) for the whole-output ones. CPU time, so a busy
machine does not fail it. Before the fix one stretched IOzone line cost over a second and a 64 KiB flood of blank
lines 1.5 s of STREAM's parser (quadratic: hours at 8 MiB)."""
from __future__ import annotations

import pytest
from adversarial import cpu_time, fixtures, full_variants, line_variants, parsers

from hostbench_common.reftools import MAX_LINE, MAX_UPLOAD_BYTES, ParseError, parse_text

SCREEN = 64 * 1024
SCREEN_BUDGET_S = 0.25  # linear parsing of 64 KiB takes a few ms; one quadratic 16 KiB line takes a second
FULL_BUDGET_S = 1.0  # the target for the largest upload


@pytest.mark.parametrize("tool", sorted(parsers()))
def test_every_stretched_line_and_flood_is_read_in_linear_time(tool):
    parse = parsers()[tool]
    slow = []
    for n, text in enumerate(fixtures(tool)):
        docs = [*full_variants(text, SCREEN), *line_variants(text, SCREEN // MAX_LINE)]
        slow += [(f"fixture {n}: {label}", round(t, 3)) for label, doc in docs
                 if (t := cpu_time(parse, doc)) > SCREEN_BUDGET_S]
    assert fixtures(tool), f"no fixture for {tool}"
    assert not slow, f"{tool}: CPU seconds over {SCREEN_BUDGET_S} on {SCREEN} characters: {slow}"


@pytest.mark.parametrize("tool", sorted(parsers()))
def test_the_largest_upload_is_read_in_under_a_second(tool):
    parse = parsers()[tool]
    text = max(fixtures(tool), key=len)
    times = {label: cpu_time(parse, doc) for label, doc in full_variants(text, MAX_UPLOAD_BYTES)}
    worst = max(times, key=times.__getitem__)
    assert times[worst] < FULL_BUDGET_S, f"{tool}: {times[worst]:.2f} s CPU on {worst} ({MAX_UPLOAD_BYTES} characters)"


@pytest.mark.parametrize("text", [
    '{"fio version": "fio-3.33", "jobs": [' + "1" * 5000 + "]}",  # int() refuses more than 4300 digits
    '{"fio version": "fio-3.33", "jobs": ' + "[" * 100000 + "]" * 100000 + "}",  # deeper than the stack
])
def test_garbled_json_is_a_parse_error_not_a_crash(text):
    with pytest.raises(ParseError):
        parse_text("fio", text)
