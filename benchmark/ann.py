"""The opt-in ANN vector index against the exact scan, side by side in one process.

For each dimension: one tenant of N memories with seeded embeddings, the vector index
built (maintain_indexes), then the ANN index (build_ann_index, timed); the writer closes the file
and a fresh handle (a reader) answers the queries. Every query runs
through `recall("", embedding=q)` twice, interleaved: with the ANN generation, and exact
(allow_slow=True, the oracle). Self-checking: the exact path must keep answering, every
ANN answer must say it is approximate, and recall@10 / recall@50 (the ANN top k's overlap
with the exact top k, averaged over queries) are reported and compared with the target.

Data (`--data`): `clustered` (default): 256 seeded Gaussian centres N(0, 1) plus N(0, 1)
noise per row, queries a random stored row plus N(0, 0.5) noise; `normal`: i.i.d. N(0, 1)
rows and fresh i.i.d. queries (no structure: the hardest case for any graph index).
By default the search width is the one the build calibrated (ef_search=None); --ef-search N
fixes it. The build's calibration (held-out recall per depth) is recorded with the results.

    python -m benchmark.ann --smoke                      # 5k rows, 64-d (CI-sized)
    python -m benchmark.ann                              # 100k rows, 64-d and 384-d, clustered
    python -m benchmark.ann --data normal                # the same, i.i.d. (results/ann_normal.json)
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np

from anatid import Anatid

ROOT = Path(__file__).resolve().parent
TARGET = 0.99


def data(kind: str, n: int, dim: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "normal":
        return rng.normal(size=(n, dim)).astype(np.float32)
    centres = rng.normal(size=(256, dim))
    return (centres[rng.integers(0, 256, n)] + rng.normal(size=(n, dim))).astype(np.float32)


def queries(kind: str, x: np.ndarray, count: int, seed: int) -> list[list[float]]:
    rng = np.random.default_rng(seed + 1)
    if kind == "normal":
        return rng.normal(size=(count, x.shape[1])).tolist()
    picks = rng.integers(0, len(x), count)
    return (x[picks] + 0.5 * rng.normal(size=(count, x.shape[1]))).tolist()


def pct(samples: list[float], q: float) -> float:
    return round(float(np.percentile(np.asarray(samples) * 1000.0, q)), 3)


def run_dim(args, dim: int, work: Path) -> dict:
    x = data(args.data, args.rows, dim, args.seed)
    qs = queries(args.data, x, args.queries, args.seed)
    path = str(work / f"ann-{dim}.anatid")
    with Anatid.open(path, tenant=1, embedding_dim=dim) as db:
        if not db.native.loaded:
            raise SystemExit(f"the ANN index needs the native extension: {db.native.reason}")
        started = time.perf_counter()
        for lo in range(0, len(x), 10_000):
            db.remember_many([{"content": f"memory {i}", "embedding": x[i].tolist()}
                              for i in range(lo, min(lo + 10_000, len(x)))])
        load_s = time.perf_counter() - started
        db.maintain_indexes()
        started = time.perf_counter()
        report = db.build_ann_index(m=args.m, ef_construction=args.ef_construction, ef_search=args.ef_search,
                                    use_when="always")
        build_s = time.perf_counter() - started
        size = db.connection.execute("SELECT sum(octet_length(payload)) FROM anatid_ann_gen_parts").fetchone()[0]
        report = report["tenants"][0].get("ann")
    # time as a reader does: a fresh handle on the checkpointed file, not the writer's
    with Anatid.open(path, tenant=1, embedding_dim=dim) as db:
        ann_k = lambda q, k: db.recall("", embedding=q, k=k)
        exact_k = lambda q, k: db.recall("", embedding=q, k=k, allow_slow=True)
        for q in qs[:5]:                      # parse both generations (first-call costs are not measured)
            ann_k(q, 10), exact_k(q, 10)
        used_ef = sorted({int(n.split("ef_search=", 1)[1].split()[0]) for n in ann_k(qs[0], 50).notes
                          if n.startswith("vector arm: approximate")})
        found10 = found50 = 0
        t_ann, t_exact = [], []
        for q in qs:
            a = ann_k(q, 50)
            e = exact_k(q, 50)
            assert any(n.startswith("vector arm: approximate") for n in a.notes), a.notes
            assert not any(n.startswith("vector arm: approximate") for n in e.notes), e.notes
            ids_a, ids_e = [h.memory_id for h in a], [h.memory_id for h in e]
            assert len(ids_e) == 50 and len(ids_a) == 50
            found10 += len(set(ids_a[:10]) & set(ids_e[:10]))
            found50 += len(set(ids_a) & set(ids_e))
            # timed, interleaved: the k = 10 recall a caller would make
            t0 = time.perf_counter()
            ann_k(q, 10)
            t1 = time.perf_counter()
            exact_k(q, 10)
            t2 = time.perf_counter()
            t_ann.append(t1 - t0)
            t_exact.append(t2 - t1)
    os.remove(path)
    r10, r50 = found10 / (10 * len(qs)), found50 / (50 * len(qs))
    out = {
        "dim": dim, "rows": args.rows, "queries": len(qs), "data": args.data,
        "m": args.m, "ef_construction": args.ef_construction,
        "ef_search": args.ef_search if args.ef_search is not None else "calibrated",
        "ef_search_used": used_ef,
        "recall_at_10": round(r10, 4), "recall_at_50": round(r50, 4),
        "meets_target": r10 >= TARGET and r50 >= TARGET,
        "ann_ms": {"p50": pct(t_ann, 50), "p95": pct(t_ann, 95)},
        "exact_ms": {"p50": pct(t_exact, 50), "p95": pct(t_exact, 95)},
        "speedup_p50": round(float(np.percentile(t_exact, 50) / np.percentile(t_ann, 50)), 2),
        "speedup_p95": round(float(np.percentile(t_exact, 95) / np.percentile(t_ann, 95)), 2),
        "build_ann_index_s": round(build_s, 2), "ann_blob_bytes": int(size or 0), "load_s": round(load_s, 2),
        "ann_report": report, "timed_on": "a fresh handle on the file after the writer closed it",
    }
    print(f"{dim:>4}-d {args.rows} rows ({args.data}): recall@10 {r10:.4f} recall@50 {r50:.4f} | "
          f"recall() k=10 p50/p95 ANN {out['ann_ms']['p50']}/{out['ann_ms']['p95']} ms, exact "
          f"{out['exact_ms']['p50']}/{out['exact_ms']['p95']} ms (x{out['speedup_p50']} at p50) | "
          f"build_ann_index {build_s:.1f} s | ef {used_ef} | calibration "
          f"{[(c['depth'], c['ef_search'], c['recall_at_10'], c['recall_at_depth'], c['visited']) for c in report['calibration']]}",
          flush=True)
    return out


def command(args) -> str:
    words = [f"--rows {args.rows}", f"--queries {args.queries}", f"--data {args.data}", f"--m {args.m}",
             f"--ef-construction {args.ef_construction}"]
    if args.ef_search is not None:
        words.append(f"--ef-search {args.ef_search}")
    if args.dims != [64, 384]:
        words.append("--dims " + " ".join(map(str, args.dims)))
    return "python -m benchmark.ann " + " ".join(words)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--dims", type=int, nargs="+", default=[64, 384])
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--data", choices=("clustered", "normal"), default="clustered")
    ap.add_argument("--m", type=int, default=16)
    ap.add_argument("--ef-construction", type=int, default=200)
    ap.add_argument("--ef-search", type=int, default=None, help="fixed search width (default: calibrated)")
    ap.add_argument("--seed", type=int, default=20261202)
    ap.add_argument("--smoke", action="store_true", help="5,000 rows, 64-d, 50 queries; no results file")
    ap.add_argument("--out", default=None, help="default results/ann.json, results/ann_normal.json for --data normal")
    args = ap.parse_args()
    args.out = args.out or str(ROOT / "results" / ("ann.json" if args.data == "clustered" else f"ann_{args.data}.json"))
    load_at_start = [round(v, 2) for v in os.getloadavg()]
    if args.smoke:
        args.rows, args.dims, args.queries = 5_000, [64], 50
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for dim in args.dims:
            results.append(run_dim(args, dim, Path(tmp)))
    doc = {
        "benchmark": "ann", "command": command(args),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "loadavg_at_start": load_at_start, "loadavg_at_end": [round(v, 2) for v in os.getloadavg()],
                    "build_threads": "all cores (std::thread::hardware_concurrency)"},
        "target": {"recall_at_10": TARGET, "recall_at_50": TARGET},
        "results": results,
    }
    if not args.smoke:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.out}")
    if not all(r["meets_target"] for r in results):
        raise SystemExit(f"recall below the {TARGET} target (see above)")


if __name__ == "__main__":
    main()
