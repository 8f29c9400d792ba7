-- Derived: what maintain_indexes() checked before publishing each generation
-- (anatid.indexes.health). One row per (index, tenant): the generation it describes,
-- the md5 of its stored bytes (a read that is about to parse a generation compares
-- it first, so a corrupted BLOB is bypassed instead of parsed) and how it was
-- validated against the SQL oracle. A generation with no row here is `unvalidated`.
CREATE TABLE IF NOT EXISTS anatid_index_validations (
    index_name   VARCHAR   NOT NULL,   -- 'graph', 'text' or 'vector'
    tenant_id    BIGINT    NOT NULL,
    gen_id       BIGINT    NOT NULL,
    checksum     VARCHAR   NOT NULL,   -- md5 of the BLOB (graph) or of the parts' md5s in part order
    bytes        BIGINT    NOT NULL,
    base_rows    BIGINT    NOT NULL,   -- documents, vectors or memories in the base
    validated_at TIMESTAMP NOT NULL,
    method       VARCHAR   NOT NULL,   -- what was compared with the oracle, for people
    covered_id   BIGINT                -- an id allocated after the build's snapshot began: every
                                       -- canonical row with a larger id was written after the build
                                       -- and must have its journal row (the per-read check)
);
-- Files made before covered_id existed get the column (NULL: that generation cannot be checked).
ALTER TABLE anatid_index_validations ADD COLUMN IF NOT EXISTS covered_id BIGINT;
