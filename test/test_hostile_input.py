"""Hypothesis drives every write verb with adversarial values: only anatid
errors come out, and a rejected call leaves the canonical tables unchanged.

One file per test function (hypothesis reuses it across examples); a call
that happens to succeed is fine, a call that fails must change nothing.
"""
from __future__ import annotations

import gc

import math
from datetime import datetime, timedelta, timezone, tzinfo
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from anatid import Anatid, AnatidError, MaintenancePolicy, utcnow
from anatid.pool import DatabasePool
from anatid.schema import CANONICAL_TABLES
from anatid.timeutil import FUTURE_TOLERANCE, SIMULATED_TIME_ENV

from conftest import DIM, at

FAST = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))


# Values of the right general kind whose own methods raise, or that Python's conversions
# refuse: a subclass of str/int/list whose methods raise, a tzinfo that misbehaves, an instant
# that leaves years 1..9999 once shifted to UTC. Each escaped as the raw Python error (or the
# caller's own exception) until the check or its message stopped calling into the value.
class Boom(Exception):
    pass


def _boom(*_a, **_k):
    raise Boom("the value's own method raised")


class LoudRepr:                 # any message quoting it with !r raised
    __repr__ = __str__ = _boom


class LoudInt(int):             # an int whose str() raises: messages printing it raised
    __repr__ = __str__ = _boom


class LoudStr(str):             # a str whose methods raise: strip() in the checks raised
    strip = replace = _boom


class LoudList(list):           # a list whose len()/iter() raise
    __len__ = __iter__ = _boom


class LoudDict(dict):           # a dict whose keys()/get()/items() raise
    keys = get = items = __iter__ = __contains__ = __getitem__ = _boom


class LoudPath:                 # an os.PathLike whose __fspath__ raises
    __fspath__ = _boom


class LoudIterable:            # an iterable whose iter() raises
    __iter__ = _boom


class NoFloat:                  # an embedding component whose float() raises
    __float__ = __index__ = _boom


class TZ(tzinfo):
    def __init__(self, offset):
        self.offset = offset

    def utcoffset(self, dt):
        return self.offset() if callable(self.offset) else self.offset

    def dst(self, dt):
        return None


def aware(offset, year=2090) -> datetime:
    return datetime(year, 1, 1, tzinfo=TZ(offset))


EARLIEST_PLUS = "0001-01-01T00:00:00+23:59"      # year 0 in UTC
LATEST_MINUS = "9999-12-31T23:59:00-23:59"      # year 10000 in UTC


texts = st.one_of(
    st.text(max_size=40),                                     # every Unicode category, incl. surrogates
    st.text(alphabet=st.characters(codec=None), max_size=10).map(lambda s: s + "\x00"),
    st.just(""), st.just("   "), st.just("\ud800 lone"), st.just("x" * 1_000_001),
    st.integers(), st.none(), st.binary(max_size=5), st.lists(st.text(max_size=3), max_size=2),
    st.just(np.str_("x")), st.just(bytearray(b"x")),                 # a str subclass; bytes-like
)
ids = st.one_of(st.integers(min_value=-2**70, max_value=2**70), st.just(0), st.just(-1), st.just(2**63),
                st.text(max_size=12), st.just("12a"), st.booleans(), st.none(), st.floats(),
                st.just(10**400), st.just("9" * 5000),   # beyond any float; past int()'s digit limit
                st.sampled_from([np.int64(5), np.float64(3.0), np.array(7), Decimal("NaN")]))
floats = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**30, 10**30),
                   st.just(10**400), st.text(max_size=3), st.none(),
                   st.sampled_from([np.float64("nan"), np.float32(0.5), np.array(0.5), Decimal("1e400"),
                                    Fraction(1, 3), -0.0]))
embeddings = st.one_of(
    st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), max_size=DIM + 2),
    st.just([math.nan] * DIM), st.just([math.inf] * DIM), st.just([0.0] * DIM), st.just([1e300] * DIM),
    st.just([[1.0] * DIM]), st.just([1.0] * (DIM - 1) + [10**400]), st.text(max_size=4), st.none(),
    st.sampled_from([np.ones((2, DIM)), np.array(0.5), np.array([1.0, "a", None, 2.0], dtype=object),
                     [Decimal("NaN")] * DIM, [Fraction(1, 3)] * DIM, np.float32([np.nan] * DIM)]))
