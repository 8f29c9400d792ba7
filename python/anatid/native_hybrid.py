"""Hybrid recall through the native extension.

Registered with anatid.engines when imported. The lean path (current view, no kinds
filter, text and vector generations resident in this process) issues
small statements instead of planning the ~25-CTE anatid.anatid_hybrid macro per call:

1. seeds from the query (only when the graph arm runs without seed_entity and the
   query has terms): the tenant's entities whose name tokens all occur in the query;
2. the graph arm on the native graph generation (native_graph.recall_ids, what
   recall_2hop runs), skipped when there are no seeds;
3. one statement whose only work is the aggregate anatid_hybrid_recall over one
   UNION ALL of the generation ids (the parsed generations come from the process-wide
   cache) and the two journals' rows, with the query terms, vector and graph hits in
   one BLOB parameter; it returns the fused top k with per-arm ranks (the same core,
   src/hybrid.hpp, as the macro's anatid_hybrid_rank);
4. the content and kind of those k ids: the aggregate returns them from the resident
   text generation for every hit no write has touched since its build (the text rows
   are fed for that even when the text arm does not run); only the others are read
   from anatid_memories (by id list, predicates.visible).

Tokenizing: the token rule is SQL's regexp_extract_all(lower(x), TOKEN_PATTERN).
Compiling that Unicode pattern costs ~2.7 ms per statement, more than everything
else here, so an ASCII query is tokenized by ascii_tokens(), which is the same
function on ASCII text (test_hybrid_lean checks all 128 characters and random
strings against SQL: on ASCII, lower() only maps A-Z and the pattern's classes hold
exactly [a-z0-9]); a non-ASCII query is tokenized by SQL in one small statement. A
generation this process has not parsed yet goes to the one-statement macro (which also
loads the generation), and kinds and as_of reads to the SQL oracle; RecallHits.notes
says which.

Before the first build (a fresh file that never ran maintain_indexes()): a tenant
without a text or vector generation has every document and vector in its journal, which
is what the macro ranks then. The same lean statement, with one more row (the empty base:
the canonical row counts, _FRESH_SQL), ranks those journal rows in
anatid_hybrid_recall with no base, through the same process-wide fold of the text journal
the maintained path uses, instead of planning the macro (~20 ms per call, whatever the
data size); a tenant without a graph generation gets its graph arm from its graph journal
alone (native_graph), else from the SQL walk the macro runs (graph_sql). Same core, same
inputs: the macro's answer, by construction. The statement reads the generation rows in
its own snapshot (a concurrent maintain_indexes() may have published one: it is used).
"""
from __future__ import annotations

import re
import struct
import threading
from datetime import datetime, timedelta

import duckdb

from . import engines
from .errors import AnatidError, BruteForceCeilingError
from .models import Hit, RecallHits
from .native_graph import tenant_hint
from .predicates import visible
from .text import tokens_sql
from .text_resident import HYBRID_CALL, load_text_generation

ARMS = ("vector", "text", "graph")

_ASCII_TOKEN = re.compile(r"[a-z0-9]+")
_EPOCH = datetime(1970, 1, 1)


def ascii_tokens(text: str) -> list[str] | None:
    """SQL's regexp_extract_all(lower(text), TOKEN_PATTERN) for ASCII text; None otherwise."""
    if not text.isascii():
        return None
    return _ASCII_TOKEN.findall(text.lower())


# Seeds from the query's terms: the tenant's entities whose name has a token and whose
# every token (SQL's rule, on the name) is a query term. Scanning and tokenizing every
# entity name per query cost ~4 ms at 20k entities, so each open handle keeps the names'
# tokens per tenant and asks one small question per recall: count, largest entity_id and
# the XOR of the ids' 63-bit hashes (DuckDB's hash()). Entities are insert-only (only their
# kind is ever updated), so the tenant's set of ids only grows between committed states;
# but a cache filled inside a transaction may hold an insert that was then rolled back,
# and ids need not arrive in order, so count and max alone could stay equal while the set
# changed (a rolled-back id below the max, another id below the max inserted later). The
# hash XOR tells two different sets apart except with probability 2**-63. A grown max
# fetches the entities past the cached one; a state that still differs reloads the
# tenant. ASCII names are tokenized by ascii_tokens (SQL's rule on ASCII, see above), the
# others by SQL once, when they enter the cache.
_ID_HASH = "CAST(hash(entity_id) >> 1 AS BIGINT)"
_SEED_FINGERPRINT = f"count(*), max(entity_id), coalesce(bit_xor({_ID_HASH}), 0)"
_SEED_CHECK = f"SELECT {_SEED_FINGERPRINT} FROM anatid_entities WHERE tenant_id = $tenant"
_SEED_NAMES = f"SELECT entity_id, name_key, name, {_ID_HASH} FROM anatid_entities WHERE tenant_id = $tenant AND entity_id > $after"


def _seed_tokens_sql() -> str:
    return (f"SELECT entity_id, {tokens_sql('name')} FROM anatid_entities "
            f"WHERE tenant_id = $tenant AND entity_id IN (SELECT unnest($ids))")


