// anatid_graph_resident(generation_id BIGINT, nonce BIGINT) -> BOOLEAN
//
// Whether this process holds the generation parsed (keyed by id and nonce: ids are
// unique per file only). anatid.anatid_recall_2hop filters
// the generation table with it, so the BLOB column is read only on a miss (DuckDB skips
// fetching a column for a vector where no row passes the filter). Volatile: the answer
// changes as the cache loads and evicts, so it must never be folded into a plan.
#include "anatid_extension.hpp"
#include "anatid_graph_common.hpp"
#include "capi_util.hpp"
#include "generation_scalar.hpp"
#include "graph_cache.hpp"

namespace anatid {

namespace {

using namespace graph_binding;

void Execute(duckdb_function_info, duckdb_data_chunk input, duckdb_vector output) {
	auto &cache = graph::GenerationCache::Instance();
	MapRows<bool>(input, output, [&](idx_t row) {
		graph::CacheKey key {0, 0};
		return GraphKeyArg(input, row, key) && cache.Contains(key);
	});
}

} // namespace

void RegisterAnatidGraphResident(duckdb_connection connection) {
	RegisterVolatileScalar(connection, "anatid_graph_resident", {DUCKDB_TYPE_BIGINT, DUCKDB_TYPE_BIGINT},
	                       DUCKDB_TYPE_BOOLEAN, GuardScalar<Execute>);
}

} // namespace anatid
