"""The 5-field cron parser of app.schedules.cron and its next fire times (UTC)."""
from datetime import UTC, datetime

import pytest

from app.schedules.cron import CronError, check, parse

T0 = datetime(2026, 11, 27, 21, 30, 15, tzinfo=UTC)  # a Friday


def nexts(expr: str, after: datetime = T0, n: int = 3) -> list[str]:
    c, out, t = parse(expr), [], after
    for _ in range(n):
        t = c.next_after(t)
        assert t is not None
        out.append(t.strftime("%Y-%m-%d %H:%M %a"))
    return out


def test_fields_ranges_steps_and_lists_expand_to_the_right_sets():
    c = parse("*/15 9-17/4 1,15,20-22 jan-mar,dec mon-fri")
    assert c.minutes == {0, 15, 30, 45}
    assert c.hours == {9, 13, 17}
    assert c.days == {1, 15, 20, 21, 22}
    assert c.months == {1, 2, 3, 12}
    assert c.weekdays == {1, 2, 3, 4, 5}
    assert parse("5/20 * * * *").minutes == {5, 25, 45}  # a start with a step runs to the field's end
    assert parse("0 0 * * 7").weekdays == parse("0 0 * * 0").weekdays == {0}  # 0 and 7 are Sunday
    assert parse("0 0 * * 5-7").weekdays == {5, 6, 0}
    assert parse("0 0 * * SUN,Sat").weekdays == {0, 6}


def test_every_minute_and_every_hour_count_from_the_next_minute():
    assert nexts("* * * * *") == ["2026-11-27 21:31 Fri", "2026-11-27 21:32 Fri", "2026-11-27 21:33 Fri"]
    assert nexts("0 * * * *") == ["2026-11-27 22:00 Fri", "2026-11-27 23:00 Fri", "2026-11-28 00:00 Sat"]
    # strictly after: a time on the dot does not return itself
    on_the_dot = datetime(2026, 11, 27, 22, 0, tzinfo=UTC)
    assert nexts("0 * * * *", on_the_dot, 1) == ["2026-11-27 23:00 Fri"]


def test_daily_weekly_and_monthly_cross_day_month_and_year_ends():
    assert nexts("30 2 * * *") == ["2026-11-28 02:30 Sat", "2026-11-29 02:30 Sun", "2026-11-30 02:30 Mon"]
    assert nexts("0 3 * * mon") == ["2026-11-30 03:00 Mon", "2026-12-07 03:00 Mon", "2026-12-14 03:00 Mon"]
    assert nexts("0 0 1 * *") == ["2026-12-01 00:00 Tue", "2027-01-01 00:00 Fri", "2027-02-01 00:00 Mon"]
    assert nexts("0 0 31 * *") == ["2026-12-31 00:00 Thu", "2027-01-31 00:00 Sun", "2027-03-31 00:00 Wed"]


def test_day_of_month_and_day_of_week_match_either_when_both_are_restricted():
    # the 1st of the month OR any Monday (Vixie cron)
    assert nexts("0 0 1 * mon", n=4) == ["2026-11-30 00:00 Mon", "2026-12-01 00:00 Tue", "2026-12-07 00:00 Mon",
                                         "2026-12-14 00:00 Mon"]
    # with one of them "*", only the other restricts: Mondays only, the 13th only
    assert nexts("0 0 * * mon", n=1) == ["2026-11-30 00:00 Mon"]
    assert nexts("0 0 13 * *", n=1) == ["2026-12-13 00:00 Sun"]
    # "*/2" starts with "*": AND, so the odd days that are Fridays
    assert nexts("0 0 */2 * fri", n=2) == ["2026-12-11 00:00 Fri", "2026-12-25 00:00 Fri"]


def test_29_february_is_found_years_ahead_and_a_date_that_never_comes_is_refused():
    assert nexts("0 12 29 2 *", n=2) == ["2028-02-29 12:00 Tue", "2032-02-29 12:00 Sun"]
    assert parse("0 0 30 2 *").next_after(T0) is None
    with pytest.raises(CronError, match="never fires"):
        check("0 0 30 2 *", T0)
    with pytest.raises(CronError, match="never fires"):
        check("0 0 31 4,6,9,11 *", T0)


@pytest.mark.parametrize(("expr", "why"), [
    ("* * * *", "5 fields"),
    ("* * * * * *", "5 fields"),
    ("60 * * * *", "outside 0-59"),
    ("* 24 * * *", "outside 0-23"),
    ("* * 0 * *", "outside 1-31"),
    ("* * * 13 *", "outside 1-12"),
    ("* * * * 8", "outside 0-7"),
    ("5-1 * * * *", "backwards"),
    ("*/0 * * * *", "step"),
    ("*/x * * * *", "step"),
    ("1,,2 * * * *", "empty item"),
    ("@daily * * * *", "not a number"),
    ("L * * * *", "not a number"),
    ("* * * foo *", "not a number or a name"),
    ("* * * * mon#2", "not a number or a name"),
    ("-1 * * * *", "not a number"),
    ("0" * 101, "at most"),
])
def test_bad_expressions_are_refused_saying_why(expr, why):
    with pytest.raises(CronError, match=why):
        parse(expr)
