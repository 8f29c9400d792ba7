"""One predicate generator: predicates.visible() renders every time filter.

The first test fails when a module under python/anatid/ other than
predicates.py compares a visibility column (valid_from, valid_to, tx_from,
tx_to) with an instant by hand, in SQL or in Python. Comparing two of those
columns with each other (an integrity check such as valid_to <= valid_from)
is not a visibility filter and is allowed. A module that truly needs its own
comparison gets an entry in EXEMPT saying why.
"""
from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

import duckdb
import pytest

from anatid import predicates
from anatid.predicates import TimeView, believed, visible

PACKAGE = Path(predicates.__file__).resolve().parent

_COL = r"(?:[\w$]+\.)?(?:valid_from|valid_to|tx_from|tx_to)\b"
_OP = r"(?:<=|>=|<>|!=|<|>|\bBETWEEN\b)"
# column OP something, and something OP column
HAND_WRITTEN = [
    re.compile(rf"\b{_COL}\s*{_OP}", re.IGNORECASE),
    re.compile(rf"(?<![-=<>]){_OP}\s*{_COL}", re.IGNORECASE),
]
COLUMN_VS_COLUMN = re.compile(rf"\b{_COL}\s*{_OP}\s*{_COL}", re.IGNORECASE)

# path relative to python/anatid -> why it may spell its own comparison
EXEMPT: dict[str, str] = {
    # Emulates get/provenance as_of over Provenance.chain in Python because the core's
    # get() and provenance() take no as_of= yet; remove once they do.
    "integrations/mcp/history.py": "as_of emulation over provenance rows until get(as_of=) exists",
    # Not a read filter: decides which rows a graph generation built at $built_at may bake
    # in and which must stay in the journal because time alone will change them. Its owner
    # may move these onto a predicates helper; then drop this entry.
    "indexes/graph.py": "generation snapshot at $built_at (base vs journal), not a read filter",
    # Validation recounts exactly what indexes/graph.py's snapshot rule bakes into a base.
    "verbs/indexes.py": "recount of a graph generation's snapshot at $at (graph.py's rule), not a read filter",
}


def _violations(source: str) -> list[str]:
    found = []
    for lineno, line in enumerate(source.splitlines(), 1):
        stripped = COLUMN_VS_COLUMN.sub("", line)
        if any(p.search(stripped) for p in HAND_WRITTEN):
            found.append(f"{lineno}: {line.strip()}")
    return found


def test_no_module_spells_a_visibility_filter_by_hand():
    offenders = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel == "predicates.py" or rel in EXEMPT:
            continue
        hits = _violations(path.read_text(encoding="utf-8"))
        if hits:
            offenders[rel] = hits
    assert not offenders, (
        "visibility comparisons written by hand; render them with anatid.predicates.visible() "
        f"(or add an EXEMPT entry saying why): {offenders}")


def test_exempt_entries_are_still_needed():
    for rel in EXEMPT:
        path = PACKAGE / rel
        if path.exists():
            assert _violations(path.read_text(encoding="utf-8")), f"{rel} no longer needs its EXEMPT entry"


@pytest.mark.parametrize("line,bad", [
    ("WHERE m.valid_from <= $valid_at", True),
    ("AND (e.valid_to IS NULL OR e.valid_to > $now)", True),
    ("tx_from <= $tx_at AND (tx_to IS NULL OR tx_to > $tx_at)", True),
    ("WHERE $t < m.valid_to", True),
    ("valid_from BETWEEN $a AND $b", True),
    ("return row.tx_from <= t and (row.tx_to is None or row.tx_to > t)", True),
    ("WHERE valid_to <= valid_from OR tx_to <= tx_from", False),     # integrity check
    ("AND m.tx_to IS NULL AND m.valid_to IS NULL", False),
    ("coalesce(m.last_used_at, m.tx_from) < $cutoff", False),
    ("def f(x) -> valid_from_type:", False),
])
def test_the_detector_itself(line, bad):
    assert bool(_violations(line)) is bad


# -- what visible() renders ------------------------------------------------------------------------
def test_visible_current_view_text():
    v = TimeView(valid_at=datetime(2030, 1, 1))
    assert visible("m", v) == ("(m.tenant_id = $tenant AND m.tx_to IS NULL AND m.valid_from <= $valid_at "
                               "AND (m.valid_to IS NULL OR m.valid_to > $valid_at))")
    assert v.params(7) == {"tenant": 7, "valid_at": datetime(2030, 1, 1)}
    assert not v.historical


def test_visible_as_of_view_text():
    v = TimeView(valid_at=datetime(2030, 1, 1), tx_at=datetime(2030, 1, 2))
    assert visible("e", v) == ("(e.tenant_id = $tenant AND e.tx_from <= $tx_at AND "
                               "(e.tx_to IS NULL OR e.tx_to > $tx_at) AND e.valid_from <= $valid_at "
                               "AND (e.valid_to IS NULL OR e.valid_to > $valid_at))")
    assert v.params(7) == {"tenant": 7, "valid_at": datetime(2030, 1, 1), "tx_at": datetime(2030, 1, 2)}
    assert v.historical
    assert believed("m") == "(m.tenant_id = $tenant AND m.tx_to IS NULL)"


def _d(day):
    return None if day is None else datetime(2030, 1, day)


# rows: (name, tenant, valid_from, valid_to, tx_from, tx_to) as days of January 2030
ROWS = [
    ("open", 1, 1, None, 1, None),
    ("valid_2_to_4", 1, 2, 4, 1, None),
    ("believed_2_to_4", 1, 1, None, 2, 4),
    ("other_tenant", 2, 1, None, 1, None),
    ("future", 1, 5, None, 1, None),
]


@pytest.mark.parametrize("valid_at,tx_at,expected", [
    (3, None, {"open", "valid_2_to_4"}),
    (4, None, {"open"}),                                     # valid_to is exclusive
    (2, None, {"open", "valid_2_to_4"}),                     # valid_from is inclusive
    (1, 1, {"open"}),
    (2, 2, {"open", "valid_2_to_4", "believed_2_to_4"}),     # tx_from inclusive
    (3, 3, {"open", "valid_2_to_4", "believed_2_to_4"}),
    (4, 4, {"open"}),                                        # tx_to and valid_to exclusive
    (6, 6, {"open", "future"}),
])
def test_visible_evaluates_half_open_intervals(valid_at, tx_at, expected):
    con = duckdb.connect()
    con.execute("CREATE TABLE t (name VARCHAR, tenant_id BIGINT, valid_from TIMESTAMP, valid_to TIMESTAMP, "
                "tx_from TIMESTAMP, tx_to TIMESTAMP)")
    con.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)",
                    [(n, ten, _d(a), _d(b), _d(c), _d(d)) for n, ten, a, b, c, d in ROWS])
    view = TimeView(valid_at=_d(valid_at), tx_at=_d(tx_at))
    got = {r[0] for r in con.execute(f"SELECT name FROM t WHERE {visible('t', view)}", view.params(1)).fetchall()}
    assert got == expected
