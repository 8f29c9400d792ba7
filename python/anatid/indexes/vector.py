"""The vector index: per-tenant base generations of the embeddings plus a journal.

Same life cycle as anatid.indexes.text: writes journal the new state (validity,
norm, vector) of each memory whose vector or visibility changed, in their own
transaction; `rebuild_vector_index()` folds the
journal into a new immutable generation. Embeddings are stored once per memory_id
(a correction keeps its vector), so corrections journal nothing here.

Generation layout (little-endian), one BLOB per part:
  0 header int64[4] = {magic, n, dim, 0}
  1 memory ids int64[n]   2 valid_from int64[n] us   3 valid_to int64[n] us
  4 norms float64[n]      5 vectors float32[n * dim], row-major
"""
from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np

from .. import npbind

from ..verbs import journal
from .text import OPEN_END, _bytes, erase_from_index, replace_generation, tenants

VECTOR_MAGIC = 0x31305856414E41  # "ANAVX01", src/vector.hpp kVectorMagic

# The memory's state after the write (norm NULL when it has no believed vector any more).
_JOURNAL = """
INSERT INTO anatid_vector_journal (tenant_id, memory_id, seq, vf, vt, norm, embedding)
SELECT $tenant, ids.id, $seq, epoch_us(m.valid_from), coalesce(epoch_us(m.valid_to), 9223372036854775807),
       CASE WHEN m.memory_id IS NOT NULL THEN e.norm END, CASE WHEN m.memory_id IS NOT NULL THEN e.embedding END
FROM (SELECT unnest($ids) AS id) ids
LEFT JOIN anatid_memories m ON m.memory_id = ids.id AND m.tenant_id = $tenant AND m.tx_to IS NULL
LEFT JOIN anatid_embeddings e ON e.memory_id = ids.id AND e.tenant_id = $tenant
"""

_ROWS = """
SELECT e.memory_id, epoch_us(m.valid_from) AS vf,
       coalesce(epoch_us(m.valid_to), 9223372036854775807) AS vt, e.norm, e.embedding
FROM anatid_embeddings e JOIN anatid_memories m
  ON m.memory_id = e.memory_id AND m.tenant_id = e.tenant_id AND m.tx_to IS NULL
WHERE e.tenant_id = $tenant
ORDER BY e.memory_id
"""


# The same rows from values the writer already holds (a believed memory): no read of any table.
_JOURNAL_KNOWN = """
INSERT INTO anatid_vector_journal (tenant_id, memory_id, seq, vf, vt, norm, embedding)
SELECT $tenant, id, $seq, epoch_us(vf), coalesce(epoch_us(vt), 9223372036854775807), norm, embedding
FROM (SELECT unnest(CAST($ids AS BIGINT[])) AS id, unnest(CAST($vfs AS TIMESTAMP[])) AS vf,
             unnest(CAST($vts AS TIMESTAMP[])) AS vt, unnest(CAST($norms AS DOUBLE[])) AS norm,
             unnest(CAST($vectors AS FLOAT[][])) AS embedding)
"""


_JOURNAL_ONE = """
INSERT INTO anatid_vector_journal (tenant_id, memory_id, seq, vf, vt, norm, embedding)
VALUES ($tenant, $id, $seq, $vf, $vt, $norm, $v::FLOAT[])
"""

_EPOCH = datetime(1970, 1, 1)
_US = timedelta(microseconds=1)


def _epoch_us(t, default=None):
    return default if t is None else (t - _EPOCH) // _US


# The same rows from a relation of the state after the write (journal.vector_changed's rel).
_JOURNAL_REL = """
INSERT INTO anatid_vector_journal (tenant_id, memory_id, seq, vf, vt, norm, embedding)
SELECT $tenant, id, $seq, epoch_us(vf), coalesce(epoch_us(vt), 9223372036854775807), norm, embedding
FROM {rel}
"""


