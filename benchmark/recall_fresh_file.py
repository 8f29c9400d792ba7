"""recall() and recall_2hop() on a fresh file (never maintain_indexes()): the journal
statements (native_hybrid's _FRESH_SQL, the lean statement over an empty base, and
native_graph's _RECALL_JOURNAL_ALONE) against what they replaced (the anatid.anatid_hybrid
macro, the SQL graph walk and oracle), A/B interleaved in one process; then the same reads
on the fresh file against a twin holding the same memories after maintain_indexes(),
interleaved the same way (fresh_p50_ms, maintained_p50_ms, fresh_over_maintained):

    python -m benchmark.recall_fresh_file                        # 200 memories, 60 calls per variant
    python -m benchmark.recall_fresh_file --memories 20000 --calls 30

The file: `--memories` items written by one remember_many (3 random words of 7, 2 of 3
entities, 4-d vectors). "macro" is the read with the journal statements switched off (the
path every such read took before they existed: the macro, whose graph arm is the SQL walk,
and the SQL oracle for recall_2hop); "journal" the read as it is. Self-checking: before
timing, each read's ids, sources and hops equal the SQL oracle's in both variants. Calls
alternate the variants (which one goes first alternates too). Writes
benchmark/results/recall_fresh_file-<memories>.json with the load average, since the
machine may be shared.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import tempfile
import time
from pathlib import Path

import duckdb

import anatid
from anatid import Anatid, engines
from anatid import native_graph as ng
from anatid import native_hybrid as nh

RESULTS = Path(__file__).parent / "results"
WORDS = "apple river stone cloud maple ember harbor".split()
ENTITIES = ["ada", "babbage", "curie"]
QVEC = [0.3, -0.2, 0.5, 0.1]


def reads(db):
    return {
        "text": lambda: db.recall("apple river", k=10),
        "vector": lambda: db.recall("", embedding=QVEC, k=10),
        "hybrid+seed": lambda: db.recall("apple", embedding=QVEC, seed_entity="ada", k=10),
        "recall_2hop": lambda: db.recall_2hop("ada"),
    }


_JOURNAL_RANK, _HINT, _GRAPH_HINT = nh.NativeHybridEngine._journal_rank, nh._absent_hint, ng._journal_alone_hint


def use_journal(on: bool) -> None:
    """on: the read as it is; off: no journal statement answers (the macro, the SQL walk and
    the SQL oracle do)."""
    nh.NativeHybridEngine._journal_rank = _JOURNAL_RANK if on else (lambda self, *a, **k: (None, False, None))
    nh._absent_hint = _HINT if on else (lambda store, tenant, value=None: False)
    ng._journal_alone_hint = _GRAPH_HINT if on else (lambda store, tenant, value=None: False)


def same_as_oracle(fn) -> None:
    key = lambda hits: [(h.memory_id, h.sources, h.hop) for h in hits]
    got = key(fn())
    saved = engines._native_hybrid, engines._native_graph
    engines._native_hybrid = engines._native_graph = None
    try:
        assert got == key(fn()), "native and oracle differ"
    finally:
        engines._native_hybrid, engines._native_graph = saved


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--memories", type=int, default=200)
    ap.add_argument("--calls", type=int, default=60)
    args = ap.parse_args()
    rng = random.Random(7)
    items = [{"content": " ".join(rng.choice(WORDS) for _ in range(3)), "entities": rng.sample(ENTITIES, 2),
              "embedding": [rng.uniform(-1, 1) for _ in range(4)]} for _ in range(args.memories)]
    work = tempfile.mkdtemp()
    db, twin = Anatid.open(work + "/fresh.anatid", embedding_dim=4), Anatid.open(work + "/twin.anatid", embedding_dim=4)
    if not db.native.loaded:
        raise SystemExit(f"the extension did not load: {db.native.reason}")
    db.remember_many(items)
    twin.remember_many(items)     # the same memories, then maintained: the "after" side
    twin.maintain_indexes()
    load = [os.getloadavg()]
    out = {"memories": args.memories, "calls": args.calls, "duckdb": duckdb.__version__,
           "anatid": anatid.__version__, "python": platform.python_version(), "reads": {}}
    for name, fn in reads(db).items():
        for on in (True, False, True, False):   # warm-up, and the self-check of both variants
            use_journal(on)
            same_as_oracle(fn)
        samples = {"journal": [], "macro": []}
        for i in range(args.calls):
            for variant in (("journal", "macro") if i % 2 else ("macro", "journal")):
                use_journal(variant == "journal")
                samples[variant].append(timed(fn))
        use_journal(True)
        macro, journal = statistics.median(samples["macro"]), statistics.median(samples["journal"])
        out["reads"][name] = {"macro_p50_ms": round(macro, 3), "journal_p50_ms": round(journal, 3),
                              "ratio": round(macro / journal, 2), "notes": list(fn().notes)}
    load.append(os.getloadavg())
    # fresh against maintained, interleaved the same way: the file as written, and its twin
    for (name, fresh), maintained in zip(reads(db).items(), reads(twin).values()):
        same_as_oracle(maintained)
        samples = {"fresh": [], "maintained": []}
        for i in range(args.calls):
            for variant in (("fresh", "maintained") if i % 2 else ("maintained", "fresh")):
                samples[variant].append(timed(fresh if variant == "fresh" else maintained))
        r = out["reads"][name]
        r["fresh_p50_ms"] = round(statistics.median(samples["fresh"]), 3)
        r["maintained_p50_ms"] = round(statistics.median(samples["maintained"]), 3)
        r["fresh_over_maintained"] = round(r["fresh_p50_ms"] / r["maintained_p50_ms"], 2)
    load.append(os.getloadavg())
    out["load_average"] = [round(x[0], 2) for x in load]
    db.close()
    twin.close()
    for name, r in out["reads"].items():
        print(f"{name:12s} macro {r['macro_p50_ms']:7.2f} ms   journal {r['journal_p50_ms']:7.2f} ms   "
              f"x{r['ratio']:<5}  fresh {r['fresh_p50_ms']:6.2f} ms against maintained {r['maintained_p50_ms']:6.2f} ms "
              f"(x{r['fresh_over_maintained']})")
    print("load average (1 min) at start, after the A/B, at the end:", out["load_average"])
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"recall_fresh_file-{args.memories}.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
