"""Set-based insert of many memories: one statement per table whatever the batch size
(per-statement cost dominates DuckDB writes from Python).

Every row goes in through a registered relation (a dict of numpy columns DuckDB scans in
place), not through bound Python lists: binding 5,000 strings or 64-d vectors as a list
parameter costs several times the scan of the same values. Each journal row is built
set-wise by one statement over the same relations, never read back from the big tables.
"""
from __future__ import annotations

import itertools
import threading
from contextlib import contextmanager
from typing import Iterator

import numpy as np

from .. import text, validate
from ..errors import NotFoundError
from .entities import ensure_entities_named
from .memories import vector_norms
from . import journal

_MEMORIES = """
INSERT INTO anatid_memories (memory_id, version, tenant_id, content, kind, confidence, strength, writer,
                             valid_from, valid_to, tx_from, tx_to, supersedes, superseded_by, last_used_at)
SELECT id, 1, $tenant, content, kind, confidence, 1.0, CAST(writer AS VARCHAR),
       CAST(vf AS TIMESTAMP), CAST(vt AS TIMESTAMP), $now, NULL, NULL, NULL, NULL
FROM {m}
"""

_ABOUT = """
INSERT INTO anatid_edges (edge_id, tenant_id, kind, src_id, dst_id, rel_kind, weight,
                          valid_from, valid_to, tx_from, tx_to)
SELECT edge_id, $tenant, 'about', m, e, NULL, 1.0, CAST(vf AS TIMESTAMP), NULL, $now, NULL
FROM {a}
"""

# The graph hook's relation: each ABOUT row with its memory's state and the entity's key.
_ABOUT_STATE = ("(SELECT m AS a, e AS b, kind, CAST(vf AS TIMESTAMP) AS valid_from, "
                "CAST(vt AS TIMESTAMP) AS valid_to, key AS b_key FROM {a})")

# {v}: the vectors' memory ids, instants and norms; {vm}: their float32 matrix registered as one
# 2-d array (one column per coordinate, as anatid.npbind does), read row by row beside {v}.
# One array is cheaper to register and bind than a dict of one column per coordinate: two
# INSERTs of 5,000 64-d vectors took 13.6 against 19.2 ms here.
_EMBEDDINGS = """
INSERT INTO anatid_embeddings (memory_id, tenant_id, embedding, norm)
SELECT id, $tenant, {vector}, norm FROM {v} POSITIONAL JOIN {vm}
"""

_VECTOR_STATE = ("(SELECT id, CAST(vf AS TIMESTAMP) AS vf, CAST(vt AS TIMESTAMP) AS vt, norm, "
                 "{vector} AS embedding FROM {v} POSITIONAL JOIN {vm})")

_POSTINGS = """
INSERT INTO anatid_postings (tenant_id, memory_id, term, tf)
SELECT $tenant, id, CAST(term AS VARCHAR), tf FROM {t}
"""

_TEXT_DOCS = "INSERT INTO anatid_text_docs (tenant_id, memory_id, doc_len) SELECT $tenant, id, doc_len FROM {m}"

# The text hook's relation: each memory's state after the write, its postings string
# ("term:tf ...", NULL: none) built in Python from the tokens in hand (no group, sort and
# aggregate per memory in SQL).
_TEXT_STATE = ("(SELECT id, doc_len, CAST(vf AS TIMESTAMP) AS vf, CAST(vt AS TIMESTAMP) AS vt, "
               "CAST(postings AS VARCHAR) AS postings FROM {m})")

# Non-ASCII contents only: their tokens, in the contents' order (the Unicode pattern is
# compiled once per batch).
_TOKENS_SQL = f"SELECT list_transform(CAST($contents AS VARCHAR[]), lambda c: {text.tokens_sql('c')})"

_EPISODES = """
INSERT INTO anatid_episodes (episode_id, tenant_id, content, source, writer, recorded_at)
SELECT unnest($ids), $tenant, unnest($contents), NULL, unnest($writers), $now
"""

_EVIDENCE = "INSERT INTO anatid_evidence SELECT unnest($memory_ids), unnest($episode_ids), $tenant"

_serial = itertools.count()


@contextmanager
def _relations(cur, **tables: dict) -> Iterator[dict[str, str]]:
    """Register each dict of equally long 1-d numpy columns (or a 2-d array: one column per
    row) as a relation; yields their names."""
    tag = f"anatid_bulk_{threading.get_ident()}_{next(_serial)}"
    names = {}
    try:
        for key, cols in tables.items():
            names[key] = f"{tag}_{key}"
            cur.register(names[key], cols)
        yield names
    finally:
        for name in names.values():
            cur.unregister(name)


