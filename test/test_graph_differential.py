"""Graph recall, three ways, on random write sequences across several tenants.

Random relate / unrelate / remember (some with a future or past validity) /
remember_many / supersede / forget (soft and hard), interleaved with reads and with
maintain_indexes() at random points: the native engine, the SQL oracle and a small
Python model must return the same ids in the same order every time.
"""
from __future__ import annotations

import random
import time
from datetime import datetime, timedelta, timezone

import pytest

import anatid
from anatid import validate
from anatid.verbs.graph_sql import graph_recall_oracle

KINDS = ("fact", "note", "plan")
NAMES = [f"Entity {i}" for i in range(14)]


def _native_or_skip(db):
    if not db.native.loaded:
        pytest.skip(f"native extension not loaded: {db.native.reason}")


class Model:
    """What graph recall must answer, from first principles."""

    def __init__(self):
        self.pairs: set[frozenset] = set()
        self.memories: dict[int, dict] = {}  # id -> {about: [names], kind, vf, vt, gone}

    def answer(self, seeds, hops, kinds, limit, now):
        dist = {s.lower(): 0 for s in seeds}
        frontier = list(dist)
        for h in range(hops):
            nxt = []
            for v in frontier:
                for p in self.pairs:
                    if v in p:
                        (u,) = p - {v}
                        if u not in dist:
                            dist[u] = h + 1
                            nxt.append(u)
            frontier = nxt
        hits = []
        for mid, m in self.memories.items():
            if m["gone"] or not (m["vf"] <= now and (m["vt"] is None or now < m["vt"])):
                continue
            if kinds and m["kind"] not in kinds:
                continue
            ds = [dist[n.lower()] for n in m["about"] if n.lower() in dist]
            if ds:
                hits.append((min(ds), -mid, mid))
        hits.sort()
        return [(mid, hop) for hop, _, mid in hits[:limit]]


def _oracle(db, seeds, hops, kinds, limit):
    store = db._store
    keys = [validate.name_key(s) for s in seeds]
    cur = store.read()
    res = graph_recall_oracle(store, cur, store.view(None), keys, hops, list(kinds) if kinds else None, limit)
    return [(h.memory_id, h.hop) for h in res]


