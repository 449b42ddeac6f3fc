"""Every CSV the server writes goes through cell(): text a spreadsheet would run as a formula is defused.

A cell that starts with =, +, -, @, a tab or a carriage return is a formula (or becomes one) in Excel, LibreOffice
and Google Sheets; host names, units, ops and extra keys come from runners, so `=HYPERLINK(...)` as a host name
would be a live link. Such text gets a leading apostrophe, which the spreadsheet shows as text. Numbers are never
touched: an int or float is written as is, and so is text that is entirely a number (-3.5, +1e-9), so a negative
figure stays a figure. The dashboard's CSV (frontend/src/lib/csv.ts) follows the same rule.
"""
import csv
import io
import re
from collections.abc import Iterable
from typing import Any

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def cell(value: Any) -> Any:
    if not isinstance(value, str) or not value.startswith(_FORMULA_START) or _NUMBER.fullmatch(value):
        return value
    return "'" + value


class Writer:
    """csv.writer over a string, every cell through cell()."""

    def __init__(self) -> None:
        self.out = io.StringIO()
        self._w = csv.writer(self.out, lineterminator="\n")

    def writerow(self, row: Iterable[Any]) -> None:
        self._w.writerow([cell(v) for v in row])

    def getvalue(self) -> str:
        return self.out.getvalue()