def _journal(store, cur, memory_ids, now=None, known=None, rel=None) -> None:
    if rel is not None:
        cur.execute(_JOURNAL_REL.format(rel=rel), {"tenant": store.tenant, "seq": store.ids.take()[0]})
        return
    ids = [memory_ids] if isinstance(memory_ids, int) else list(memory_ids)
    if len(ids) == 1 and known is not None:
        # one memory (remember): a VALUES row plans cheaper than unnest()s (~0.4 ms here)
        vf, vt, norm, vec = known[ids[0]]
        cur.execute(_JOURNAL_ONE, {"tenant": store.tenant, "id": ids[0], "seq": store.ids.take()[0],
                                   "vf": _epoch_us(vf), "vt": _epoch_us(vt, int(OPEN_END)), "norm": norm, "v": vec})
        return
    if ids and known is not None:
        rows = [known[i] for i in ids]
        if len(rows) > 16 and npbind.uniform([r[3] for r in rows]):
            # many vectors: through numpy (instants as epoch microseconds, exact integer arithmetic)
            with npbind.rows(cur, {"id": np.asarray(ids, dtype=np.int64),
                                   "vf": np.asarray([_epoch_us(r[0]) for r in rows], dtype=np.int64),
                                   "vt": np.asarray([_epoch_us(r[1], int(OPEN_END)) for r in rows], dtype=np.int64),
                                   "norm": np.asarray([r[2] for r in rows], dtype=np.float64)},
                             [r[3] for r in rows]) as rel:
                cur.execute(f"INSERT INTO anatid_vector_journal (tenant_id, memory_id, seq, vf, vt, norm, embedding) "
                            f"SELECT $tenant, id, $seq, vf, vt, norm, embedding FROM {rel}",
                            {"tenant": store.tenant, "seq": store.ids.take()[0]})
            return
        cur.execute(_JOURNAL_KNOWN, {"tenant": store.tenant, "seq": store.ids.take()[0], "ids": ids,
                                     "vfs": [r[0] for r in rows], "vts": [r[1] for r in rows],
                                     "norms": [r[2] for r in rows], "vectors": [r[3] for r in rows]})
        return
    if ids:
        cur.execute(_JOURNAL, {"tenant": store.tenant, "ids": ids, "seq": store.ids.take()[0]})


journal.register("vector_changed", _journal)
journal.register("memory_closed", _journal)
_REMAINING = """SELECT e.memory_id FROM anatid_embeddings e JOIN anatid_memories m
                ON m.memory_id = e.memory_id AND m.tx_to IS NULL
                WHERE e.tenant_id = $tenant AND e.memory_id <> $id"""

journal.register("memory_erased", lambda store, cur, memory_id: erase_from_index(
    store, cur, "vector", memory_id, _REMAINING, _journal))


def build_parts(cur, tenant: int, dim: int | None) -> tuple[list[bytes], int]:
    rows = cur.execute(_ROWS, {"tenant": tenant}).fetchnumpy()
    n = len(rows["memory_id"])
    values = (np.concatenate([np.asarray(v, dtype=np.float32) for v in rows["embedding"]]) if n
              else np.zeros(0, np.float32))
    if dim is None:
        dim = len(values) // n if n else 1
    if len(values) != n * dim:
        raise ValueError(f"embeddings of tenant {tenant} do not all have {dim} dimensions")
    header = np.array([VECTOR_MAGIC, n, dim, 0], dtype=np.int64)
    col = lambda name, dt: _bytes(np.asarray(rows[name]), dt) if n else b""
    parts = [_bytes(header, np.int64), col("memory_id", np.int64), col("vf", np.int64), col("vt", np.int64),
             col("norm", np.float64), _bytes(values, np.float32)]
    return parts, n


def maintain(store, *, all_tenants: bool = False) -> dict:
    """Fold the vector journal of one tenant (or every tenant) into new base generations."""
    report = {}
    with store.write() as cur:
        now = store.write_instant(None)
        for t in tenants(store, cur, all_tenants):
            parts, n = build_parts(cur, t, store.embedding_dim)
            report[t] = {"generation": replace_generation(store, cur, "vector", parts, n, now, t), "rows": n}
    return report


def rebuild_vector_index(db) -> dict:
    """Fold the vector journal of this handle's tenant into a new base generation."""
    store = getattr(db, "_store", db)
    return maintain(store)[store.tenant]