def _run(tmp_path, seed: int, steps: int, maintain_every: float, maintain_first: bool = False):
    rng = random.Random(seed)
    path = str(tmp_path / f"diff{seed}.anatid")
    dbs = {t: anatid.Anatid.open(path, tenant=t) for t in (0, 1, 2)}
    _native_or_skip(dbs[0])
    models = {t: Model() for t in dbs}
    utc = timezone.utc
    checked = natives = 0
    try:
        if maintain_first:
            for db in dbs.values():
                db.maintain_indexes()
        for step in range(steps):
            t = rng.choice(list(dbs))
            db, model = dbs[t], models[t]
            op = rng.random()
            real_now = datetime.now(utc)
            if op < 0.2:
                a, b = rng.sample(NAMES, 2)
                db.relate(a, b, rng.choice(["knows", "related"]))
                model.pairs.add(frozenset((a.lower(), b.lower())))
            elif op < 0.28 and model.pairs:
                a, b = sorted(rng.choice(sorted(model.pairs, key=sorted)))
                db.unrelate(a, b)
                model.pairs.discard(frozenset((a, b)))
            elif op < 0.5:
                names = rng.sample(NAMES, rng.randint(1, 3))
                kind = rng.choice(KINDS)
                kw = {}
                r = rng.random()
                if r < 0.1:
                    kw["valid_from"] = real_now + timedelta(days=1)  # not yet true
                elif r < 0.2:
                    kw["valid_to"] = real_now + timedelta(days=1)  # true until tomorrow
                elif r < 0.25:
                    kw["valid_from"] = real_now - timedelta(days=2)
                    kw["valid_to"] = real_now - timedelta(days=1)  # already over
                m = db.remember(f"memory {step}", names, kind=kind, **kw)
                model.memories[m.memory_id] = {"about": names, "kind": kind,
                                               "vf": m.valid_from, "vt": m.valid_to, "gone": False}
            elif op < 0.6:
                items = [{"content": f"bulk {step}.{i}", "entities": rng.sample(NAMES, rng.randint(1, 2)),
                          "kind": rng.choice(KINDS)} for i in range(rng.randint(1, 5))]
                ids = db.remember_many(items)
                for mid, item in zip(ids, items):
                    got = db.get(mid)
                    model.memories[mid] = {"about": item["entities"], "kind": item["kind"],
                                           "vf": got.valid_from, "vt": None, "gone": False}
            elif op < 0.7:
                live = [mid for mid, m in model.memories.items()
                        if not m["gone"] and m["vt"] is None and m["vf"] <= real_now]
                if live:
                    old = rng.choice(live)
                    new = db.supersede(old, f"revised {step}")
                    om = model.memories[old]
                    om["vt"] = new.valid_from
                    model.memories[new.memory_id] = {"about": list(new.entities), "kind": om["kind"],
                                                     "vf": new.valid_from, "vt": None, "gone": False}
            elif op < 0.8:
                live = [mid for mid, m in model.memories.items() if not m["gone"]]
                if live:
                    victim = rng.choice(live)
                    hard = rng.random() < 0.4
                    db.forget(victim, hard=hard)
                    model.memories[victim]["gone"] = True
            elif op < 0.8 + maintain_every:
                db.maintain_indexes(all_tenants=rng.random() < 0.5)
            # a read after every step, on a random tenant
            rt = rng.choice(list(dbs))
            rdb = dbs[rt]
            seeds = rng.sample(NAMES, rng.randint(1, 2))
            hops = rng.randint(0, 4)
            kinds = tuple(rng.sample(KINDS, rng.randint(1, 2))) if rng.random() < 0.25 else None
            limit = rng.choice([1, 3, 10, 50])
            known = rdb.connection.execute(
                "SELECT count(*) FROM anatid_entities WHERE tenant_id = ? AND name_key IN (SELECT unnest(?))",
                [rt, [s.lower() for s in seeds]]).fetchone()[0]
            if not known:
                continue
            native = rdb.context(seeds, hops=hops, kinds=list(kinds) if kinds else None, limit=limit)
            got = [(h.memory_id, h.hop) for h in native]
            oracle = _oracle(rdb, seeds, hops, kinds, limit)
            want = models[rt].answer(seeds, hops, kinds, limit, datetime.now(utc))
            assert oracle == want, f"step {step}: the oracle disagrees with the model"
            assert got == want, f"step {step}: native ({native.engine}, {native.notes}) disagrees"
            checked += 1
            natives += native.engine == "native"
    finally:
        for db in dbs.values():
            db.close()
    return checked, natives


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_native_oracle_and_model_agree(tmp_path, seed):
    checked, natives = _run(tmp_path, seed, steps=70, maintain_every=0.05)
    assert checked > 20 and natives > 0


def test_agree_on_journal_alone(tmp_path):
    # an empty base built first, then every write reaches reads through the journal only
    checked, natives = _run(tmp_path, 11, steps=60, maintain_every=0.0, maintain_first=True)
    assert checked > 20 and natives == checked


def test_agree_without_any_generation(tmp_path):
    # no maintain_indexes() ever: the journal alone is the graph, and native answers every read
    checked, natives = _run(tmp_path, 12, steps=60, maintain_every=0.0)
    assert checked > 20 and natives == checked