def _objects(values) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _instants(values: list, default=None) -> np.ndarray:
    """Naive UTC datetimes (None: `default`, itself None: NULL) as datetime64[us] (NaT, which
    DuckDB reads as NULL): DuckDB scans these natively, while an object column of datetimes
    converts each value through Python (~0.3 us a value here, scanned by two statements per
    relation). A batch with no value given (the usual one) is one fill, not a conversion
    of every item (~1 us each)."""
    if values.count(None) == len(values):
        return np.full(len(values), np.datetime64("NaT", "us") if default is None else np.datetime64(default, "us"))
    return np.array(values if default is None else [default if v is None else v for v in values],
                    dtype="datetime64[us]")


def _postings(toks: list[list[str]]) -> tuple[list, list[str], np.ndarray, list[int]]:
    """Each memory's journal postings string (anatid.indexes.text.postings_of_tokens: "term:tf ..."
    sorted by term, None without tokens) and, flat over the batch from the same counts, its
    distinct terms, their tfs (int32) and how many each memory has (the anatid_postings rows: no
    GROUP BY of every token in SQL). The tfs start as ones (most memories repeat no word) and
    only the memories that repeat one write theirs."""
    strings, terms, distinct, counted = [], [], [], []
    for tk in toks:
        if not tk:
            strings.append(None)
            distinct.append(0)
            continue
        once = set(tk)
        if len(once) == len(tk):  # every term once (tf 1): no counting, one join
            tk = sorted(once)
            strings.append(":1 ".join(tk) + ":1")
            terms += tk
            distinct.append(len(tk))
            continue
        counts = dict.fromkeys(sorted(once), 0)
        for t in tk:
            counts[t] += 1
        strings.append(" ".join([f"{t}:{c}" for t, c in counts.items()]))
        counted.append((len(terms), list(counts.values())))
        terms.extend(counts)
        distinct.append(len(counts))
    tfs = np.ones(len(terms), dtype=np.int32)
    for at, values in counted:
        tfs[at:at + len(values)] = values
    return strings, terms, tfs, distinct


# text.ascii_tokens as C-level string operations: after lower(), every ASCII character other
# than [a-z0-9] (and NUL, the contents' separator here: validate.text refuses it in content)
# becomes a space, so the whitespace-split runs are exactly the pattern's [a-z0-9]+ matches.
_ASCII_SPACES = str.maketrans({c: " " for c in map(chr, range(1, 128)) if not ("a" <= c <= "z" or "0" <= c <= "9")})


def _tokens(cur, contents: list[str]) -> list[list[str]]:
    """Each content's tokens (text.ascii_tokens; other text in one SQL statement). An all-ASCII
    batch is lowered, translated and split as one string (~3x faster than a regex per item)."""
    joined = "\x00".join(contents)
    if joined.isascii() and joined.count("\x00") == len(contents) - 1:
        return list(map(str.split, joined.lower().translate(_ASCII_SPACES).split("\x00")))
    toks = [text.ascii_tokens(c) for c in contents]
    other = [i for i, t in enumerate(toks) if t is None]
    if other:
        got = cur.execute(_TOKENS_SQL, {"contents": [contents[i] for i in other]}).fetchall()[0][0]
        for i, t in zip(other, got):
            toks[i] = t
    return toks