class _EntityTokens:
    """One tenant's entity names as tokens: token -> [(name_key, its distinct tokens)]."""

    def __init__(self):
        self.count, self.max_id, self.id_hash = 0, None, 0
        self.by_token: dict[str, list[tuple[str, frozenset]]] = {}

    def add(self, cur, tenant, rows) -> None:
        unicode_rows = {}
        for eid, key, name, id_hash in rows:
            toks = ascii_tokens(name)
            if toks is None:
                unicode_rows[eid] = key
            else:
                self._index(key, toks)
            self.count += 1
            self.id_hash ^= id_hash
            self.max_id = eid if self.max_id is None else max(self.max_id, eid)
        if unicode_rows:
            for eid, toks in cur.execute(_seed_tokens_sql(), {"tenant": tenant, "ids": list(unicode_rows)}).fetchall():
                self._index(unicode_rows[eid], toks)

    def _index(self, key, toks) -> None:
        distinct = frozenset(toks)
        for t in distinct:
            self.by_token.setdefault(t, []).append((key, distinct))

    @property
    def state(self) -> tuple:
        return self.count, self.max_id, self.id_hash

    def seeds(self, terms) -> list[str]:
        wanted = set(terms)
        return sorted({key for t in wanted for key, toks in self.by_token.get(t, ()) if toks <= wanted})


_entity_lock = threading.Lock()


def cached_seeds(store, tenant, terms):
    """(seeds, (count, max_id, id hash)) from this handle's cache of the tenant's entity names, with
    the state they hold, or None before the first seeds_from_terms of the tenant. The caller
    asks for the current state in a statement it runs anyway (_SEED_STATE) and falls back to
    seeds_from_terms when it differs."""
    with _entity_lock:
        cached = store.__dict__.get("_entity_tokens", {}).get(tenant)
        return None if cached is None else (cached.seeds(terms), cached.state)


def seeds_from_terms(store, cur, tenant, terms, state=None) -> list[str]:
    """name_keys of the tenant's entities whose every name token is a query term; `state`:
    the (count, max_id, id hash) the caller has just read, else one statement reads it."""
    state = tuple(state if state is not None else cur.execute(_SEED_CHECK, {"tenant": tenant}).fetchone())
    count, max_id, _ = state
    with _entity_lock:
        caches = store.__dict__.setdefault("_entity_tokens", {})    # per handle: an in-memory file has no path
        cached = caches.get(tenant)
        if cached is None or cached.state != state:
            if cached is not None and cached.count < count and max_id is not None and \
                    cached.max_id is not None and max_id > cached.max_id:
                cached.add(cur, tenant, cur.execute(_SEED_NAMES, {"tenant": tenant, "after": cached.max_id}).fetchall())
            if cached is None or cached.state != state:
                cached = _EntityTokens()
                cached.add(cur, tenant, cur.execute(_SEED_NAMES, {"tenant": tenant, "after": -2**63}).fetchall())
            caches[tenant] = cached
        return cached.seeds(terms)


# One scan per input, one aggregate: anatid_hybrid_recall (extension/anatid_hybrid_recall.cpp)
# reads the generation ids (their parsed forms come from the process-wide cache) and the
# journals' rows (the latest row of a memory wins, in C++), the query is one BLOB. A text
# journal row's postings are one string (src/text_journal.hpp), and the folded journal is
# cached per process, checked against the exact bytes scanned: an unchanged journal costs
# its scan and a compare.
_TEXT_ROWS = """
    SELECT 1 AS kind, gen_id AS a, nonce AS b, NULL::BIGINT AS c, NULL::BIGINT AS d, NULL::INTEGER AS len,
           NULL::DOUBLE AS norm, NULL::VARCHAR AS postings, NULL::FLOAT[] AS emb
    FROM anatid_text_gen WHERE tenant_id = $tenant
    UNION ALL
    SELECT 3, memory_id, seq, vf, vt, doc_len, NULL, postings, NULL FROM anatid_text_journal WHERE tenant_id = $tenant"""

# When the text arm does not run, the rows are read only to hydrate hits from the text
# generation (it needs the generation id and which memories were written since): the
# journal's ids, not its postings, and none without a generation (a tenant whose journal
# holds 100k documents and no generation otherwise paid ~200 ms per vector-only recall).
_TEXT_IDS_ROWS = """
    SELECT 1 AS kind, gen_id AS a, nonce AS b, NULL::BIGINT AS c, NULL::BIGINT AS d, NULL::INTEGER AS len,
           NULL::DOUBLE AS norm, NULL::VARCHAR AS postings, NULL::FLOAT[] AS emb
    FROM anatid_text_gen WHERE tenant_id = $tenant
    UNION ALL
    SELECT 3, memory_id, seq, NULL, NULL, NULL, NULL, NULL, NULL FROM anatid_text_journal
    WHERE tenant_id = $tenant AND EXISTS (SELECT 1 FROM anatid_text_gen WHERE tenant_id = $tenant)"""

