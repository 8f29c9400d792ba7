"""Seeded generator of the Phase 0 dataset, written as Parquet, and its set-based loader.

Shape at scale 1 (the reference design's Phase 0): 1,000,000 memories in ten tenants,
about 2.3 million edges (about 2.0M ABOUT links, 1-3 per memory; 250k RELATES edges;
~50k SUPERSEDES), Zipf-like entity popularity (a few hub entities, a long tail), ~5% of
memories superseded by a later one. `--scale 0.1` gives 100k memories.

    python -m benchmark.datagen --scale 0.1 --out benchmark/data/phase0-0.1
    python -m benchmark.datagen --scale 0.1 --load /tmp/phase0.anatid

Ids follow anatid's layout (milliseconds since 2020-01-01 << 20 | counter) and grow
with creation time, tenants interleaved. Loading into an anatid file is a handful of
INSERT ... SELECT FROM read_parquet statements (never row by row).
"""
from __future__ import annotations

import argparse
import os
import time
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

TENANTS = 10
MEMORIES = 1_000_000
ENTITIES_PER_MEMORY = 0.2      # 20k entities per tenant at scale 1
RELATES_PER_MEMORY = 0.25      # 250k relates edges at scale 1
SUPERSEDED = 0.05
ZIPF_S = 1.1
KINDS = np.array(["fact", "note", "preference", "event"])
T0 = datetime(2025, 1, 1)
ID0 = ((int(T0.timestamp() * 1000) - 1_577_836_800_000) << 20)


def _zipf_sampler(rng, n: int):
    """Draw entity ranks 0..n-1 with p(r) ~ 1/(r+1)^s, then a per-tenant random relabel
    so hubs are not simply the oldest entities."""
    p = 1.0 / np.arange(1, n + 1) ** ZIPF_S
    cdf = np.cumsum(p / p.sum())
    perm = rng.permutation(n)

    def draw(k: int) -> np.ndarray:
        return perm[np.minimum(np.searchsorted(cdf, rng.random(k)), n - 1)]
    return draw


