"""The one place that renders tenant and time filters.

Every query of anatid that needs "which rows does this tenant see at this
instant" calls `visible()`; test_predicates.py fails if any other module
spells such a filter by hand. Intervals are half-open and NULL is open:

    current view   tx_to IS NULL         and valid_from <= $valid_at < valid_to
    as_of(t)       tx_from <= t < tx_to  and valid_from <= t < valid_to

The parameters are bound by name: $tenant, $valid_at and (historical only) $tx_at.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class TimeView:
    """Which instant a read looks at. tx_at None means 'what is believed now'."""

    valid_at: datetime          # naive UTC
    tx_at: datetime | None = None

    @property
    def historical(self) -> bool:
        return self.tx_at is not None

    def params(self, tenant: int) -> dict:
        p = {"tenant": tenant, "valid_at": self.valid_at}
        if self.tx_at is not None:
            p["tx_at"] = self.tx_at
        return p


def tenant_only(alias: str) -> str:
    return f"{alias}.tenant_id = $tenant"


def visible(alias: str, view: TimeView) -> str:
    """SQL boolean: row `alias` belongs to the tenant and is visible in `view`."""
    a = alias
    valid = f"{a}.valid_from <= $valid_at AND ({a}.valid_to IS NULL OR {a}.valid_to > $valid_at)"
    if view.tx_at is None:
        tx = f"{a}.tx_to IS NULL"
    else:
        tx = f"{a}.tx_from <= $tx_at AND ({a}.tx_to IS NULL OR {a}.tx_to > $tx_at)"
    return f"({tenant_only(a)} AND {tx} AND {valid})"


def believed(alias: str) -> str:
    """Row is the version currently believed (whatever its validity)."""
    return f"({tenant_only(alias)} AND {alias}.tx_to IS NULL)"


def believed_at(alias: str, view: TimeView) -> str:
    """Row is the version the memory believed at view.tx_at (current: believed now)."""
    a = alias
    if view.tx_at is None:
        return believed(a)
    return f"({tenant_only(a)} AND {a}.tx_from <= $tx_at AND ({a}.tx_to IS NULL OR {a}.tx_to > $tx_at))"
