"""Where a journal's cost goes: the same statements over a tenant with ~1,000 unabsorbed
journal rows (tenant 0 after `python -m benchmark.graph_2hop`) and over one with none.

    python -m benchmark.graph_journal_scan [--db /tmp/anatid-bench-graph-1.anatid] [--n 300]

Interleaved per iteration in one process, single thread, p50 in ms: DuckDB scanning the
entries (count(*), sum(length(entry))), the recall at 2 hops and at 0 hops, with the
journal cache warm (the steady state), and with a harmless extra row first: the same row
every time (cached) or a new one (every read's journal is new to the cache: parse and
fold everything, what every read paid before the journal cache). Prints a JSON line;
docs/benchmarks.md quotes it.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time

from .graph_2hop import _EXTRA_FIRST


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", default="/tmp/anatid-bench-graph-1.anatid")
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--quiet-tenant", type=int, default=2, help="a tenant with no journal rows")
    args = ap.parse_args(argv)
    import anatid
    from anatid.native_graph import encode_request, recall_ids
    db = anatid.Anatid.open(args.db)
    cur = db.connection
    cur.execute("SET threads = 1")
    tenants = (0, args.quiet_tenant)
    rows = {t: cur.execute("SELECT count(*) FROM anatid_graph_journal WHERE tenant_id = $t", {"t": t}).fetchone()[0]
            for t in tenants}
    keys = {t: [r[0] for r in cur.execute("SELECT name_key FROM anatid_entities WHERE tenant_id = $t "
                                         "ORDER BY entity_id LIMIT 30", {"t": t}).fetchall()] for t in tenants}
    for t in tenants:
        recall_ids(cur, t, keys[t][:1], 2, 50, None, None)      # generations resident
    recall = "SELECT anatid_graph_recall(entry, $request) FROM anatid_graph_journal WHERE tenant_id = $tenant"
    counter = [0]

    def extra(t, k, fixed=False):
        counter[0] += 0 if fixed else 1
        return cur.execute(_EXTRA_FIRST, {"request": encode_request([k], 2, 50, None, None), "tenant": t,
                                          "extra": f"4|0|-{0 if fixed else counter[0]}||||||"}).fetchone()
    statements = {
        "count(*)": lambda t, k: cur.execute("SELECT count(*) FROM anatid_graph_journal WHERE tenant_id = $t",
                                             {"t": t}).fetchone(),
        "sum(length(entry))": lambda t, k: cur.execute(
            "SELECT sum(length(entry)) FROM anatid_graph_journal WHERE tenant_id = $t", {"t": t}).fetchone(),
        "recall, 2 hops": lambda t, k: cur.execute(
            recall, {"request": encode_request([k], 2, 50, None, None), "tenant": t}).fetchone(),
        "recall, 0 hops": lambda t, k: cur.execute(
            recall, {"request": encode_request([k], 0, 50, None, None), "tenant": t}).fetchone(),
        "recall, 2 hops, + a fixed row (cached)": lambda t, k: extra(t, k, fixed=True),
        "recall, 2 hops, + a new row (journal new to the cache)": extra,
    }
    samples = {(s, t): [] for s in statements for t in tenants}
    for i in range(args.n):
        for s, fn in statements.items():
            for t in (tenants if i % 2 == 0 else tenants[::-1]):
                k = keys[t][i % len(keys[t])]
                t0 = time.perf_counter()
                fn(t, k)
                samples[(s, t)].append((time.perf_counter() - t0) * 1000.0)
    out = {"db": args.db, "journal_rows": {str(t): rows[t] for t in tenants}, "n": args.n,
           "loadavg": [round(x, 2) for x in os.getloadavg()], "p50_ms": {}, "journal_added_p50_ms": {}}
    for s in statements:
        a, b = (statistics.median(samples[(s, t)]) for t in tenants)
        out["p50_ms"][s] = {str(tenants[0]): round(a, 4), str(tenants[1]): round(b, 4)}
        out["journal_added_p50_ms"][s] = round(a - b, 4)
    # the same statement shape, parsed and folded vs cached, on the tenant with the journal
    new, fixed = ("recall, 2 hops, + a new row (journal new to the cache)", "recall, 2 hops, + a fixed row (cached)")
    out["parse_and_fold_p50_ms"] = {str(t): round(statistics.median(samples[(new, t)]) -
                                                  statistics.median(samples[(fixed, t)]), 4) for t in tenants}
    db.close()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
