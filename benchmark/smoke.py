"""make bench-smoke: the CI-sized run of the two headline benchmarks, ids only.

    python -m benchmark.smoke                    # 100k memories (scale 0.1), a few queries each
    python -m benchmark.smoke --queries 20

graph_2hop at scale 0.1 with its anatid engines only (no LadybugDB, no DuckDB-by-hand peer,
no journal measurement): every engine's ids and order against the SQL oracle's. Then
hybrid_recall's file at scale 0.1 (64-d, one generation per tenant, then 500 journalled
writes on tenant 0) and its --mismatch-only check: recall()'s lean path and the
anatid.anatid_hybrid macro against the SQL oracle. Timings are printed by graph_2hop but
are not the point at this size: the exit status is. Everything is written under a temporary
directory (benchmark/data keeps the generated Parquet, as for any run); nothing goes to
benchmark/results. Exits nonzero on any mismatch or error.
"""
from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

SCALE = 0.1
DIM = 64


def graph_mismatches(work: Path, queries: int) -> dict:
    from . import graph_2hop
    out = work / "graph_2hop.json"
    graph_2hop.main(["--scale", str(SCALE), "--queries", str(queries), "--no-ladybug", "--no-hand", "--no-journal",
                     "--db", str(work / "graph.anatid"), "--out", str(out)])
    engines = json.loads(out.read_text())["engines"]
    return {name: e.get("mismatches", e.get("error", "no mismatch count")) for name, e in engines.items()
            if name != "sql oracle (ids)"}


def hybrid_mismatches(work: Path, queries: int) -> dict:
    from . import hybrid_recall
    hybrid_recall.prepare(str(work / f"hybrid-{SCALE:g}-{DIM}.anatid"), SCALE, DIM, 7)
    result = hybrid_recall.run_mismatch(argparse.Namespace(work=str(work), scale=SCALE, dim=DIM, queries=queries,
                                                           seed=7))
    return result["id_mismatches_vs_oracle"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=50)
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="anatid-bench-smoke-"))
    failed = []
    try:
        for name, check in (("graph_2hop", graph_mismatches), ("hybrid_recall", hybrid_mismatches)):
            t0 = time.perf_counter()
            counts = check(work, args.queries)
            bad = {k: v for k, v in counts.items() if v != 0}
            print(f"bench-smoke {name}: {len(counts)} engines, {args.queries} queries, "
                  f"{time.perf_counter() - t0:.1f} s, mismatches {json.dumps(counts)}", flush=True)
            failed += [f"{name}: {k}: {v}" for k, v in bad.items()]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for line in failed:
        print(f"bench-smoke FAILED {line}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