# edge offsets at the ends of the calendar (not datetime.max in UTC: a write there would leave
# this module's file no later write instant), and tzinfos that raise or give no usable offset
zones = st.sampled_from([timezone(timedelta(hours=23, minutes=59)), timezone(-timedelta(hours=23, minutes=59)),
                         TZ(_boom), TZ(timedelta(hours=30)), TZ("+01:00"), TZ(None)])
instants = st.one_of(st.datetimes(), st.text(max_size=30), st.just("2090-01-01T00:00:00"),
                     st.just("2090-13-45T99:00:00Z"), st.integers(), st.none(),
                     st.sampled_from([EARLIEST_PLUS, LATEST_MINUS]),
                     st.builds(lambda d, z: d.replace(tzinfo=z), st.sampled_from([datetime.min, datetime.max]), zones))


def canonical(db) -> dict:
    con = db.connection
    return {t: con.execute(f'SELECT * FROM "{t}" ORDER BY ALL').fetchall() for t in CANONICAL_TABLES}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("hostile") / "h.anatid")
    db = Anatid.open(path, tenant=1, embedding_dim=DIM)
    mine = db.remember("alpha beta", entities=["ada", "bob"], embedding=[1.0, 0, 0, 0], now=at(1))
    db.relate("ada", "bob", now=at(2))
    with Anatid.open(path, tenant=2) as other:
        foreign = other.remember("other tenant", entities=["ada"], now=at(3)).memory_id
    yield db, mine.memory_id, foreign
    db.close()


def attempt(db, call) -> None:
    before = canonical(db)
    try:
        call()
    except AnatidError:
        assert canonical(db) == before
    # any other exception propagates and fails the test


@FAST
@given(content=texts, entities=st.one_of(st.none(), texts, st.lists(texts, max_size=3)), kind=texts,
       confidence=floats, embedding=embeddings, valid_from=instants, now=instants)
def test_remember(hostile, content, entities, kind, confidence, embedding, valid_from, now):
    db, _, _ = hostile
    attempt(db, lambda: db.remember(content, entities=entities, kind=kind, confidence=confidence,
                                    embedding=embedding, valid_from=valid_from, now=now))


@FAST
@given(items=st.one_of(st.lists(st.fixed_dictionaries({"content": texts}, optional={"embedding": embeddings,
                                                                                     "episode": ids}), max_size=3),
                       texts, st.lists(st.integers(), max_size=2)))
def test_remember_many(hostile, items):
    db, _, _ = hostile
    attempt(db, lambda: db.remember_many(items))


# Entity names that collide (one new name in two pairs, two spellings of one key) among hostile ones.
entity_names = st.one_of(st.sampled_from(["e", "f", "g", " e ", "E", "ada", "Ada"]), texts)
fresh_names = st.uuids().map(lambda u: f"new {u.hex[:12]}")     # not yet in the file, whatever ran before
pairs = st.one_of(
    st.builds(lambda n, x, y: [(n, x), (f" {n.upper()} ", y)], fresh_names,
              st.sampled_from(["e", "f", "ada"]), st.sampled_from(["e", "f", "ada"])),
    st.lists(st.one_of(st.tuples(entity_names, entity_names),
                       st.tuples(entity_names, entity_names, texts, floats),
                       st.fixed_dictionaries({"a": entity_names, "b": entity_names},
                                             optional={"rel_kind": texts, "weight": floats, "other": texts})),
             max_size=4),
    texts, st.lists(st.integers(), max_size=2), st.just({"a": "e", "b": "f"}))
bulk_items = st.one_of(
    st.lists(st.fixed_dictionaries({"content": texts}, optional={
        "entities": st.one_of(entity_names, st.lists(entity_names, max_size=3)), "kind": texts,
        "confidence": floats, "embedding": embeddings, "episode": st.one_of(ids, texts), "writer": texts,
        "valid_from": instants, "valid_to": instants}), max_size=3),
    st.lists(st.fixed_dictionaries({"content": texts}), max_size=3).map(iter))   # a one-shot iterator