def generate(scale: float, seed: int = 20260101) -> dict[str, dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    n_mem = int(MEMORIES * scale)
    n_ent_t = max(10, int(n_mem / TENANTS * ENTITIES_PER_MEMORY))
    n_rel_t = int(n_mem / TENANTS * RELATES_PER_MEMORY)

    # entities: ids first (created before any memory), tenant-major
    ent_tenant = np.repeat(np.arange(TENANTS), n_ent_t)
    ent_local = np.tile(np.arange(n_ent_t), TENANTS)
    ent_id = ID0 + np.arange(len(ent_tenant), dtype=np.int64)
    ent_name = np.char.add("entity ", ent_local.astype(str))
    draws = [_zipf_sampler(rng, n_ent_t) for _ in range(TENANTS)]

    # memories, tenants interleaved in creation order
    mem_tenant = rng.integers(0, TENANTS, n_mem)
    mem_id = ID0 + len(ent_id) + 1000 + np.arange(n_mem, dtype=np.int64)
    mem_at = np.datetime64(T0) + (np.arange(n_mem) * 1000).astype("timedelta64[us]") + np.timedelta64(1, "D")
    mem_kind = KINDS[rng.integers(0, len(KINDS), n_mem)]

    # ABOUT: 1-3 links per memory, Zipf over the tenant's entities, no duplicate pair
    links = rng.integers(1, 4, n_mem)
    a_mem = np.repeat(np.arange(n_mem), links)
    a_tenant = mem_tenant[a_mem]
    a_local = np.empty(len(a_mem), dtype=np.int64)
    for t in range(TENANTS):
        sel = a_tenant == t
        a_local[sel] = draws[t](int(sel.sum()))
    pair = np.unique(np.stack([a_mem, a_local]), axis=1)
    a_mem, a_local = pair[0], pair[1]
    a_tenant = mem_tenant[a_mem]
    about_src = mem_id[a_mem]
    about_dst = ent_id[a_tenant * n_ent_t + a_local]

    # ~5% superseded: memory i is superseded by a later memory j of the same tenant
    sup_old, sup_new = [], []
    for t in range(TENANTS):
        idx = np.flatnonzero(mem_tenant == t)
        k = int(len(idx) * SUPERSEDED)
        old_pos = rng.choice(len(idx) - 1, size=k, replace=False)
        new_pos = old_pos + 1 + (rng.random(k) * (len(idx) - 1 - old_pos)).astype(np.int64)
        sup_old.append(idx[old_pos])
        sup_new.append(idx[new_pos])
    sup_old = np.concatenate(sup_old)
    sup_new = np.concatenate(sup_new)
    # one successor per memory; a memory superseded twice keeps its first successor
    _, first = np.unique(sup_old, return_index=True)
    sup_old, sup_new = sup_old[first], sup_new[first]
    valid_to = np.full(n_mem, np.datetime64("NaT"), dtype="datetime64[us]")
    valid_to[sup_old] = mem_at[sup_new]
    superseded_by = np.full(n_mem, -1, dtype=np.int64)
    superseded_by[sup_old] = mem_id[sup_new]
    supersedes = np.full(n_mem, -1, dtype=np.int64)
    supersedes[sup_new] = mem_id[sup_old]

    # RELATES: Zipf endpoints (hubs), no self loops, deduplicated per tenant
    r_tenant = np.repeat(np.arange(TENANTS), n_rel_t)
    r_a = np.empty(len(r_tenant), dtype=np.int64)
    r_b = np.empty(len(r_tenant), dtype=np.int64)
    for t in range(TENANTS):
        sel = r_tenant == t
        r_a[sel] = draws[t](n_rel_t)
        r_b[sel] = rng.integers(0, n_ent_t, n_rel_t)  # one hub-ish end, one uniform end
    keep = r_a != r_b
    r_tenant, r_a, r_b = r_tenant[keep], r_a[keep], r_b[keep]
    und = np.unique(np.stack([r_tenant, np.minimum(r_a, r_b), np.maximum(r_a, r_b)]), axis=1)
    r_tenant, r_a, r_b = und[0], und[1], und[2]
    rel_src = ent_id[r_tenant * n_ent_t + r_a]
    rel_dst = ent_id[r_tenant * n_ent_t + r_b]

    n_about, n_rel, n_sup = len(about_src), len(rel_src), len(sup_old)
    edge_id0 = int(mem_id[-1]) + 1000
    edges = {
        "edge_id": edge_id0 + np.arange(n_about + n_rel + n_sup, dtype=np.int64),
        "tenant_id": np.concatenate([a_tenant, r_tenant, mem_tenant[sup_new]]).astype(np.int64),
        "kind": np.concatenate([np.full(n_about, "about"), np.full(n_rel, "relates"), np.full(n_sup, "supersedes")]),
        "src_id": np.concatenate([about_src, rel_src, mem_id[sup_new]]),
        "dst_id": np.concatenate([about_dst, rel_dst, mem_id[sup_old]]),
        "created_at": np.concatenate([mem_at[a_mem], np.full(n_rel, np.datetime64(T0), dtype="datetime64[us]"),
                              mem_at[sup_new]]),
    }
    return {
        "entities": {"entity_id": ent_id, "tenant_id": ent_tenant.astype(np.int64), "name": ent_name},
        "memories": {"memory_id": mem_id, "tenant_id": mem_tenant.astype(np.int64),
                     "content": np.char.add("memory ", np.arange(n_mem).astype(str)), "kind": mem_kind,
                     "created_at": mem_at, "valid_to": valid_to, "supersedes": supersedes, "superseded_by": superseded_by},
        "edges": edges,
    }


def write_parquet(data, out: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    out.mkdir(parents=True, exist_ok=True)
    for name, cols in data.items():
        arrays = {}
        for k, v in cols.items():
            if v.dtype.kind == "M":
                arrays[k] = pa.array(v, mask=np.isnat(v))
            elif k in ("supersedes", "superseded_by"):
                arrays[k] = pa.array(v, mask=v < 0)
            elif v.dtype.kind == "U":
                arrays[k] = pa.array(v.tolist(), type=pa.string())
            else:
                arrays[k] = pa.array(v)
        pq.write_table(pa.table(arrays), out / f"{name}.parquet")


_LOAD = [
    """INSERT INTO anatid_entities (entity_id, tenant_id, name, name_key, kind, created_at)
       SELECT entity_id, tenant_id, name, lower(name), NULL, TIMESTAMP '{t0}' FROM read_parquet('{d}/entities.parquet')""",
    """INSERT INTO anatid_memories (memory_id, version, tenant_id, content, kind, confidence, strength, writer,
                                   valid_from, valid_to, tx_from, tx_to, supersedes, superseded_by, last_used_at)
       SELECT memory_id, 1, tenant_id, content, kind, 1.0, 1.0, 'datagen', created_at, valid_to, created_at, NULL,
              supersedes, superseded_by, NULL
       FROM read_parquet('{d}/memories.parquet') ORDER BY memory_id""",
    """INSERT INTO anatid_edges (edge_id, tenant_id, kind, src_id, dst_id, rel_kind, weight,
                                valid_from, valid_to, tx_from, tx_to)
       SELECT edge_id, tenant_id, kind, src_id, dst_id, CASE WHEN kind = 'relates' THEN 'related' END, 1.0,
              created_at, NULL, created_at, NULL
       FROM read_parquet('{d}/edges.parquet') ORDER BY edge_id""",
]


def load(parquet_dir: Path, path: str) -> float:
    """Create an anatid file at `path` and fill its canonical tables from the Parquet files."""
    import anatid
    for suffix in ("", ".wal"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    started = time.perf_counter()
    db = anatid.Anatid.open(path)
    cur = db.connection
    cur.begin()
    for sql in _LOAD:
        cur.execute(sql.format(d=str(parquet_dir).replace("'", "''"), t0=T0.isoformat(sep=" ")))
    cur.commit()
    cur.execute("CHECKPOINT")
    db.close()
    return time.perf_counter() - started


def ensure_parquet(scale: float, seed: int, root: Path = Path(__file__).parent / "data") -> Path:
    out = root / f"phase0-{scale:g}-{seed}"
    if not (out / "edges.parquet").exists():
        write_parquet(generate(scale, seed), out)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0, help="1.0 = 1M memories; 0.1 = 100k")
    ap.add_argument("--seed", type=int, default=20260101)
    ap.add_argument("--out", type=Path, default=None, help="Parquet directory (default benchmark/data/...)")
    ap.add_argument("--load", default=None, help="also load into this anatid file")
    args = ap.parse_args()
    started = time.perf_counter()
    if args.out is None:
        out = ensure_parquet(args.scale, args.seed)
    else:
        out = args.out
        write_parquet(generate(args.scale, args.seed), out)
    print(f"parquet in {out} ({time.perf_counter() - started:.1f} s)")
    if args.load:
        print(f"loaded {args.load} in {load(out, args.load):.1f} s")


if __name__ == "__main__":
    main()
