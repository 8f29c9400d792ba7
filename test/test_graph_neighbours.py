"""The graph arm's episode neighbours (graph_rank_sql.NEIGHBOURS, the one statement both
engines run) against a brute force over the canonical rows: for each trusted hit and each
episode it is evidence of, the visible memory just before and just after it in that
episode (memory_id order), filtered by kind after the choice, trusting 1/r.

Random files: several episodes, memories in two episodes (evidence rows added by plain
SQL, as a user may), forgets, supersedes, kinds, a second tenant with the same shape.
"""
from __future__ import annotations

import random

import pytest

from anatid import Anatid
from anatid.verbs import graph_rank_sql as g
from conftest import at

KINDS = ["fact", "event", "preference"]


def brute(con, tenant: int, view_params: dict, trusted: list[int], kinds) -> list[tuple]:
    at_ = view_params["valid_at"]
    visible = {int(m): k for m, k in con.execute(
        "SELECT memory_id, kind FROM anatid_memories WHERE tenant_id = ? AND tx_to IS NULL AND valid_from <= ? "
        "AND (valid_to IS NULL OR valid_to > ?)", [tenant, at_, at_]).fetchall()}
    evidence = con.execute("SELECT DISTINCT memory_id, episode_id FROM anatid_evidence WHERE tenant_id = ?",
                           [tenant]).fetchall()
    episodes_of: dict[int, set] = {}
    members: dict[int, set] = {}
    for m, e in evidence:
        episodes_of.setdefault(int(m), set()).add(e)
        members.setdefault(e, set()).add(int(m))
    out = []
    for r, t in enumerate(trusted, start=1):
        if t not in visible:
            continue
        for e in episodes_of.get(t, ()):
            seen = sorted(m for m in members[e] if m in visible)
            i = seen.index(t)
            for nb in ([seen[i - 1]] if i > 0 else []) + ([seen[i + 1]] if i + 1 < len(seen) else []):
                if kinds is None or visible[nb] in kinds:
                    out.append((nb, t, 1.0 / r))
    return sorted(out, key=lambda x: (x[1], x[0]))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_neighbours_equal_the_brute_force(tmp_path, seed):
    rng = random.Random(seed)
    path = str(tmp_path / "n.anatid")
    dbs = [Anatid.open(path, tenant=t) for t in (1, 2)]
    clock = 0
    try:
        live = {0: [], 1: []}
        for i, db in enumerate(dbs):
            episodes = []
            for _ in range(rng.randint(2, 5)):
                clock += 1
                episodes.append(db.episode(f"session {len(episodes)}", now=at(clock)).episode_id)
            for _ in range(rng.randint(15, 40)):
                clock += 1
                ep = rng.choice(episodes + [None])
                m = db.remember(f"turn {rng.randint(0, 999)}", ["Ada"], kind=rng.choice(KINDS), episode=ep,
                                now=at(clock))
                live[i].append(m.memory_id)
            con = db.connection
            for m in rng.sample(live[i], min(5, len(live[i]))):        # a memory in a second episode
                con.execute("INSERT INTO anatid_evidence VALUES (?, ?, ?)", [m, rng.choice(episodes), db.tenant])
            for _ in range(rng.randint(1, 5)):
                clock += 1
                victim = live[i].pop(rng.randrange(len(live[i])))
                if rng.random() < 0.5:
                    db.forget(victim, now=at(clock))
                else:
                    live[i].append(db.supersede(victim, "a newer turn", now=at(clock)).memory_id)
        db = dbs[0]
        store, con = db._store, db.connection
        view = store.view(None)
        for trial in range(30):
            trusted = rng.sample(live[0], rng.randint(1, 3))
            if rng.random() < 0.2:
                trusted.append(rng.choice(live[1]))                # another tenant's id: never a neighbour source
            kinds = rng.choice([None, ["fact"], ["event", "preference"]])
            p = {**view.params(store.tenant), "trusted": trusted, "neighbour": 1.0}
            if kinds:
                p["kinds"] = kinds
            got = [(int(a), int(b), float(c)) for a, b, c in
                   con.execute(g.neighbours_sql(view, with_kinds=bool(kinds)), p).fetchall()]
            want = brute(con, store.tenant, view.params(store.tenant), trusted, kinds)
            assert sorted(got, key=lambda x: (x[1], x[0])) == want, (trial, trusted, kinds)
            assert [x[:2] for x in got] == sorted((x[:2] for x in got), key=lambda x: (x[1], x[0]))
    finally:
        for db in dbs:
            db.close()