@FAST
@given(items=bulk_items, pairs=pairs, writer=st.one_of(st.none(), texts), now=st.one_of(st.none(), instants))
def test_bulk_verbs(hostile, items, pairs, writer, now):
    """The bulk verbs with now= and colliding names: relate_many raised DuckDB's raw
    duplicate-key error for a new name in two pairs."""
    db, _, _ = hostile
    attempt(db, lambda: db.remember_many(items, writer=writer, now=now))
    attempt(db, lambda: db.relate_many(pairs, writer=writer, now=now))


# now= under the real clock bound (conftest lifts it for the suite's 2090 instants): instants
# across every year, and some within minutes of the bound either side.
bounded_instants = st.one_of(
    instants,
    st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(timezone.utc)),
    st.timedeltas(min_value=-2 * FUTURE_TOLERANCE, max_value=2 * FUTURE_TOLERANCE).map(lambda d: utcnow() + d))


@pytest.fixture(scope="module")
def bounded(tmp_path_factory):
    db = Anatid.open(str(tmp_path_factory.mktemp("bounded") / "b.anatid"), tenant=1, embedding_dim=DIM)
    mine = db.remember("alpha beta", entities=["ada", "bob"], embedding=[1.0, 0, 0, 0])   # the wall clock
    yield db, mine.memory_id
    db.close()


@FAST
@given(now=bounded_instants, content=texts, names=st.lists(entity_names, max_size=3))
def test_now_never_moves_the_write_clock_past_the_bound(bounded, monkeypatch, now, content, names):
    """Whatever now= a write verb is given, the writes after it are stamped no later than the
    wall clock + FUTURE_TOLERANCE: now="9000-01-01" stamped every later write in year 9000."""
    monkeypatch.delenv(SIMULATED_TIME_ENV, raising=False)
    db, mine = bounded
    attempt(db, lambda: db.remember(content, entities=names, now=now))
    attempt(db, lambda: db.remember_many([{"content": "batch", "entities": names}], now=now))
    attempt(db, lambda: db.relate_many([(n, "zed") for n in names], now=now))
    attempt(db, lambda: db.reinforce(mine, now=now))
    attempt(db, lambda: db.episode("an episode", now=now))
    probe = db.remember("probe")
    assert probe.tx_from <= utcnow() + FUTURE_TOLERANCE


@FAST
@given(target=ids, content=texts, version=ids, now=instants, amount=floats, hard=st.one_of(st.booleans(), texts))
def test_id_verbs(hostile, target, content, version, now, amount, hard):
    db, _, foreign = hostile
    for t in (target, foreign):
        attempt(db, lambda: db.supersede(t, content, now=now))
        attempt(db, lambda: db.update(t, content, expected_version=version, now=now))
        attempt(db, lambda: db.forget(t, hard=hard, now=now))
        attempt(db, lambda: db.reinforce(t, amount, now=now))
        attempt(db, lambda: db.get(t))
        attempt(db, lambda: db.provenance(t))


@FAST
@given(a=texts, b=texts, rel=texts, weight=floats, now=instants)
def test_entity_verbs(hostile, a, b, rel, weight, now):
    db, _, _ = hostile
    attempt(db, lambda: db.relate(a, b, rel, weight=weight, now=now))
    attempt(db, lambda: db.unrelate(a, b, rel, now=now))
    attempt(db, lambda: db.upsert_entity(a, b, now=now))
    attempt(db, lambda: db.episode(a, source=b, now=now))


@FAST
@given(query=texts, embedding=embeddings, k=ids, seed=texts, as_of=instants, hops=ids)
def test_reads(hostile, query, embedding, k, seed, as_of, hops):
    db, _, _ = hostile
    attempt(db, lambda: db.recall(query, embedding=embedding, k=k, seed_entity=seed))
    attempt(db, lambda: db.recall_2hop(seed, as_of=as_of))
    attempt(db, lambda: db.context(seed, hops=hops))
    attempt(db, lambda: db.as_of(as_of))



# Values no float can hold, each where its verb converts it: Python raises OverflowError (or,
# past 4,300 digits, ValueError) for these unless anatid checks first. Deterministic, so a
# regression fails every run, not only when hypothesis happens to draw the value.
HUGE = 10**400


