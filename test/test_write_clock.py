"""The write clock's bounds: an explicit now= far in the future is refused (it poisoned the
process's write clock: every later write was stamped after it), and a new process's clock
starts after the file's last write instant (tx time stays monotonic in the file).

These tests run with the real bound: ANATID_SIMULATED_TIME, which conftest sets for the
suite's 2090 instants, is removed here unless a test sets it on purpose.
"""
from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta

import pytest

import anatid
from anatid import Anatid, ValidationError, utcnow
from anatid.timeutil import FUTURE_TOLERANCE, SIMULATED_TIME_ENV

from conftest import at, snapshot

FAR = "9000-01-01T00:00:00+00:00"


@pytest.fixture
def real_time(monkeypatch):
    monkeypatch.delenv(SIMULATED_TIME_ENV, raising=False)


@pytest.fixture
def world(tmp_path, real_time):
    db = Anatid.open(str(tmp_path / "clock.anatid"), tenant=1, embedding_dim=4)
    m = db.remember("a fact", entities=["ada", "bob"])
    db.relate("ada", "bob")
    yield db, m
    db.close()


# Every write verb that takes now=, with a far-future instant.
VERBS = {
    "remember": lambda db, m, t: db.remember("x", entities=["cy"], now=t),
    "remember_many": lambda db, m, t: db.remember_many([{"content": "x"}, {"content": "y"}], now=t),
    "relate": lambda db, m, t: db.relate("ada", "cy", now=t),
    "relate_many": lambda db, m, t: db.relate_many([("ada", "dee"), ("bob", "eve")], now=t),
    "unrelate": lambda db, m, t: db.unrelate("ada", "bob", now=t),
    "supersede": lambda db, m, t: db.supersede(m.memory_id, "newer", now=t),
    "update": lambda db, m, t: db.update(m.memory_id, "fixed", expected_version=1, now=t),
    "forget": lambda db, m, t: db.forget(m.memory_id, now=t),
    "reinforce": lambda db, m, t: db.reinforce(m.memory_id, now=t),
    "upsert_entity": lambda db, m, t: db.upsert_entity("fay", "person", now=t),
    "episode": lambda db, m, t: db.episode("a chat", now=t),
}


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_a_far_future_now_is_refused_and_changes_nothing(world, verb):
    db, m = world
    before = snapshot(db)
    with pytest.raises(ValidationError) as err:
        VERBS[verb](db, m, FAR)
    msg = str(err.value)
    assert err.value.argument == "now"
    assert "9000-01-01" in msg and "5 minutes" in msg          # the value and the bound
    assert "omit now=" in msg and SIMULATED_TIME_ENV in msg    # the fix
    assert snapshot(db) == before


def test_a_refused_now_does_not_poison_later_writes(world):
    db, m = world
    with pytest.raises(ValidationError):
        db.remember("from the future", now=FAR)
    later = db.remember("an ordinary write")
    assert m.tx_from < later.tx_from < utcnow() + FUTURE_TOLERANCE
    assert later.tx_from.year < 9000
    # skew within the tolerance, and the past, are honoured as given
    soon = utcnow() + FUTURE_TOLERANCE / 2
    assert db.remember("skewed clock", now=soon).tx_from == soon
    past = utcnow() - timedelta(days=400)
    assert db.remember("backdated", now=past).tx_from == past


def test_simulated_time_is_an_explicit_opt_in_read_at_each_write(world, monkeypatch):
    db, _ = world
    monkeypatch.setenv(SIMULATED_TIME_ENV, "1")
    assert db.remember("simulated", now=at(1)).tx_from == at(1)
    monkeypatch.setenv(SIMULATED_TIME_ENV, "0")
    with pytest.raises(ValidationError):
        db.remember("not simulated", now=at(2))


_WRITER = """
import sys
from anatid import Anatid
from datetime import datetime, timezone, timedelta
base = datetime(2090, 1, 1, tzinfo=timezone.utc)
with Anatid.open(sys.argv[1], tenant=1) as db:
    m = db.remember("written in 2090", now=base + timedelta(seconds=5))
    db.forget(m.memory_id, now=base + timedelta(seconds=9))   # the file's latest instant: a tx_to
"""


def test_a_new_process_writes_after_the_files_last_instant(tmp_path, real_time):
    """Before: another process's clock started at the wall clock, so its writes were stamped
    before rows already in the file (2026 after 2090): tx time went backwards."""
    path = str(tmp_path / "two-processes.anatid")
    env = {**os.environ, SIMULATED_TIME_ENV: "1", "PYTHONPATH": os.path.dirname(os.path.dirname(anatid.__file__))}
    subprocess.run([sys.executable, "-c", _WRITER, path], check=True, env=env, timeout=120)
    with Anatid.open(path, tenant=1) as db:
        later = db.remember("written now")
        last = db.connection.execute("SELECT max(tx_to) FROM anatid_memories").fetchone()[0]
        assert last is not None and later.tx_from.replace(tzinfo=None) > last
        assert later.tx_from > at(9)
        # and the current view sees the new row (it reads at the clock's last instant)
        assert [h.memory_id for h in db.recall("written now")] == [later.memory_id]


@pytest.mark.parametrize("refused", [
    lambda db, m, t: db.remember("ends before it starts", valid_to=t - timedelta(days=1), now=t),
    lambda db, m, t: db.supersede(12345, "no such memory", now=t),
    lambda db, m, t: db.update(m.memory_id, "stale", expected_version=7, now=t),
], ids=["valid_to", "not-found", "conflict"])
def test_a_write_refused_after_taking_its_instant_gives_it_back(world, refused):
    """A verb takes its write instant, then finds the request wrong and rolls back: before,
    the clock kept the refused instant, so a now= within the tolerance still moved every
    later write up to 5 minutes into the future."""
    db, m = world
    soon = utcnow() + FUTURE_TOLERANCE / 2
    with pytest.raises(anatid.AnatidError):
        refused(db, m, soon)
    assert db.remember("the next write").tx_from < soon
