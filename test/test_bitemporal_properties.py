"""Property test: random write sequences against the pure-Python model in model.py.

Each example opens a fresh file and applies remember / supersede / forget
(soft and hard) / relate / unrelate / update at strictly increasing explicit
instants, including calls that must fail (the model says which error, and
for conflicts whether it is retryable). Then, at random instants (op
instants, half-way between them, before the first and after the last), the
ids and order of as_of(t).recall_2hop / context and the current view, and
the fields of get(), must equal the model's. A sweep over every op instant
checks each interval's boundaries (half-open: the end instant is outside).
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anatid import ConflictError, NotFoundError

from conftest import at, open_db
from model import Model

ENTITIES = ["Ada", "Bo", "Cy", "Dee", "Eve"]
SPELLINGS = {"Ada": ["Ada", "ADA", " ada "], "Bo": ["Bo"], "Cy": ["Cy", "cy"], "Dee": ["Dee"], "Eve": ["Eve"]}
KINDS = ["fact", "pref"]
REL_KINDS = ["knows", "likes"]
UNKNOWN_ID = 123_456_789

OPS = ["remember", "remember", "remember", "supersede", "forget", "forget_hard", "relate", "relate",
       "unrelate", "update"]


def _expect(db_call, expected):
    """Run db_call; it must raise `expected` = (exception class, retryable) or succeed when None."""
    exc, retryable = expected
    try:
        out = db_call()
    except Exception as e:        # noqa: BLE001 - compared against the model below
        assert exc is not None, f"unexpected {type(e).__name__}: {e}"
        assert isinstance(e, exc), f"expected {exc.__name__}, got {type(e).__name__}: {e}"
        if isinstance(e, ConflictError) and retryable is not None:
            assert e.retryable is retryable, e
        return False, None
    assert exc is None, f"expected {exc.__name__}, the call succeeded"
    return True, out


def _pick_memory(data, known):
    if not known or data.draw(st.integers(0, 9)) == 0:
        return UNKNOWN_ID
    return data.draw(st.sampled_from(sorted(known)))


def _apply(data, db, model, known, t):
    op = data.draw(st.sampled_from(OPS))
    if op == "remember":
        names = data.draw(st.lists(st.sampled_from(ENTITIES), max_size=3))
        spelled = [data.draw(st.sampled_from(SPELLINGS[n])) for n in names]
        kind = data.draw(st.sampled_from(KINDS))
        shape = data.draw(st.sampled_from(["now", "now", "past", "future", "closed"]))
        vf = vt = None
        if shape == "past":
            vf = t - data.draw(st.integers(1, 4))
        elif shape == "future":
            vf = t + data.draw(st.integers(1, 4))
        elif shape == "closed":
            vf = t - data.draw(st.integers(0, 3))
            vt = vf + data.draw(st.integers(1, 6))
        content = f"memory {len(known)} at {t}"
        m = db.remember(content, entities=spelled, kind=kind, now=at(t),
                        valid_from=None if vf is None else at(vf), valid_to=None if vt is None else at(vt))
        model.remember(m.memory_id, t, content, kind, spelled, vf, vt)
        known.add(m.memory_id)
        assert m.entities == model.entity_names(m.memory_id)
    elif op == "supersede":
        old = _pick_memory(data, known)
        content = f"supersedes {old} at {t}"
        ok, new = _expect(lambda: db.supersede(old, content, now=at(t)), model.supersede_error(old, t))
        if ok:
            model.supersede(old, new.memory_id, t, content)
            known.add(new.memory_id)
    elif op in ("forget", "forget_hard"):
        mid = _pick_memory(data, known)
        hard = op == "forget_hard"
        ok, _ = _expect(lambda: db.forget(mid, hard=hard, now=at(t)), model.forget_error(mid, t, hard))
        if ok:
            model.forget(mid, t, hard)
    elif op == "relate":
        a, b = data.draw(st.lists(st.sampled_from(ENTITIES), min_size=2, max_size=2, unique=True))
        rk = data.draw(st.sampled_from(REL_KINDS))
        db.relate(a, b, rel_kind=rk, now=at(t))
        model.relate(a, b, rk, t)
    elif op == "unrelate":
        a, b = data.draw(st.lists(st.sampled_from(ENTITIES), min_size=2, max_size=2, unique=True))
        rk = data.draw(st.sampled_from([None] + REL_KINDS))
        expected = model.unrelate_error(a, b, rk, t)
        ok, n = _expect(lambda: db.unrelate(a, b, rel_kind=rk, now=at(t)), expected)
        if ok:
            assert n == model.unrelate(a, b, rk, t)
    elif op == "update":
        mid = _pick_memory(data, known)
        cur = model.mems.get(mid)
        believed = cur.believed if cur else None
        version = believed.version if believed else 1
        if data.draw(st.integers(0, 4)) == 0:
            version += data.draw(st.sampled_from([-1, 1]))
        content = f"update of {mid} at {t}"
        if version < 1:
            version = 2
        ok, _ = _expect(lambda: db.update(mid, content, expected_version=version, now=at(t)),
                        model.update_error(mid, t, version))
        if ok:
            model.update(mid, t, content)


def _check_graph(db, model, seeds, hops, kinds, limit, t):
    if t is None:
        expected = model.graph(seeds, hops, model_now(model), None, kinds, limit)
        call = lambda: db.context(seeds, hops=hops, kinds=kinds, limit=limit)         # noqa: E731
    else:
        expected = model.graph(seeds, hops, t, t, kinds, limit)
        view = db.as_of(at(t))
        call = (lambda: view.recall_2hop(seeds, kinds=kinds, limit=limit)) if hops == 2 else \
            (lambda: view.context(seeds, hops=hops, kinds=kinds, limit=limit))        # noqa: E731
    if expected is NotFoundError:
        try:
            call()
        except NotFoundError:
            return
        raise AssertionError(f"expected NotFoundError for seeds {seeds}")
    got = [(h.memory_id, h.content, h.hop) for h in call()]
    assert got == expected, f"seeds={seeds} hops={hops} kinds={kinds} limit={limit} t={t}"


def model_now(model):
    return model.last_t


def _check_get(db, model, mid):
    expected = model.get(mid)
    if expected is NotFoundError:
        try:
            db.get(mid)
        except NotFoundError:
            return
        raise AssertionError(f"get({mid}) should be NotFoundError")
    g = db.get(mid)

    def inst(x):
        return None if x is None else at(x)
    got = {"version": g.version, "content": g.content, "kind": g.kind, "valid_from": g.valid_from,
           "valid_to": g.valid_to, "tx_from": g.tx_from, "tx_to": g.tx_to, "supersedes": g.supersedes,
           "superseded_by": g.superseded_by, "entities": g.entities}
    want = {**expected, **{k: inst(expected[k]) for k in ("valid_from", "valid_to", "tx_from", "tx_to")}}
    assert got == want, f"get({mid})"


# ANATID_PROPERTY_EXAMPLES=500 for a longer hunt; 40 keeps the suite fast.
@settings(max_examples=int(os.environ.get("ANATID_PROPERTY_EXAMPLES", "40")), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_histories_agree_with_the_model(data):
    with tempfile.TemporaryDirectory() as tmp:
        db = open_db(Path(tmp) / "prop.anatid", dim=None)
        try:
            model = Model()
            known: set[int] = set()
            n_ops = data.draw(st.integers(1, 18))
            t = 10
            for _ in range(n_ops):
                t += data.draw(st.integers(1, 3))
                model.last_t = t
                _apply(data, db, model, known, t)
            model.last_t = t
            instants = [x / 2 for x in range(2 * 8, 2 * t + 6)]
            for _ in range(data.draw(st.integers(3, 8))):
                seeds = data.draw(st.lists(st.sampled_from(ENTITIES), min_size=1, max_size=2, unique=True))
                hops = data.draw(st.integers(0, 3))
                kinds = data.draw(st.sampled_from([None, ["fact"], ["pref"], KINDS]))
                limit = data.draw(st.sampled_from([50, 50, 1, 3]))
                when = data.draw(st.sampled_from([None] + instants))
                _check_graph(db, model, seeds, hops, kinds, limit, when)
            # a sweep over every op instant (where intervals open and close) and just before it
            for x in range(10, t + 2):
                _check_graph(db, model, ENTITIES, 0, None, 50, x)
                _check_graph(db, model, ENTITIES, 0, None, 50, x - 0.5)
            for mid in sorted(known) + [UNKNOWN_ID]:
                _check_get(db, model, mid)
        finally:
            db.close()