@pytest.mark.parametrize("call", [
    lambda db, m: db.remember("x", embedding=[1.0] * (DIM - 1) + [HUGE]),
    lambda db, m: db.remember("x", confidence=HUGE),
    # two items with vectors: the batch's one-pass conversion, then the per-item error
    lambda db, m: db.remember_many([{"content": "x", "embedding": [1.0] * DIM},
                                    {"content": "y", "embedding": [1.0] * (DIM - 1) + [HUGE]}]),
    lambda db, m: db.reinforce(m, amount=HUGE),
    lambda db, m: db.relate("ada", "bob", weight=HUGE),
    lambda db, m: db.recall("alpha", embedding=[1.0] * (DIM - 1) + [HUGE]),
    lambda db, m: db.get("9" * 5000),
    lambda db, m: db.get(10**5000),
    lambda db, m: db.forget(-(10**5000)),
], ids=["remember-embedding", "remember-confidence", "remember_many-embedding", "reinforce", "relate",
        "recall-embedding", "get-digits", "get-int", "forget-negative"])
def test_numbers_beyond_any_float_are_typed_errors(hostile, call):
    db, mine, _ = hostile
    before = canonical(db)
    with pytest.raises(AnatidError) as err:
        call(db, mine)
    assert "range" in str(err.value)
    assert canonical(db) == before


@pytest.mark.parametrize("call", [
    lambda db, m: db.remember("x", now=EARLIEST_PLUS),
    lambda db, m: db.remember("x", valid_to=LATEST_MINUS),
    lambda db, m: db.recall("alpha", as_of=LATEST_MINUS),
    lambda db, m: db.remember("x", now=datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=23, minutes=59)))),
    lambda db, m: db.remember("x", now=aware(_boom)),                # utcoffset() raises
    lambda db, m: db.get(m, as_of=aware(timedelta(hours=30))),        # |offset| >= 24 h
    lambda db, m: db.forget(m, now=aware("+01:00")),                  # utcoffset() returns a str
    lambda db, m: db.prune(older_than=timedelta.max),                 # the cutoff is before year 1
    lambda db, m: db.recall("\ud800 lone"),                           # DuckDB's own conversion error
    lambda db, m: db.context("ada", hops=LoudRepr()),
    lambda db, m: db.recall("alpha", weights=LoudRepr()),
    lambda db, m: db.remember("x", confidence=LoudInt(5)),
    lambda db, m: db.update(m, "y", expected_version=LoudInt(-1)),
    lambda db, m: db.get(LoudStr("12a")),
    lambda db, m: db.remember("x", embedding=[1.0, 0.0, 0.0, NoFloat()]),
    lambda db, m: db.remember_many([{"content": "x", "embedding": [1.0] * DIM},
                                    {"content": "y", "embedding": [1.0, 0.0, 0.0, NoFloat()]}]),
    lambda db, m: db.supersede(m, "y", kind=np.array(["a", "b"])),    # `kind or "fact"` asked its truth
    lambda db, m: db.recall("alpha", allow_slow=np.array([1, 2])),
    lambda db, m: db.index_health(all_tenants=np.array([1, 2])),
    lambda db, m: db.relate_many(5),
    lambda db, m: db.relate_many(LoudIterable()),
    lambda db, m: db.relate_many([LoudRepr()]),
    lambda db, m: db.maintain_indexes(indexes=5),
    lambda db, m: db.maintain_indexes(indexes=[["graph"]]),
    lambda db, m: db.maintain_indexes(progress=5, force=True),
    lambda db, m: db.atomic(5),
], ids=["now-year0", "valid_to-year10000", "as_of-year10000", "now-datetime-year0", "tzinfo-raises",
        "tzinfo-30h", "tzinfo-str", "prune-older_than-max", "recall-surrogate", "hops-repr", "weights-repr",
        "confidence-int-subclass", "expected_version-int-subclass", "id-str-subclass",
        "embedding-float-raises", "remember_many-float-raises", "supersede-kind-array", "allow_slow-array",
        "index_health-array", "relate_many-int", "relate_many-iter-raises", "relate_many-pair-repr",
        "maintain-indexes-int", "maintain-indexes-unhashable", "maintain-progress", "atomic-not-callable"])
