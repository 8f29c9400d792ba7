"""Several tenants in one file: no recall of any arm returns another tenant's id.

The tenants share entity names, words and near-identical vectors on purpose,
so a missing tenant filter anywhere would surface foreign ids. The issue asks
10,000 recalls; CI runs ANATID_TENANCY_RECALLS (default 250) of them.
"""
from __future__ import annotations

import os
import random

import pytest

from anatid import Anatid, NotFoundError

from conftest import at

RECALLS = int(os.environ.get("ANATID_TENANCY_RECALLS", "250"))
TENANTS = [1, 2, 3, 7]
NAMES = ["ada", "bob", "cyd", "dee", "eve"]
WORDS = ["apple", "river", "stone", "cloud", "ember", "lumen", "quartz"]


@pytest.fixture(scope="module")
def tenant_file(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("tenancy") / "shared.anatid")
    rng = random.Random(5)
    owned: dict[int, set[int]] = {}
    clock = 0
    for t in TENANTS:
        db = Anatid.open(path, tenant=t, embedding_dim=4)
        items = [{"content": " ".join(rng.choices(WORDS, k=4)) + f" {rng.choice(NAMES)}",
                  "entities": rng.sample(NAMES, 2), "embedding": [rng.uniform(0.1, 1) for _ in range(4)]}
                 for _ in range(60)]
        clock += 1
        ids = db.remember_many(items, now=at(clock))
        for a, b in zip(NAMES, NAMES[1:]):
            clock += 1
            db.relate(a, b, "knows", now=at(clock))
        clock += 1
        old = db.supersede(ids[0], "apple river revised", now=at(clock))
        clock += 1
        db.forget(ids[1], now=at(clock))
        owned[t] = set(ids) | {old.memory_id}
        db.close()
    return path, owned


def test_random_recalls_of_every_arm_stay_in_their_tenant(tenant_file):
    path, owned = tenant_file
    rng = random.Random(11)
    handles = {t: Anatid.open(path, tenant=t) for t in TENANTS}
    try:
        seen = 0
        for i in range(RECALLS):
            t = rng.choice(TENANTS)
            db = handles[t]
            arm = i % 5
            query = " ".join(rng.sample(WORDS + NAMES, 2))
            emb = [rng.uniform(0.1, 1) for _ in range(4)]
            if arm == 0:
                hits = db.recall(query, k=20)
            elif arm == 1:
                hits = db.recall("", embedding=emb, k=20)
            elif arm == 2:
                hits = db.recall(query, embedding=emb, seed_entity=rng.choice(NAMES), k=20)
            elif arm == 3:
                hits = db.recall_2hop(rng.choice(NAMES), limit=50)
            else:
                hits = db.as_of(at(rng.randint(1, 40))).recall(query, embedding=emb, k=20)
            ids = {h.memory_id for h in hits}
            assert ids <= owned[t], (t, arm, ids - owned[t])
            seen += len(ids)
        assert seen > RECALLS  # the recalls did return things
    finally:
        for h in handles.values():
            h.close()


def test_other_tenants_ids_are_not_found(tenant_file):
    path, owned = tenant_file
    with Anatid.open(path, tenant=1) as db:
        foreign = sorted(owned[2])[5]
        for call in (lambda: db.get(foreign), lambda: db.forget(foreign),
                     lambda: db.update(foreign, "x", expected_version=1),
                     lambda: db.supersede(foreign, "x"), lambda: db.reinforce(foreign),
                     lambda: db.provenance(foreign)):
            with pytest.raises(NotFoundError):
                call()