def bulk_insert(store, cur, prepared, now, stored_names: dict[str, str] | None = None) -> list[int]:
    """prepared: [(content, names, keys, kind, confidence, vec, writer, vf, vt, episode), ...].
    stored_names, when given, receives name_key -> the entity's name as stored (its first spelling)."""
    tenant = store.tenant
    n = len(prepared)
    ids = store.ids.take(n)
    id_arr = np.asarray(ids, dtype=np.int64)
    contents = [a[0] for a in prepared]
    vfs = _instants([a[7] for a in prepared], now)
    vts = _instants([a[8] for a in prepared])
    kinds = _objects([a[3] for a in prepared])

    keys = list(itertools.chain.from_iterable(a[2] for a in prepared))  # every ABOUT link's entity, in order
    unique: dict[str, str] = {}
    for name, key in zip(itertools.chain.from_iterable(a[1] for a in prepared), keys):
        unique.setdefault(key, name)
    named = ensure_entities_named(store, cur, list(unique.values()), now) if unique else {}
    entity_ids = {k: eid for k, (eid, _) in named.items()}
    if stored_names is not None:
        stored_names.update({k: name for k, (_, name) in named.items()})

    toks = _tokens(cur, contents)
    lens = np.fromiter(map(len, toks), dtype=np.int64, count=n)
    strings, terms, tfs, distinct = _postings(toks)
    tables = {"m": {"id": id_arr, "content": _objects(contents), "kind": kinds,
                    "confidence": np.fromiter((a[4] for a in prepared), dtype=np.float64, count=n),
                    "writer": _objects([a[6] for a in prepared]), "vf": vfs, "vt": vts,
                    "doc_len": lens.astype(np.int32),
                    "postings": _objects(strings)},
              "t": {"id": np.repeat(id_arr, np.asarray(distinct, dtype=np.int64)), "term": _objects(terms),
                    "tf": tfs}}

    counts = np.fromiter((len(a[2]) for a in prepared), dtype=np.int64, count=n)
    n_about = int(counts.sum())
    if n_about:
        at = np.repeat(np.arange(n), counts)
        tables["a"] = {"edge_id": np.asarray(store.ids.take(n_about), dtype=np.int64), "m": id_arr[at],
                       "e": np.fromiter(map(entity_ids.__getitem__, keys), dtype=np.int64, count=n_about),
                       "kind": kinds[at], "vf": vfs[at], "vt": vts[at], "key": _objects(keys)}

    with_vec = [i for i, a in enumerate(prepared) if a[5] is not None]
    if with_vec:
        mat = np.asarray([prepared[i][5] for i in with_vec], dtype=np.float32)
        sel = np.asarray(with_vec, dtype=np.int64)
        tables["v"] = {"id": id_arr[sel], "vf": vfs[sel], "vt": vts[sel], "norm": vector_norms(mat)}
        tables["vm"] = np.ascontiguousarray(mat.T)  # one transpose: each row a contiguous column

    p = {"tenant": tenant, "now": now}
    with _relations(cur, **tables) as rel:
        cur.execute(_MEMORIES.format(m=rel["m"]), p)
        if n_about:
            cur.execute(_ABOUT.format(a=rel["a"]), p)
            journal.about_added(store, cur, None, now, rel=_ABOUT_STATE.format(a=rel["a"]))
        if with_vec:
            vector = "[" + ", ".join(f"{rel['vm']}.column{j}" for j in range(mat.shape[1])) + "]::FLOAT[]"
            cur.execute(_EMBEDDINGS.format(v=rel["v"], vm=rel["vm"], vector=vector), {"tenant": tenant})
            journal.vector_changed(store, cur, None, now,
                                   rel=_VECTOR_STATE.format(v=rel["v"], vm=rel["vm"], vector=vector))
        cur.execute(_POSTINGS.format(t=rel["t"]), {"tenant": tenant})
        cur.execute(_TEXT_DOCS.format(m=rel["m"]), {"tenant": tenant})
        journal.text_changed(store, cur, None, now, rel=_TEXT_STATE.format(m=rel["m"]))
    _evidence(store, cur, ids, prepared, now)
    return ids


def _evidence(store, cur, ids, prepared, now) -> None:
    new_texts, new_writers, links_m, links_e = [], [], [], []
    text_ids = store.ids.take(sum(1 for a in prepared if isinstance(a[9], str))) if prepared else []
    it = iter(text_ids)
    for mid, a in zip(ids, prepared):
        ep = a[9]
        if ep is None:
            continue
        if isinstance(ep, str):
            eid = next(it)
            new_texts.append(ep)
            new_writers.append(a[6])
        else:
            eid = validate.identifier(ep, "episode")
        links_m.append(mid)
        links_e.append(eid)
    if new_texts:
        cur.execute(_EPISODES, {"ids": text_ids, "tenant": store.tenant, "contents": new_texts,
                                "writers": new_writers, "now": now})
    if links_m:
        given = sorted(set(links_e) - set(text_ids))
        if given:
            found = cur.execute("SELECT count(*) FROM anatid_episodes WHERE tenant_id = $tenant "
                                "AND episode_id IN (SELECT unnest($ids))", {"tenant": store.tenant,
                                                                             "ids": given}).fetchone()[0]
            if found != len(given):
                raise NotFoundError(f"some episode ids of this batch do not exist in tenant {store.tenant}")
        cur.execute(_EVIDENCE, {"memory_ids": links_m, "episode_ids": links_e, "tenant": store.tenant})
