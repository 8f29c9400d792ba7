"""Graph recall through the native extension (recall_2hop, context with hops).

Registered with anatid.engines when imported. One lean statement per read: a single
scan of the tenant's graph journal feeds the aggregate anatid_graph_recall (the same
function anatid.anatid_recall_2hop calls), then the hits' content and kind are read
from anatid_memories. What the native path does not answer goes to the SQL oracle,
and RecallHits.notes says why:

* historical_query    as_of reads (the base holds the current view only)
* no_graph_index      the file has no graph index tables (it predates them)
* no_graph_generation the tenant has no generation yet and its journal lacks rows
                      (written by plain SQL): run maintain_indexes(). With every row
                      journalled, the journal alone answers natively (notes: absent)
* damaged_base        the stored generation failed its checksum (anatid.indexes.health)
* unkeyed_generation  the file predates generation nonces and is open read-only: no
                      cache key tells its generation from another file's (equal ids
                      happen), so nothing native answers until a read-write open adds them
"""
from __future__ import annotations

import json
from datetime import datetime, timedelta

from . import engines
from .indexes import graph as graph_index, health
from .models import Hit, RecallHits
from .text_resident import load_text_generation

# One scan of two columns, one bound argument: every extra column or argument costs a
# fixed amount per call. The three-argument form (with the BLOB) is not used: on a miss
# the aggregate answers hop = -1 instead of failing (an error would abort the caller's
# transaction), and we load the generation, then retry.
# count(*): the journal's row count, for the journal invariant (anatid.indexes.health.check_journal).
_RECALL = ("SELECT anatid_graph_recall(entry, $request) AS hits, count(*) FROM anatid_graph_journal "
           "WHERE tenant_id = $tenant")
# A ranking request must be answered even when the tenant has no journal row at all (it
# fuses the first stage): one NULL entry carries the request (anatid_graph_recall skips it),
# and count(entry) still counts the journal's rows.
_RANK = ("SELECT anatid_graph_recall(entry, $request) AS hits, count(entry) FROM (SELECT entry FROM anatid_graph_journal "
         "WHERE tenant_id = $tenant UNION ALL SELECT NULL)")

# A tenant without a generation (a file that never ran maintain_indexes()): every graph
# write since the file was made is in the journal, so the journal alone is the graph
# (mode 2 of the request) unless rows reached the canonical tables some other way (plain
# SQL). One extra entry (op 8) carries the canonical counts, taken in this statement's
# snapshot: the ABOUT edges and the distinct relates pairs. The aggregate counts the
# journal's side as it scans (its ABOUT rows, its distinct relates pairs) and answers hop
# -4 (HOP_JOURNAL_SHORT) when the canonical side has more; then nothing native answers (the
# SQL oracle does). Counting the journal's side in SQL too cost ~3.7 ms of ~8 at 20,000
# memories (benchmark/recall_fresh_file.py). The entry also carries the request when the
# journal is empty (see _RANK). `markers` tells whether a base appeared meanwhile (then the
# answer is the usual base + journal one); count(op) skips the extra entry.
_JOURNAL_ALONE = """
SELECT anatid_graph_recall(entry, $request) AS hits, count(op) AS rows_seen, count(*) FILTER (WHERE op = 0) AS markers
FROM (SELECT entry, op FROM anatid_graph_journal WHERE tenant_id = $tenant
      UNION ALL
      SELECT '8|' || (SELECT count(*) FROM anatid_edges WHERE tenant_id = $tenant AND kind = 'about') || '|' ||
             (SELECT count(DISTINCT (least(src_id, dst_id), greatest(src_id, dst_id))) FROM anatid_edges
              WHERE tenant_id = $tenant AND kind = 'relates'), NULL)"""
_RECALL_JOURNAL_ALONE = _RANK_JOURNAL_ALONE = _JOURNAL_ALONE

# What recall_ids asks for besides the hits, as extra columns of the same statement:
# - the hits' content and kind where the tenant's resident text generation vouches for them
#   (extension/anatid_text_content.cpp: in the generation, valid then, untouched by the text
#   journal), so only the others are read from anatid_memories (no index on memory_id: that
#   read cost ~2.4 ms at 1M, most of a recall_2hop() with content);
# - a state the caller checks (native_hybrid's entity fingerprint), so a recall whose seeds
#   came from the handle's cache issues no statement of its own to check them.
# (the generation and the touched ids by one LEFT JOIN: ~0.2 ms less than three scalar subqueries at 1M)
_CONTENT = "anatid_text_content([h.memory_id FOR h IN g.hits], t.gen_id, t.nonce, t.touched, $at_us)"
_TEXT_STATE = ("LEFT JOIN (SELECT gen_id, nonce, (SELECT list(memory_id) FROM anatid_text_journal "
               "WHERE tenant_id = $tenant) AS touched FROM anatid_text_gen WHERE tenant_id = $tenant) t ON true")