def test_a_journal_lacking_rows_is_not_trusted_without_a_generation(tmp_path):
    # rows written around anatid (plain SQL) are in no journal: the oracle answers, and says why
    with anatid.Anatid.open(str(tmp_path / "p.anatid")) as db:
        _native_or_skip(db)
        db.remember("Ada wrote notes", ["Ada"])
        db.relate("Ada", "Babbage")
        assert db.recall_2hop("Ada").engine == "native"
        con = db.connection
        babbage = con.execute("SELECT entity_id FROM anatid_entities WHERE name_key = 'babbage'").fetchone()[0]
        con.execute("""INSERT INTO anatid_memories (memory_id, version, tenant_id, content, kind, confidence, strength,
                           valid_from, tx_from)
                       VALUES (42, 1, 0, 'written by plain SQL', 'fact', 1.0, 1.0, now()::TIMESTAMP - INTERVAL 1 HOUR,
                               now()::TIMESTAMP - INTERVAL 1 HOUR)""")
        con.execute("""INSERT INTO anatid_edges (edge_id, tenant_id, kind, src_id, dst_id, weight, valid_from, tx_from)
                       VALUES (43, 0, 'about', 42, ?, 1.0, now()::TIMESTAMP - INTERVAL 1 HOUR,
                               now()::TIMESTAMP - INTERVAL 1 HOUR)""", [babbage])
        hits = db.recall_2hop("Ada")
        assert hits.engine == "sql" and "no_graph_generation" in hits.notes
        assert any("lacks rows" in n for n in hits.notes)
        assert [h.content for h in hits] == ["Ada wrote notes", "written by plain SQL"]
        # a relates pair written around anatid is caught the same way
        other = anatid.Anatid.open(str(tmp_path / "q.anatid"))
        try:
            other.remember("Curie measured", ["Curie"])
            other.remember("Darwin sailed", ["Darwin"])
            ids = dict(other.connection.execute("SELECT name_key, entity_id FROM anatid_entities").fetchall())
            other.connection.execute(
                """INSERT INTO anatid_edges (edge_id, tenant_id, kind, src_id, dst_id, rel_kind, weight, valid_from,
                       tx_from) VALUES (44, 0, 'relates', ?, ?, 'knows', 1.0, now()::TIMESTAMP - INTERVAL 1 HOUR,
                       now()::TIMESTAMP - INTERVAL 1 HOUR)""", [ids["curie"], ids["darwin"]])
            two = other.recall_2hop("Curie")
            assert two.engine == "sql" and [h.content for h in two] == ["Curie measured", "Darwin sailed"]
        finally:
            other.close()


def test_reads_use_the_native_engine_after_maintenance(tmp_path):
    with anatid.Anatid.open(str(tmp_path / "e.anatid")) as db:
        _native_or_skip(db)
        db.remember("Ada wrote notes", ["Ada"])
        first = db.recall_2hop("Ada")
        assert first.engine == "native" and "absent" in first.notes     # the journal alone
        report = db.maintain_indexes()
        assert report["graph"]["tenants"][0]["memories"] == 1
        db.relate("Ada", "Babbage")
        db.remember("Babbage built engines", ["Babbage"])
        hits = db.recall_2hop("Ada")
        assert hits.engine == "native" and hits.notes == ()
        assert [h.content for h in hits] == ["Ada wrote notes", "Babbage built engines"]
        past = db.as_of(datetime.now(timezone.utc)).recall_2hop("Ada")
        assert past.engine == "sql" and "historical_query" in past.notes
        graph = db.stats()["graph"]
        assert graph["journal_rows"] >= 2 and graph["cache"]["entries"] >= 1


def test_a_write_is_visible_inside_its_own_transaction(tmp_path):
    with anatid.Anatid.open(str(tmp_path / "t.anatid")) as db:
        _native_or_skip(db)
        db.remember("Ada", ["Ada"])
        db.maintain_indexes()
        with db.transaction():
            db.relate("Ada", "Lovelace")
            m = db.remember("uncommitted", ["Lovelace"])
            hits = db.recall_2hop("Ada")
            assert hits.engine == "native" and m.memory_id in [h.memory_id for h in hits]


def test_validity_that_ends_by_itself_is_not_trusted_from_the_base(tmp_path):
    with anatid.Anatid.open(str(tmp_path / "v.anatid")) as db:
        _native_or_skip(db)
        soon = datetime.now(timezone.utc) + timedelta(seconds=1.5)
        m = db.remember("true for a moment", ["Ada"], valid_to=soon)
        db.remember("starts soon", ["Ada"], valid_from=soon)
        db.maintain_indexes()
        before = db.recall_2hop("Ada")
        assert [h.memory_id for h in before] == [m.memory_id] and before.engine == "native"
        time.sleep(max(0.0, (soon - datetime.now(timezone.utc)).total_seconds()) + 0.05)
        after = db.recall_2hop("Ada")
        assert after.engine == "native"
        assert [h.content for h in after] == ["starts soon"]


def test_maintenance_without_the_extension_skips_the_graph_and_reads_stay_correct(tmp_path, monkeypatch):
    monkeypatch.setenv("ANATID_NATIVE", "0")
    with anatid.Anatid.open(str(tmp_path / "sql.anatid")) as db:
        db.relate("Ada", "Babbage")
        m = db.remember("Babbage built engines", ["Babbage"])
        assert "skipped" in db.maintain_indexes()["graph"]
        hits = db.recall_2hop("Ada")
        assert hits.engine == "sql" and [h.memory_id for h in hits] == [m.memory_id]
