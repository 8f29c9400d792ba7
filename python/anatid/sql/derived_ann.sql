-- Derived: the opt-in ANN (HNSW) index of the vector arm (anatid.indexes.ann).
-- anatid_ann_config is the opt-in, one row per tenant (build_ann_index() writes it);
-- anatid_ann_gen holds the tenant's current generation: one serialized HNSW index
-- (src/hnsw.hpp, versioned and checksummed) built in the same transaction as the vector
-- generation it covers. It is usable only while that vector generation is current, since
-- the vector journal (emptied by each vector rebuild) holds every change since. Dropping
-- these tables loses speed, never an answer: the exact scan answers without them.
CREATE TABLE IF NOT EXISTS anatid_ann_config (
    tenant_id       BIGINT  NOT NULL,
    m               INTEGER NOT NULL,   -- links per node (level 0 keeps 2 m)
    ef_construction INTEGER NOT NULL,
    ef_search       INTEGER NOT NULL,   -- candidate list width per query
    use_when        VARCHAR NOT NULL    -- 'always' or 'above_ceiling' (see docs/indexes.md)
);

CREATE TABLE IF NOT EXISTS anatid_ann_gen (
    tenant_id     BIGINT    NOT NULL,
    gen_id        BIGINT    NOT NULL,
    nonce         BIGINT    NOT NULL,   -- random: the process-wide cache key is (gen_id, nonce)
    built_at      TIMESTAMP NOT NULL,
    n_rows        BIGINT    NOT NULL,
    vector_gen_id BIGINT    NOT NULL,   -- the anatid_vector_gen it was built with
    seed          BIGINT    NOT NULL
);

CREATE TABLE IF NOT EXISTS anatid_ann_gen_parts (
    gen_id  BIGINT  NOT NULL,
    part    INTEGER NOT NULL,
    payload BLOB    NOT NULL
);
