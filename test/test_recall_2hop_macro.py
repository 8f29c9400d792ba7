"""anatid.anatid_recall_2hop answers on a fresh file (one that never ran maintain_indexes()),
with the ids of Python's recall_2hop / context in the same order, and keeps answering the
same after a generation is built. Random graphs, seeded: edges opened and closed, memories
superseded, forgotten, of several kinds, some valid only from tomorrow."""
from __future__ import annotations

import random
from datetime import timedelta

import pytest

from anatid import Anatid, utcnow

NAMES = ["Ada", "Babbage", "Church", "Dijkstra", "Euler", "Fermat", "Gauss", "Hopper"]
KINDS = ["fact", "note", "event"]
MACRO = "SELECT memory_id, hop FROM anatid.anatid_recall_2hop(0, $seeds, hops := $hops, max_hits := $limit, kinds := $kinds)"


def _populate(db: Anatid, rng: random.Random) -> list[int]:
    ids, pairs = [], []
    for _ in range(10):
        a, b = rng.sample(NAMES, 2)
        db.relate(a, b)
        pairs.append((a, b))
    for i in range(30):
        about = rng.sample(NAMES, rng.randint(1, 2))
        later = rng.random() < 0.1
        m = db.remember(f"memory {i}", about, kind=rng.choice(KINDS),
                        valid_from=utcnow() + timedelta(days=1) if later else None)
        ids.append(m.memory_id)
    for a, b in rng.sample(sorted(set(pairs)), 2):
        db.unrelate(a, b)
    ids[3] = db.supersede(ids[3], "memory 3, revised").memory_id
    db.forget(ids[5])
    return ids


def _python(db: Anatid, seed: str, hops: int, limit: int, kinds):
    hits = db.recall_2hop(seed, kinds=kinds, limit=limit) if hops == 2 else \
        db.context(seed, hops=hops, kinds=kinds, limit=limit)
    return [(h.memory_id, h.hop) for h in hits]


def _cases(rng: random.Random):
    for seed in NAMES[:5]:
        yield seed, 2, 50, None
    for _ in range(8):
        yield rng.choice(NAMES), rng.randint(0, 4), rng.choice([3, 50]), rng.choice([None, ["note"], ["fact", "event"]])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_macro_answers_a_fresh_file_with_the_ids_of_recall_2hop(tmp_path, seed):
    rng = random.Random(seed)
    with Anatid.open(str(tmp_path / "fresh.anatid")) as db:
        if not db.native.loaded:
            pytest.skip(db.native.reason)
        _populate(db, rng)
        con = db.connection
        assert con.execute("SELECT count(*) FROM anatid_graph_generations").fetchone()[0] == 0
        cases = list(_cases(rng))
        fresh = []
        for name, hops, limit, kinds in cases:
            want = _python(db, name, hops, limit, kinds)
            got = con.execute(MACRO, {"seeds": [name], "hops": hops, "limit": limit, "kinds": kinds}).fetchall()
            assert got == want, (name, hops, limit, kinds)
            fresh.append(got)
        assert any(fresh), "every case answered nothing: the graph is too sparse to test anything"
        db.maintain_indexes()                      # the generation path answers the same
        for (name, hops, limit, kinds), before in zip(cases, fresh):
            got = con.execute(MACRO, {"seeds": [name], "hops": hops, "limit": limit, "kinds": kinds}).fetchall()
            assert got == before == _python(db, name, hops, limit, kinds)


def test_fresh_macro_folds_seeds_and_scores_like_the_native_path(tmp_path):
    with Anatid.open(str(tmp_path / "fresh.anatid")) as db:
        if not db.native.loaded:
            pytest.skip(db.native.reason)
        db.relate("Ada Lovelace", "Babbage")
        first = db.remember("notes on the engine", ["Ada Lovelace"])
        second = db.remember("the difference engine", ["Babbage"])
        rows = db.connection.execute(
            "SELECT * FROM anatid.anatid_recall_2hop(0, ['  ADA \t lovelace '])").fetchall()
        assert rows == [(first.memory_id, 0, 1.0), (second.memory_id, 1, 0.5)]
        with pytest.raises(Exception, match="hops must be between 0 and 4"):
            db.connection.execute("SELECT * FROM anatid.anatid_recall_2hop(0, ['ada'], hops := 5)").fetchall()