def test_hostile_values_are_typed_errors(hostile, call):
    db, mine, _ = hostile
    before = canonical(db)
    with pytest.raises(AnatidError):
        call(db, mine)
    assert canonical(db) == before


def test_write_after_the_last_representable_instant(tmp_path):
    """An explicit now= at datetime.max is honoured; a later write without now= has no later
    instant to take: a typed error (Python's OverflowError before), the file unchanged."""
    with Anatid.open(str(tmp_path / "max.anatid")) as db:
        db.remember("at the end of time", now=datetime.max.replace(tzinfo=timezone.utc))
        before = canonical(db)
        with pytest.raises(AnatidError, match="no later write instant"):
            db.remember("after it")
        assert canonical(db) == before


@pytest.mark.parametrize("call", [
    lambda d: Anatid.open(["x"]),                    # str() of it named a file "['x']"
    lambda d: Anatid.open(str(d / "a\x00b")),
    lambda d: Anatid.open(str(d / "\ud800")),
    lambda d: DatabasePool("{tenant}.anatid", root=str(d / "\ud800")),
    lambda d: DatabasePool("{tenant}.anatid", root=str(d / ("r" * 5000))),
    lambda d: DatabasePool("{tenant}.anatid", root=d, max_open=LoudRepr()),
    lambda d: DatabasePool("{tenant}.anatid", root=LoudPath()),
    lambda d: Anatid.open(LoudPath()),
    lambda d: Anatid.open(str(d / ("9" * 5000))),
    lambda d: DatabasePool("{tenant}.anatid", root=d).get(10**5000),
    lambda d: DatabasePool("{tenant}.anatid", root=d).get("a").require(LoudInt(3)),
    lambda d: MaintenancePolicy(max_journal_rows=LoudRepr()),
], ids=["open-list", "open-nul", "open-surrogate", "pool-root-surrogate", "pool-root-too-long",
        "pool-max_open-repr", "pool-root-fspath-raises", "open-fspath-raises", "open-name-too-long", "pool-int-5000-digits",
        "pool-require-int-subclass", "policy-repr"])
def test_hostile_paths_and_options_are_typed_errors(tmp_path, monkeypatch, call):
    monkeypatch.chdir(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(AnatidError):
        call(tmp_path)
    # a handle the call opened (the pool's "a") is garbage now, in a reference cycle of the
    # traceback: collected, it closes and DuckDB folds its WAL into the file; left to the
    # collector's timing, the WAL was there or not from run to run
    gc.collect()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "a.anatid") == before


def test_subclasses_are_read_as_the_plain_values_they_hold(tmp_path):
    """A str, int or list subclass is accepted as the str, int or list it holds, read through
    the base type, so its own (raising) methods never run: they raised Boom before."""
    db = Anatid.open(str(tmp_path / "s.anatid"))
    db.relate("ada", "bob")
    m = db.remember(LoudStr("loud"), entities=[LoudStr("ada")], kind=LoudStr("fact"), confidence=LoudInt(1))
    assert (m.content, m.entities, m.kind, type(m.content)) == ("loud", ("ada",), "fact", str)
    assert db.get(LoudStr(str(m.memory_id))).memory_id == m.memory_id
    [n, n2] = db.remember_many(LoudList([{"content": LoudStr("many"), "entities": LoudList([LoudStr("ada")])},
                                         LoudDict(content="loud dict", embedding=[1.0, 0.0, 0.0, 0.0])]))
    assert (db.get(n).entities, db.get(n2).content) == (("ada",), "loud dict")
    assert m.memory_id in [h.memory_id for h in db.recall(LoudStr("loud"), kinds=LoudList(["fact"]))]
    assert [(e.src_id, e.dst_id) for e in db.relate_many(LoudList([("ada", "bob")]))] == \
        [(e.src_id, e.dst_id) for e in db.relate_many([("ada", "bob")])]
    db.close()
    with DatabasePool(LoudStr("{tenant}.anatid"), root=tmp_path / "pool") as pool:
        assert pool.path_for(LoudStr("acme")).name == "acme.anatid"
