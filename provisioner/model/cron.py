"""Cron schedules, as NodePool disruption budgets use them (``schedule`` + ``duration``).

Five fields, UTC: minute (0-59), hour (0-23), day of month (1-31), month (1-12), day of week
(0-6, Sunday 0 or 7); each ``*``, a value, a range ``a-b``, a step ``*/n`` or ``a-b/n``, or a
comma list of those; or a macro: ``@yearly`` (``@annually``), ``@monthly``, ``@weekly``,
``@daily`` (``@midnight``), ``@hourly``. As in cron, when both day fields are restricted a
day matches if either does. A budget with a schedule is active for ``duration`` after each
time the schedule fires.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

__all__ = ["Schedule", "ScheduleError"]


class ScheduleError(ValueError):
    """A schedule that is not valid cron."""


_MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_RANGES = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 7))
_NAMES = ("minute", "hour", "day of month", "month", "day of week")


def _field(text: str, index: int) -> frozenset[int]:
    low, high = _RANGES[index]
    values: set[int] = set()
    for part in text.split(","):
        body, _, step_text = part.partition("/")
        try:
            step = int(step_text) if step_text else 1
            if body == "*":
                start, end = low, high
            elif "-" in body:
                first, last = body.split("-", 1)
                start, end = int(first), int(last)
            else:
                start = int(body)
                end = high if step_text else start
        except ValueError as e:
            raise ScheduleError(f"{_NAMES[index]} field {text!r} is not a number, range or step") from e
        if step < 1 or not low <= start <= end <= high:
            raise ScheduleError(f"{_NAMES[index]} field {text!r} is outside {low}-{high}")
        values.update(range(start, end + 1, step))
    if index == 4 and 7 in values:  # Sunday is 0 or 7
        values = (values - {7}) | {0}
    return frozenset(values)


@dataclass(frozen=True, slots=True)
class Schedule:
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday
    days_restricted: bool
    weekdays_restricted: bool

    @staticmethod
    def parse(text: str) -> Schedule:
        expression = _MACROS.get(text.strip().lower(), text.strip())
        fields = expression.split()
        if len(fields) != 5:
            raise ScheduleError(f"schedule {text!r}: expected 5 fields (minute hour day-of-month month day-of-week)")
        minutes, hours, days, months, weekdays = (_field(f, i) for i, f in enumerate(fields))
        return Schedule(minutes, hours, days, months, weekdays, fields[2] != "*", fields[4] != "*")

    def fires_at(self, moment: datetime) -> bool:
        """Whether the schedule fires in the minute of ``moment`` (UTC)."""
        moment = moment.astimezone(UTC)
        if moment.minute not in self.minutes or moment.hour not in self.hours or moment.month not in self.months:
            return False
        day = moment.day in self.days
        weekday = (moment.isoweekday() % 7) in self.weekdays
        if self.days_restricted and self.weekdays_restricted:
            return day or weekday
        return day and weekday

    def active(self, now: datetime, duration: timedelta) -> bool:
        """Whether ``now`` lies within ``duration`` after a time the schedule fired."""
        minute = now.astimezone(UTC).replace(second=0, microsecond=0)
        earliest = now - duration
        while minute > earliest:
            if self.fires_at(minute):
                return True
            minute -= timedelta(minutes=1)
        return False
