"""Cron schedules of disruption budgets."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from provisioner.model.cron import Schedule, ScheduleError


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def test_business_hours_on_weekdays() -> None:
    schedule = Schedule.parse("0 9 * * 1-5")
    assert schedule.fires_at(at("2026-11-30T09:00:30"))  # a Monday
    assert not schedule.fires_at(at("2026-11-29T09:00:00"))  # a Sunday
    assert not schedule.fires_at(at("2026-11-30T09:01:00"))
    eight_hours = timedelta(hours=8)
    assert schedule.active(at("2026-11-30T16:59:00"), eight_hours)
    assert not schedule.active(at("2026-11-30T17:00:00"), eight_hours)
    assert not schedule.active(at("2026-11-30T08:59:00"), eight_hours)
    assert not schedule.active(at("2026-11-29T12:00:00"), eight_hours)


def test_steps_lists_macros_and_sunday_as_seven() -> None:
    assert Schedule.parse("*/15 * * * *").minutes == frozenset({0, 15, 30, 45})
    assert Schedule.parse("0 1,13 * * *").hours == frozenset({1, 13})
    assert Schedule.parse("0 0 * * 7").weekdays == frozenset({0})
    assert Schedule.parse("@daily") == Schedule.parse("0 0 * * *")
    assert Schedule.parse("@hourly").fires_at(at("2026-11-29T05:00:00"))


def test_either_day_field_matches_when_both_are_restricted() -> None:
    schedule = Schedule.parse("0 0 1 * 1")  # the 1st of the month, or any Monday
    assert schedule.fires_at(at("2026-12-01T00:00:00"))  # a Tuesday, the 1st
    assert schedule.fires_at(at("2026-11-30T00:00:00"))  # a Monday
    assert not schedule.fires_at(at("2026-12-02T00:00:00"))


@pytest.mark.parametrize("text", ["", "* * * *", "60 * * * *", "0 24 * * *", "a * * * *", "*/0 * * * *", "5-1 * * * *"])
def test_bad_schedules_are_named(text: str) -> None:
    with pytest.raises(ScheduleError):
        Schedule.parse(text)