_VECTOR_ROWS = """
    SELECT 2 AS kind, gen_id AS a, nonce AS b, NULL::BIGINT AS c, NULL::BIGINT AS d, NULL::INTEGER AS len,
           NULL::DOUBLE AS norm, NULL::VARCHAR AS postings, NULL::FLOAT[] AS emb
    FROM anatid_vector_gen WHERE tenant_id = $tenant
    UNION ALL
    SELECT 4, memory_id, seq, vf, vt, NULL, norm, NULL, embedding FROM anatid_vector_journal WHERE tenant_id = $tenant"""


# The seed cache's check (_SEED_CHECK) as a third column of the rank statement, so that a
# recall whose seeds come from the cache issues one statement fewer (~0.9 ms at 1M).
_SEED_STATE = f"(SELECT [{_SEED_FINGERPRINT}] FROM anatid_entities WHERE tenant_id = $tenant)"


# The graph stage's rows (kinds 6 and 7 of anatid_hybrid_recall): the tenant's graph journal
# (its base marker names the generation) and its evidence rows, for the episode neighbours,
# up to EVIDENCE_CAP + 1 of them: a tenant with more (a file of long transcripts) has its
# neighbours computed by their own statement (verbs/graph_rank.py) rather than every recall
# scanning them all. A conversation of a few thousand turns is well under the cap.
EVIDENCE_CAP = 20_000
_GRAPH_ROWS = f"""
    SELECT 6 AS kind, NULL::BIGINT AS a, NULL::BIGINT AS b, NULL::BIGINT AS c, NULL::BIGINT AS d,
           NULL::INTEGER AS len, NULL::DOUBLE AS norm, entry AS postings, NULL::FLOAT[] AS emb
    FROM anatid_graph_journal WHERE tenant_id = $tenant
    UNION ALL
    (SELECT 7, memory_id, episode_id, NULL, NULL, NULL, NULL, NULL, NULL FROM anatid_evidence
     WHERE tenant_id = $tenant LIMIT {EVIDENCE_CAP + 1})"""


def _rank_sql(use_text, use_vector: bool, seed_state: bool = False, graph: bool = False) -> str:
    text = _TEXT_IDS_ROWS if use_text == "ids" else _TEXT_ROWS
    rows = " UNION ALL".join(r for r, used in ((text, use_text), (_VECTOR_ROWS, use_vector), (_GRAPH_ROWS, graph))
                             if used)
    # the rows scanned, for the journal invariant (anatid.indexes.health.check_journal): the
    # text and vector rows, then (with the graph stage, last) the graph journal's
    counted = "count(*) FILTER (WHERE kind < 6)" if graph else "count(*)"
    return (f"SELECT anatid_hybrid_recall(kind, a, b, c, d, len, norm, postings, emb, $request), {counted}"
            f"{', ' + _SEED_STATE if seed_state else ''}{', count(*) FILTER (WHERE kind = 6)' if graph else ''} "
            f"FROM ({rows}) r")


_RANK_SQL = {(t, v, s, g): _rank_sql(t, v, s, g) for t in (False, True, "ids") for v in (False, True)
             for s in (False, True) for g in (False, True) if t or v}
# anatid_hybrid_recall's graph stage (the request's graph block): its leading status element,
# and the elements naming a named seed gated as a hub (extension/anatid_hybrid_recall.cpp)
STATUS_ID, GATED_SEED_ID, GRAPH_FUSED, NEEDS_SEEDS = -3, -4, 0, 4
NEEDS_MACRO, OVER_CEILING = -1, -2
SHORT_JOURNAL = 5     # NEEDS_MACRO's score: no generation and a journal short of the canonical rows


def encode_request(*, at_us, depth, k, wv, wt, wg, vector_ceiling, terms, qvec, qnorm, gids, ghops,
                   graph_block: bytes = b"") -> bytes:
    """The request BLOB of anatid_hybrid_recall (see its file comment); graph_block: from
    encode_graph_block, or empty."""
    out = [struct.pack("<qqqdddq", at_us, depth, k, wv, wt, wg, -1 if vector_ceiling is None else vector_ceiling),
           struct.pack("<I", len(terms))]
    for t in terms:
        b = t.encode("utf-8")
        out += [struct.pack("<I", len(b)), b]
    q = [] if qvec is None else [float(x) for x in qvec]
    out.append(struct.pack(f"<I{len(q)}dd", len(q), *q, 0.0 if qnorm is None else float(qnorm)))
    out.append(struct.pack(f"<I{len(gids)}q{len(ghops)}i", len(gids), *gids, *ghops))
    out.append(graph_block)
    return b"".join(out)


