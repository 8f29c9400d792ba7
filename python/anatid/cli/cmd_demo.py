"""`anatid demo`: write a few memories into a file in the working directory,
recall them three ways and show history. Needs no model and no network."""
from __future__ import annotations

import os

from .contract import EXIT_OK, add_json, creating, open_db, print_json

_DIM = 8


def _vector(*hot: int) -> list[float]:
    v = [0.0] * _DIM
    for i in hot:
        v[i] = 1.0
    return v


def register(sub) -> None:
    p = sub.add_parser("demo", help="write and recall a small memory in ./demo.anatid")
    p.add_argument("--db", default="demo.anatid", help="memory file to create (default ./demo.anatid)")
    add_json(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from ..timeutil import utcnow
    with creating(args.db) as fresh, open_db(args.db, read_only=False, create=True, embedding_dim=_DIM) as db:
        db.relate("Ada", "Kestrel", rel_kind="leads")
        db.relate("Kestrel", "Grace", rel_kind="member")
        m = db.remember("Ada prefers dark roast coffee", entities=["Ada", "coffee"], kind="preference",
                        embedding=_vector(0, 1), episode="Standup: Ada takes it dark roast.")
        db.remember("Grace is allergic to peanuts", entities=["Grace"], kind="health", embedding=_vector(2))
        db.remember("Kestrel ships on Fridays", entities=["Kestrel"], embedding=_vector(3))
        before = utcnow()
        db.supersede(m.memory_id, "Ada switched to decaf coffee", embedding=_vector(0, 1))
        hits = list(db.recall("coffee", embedding=_vector(0, 1), seed_entity="Ada", k=5))
        now_2hop = list(db.recall_2hop("Ada"))
        then_2hop = list(db.as_of(before).recall_2hop("Ada"))
        s = db.stats()
        native = "loaded" if db.native.loaded else "off: " + str(db.native.reason)
    path = os.path.abspath(args.db)
    if args.json:
        print_json({"path": path, "fresh": fresh, "native": native,
                    "recall": [{"memory_id": str(h.memory_id), "score": h.score, "content": h.content,
                                "sources": list(h.sources)} for h in hits],
                    "recall_2hop_now": [{"hop": h.hop, "content": h.content} for h in now_2hop],
                    "recall_2hop_before_supersede": [{"hop": h.hop, "content": h.content} for h in then_2hop],
                    "stats": s})
        return EXIT_OK
    print(f"memory file: {path}{'' if fresh else ' (existing; adding to it)'}")
    print(f"native extension: {native}")
    print("\nrecall('coffee', seed_entity='Ada'):")
    for h in hits:
        print(f"  {h.score:.4f}  {h.content!r:40} found by {', '.join(h.sources)}")
    print("\nrecall_2hop('Ada') now:")
    for h in now_2hop:
        print(f"  hop {h.hop}  {h.content}")
    print("\nrecall_2hop('Ada') before the supersede:")
    for h in then_2hop:
        print(f"  hop {h.hop}  {h.content}")
    print(f"\n{s['current_memories']} current memories, {s['entities']} entities, "
          f"{s['open_relations']} open relations")
    return EXIT_OK
