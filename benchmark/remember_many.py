"""remember_many sustained: N batches of B memories (default 20 x 5,000) on one fresh file,
DuckDB's automatic checkpoints inside the commits and a final CHECKPOINT of the rest counted.

    PYTHONPATH=python flock /tmp/anatid-bench.lock python benchmark/remember_many.py
    PYTHONPATH=python flock /tmp/anatid-bench.lock python benchmark/remember_many.py --base d293055
    PYTHONPATH=python flock /tmp/anatid-bench.lock python benchmark/remember_many.py \
        --bound-without-journals text,vector,graph --out benchmark/results/remember_many-bound.json

Issue 21's target shape: >= 60,000 memories/s sustained over 20 batches of 5,000 with their
checkpoints. Every item has content, two entities and a 64-d vector (benchmark/writes.py's
items), every journal is written. With --base, anatid at that commit (python/anatid from `git
archive`, imported as anatid_base, the same extension binary; benchmark/writes_ab.py) writes
the same batches to a file of its own, batch by batch interleaved with the working tree (the
order alternating), so both see the same load and their ratio is comparable.
--bound-without-journals adds an arm: the working tree with those journals' hooks off, what
writing would cost if the journals were derived from the canonical rows (a bound: that file
is not valid for reads, and reads would pay instead).

Every arm's batches go through a tracing cursor (benchmark/writes.py's), so each batch splits
into its statements, its COMMIT (with DuckDB's automatic checkpoint in some) and the rest, Python.

Self-checking: before anything is reported, each file holds every acknowledged id, the last one
is read back through get() and found by recall(), and each journal grew by the rows expected.
Prints the rate of every batch, the median batch and the sustained rate (every batch plus the
final CHECKPOINT); with --runs N the whole shape N times on fresh files (the order of the arms
alternating), each run kept and each figure's median over the runs; writes
benchmark/results/remember_many.json (docs/benchmarks.md cites it).
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from writes import _Traced  # noqa: E402  (the statement profile's tracing cursor)
from writes_ab import base_package, item  # noqa: E402  (the A/B's items and base package)

_JOURNALS = ("anatid_text_journal", "anatid_vector_journal", "anatid_graph_journal")


def _count(db, table: str) -> int:
    return db.connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def _journal_rows(db) -> dict[str, int]:
    return {t: _count(db, t) for t in _JOURNALS}


def _ratios(over: dict, under: dict) -> dict[str, float]:
    """How much faster `over` is than `under` (> 1: faster)."""
    return {"sustained": round(over["per_s_sustained"] / under["per_s_sustained"], 3),
            "p50_batch": round(under["batch_ms_p50"] / over["batch_ms_p50"], 3),
            "cpu_p50": round(under["cpu_ms_p50"] / over["cpu_ms_p50"], 3)}


def one_run(args, pkgs: dict, folder: Path, run: int, off: dict) -> dict:
    """The shape once, every arm on a fresh file of its own: {arm: figures}, and the ratios."""
    dbs = {k: p.Anatid.open(str(folder / f"{k}-{run}.anatid"), embedding_dim=64) for k, p in pkgs.items()}
    from anatid.verbs import journal

    def write(k: str, items: list, prof: dict | None = None) -> list[int]:
        """remember_many on arm k; with prof, through a cursor that times each statement and the
        commit (the same for every arm: a few us per statement)."""
        store = dbs[k]._store
        real = store.cursor()
        if prof is not None:
            store._state().cursor = _Traced(real, prof)
        hooks = {e: journal._hooks[e] for e in off}
        if k == "no_journals":
            journal._hooks.update(off)   # this arm only: those journals' INSERTs are skipped
        try:
            return dbs[k].remember_many(items)
        finally:
            journal._hooks.update(hooks)
            store._state().cursor = real

    rng = random.Random(21 + run)
    warm = [item(rng, i) for i in range(500)]  # the entities exist, every table and journal too
    for k in dbs:
        write(k, warm)
    before = {k: _journal_rows(db) for k, db in dbs.items()}
    wall = {k: [] for k in dbs}
    cpu = {k: [] for k in dbs}
    in_sql = {k: [] for k in dbs}     # ms per batch in its statements, the commit left out
    commit = {k: [] for k in dbs}     # ms per batch in COMMIT (DuckDB's automatic checkpoint in some)
    last_ids = {}
    for b in range(args.batches):
        # made per batch, outside the timer: 100 batches' items held at once (100k dicts and
        # 6.4M floats) would make every full collection of Python's GC inside a batch slow
        items = [item(rng, 10**6 + b * args.batch + i) for i in range(args.batch)]
        order = list(dbs) if (b + run) % 2 == 0 else list(dbs)[::-1]
        for k in order:
            prof: dict = {}
            t0, c0 = time.perf_counter(), time.process_time()
            ids = write(k, items, prof)
            wall[k].append(time.perf_counter() - t0)
            cpu[k].append(time.process_time() - c0)
            commit[k].append(prof.pop("COMMIT", [0, 0.0])[1])
            in_sql[k].append(sum(t for _, t in prof.values()))
            assert len(ids) == args.batch
            last_ids[k] = ids[-1]
        print(f"run {run + 1} batch {b + 1:2d}: " + "  ".join(f"{k} {args.batch / wall[k][-1]:9,.0f}/s" for k in dbs),
              flush=True)
    final = {}
    for k, db in dbs.items():
        t0 = time.perf_counter()
        db.connection.execute("CHECKPOINT")
        final[k] = time.perf_counter() - t0

    n = args.batches * args.batch
    for k, db in dbs.items():  # nothing is reported before this holds
        assert _count(db, "anatid_memories") == n + len(warm), k
        assert db.get(last_ids[k]).memory_id == last_ids[k], k
        if k == "no_journals":   # the bound's file is not valid for reads: only its rows are checked
            continue
        probe = items[-1]
        hits = db.recall(probe["content"], embedding=probe["embedding"], k=5, allow_slow=True)
        assert last_ids[k] in [h.memory_id for h in hits], (k, "the last write is not found by recall")
        grew = {t: v - before[k][t] for t, v in _journal_rows(db).items()}
        assert grew["anatid_text_journal"] == n and grew["anatid_vector_journal"] == n, (k, grew)
        assert grew["anatid_graph_journal"] == 2 * n, (k, grew)

    out: dict = {"native": {k: db.native.loaded for k, db in dbs.items()}}
    for k, db in dbs.items():
        out[k] = {"per_s_by_batch": [round(args.batch / t, 1) for t in wall[k]],
                  "batch_ms_p50": round(statistics.median(wall[k]) * 1e3, 1),
                  "per_s_at_p50_batch": round(args.batch / statistics.median(wall[k]), 1),
                  "per_s_sustained": round(n / (sum(wall[k]) + final[k]), 1),
                  "final_checkpoint_ms": round(final[k] * 1e3, 1),
                  "cpu_ms_p50": round(statistics.median(cpu[k]) * 1e3, 1),
                  "per_cpu_s": round(n / sum(cpu[k]), 1),
                  "file_mb": round(os.path.getsize(folder / f"{k}-{run}.anatid") / 2**20, 1),
                  # where a batch's time goes, as means over the batches (sustained: the final
                  # CHECKPOINT spread over them); python = wall - statements - commit
                  "ms_per_batch": {
                      "python": round((sum(wall[k]) - sum(in_sql[k]) - sum(commit[k])) / len(wall[k]) * 1e3, 1),
                      "statements": round(sum(in_sql[k]) / len(wall[k]) * 1e3, 1),
                      "commit_p50": round(statistics.median(commit[k]) * 1e3, 1),
                      "commit_mean_with_automatic_checkpoints": round(sum(commit[k]) / len(wall[k]) * 1e3, 1),
                      "final_checkpoint_spread": round(final[k] / len(wall[k]) * 1e3, 1),
                      "duckdb_sustained": round((sum(in_sql[k]) + sum(commit[k]) + final[k]) / len(wall[k]) * 1e3, 1)}}
        db.close()
    if "base" in out:
        out["ratios_new_over_base"] = _ratios(out["new"], out["base"])
    if "no_journals" in out:
        out["ratios_no_journals_over_new"] = _ratios(out["no_journals"], out["new"])
    return out


def _median_of(runs: list[dict]) -> dict:
    """Each figure's median over the runs (numbers and dicts of numbers; lists left out)."""
    first = runs[0]
    out = {}
    for key, v in first.items():
        if isinstance(v, dict):
            out[key] = _median_of([r[key] for r in runs])
        elif isinstance(v, (int, float)):
            out[key] = round(statistics.median(r[key] for r in runs), 3)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--batch", type=int, default=5000)
    ap.add_argument("--runs", type=int, default=1, help="the whole shape this many times, fresh files each")
    ap.add_argument("--base", default=None, help="a commit to run interleaved against the working tree")
    ap.add_argument("--bound-without-journals", default=None, metavar="text,vector,graph",
                    help="also run the working tree with these journals' hooks off (a bound for journals "
                         "derived from the canonical rows; that file is not valid for reads)")
    ap.add_argument("--dir", default=None, help="where the files go (default: a new folder on /tmp)")
    ap.add_argument("--out", default=str(HERE / "results" / "remember_many.json"))
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="anatid-many-", dir=args.dir))
    load_before = os.getloadavg()
    import anatid
    pkgs = {"new": anatid}
    base_rev = None
    if args.base:
        base_rev = base_package(args.base, folder)
        pkgs = {"base": importlib.import_module("anatid_base"), "new": anatid}
    if args.bound_without_journals:
        pkgs["no_journals"] = anatid
    for pkg in pkgs.values():
        for name in ("graph", "text", "vector"):
            importlib.import_module(f"{pkg.__name__}.indexes.{name}")
    events = {"text": "text_changed", "vector": "vector_changed", "graph": "about_added"}
    off = {events[j]: [] for j in (args.bound_without_journals or "").split(",") if j}
    runs = [one_run(args, pkgs, folder, r, off) for r in range(args.runs)]
    native = runs[0].pop("native")
    for r in runs[1:]:
        r.pop("native")
    shutil.rmtree(folder, ignore_errors=True)

    res = {"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "command": "PYTHONPATH=python flock /tmp/anatid-bench.lock python benchmark/remember_many.py"
                      + "".join(f" {a}" for a in sys.argv[1:]),
           "batches": args.batches, "batch": args.batch, "runs": args.runs, "base_commit": base_rev,
           "no_journals_arm_off": sorted(off) if off else None, "native": native,
           "duckdb": __import__("duckdb").__version__, "folder": str(folder.parent),
           "median_over_runs": _median_of(runs), "each_run": runs,
           "load_avg_before": [round(x, 2) for x in load_before],
           "load_avg_after": [round(x, 2) for x in os.getloadavg()]}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(res, indent=2) + "\n")
    med = res["median_over_runs"]
    for k in pkgs:
        r = med[k]
        print(f"{k} (median of {args.runs} run(s)): p50 batch {r['batch_ms_p50']} ms ({r['per_s_at_p50_batch']:,.0f}/s), "
              f"sustained {r['per_s_sustained']:,.0f}/s (final CHECKPOINT {r['final_checkpoint_ms']} ms), "
              f"{r['per_cpu_s']:,.0f} per CPU-s\n   ms per batch: {r['ms_per_batch']}")
    for name in ("ratios_new_over_base", "ratios_no_journals_over_new"):
        if name in med:
            print(name, "(median of the runs' ratios):", med[name], "each run:",
                  [r[name]["sustained"] for r in runs])
    print("load average before / after:", res["load_avg_before"], res["load_avg_after"])


if __name__ == "__main__":
    main()
