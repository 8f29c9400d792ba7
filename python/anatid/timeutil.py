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

_ONE_MICROSECOND = timedelta(microseconds=1)


def utcnow() -> datetime:
    """The current instant as an aware UTC datetime."""
    return datetime.now(timezone.utc)


def to_db(value: datetime | str, argument: str) -> datetime:
    """Validate an instant given by a caller and convert it to naive UTC."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise ValidationError(argument, f"cannot parse {value!r} as ISO-8601",
                                  "an aware datetime or an ISO-8601 string with an offset") from None
    if not isinstance(value, datetime):
        raise ValidationError(argument, f"expected a datetime, got {type(value).__name__}",
                              "an aware datetime, e.g. anatid.utcnow()")
    if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
        raise ValidationError(argument, "naive datetime (no timezone)",
                              "an aware datetime, e.g. anatid.utcnow() or datetime.now(timezone.utc)")
    return value.astimezone(timezone.utc).replace(tzinfo=None)


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
                t = self._last + _ONE_MICROSECOND
            self._last = t
            return t
