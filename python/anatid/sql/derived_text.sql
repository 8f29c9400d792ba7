-- Derived: the text index's base generations and journal (anatid.indexes.text).
-- A generation is an immutable snapshot of one tenant's postings, stored as BLOB
-- parts (little-endian arrays, see docs/indexes.md) that the extension parses once
-- per process; the journal lists every memory whose text or visibility changed
-- since, written in the same transaction as the change. Dropping these tables
-- loses speed, never an answer: with no generation the journal is the whole index.
CREATE TABLE IF NOT EXISTS anatid_text_gen (
    tenant_id BIGINT    NOT NULL,
    gen_id    BIGINT    NOT NULL,
    nonce     BIGINT    NOT NULL,   -- random: the process-wide cache key is (gen_id, nonce)
    built_at  TIMESTAMP NOT NULL,
    n_docs    BIGINT    NOT NULL
);

CREATE TABLE IF NOT EXISTS anatid_text_gen_parts (
    gen_id  BIGINT  NOT NULL,
    part    INTEGER NOT NULL,
    payload BLOB    NOT NULL
);

CREATE TABLE IF NOT EXISTS anatid_text_journal (
    tenant_id BIGINT NOT NULL,
    memory_id BIGINT NOT NULL
);
