"""Time rules.

anatid accepts only timezone-aware datetimes (naive ones are rejected: a
naive `datetime.now()` is local time, and guessing would corrupt history).
Inside the file every instant is a naive TIMESTAMP in UTC with microsecond
resolution; values read back are aware UTC datetimes.
"""
from __future__ import annotations

import os
import threading
from datetime import datetime, timedelta, timezone

from .errors import ValidationError
from .validate import shown

_ONE_MICROSECOND = timedelta(microseconds=1)

# How far past the wall clock an explicit now= may lie: room for clock skew between machines,
# not for writing the future. A write stamped later would put every later write of the process
# after it (the write clock never goes back) while a new process returns to real time.
FUTURE_TOLERANCE = timedelta(minutes=5)

# Set to 1 to let now= lie anywhere in the future: tests that simulate time (read at each write).
SIMULATED_TIME_ENV = "ANATID_SIMULATED_TIME"


def simulated_time() -> bool:
    """Whether ANATID_SIMULATED_TIME=1 lifts the FUTURE_TOLERANCE bound on now=."""
    return os.environ.get(SIMULATED_TIME_ENV) == "1"


def check_not_future(t: datetime, argument: str = "now") -> datetime:
    """`t` (naive UTC), refused when it lies more than FUTURE_TOLERANCE past the wall clock."""
    if simulated_time():
        return t
    wall = utcnow().replace(tzinfo=None)
    bound = wall + FUTURE_TOLERANCE
    if t > bound:
        raise ValidationError(argument, f"{t.isoformat()} UTC is more than {_minutes(FUTURE_TOLERANCE)} after the "
                              f"wall clock ({wall.isoformat()} UTC): every later write would be stamped after it",
                              f"an instant no later than {bound.isoformat()} UTC (the wall clock + "
                              f"{_minutes(FUTURE_TOLERANCE)}, anatid.timeutil.FUTURE_TOLERANCE); omit now= to use "
                              f"the clock, or set {SIMULATED_TIME_ENV}=1 to simulate time in tests")
    return t


def _minutes(d: timedelta) -> str:
    return f"{d.total_seconds() / 60:g} minutes"


def utcnow() -> datetime:
    """The current instant as an aware UTC datetime."""
    return datetime.now(timezone.utc)


def to_db(value: datetime | str, argument: str) -> datetime:
    """Validate an instant given by a caller and convert it to naive UTC."""
    if isinstance(value, str):
        value = str.__str__(value)  # a str subclass as the plain str it holds
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise ValidationError(argument, f"cannot parse {shown(value)} as ISO-8601",
                                  "an aware datetime or an ISO-8601 string with an offset") from None
    if not isinstance(value, datetime):
        raise ValidationError(argument, f"expected a datetime, got {type(value).__name__}",
                              "an aware datetime, e.g. anatid.utcnow()")
    if value.tzinfo is timezone.utc:
        return value.replace(tzinfo=None)
    try:
        offset = None if value.tzinfo is None else value.utcoffset()
    except Exception as exc:  # the caller's tzinfo raised, or returned a non-timedelta or |offset| >= 24 h
        raise ValidationError(argument, f"its tzinfo gives no usable UTC offset ({type(exc).__name__})",
                              "an aware datetime with a fixed or zoneinfo tzinfo, e.g. timezone.utc") from exc
    if offset is None:
        raise ValidationError(argument, "naive datetime (no timezone)",
                              "an aware datetime, e.g. anatid.utcnow() or datetime.now(timezone.utc)")
    try:
        # what astimezone(timezone.utc) computes, with the offset read once
        return value.replace(tzinfo=None) - offset
    except OverflowError:  # e.g. 0001-01-01T00:00+01:00 is still year 0 in UTC
        raise ValidationError(argument, f"{value.replace(tzinfo=None).isoformat()} at UTC offset {offset} "
                              "falls outside years 1 to 9999 in UTC",
                              "an instant from 0001-01-01 to 9999-12-31 UTC") from None


def from_db(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value.replace(tzinfo=timezone.utc)


class WriteClock:
    """Hands out strictly increasing write instants for one database file.

    Two writes in the same microsecond would give a superseded row an empty
    validity interval, so each write gets at least the previous instant + 1 us.
    An explicit `now=` from the caller is honoured as given (tests rely on it), up to
    FUTURE_TOLERANCE past the wall clock (check_not_future). Store seeds the clock with the
    file's latest write instant (observe), so tx time keeps increasing across processes, and
    gives back the instant of a transaction that rolled back (retract).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: datetime | None = None

    @property
    def last(self) -> datetime | None:
        return self._last

    def observe(self, t: datetime | None) -> None:
        """No later write instant than `t` (naive UTC, one already in the file) is handed out."""
        if t is None:
            return
        with self._lock:
            if self._last is None or t > self._last:
                self._last = t

    def retract(self, before: datetime | None, taken: datetime) -> None:
        """A rolled-back transaction that took `taken` as the clock's last instant gives it
        back (no other write took a later one since): a refused write leaves the clock as
        it was."""
        with self._lock:
            if self._last == taken and (before is None or before < taken):
                self._last = before

    def next(self, now: datetime | str | None) -> datetime:
        if now is not None:
            t = check_not_future(to_db(now, "now"))
            with self._lock:
                if self._last is None or t > self._last:
                    self._last = t
            return t
        with self._lock:
            t = utcnow().replace(tzinfo=None)
            if self._last is not None and t <= self._last:
                if self._last == datetime.max:   # an explicit now= took the last instant a datetime holds
                    raise ValidationError("now", f"this file's last write is at {self._last.isoformat()} UTC, so no "
                                          "later write instant exists", "an explicit now= for every later write")
                t = self._last + _ONE_MICROSECOND
            self._last = t
            return t
