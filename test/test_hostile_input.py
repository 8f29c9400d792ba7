"""Hypothesis drives every write verb with adversarial values: only anatid
errors come out, and a rejected call leaves the canonical tables unchanged.

One file per test function (hypothesis reuses it across examples); a call
that happens to succeed is fine, a call that fails must change nothing.
"""
from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from anatid import Anatid, AnatidError
from anatid.schema import CANONICAL_TABLES

from conftest import DIM, at

FAST = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))

texts = st.one_of(
    st.text(max_size=40),                                     # every Unicode category, incl. surrogates
    st.text(alphabet=st.characters(codec=None), max_size=10).map(lambda s: s + "\x00"),
    st.just(""), st.just("   "), st.just("\ud800 lone"), st.just("x" * 1_000_001),
    st.integers(), st.none(), st.binary(max_size=5), st.lists(st.text(max_size=3), max_size=2),
)
ids = st.one_of(st.integers(min_value=-2**70, max_value=2**70), st.just(0), st.just(-1), st.just(2**63),
                st.text(max_size=12), st.just("12a"), st.booleans(), st.none(), st.floats(),
                st.just(10**400), st.just("9" * 5000))  # beyond any float; past int()'s digit limit
floats = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**30, 10**30),
                   st.just(10**400), st.text(max_size=3), st.none())
embeddings = st.one_of(
    st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), max_size=DIM + 2),
    st.just([math.nan] * DIM), st.just([math.inf] * DIM), st.just([0.0] * DIM), st.just([1e300] * DIM),
    st.just([[1.0] * DIM]), st.just([1.0] * (DIM - 1) + [10**400]), st.text(max_size=4), st.none())
instants = st.one_of(st.datetimes(), st.text(max_size=30), st.just("2090-01-01T00:00:00"),
                     st.just("2090-13-45T99:00:00Z"), st.integers(), st.none())


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
