"""Write throughput before and after, in one process: anatid at a base commit against the
working tree, batch by batch and remember by remember, interleaved.

    PYTHONPATH=python python benchmark/writes_ab.py --base 97f7b75
    PYTHONPATH=python python benchmark/writes_ab.py --base 97f7b75 --rounds 10 --out results/x.json

On a machine shared with other jobs, figures from two runs minutes apart are not
comparable; two versions interleaved in one process see the same load, so their ratio
is. The base version is `git archive <base> python/anatid`, imported as `anatid_base`
(the package imports itself only relatively) with the same extension binary. Each
round writes one batch of --batch memories through remember_many and --singles
remembers with each version, in alternating order; every item has two entities and a
64-d vector (benchmark/writes.py's items). Reports medians, the sustained rate (every
batch, the automatic checkpoints inside their commits and a final CHECKPOINT of the rest; the
singles' rows ride along in that checkpoint), the ratio new/base of wall
time and of this process's CPU time (less sensitive to other jobs), and the load.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
ENTITIES = [f"entity{i}" for i in range(200)]


def item(rng: random.Random, i: int) -> dict:
    return {"content": f"note {i} about {' and '.join(rng.sample(ENTITIES, 2))}: the meeting moved to room {i % 97}",
            "entities": rng.sample(ENTITIES, 2), "embedding": [rng.uniform(-1, 1) for _ in range(64)]}


def base_package(commit: str, folder: Path) -> str:
    """Extract python/anatid at `commit` as the package anatid_base under `folder`."""
    archive = folder / "base.tar"
    with archive.open("wb") as f:
        subprocess.run(["git", "-C", str(ROOT), "archive", commit, "python/anatid"], stdout=f, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(folder, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    pkg = folder / "anatid_base"
    (folder / "python" / "anatid").rename(pkg)
    import anatid._native as native
    binary = native.extension_path()
    if binary is not None:
        shutil.copyfile(binary, pkg / native.EXTENSION_FILENAME)
    sys.path.insert(0, str(folder))
    return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", commit], capture_output=True,
                          text=True, check=True).stdout.strip()


def med(values: list[float]) -> float:
    return statistics.median(values)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="the commit to compare against")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--batch", type=int, default=5000)
    ap.add_argument("--singles", type=int, default=100)
    ap.add_argument("--out", default=str(HERE / "results" / "writes-ab.json"))
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="anatid-ab-"))
    import anatid
    base_rev = base_package(args.base, folder)
    anatid_base = importlib.import_module("anatid_base")
    for pkg in ("anatid", "anatid_base"):
        for name in ("graph", "text", "vector"):
            importlib.import_module(f"{pkg}.indexes.{name}")
    dbs = {"base": anatid_base.Anatid.open(str(folder / "base.anatid"), embedding_dim=64),
           "new": anatid.Anatid.open(str(folder / "new.anatid"), embedding_dim=64)}
    rng = random.Random(9)
    for db in dbs.values():  # warm up, and check what is written is there
        ids = db.remember_many([item(rng, i) for i in range(500)])
        m = db.remember(**item(rng, 501))
        assert db.get(ids[-1]).memory_id == ids[-1] and db.get(m.memory_id).memory_id == m.memory_id
    many = {k: [] for k in dbs}
    many_cpu = {k: [] for k in dbs}
    one = {k: [] for k in dbs}
    one_cpu = {k: [] for k in dbs}
    for r in range(args.rounds):
        order = list(dbs) if r % 2 == 0 else list(dbs)[::-1]
        for k in order:
            items = [item(rng, 10**6 + r * args.batch + i) for i in range(args.batch)]
            t0, c0 = time.perf_counter(), time.process_time()
            got = dbs[k].remember_many(items)
            many[k].append(time.perf_counter() - t0)
            many_cpu[k].append(time.process_time() - c0)
            assert len(got) == args.batch
        for k in order:
            for i in range(args.singles):
                it = item(rng, 9 * 10**6 + r * args.singles + i)
                t0, c0 = time.perf_counter(), time.process_time()
                dbs[k].remember(it["content"], entities=it["entities"], embedding=it["embedding"])
                one[k].append(time.perf_counter() - t0)
                one_cpu[k].append(time.process_time() - c0)
    final_ckpt = {}
    for k, db in dbs.items():  # what the rounds left in the WAL, so "sustained" counts every checkpoint
        t0 = time.perf_counter()
        db.connection.execute("CHECKPOINT")
        final_ckpt[k] = time.perf_counter() - t0
    counts = {k: db.connection.execute("SELECT count(*) FROM anatid_memories").fetchone()[0] for k, db in dbs.items()}
    assert counts["base"] == counts["new"], counts
    res = {"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "base_commit": base_rev,
           "rounds": args.rounds, "batch": args.batch, "singles_per_round": args.singles,
           "native": {k: db.native.loaded for k, db in dbs.items()}}
    for k in dbs:
        res[k] = {"remember_many_batch_ms_p50": round(med(many[k]) * 1e3, 1),
                  "remember_many_per_s_at_p50": round(args.batch / med(many[k]), 1),
                  "remember_many_per_s_all": round(args.batch * len(many[k]) / sum(many[k]), 1),
                  "remember_many_per_s_sustained": round(args.batch * len(many[k]) / (sum(many[k]) + final_ckpt[k]), 1),
                  "final_checkpoint_ms": round(final_ckpt[k] * 1e3, 1),
                  "remember_many_cpu_ms_p50": round(med(many_cpu[k]) * 1e3, 1),
                  "remember_p50_ms": round(med(one[k]) * 1e3, 3),
                  "remember_per_s_all": round(len(one[k]) / sum(one[k]), 1),
                  "remember_cpu_ms_p50": round(med(one_cpu[k]) * 1e3, 3)}
    b, n = res["base"], res["new"]
    res["ratios_new_over_base"] = {
        "remember_many_speed_wall": round(b["remember_many_batch_ms_p50"] / n["remember_many_batch_ms_p50"], 2),
        "remember_many_speed_sustained": round(n["remember_many_per_s_sustained"] / b["remember_many_per_s_sustained"], 2),
        "remember_many_speed_cpu": round(b["remember_many_cpu_ms_p50"] / n["remember_many_cpu_ms_p50"], 2),
        "remember_speed_wall": round(b["remember_p50_ms"] / n["remember_p50_ms"], 2),
        "remember_speed_cpu": round(b["remember_cpu_ms_p50"] / n["remember_cpu_ms_p50"], 2)}
    res["load_avg"] = os.getloadavg()
    for db in dbs.values():
        db.close()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(res, indent=2) + "\n")
    print(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
