"""Standard 5-field cron expressions (minute hour day-of-month month day-of-week), in UTC, and the next times one
fires. Each field is `*`, a number, a range `a-b`, any of these with a step (`*/15`, `1-30/2`, `5/10` = from 5 to
the field's end), or a comma-separated list of them; months and days of the week may be named (jan..dec, sun..sat);
day of week 0 and 7 are both Sunday. Day of month and day of week follow Vixie cron: when both are restricted (neither
starts with `*`), a day matches if EITHER matches ("0 0 1 * mon" = the 1st and every Monday); when one starts with
`*`, only the other restricts. No @-macros, no seconds field, no `L`/`W`/`#`: those are refused, not guessed at.

Our own parser (about a hundred lines, tested in tests/test_schedules_cron.py) rather than a dependency: the subset
above is all a schedule needs."""
from dataclasses import dataclass
from datetime import datetime, timedelta

MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
# (name, low, high, names for low.., ) per field
FIELDS = (("minute", 0, 59, ()), ("hour", 0, 23, ()), ("day of month", 1, 31, ()), ("month", 1, 12, MONTHS),
          ("day of week", 0, 7, DAYS))
# Searching this many days ahead finds any date that exists (29 February can be 8 years away: 2096 -> 2104).
HORIZON_DAYS = 8 * 366 + 2
MAX_LEN = 100


class CronError(ValueError):
    """An expression that is not a standard 5-field cron expression, or one that never fires; the message says why."""


def _number(text: str, field: str, low: int, high: int, names: tuple[str, ...]) -> int:
    t = text.lower()
    if names and t in names:
        return names.index(t) + low
    if not t.isdigit() or len(t) > 2:
        raise CronError(f"{field}: {text!r} is not a number{' or a name' if names else ''}")
    n = int(t)
    if not low <= n <= high:
        raise CronError(f"{field}: {n} is outside {low}-{high}")
    return n


def _field(text: str, field: str, low: int, high: int, names: tuple[str, ...]) -> frozenset[int]:
    out: set[int] = set()
    for part in text.split(","):
        if not part:
            raise CronError(f"{field}: an empty item in the list {text!r}")
        base, slash, step_text = part.partition("/")
        step = 1
        if slash:
            if not step_text.isdigit() or not 1 <= int(step_text) <= high:
                raise CronError(f"{field}: the step {step_text!r} must be a number 1-{high}")
            step = int(step_text)
        if base == "*":
            a, b = low, high
        elif "-" in base:
            x, _, y = base.partition("-")
            a, b = _number(x, field, low, high, names), _number(y, field, low, high, names)
            if a > b:
                raise CronError(f"{field}: the range {base!r} runs backwards")
        else:
            a = _number(base, field, low, high, names)
            b = high if slash else a  # "5/10": from 5 to the field's end, every 10
        out.update(range(a, b + 1, step))
    return frozenset(out)


@dataclass(frozen=True)
class Cron:
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday .. 6
    dom_any: bool  # the day-of-month field starts with "*"
    dow_any: bool

    def day_matches(self, d: datetime) -> bool:
        if d.month not in self.months:
            return False
        dom, dow = d.day in self.days, (d.weekday() + 1) % 7 in self.weekdays
        if self.dom_any or self.dow_any:
            return dom and dow
        return dom or dow

    def next_after(self, after: datetime) -> datetime | None:
        """The first time strictly after `after` (aware, UTC) at which it fires; None if none within HORIZON_DAYS."""
        t = after.replace(second=0, microsecond=0) + timedelta(minutes=1)
        day = t.replace(hour=0, minute=0)
        for _ in range(HORIZON_DAYS):
            if self.day_matches(day):
                for h in sorted(x for x in self.hours if day.replace(hour=x) >= t.replace(minute=0)):
                    for m in sorted(self.minutes):
                        at = day.replace(hour=h, minute=m)
                        if at >= t:
                            return at
            day += timedelta(days=1)
        return None


def parse(expr: str) -> Cron:
    if len(expr) > MAX_LEN:
        raise CronError(f"at most {MAX_LEN} characters")
    parts = expr.split()
    if len(parts) != 5:
        raise CronError(f"5 fields (minute hour day-of-month month day-of-week) separated by spaces; got {len(parts)}")
    sets = [_field(p, name, low, high, names) for p, (name, low, high, names) in zip(parts, FIELDS, strict=True)]
    weekdays = frozenset(d % 7 for d in sets[4])
    return Cron(sets[0], sets[1], sets[2], sets[3], weekdays, parts[2].startswith("*"), parts[4].startswith("*"))


def check(expr: str, now: datetime) -> Cron:
    """Parsed, and known to fire at least once (so "0 0 30 2 *" is refused: 30 February never comes)."""
    c = parse(expr)
    if c.next_after(now) is None:
        raise CronError("it never fires: no such date")
    return c
