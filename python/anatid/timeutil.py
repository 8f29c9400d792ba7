"""Time rules.

anatid accepts only timezone-aware datetimes (naive ones are rejected: a
naive `datetime.now()` is local time, and guessing would corrupt history).
Inside the file every instant is a naive TIMESTAMP in UTC with microsecond
resolution; values read back are aware UTC datetimes.
"""
from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

from .errors import ValidationError
from .validate import shown

_ONE_MICROSECOND = timedelta(microseconds=1)


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
    An explicit `now=` from the caller is honoured as given (tests rely on it).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: datetime | None = None

    @property
    def last(self) -> datetime | None:
        return self._last

    def next(self, now: datetime | str | None) -> datetime:
        if now is not None:
            t = to_db(now, "now")
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