def _with_extras(sql: str, content: bool, state_sql: str | None) -> str:
    """`sql` (a recall statement, its hits first, named hits) with the content and the
    state columns after its own."""
    extras = [e for e, on in ((_CONTENT, content), (state_sql, state_sql is not None)) if on]
    if not extras:
        return sql
    return f"SELECT g.*, {', '.join(extras)} FROM ({sql}) g {_TEXT_STATE if content else ''}"


JOURNAL_ALONE_NOTE = ("absent: no graph generation for this tenant yet, so the graph came from its journal alone "
                      "(maintain_indexes() builds one)")
JOURNAL_SHORT_NOTE = ("absent: no graph generation for this tenant yet, and its journal lacks rows (written by plain "
                      "SQL), so the SQL oracle answered; maintain_indexes() builds a generation")

_EPOCH = datetime(1970, 1, 1)


def encode_request(keys, hops: int, limit: int, kinds, valid_at, strict: bool = False,
                   empty_base: bool = False) -> str:
    """The request text of src/graph_codec.hpp (what anatid_graph_request builds in SQL).
    empty_base: a journal without a base marker is the whole graph (mode 2)."""
    def s(text: str) -> str:
        return f"{len(text.encode('utf-8'))}:{text}"
    at = "" if valid_at is None else str((valid_at - _EPOCH) // timedelta(microseconds=1))
    mode = "2" if empty_base else "1" if strict else "0"
    parts = [str(int(hops)), str(int(limit)), at, mode, str(len(keys))]
    parts += [s(k) for k in keys]
    parts.append(str(len(kinds)) if kinds else "-1")
    parts += [s(k) for k in (kinds or ())]
    return "|".join(parts)


_HYDRATE = """
SELECT h.memory_id, m.content, m.kind, h.hop
FROM (SELECT unnest($ids) AS memory_id, unnest($hops) AS hop, generate_subscripts($ids, 1) AS pos) h
JOIN anatid_memories m ON m.memory_id = h.memory_id
WHERE m.tenant_id = $tenant AND m.tx_to IS NULL AND m.memory_id BETWEEN $lo AND $hi
ORDER BY h.pos
"""

# The nonce comes from the table: maintain_indexes() writes it there and into the base
# marker the aggregate read, in one transaction.
_LOAD = ("SELECT anatid_graph_load(generation_id, nonce, blob) FROM anatid_graph_generations "
         "WHERE generation_id = $g AND tenant_id = $tenant")

HOP_NEEDS_LOAD = -1
HOP_NO_GENERATION = -2
HOP_UNKEYED = -3      # a base marker without a nonce (extension/anatid_graph_recall.cpp)
HOP_JOURNAL_SHORT = -4   # no generation, and the journal lacks canonical rows (_JOURNAL_ALONE)

UNKEYED_NOTE = ("unkeyed_generation: this file's graph generation predates nonces and it is open read-only, so the "
                "SQL oracle answered; open it read-write once (which adds them) for native graph reads")


def tenant_hint(store, name: str, tenant, value=None) -> bool:
    """A per-handle set of tenants named `name` (no store: never set): whether `tenant` is in
    it; with `value` True or False, first adds or removes it. The journal-first reads keep
    here which tenants had no generation last time (native_hybrid._absent_hint too)."""
    if store is None:
        return False
    hints = store.__dict__.setdefault(name, set())
    if value is True:
        hints.add(tenant)
    elif value is False:
        hints.discard(tenant)
    return tenant in hints


def _journal_alone_hint(store, tenant, value=None) -> bool:
    """Whether this handle's last graph read of `tenant` found no generation (then the
    journal-alone statement goes first: it checks that still holds). With `value`, records it."""
    return tenant_hint(store, "_graph_journal_alone", tenant, value)


def encode_rank(rank: dict) -> str:
    """The ranking block of a request (src/graph_codec.hpp): the hybrid graph arm's knobs,
    trusted hits and extra contributions, then the fusion's (wg, protect, k and the first
    stage's ids and scores); floats by repr, which round-trips exactly."""
    parts = [repr(float(rank["named"])), repr(float(rank["expand"])), repr(float(rank["hub_share"])),
             str(int(rank["hub_floor"])), "1" if rank["named_ungated"] else "0", str(len(rank["trusted"]))]
    parts += [str(int(t)) for t in rank["trusted"]]
    parts.append(str(len(rank["extra_ids"])))
    for i, s, c in zip(rank["extra_ids"], rank["extra_src"], rank["extra_c"]):
        parts += [str(int(i)), str(int(s)), repr(float(c))]
    fusion = rank["fusion"]
    parts += [repr(float(fusion["wg"])), str(int(fusion["protect"])), str(int(fusion["k"])),
              str(len(fusion["first_ids"]))]
    for i, sc in zip(fusion["first_ids"], fusion["first_scores"]):
        parts += [str(int(i)), repr(float(sc))]
    return "|" + "|".join(parts)


# Sentinel hops of a recall's first row: the generation must be loaded, is absent, or unkeyed.
CONTROL_HOPS = (-1, -2, -3, -4)


def recall_ids(cur, tenant: int, keys, hops: int, limit: int, kinds, valid_at,
               store=None, notes: list | None = None, rank: dict | None = None, content: dict | None = None,
               state: tuple[str, list] | None = None) -> list[tuple] | None:
    """(memory_id, hop) in recall order, or None when the native path cannot answer: the
    tenant has no generation and (without `store`, or with a journal that lacks rows) the
    journal alone cannot stand in for one, or its base marker has no nonce (UNKEYED_NOTE goes
    to `notes`). With `store`, the journal invariant is checked too (health.DamagedBase when
    it fails), and a tenant without a generation is answered from its journal alone; `notes`
    receives which of the two happened. With `rank` (the hybrid graph arm's request), the
    hits are the three-arm fusion: (memory_id, hop, score), hop -10 for a hit the graph arm
    did not find. `content` (a dict, with valid_at given) receives memory_id -> (content, kind)
    for the hits the resident text generation vouches for, and key None -> whether the tenant
    has a text generation at all; `state` (SQL of one value, a list) has that value appended,
    read in the statement's snapshot."""
    block = "" if rank is None else encode_rank(rank)   # rank: the hybrid graph arm's ranking instead
    with_content = content is not None and valid_at is not None
    extras = {"at_us": (valid_at - _EPOCH) // timedelta(microseconds=1)} if with_content else {}
    state_sql = None if state is None else state[0]
    params = {"request": encode_request(keys, hops, limit, kinds, valid_at) + block, "tenant": tenant, **extras}
    alone = _journal_alone_hint(store, tenant)

    def run(sql, p):
        row = cur.execute(_with_extras(sql, with_content, state_sql), p).fetchone()
        n = len(row) - with_content - (state is not None)
        if state is not None:
            state[1].append(row[-1])
        if with_content and row[0] and row[0][0]["hop"] not in CONTROL_HOPS:
            content[None] = row[n] is not None      # NULL: no text generation (anatid_text_content)
            content.update((h["memory_id"], (c["content"], c["kind"])) for h, c in zip(row[0], row[n] or ())
                           if c is not None)
        return row[:n]

    for _ in range(4):      # up to three loads, and one switch to the journal alone
        if alone:
            hits, rows, markers = run(
                _RECALL_JOURNAL_ALONE if rank is None else _RANK_JOURNAL_ALONE, {"tenant": tenant, **extras, "request": encode_request(
                    keys, hops, limit, kinds, valid_at, empty_base=True) + block})
            if not markers:
                short = bool(hits) and hits[0]["hop"] == HOP_JOURNAL_SHORT
                if notes is not None:
                    notes.append(JOURNAL_SHORT_NOTE if short else JOURNAL_ALONE_NOTE)
                if short:
                    return None
                return _hits(hits or (), rank, keys, notes)
            _journal_alone_hint(store, tenant, False)   # a base appeared: the usual read
            alone = False
            row = (hits, rows)
        else:
            row = run(_RECALL if rank is None else _RANK, params)
        hits = row[0] if row else None
        if hits is not None and (not hits or hits[0]["hop"] not in CONTROL_HOPS):
            health.check_journal(store, cur, tenant, ("graph",), row[1])
        if not hits or hits[0]["hop"] == HOP_NO_GENERATION:
            if hits is not None and not hits:
                return []
            if hits is None and rank is not None:
                return None      # not reached: the NULL entry carries the request
            # no generation (or no journal row at all): the journal alone, if it holds every row
            alone = _journal_alone_hint(store, tenant, True)
            if not alone:
                return None
            continue
        first = hits[0]
        if first["hop"] == HOP_UNKEYED:
            if notes is not None:
                notes.append(UNKEYED_NOTE)
            return None
        if first["hop"] == HOP_NEEDS_LOAD:
            health.guard_graph_load(cur, tenant)   # DamagedBase rather than parse a corrupted BLOB
            cur.execute(_LOAD, {"g": first["memory_id"], "tenant": tenant}).fetchall()
            continue
        return _hits(hits, rank, keys, notes)
    raise RuntimeError("anatid: the graph generation was evicted between loading and reading three times; "
                       "raise ANATID_GRAPH_CACHE_BYTES")


# After the fused hits of a ranking request: a named seed the arm gated as a hub
# (memory_id: its index among the request's seeds, score: its share of the visible memories)
HOP_GATED_SEED = -11


def _hits(hits, rank, keys=(), notes=None) -> list[tuple]:
    if rank is None:
        return [(h["memory_id"], h["hop"]) for h in hits]
    if notes is not None:
        from .verbs.graph_rank_sql import gated_seed_note
        notes.extend(gated_seed_note(keys[h["memory_id"]], h["score"]) for h in hits if h["hop"] == HOP_GATED_SEED)
    return [(h["memory_id"], h["hop"], h["score"]) for h in hits if h["hop"] != HOP_GATED_SEED]


class NativeGraphEngine:
    name = "native"

    def __init__(self, store):
        self.store = store

    def recall(self, cur, view, keys, hops, kinds, limit, notes=()) -> RecallHits:
        from .verbs.graph_sql import graph_recall_oracle
        store = self.store
        why = None
        if view.historical:
            why = "historical_query"
        elif not graph_index.has_tables(store, cur):
            why = "no_graph_index"
        elif health.flagged(store, "graph", store.tenant):
            why = "damaged_base"
        said: list[str] = []     # whether the journal alone answered (or could not)
        if why is None:
            try:
                vouched: dict = {}
                ids = recall_ids(cur, store.tenant, keys, hops, limit, kinds, view.valid_at, store, said,
                                 content=vouched)
            except health.DamagedBase as exc:
                health.mark_damaged(store, "graph", store.tenant, str(exc))
                why = "damaged_base"
            else:
                if ids is None and UNKEYED_NOTE in said:
                    why = "unkeyed_generation"      # the note (in said) says what to do
                elif ids is None:
                    why = "no_graph_generation"
                    if cur.execute("SELECT count(*) FROM anatid_graph_generations WHERE tenant_id = $t",
                                   {"t": store.tenant}).fetchone()[0]:
                        why = "damaged_base"      # a base whose journal lost its marker row
        if why is not None:
            code = ("absent",) if why in ("no_graph_index", "no_graph_generation") else ()   # index_health's name
            return graph_recall_oracle(store, cur, view, keys, hops, kinds, limit,
                                       tuple(notes) + (why,) + code + tuple(said))
        if said:     # no generation: the journal alone answered
            notes = tuple(notes) + ("absent",) + tuple(said)
        if not ids:
            return RecallHits([], arms=("graph",), engine="native", notes=tuple(notes))
        # content and kind: from the resident text generation where it vouches for them (it is
        # parsed once when most hits lacked them), the rest read by id
        missing = [(m, h) for m, h in ids if m not in vouched]
        if vouched.get(None) and 2 * len(missing) > len(ids):
            load_text_generation(store, cur, store.tenant)
        rows = {}
        if missing:
            mids = [m for m, _ in missing]
            rows = {int(mid): (content, kind) for mid, content, kind, _ in cur.execute(
                _HYDRATE, {"ids": mids, "hops": [h for _, h in missing], "tenant": store.tenant,
                           "lo": min(mids), "hi": max(mids)}).fetchall()}
        hits = []
        for mid, hop in ids:
            row = vouched.get(mid) or rows.get(mid)
            if row is not None:     # else not visible any more: the join drops it
                hits.append(Hit(int(mid), row[0], row[1], 1.0 / (1 + hop), ("graph",), int(hop)))
        return RecallHits(hits, arms=("graph",), engine="native", notes=tuple(notes))


def cache_stats(store) -> dict:
    """stats()['graph']: the tenant's generation and journal, and the process cache."""
    cur = store.read()
    out = {"graph": graph_index.status(store, cur)}
    if store.native.loaded:
        out["graph"]["cache"] = json.loads(cur.execute("SELECT anatid_graph_cache_stats()").fetchone()[0])
    return out


engines.register_native(graph=NativeGraphEngine)
if not hasattr(engines, "stats_hooks"):
    engines.stats_hooks = []
engines.stats_hooks.append(cache_stats)
