"""MaintenancePolicy: when a derived-index generation is due for a rebuild.

A generation is due when any trigger fires: the journal holds at least
`max_journal_rows` rows, or at least `max_journal_ratio` times the base's rows, or the
base is older than `max_age` while its journal is not empty. A trigger set to None
never fires. An absent, damaged or unvalidated generation is always due, whatever the
policy: a read then pays for a scan or the SQL oracle on every call.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from ..errors import ValidationError
from ..validate import shown


@dataclass(frozen=True)
class MaintenancePolicy:
    max_journal_rows: int | None = 1
    max_journal_ratio: float | None = None
    max_age: timedelta | None = None

    def __post_init__(self):
        rows, ratio, age = self.max_journal_rows, self.max_journal_ratio, self.max_age
        if rows is not None and (isinstance(rows, bool) or not isinstance(rows, int) or rows < 1):
            raise ValidationError("max_journal_rows", f"{shown(rows)} is not a positive integer",
                                  "an integer >= 1, or None for no row trigger")
        if ratio is not None and (isinstance(ratio, bool) or not isinstance(ratio, (int, float))
                                  or not ratio > 0 or ratio != ratio or ratio == float("inf")):
            raise ValidationError("max_journal_ratio", f"{shown(ratio)} is not a positive finite number",
                                  "e.g. 0.1 (journal rows per base row), or None")
        if age is not None and (not isinstance(age, timedelta) or age <= timedelta(0)):
            raise ValidationError("max_age", f"{shown(age)} is not a positive timedelta",
                                  "e.g. timedelta(hours=1), or None")

    def triggers(self, *, pending: int, base_rows: int, age_seconds: float | None) -> list[str]:
        """The triggers that fire for a present, healthy generation (empty: not due)."""
        fired = []
        if self.max_journal_rows is not None and pending >= self.max_journal_rows:
            fired.append("max_journal_rows")
        if self.max_journal_ratio is not None and pending > 0 and pending >= self.max_journal_ratio * max(base_rows, 1):
            fired.append("max_journal_ratio")
        if (self.max_age is not None and pending > 0 and age_seconds is not None
                and age_seconds >= self.max_age.total_seconds()):
            fired.append("max_age")
        return fired


# maintain_indexes() without a policy: anything in a journal is worth folding.
EAGER = MaintenancePolicy(max_journal_rows=1)
# A reasonable schedule for a busy memory (docs/indexes.md): fold when the journal
# reaches 10,000 rows or a tenth of the base, or after an hour with writes pending.
SCHEDULED = MaintenancePolicy(max_journal_rows=10_000, max_journal_ratio=0.1, max_age=timedelta(hours=1))