def encode_graph_block(keys, depth: int, valid_at, stage: dict, query_terms=None) -> bytes:
    """anatid_hybrid_recall's graph block: recall()'s graph stage (verbs/graph_rank.py,
    with_graph_arm) with its knobs; `stage`: wg, k, seeds_given (the first stage's trusted
    hits and scores are filled in C++). With `query_terms` (and no keys), the seeds are the
    entities those terms name, resolved in C++ on the graph fold (src/graph_seeds.hpp)."""
    from .native_graph import encode_rank, encode_request as graph_request
    from .verbs import graph_rank_sql as g
    from .verbs.graph_rank import rank_request
    rank = {**rank_request(depth, [], [], seeds_given=stage["seeds_given"]),
            "fusion": {"first_ids": [], "first_scores": [], "protect": g.PROTECT, "wg": stage["wg"] * g.GRAPH_SHARE,
                       "k": stage["k"]}}
    text = (graph_request(keys, 2, depth, None, valid_at) + encode_rank(rank)).encode("utf-8")
    block = struct.pack(f"<I{len(text)}sIBdI", len(text), text, g.FANOUT, 1 if g.NEIGHBOUR_AGREED else 0,
                        float(g.NEIGHBOUR), EVIDENCE_CAP)
    if query_terms is None:
        return block
    out = [block, struct.pack("<BI", 1, len(query_terms))]
    for t in query_terms:
        b = t.encode("utf-8")
        out += [struct.pack("<I", len(b)), b]
    return b"".join(out)


# ---- before the first build: the same statement over an empty base ------------------
# Without a base generation the journal holds every row, and the macro ranks exactly these
# inputs (anatid_hybrid_sql.hpp: tlatest/tin/tcount, vlatest/vin/vcount). The lean statement
# with one more row, kind 8 (the empty base), ranks them in anatid_hybrid_recall: an arm with no
# generation row ranks its journal alone, through the same process-wide text fold cache the
# maintained path uses (a window over the whole journal and its lists per call cost ~9 ms at
# 20,000 memories: benchmark/recall_fresh_file.py). Same core, same inputs: the macro's answer.
# The kind-8 row carries the canonical counts (the same counts health.guard_hybrid has the
# macro check) and the exact text scan's ceiling: a journal that lacks rows (written by plain SQL) answers the sentinel -1/5
# and the SQL oracle answers, as before the macro. The generation rows are read in this
# statement's snapshot, so a concurrent maintain_indexes() that published one is simply used.
_TEXT_COUNT = "(SELECT count(*) FROM anatid_text_docs WHERE tenant_id = $tenant)"
_VECTOR_COUNT = ("(SELECT count(*) FROM anatid_embeddings e JOIN anatid_memories m ON m.memory_id = e.memory_id "
                 "WHERE e.tenant_id = $tenant AND m.tx_to IS NULL)")
_EMPTY_BASE_ROW = " UNION ALL SELECT 8, {text}, {vector}, $text_ceiling::BIGINT, NULL, NULL, NULL, NULL, NULL"


def _fresh_sql(use_text, use_vector: bool, seed_state: bool) -> str:
    text = _TEXT_IDS_ROWS if use_text == "ids" else _TEXT_ROWS
    rows = " UNION ALL".join(r for r, used in ((text, use_text), (_VECTOR_ROWS, use_vector)) if used)
    rows += _EMPTY_BASE_ROW.format(text=_TEXT_COUNT if use_text is True else "NULL",
                                   vector=_VECTOR_COUNT if use_vector else "NULL")
    # then the journal rows (for check_journal) and which generations the statement saw
    return (f"SELECT anatid_hybrid_recall(kind, a, b, c, d, len, norm, postings, emb, $request), "
            f"count(*) FILTER (WHERE kind <> 8), count(*) FILTER (WHERE kind = 1), count(*) FILTER (WHERE kind = 2)"
            f"{', ' + _SEED_STATE if seed_state else ''} FROM ({rows}) r")


_FRESH_SQL = {(t, v, s): _fresh_sql(t, v, s) for t in (True, "ids") for v in (False, True) for s in (False, True)}
_SHORT = "the tenant has no generation and its journal lacks rows (written by plain SQL)"
_JOURNAL_NOTE = ("absent: no text or vector generation for this tenant yet, so every row came from the journal "
                 "(one statement into anatid_hybrid_recall over an empty base; maintain_indexes() builds the "
                 "generations)")


def _absent_hint(store, tenant, value=None) -> bool:
    """Whether this handle's last hybrid read of `tenant` found its generations absent (then the
    journal statement is tried first: it checks that still holds). With `value`, records it."""
    return tenant_hint(store, "_journal_first", tenant, value)


def _python_seeds_hint(store, tenant, value=None) -> bool:
    """Whether a fused recall of `tenant` on this handle found a name key the C++ seed
    resolver declines (not ASCII; entities are insert-only, so it stays): then Python
    resolves the seeds from the query. With `value`, records it."""
    return tenant_hint(store, "_python_seeds", tenant, value)


def _graph_walk(cur, view, tenant, keys, depth) -> list[tuple[int, int]]:
    """The graph arm without a graph generation: (memory_id, hop) in recall order, by the
    SQL walk the macro and the oracle run (verbs/graph_sql.py)."""
    from .verbs.graph_sql import graph_recall_sql
    rows = cur.execute(graph_recall_sql(view), {**view.params(tenant), "seed_keys": keys, "hops": 2,
                                                "limit": depth}).fetchall()
    return [(int(mid), int(hop)) for mid, _, _, hop in rows]


def _hydrate_sql(view) -> str:
    return f"""
SELECT m.memory_id, m.content, m.kind
FROM (SELECT unnest($ids) AS memory_id) h JOIN anatid_memories m ON m.memory_id = h.memory_id
WHERE {visible('m', view)} AND m.memory_id BETWEEN $lo AND $hi"""


