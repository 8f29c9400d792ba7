"""The conversational ruler (anatid.convo) per configuration and per question class, with
the graph arm's ingredients switched off one at a time (the ablation docs/quality.md cites).

    python -m benchmark.convo_ruler                              # 12 conversations, no embedder (BM25 + graph)
    python -m benchmark.convo_ruler --embedder hashing           # CI-sized vectors, no model
    python -m benchmark.convo_ruler --embedder minilm            # all-MiniLM-L6-v2 (anatid[embed])
    python -m benchmark.convo_ruler --conversations 4 --quick    # graph off vs defaults only
    python -m benchmark.convo_ruler --quick --set FANOUT=2 --out /tmp/f2.json   # another constant

Every number is what `recall(question, embedding=..., k=10)` returns through the public
API, loaded the README's way (anatid.convo.ruler.load). Configurations:
- "graph off": `weights={"graph": 0}` (text + vector fused, the first stage alone);
- "defaults": `recall()` as a user calls it;
- "<arm> weighted 0": defaults with that arm's weight 0 (it still runs);
- "no <ingredient>": defaults with one ingredient of the graph arm off (graph_rank_sql's
  module constants: NAMED, the entities the query names; EXPAND, the entities of the
  first stage's trusted hits; NEIGHBOUR, the trusted hits' episode neighbours;
  NEIGHBOUR_AGREED off gives neighbours to every trusted hit, not only the agreed ones).
Latency is per recall call, p50/p95 over every question of the configuration.
Writes benchmark/results/convo-ruler-<embedder>.json.
"""
from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import anatid
from anatid import Anatid
from anatid.convo.ruler import format_table, generate, load, overall, score
from anatid.verbs import graph_rank_sql

RESULTS = Path(__file__).parent / "results"
INGREDIENTS = {"no named entities": "NAMED", "no expansion": "EXPAND", "no episode neighbours": "NEIGHBOUR",
               "neighbours of every trusted hit": "NEIGHBOUR_AGREED"}


def embedder_for(name: str, dim: int):
    from anatid.vault.embed import HashingEmbedder
    if name == "none":
        return None
    if name == "hashing":
        return HashingEmbedder(dim)
    if name == "minilm":
        from anatid.vault.embed import MiniLMEmbedder
        return MiniLMEmbedder()
    raise SystemExit(f"unknown embedder {name!r}: none, hashing or minilm")


@contextmanager
def ingredient_off(constant: str | None):
    if constant is None:
        yield
        return
    before = getattr(graph_rank_sql, constant)
    setattr(graph_rank_sql, constant, 0.0)
    try:
        yield
    finally:
        setattr(graph_rank_sql, constant, before)


class Timed:
    """An Anatid factory that times every recall() call (the ruler's only read)."""

    def __init__(self, path: str, dim: int | None):
        self.path, self.dim, self.handles, self.times = path, dim, {}, []

    def __call__(self, tenant: int):
        if tenant not in self.handles:
            kw = {"embedding_dim": self.dim} if self.dim else {}
            self.handles[tenant] = Anatid.open(self.path, tenant=tenant + 1, **kw)
        db, times = self.handles[tenant], self.times

        class Handle:
            def __getattr__(self, name):
                return getattr(db, name)

            def recall(self, *a, **kw):
                t0 = time.perf_counter()
                out = db.recall(*a, **kw)
                times.append(time.perf_counter() - t0)
                return out
        return Handle()

    def close(self):
        for db in self.handles.values():
            db.close()


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] * 1e3


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--conversations", type=int, default=12)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--embedder", default="none", choices=("none", "hashing", "minilm"))
    ap.add_argument("--dim", type=int, default=256, help="the hashing embedder's dimension")
    ap.add_argument("--quick", action="store_true", help="graph off and defaults only")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                    help="override a graph_rank_sql constant for every configuration, e.g. --set FANOUT=2")
    ap.add_argument("--out", default=None, help="results file (default benchmark/results/convo-ruler-<embedder>.json)")
    args = ap.parse_args(argv)
    for item in args.set:
        name, _, value = item.partition("=")
        if not name.isupper() or not hasattr(graph_rank_sql, name):
            raise SystemExit(f"--set {item}: not a constant of anatid.verbs.graph_rank_sql")
        setattr(graph_rank_sql, name, type(getattr(graph_rank_sql, name))(value))
    emb = embedder_for(args.embedder, args.dim)
    dim = None if emb is None else (args.dim if args.embedder == "hashing" else 384)
    convs = generate(conversations=args.conversations, seed=args.seed)
    configs = {"graph off": ({"weights": {"graph": 0}}, None), "defaults": ({}, None)}
    if not args.quick:
        configs["text arm weighted 0"] = ({"weights": {"text": 0}}, None)
        if emb is not None:
            configs["vector arm weighted 0"] = ({"weights": {"vector": 0}}, None)
        configs.update({name: ({}, const) for name, const in INGREDIENTS.items()})
    rows, latency = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        factory = Timed(str(Path(tmp) / "ruler.anatid"), dim)
        t0 = time.perf_counter()
        loaded = load(factory, convs, emb)
        load_s = time.perf_counter() - t0
        for name, (kwargs, const) in configs.items():
            factory.times.clear()
            with ingredient_off(const):
                rows[name] = score(factory, loaded, emb, recall_kwargs=kwargs)
            latency[name] = {"p50_ms": pct(factory.times, 0.5), "p95_ms": pct(factory.times, 0.95),
                             "calls": len(factory.times)}
        engine = factory(0).native.loaded
        factory.close()
    print(format_table(rows))
    print()
    print("| configuration | recall p50 ms | recall p95 ms |")
    print("|---|---|---|")
    for name, lat in latency.items():
        print(f"| {name} | {lat['p50_ms']:.2f} | {lat['p95_ms']:.2f} |")
    off, on = overall(rows["graph off"]), overall(rows["defaults"])
    print(f"\nall classes R@10: graph off {off.r10:.3f} -> defaults {on.r10:.3f}; "
          f"p50 ratio {latency['defaults']['p50_ms'] / latency['graph off']['p50_ms']:.2f}x")
    result = {
        "command": "python -m benchmark.convo_ruler " + " ".join(argv if argv is not None else []),
        "conversations": args.conversations, "seed": args.seed, "embedder": args.embedder,
        "questions": sum(len(c.questions) for c in convs), "turns": sum(len(c.turns) for c in convs),
        "native": bool(engine), "anatid": anatid.__version__, "machine": platform.machine(),
        "load_seconds": round(load_s, 2),
        "configurations": {name: {"classes": {s.cls: {"n": s.n, "r5": s.r5, "r10": s.r10, "ndcg10": s.ndcg10,
                                                       "mrr": s.mrr} for s in scores},
                                  "all": vars(overall(scores)), "latency": latency[name]}
                           for name, scores in rows.items()},
    }
    out = Path(args.out) if args.out else RESULTS / f"convo-ruler-{args.embedder}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out}")
    return result


if __name__ == "__main__":
    import sys
    main(sys.argv[1:])
