-- Derived: the vector index's base generations and journal (anatid.indexes.vector).
-- A generation is an immutable snapshot of one tenant's embeddings, stored as BLOB
-- parts (little-endian arrays, see docs/indexes.md) that the extension parses once
-- per process; the journal holds the current state of every memory whose vector or visibility changed
-- since, written in the same transaction as the change. Dropping these tables
-- loses speed, never an answer: with no generation every document is scanned.
CREATE TABLE IF NOT EXISTS anatid_vector_gen (
    tenant_id BIGINT    NOT NULL,
    gen_id    BIGINT    NOT NULL,
    nonce     BIGINT    NOT NULL,   -- random: the process-wide cache key is (gen_id, nonce)
    built_at  TIMESTAMP NOT NULL,
    n_rows    BIGINT    NOT NULL
);

CREATE TABLE IF NOT EXISTS anatid_vector_gen_parts (
    gen_id  BIGINT  NOT NULL,
    part    INTEGER NOT NULL,
    payload BLOB    NOT NULL
);

CREATE TABLE IF NOT EXISTS anatid_vector_journal (
    tenant_id BIGINT    NOT NULL,
    memory_id BIGINT    NOT NULL,
    seq       BIGINT    NOT NULL,   -- allocator id of the write: the latest row of a memory wins
    vf        BIGINT,               -- valid_from, epoch microseconds
    vt        BIGINT,               -- valid_to, epoch microseconds (INT64_MAX when open)
    norm      DOUBLE,               -- NULL: the memory has no believed vector any more
    embedding FLOAT[] USING COMPRESSION uncompressed   -- as anatid_embeddings.embedding (schema_v1.sql)
);
