"""Hybrid recall through the native extension: one call of anatid.anatid_hybrid.

Registered with anatid.engines when imported. The macro answers the current view
without a kinds filter; historical (as_of) and kinds-filtered reads go to the SQL
oracle, and the RecallHits say so in `notes`.
"""
from __future__ import annotations

import duckdb

from . import engines
from .errors import AnatidError
from .models import Hit, RecallHits

ARMS = ("vector", "text", "graph")

HYBRID_CALL = """
SELECT memory_id, content, kind, score, rank_vector, rank_text, rank_graph, hop
FROM anatid.anatid_hybrid($query, tenant := $tenant, k := $k, qvec := $qvec, qnorm := $qnorm, seeds := $seeds,
                          depth := $depth, wv := $wv, wt := $wt, wg := $wg, valid_at := $valid_at,
                          text_ceiling := $text_ceiling, vector_ceiling := NULL)
"""


class ScanCeilingError(AnatidError):
    """An exact text scan would exceed SCAN_CEILING; the message says what to do."""


class NativeHybridEngine:
    name = "native"

    def __init__(self, store):
        self.store = store

    def recall(self, cur, view, params, *, use_vector, use_text, use_graph, seeds_given, kinds, notes,
               allow_slow: bool = False) -> RecallHits:
        from .verbs.reads import hybrid_oracle
        from .indexes import health
        reason = None
        if view.historical or kinds:
            why = "as_of" if view.historical else "kinds"
            notes = list(notes) + [f"{why} reads are answered by the SQL oracle (exact scan)"]
            notes += ["historical_query"] if view.historical else []
        else:
            used = [i for i, on in (("text", use_text), ("vector", use_vector), ("graph", use_graph)) if on]
            # the macro parses generations this process has not: check their stored bytes first
            reason = ("damaged_base" if health.flagged_any(self.store, params["tenant"], used) else
                      health.guard_hybrid(self.store, cur, params["tenant"], text=use_text, vector=use_vector))
            if reason is not None:
                notes = list(notes) + [f"the SQL oracle answers: {reason}", reason]
        if view.historical or kinds or reason:
            return hybrid_oracle(self.store, cur, view, params, use_vector=use_vector, use_text=use_text,
                                 use_graph=use_graph, seeds_given=seeds_given, kinds=kinds, notes=notes)
        from .store import SCAN_CEILING
        bound = {
            "query": params.get("query", "") if (use_text or (use_graph and not seeds_given)) else "",
            "tenant": params["tenant"], "k": params["k"], "depth": params["depth"],
            "qvec": params.get("qvec"), "qnorm": params.get("qnorm"),
            "seeds": params.get("seed_keys") if seeds_given else None,
            "wv": params["wv"], "wt": params["wt"], "wg": params["wg"], "valid_at": params["valid_at"],
            "text_ceiling": None if allow_slow else SCAN_CEILING,
        }
        try:
            rows = cur.execute(HYBRID_CALL, bound).fetchall()
        except duckdb.Error as exc:
            if "SCAN_CEILING" in str(exc):
                raise ScanCeilingError(str(exc).split("anatid: ", 1)[-1]) from None
            raise
        hits = []
        for mid, content, kind, score, rv, rt, rg, hop in rows:
            sources = tuple(a for a, r in zip(ARMS, (rv, rt, rg)) if r is not None)
            hits.append(Hit(int(mid), content, kind, float(score), sources, None if hop is None else int(hop)))
        arms = tuple(a for a, used in zip(ARMS, (use_vector, use_text, use_graph)) if used)
        return RecallHits(hits, bm25_stale=False, arms=arms, notes=tuple(notes), engine="native")


engines.register_native(hybrid=NativeHybridEngine)
