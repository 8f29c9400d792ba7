"""The A/B log: what the graph added to one real query, one row per query."""
from __future__ import annotations

from ..timeutil import utcnow
from . import tables


def log_ab(db, query: str, direct, assoc, k: int) -> dict:
    vtop, gtop = direct.paths[:k], assoc.paths[:k]
    new = [p for p in gtop if p not in vtop]
    row = {"graph_added": len(assoc.graph_added), "new_in_top": len(new),
           "promoted_via_graph": sum(1 for p in new if p not in direct.vector_pool)}
    cur = db.connection
    tables.ensure(cur)
    cur.execute("INSERT INTO anatid_ab_recall VALUES ($t, $at, $q, $k, $mode, $gated, $v, $g, $added, $new, $via, $notes)",
                {"t": db.tenant, "at": utcnow().replace(tzinfo=None), "q": query, "k": k, "mode": assoc.mode,
                 "gated": assoc.gated, "v": vtop, "g": gtop, "added": row["graph_added"], "new": row["new_in_top"],
                 "via": row["promoted_via_graph"], "notes": "; ".join(assoc.notes) or None})
    return row