class ScanCeilingError(AnatidError):
    """An exact text scan would exceed SCAN_CEILING; the message says what to do."""


def _ceiling_error(exc: Exception):
    msg = str(exc).split("anatid: ", 1)[-1]
    if "SCAN_CEILING" in msg:
        return ScanCeilingError(msg)
    if "BRUTE_FORCE_CEILING" in msg:
        return BruteForceCeilingError(msg)
    return None


def _legacy_text_journal(store, cur) -> bool:
    """A read-only handle on a file whose text journal predates the postings column (a
    read-write open migrates it): the native statements would not bind. Asked once per handle."""
    if not store.read_only:
        return False
    known = store.__dict__.get("_legacy_text_journal")
    if known is None:
        from .schema import legacy_text_journal
        known = store.__dict__["_legacy_text_journal"] = legacy_text_journal(cur)
    return known


class NativeHybridEngine:
    name = "native"

    def __init__(self, store):
        self.store = store

    def recall(self, cur, view, params, *, use_vector, use_text, use_graph, seeds_given, kinds, notes,
               allow_slow: bool = False, graph_stage: dict | None = None) -> RecallHits:
        """The text+vector first stage; with `graph_stage` (recall()'s graph stage: wg, k,
        seeds_given, seed_keys), when the lean statement can run that stage too, the fused
        answer, its arms ending with "graph" (otherwise the first stage, for with_graph_arm)."""
        from .verbs.recall_sql import hybrid_oracle
        from .indexes import health
        tenant = params["tenant"]
        fallback = None           # (note, index_health reason) when the SQL oracle must answer
        if view.historical or kinds:
            why = "as_of" if view.historical else "kinds"
            fallback = (f"{why} reads are answered by the SQL oracle (exact scan)",
                        "historical_query" if view.historical else None)
        elif health.flagged_any(self.store, tenant, [i for i, used in (("text", use_text), ("vector", use_vector),
                                                                       ("graph", use_graph)) if used]):
            fallback = ("a generation failed its checks: the SQL oracle answers until maintain_indexes()",
                        "damaged_base")
        elif _legacy_text_journal(self.store, cur):
            fallback = ("this file's text journal has the old layout (term lists) and it is open read-only: the "
                        "SQL oracle answers until it is opened read-write once (which migrates it)", None)
        ann_plan, ann_note = None, None
        if fallback is None and use_vector:   # the opt-in ANN vector index (anatid.indexes.ann)
            from .indexes import ann
            ann_plan, ann_note = ann.plan(self.store, cur, tenant, params["depth"], allow_slow)
        if fallback is None:
            try:
                lean_notes = []
                fused = {}     # what _lean says of the graph stage
                hits, why = self._lean(cur, view, params, use_vector, use_text, use_graph, seeds_given, allow_slow,
                                       ann_plan, notes=lean_notes, graph_stage=graph_stage, fused=fused)
                if hits is None and ann_plan is not None:   # the remembered ANN plan may be out of date
                    ann_plan, ann_note = ann.plan(self.store, cur, tenant, params["depth"], allow_slow, fresh=True)
                    lean_notes = []
                    hits, why = self._lean(cur, view, params, use_vector, use_text, use_graph, seeds_given,
                                           allow_slow, ann_plan, notes=lean_notes)
                if hits is not None:
                    notes = list(notes) + lean_notes
                # the macro parses generations this process has not: check their stored bytes first
                reason = None if hits is not None else health.guard_hybrid(self.store, cur, tenant, text=use_text,
                                                                           vector=use_vector)
            except health.DamagedBase as exc:     # a generation or journal the lean path found damaged
                health.mark_damaged(self.store, exc.index, tenant, str(exc))
                reason = "damaged_base"
            if reason is not None:
                fallback = (f"the SQL oracle answers: {reason}", reason)
        if fallback is not None:
            notes = list(notes) + [n for n in fallback if n]
            return hybrid_oracle(self.store, cur, view, params, use_vector=use_vector, use_text=use_text,
                                 use_graph=use_graph, seeds_given=seeds_given, kinds=kinds, notes=notes,
                                 allow_slow=allow_slow)
        arms = tuple(a for a, used in zip(ARMS, (use_vector, use_text, use_graph)) if used)
        if hits is not None and fused.get("fused"):
            arms += ("graph",)
        if hits is None:
            notes = list(notes) + [f"answered by the anatid.anatid_hybrid macro: {why}"]
            # an ANN generation that answers means the exact scan is allowed (it is the fallback)
            hits = self._macro(cur, params, use_vector, use_text, use_graph, seeds_given,
                               allow_slow or ann_plan is not None)
            ann_note = ann_note if ann_plan is None else None
        if ann_note:
            notes = list(notes) + [ann_note]
        return RecallHits(hits, bm25_stale=False, arms=arms, notes=tuple(notes), engine="native")

    # ---- the lean path --------------------------------------------------------------
    def _lean(self, cur, view, params, use_vector, use_text, use_graph, seeds_given, allow_slow, ann_plan=None,
              speculate=True, notes=None, graph_stage=None, fused=None):
        """(hits, None), or (None, why the macro must answer). `notes` (a list) receives what
        answered instead of a generation (the SQL walk, the journal statement). With
        `graph_stage`, the statement runs the graph stage too when it can: then `fused` (a
        dict) gets "fused" True and the hits are the fused answer."""
        notes = [] if notes is None else notes
        fused = {} if fused is None else fused
        from .native_graph import recall_ids
        from .indexes import graph as graph_index, health
        from .store import BRUTE_FORCE_CEILING
        query = params.get("query", "")
        toks = ascii_tokens(query)
        if toks is None:   # the Unicode pattern in SQL (compiling it costs ~2.7 ms), in SQL's order
            terms = cur.execute(f"SELECT list_sort(list_distinct({tokens_sql('$q')}))", {"q": query}).fetchone()[0]
        else:
            terms = sorted(set(toks))
        tenant, depth = params["tenant"], params["depth"]
        use_text = use_text and bool(terms)
        gids, ghops = [], []
        speculative = None    # (seeds, state) from the handle's cache, checked by the rank statement
        stage_keys = None    # the graph stage's seeds, when this statement runs it
        seed_terms = None    # or the query terms it resolves them from (src/graph_seeds.hpp)
        if graph_stage is not None and ann_plan is None and graph_index.has_tables(self.store, cur) and \
                not health.flagged(self.store, "graph", tenant):
            if graph_stage["seed_keys"] is not None:
                stage_keys = list(graph_stage["seed_keys"])
            elif terms and not _python_seeds_hint(self.store, tenant):
                stage_keys, seed_terms = [], terms    # resolved in C++, on the graph fold
            elif terms:
                speculative = cached_seeds(self.store, tenant, terms) if speculate else None
                stage_keys = speculative[0] if speculative is not None else self._seeds(cur, tenant, terms)
            else:
                stage_keys = []
        if use_graph:
            if seeds_given:
                keys = params["seed_keys"]
            elif terms:
                speculative = cached_seeds(self.store, tenant, terms) if ann_plan is None and speculate else None
                keys = speculative[0] if speculative is not None else self._seeds(cur, tenant, terms)
            else:
                keys = []
            if keys:
                found = None
                said: list[str] = []
                if graph_index.has_tables(self.store, cur):
                    found = recall_ids(cur, tenant, keys, 2, depth, None, view.valid_at, store=self.store,
                                       notes=said)
                if said and found is not None:
                    notes.append("graph arm: the journal alone (absent: no graph generation for this tenant yet; "
                                 "maintain_indexes() builds one)")
                if found is None:   # no graph generation and a journal lacking rows: the SQL walk
                    found = _graph_walk(cur, view, tenant, keys, depth)
                    notes.append("graph arm: the SQL walk (absent: no graph generation for this tenant yet; "
                                 "maintain_indexes() builds one)")
                gids = [m for m, _ in found]
                ghops = [h for _, h in found]
        # the text rows always: graph-only hits are fused by the macro's rule in C++ all the same,
        # and the text generation hydrates the hits (4. above); without the text arm, ids only
        use_text_rows = True if use_text else "ids"
        journal_rows = None     # the rank statement's count(*): the journal invariant's fingerprint
        request = encode_request(
            at_us=(view.valid_at - _EPOCH) // timedelta(microseconds=1), depth=depth, k=params["k"],
            wv=params["wv"], wt=params["wt"], wg=params["wg"],
            vector_ceiling=None if allow_slow or ann_plan else BRUTE_FORCE_CEILING, terms=terms if use_text else [],
            qvec=params["qvec"] if use_vector else None, qnorm=params.get("qnorm"), gids=gids, ghops=ghops,
            graph_block=b"" if stage_keys is None else encode_graph_block(stage_keys, depth, view.valid_at, graph_stage,
                                                                           seed_terms))
        seed_state = speculative is not None
        gens = (1, 1)           # the text and vector generation rows the statement saw
        fresh = ann_plan is None and _absent_hint(self.store, tenant)
        if fresh:   # no generation last time: the statement over an empty base first
            ranked, short, extra = self._journal_rank(cur, tenant, request, use_text_rows, use_vector, seed_state,
                                                      allow_slow)
            if short:
                return None, _SHORT
            fresh = ranked is not None
            if fresh:
                journal_rows, gens, state = extra[0], tuple(extra[1:3]), extra[3:]
        graph_rows = None    # the graph journal's rows the statement scanned (with the graph stage)
        if not fresh and ann_plan is None:
            ranked, journal_rows, *state = cur.execute(
                _RANK_SQL[(use_text_rows, use_vector, seed_state, stage_keys is not None)],
                {"tenant": tenant, "request": request}).fetchone()
            if stage_keys is not None:
                graph_rows = state.pop()
        if ann_plan is None:
            if speculative is not None and tuple(state[0]) != speculative[1] and \
                    seeds_from_terms(self.store, cur, tenant, terms, tuple(state[0])) != speculative[0]:
                # the entities changed and so did the seeds: again, with the seed check of its own
                # (entities are insert-only, so seeds equal before and after mean equal in between)
                del notes[:]
                return self._lean(cur, view, params, use_vector, use_text, use_graph, seeds_given, allow_slow,
                                  ann_plan, speculate=False, notes=notes, graph_stage=graph_stage, fused=fused)
            if not fresh and (ranked is None or ranked and ranked[0]["memory_id"] == NEEDS_MACRO and
                              ranked[0]["score"] in (1, 3)):
                # a text (1) or vector (3) generation is absent: the journal holds every row; or
                # (None) nothing at all was scanned: no generation and an empty journal
                fresh_ranked, short, extra = self._journal_rank(cur, tenant, request, use_text_rows, use_vector,
                                                                False, allow_slow)
                if short:
                    _absent_hint(self.store, tenant, True)
                    return None, _SHORT
                if fresh_ranked is not None:
                    ranked, fresh = fresh_ranked, True
                    journal_rows, gens = extra[0], tuple(extra[1:3])
            if fresh:   # remembered per handle: while an arm it ranks has no generation, the next
                # read goes straight to the statement above
                _absent_hint(self.store, tenant, bool(use_text and not gens[0] or use_vector and not gens[1]))
        else:   # the vector arm on ANN candidates (anatid.indexes.ann)
            from .indexes.ann import rank_sql
            ranked = cur.execute(rank_sql(_TEXT_IDS_ROWS if use_text_rows == "ids" else _TEXT_ROWS),
                                 {"tenant": tenant, "request": request, **ann_plan}).fetchone()[0]
        if ranked is None:
            return None, "the tenant has no text or vector generation"
        if ranked and ranked[0]["memory_id"] == NEEDS_MACRO:
            return None, "a text or vector generation is missing or not yet parsed in this process"
        # an arm without a generation ranked its journal alone (no covered_id: the statement
        # counted the canonical rows instead); the others have the journal invariant checked
        absent = [i for i, used, gen in (("text", use_text, gens[0]), ("vector", use_vector, gens[1]))
                  if used and not gen]
        ranked_arms = [i for i, used in (("text", use_text), ("vector", use_vector)) if used]
        if absent and absent == ranked_arms:
            notes.append(_JOURNAL_NOTE)
        elif absent:   # a text and a vector recall with one generation (rebuild_fts_index() alone, say)
            notes.append(f"absent: no {absent[0]} generation for this tenant yet, so the {absent[0]} arm ranked its "
                         "journal alone (maintain_indexes() builds one)")
        checked = tuple(i for i, used, gen in (("text", use_text_rows, gens[0]), ("vector", use_vector, gens[1]))
                        if used and gen)
        if checked:
            health.check_journal(self.store, cur, tenant, checked, journal_rows)
        if ranked and ranked[0]["memory_id"] == OVER_CEILING:
            rows = int(ranked[0]["score"])
            raise BruteForceCeilingError(
                f"an exact vector scan would cover {rows} rows, above BRUTE_FORCE_CEILING={BRUTE_FORCE_CEILING}: "
                "pass allow_slow=True")
        if ranked and ranked[0]["memory_id"] == STATUS_ID:   # the graph block's status (journal: never sent)
            if ranked[0]["score"] == GRAPH_FUSED:
                health.check_journal(self.store, cur, tenant, ("graph",), graph_rows)
                from .verbs.graph_rank_sql import gated_seed_note
                notes.extend(gated_seed_note(h["content"], h["score"]) for h in ranked
                             if h["memory_id"] == GATED_SEED_ID)
                ranked = [h for h in ranked[1:] if h["memory_id"] != GATED_SEED_ID]
                fused["fused"] = True
            else:
                if ranked[0]["score"] == NEEDS_SEEDS:   # a name C++ cannot tokenize: Python resolves them
                    _python_seeds_hint(self.store, tenant, True)
                ranked = ranked[1:]   # the first stage: the caller runs the graph stage
        if not ranked:
            return [], None
        # without a text generation no hit comes with content: every hit is read below
        content = {h["memory_id"]: (h["content"], h["kind"]) for h in ranked if h.get("content") is not None}
        ids = [h["memory_id"] for h in ranked if h.get("content") is None]
        if use_text_rows == "ids" and gens[0] and 2 * len(ids) > len(ranked):
            load_text_generation(self.store, cur, tenant)    # the next recalls hydrate from it
        if ids:
            content.update((mid, (c, kind)) for mid, c, kind in cur.execute(
                _hydrate_sql(view), {**view.params(tenant), "ids": ids, "lo": min(ids), "hi": max(ids)}).fetchall())
        hits = []
        for h in ranked:
            if h["memory_id"] not in content:   # not visible any more: the macro's join drops it too
                continue
            c, kind = content[h["memory_id"]]
            sources = tuple(a for a, r in zip(ARMS, (h["rv"], h["rt"], h["rg"])) if r is not None)
            hits.append(Hit(int(h["memory_id"]), c, kind, float(h["score"]), sources,
                            None if h["hop"] is None else int(h["hop"])))
        return hits, None

    def _journal_rank(self, cur, tenant, request, use_text_rows, use_vector, seed_state, allow_slow):
        """(ranked, short, (journal rows, text and vector generation rows seen, [seed state]))
        from the lean statement over an empty base (_FRESH_SQL); short: the tenant has no
        generation and its journal lacks rows (then the SQL oracle answers)."""
        from .store import SCAN_CEILING
        try:
            ranked, *extra = cur.execute(_FRESH_SQL[(use_text_rows, bool(use_vector), seed_state)],
                                         {"tenant": tenant, "request": request,
                                          "text_ceiling": None if allow_slow else SCAN_CEILING}).fetchone()
        except duckdb.Error as exc:
            err = _ceiling_error(exc)
            if err is not None:
                raise err from None
            raise
        if ranked and ranked[0]["memory_id"] == NEEDS_MACRO and ranked[0]["score"] == SHORT_JOURNAL:
            return None, True, None
        return ranked, False, extra

    def _seeds(self, cur, tenant, terms) -> list[str]:
        return seeds_from_terms(self.store, cur, tenant, terms)

    # ---- the macro (everything else the native engine answers) ------------------------
    def _macro(self, cur, params, use_vector, use_text, use_graph, seeds_given, allow_slow):
        from .store import BRUTE_FORCE_CEILING, SCAN_CEILING
        bound = {
            "query": params.get("query", "") if (use_text or (use_graph and not seeds_given)) else "",
            "tenant": params["tenant"], "k": params["k"], "depth": params["depth"],
            "qvec": params.get("qvec"), "qnorm": params.get("qnorm"),
            "seeds": params.get("seed_keys") if seeds_given else None,
            "wv": params["wv"], "wt": params["wt"], "wg": params["wg"], "valid_at": params["valid_at"],
            "text_ceiling": None if allow_slow else SCAN_CEILING,
            "vector_ceiling": None if allow_slow else BRUTE_FORCE_CEILING,
        }
        try:
            rows = cur.execute(HYBRID_CALL, bound).fetchall()
        except duckdb.Error as exc:
            err = _ceiling_error(exc)
            if err is not None:
                raise err from None
            raise
        hits = []
        for mid, content, kind, score, rv, rt, rg, hop in rows:
            sources = tuple(a for a, r in zip(ARMS, (rv, rt, rg)) if r is not None)
            hits.append(Hit(int(mid), content, kind, float(score), sources, None if hop is None else int(hop)))
        return hits


