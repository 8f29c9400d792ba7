// anatid's DuckDB extension: table of contents.
//
// Every SQL object the extension creates is registered from the table in
// anatid_extension.cpp, one line each, by a Register* function declared here and
// defined in the file named after it. Each registrar throws std::runtime_error
// naming the object on failure; the entry point reports it through set_error.
//
// Built against DuckDB's stable C extension API (C_STRUCT, v1.2.0) only: no DuckDB
// internals, so one binary loads into every DuckDB from 1.5.5 on.
#pragma once

#include "duckdb_extension.h"

// The API function table lives in anatid_extension.cpp; every other file uses it.
DUCKDB_EXTENSION_EXTERN

namespace anatid {

// One row of the registration table; also what anatid.anatid_functions() reports.
struct SqlObject {
	const char *name; // SQL name, always anatid_-prefixed
	const char *kind; // 'scalar', 'aggregate', 'table', 'table_macro'
	void (*register_fn)(duckdb_connection connection);
};

// --- scalar functions --------------------------------------------------------
// anatid_version() -> VARCHAR: the extension's version (ANATID_VERSION).
void RegisterAnatidVersion(duckdb_connection connection);
// anatid_hybrid_rank(<33 arguments>) -> LIST(STRUCT(memory_id, score, rv, rt, rg, hop)): the native
// half of anatid.anatid_hybrid (scores, ranks and fuses; see anatid_hybrid_rank.cpp).
void RegisterAnatidHybridRank(duckdb_connection connection);
// anatid_hybrid_cached(kind, generation, nonce) -> BOOLEAN: whether this process holds it parsed
// (anatid_hybrid_cached.cpp).
void RegisterAnatidHybridCached(duckdb_connection connection);
// anatid_hybrid_recall.cpp: the lean aggregate the Python engine calls
void RegisterAnatidHybridRecall(duckdb_connection connection);
// anatid_text_content(ids, gen_id, nonce, touched, valid_at_us) -> LIST(STRUCT(content, kind)):
// what the resident text generation vouches for (anatid_text_content.cpp).
void RegisterAnatidTextContent(duckdb_connection connection);

// --- graph recall (src/graph_*.hpp; python/anatid/indexes/graph.py) ---------------
// anatid_graph_build(row_kind, x, y, text, generation_id, tenant_id, built_at) -> BLOB (aggregate)
void RegisterAnatidGraphBuild(duckdb_connection connection);
// anatid_graph_recall(entry, request [, blob]) -> LIST(STRUCT(memory_id, hop, score))
//   (aggregate over journal entries; the native half of anatid.anatid_recall_2hop)
void RegisterAnatidGraphRecall(duckdb_connection connection);
// anatid_graph_request(seeds, hops, max_hits, kinds, valid_at, strict) -> VARCHAR
void RegisterAnatidGraphRequest(duckdb_connection connection);
// anatid_graph_load(generation_id, nonce, blob) -> BIGINT: parse into the process cache
void RegisterAnatidGraphLoad(duckdb_connection connection);
// anatid_graph_resident(generation_id, nonce) -> BOOLEAN
void RegisterAnatidGraphResident(duckdb_connection connection);
// anatid_graph_cache_stats() -> VARCHAR (JSON)
void RegisterAnatidGraphCacheStats(duckdb_connection connection);

// --- ANN vector index (src/hnsw.hpp; python/anatid/indexes/ann.py) ---------------
// anatid_ann_build(memory_id, vf, vt, norm, embedding, m, ef_construction, seed) -> BLOB (aggregate)
void RegisterAnatidAnnBuild(duckdb_connection connection);
// anatid_ann_load(generation_id, nonce, blob) -> BIGINT: parse into the process cache
void RegisterAnatidAnnLoad(duckdb_connection connection);
// anatid_ann_resident(generation_id, nonce) -> BOOLEAN
void RegisterAnatidAnnResident(duckdb_connection connection);
// anatid_ann_search(generation_id, nonce, query, count, ef) -> LIST(STRUCT(memory_id, vf, vt, norm, embedding))
void RegisterAnatidAnnSearch(duckdb_connection connection);
// anatid_ann_info(blob) -> STRUCT: the header of an ANN generation, with its calibrated search widths
void RegisterAnatidAnnInfo(duckdb_connection connection);

// --- the macro catalog -------------------------------------------------------
// Attaches an in-memory catalog `anatid` and creates the SQL table macros in it,
// including anatid.anatid_functions() listing `natives` plus what this adds. Also
// registers anatid_macro_status() -> VARCHAR: 'ok', or why the macros are missing.
// Never throws for SQL failures (they become the status); runs last.
void RegisterMacros(duckdb_connection connection, const SqlObject *natives, size_t native_count);

} // namespace anatid
