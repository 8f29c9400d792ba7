"""A commented walk through anatid: facts, the graph, time, evidence and erasure.

Run it with `python examples/quickstart.py [path]`. It needs no API key and no
network, and finishes in well under a second. Without a path it works in a
temporary directory and leaves nothing behind.
"""
from __future__ import annotations

import sys
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

from anatid import Anatid, ConflictError

# Every write verb takes now=, which makes a walkthrough (and a test) repeatable.
# Instants must be timezone-aware: a naive datetime is rejected.
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def walkthrough(path: str) -> None:
    # One file holds every tenant; a handle is scoped to one. embedding_dim is fixed
    # by the first open that gives it (or the first embedding written).
    with Anatid.open(path, tenant=1, embedding_dim=4) as db:
        # -- the graph: entities and the edges between them ---------------------------------------
        db.relate("Ada", "Kestrel", rel_kind="leads", now=at(0))      # Ada leads project Kestrel
        db.relate("Kestrel", "Bo", rel_kind="staffs", now=at(1))      # Bo works on Kestrel

        # -- facts, filed under entities, with their raw evidence ----------------------------------
        coffee = db.remember("Ada prefers dark roast coffee", entities=["Ada", "coffee"], kind="preference",
                             embedding=[0.0, 0.0, 0.0, 1.0], writer="agent-1",
                             episode="Standup 2026-03-01: Ada takes it dark roast.", now=at(2))
        db.remember("Bo is allergic to hazelnuts", entities=["Bo"], kind="health", writer="agent-1", now=at(3))
        db.remember("Kestrel ships in April", entities=["Kestrel"], writer="agent-2", now=at(4))

        # -- recall_2hop: everything within two edges of Ada, nearest first -------------------------
        # Ada (hop 0) -> Kestrel (hop 1) -> Bo (hop 2): the allergy is found from Ada.
        print("around Ada:")
        for hit in db.recall_2hop("Ada"):
            print(f"  hop {hit.hop}: {hit.content}")

        # -- beliefs change: supersede keeps the old row, closed and linked ------------------------
        decaf = db.supersede(coffee.memory_id, "Ada switched to decaf", writer="agent-1", now=at(10))
        print("old row current?", db.get(coffee.memory_id).is_current)
        print("at minute 5:", [h.content for h in db.as_of(at(5)).context("Ada")])
        print("now:        ", [h.content for h in db.context("Ada")])
        try:
            db.supersede(coffee.memory_id, "again", now=at(11))   # a closed row cannot be superseded twice
        except ConflictError as exc:
            print("conflict, retryable =", exc.retryable)

        # -- corrections are compare-and-swap on the version ----------------------------------------
        fixed = db.update(decaf.memory_id, "Ada switched to decaf oat latte", expected_version=1, now=at(12))
        print("version", fixed.version, "->", fixed.content)

        # -- provenance: the chain, the evidence, who wrote it --------------------------------------
        prov = db.provenance(decaf.memory_id)
        print("chain:", [m.content for m in prov.chain])
        print("evidence:", prov.source_text, "| writers:", prov.writers)

        # -- hybrid recall: vector, text and graph arms, fused --------------------------------------
        hits = db.recall("hazelnuts", seed_entity="Kestrel", k=3)
        print("recall:", [(h.content, h.sources) for h in hits])

        # -- forget: soft keeps the history, hard erases the text everywhere ------------------------
        ship = db.context("Kestrel")[0]
        db.forget(ship.memory_id, reason="plan changed", now=at(20))
        print("Kestrel now:", [h.content for h in db.context("Kestrel")])
        db.forget(coffee.memory_id, hard=True, writer="privacy-officer", now=at(21))
        leftovers = db.connection.execute(
            "SELECT count(*) FROM anatid_memories WHERE content LIKE '%dark roast%'").fetchone()[0]
        print("rows still holding 'dark roast':", leftovers)

        # -- stats: what is in the file and whether the native extension is serving reads ----------
        s = db.stats()
        print(f"stats: {s['entities']} entities, {s['current_memories']} current memories, "
              f"{s['open_relations']} open relations; native loaded: {s['native']['loaded']}")
        if not s["native"]["loaded"]:
            print("  (pure SQL because:", s["native"]["reason"] + ")")


def main() -> None:
    if len(sys.argv) > 1:
        walkthrough(sys.argv[1])
        return
    with tempfile.TemporaryDirectory() as tmp:
        walkthrough(str(Path(tmp) / "quickstart.anatid"))


if __name__ == "__main__":
    main()