engines.register_native(hybrid=NativeHybridEngine)


def query_terms(cur, query: str) -> list[str]:
    """The query's distinct tokens, sorted (SQL's token rule; ASCII without a statement)."""
    toks = ascii_tokens(query)
    if toks is None:
        return cur.execute(f"SELECT list_sort(list_distinct({tokens_sql('$q')}))", {"q": query}).fetchone()[0]
    return sorted(set(toks))


def rank_ids(store, cur, view, rank, *, seed_keys, query, kinds, notes, content=None, speculate=True):
    """The hybrid graph arm through the graph generation (src/graph_rank.cpp): (memory_id,
    hop) best first, or None when the native graph cannot answer (the oracle does then).
    `content`: as native_graph.recall_ids fills it. Seeds from the query come from the
    handle's cache when it has the tenant, checked by the ranking statement itself (the
    entity fingerprint as one more column, as the first stage's statement does): a changed
    entity set that changes the seeds ranks again with seeds checked first."""
    from .indexes import graph as graph_index, health
    from .native_graph import recall_ids
    if view.historical or not graph_index.has_tables(store, cur) or health.flagged(store, "graph", store.tenant):
        return None
    speculative = state = None
    if seed_keys is not None:
        keys = list(seed_keys)
    elif query is not None:
        terms = query_terms(cur, query)
        speculative = cached_seeds(store, store.tenant, terms) if speculate else None
        if speculative is not None:
            keys, state = speculative[0], (_SEED_STATE, [])
        else:
            keys = seeds_from_terms(store, cur, store.tenant, terms)
    else:
        keys = []
    said: list[str] = []
    try:
        ids = recall_ids(cur, store.tenant, keys, 2, rank["depth"], kinds, view.valid_at, store, said, rank=rank,
                         content=content, state=state)
    except health.DamagedBase as exc:
        health.mark_damaged(store, "graph", store.tenant, str(exc))
        return None
    if state is not None and state[1] and tuple(state[1][-1]) != speculative[1] and \
            seeds_from_terms(store, cur, store.tenant, terms, tuple(state[1][-1])) != keys:
        if content is not None:
            content.clear()
        return rank_ids(store, cur, view, rank, seed_keys=seed_keys, query=query, kinds=kinds, notes=notes,
                        content=content, speculate=False)
    from .native_graph import JOURNAL_ALONE_NOTE
    for note in said:
        if note == JOURNAL_ALONE_NOTE and ids is not None:
            notes.append("graph arm: the journal alone (absent: no graph generation for this tenant yet; "
                         "maintain_indexes() builds one)")
        elif ids is not None:
            notes.append(note if note.startswith("graph arm: ") else f"graph arm: {note}")
    if ids is None and not said:
        notes.append("graph arm: no graph generation the native ranker can use, ranked by the SQL oracle")
    elif ids is None:
        notes.append("graph arm: no_graph_generation, ranked by the SQL oracle")
    return ids


engines.register_native(graph_arm=rank_ids)
